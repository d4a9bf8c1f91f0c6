/* passes.c - graph rewrites, see passes.h. */
#include "config.h"
#include "passes.h"
#include "check.h"
#include "mem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TF(g, i) ((float *)(g)->t[(i)].data)

/* Number of live forward ops reading tensor t; *only gets the last one. */
static int consumers(const graph *g, int t, int *only)
{
    int n = 0;
    for (int i = 0; i < g->nops; i++) {
        const op *o = &g->ops[i];
        if (o->dead)
            continue;
        for (int k = 0; k < GRAPH_MAX_IN; k++)
            if (o->in[k] == t) {
                n++;
                *only = i;
            }
    }
    return n;
}

static int producer(const graph *g, int t)
{
    for (int i = 0; i < g->nops; i++)
        if (!g->ops[i].dead)
            for (int k = 0; k < GRAPH_MAX_OUT; k++)
                if (g->ops[i].out[k] == t)
                    return i;
    return -1;
}

void pass_compact(graph *g)
{
    int j = 0, nfwd = 0;
    for (int i = 0; i < g->nops; i++) {
        if (g->ops[i].dead)
            continue;
        if (i < g->nfwd)
            nfwd++;
        g->ops[j++] = g->ops[i];
    }
    g->nops = j;
    g->nfwd = nfwd;
}

int pass_fold_bn(graph *g)
{
    int folded = 0;
    for (int i = 0; i < g->nfwd; i++) {
        op *c = &g->ops[i];
        int bi;
        if (c->dead || c->type != OP_CONV || c->act != ACT_NONE || c->in[3] >= 0)
            continue;
        if (consumers(g, c->out[0], &bi) != 1 || c->out[0] == g->output)
            continue;
        op *b = &g->ops[bi];
        if (b->type != OP_BN || b->train || b->in[0] != c->out[0])
            continue;
        tensor w = g->t[c->in[1]];
        long Co = w.shape[0], K = graph_numel(&w) / Co;
        char name[2 * GRAPH_NAME];
        snprintf(name, sizeof name, "%s.folded_weight", c->name);
        int fw = graph_tensor(g, name, TK_CONST, DT_F32, LAYOUT_ROW, w.ndim, w.shape);
        snprintf(name, sizeof name, "%s.folded_bias", c->name);
        int fb = graph_t1(g, name, TK_CONST, Co);
        g->t[fw].data = mem_alloc(g->t[fw].bytes);
        g->t[fb].data = mem_alloc(g->t[fb].bytes);
        mallocCheck(g->t[fw].data);
        mallocCheck(g->t[fb].data);
        const float *W = TF(g, c->in[1]), *cb = c->in[2] >= 0 ? TF(g, c->in[2]) : NULL;
        const float *gam = TF(g, b->in[1]), *bet = TF(g, b->in[2]);
        const float *rm = TF(g, b->in[3]), *rv = TF(g, b->in[4]);
        float *FW = TF(g, fw), *FB = TF(g, fb);
        for (long o = 0; o < Co; o++) {
            double s = gam[o] / sqrt((double)rv[o] + b->eps);
            for (long k = 0; k < K; k++)
                FW[o * K + k] = W[o * K + k] * s;
            FB[o] = bet[o] + ((cb ? cb[o] : 0.0f) - rm[o]) * s;
        }
        c->in[1] = fw;
        c->in[2] = fb;
        c->in[3] = b->in[5];
        c->act = b->act;
        c->out[0] = b->out[0];
        snprintf(c->name + strlen(c->name), GRAPH_NAME - strlen(c->name), "+bn");
        b->dead = 1;
        folded++;
    }
    pass_compact(g);
    return folded;
}

