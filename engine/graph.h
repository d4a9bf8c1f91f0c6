/* graph.h - the op graph shared by every backend.
 *
 * A model is built as a list of ops over tensors. Tensors are plain data
 * (shape, layout, kind) that the memory planner later gives storage; ops name
 * their inputs and outputs by tensor index. Passes (passes.h) rewrite the list:
 * autodiff appends backward and optimizer ops, fusion merges epilogues into
 * producers, BN folding replaces conv+bn by one conv, planning places tensors.
 * A backend (backend.h) runs the list one op at a time. */
#ifndef MATRIX_ENGINE_GRAPH_H
#define MATRIX_ENGINE_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#define GRAPH_MAX_IN 6
#define GRAPH_MAX_OUT 4
#define GRAPH_NAME 80

/* Element types. Models build f32 / i32 tensors; pass_precision (passes.h)
 * turns activations and their gradients into f16 / bf16 for mixed precision
 * on the CUDA backend (the CPU backend runs f32 only). */
enum dtype { DT_F32, DT_I32, DT_F16, DT_BF16 };

/* Memory layout of a 4-D activation; shape[] is always logical (N, C, H, W). */
enum layout { LAYOUT_ROW, LAYOUT_NCHW, LAYOUT_NHWC };

enum tensor_kind {
    TK_PARAM,  /* trained weight, persistent */
    TK_BUFFER, /* BN running statistics, persistent */
    TK_INPUT,  /* synthetic input / labels, persistent */
    TK_CONST,  /* made by a pass at plan time (folded weights), persistent */
    TK_PGRAD,  /* gradient of a parameter, persistent (read by the optimizer) */
    TK_STATE,  /* optimizer state (momentum, Adam moments, EMA), persistent */
    TK_ACT,    /* activation or saved aux output, planned */
    TK_GRAD,   /* gradient of an activation, planned */
};

/* ACT_GELU is the exact (erf) GELU that BERT and PyTorch's F.gelu use;
 * ACT_GELU_TANH the tanh approximation (F.gelu(approximate='tanh'), HF's
 * "gelu_new"), the form cuBLASLt's GELU epilogues compute. No model builds it
 * yet: the CUDA backend fuses only this form into cuBLASLt (engine/cuda/gemm.cu). */
enum act { ACT_NONE, ACT_RELU, ACT_GELU, ACT_TANH, ACT_GELU_TANH };
/* 1 for the GELU forms: their backward reads the pre-activation. */
static inline int act_is_gelu(int act) { return act == ACT_GELU || act == ACT_GELU_TANH; }

typedef struct tensor {
    char name[GRAPH_NAME];
    int ndim;
    int64_t shape[4]; /* logical shape */
    int layout;       /* enum layout */
    int dtype;        /* enum dtype */
    int kind;         /* enum tensor_kind */
    size_t bytes;     /* storage, bytes */
    void *data;       /* set by the planner / builder (device memory on cuda) */
    void *host;       /* persistent tensors on a device backend: the host copy */
    int grad;         /* index of the gradient tensor, or -1 */
    int needs_grad;   /* a gradient must flow to it (set by autodiff) */
    int alias;        /* shares storage with this tensor (views), or -1 */
    int first, last;  /* op indices of the first write and last read */
    int64_t offset;   /* arena offset, bytes (planned tensors) */
    int dead;         /* no op uses it any more (removed by a pass) */
    int init;         /* enum init_rule: how the engine fills it */
    float init_a;     /* bound, standard deviation, value or label count */
} tensor;

enum init_rule {
    INIT_NONE,
    INIT_UNIFORM, /* U(-a, a) */
    INIT_NORMAL,  /* N(0, a^2) */
    INIT_CONST,   /* a */
    INIT_LABELS,  /* integers in [0, a) (DT_I32) */
    INIT_POSITIONS, /* (B, M) DT_I32: per row M distinct positions in [0, a), ascending */
};

