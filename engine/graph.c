/* graph.c - op graph storage, see graph.h. */
#include "config.h"
#include "graph.h"
#include "check.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *op_names[OP_COUNT] = {
    [OP_CONV] = "conv", [OP_CONV_BWD] = "conv_bwd", [OP_BN] = "batchnorm",
    [OP_BN_BWD] = "batchnorm_bwd", [OP_ACT] = "act", [OP_ACT_BWD] = "act_bwd",
    [OP_MAXPOOL] = "maxpool", [OP_MAXPOOL_BWD] = "maxpool_bwd",
    [OP_AVGPOOL] = "avgpool", [OP_AVGPOOL_BWD] = "avgpool_bwd",
    [OP_FLATTEN] = "flatten", [OP_FLATTEN_BWD] = "flatten_bwd",
    [OP_LINEAR] = "linear", [OP_LINEAR_BWD] = "linear_bwd",
    [OP_DROPOUT] = "dropout", [OP_DROPOUT_BWD] = "dropout_bwd",
    [OP_ADD] = "add", [OP_COPY] = "copy", [OP_LOGSOFTMAX] = "log_softmax",
    [OP_LOGSOFTMAX_BWD] = "log_softmax_bwd", [OP_NLL] = "nll",
    [OP_NLL_BWD] = "nll_bwd", [OP_SOFTMAX_CE] = "softmax_ce",
    [OP_SOFTMAX_CE_BWD] = "softmax_ce_bwd", [OP_EMBED] = "embedding",
    [OP_EMBED_BWD] = "embedding_bwd", [OP_LAYERNORM] = "layernorm",
    [OP_LAYERNORM_BWD] = "layernorm_bwd", [OP_ATTENTION] = "attention",
    [OP_ATTENTION_BWD] = "attention_bwd", [OP_GATHER] = "gather",
    [OP_GATHER_BWD] = "gather_bwd", [OP_SGD] = "sgd", [OP_ADAMW] = "adamw",
    [OP_EMA] = "ema",
    [OP_ALLREDUCE] = "allreduce",
    [OP_ALLREDUCE_WAIT] = "allreduce_wait",
};

const char *graph_op_name(int type)
{
    return type >= 0 && type < OP_COUNT && op_names[type] ? op_names[type] : "?";
}

void graph_init(graph *g)
{
    memset(g, 0, sizeof *g);
    g->loss = -1;
    g->output = -1;
}

void graph_free(graph *g)
{
    free(g->t);
    free(g->ops);
    memset(g, 0, sizeof *g);
}

int64_t graph_numel(const tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        if (__builtin_mul_overflow(n, t->shape[i], &n))
            return INT64_MAX;
    return n;
}

int graph_tensor(graph *g, const char *name, int kind, int dtype, int layout,
                 int ndim, const int64_t *shape)
{
    tensor *t;
    int64_t sh[4] = {1, 1, 1, 1};
    for (int i = 0; i < ndim; i++) /* shape may point into g->t */
        sh[i] = shape[i];
    if (g->nt == g->capt) {
        g->capt = g->capt ? 2 * g->capt : 256;
        g->t = realloc(g->t, g->capt * sizeof *g->t);
        mallocCheck(g->t);
    }
    t = &g->t[g->nt];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        t->shape[i] = sh[i];
    t->layout = layout;
    t->dtype = dtype;
    t->kind = kind;
    int64_t n = graph_numel(t);
    if (n > GRAPH_MAX_NUMEL || n < 0) { /* no machine holds it: sizes kept from overflowing, the build refused */
        if (!g->too_big[0]) {
            int len = snprintf(g->too_big, sizeof g->too_big, "'%s' of ", name);
            for (int i = 0; i < ndim && len < (int)sizeof g->too_big; i++)
                len += snprintf(g->too_big + len, sizeof g->too_big - len, "%s%" PRId64, i ? "x" : "", sh[i]);
        }
        n = GRAPH_MAX_NUMEL;
    }
    t->bytes = (size_t)n * graph_dtype_size(dtype);
    t->grad = -1;
    t->alias = -1;
    t->first = t->last = -1;
    return g->nt++;
}

int graph_t1(graph *g, const char *name, int kind, int64_t a)
{
    return graph_tensor(g, name, kind, DT_F32, LAYOUT_ROW, 1, &a);
}

int graph_t2(graph *g, const char *name, int kind, int64_t a, int64_t b)
{
    int64_t s[2] = {a, b};
    return graph_tensor(g, name, kind, DT_F32, LAYOUT_ROW, 2, s);
}

int graph_t4(graph *g, const char *name, int kind, int layout, int64_t n,
             int64_t c, int64_t h, int64_t w)
{
    int64_t s[4] = {n, c, h, w};
    return graph_tensor(g, name, kind, DT_F32, layout, 4, s);
}

int graph_op(graph *g, int type, const char *name, op **out)
{
    op *o;
    if (g->nops == g->capops) {
        g->capops = g->capops ? 2 * g->capops : 256;
        g->ops = realloc(g->ops, g->capops * sizeof *g->ops);
        mallocCheck(g->ops);
    }
    o = &g->ops[g->nops];
    memset(o, 0, sizeof *o);
    o->type = type;
    for (int i = 0; i < GRAPH_MAX_IN; i++)
        o->in[i] = -1;
    for (int i = 0; i < GRAPH_MAX_OUT; i++)
        o->out[i] = -1;
    o->fwd = -1;
    snprintf(o->name, sizeof o->name, "%s", name);
    if (out)
        *out = o;
    return g->nops++;
}

int graph_find(const graph *g, const char *name)
{
    for (int i = 0; i < g->nt; i++)
        if (strcmp(g->t[i].name, name) == 0)
            return i;
    return -1;
}

int graph_draws_masks(const graph *g, int n)
{
    for (int i = 0; i < n && i < g->nops; i++)
        if (g->ops[i].type == OP_DROPOUT || (g->ops[i].type == OP_ATTENTION && g->ops[i].out[2] >= 0))
            return 1;
    return 0;
}

size_t graph_dtype_size(int dtype)
{
    return dtype == DT_F16 || dtype == DT_BF16 ? 2 : 4;
}