int pass_fuse(graph *g, int train)
{
    int fused = 0;
    for (int i = 0; i < g->nfwd; i++) {
        op *p = &g->ops[i];
        int qi;
        if (p->dead)
            continue;
        int epi = p->type == OP_CONV || p->type == OP_LINEAR || p->type == OP_BN;
        if (!epi && p->type != OP_MAXPOOL)
            continue;
        /* residual add: y = p(x) + r, r produced before p */
        if (epi && p->act == ACT_NONE && (p->type == OP_BN ? p->in[5] : p->in[3]) < 0 &&
            p->out[0] != g->output && consumers(g, p->out[0], &qi) == 1 &&
            g->ops[qi].type == OP_ADD) {
            op *q = &g->ops[qi];
            int r = q->in[0] == p->out[0] ? q->in[1] : q->in[0];
            int pr = producer(g, r);
            if (r != p->out[0] && pr < i) {
                if (p->type == OP_BN)
                    p->in[5] = r;
                else
                    p->in[3] = r;
                g->t[p->out[0]].dead = 1;
                p->out[0] = q->out[0];
                q->dead = 1;
                strncat(p->name, "+add", GRAPH_NAME - strlen(p->name) - 1);
                fused++;
            }
        }
        /* activation */
        if (p->act == ACT_NONE && p->out[0] != g->output &&
            consumers(g, p->out[0], &qi) == 1 && g->ops[qi].type == OP_ACT) {
            op *q = &g->ops[qi];
            int a = q->act;
            int ok = a == ACT_RELU || (p->type != OP_MAXPOOL && p->type != OP_BN) ||
                     (p->type == OP_BN && a == ACT_TANH);
            if (ok) {
                int y = p->out[0];
                p->act = a;
                p->out[0] = q->out[0];
                if (train && act_is_gelu(a))
                    p->out[1] = y; /* pre-activation, read by the backward */
                else
                    g->t[y].dead = 1;
                q->dead = 1;
                strncat(p->name,
                        a == ACT_RELU ? "+relu" : a == ACT_GELU ? "+gelu"
                                              : a == ACT_GELU_TANH ? "+gelu_tanh" : "+tanh",
                        GRAPH_NAME - strlen(p->name) - 1);
                fused++;
            }
        }
    }
    pass_compact(g);
    return fused;
}

/* ---- autodiff --------------------------------------------------------------- */

struct ad {
    graph *g;
    int *contrib; /* per tensor: gradient contributions emitted so far */
    int cap;
};

/* Index of t's gradient tensor (made on first use). */
static int ad_grad(struct ad *a, int t)
{
    graph *g = a->g;
    if (g->t[t].grad < 0) {
        char name[2 * GRAPH_NAME];
        snprintf(name, sizeof name, "grad.%s", g->t[t].name);
        int kind = g->t[t].kind == TK_PARAM ? TK_PGRAD : TK_GRAD;
        int gi = graph_tensor(g, name, kind, g->t[t].dtype, g->t[t].layout,
                              g->t[t].ndim, g->t[t].shape);
        g->t[t].grad = gi;
    }
    return g->t[t].grad;
}

/* Output slot k of op oi writes the gradient of t: set acc when a
 * contribution already exists. Returns the gradient index. */
static int ad_out(struct ad *a, int oi, int k, int t)
{
    int gi = ad_grad(a, t);
    if (a->contrib[t] > 0)
        a->g->ops[oi].acc |= 1 << k;
    a->contrib[t]++;
    a->g->ops[oi].out[k] = gi;
    return gi;
}

static int ad_new(struct ad *a, int type, const op *f, int fi)
{
    op *o;
    char name[2 * GRAPH_NAME];
    snprintf(name, sizeof name, "%s", f->name);
    int oi = graph_op(a->g, type, name, &o);
    o->fwd = fi;
    return oi;
}

/* Emit the backward of an epilogue (act, residual) of op fi whose output
 * gradient is dy; returns the gradient of the op's core result. */
static int ad_epilogue(struct ad *a, int fi, int dy)
{
    graph *g = a->g;
    op f = g->ops[fi];
    int res = f.type == OP_BN ? f.in[5] : f.type == OP_MAXPOOL ? -1 : f.in[3];
    int d = dy;
    if (f.act != ACT_NONE) {
        char name[2 * GRAPH_NAME];
        snprintf(name, sizeof name, "grad.pre.%s", f.name);
        d = graph_tensor(g, name, TK_GRAD, DT_F32, g->t[dy].layout, g->t[dy].ndim,
                         g->t[dy].shape);
        int oi = ad_new(a, OP_ACT_BWD, &f, fi);
        op *o = &g->ops[oi];
        o->act = f.act;
        o->in[0] = dy;
        o->in[1] = act_is_gelu(f.act) ? f.out[1] : f.out[0];
        o->out[0] = d;
        if (act_is_gelu(f.act) && f.out[1] < 0)
            BUG("fused gelu without its pre-activation in '%s'", f.name);
    }
    if (res >= 0 && g->t[res].needs_grad) {
        int oi = ad_new(a, OP_COPY, &f, fi);
        g->ops[oi].in[0] = d;
        ad_out(a, oi, 0, res);
    }
    return d;
}