enum op_type {
    OP_CONV,          /* in: x, w, [b], [res]; out: y, [pre], -, [saved] */
    OP_CONV_BWD,      /* in: dy, x, w, [saved]; out: dx|-1, dw, db|-1 */
    OP_BN,            /* in: x, gamma, beta, rmean, rvar, [res]; out: y, mean, invstd */
    OP_BN_BWD,        /* in: dy, x, gamma, mean, invstd, [beta | y]; out: dx, dgamma, dbeta,
                       * [dres]; act ACT_RELU (pass_bn_relu_bwd): dy is the gradient of
                       * relu(BN(x) [+ res]), masked by the forward's y > 0: recomputed
                       * from x, gamma, beta, mean and invstd when in[5] is beta, read
                       * when in[5] is the forward's out[0] (a residual input); out[3]
                       * (acc bit 3): the masked dy, the residual's gradient */
    OP_ACT,           /* in: x; out: y (attr act) */
    OP_ACT_BWD,       /* in: dy, y_or_x; out: dx */
    OP_MAXPOOL,       /* in: x; out: y, idx (i32) */
    OP_MAXPOOL_BWD,   /* in: dy, idx; out: dx */
    OP_AVGPOOL,       /* global average: in: x (N,C,H,W); out: y (N,C) */
    OP_AVGPOOL_BWD,   /* in: dy; out: dx */
    OP_FLATTEN,       /* in: x (N,C,H,W); out: y (N, C*H*W) in NCHW order */
    OP_FLATTEN_BWD,   /* in: dy; out: dx */
    OP_LINEAR,        /* in: x (M,K), w (N,K), [b], [res]; out: y (M,N), [pre] */
    OP_LINEAR_BWD,    /* in: dy, x, w; out: dx|-1, dw, db|-1 */
    OP_DROPOUT,       /* in: x; out: y, mask */
    OP_DROPOUT_BWD,   /* in: dy, mask; out: dx */
    OP_ADD,           /* in: a, b; out: y */
    OP_COPY,          /* in: x; out: y (gradient fan-out, acc honoured) */
    OP_LOGSOFTMAX,    /* in: x (M,N); out: y */
    OP_LOGSOFTMAX_BWD,/* in: dy, y; out: dx */
    OP_NLL,           /* in: logp (M,N), target (i32, M); out: loss (1) */
    OP_NLL_BWD,       /* in: target; out: dlogp */
    OP_SOFTMAX_CE,    /* in: logits (M,N), target (i32, M); out: loss (1, the mean over
                       * rows), lse (f32, M: each row's log-sum-exp, for the backward) */
    OP_SOFTMAX_CE_BWD,/* in: logits, target, lse; out: dlogits = (softmax - onehot) / M */
    OP_EMBED,         /* in: ids, types (i32, B x T), word, pos, type; out: y (B*T, C) */
    OP_EMBED_BWD,     /* in: dy, ids, types; out: dword, dpos, dtype */
    OP_LAYERNORM,     /* in: x, gamma, beta; out: y, mean, rstd */
    OP_LAYERNORM_BWD, /* in: dy, x, gamma, mean, rstd; out: dx, dgamma, dbeta */
    OP_ATTENTION,     /* in: q, k, v (B*T, C); out: y (B*T, C), probs (B,H,T,T), [mask];
                       * flash form (pass_flash_attention): out[1] is lse (B,H,T), the
                       * log-sum-exp of each row of scaled scores; the mask holds keep
                       * flags 0 / 1 (scaled by 1 / (1 - p) where applied) */
    OP_ATTENTION_BWD, /* in: dy, q, k, v, probs, [mask]; out: dq, dk, dv;
                       * flash form: in[4] lse, in[5] the forward's y (recomputes the
                       * probabilities); with dropout out[3] gets the keep flags drawn
                       * again (p, seed: the forward's) */
    OP_GATHER,        /* in: x (B*T, C), pos (i32, B x M: distinct within a row, in
                       * [0, T)); out: y (B*M, C), y[b M + j] = x[b T + pos[b, j]] */
    OP_GATHER_BWD,    /* in: dy, pos; out: dx (the gathered rows; 0 elsewhere) */
    OP_SGD,           /* in: w, g, momentum buf */
    OP_ADAMW,         /* in: w, g, m, v */
    OP_EMA,           /* in: w, ema */
    OP_ALLREDUCE,     /* data parallel: in: bucket (a view of grad.flat); starts its sum over the ranks */
    OP_ALLREDUCE_WAIT,/* in: bucket; waits for it and divides by the ranks (the mean gradient) */
    OP_COUNT
};

