/* models.h - the model registry and the layer helpers models are built with.
 *
 * A model's build function declares its parameters (graph tensors named as in
 * the PyTorch state_dict, so weights files interchange) and appends its
 * forward ops; autodiff and the optimizer come from passes.c. */
#ifndef MATRIX_ENGINE_MODELS_H
#define MATRIX_ENGINE_MODELS_H

#include "../engine.h"
#include "../graph.h"
#include "../passes.h"

typedef struct model_info {
    const char *input_desc; /* e.g. "1x28x28 images" */
    optim_cfg optim;        /* the optimizer training uses */
    int uses_channels_last; /* 0: --channels-last does not apply */
    int uses_seq_len;       /* 0: --seq-len does not apply (not a sequence model) */
    int uses_image_size;    /* 0: --image-size does not apply (a fixed input, or no image) */
} model_info;

typedef struct model_desc {
    const char *name;
    const char *about;
    /* Declare tensors and forward ops into g (empty on entry): g->output is
     * the model output, g->loss the scalar loss when pt->train.
     * Returns 0, or -1 with a message in err (an unsupported setting). */
    int (*build)(graph *g, const point *pt, model_info *info, char *err, int errlen);
} model_desc;

extern const model_desc models[];
const model_desc *model_find(const char *name);

/* ---- layer helpers (models/layers.c) ---- */
int layer_param(graph *g, const char *name, int kind, int init, float a, int ndim, ...);
int layer_conv(graph *g, const char *name, int x, int cout, int k, int stride, int pad,
               int bias, int init_kaiming_out);
int layer_bn(graph *g, const char *name, int x, int train);
int layer_act(graph *g, const char *name, int x, int act);
int layer_maxpool(graph *g, const char *name, int x, int k, int stride, int pad);
int layer_avgpool(graph *g, const char *name, int x);
int layer_flatten(graph *g, const char *name, int x);
int layer_linear(graph *g, const char *name, int x, int out, int bias, int init_normal, float std);
/* A linear layer whose weight is w, another layer's (BERT's decoder is the
 * word embedding's table), with its own bias name.bias (zeros). */
int layer_linear_tied(graph *g, const char *name, int x, int w);
/* The rows of x (B*T, C) at positions pos (i32, B x M; distinct in a row). */
int layer_gather(graph *g, const char *name, int x, int pos);
/* Softmax cross-entropy over the last dimension (mean over rows), one op:
 * no log-probabilities tensor; the backward recomputes them from the logits
 * and each row's log-sum-exp. */
int layer_softmax_ce(graph *g, const char *name, int logits, int target);
int layer_dropout(graph *g, const char *name, int x, float p, int channel);
int layer_add(graph *g, const char *name, int a, int b);
int layer_logsoftmax(graph *g, const char *name, int logits);
/* log-softmax + NLL (mean); returns the loss tensor, *logp the log-probs. */
int layer_nll(graph *g, const char *name, int logits, int target, int *logp);
int layer_layernorm(graph *g, const char *name, int x, float eps);

#endif