/* The backward of forward op fi: the ops that carry dy to the gradients of
 * its inputs. Longer than 80 lines on purpose: one case per forward op type,
 * each the wiring of its backward op (inputs, attributes, which outputs get
 * a gradient), so that the adjoint rules read as one table next to each
 * other; split per op they would be a dozen functions of a few lines each
 * passing the same (a, f, fi, dy) and the NG test. */
static void ad_op(struct ad *a, int fi)
{
    graph *g = a->g;
    op f = g->ops[fi];
    int y = f.out[0];
    if (f.type == OP_NLL) {
        if (g->t[f.in[0]].needs_grad) {
            int oi = ad_new(a, OP_NLL_BWD, &f, fi);
            g->ops[oi].in[0] = f.in[1];
            ad_out(a, oi, 0, f.in[0]);
        }
        return;
    }
    if (f.type == OP_SOFTMAX_CE) { /* the loss: dlogits from the logits and lse */
        if (g->t[f.in[0]].needs_grad) {
            int oi = ad_new(a, OP_SOFTMAX_CE_BWD, &f, fi);
            g->ops[oi].in[0] = f.in[0];
            g->ops[oi].in[1] = f.in[1];
            g->ops[oi].in[2] = f.out[1];
            ad_out(a, oi, 0, f.in[0]);
        }
        return;
    }
    if (g->t[y].grad < 0 || a->contrib[y] == 0)
        return; /* nothing flows back through this op */
    int dy = g->t[y].grad;
#define NG(k) (f.in[k] >= 0 && g->t[f.in[k]].needs_grad)
    switch (f.type) {
    case OP_CONV:
    case OP_LINEAR: {
        int d = ad_epilogue(a, fi, dy);
        int oi = ad_new(a, f.type == OP_CONV ? OP_CONV_BWD : OP_LINEAR_BWD, &f, fi);
        op *o = &g->ops[oi];
        o->kh = f.kh; o->kw = f.kw; o->stride = f.stride; o->pad = f.pad;
        o->in[0] = d;
        o->in[1] = f.in[0];
        o->in[2] = f.in[1];
        o->flops = f.flops;
        if (NG(0)) {
            ad_out(a, oi, 0, f.in[0]);
            g->ops[oi].flops += f.flops;
        }
        if (NG(1))
            ad_out(a, oi, 1, f.in[1]);
        if (NG(2))
            ad_out(a, oi, 2, f.in[2]);
        break;
    }
    case OP_BN: {
        int d = ad_epilogue(a, fi, dy);
        int oi = ad_new(a, OP_BN_BWD, &f, fi);
        op *o = &g->ops[oi];
        o->train = f.train;
        o->in[0] = d;
        o->in[1] = f.in[0];
        o->in[2] = f.in[1];
        o->in[3] = f.out[1];
        o->in[4] = f.out[2];
        if (NG(0))
            ad_out(a, oi, 0, f.in[0]);
        ad_out(a, oi, 1, f.in[1]);
        ad_out(a, oi, 2, f.in[2]);
        break;
    }
    case OP_MAXPOOL: {
        int d = ad_epilogue(a, fi, dy);
        if (!NG(0))
            break;
        int oi = ad_new(a, OP_MAXPOOL_BWD, &f, fi);
        g->ops[oi].in[0] = d;
        g->ops[oi].in[1] = f.out[1];
        ad_out(a, oi, 0, f.in[0]);
        break;
    }
    case OP_ACT: {
        if (!NG(0))
            break;
        int oi = ad_new(a, OP_ACT_BWD, &f, fi);
        g->ops[oi].act = f.act;
        g->ops[oi].in[0] = dy;
        g->ops[oi].in[1] = act_is_gelu(f.act) ? f.in[0] : f.out[0];
        ad_out(a, oi, 0, f.in[0]);
        break;
    }
    case OP_AVGPOOL:
    case OP_FLATTEN:
    case OP_GATHER: {
        static const int bwd[OP_COUNT] = {[OP_AVGPOOL] = OP_AVGPOOL_BWD,
            [OP_FLATTEN] = OP_FLATTEN_BWD, [OP_GATHER] = OP_GATHER_BWD};
        if (!NG(0))
            break;
        int oi = ad_new(a, bwd[f.type], &f, fi);
        g->ops[oi].in[0] = dy;
        g->ops[oi].in[1] = f.type == OP_GATHER ? f.in[1] : -1;
        ad_out(a, oi, 0, f.in[0]);
        break;
    }
    case OP_DROPOUT: {
        if (!NG(0))
            break;
        int oi = ad_new(a, OP_DROPOUT_BWD, &f, fi);
        g->ops[oi].channel = f.channel;
        g->ops[oi].in[0] = dy;
        g->ops[oi].in[1] = f.out[1];
        ad_out(a, oi, 0, f.in[0]);
        break;
    }
    case OP_ADD:
        for (int k = 0; k < 2; k++)
            if (NG(k)) {
                int oi = ad_new(a, OP_COPY, &f, fi);
                g->ops[oi].in[0] = dy;
                ad_out(a, oi, 0, f.in[k]);
            }
        break;
    case OP_LOGSOFTMAX: {
        if (!NG(0))
            break;
        int oi = ad_new(a, OP_LOGSOFTMAX_BWD, &f, fi);
        g->ops[oi].in[0] = dy;
        g->ops[oi].in[1] = y;
        ad_out(a, oi, 0, f.in[0]);
        break;
    }
    case OP_EMBED: {
        int oi = ad_new(a, OP_EMBED_BWD, &f, fi);
        g->ops[oi].in[0] = dy;
        g->ops[oi].in[1] = f.in[0];
        g->ops[oi].in[2] = f.in[1];
        for (int k = 0; k < 3; k++)
            ad_out(a, oi, k, f.in[2 + k]);
        break;
    }
    case OP_LAYERNORM: {
        int oi = ad_new(a, OP_LAYERNORM_BWD, &f, fi);
        op *o = &g->ops[oi];
        o->in[0] = dy;
        o->in[1] = f.in[0];
        o->in[2] = f.in[1];
        o->in[3] = f.out[1];
        o->in[4] = f.out[2];
        ad_out(a, oi, 0, f.in[0]);
        ad_out(a, oi, 1, f.in[1]);
        ad_out(a, oi, 2, f.in[2]);
        break;
    }
    case OP_ATTENTION: {
        int oi = ad_new(a, OP_ATTENTION_BWD, &f, fi);
        op *o = &g->ops[oi];
        o->in[0] = dy;
        o->in[1] = f.in[0];
        o->in[2] = f.in[1];
        o->in[3] = f.in[2];
        o->in[4] = f.out[1];
        /* flash form: the forward's output instead of a mask (rowsum dy . y) */
        int flash = g->t[f.out[1]].ndim == 3;
        o->in[5] = flash ? f.out[0] : f.out[2];
        o->heads = f.heads;
        if (flash && f.out[2] >= 0) { /* dropout: the keep flags drawn again, same seed */
            tensor m = g->t[f.out[2]];
            char name[2 * GRAPH_NAME];
            snprintf(name, sizeof name, "%.70s.bwd", m.name);
            int t = graph_tensor(g, name, TK_ACT, m.dtype, m.layout, m.ndim, m.shape);
            o = &g->ops[oi];
            o->out[3] = t;
            o->p = f.p;
            o->seed = f.seed;
        }
        o->flops = 2 * f.flops;
        for (int k = 0; k < 3; k++)
            if (NG(k))
                ad_out(a, oi, k, f.in[k]);
        break;
    }
    default:
        BUG("no backward for op '%s' (%s)", f.name, graph_op_name(f.type));
    }
#undef NG
}

