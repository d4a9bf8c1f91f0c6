/* layers.c - helpers that declare a layer's parameters and append its op,
 * with PyTorch's default initialisation and names. */
#include "config.h"
#include "models.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int layer_param(graph *g, const char *name, int kind, int init, float a, int ndim, ...)
{
    int64_t s[4];
    va_list ap;
    va_start(ap, ndim);
    for (int i = 0; i < ndim; i++)
        s[i] = va_arg(ap, int64_t);
    va_end(ap);
    int t = graph_tensor(g, name, kind, DT_F32, LAYOUT_ROW, ndim, s);
    g->t[t].init = init;
    g->t[t].init_a = a;
    return t;
}

static int act_like(graph *g, const char *name, int x)
{
    tensor s = g->t[x];
    return graph_tensor(g, name, TK_ACT, DT_F32, s.layout, s.ndim, s.shape);
}

static op *new_op(graph *g, int type, const char *name)
{
    op *o;
    graph_op(g, type, name, &o);
    g->nfwd = g->nops;
    return o;
}

int layer_conv(graph *g, const char *name, int x, int cout, int k, int stride, int pad,
               int bias, int init_kaiming_out)
{
    char n[GRAPH_NAME];
    tensor xs = g->t[x];
    int64_t cin = xs.shape[1];
    int64_t oh = (xs.shape[2] + 2 * pad - k) / stride + 1;
    int64_t ow = (xs.shape[3] + 2 * pad - k) / stride + 1;
    float fan_in = cin * k * k, bound = 1.0f / sqrtf(fan_in);
    snprintf(n, sizeof n, "%s.weight", name);
    int w = init_kaiming_out
                ? layer_param(g, n, TK_PARAM, INIT_NORMAL, sqrtf(2.0f / (cout * k * k)), 4,
                              (int64_t)cout, cin, (int64_t)k, (int64_t)k)
                : layer_param(g, n, TK_PARAM, INIT_UNIFORM, bound, 4, (int64_t)cout, cin,
                              (int64_t)k, (int64_t)k);
    int b = -1;
    if (bias) {
        snprintf(n, sizeof n, "%s.bias", name);
        b = layer_param(g, n, TK_PARAM, INIT_UNIFORM, bound, 1, (int64_t)cout);
    }
    int y = graph_t4(g, name, TK_ACT, xs.layout, xs.shape[0], cout, oh, ow);
    op *o = new_op(g, OP_CONV, name);
    o->in[0] = x;
    o->in[1] = w;
    o->in[2] = b;
    o->out[0] = y;
    o->kh = o->kw = k;
    o->stride = stride;
    o->pad = pad;
    o->flops = 2.0 * xs.shape[0] * cout * oh * ow * cin * k * k;
    return y;
}

int layer_bn(graph *g, const char *name, int x, int train)
{
    char n[GRAPH_NAME];
    int64_t C = g->t[x].shape[1];
    snprintf(n, sizeof n, "%s.weight", name);
    int gam = layer_param(g, n, TK_PARAM, INIT_CONST, 1.0f, 1, C);
    snprintf(n, sizeof n, "%s.bias", name);
    int bet = layer_param(g, n, TK_PARAM, INIT_CONST, 0.0f, 1, C);
    snprintf(n, sizeof n, "%s.running_mean", name);
    int rm = layer_param(g, n, TK_BUFFER, INIT_CONST, 0.0f, 1, C);
    snprintf(n, sizeof n, "%s.running_var", name);
    int rv = layer_param(g, n, TK_BUFFER, INIT_CONST, 1.0f, 1, C);
    int y = act_like(g, name, x);
    snprintf(n, sizeof n, "%s.mean", name);
    int mean = graph_t1(g, n, TK_ACT, C);
    snprintf(n, sizeof n, "%s.invstd", name);
    int inv = graph_t1(g, n, TK_ACT, C);
    op *o = new_op(g, OP_BN, name);
    o->in[0] = x; o->in[1] = gam; o->in[2] = bet; o->in[3] = rm; o->in[4] = rv;
    o->out[0] = y; o->out[1] = mean; o->out[2] = inv;
    o->train = train;
    o->eps = 1e-5f;
    o->momentum = 0.1f;
    return y;
}