typedef struct op {
    int type;
    int in[GRAPH_MAX_IN];   /* tensor indices, -1 when absent */
    int out[GRAPH_MAX_OUT]; /* tensor indices, -1 when absent */
    int fwd;                /* backward ops: index of their forward op */
    int dead;               /* removed by a pass */
    /* attributes */
    int kh, kw, stride, pad; /* convolution / pooling */
    int act;                 /* epilogue activation, enum act */
    int acc;                 /* outputs: bit i set: add into out[i] */
    int train;               /* BN: batch statistics; dropout: active */
    int channel;             /* dropout2d: one draw per (n, c) */
    int heads;               /* attention */
    int sync;                /* BN: statistics over every rank (SyncBN) */
    int bucket;              /* OP_ALLREDUCE(_WAIT): bucket number */
    float p;                 /* dropout probability */
    float eps, momentum;     /* BN / LN; optimizer momentum */
    float lr, wd, beta1, beta2; /* optimizers */
    uint64_t seed;           /* dropout stream */
    double flops;            /* analytic multiply-adds x2 of this op */
    char name[GRAPH_NAME];
} op;

typedef struct graph {
    tensor *t;
    int nt, capt;
    op *ops;
    int nops, capops;
    int nfwd;  /* ops [0, nfwd) are the forward pass */
    int loss;  /* index of the scalar loss tensor, or -1 */
    int output;/* index of the model output tensor */
    int step;  /* optimizer step counter (1-based during a step) */
    /* the first tensor made with more than GRAPH_MAX_NUMEL elements (its
     * name and shape), "" when none: a point no machine holds, whose sizes
     * would overflow (graph_numel saturates at INT64_MAX) */
    char too_big[GRAPH_NAME + 96];
} graph;

/* Most elements of one tensor: 2^46 (256 TiB of f32), so that the sizes of
 * 2^15 such tensors still add up in an int64_t (the memory plan). */
#define GRAPH_MAX_NUMEL ((int64_t)1 << 46)

void graph_init(graph *g);
void graph_free(graph *g);

/* Add a tensor; shape has ndim entries. Returns its index. */
int graph_tensor(graph *g, const char *name, int kind, int dtype, int layout,
                 int ndim, const int64_t *shape);
/* Shorthands for f32 tensors of 1 to 4 dimensions. */
int graph_t1(graph *g, const char *name, int kind, int64_t a);
int graph_t2(graph *g, const char *name, int kind, int64_t a, int64_t b);
int graph_t4(graph *g, const char *name, int kind, int layout, int64_t n,
             int64_t c, int64_t h, int64_t w);
/* Append an op of type with no inputs/outputs yet; returns its index. The
 * pointer it leaves in *out is valid until the next graph_op call. */
int graph_op(graph *g, int type, const char *name, op **out);
/* Elements of t: the product of its shape, INT64_MAX when that overflows. */
int64_t graph_numel(const tensor *t);
/* Bytes of one element of dtype. */
size_t graph_dtype_size(int dtype);
/* Index of the tensor called name, or -1. */
int graph_find(const graph *g, const char *name);
const char *graph_op_name(int type);
/* 1 when one of ops [0, n) draws a dropout mask (a dropout, or an attention
 * with probability dropout: out[2]), which a dump records per op and step. */
int graph_draws_masks(const graph *g, int n);

#endif