int pass_autodiff(graph *g, const optim_cfg *opt)
{
    struct ad a = {g, NULL, 0};
    int start = g->nops;
    /* which tensors need a gradient: parameters and what depends on them */
    for (int i = 0; i < g->nt; i++)
        g->t[i].needs_grad = g->t[i].kind == TK_PARAM;
    for (int i = 0; i < g->nfwd; i++) {
        op *o = &g->ops[i];
        int ng = 0;
        for (int k = 0; k < GRAPH_MAX_IN; k++)
            if (o->in[k] >= 0 && g->t[o->in[k]].needs_grad)
                ng = 1;
        if (ng)
            for (int k = 0; k < GRAPH_MAX_OUT; k++)
                if (o->out[k] >= 0 && g->t[o->out[k]].dtype == DT_F32)
                    g->t[o->out[k]].needs_grad = 1;
    }
    a.cap = g->nt * 4 + 1024; /* gradients are added as we go */
    a.contrib = calloc(a.cap, sizeof *a.contrib);
    mallocCheck(a.contrib);
    if (g->loss < 0 && g->output >= 0 && g->t[g->output].needs_grad) {
        /* no loss (an inference graph, pass_saved): the gradient flows from
         * the output, as out.backward(gradient) would make it */
        ad_grad(&a, g->output);
        a.contrib[g->output] = 1;
    }
    for (int i = g->nfwd - 1; i >= 0; i--) {
        if (g->nt + 64 > a.cap)
            BUG("autodiff ran out of tensor slots");
        ad_op(&a, i);
    }
    /* optimizer */
    int nt0 = g->nt;
    for (int i = 0; i < nt0; i++) {
        if (g->t[i].kind != TK_PARAM || g->t[i].grad < 0)
            continue;
        char name[2 * GRAPH_NAME];
        op *o;
        int w = i, gr = g->t[i].grad;
        if (!opt->adamw) {
            snprintf(name, sizeof name, "momentum.%s", g->t[w].name);
            int m = graph_tensor(g, name, TK_STATE, DT_F32, LAYOUT_ROW, g->t[w].ndim, g->t[w].shape);
            graph_op(g, OP_SGD, g->t[w].name, &o);
            o->in[0] = w; o->in[1] = gr; o->in[2] = m;
            o->lr = opt->lr; o->momentum = opt->momentum; o->wd = opt->wd;
        } else {
            snprintf(name, sizeof name, "adam_m.%s", g->t[w].name);
            int m = graph_tensor(g, name, TK_STATE, DT_F32, LAYOUT_ROW, g->t[w].ndim, g->t[w].shape);
            snprintf(name, sizeof name, "adam_v.%s", g->t[w].name);
            int v = graph_tensor(g, name, TK_STATE, DT_F32, LAYOUT_ROW, g->t[w].ndim, g->t[w].shape);
            graph_op(g, OP_ADAMW, g->t[w].name, &o);
            o->in[0] = w; o->in[1] = gr; o->in[2] = m; o->in[3] = v;
            o->lr = opt->lr; o->wd = opt->wd; o->beta1 = opt->beta1;
            o->beta2 = opt->beta2; o->eps = opt->eps;
        }
    }
    if (opt->ema)
        for (int i = 0; i < nt0; i++) {
            if (g->t[i].kind != TK_PARAM && g->t[i].kind != TK_BUFFER)
                continue;
            char name[2 * GRAPH_NAME];
            op *o;
            snprintf(name, sizeof name, "ema.%s", g->t[i].name);
            int e = graph_tensor(g, name, TK_STATE, DT_F32, LAYOUT_ROW, g->t[i].ndim, g->t[i].shape);
            g->t[e].init = INIT_NONE;
            graph_op(g, OP_EMA, g->t[i].name, &o);
            o->in[0] = i;
            o->in[1] = e;
            o->momentum = opt->ema_decay;
        }
    free(a.contrib);
    return g->nops - start;
}