int layer_act(graph *g, const char *name, int x, int act)
{
    int y = act_like(g, name, x);
    op *o = new_op(g, OP_ACT, name);
    o->in[0] = x;
    o->out[0] = y;
    o->act = act;
    return y;
}

int layer_maxpool(graph *g, const char *name, int x, int k, int stride, int pad)
{
    char n[GRAPH_NAME];
    tensor xs = g->t[x];
    int64_t oh = (xs.shape[2] + 2 * pad - k) / stride + 1;
    int64_t ow = (xs.shape[3] + 2 * pad - k) / stride + 1;
    int y = graph_t4(g, name, TK_ACT, xs.layout, xs.shape[0], xs.shape[1], oh, ow);
    int64_t s[4] = {xs.shape[0], xs.shape[1], oh, ow};
    snprintf(n, sizeof n, "%s.argmax", name);
    int idx = graph_tensor(g, n, TK_ACT, DT_I32, xs.layout, 4, s);
    op *o = new_op(g, OP_MAXPOOL, name);
    o->in[0] = x;
    o->out[0] = y;
    o->out[1] = idx;
    o->kh = o->kw = k;
    o->stride = stride;
    o->pad = pad;
    return y;
}

int layer_avgpool(graph *g, const char *name, int x)
{
    int y = graph_t2(g, name, TK_ACT, g->t[x].shape[0], g->t[x].shape[1]);
    op *o = new_op(g, OP_AVGPOOL, name);
    o->in[0] = x;
    o->out[0] = y;
    return y;
}

int layer_flatten(graph *g, const char *name, int x)
{
    tensor xs = g->t[x];
    int y = graph_t2(g, name, TK_ACT, xs.shape[0], graph_numel(&xs) / xs.shape[0]);
    op *o = new_op(g, OP_FLATTEN, name);
    o->in[0] = x;
    o->out[0] = y;
    return y;
}

/* y = x w^T (+ b): the op and its output (w (out, K) made by the caller). */
static int linear_op(graph *g, const char *name, int x, int w, int b)
{
    tensor xs = g->t[x];
    int64_t K = xs.shape[xs.ndim - 1], M = graph_numel(&xs) / K, out = g->t[w].shape[0];
    int64_t s[4];
    memcpy(s, xs.shape, sizeof s);
    s[xs.ndim - 1] = out;
    int y = graph_tensor(g, name, TK_ACT, DT_F32, LAYOUT_ROW, xs.ndim, s);
    op *o = new_op(g, OP_LINEAR, name);
    o->in[0] = x;
    o->in[1] = w;
    o->in[2] = b;
    o->out[0] = y;
    o->flops = 2.0 * M * K * out;
    return y;
}

int layer_linear(graph *g, const char *name, int x, int out, int bias, int init_normal, float std)
{
    char n[GRAPH_NAME];
    tensor xs = g->t[x];
    int64_t K = xs.shape[xs.ndim - 1];
    float bound = 1.0f / sqrtf((float)K);
    snprintf(n, sizeof n, "%s.weight", name);
    int w = init_normal ? layer_param(g, n, TK_PARAM, INIT_NORMAL, std, 2, (int64_t)out, K)
                        : layer_param(g, n, TK_PARAM, INIT_UNIFORM, bound, 2, (int64_t)out, K);
    int b = -1;
    if (bias) {
        snprintf(n, sizeof n, "%s.bias", name);
        b = init_normal ? layer_param(g, n, TK_PARAM, INIT_CONST, 0.0f, 1, (int64_t)out)
                        : layer_param(g, n, TK_PARAM, INIT_UNIFORM, bound, 1, (int64_t)out);
    }
    return linear_op(g, name, x, w, b);
}

int layer_linear_tied(graph *g, const char *name, int x, int w)
{
    char n[GRAPH_NAME];
    snprintf(n, sizeof n, "%s.bias", name);
    int b = layer_param(g, n, TK_PARAM, INIT_CONST, 0.0f, 1, g->t[w].shape[0]);
    return linear_op(g, name, x, w, b);
}