/* ---- ReLU backward folded into the BatchNorm backward ------------------------ */

/* Backward op ai is the OP_ACT_BWD that pass_autodiff emitted for the
 * fused ReLU of BN op fi (ad_epilogue): the index of the BN's backward that
 * follows, reading only its result (with a residual input, after the
 * OP_COPY of that result into the residual's gradient, *copy), or -1. */
static int bn_relu_pair(const graph *g, int ai, int fi, int *copy)
{
    const op *a = &g->ops[ai];
    int bi = ai + 1, only = -1, res = g->ops[fi].in[5] >= 0;
    *copy = -1;
    if (res && bi < g->nops && g->ops[bi].type == OP_COPY && g->ops[bi].fwd == fi &&
        g->ops[bi].in[0] == a->out[0])
        *copy = bi++;
    if (bi >= g->nops || a->acc || consumers(g, a->out[0], &only) != (*copy >= 0 ? 2 : 1))
        return -1;
    const op *b = &g->ops[bi];
    if (b->type != OP_BN_BWD || b->fwd != fi || b->in[0] != a->out[0] || b->act != ACT_NONE ||
        b->in[5] >= 0 || b->out[3] >= 0 || (*copy >= 0 && b->out[0] < 0))
        return -1;
    return bi;
}

int pass_bn_relu_bwd(graph *g, int fold, int *candidates)
{
    int n = 0, m = 0;
    for (int i = g->nfwd; i + 1 < g->nops; i++) {
        op *a = &g->ops[i];
        int fi = a->fwd, bi, ci;
        if (a->dead || a->type != OP_ACT_BWD || a->act != ACT_RELU || fi < 0 || fi >= g->nfwd ||
            g->ops[fi].type != OP_BN || g->ops[fi].act != ACT_RELU || g->ops[fi].out[0] != a->in[1])
            continue;
        m++;
        if (!fold || (bi = bn_relu_pair(g, i, fi, &ci)) < 0)
            continue;
        op *b = &g->ops[bi], *f = &g->ops[fi];
        g->t[a->out[0]].dead = 1;
        b->in[0] = a->in[0]; /* dy of the BN's output y = relu(pre) */
        b->act = ACT_RELU;
        if (f->in[5] < 0) {
            b->in[5] = f->in[2]; /* beta: the mask recomputed as the forward computed y */
        } else {
            b->in[5] = f->out[0]; /* y: the mask read (recomputing needs the residual) */
            if (ci >= 0) {        /* the masked dy into the residual's gradient, as the copy did */
                b->out[3] = g->ops[ci].out[0];
                b->acc |= (g->ops[ci].acc & 1) << 3;
                g->ops[ci].dead = 1;
            }
        }
        a->dead = 1;
        n++;
    }
    if (candidates)
        *candidates = m;
    pass_compact(g);
    return n;
}