int layer_gather(graph *g, const char *name, int x, int pos)
{
    tensor xs = g->t[x], ps = g->t[pos];
    int y = graph_t2(g, name, TK_ACT, graph_numel(&ps), xs.shape[xs.ndim - 1]);
    op *o = new_op(g, OP_GATHER, name);
    o->in[0] = x;
    o->in[1] = pos;
    o->out[0] = y;
    return y;
}

int layer_softmax_ce(graph *g, const char *name, int logits, int target)
{
    char n[GRAPH_NAME];
    tensor ls = g->t[logits];
    int64_t N = ls.shape[ls.ndim - 1];
    int loss = graph_t1(g, name, TK_ACT, 1);
    snprintf(n, sizeof n, "%s.lse", name);
    int lse = graph_t1(g, n, TK_ACT, graph_numel(&ls) / N);
    op *o = new_op(g, OP_SOFTMAX_CE, name);
    o->in[0] = logits;
    o->in[1] = target;
    o->out[0] = loss;
    o->out[1] = lse;
    return loss;
}

int layer_dropout(graph *g, const char *name, int x, float p, int channel)
{
    char n[GRAPH_NAME];
    tensor xs = g->t[x];
    int y = act_like(g, name, x);
    snprintf(n, sizeof n, "%s.mask", name);
    int m = channel ? graph_t2(g, n, TK_ACT, xs.shape[0], xs.shape[1])
                    : graph_tensor(g, n, TK_ACT, DT_F32, xs.layout, xs.ndim, xs.shape);
    op *o = new_op(g, OP_DROPOUT, name);
    o->in[0] = x;
    o->out[0] = y;
    o->out[1] = m;
    o->p = p;
    o->channel = channel;
    o->seed = (uint64_t)(g->nops * 7919 + 17);
    return y;
}

int layer_add(graph *g, const char *name, int a, int b)
{
    int y = act_like(g, name, a);
    op *o = new_op(g, OP_ADD, name);
    o->in[0] = a;
    o->in[1] = b;
    o->out[0] = y;
    return y;
}

int layer_logsoftmax(graph *g, const char *name, int logits)
{
    int lp = act_like(g, name, logits);
    op *o = new_op(g, OP_LOGSOFTMAX, name);
    o->in[0] = logits;
    o->out[0] = lp;
    return lp;
}

int layer_nll(graph *g, const char *name, int logits, int target, int *logp)
{
    char n[GRAPH_NAME];
    snprintf(n, sizeof n, "%s.log_softmax", name);
    int lp = layer_logsoftmax(g, n, logits);
    int loss = graph_t1(g, name, TK_ACT, 1);
    op *o = new_op(g, OP_NLL, name);
    o->in[0] = lp;
    o->in[1] = target;
    o->out[0] = loss;
    if (logp)
        *logp = lp;
    return loss;
}

int layer_layernorm(graph *g, const char *name, int x, float eps)
{
    char n[GRAPH_NAME];
    tensor xs = g->t[x];
    int64_t C = xs.shape[xs.ndim - 1], M = graph_numel(&xs) / C;
    snprintf(n, sizeof n, "%s.weight", name);
    int gam = layer_param(g, n, TK_PARAM, INIT_CONST, 1.0f, 1, C);
    snprintf(n, sizeof n, "%s.bias", name);
    int bet = layer_param(g, n, TK_PARAM, INIT_CONST, 0.0f, 1, C);
    int y = act_like(g, name, x);
    snprintf(n, sizeof n, "%s.mean", name);
    int mean = graph_t1(g, n, TK_ACT, M);
    snprintf(n, sizeof n, "%s.rstd", name);
    int rstd = graph_t1(g, n, TK_ACT, M);
    op *o = new_op(g, OP_LAYERNORM, name);
    o->in[0] = x; o->in[1] = gam; o->in[2] = bet;
    o->out[0] = y; o->out[1] = mean; o->out[2] = rstd;
    o->eps = eps;
    return y;
}