/* ---- data parallelism ---------------------------------------------------------- */

/* The parameter gradients in the order they complete: order[] (returned
 * count) by done[t] = 1 + the last backward op writing t; *first_opt the
 * first optimizer op (nops when none). */
static int grads_in_completion_order(graph *g, int *done, int *order, int *first_opt)
{
    int nt0 = g->nt, nops0 = g->nops;
    *first_opt = nops0;
    for (int i = 0; i < nops0; i++) {
        const op *o = &g->ops[i];
        if ((o->type == OP_SGD || o->type == OP_ADAMW) && *first_opt == nops0)
            *first_opt = i;
        if (i < g->nfwd || o->type == OP_SGD || o->type == OP_ADAMW || o->type == OP_EMA)
            continue;
        for (int k = 0; k < GRAPH_MAX_OUT; k++) /* the last backward op writing a gradient */
            if (o->out[k] >= 0 && g->t[o->out[k]].kind == TK_PGRAD)
                done[o->out[k]] = i + 1;
    }
    int n = 0;
    for (int i = 0; i < nt0; i++)
        if (g->t[i].kind == TK_PGRAD && done[i])
            order[n++] = i;
    for (int a = 1; a < n; a++)
        for (int b = a; b > 0 && done[order[b]] < done[order[b - 1]]; b--) {
            int t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    return n;
}

/* Buckets of about bucket_bytes over grad.flat (flat; gradient a at
 * off[a] floats, total floats in all): their tensors into bucket_t[] and
 * the op after which each is complete into start_after[]. Returns the
 * number of buckets. */
static int grad_buckets(graph *g, const int *order, int n, const int64_t *off, int64_t total, int flat,
                        const int *done, size_t bucket_bytes, int *bucket_t, int *start_after)
{
    int nb = 0;
    for (int a = 0; a < n;) {
        int b = a;
        int64_t bytes = 0;
        while (b < n && (b == a || bytes < (int64_t)bucket_bytes)) {
            bytes = (off[b] - off[a]) * 4 + graph_numel(&g->t[order[b]]) * 4;
            b++;
        }
        int64_t end = b < n ? off[b] : total;
        char name[64];
        snprintf(name, sizeof name, "grad.bucket.%d", nb);
        int bt = graph_t1(g, name, TK_PGRAD, end - off[a]);
        g->t[bt].alias = flat;
        g->t[bt].offset = off[a] * 4;
        bucket_t[nb] = bt;
        start_after[nb] = done[order[b - 1]] - 1;
        nb++;
        a = b;
    }
    return nb;
}

/* The new op list: the all-reduce of each bucket after the op that completes
 * it, the waits for all of them before the first optimizer op. */
static void insert_allreduces(graph *g, int first_opt, int nb, const int *bucket_t, const int *start_after)
{
    op *old = g->ops;
    int oldn = g->nops, cap = oldn + 2 * nb + 1;
    g->ops = calloc((size_t)cap, sizeof *g->ops);
    mallocCheck(g->ops);
    g->nops = 0;
    g->capops = cap;
    for (int i = 0; i <= oldn; i++) {
        if (i == first_opt)
            for (int k = 0; k < nb; k++) {
                op *w;
                graph_op(g, OP_ALLREDUCE_WAIT, g->t[bucket_t[k]].name, &w);
                w->in[0] = bucket_t[k];
                w->bucket = k;
            }
        if (i == oldn)
            break;
        g->ops[g->nops++] = old[i];
        for (int k = 0; k < nb; k++)
            if (start_after[k] == i) {
                op *r;
                graph_op(g, OP_ALLREDUCE, g->t[bucket_t[k]].name, &r);
                r->in[0] = bucket_t[k];
                r->bucket = k;
            }
    }
    free(old);
}

int pass_data_parallel(graph *g, int ranks, size_t bucket_bytes, int sync_bn)
{
    int nt0 = g->nt, first_opt, nb = 0;
    int *done = calloc((size_t)nt0 + 1, sizeof *done), *order = calloc((size_t)nt0 + 1, sizeof *order);
    mallocCheck(done);
    mallocCheck(order);
    if (sync_bn)
        for (int i = 0; i < g->nfwd; i++)
            if (g->ops[i].type == OP_BN && g->ops[i].train)
                g->ops[i].sync = 1;
    int n = grads_in_completion_order(g, done, order, &first_opt);
    if (n == 0 || ranks < 1) {
        free(done);
        free(order);
        return 0;
    }
    /* grad.flat: each gradient at a 64-byte aligned offset */
    int64_t total = 0;
    int64_t *off = calloc((size_t)n + 1, sizeof *off);
    mallocCheck(off);
    for (int a = 0; a < n; a++) {
        off[a] = total;
        total += (graph_numel(&g->t[order[a]]) + 15) & ~(int64_t)15;
    }
    int flat = graph_t1(g, "grad.flat", TK_PGRAD, total);
    for (int a = 0; a < n; a++) {
        g->t[order[a]].alias = flat;
        g->t[order[a]].offset = off[a] * 4;
    }
    int *start_after = calloc((size_t)n + 1, sizeof *start_after), *bucket_t = calloc((size_t)n + 1, sizeof *bucket_t);
    mallocCheck(start_after);
    mallocCheck(bucket_t);
    nb = grad_buckets(g, order, n, off, total, flat, done, bucket_bytes, bucket_t, start_after);
    insert_allreduces(g, first_opt, nb, bucket_t, start_after);
    free(done);
    free(order);
    free(off);
    free(start_after);
    free(bucket_t);
    return nb;
}

/* ---- what autograd would keep ------------------------------------------------ */

int pass_saved(graph *g, char *saved)
{
    int nt0 = g->nt, nfwd = g->nfwd, n = 0;
    optim_cfg opt;
    if (g->nops != nfwd)
        BUG("pass_saved on a graph that has a backward already");
    memset(&opt, 0, sizeof opt);
    memset(saved, 0, (size_t)nt0);
    pass_autodiff(g, &opt);
    for (int i = nfwd; i < g->nops; i++)
        for (int k = 0; k < GRAPH_MAX_IN; k++) {
            int t = g->ops[i].in[k];
            if (t >= 0 && t < nt0 && g->t[t].kind == TK_ACT && !saved[t]) {
                saved[t] = 1;
                n++;
            }
        }
    /* the graph as it was: the backward, its gradients and the optimizer go */
    g->nops = nfwd;
    g->nt = nt0;
    for (int i = 0; i < nt0; i++) {
        g->t[i].grad = -1;
        g->t[i].needs_grad = 0;
    }
    return n;
}

/* ---- flash attention -------------------------------------------------------- */

int pass_flash_attention(graph *g)
{
    int n = 0;
    for (int i = 0; i < g->nfwd; i++) {
        op *o = &g->ops[i];
        if (o->dead || o->type != OP_ATTENTION)
            continue;
        tensor *p = &g->t[o->out[1]];
        if (p->ndim != 4 || p->dtype != DT_F32)
            continue;
        p->ndim = 3; /* (B, H, T, T) -> (B, H, T) */
        p->shape[3] = 0;
        p->bytes = (size_t)graph_numel(p) * graph_dtype_size(p->dtype);
        size_t len = strlen(p->name);
        if (len >= 6 && !strcmp(p->name + len - 6, ".probs"))
            strcpy(p->name + len - 6, ".lse");
        n++;
    }
    return n;
}

/* ---- mixed precision -------------------------------------------------------- */

int pass_precision(graph *g, int dt)
{
    char *keep = calloc(g->nt + 1, 1);
    int n = 0;
    mallocCheck(keep);
    for (int i = 0; i < g->nops; i++) {
        const op *o = &g->ops[i];
        switch (o->type) {
        case OP_BN:
        case OP_LAYERNORM:
            keep[o->out[1]] = keep[o->out[2]] = 1;
            break;
        case OP_DROPOUT:
            keep[o->out[1]] = 1;
            break;
        case OP_ATTENTION:
            keep[o->out[1]] = 1;
            if (o->out[2] >= 0 && g->t[o->out[1]].ndim == 4) /* flash form: keep flags, io type */
                keep[o->out[2]] = 1;
            break;
        case OP_LOGSOFTMAX:
        case OP_NLL:
            keep[o->out[0]] = 1;
            break;
        case OP_SOFTMAX_CE: /* the loss and the log-sum-exps; the logits take the io type */
            keep[o->out[0]] = keep[o->out[1]] = 1;
            break;
        default:
            break;
        }
    }
    for (int i = 0; i < g->nt; i++)
        if (keep[i] && g->t[i].grad >= 0)
            keep[g->t[i].grad] = 1;
    for (int i = 0; i < g->nt; i++) {
        tensor *t = &g->t[i];
        if ((t->kind != TK_ACT && t->kind != TK_GRAD) || t->dtype != DT_F32 || keep[i])
            continue;
        t->dtype = dt;
        t->bytes = (size_t)graph_numel(t) * graph_dtype_size(dt);
        n++;
    }
    free(keep);
    return n;
}

/* ---- memory planning ------------------------------------------------------- */

static int planned(const tensor *t)
{
    return (t->kind == TK_ACT || t->kind == TK_GRAD) && !t->dead;
}

static const graph *sort_graph;

/* qsort order: larger tensors first, then by index (deterministic). */
static int cmp_size(const void *pa, const void *pb)
{
    const graph *g = sort_graph;
    int a = *(const int *)pa, b = *(const int *)pb;
    if (g->t[a].bytes != g->t[b].bytes)
        return g->t[a].bytes < g->t[b].bytes ? 1 : -1;
    return a - b;
}

size_t pass_plan(graph *g, int reuse, const char *keep)
{
    int *list, n = 0;
    size_t arena = 0;
    for (int i = 0; i < g->nt; i++)
        g->t[i].first = g->t[i].last = -1;
    for (int i = 0; i < g->nops; i++) {
        const op *o = &g->ops[i];
        for (int k = 0; k < GRAPH_MAX_IN; k++)
            if (o->in[k] >= 0) {
                tensor *t = &g->t[o->in[k]];
                if (t->first < 0)
                    t->first = i;
                t->last = i;
            }
        for (int k = 0; k < GRAPH_MAX_OUT; k++)
            if (o->out[k] >= 0) {
                tensor *t = &g->t[o->out[k]];
                if (t->first < 0)
                    t->first = i;
                t->last = i;
            }
    }
    /* what is read after the step stays alive to its end */
    if (g->output >= 0)
        g->t[g->output].last = g->nops;
    if (g->loss >= 0)
        g->t[g->loss].last = g->nops;
    for (int i = 0; keep && i < g->nt; i++)
        if (keep[i] && g->t[i].first >= 0)
            g->t[i].last = g->nops;
    list = malloc((g->nt + 1) * sizeof *list);
    mallocCheck(list);
    for (int i = 0; i < g->nt; i++) {
        if (!planned(&g->t[i]))
            continue;
        if (g->t[i].first < 0) {
            g->t[i].dead = 1;
            continue;
        }
        list[n++] = i;
    }
    sort_graph = g;
    qsort(list, n, sizeof *list, cmp_size);
    for (int a = 0; a < n; a++) {
        tensor *t = &g->t[list[a]];
        size_t sz = (t->bytes + 63) & ~(size_t)63;
        if (!reuse) {
            t->offset = arena;
            arena += sz;
            continue;
        }
        /* lowest offset that fits between the placed tensors whose lifetime
         * overlaps this one (placed ones are sorted by offset on the fly) */
        size_t off = 0;
        int moved = 1;
        while (moved) {
            moved = 0;
            for (int b = 0; b < a; b++) {
                const tensor *u = &g->t[list[b]];
                size_t usz = (u->bytes + 63) & ~(size_t)63;
                if (u->first > t->last || t->first > u->last)
                    continue;
                if (off < (size_t)u->offset + usz && (size_t)u->offset < off + sz) {
                    off = u->offset + usz;
                    moved = 1;
                }
            }
        }
        t->offset = off;
        if (off + sz > arena)
            arena = off + sz;
    }
    free(list);
    return arena;
}
