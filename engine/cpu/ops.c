/* ops.c - every op of the graph on the CPU, in plain C, parallel over the
 * pool. Convolution is in conv.c, GEMM in gemm.c. Each kernel honours the
 * op's acc bits: bit k set means "add into out[k]" (gradient accumulation),
 * clear means "overwrite". */
#include "config.h"
#include "cpu.h"
#include "pool.h"
#include "../backend.h"
#include "../check.h"
#include "../comm.h"
#include "../rng.h"

#include <math.h>
#include <string.h>

#define TF(g, i) ((float *)(g)->t[(i)].data)
#define TI(g, i) ((int32_t *)(g)->t[(i)].data)
#define ACC(o, k) (((o)->acc >> (k)) & 1)
#define NUMEL(g, i) graph_numel(&(g)->t[(i)])

void cpu_conv(graph *g, op *o);
void cpu_conv_bwd(graph *g, op *o);
size_t cpu_conv_workspace(const graph *g, const op *o);
size_t cpu_conv_saved(const graph *g, const op *o);

size_t cpu_op_saved(const graph *g, const op *fwd)
{
    return fwd->type == OP_CONV ? cpu_conv_saved(g, fwd) : 0;
}

/* ---- a parallel for over [0, n) with a closure -------------------------- */

typedef void (*range_fn)(graph *g, op *o, long lo, long hi, int tid);
struct range_ctx { graph *g; op *o; long n; range_fn fn; };

static void range_run(void *p, int tid, int nt)
{
    struct range_ctx *c = p;
    long lo, hi;
    pool_range(c->n, tid, nt, &lo, &hi);
    if (lo < hi)
        c->fn(c->g, c->o, lo, hi, tid);
}

/* Run fn over [0, n) split across the pool; inline when work (elements
 * touched) is small enough that a dispatch would cost more than it saves. */
static void par_range(graph *g, op *o, long n, long work, range_fn fn)
{
    struct range_ctx c = {g, o, n, fn};
    if (pool_threads() == 1 || work < 16384 || n < 2) {
        fn(g, o, 0, n, 0);
        return;
    }
    pool_run(range_run, &c);
}

/* N, C, spatial size and layout of a 4-D (or 2-D: N, C) tensor. */
static void dims(const tensor *t, long *N, long *C, long *P, int *nhwc)
{
    *N = t->shape[0];
    *C = t->ndim > 1 ? t->shape[1] : 1;
    *P = t->ndim == 4 ? t->shape[2] * t->shape[3] : 1;
    *nhwc = t->layout == LAYOUT_NHWC;
}

/* ---- activation ----------------------------------------------------------- */

static void act_range(graph *g, op *o, long lo, long hi, int tid)
{
    const float *x = TF(g, o->in[0]);
    float *y = TF(g, o->out[0]);
    if (o->act == ACT_RELU)
        for (long i = lo; i < hi; i++)
            y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    else
        for (long i = lo; i < hi; i++)
            y[i] = cpu_act(o->act, x[i]);
}

static void cpu_act_fwd(graph *g, op *o)
{
    long n = NUMEL(g, o->in[0]);
    par_range(g, o, n, n * (o->act == ACT_RELU ? 1 : 16), act_range);
}

/* in[1] is the output y for relu / tanh and the input x for the GELUs. */
static void act_bwd_range(graph *g, op *o, long lo, long hi, int tid)
{
    const float *dy = TF(g, o->in[0]), *v = TF(g, o->in[1]);
    float *dx = TF(g, o->out[0]);
    int acc = ACC(o, 0);
    if (o->act == ACT_RELU) {
        if (acc)
            for (long i = lo; i < hi; i++)
                dx[i] += v[i] > 0.0f ? dy[i] : 0.0f;
        else
            for (long i = lo; i < hi; i++)
                dx[i] = v[i] > 0.0f ? dy[i] : 0.0f;
        return;
    }
    for (long i = lo; i < hi; i++) {
        float d;
        switch (o->act) {
        case ACT_RELU: d = v[i] > 0.0f ? dy[i] : 0.0f; break;
        case ACT_TANH: d = dy[i] * (1.0f - v[i] * v[i]); break;
        case ACT_GELU: {
            float x = v[i];
            float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
            float pdf = 0.39894228040143268f * expf(-0.5f * x * x);
            d = dy[i] * (cdf + x * pdf);
            break;
        }
        case ACT_GELU_TANH: {
            float x = v[i], t = tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x));
            d = dy[i] * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * 0.79788456080286536f *
                                                 (1.0f + 3.0f * 0.044715f * x * x));
            break;
        }
        default: d = dy[i];
        }
        dx[i] = acc ? dx[i] + d : d;
    }
}

static void cpu_act_bwd(graph *g, op *o)
{
    long n = NUMEL(g, o->in[0]);
    par_range(g, o, n, n * (o->act == ACT_RELU ? 1 : 16), act_bwd_range);
}

/* ---- add, copy ------------------------------------------------------------ */

static void add_range(graph *g, op *o, long lo, long hi, int tid)
{
    const float *a = TF(g, o->in[0]), *b = TF(g, o->in[1]);
    float *y = TF(g, o->out[0]);
    for (long i = lo; i < hi; i++)
        y[i] = (ACC(o, 0) ? y[i] : 0.0f) + a[i] + b[i];
}

static void cpu_add(graph *g, op *o)
{
    long n = NUMEL(g, o->out[0]);
    par_range(g, o, n, n, add_range);
}

static void copy_range(graph *g, op *o, long lo, long hi, int tid)
{
    const float *x = TF(g, o->in[0]);
    float *y = TF(g, o->out[0]);
    if (ACC(o, 0))
        for (long i = lo; i < hi; i++)
            y[i] += x[i];
    else
        memcpy(y + lo, x + lo, (hi - lo) * sizeof(float));
}

static void cpu_copy(graph *g, op *o)
{
    long n = NUMEL(g, o->out[0]);
    par_range(g, o, n, n, copy_range);
}

/* ---- batch normalisation ---------------------------------------------------
 * Statistics per channel over N and the spatial positions, in double. Train:
 * batch statistics (biased variance for normalising, unbiased for the running
 * variance, running = (1 - momentum) running + momentum batch, as PyTorch).
 * Eval: running statistics. out[1], out[2] receive the mean and 1/std used. */

/* The backward's, with the ReLU folded in (pass_bn_relu_bwd): the
 * forward's y for the mask (Y) or its scale and shift (SC, SH), and the
 * residual's gradient (R); NULL without. */
struct bn_ctx {
    graph *g;
    op *o;
    double *part;
    long N, C, P;
    int nhwc;
    const float *Y, *SC, *SH;
    float *R;
};

/* The forward's per-channel scale and shift, and its pre-activation x sc +
 * sh: one expression each, used by the forward and by a backward with the
 * ReLU folded in (pass_bn_relu_bwd) to recompute y > 0, so the two cannot
 * be compiled into different arithmetic (-std=c11: no contraction in GCC;
 * clang contracts within one expression, the same one in both). */
static inline void bn_coef(float gam, float bet, float mean, float inv, float *sc, float *sh)
{
    *sc = gam * inv;
    *sh = bet - mean * *sc;
}

static inline float bn_pre(float v, float sc, float sh)
{
    return v * sc + sh;
}

/* dy masked by the fused ReLU's y > 0 (y = relu(pre): y > 0 iff pre > 0),
 * as cpu_act_bwd gives it: the same value, or +0. */
static inline float bn_relu_dy(float d, float v, float sc, float sh)
{
    return bn_pre(v, sc, sh) > 0.0f ? d : 0.0f;
}

static void bn_stats_run(void *p, int tid, int nt)
{
    struct bn_ctx *b = p;
    const float *x = TF(b->g, b->o->in[0]);
    double *s = b->part + (size_t)tid * 2 * b->C, *ss = s + b->C;
    long lo, hi;
    memset(s, 0, 2 * b->C * sizeof(double));
    if (!b->nhwc) {
        pool_range(b->N * b->C, tid, nt, &lo, &hi);
        for (long nc = lo; nc < hi; nc++) {
            const float *v = x + nc * b->P;
            float a = 0.0f, a2 = 0.0f;
            for (long q = 0; q < b->P; q++) {
                a += v[q];
                a2 += v[q] * v[q];
            }
            s[nc % b->C] += a;
            ss[nc % b->C] += a2;
        }
    } else {
        pool_range(b->N * b->P, tid, nt, &lo, &hi);
        for (long r = lo; r < hi; r++) {
            const float *v = x + r * b->C;
            for (long c = 0; c < b->C; c++) {
                s[c] += v[c];
                ss[c] += (double)v[c] * v[c];
            }
        }
    }
}

static void bn_apply_run(void *p, int tid, int nt)
{
    struct bn_ctx *b = p;
    graph *g = b->g;
    op *o = b->o;
    const float *x = TF(g, o->in[0]), *gam = TF(g, o->in[1]), *bet = TF(g, o->in[2]);
    const float *res = o->in[5] >= 0 ? TF(g, o->in[5]) : NULL;
    const float *mean = TF(g, o->out[1]), *inv = TF(g, o->out[2]);
    float *y = TF(g, o->out[0]);
    long lo, hi;
    if (!b->nhwc) {
        pool_range(b->N * b->C, tid, nt, &lo, &hi);
        for (long nc = lo; nc < hi; nc++) {
            long c = nc % b->C;
            float sc, sh;
            bn_coef(gam[c], bet[c], mean[c], inv[c], &sc, &sh);
            const float *v = x + nc * b->P;
            const float *r = res ? res + nc * b->P : NULL;
            float *w = y + nc * b->P;
            for (long q = 0; q < b->P; q++)
                w[q] = bn_pre(v[q], sc, sh);
            if (r)
                for (long q = 0; q < b->P; q++)
                    w[q] += r[q];
            cpu_act_row(o->act, w, b->P);
        }
    } else {
        float *sc = (float *)(b->part + (size_t)nt * 2 * b->C), *sh = sc + b->C;
        pool_range(b->N * b->P, tid, nt, &lo, &hi);
        for (long r = lo; r < hi; r++) {
            const float *v = x + r * b->C;
            const float *rr = res ? res + r * b->C : NULL;
            float *w = y + r * b->C;
            for (long c = 0; c < b->C; c++)
                w[c] = bn_pre(v[c], sc[c], sh[c]);
            if (rr)
                for (long c = 0; c < b->C; c++)
                    w[c] += rr[c];
            cpu_act_row(o->act, w, b->C);
        }
    }
}

static void bn_geometry(graph *g, op *o, struct bn_ctx *b, int xin)
{
    int nhwc;
    b->g = g;
    b->o = o;
    dims(&g->t[o->in[xin]], &b->N, &b->C, &b->P, &nhwc);
    b->nhwc = nhwc;
    b->part = backend_ws;
    b->Y = b->SC = b->SH = NULL;
    b->R = NULL;
}

static void cpu_bn(graph *g, op *o)
{
    struct bn_ctx b;
    int nt = pool_threads();
    bn_geometry(g, o, &b, 0);
    float *gam = TF(g, o->in[1]), *bet = TF(g, o->in[2]);
    float *rm = TF(g, o->in[3]), *rv = TF(g, o->in[4]);
    float *mean = TF(g, o->out[1]), *inv = TF(g, o->out[2]);
    if (o->train) {
        double cnt = (double)b.N * b.P;
        pool_run(bn_stats_run, &b);
        /* thread partials into part[0 .. 2C) */
        for (long c = 0; c < b.C; c++) {
            double s = 0, ss = 0;
            for (int t = 0; t < nt; t++) {
                s += b.part[(size_t)t * 2 * b.C + c];
                ss += b.part[(size_t)t * 2 * b.C + b.C + c];
            }
            b.part[c] = s;
            b.part[b.C + c] = ss;
        }
        if (o->sync && engine_comm) { /* SyncBN: sums and count over every rank */
            if (engine_comm->allreduce(b.part, 2 * (size_t)b.C, COMM_F64, COMM_SUM))
                BUG("SyncBN: the all-reduce of '%s' failed", o->name);
            cnt *= engine_comm->size;
        }
        for (long c = 0; c < b.C; c++) {
            double s = b.part[c], ss = b.part[b.C + c];
            double m = s / cnt, var = ss / cnt - m * m;
            if (var < 0)
                var = 0;
            mean[c] = m;
            inv[c] = 1.0 / sqrt(var + o->eps);
            rm[c] = (1.0 - o->momentum) * rm[c] + o->momentum * m;
            rv[c] = (1.0 - o->momentum) * rv[c] +
                    o->momentum * var * (cnt > 1 ? cnt / (cnt - 1) : 1.0);
        }
    } else
        for (long c = 0; c < b.C; c++) {
            mean[c] = rm[c];
            inv[c] = 1.0 / sqrt((double)rv[c] + o->eps);
        }
    if (b.nhwc) {
        float *sc = (float *)(b.part + (size_t)nt * 2 * b.C), *sh = sc + b.C;
        for (long c = 0; c < b.C; c++)
            bn_coef(gam[c], bet[c], mean[c], inv[c], &sc[c], &sh[c]);
    }
    pool_run(bn_apply_run, &b);
}

/* dy at element i (channel c) as the batchnorm backward uses it: with the
 * ReLU folded in (pass_bn_relu_bwd), masked as cpu_act_bwd masks it, by the
 * forward's y read (Y: a BN with a residual input) or recomputed (SC, SH). */
static inline float bn_dy_at(const struct bn_ctx *b, const float *dy, const float *x, long i, long c)
{
    if (b->Y)
        return b->Y[i] > 0.0f ? dy[i] : 0.0f;
    if (b->SC)
        return bn_relu_dy(dy[i], x[i], b->SC[c], b->SH[c]);
    return dy[i];
}

/* Sums per channel of dy and dy * xhat into part (per thread), dy as
 * bn_dy_at gives it. */
static void bn_bwd_sums_run(void *p, int tid, int nt)
{
    struct bn_ctx *b = p;
    graph *g = b->g;
    op *o = b->o;
    const float *dy = TF(g, o->in[0]), *x = TF(g, o->in[1]);
    const float *mean = TF(g, o->in[3]), *inv = TF(g, o->in[4]);
    int masked = b->Y || b->SC;
    double *s = b->part + (size_t)tid * 2 * b->C, *sx = s + b->C;
    long lo, hi;
    memset(s, 0, 2 * b->C * sizeof(double));
    if (!b->nhwc) {
        pool_range(b->N * b->C, tid, nt, &lo, &hi);
        for (long nc = lo; nc < hi; nc++) {
            long c = nc % b->C;
            const float *d = dy + nc * b->P, *v = x + nc * b->P;
            float a = 0.0f, ax = 0.0f, m = mean[c];
            if (masked)
                for (long q = 0; q < b->P; q++) {
                    float dq = bn_dy_at(b, dy, x, nc * b->P + q, c);
                    a += dq;
                    ax += dq * (v[q] - m);
                }
            else
                for (long q = 0; q < b->P; q++) {
                    a += d[q];
                    ax += d[q] * (v[q] - m);
                }
            s[c] += a;
            sx[c] += ax * inv[c];
        }
    } else {
        pool_range(b->N * b->P, tid, nt, &lo, &hi);
        for (long r = lo; r < hi; r++) {
            const float *v = x + r * b->C;
            for (long c = 0; c < b->C; c++) {
                float dc = bn_dy_at(b, dy, x, r * b->C + c, c);
                s[c] += dc;
                sx[c] += dc * (v[c] - mean[c]) * inv[c];
            }
        }
    }
}

/* dx (+)= A dy + B1 (x - mean) + B0; with a residual input, the masked dy
 * into its gradient R as well ((+)=, as the OP_COPY it replaces). */
static void bn_bwd_dx_run(void *p, int tid, int nt)
{
    struct bn_ctx *b = p;
    graph *g = b->g;
    op *o = b->o;
    const float *dy = TF(g, o->in[0]), *x = TF(g, o->in[1]);
    const float *mean = TF(g, o->in[3]);
    float *dx = TF(g, o->out[0]), *R = b->R;
    /* per channel: dx = a * dy + c1 * (x - mean) + c0 */
    const float *A = (const float *)(b->part + (size_t)nt * 2 * b->C);
    const float *B1 = A + b->C, *B0 = B1 + b->C;
    int acc = ACC(o, 0), racc = ACC(o, 3);
    long lo, hi, n = b->nhwc ? b->C : b->P;
    pool_range(b->nhwc ? b->N * b->P : b->N * b->C, tid, nt, &lo, &hi);
    for (long r = lo; r < hi; r++) {
        long cr = b->nhwc ? 0 : r % b->C; /* NCHW: row r is plane (n, c) */
        for (long q = 0; q < n; q++) {
            long i = r * n + q, c = b->nhwc ? q : cr;
            float dq = bn_dy_at(b, dy, x, i, c);
            float t = A[c] * dq + B1[c] * (x[i] - mean[c]) + B0[c];
            dx[i] = acc ? dx[i] + t : t;
            if (R)
                R[i] = racc ? R[i] + dq : dq;
        }
    }
}

static void cpu_bn_bwd(graph *g, op *o)
{
    struct bn_ctx b;
    int nt = pool_threads();
    bn_geometry(g, o, &b, 1);
    const float *gam = TF(g, o->in[2]), *inv = TF(g, o->in[4]);
    float *dg = TF(g, o->out[1]), *dbt = TF(g, o->out[2]);
    double cnt = (double)b.N * b.P;
    if (o->act != ACT_NONE && (o->act != ACT_RELU || o->in[5] < 0 || o->fwd < 0))
        BUG("batchnorm backward '%s' with an activation other than ReLU folded in", o->name);
    if (o->act == ACT_RELU && o->in[5] == g->ops[o->fwd].out[0]) { /* the mask from y */
        b.Y = TF(g, o->in[5]);
        b.R = o->out[3] >= 0 ? TF(g, o->out[3]) : NULL;
    } else if (o->act == ACT_RELU) { /* from the forward's coefficients, after A, B1, B0 */
        float *sc = (float *)(b.part + (size_t)nt * 2 * b.C) + 4 * b.C, *sh = sc + b.C;
        const float *bet = TF(g, o->in[5]), *mean = TF(g, o->in[3]);
        for (long c = 0; c < b.C; c++)
            bn_coef(gam[c], bet[c], mean[c], inv[c], &sc[c], &sh[c]);
        b.SC = sc;
        b.SH = sh;
    }
    pool_run(bn_bwd_sums_run, &b);
    float *A = (float *)(b.part + (size_t)nt * 2 * b.C), *B1 = A + b.C, *B0 = B1 + b.C;
    /* thread partials into part[0 .. 2C): this rank's sums of dy, dy xhat */
    for (long c = 0; c < b.C; c++) {
        double s = 0, sx = 0;
        for (int t = 0; t < nt; t++) {
            s += b.part[(size_t)t * 2 * b.C + c];
            sx += b.part[(size_t)t * 2 * b.C + b.C + c];
        }
        b.part[c] = s;
        b.part[b.C + c] = sx;
        /* dgamma, dbeta: this rank's (the data-parallel mean follows) */
        dg[c] = (ACC(o, 1) ? dg[c] : 0.0f) + sx;
        dbt[c] = (ACC(o, 2) ? dbt[c] : 0.0f) + s;
    }
    int fwd_sync = o->fwd >= 0 && g->ops[o->fwd].sync;
    if (fwd_sync && engine_comm) { /* SyncBN: dx from the sums over every rank */
        if (engine_comm->allreduce(b.part, 2 * (size_t)b.C, COMM_F64, COMM_SUM))
            BUG("SyncBN: the all-reduce of '%s' failed", o->name);
        cnt *= engine_comm->size;
    }
    for (long c = 0; c < b.C; c++) {
        double s = b.part[c], sx = b.part[b.C + c];
        double k = gam[c] * inv[c];
        if (o->train) {
            /* dx = k (dy - s/cnt - xhat sx/cnt), xhat = (x - mean) inv */
            A[c] = k;
            B1[c] = -k * inv[c] * sx / cnt;
            B0[c] = -k * s / cnt;
        } else {
            A[c] = k;
            B1[c] = 0.0f;
            B0[c] = 0.0f;
        }
    }
    if (o->out[0] >= 0)
        pool_run(bn_bwd_dx_run, &b);
    else if (b.R)
        BUG("batchnorm backward '%s' writes a residual's gradient without dx", o->name);
}

/* ---- pooling -------------------------------------------------------------- */

struct pool_geo { long N, C, H, W, OH, OW; int nhwc; };

static struct pool_geo pool_geometry(graph *g, int xi, int yi)
{
    const tensor *x = &g->t[xi], *y = &g->t[yi];
    struct pool_geo p = {x->shape[0], x->shape[1], x->shape[2], x->shape[3],
                         y->shape[2], y->shape[3], x->layout == LAYOUT_NHWC};
    return p;
}

/* NCHW planes [lo, hi), 2x2 windows with stride 2, all inside: no bounds
 * tests. */
static void maxpool_2x2_nchw(const struct pool_geo *p, const float *x, float *y, int32_t *idx, int relu,
                             long lo, long hi)
{
    for (long nc = lo; nc < hi; nc++) {
        const float *xp = x + nc * p->H * p->W;
        float *yp = y + nc * p->OH * p->OW;
        int32_t *ip = idx + nc * p->OH * p->OW;
        for (long oh = 0; oh < p->OH; oh++) {
            const float *r0 = xp + 2 * oh * p->W, *r1 = r0 + p->W;
            for (long ow = 0; ow < p->OW; ow++) {
                float a = r0[2 * ow], b = r0[2 * ow + 1], c = r1[2 * ow], d = r1[2 * ow + 1];
                int32_t base = 2 * oh * p->W + 2 * ow, ia = base, ic = base + p->W;
                if (b > a) { a = b; ia = base + 1; }
                if (d > c) { c = d; ic = base + p->W + 1; }
                if (c > a) { a = c; ia = ic; }
                yp[oh * p->OW + ow] = relu && a < 0.0f ? 0.0f : a;
                ip[oh * p->OW + ow] = ia;
            }
        }
    }
}

/* NCHW planes [lo, hi), any window. */
static void maxpool_nchw(const struct pool_geo *p, const op *o, const float *x, float *y, int32_t *idx,
                         int relu, long lo, long hi)
{
    for (long nc = lo; nc < hi; nc++) { /* planes */
        const float *xp = x + nc * p->H * p->W;
        float *yp = y + nc * p->OH * p->OW;
        int32_t *ip = idx + nc * p->OH * p->OW;
        for (long oh = 0; oh < p->OH; oh++) {
            long ih0 = oh * o->stride - o->pad;
            int i0 = ih0 < 0 ? -ih0 : 0, i1 = ih0 + o->kh > p->H ? p->H - ih0 : o->kh;
            for (long ow = 0; ow < p->OW; ow++) {
                long iw0 = ow * o->stride - o->pad;
                int j0 = iw0 < 0 ? -iw0 : 0, j1 = iw0 + o->kw > p->W ? p->W - iw0 : o->kw;
                float m = -INFINITY;
                int32_t mi = (ih0 + i0) * p->W + iw0 + j0;
                for (int i = i0; i < i1; i++) {
                    const float *row = xp + (ih0 + i) * p->W + iw0;
                    for (int j = j0; j < j1; j++)
                        if (row[j] > m) {
                            m = row[j];
                            mi = (ih0 + i) * p->W + iw0 + j;
                        }
                }
                yp[oh * p->OW + ow] = relu && m < 0.0f ? 0.0f : m;
                ip[oh * p->OW + ow] = mi;
            }
        }
    }
}

/* NHWC output rows [lo, hi) (n * OH + oh), any window. */
static void maxpool_nhwc(const struct pool_geo *p, const op *o, const float *x, float *y, int32_t *idx,
                         int relu, long lo, long hi)
{
    for (long noh = lo; noh < hi; noh++) { /* output rows */
        long n = noh / p->OH, oh = noh % p->OH;
        for (long ow = 0; ow < p->OW; ow++) {
            float *yp = y + ((n * p->OH + oh) * p->OW + ow) * p->C;
            int32_t *ip = idx + ((n * p->OH + oh) * p->OW + ow) * p->C;
            for (long c = 0; c < p->C; c++) {
                yp[c] = -INFINITY;
                ip[c] = 0;
            }
            for (int i = 0; i < o->kh; i++) {
                long ih = oh * o->stride - o->pad + i;
                if (ih < 0 || ih >= p->H)
                    continue;
                for (int j = 0; j < o->kw; j++) {
                    long iw = ow * o->stride - o->pad + j;
                    if (iw < 0 || iw >= p->W)
                        continue;
                    const float *xp = x + ((n * p->H + ih) * p->W + iw) * p->C;
                    int32_t pos = ih * p->W + iw;
                    for (long c = 0; c < p->C; c++)
                        if (xp[c] > yp[c]) {
                            yp[c] = xp[c];
                            ip[c] = pos;
                        }
                }
            }
            if (relu)
                for (long c = 0; c < p->C; c++)
                    if (yp[c] < 0.0f)
                        yp[c] = 0.0f;
        }
    }
}

/* idx holds the input position ih * W + iw of each output's maximum. */
static void maxpool_range(graph *g, op *o, long lo, long hi, int tid)
{
    struct pool_geo p = pool_geometry(g, o->in[0], o->out[0]);
    const float *x = TF(g, o->in[0]);
    float *y = TF(g, o->out[0]);
    int32_t *idx = TI(g, o->out[1]);
    int relu = o->act == ACT_RELU;
    if (!p.nhwc && o->kh == 2 && o->kw == 2 && o->stride == 2 && o->pad == 0)
        maxpool_2x2_nchw(&p, x, y, idx, relu, lo, hi);
    else if (!p.nhwc)
        maxpool_nchw(&p, o, x, y, idx, relu, lo, hi);
    else
        maxpool_nhwc(&p, o, x, y, idx, relu, lo, hi);
}

static void cpu_maxpool(graph *g, op *o)
{
    struct pool_geo p = pool_geometry(g, o->in[0], o->out[0]);
    long n = p.nhwc ? p.N * p.OH : p.N * p.C;
    par_range(g, o, n, NUMEL(g, o->in[0]), maxpool_range);
}

static void maxpool_bwd_range(graph *g, op *o, long lo, long hi, int tid)
{
    struct pool_geo p = pool_geometry(g, o->out[0], o->in[0]);
    const float *dy = TF(g, o->in[0]);
    const int32_t *idx = TI(g, o->in[1]);
    float *dx = TF(g, o->out[0]);
    long HW = p.H * p.W, OHW = p.OH * p.OW;
    if (!p.nhwc) {
        for (long nc = lo; nc < hi; nc++) {
            float *d = dx + nc * HW;
            if (!ACC(o, 0))
                memset(d, 0, HW * sizeof(float));
            for (long q = 0; q < OHW; q++)
                d[idx[nc * OHW + q]] += dy[nc * OHW + q];
        }
    } else {
        for (long n = lo; n < hi; n++) {
            float *d = dx + n * HW * p.C;
            if (!ACC(o, 0))
                memset(d, 0, HW * p.C * sizeof(float));
            for (long q = 0; q < OHW; q++) {
                const float *s = dy + (n * OHW + q) * p.C;
                const int32_t *ip = idx + (n * OHW + q) * p.C;
                for (long c = 0; c < p.C; c++)
                    d[(long)ip[c] * p.C + c] += s[c];
            }
        }
    }
}

static void cpu_maxpool_bwd(graph *g, op *o)
{
    struct pool_geo p = pool_geometry(g, o->out[0], o->in[0]);
    par_range(g, o, p.nhwc ? p.N : p.N * p.C, NUMEL(g, o->out[0]), maxpool_bwd_range);
}

/* Global average pooling: (N, C, H, W) -> (N, C). */
static void avgpool_range(graph *g, op *o, long lo, long hi, int tid)
{
    long N, C, P;
    int nhwc;
    dims(&g->t[o->in[0]], &N, &C, &P, &nhwc);
    const float *x = TF(g, o->in[0]);
    float *y = TF(g, o->out[0]);
    for (long n = lo; n < hi; n++) {
        float *yn = y + n * C;
        if (!nhwc)
            for (long c = 0; c < C; c++) {
                float s = 0.0f;
                for (long q = 0; q < P; q++)
                    s += x[(n * C + c) * P + q];
                yn[c] = s / P;
            }
        else {
            for (long c = 0; c < C; c++)
                yn[c] = 0.0f;
            for (long q = 0; q < P; q++)
                for (long c = 0; c < C; c++)
                    yn[c] += x[(n * P + q) * C + c];
            for (long c = 0; c < C; c++)
                yn[c] /= P;
        }
    }
}

static void cpu_avgpool(graph *g, op *o)
{
    par_range(g, o, g->t[o->in[0]].shape[0], NUMEL(g, o->in[0]), avgpool_range);
}

static void avgpool_bwd_range(graph *g, op *o, long lo, long hi, int tid)
{
    long N, C, P;
    int nhwc;
    dims(&g->t[o->out[0]], &N, &C, &P, &nhwc);
    const float *dy = TF(g, o->in[0]);
    float *dx = TF(g, o->out[0]);
    int acc = ACC(o, 0);
    for (long n = lo; n < hi; n++)
        for (long c = 0; c < C; c++) {
            float v = dy[n * C + c] / P;
            for (long q = 0; q < P; q++) {
                float *d = nhwc ? &dx[(n * P + q) * C + c] : &dx[(n * C + c) * P + q];
                *d = acc ? *d + v : v;
            }
        }
}

static void cpu_avgpool_bwd(graph *g, op *o)
{
    par_range(g, o, g->t[o->out[0]].shape[0], NUMEL(g, o->out[0]), avgpool_bwd_range);
}

/* ---- flatten: (N, C, H, W) -> (N, C*H*W) in PyTorch's (c, h, w) order ----- */

static void flatten_copy(graph *g, int xi, int yi, int backward, int acc)
{
    const tensor *t4 = &g->t[backward ? yi : xi];
    long N, C, P;
    int nhwc;
    dims(t4, &N, &C, &P, &nhwc);
    const float *x = TF(g, xi);
    float *y = TF(g, yi);
    for (long n = 0; n < N; n++)
        for (long c = 0; c < C; c++)
            for (long q = 0; q < P; q++) {
                long flat = (n * C + c) * P + q;
                long lay = nhwc ? (n * P + q) * C + c : flat;
                if (!backward)
                    y[flat] = x[lay];
                else
                    y[lay] = acc ? y[lay] + x[flat] : x[flat];
            }
}

static void cpu_flatten(graph *g, op *o) { flatten_copy(g, o->in[0], o->out[0], 0, 0); }
static void cpu_flatten_bwd(graph *g, op *o) { flatten_copy(g, o->in[0], o->out[0], 1, ACC(o, 0)); }

/* ---- linear: y (M, N) = x (M, K) w^T (K, N) + b ----------------------------- */

static void cpu_linear(graph *g, op *o)
{
    const tensor *x = &g->t[o->in[0]], *w = &g->t[o->in[1]];
    int N = w->shape[0], K = w->shape[1], M = graph_numel(x) / K;
    cpu_epi e = {o->in[2] >= 0 ? TF(g, o->in[2]) : NULL, 1,
                 o->in[3] >= 0 ? TF(g, o->in[3]) : NULL, N, o->act,
                 o->out[1] >= 0 ? TF(g, o->out[1]) : NULL, N};
    cpu_par_gemm(0, 1, M, N, K, 1.0f, TF(g, o->in[0]), K, TF(g, o->in[1]), K, 0.0f,
                 TF(g, o->out[0]), N, &e);
}

static void colsum_range(graph *g, op *o, long lo, long hi, int tid)
{
    const tensor *w = &g->t[o->in[2]];
    long N = w->shape[0], M = NUMEL(g, o->in[0]) / N;
    const float *dy = TF(g, o->in[0]);
    float *db = TF(g, o->out[2]);
    for (long j = lo; j < hi; j++) {
        float s = ACC(o, 2) ? db[j] : 0.0f;
        for (long i = 0; i < M; i++)
            s += dy[i * N + j];
        db[j] = s;
    }
}

static void cpu_linear_bwd(graph *g, op *o)
{
    const tensor *w = &g->t[o->in[2]];
    int N = w->shape[0], K = w->shape[1], M = NUMEL(g, o->in[0]) / N;
    const float *dy = TF(g, o->in[0]);
    if (o->out[0] >= 0)
        cpu_par_gemm(0, 0, M, K, N, 1.0f, dy, N, TF(g, o->in[2]), K,
                     ACC(o, 0) ? 1.0f : 0.0f, TF(g, o->out[0]), K, NULL);
    cpu_par_gemm(1, 0, N, K, M, 1.0f, dy, N, TF(g, o->in[1]), K,
                 ACC(o, 1) ? 1.0f : 0.0f, TF(g, o->out[1]), K, NULL);
    if (o->out[2] >= 0)
        par_range(g, o, N, (long)M * N, colsum_range);
}

/* ---- dropout ----------------------------------------------------------------
 * mask holds 0 or 1/(1-p) per element (per (n, c) for dropout2d), drawn from
 * a counter-based generator keyed by (op seed, step, index), so a run is
 * reproducible and the draw parallel. */

/* mask[lo, hi) of op o's stream: 0 where dropped, else keep. */
static void draw_mask(const graph *g, const op *o, float *mask, float keep, long lo, long hi)
{
    uint64_t key = rng_mix(o->seed ^ ((uint64_t)g->step << 40));
    for (long i = lo; i < hi; i++)
        mask[i] = rng_uniform(key, (uint64_t)i) < o->p ? 0.0f : keep;
}

static void dropout_mask_range(graph *g, op *o, long lo, long hi, int tid)
{
    draw_mask(g, o, TF(g, o->out[1]), 1.0f / (1.0f - o->p), lo, hi);
}

static void dropout_apply_range(graph *g, op *o, long lo, long hi, int tid)
{
    const tensor *xt = &g->t[o->in[0]];
    const float *x = TF(g, o->in[0]), *mask = TF(g, o->out[1]);
    float *y = TF(g, o->out[0]);
    if (!o->channel) {
        for (long i = lo; i < hi; i++)
            y[i] = x[i] * mask[i];
        return;
    }
    long N, C, P;
    int nhwc;
    dims(xt, &N, &C, &P, &nhwc);
    /* [lo, hi) are samples here */
    for (long n = lo; n < hi; n++)
        if (!nhwc)
            for (long c = 0; c < C; c++) {
                float m = mask[n * C + c];
                const float *a = x + (n * C + c) * P;
                float *b = y + (n * C + c) * P;
                for (long q = 0; q < P; q++)
                    b[q] = a[q] * m;
            }
        else
            for (long q = 0; q < P; q++) {
                const float *a = x + (n * P + q) * C, *m = mask + n * C;
                float *b = y + (n * P + q) * C;
                for (long c = 0; c < C; c++)
                    b[c] = a[c] * m[c];
            }
}

static void cpu_dropout(graph *g, op *o)
{
    long n = NUMEL(g, o->out[1]), m = NUMEL(g, o->in[0]);
    par_range(g, o, n, n * 4, dropout_mask_range);
    par_range(g, o, o->channel ? g->t[o->in[0]].shape[0] : m, m, dropout_apply_range);
}

static void dropout_bwd_range(graph *g, op *o, long lo, long hi, int tid)
{
    const tensor *xt = &g->t[o->out[0]];
    const float *dy = TF(g, o->in[0]), *mask = TF(g, o->in[1]);
    float *dx = TF(g, o->out[0]);
    int acc = ACC(o, 0);
    if (!o->channel) {
        for (long i = lo; i < hi; i++)
            dx[i] = (acc ? dx[i] : 0.0f) + dy[i] * mask[i];
        return;
    }
    long N, C, P;
    int nhwc;
    dims(xt, &N, &C, &P, &nhwc);
    for (long n = lo; n < hi; n++) /* samples */
        for (long c = 0; c < C; c++)
            for (long q = 0; q < P; q++) {
                long i = nhwc ? (n * P + q) * C + c : (n * C + c) * P + q;
                dx[i] = (acc ? dx[i] : 0.0f) + dy[i] * mask[n * C + c];
            }
}

static void cpu_dropout_bwd(graph *g, op *o)
{
    long n = NUMEL(g, o->out[0]);
    par_range(g, o, o->channel ? g->t[o->out[0]].shape[0] : n, n, dropout_bwd_range);
}

/* ---- log-softmax and negative log-likelihood (mean over rows) -------------- */

static void cpu_logsoftmax(graph *g, op *o)
{
    const tensor *x = &g->t[o->in[0]];
    long N = x->shape[x->ndim - 1], M = graph_numel(x) / N;
    const float *in = TF(g, o->in[0]);
    float *y = TF(g, o->out[0]);
    for (long i = 0; i < M; i++) {
        const float *r = in + i * N;
        float m = r[0], s = 0.0f;
        for (long j = 1; j < N; j++)
            m = r[j] > m ? r[j] : m;
        for (long j = 0; j < N; j++)
            s += expf(r[j] - m);
        float l = m + logf(s);
        for (long j = 0; j < N; j++)
            y[i * N + j] = r[j] - l;
    }
}

static void cpu_logsoftmax_bwd(graph *g, op *o)
{
    const tensor *yt = &g->t[o->in[1]];
    long N = yt->shape[yt->ndim - 1], M = graph_numel(yt) / N;
    const float *dy = TF(g, o->in[0]), *y = TF(g, o->in[1]);
    float *dx = TF(g, o->out[0]);
    for (long i = 0; i < M; i++) {
        float s = 0.0f;
        for (long j = 0; j < N; j++)
            s += dy[i * N + j];
        for (long j = 0; j < N; j++) {
            float v = dy[i * N + j] - expf(y[i * N + j]) * s;
            dx[i * N + j] = ACC(o, 0) ? dx[i * N + j] + v : v;
        }
    }
}

static void cpu_nll(graph *g, op *o)
{
    const tensor *lp = &g->t[o->in[0]];
    long N = lp->shape[lp->ndim - 1], M = graph_numel(lp) / N;
    const float *l = TF(g, o->in[0]);
    const int32_t *t = TI(g, o->in[1]);
    double s = 0.0;
    for (long i = 0; i < M; i++)
        s -= l[i * N + t[i]];
    TF(g, o->out[0])[0] = s / M;
}

static void cpu_nll_bwd(graph *g, op *o)
{
    const tensor *dl = &g->t[o->out[0]];
    long N = dl->shape[dl->ndim - 1], M = graph_numel(dl) / N;
    const int32_t *t = TI(g, o->in[0]);
    float *d = TF(g, o->out[0]);
    if (!ACC(o, 0))
        memset(d, 0, M * N * sizeof(float));
    for (long i = 0; i < M; i++)
        d[i * N + t[i]] -= 1.0f / M;
}

/* ---- embedding: y[r] = word[ids[r]] + pos[r % T] + type[types[r]] ---------- */

static void embed_range(graph *g, op *o, long lo, long hi, int tid)
{
    long C = g->t[o->in[3]].shape[1], T = g->t[o->in[0]].shape[1];
    const int32_t *ids = TI(g, o->in[0]), *types = TI(g, o->in[1]);
    const float *we = TF(g, o->in[2]), *pe = TF(g, o->in[3]), *te = TF(g, o->in[4]);
    float *y = TF(g, o->out[0]);
    for (long r = lo; r < hi; r++) {
        const float *a = we + (long)ids[r] * C, *b = pe + (r % T) * C, *c = te + (long)types[r] * C;
        for (long j = 0; j < C; j++)
            y[r * C + j] = a[j] + b[j] + c[j];
    }
}

static void cpu_embed(graph *g, op *o)
{
    long R = NUMEL(g, o->in[0]);
    par_range(g, o, R, R * g->t[o->in[3]].shape[1], embed_range);
}

/* Threads own column ranges, so scatter-adds never collide. */
static void embed_bwd_range(graph *g, op *o, long lo, long hi, int tid)
{
    const tensor *wt = &g->t[o->out[0]];
    long V = wt->shape[0], C = wt->shape[1];
    long R = NUMEL(g, o->in[1]), T = g->t[o->in[1]].shape[1];
    long P = g->t[o->out[1]].shape[0], NT = g->t[o->out[2]].shape[0];
    const float *dy = TF(g, o->in[0]);
    const int32_t *ids = TI(g, o->in[1]), *types = TI(g, o->in[2]);
    float *dw = TF(g, o->out[0]), *dp = TF(g, o->out[1]), *dt = TF(g, o->out[2]);
    if (!ACC(o, 0))
        for (long v = 0; v < V; v++)
            memset(dw + v * C + lo, 0, (hi - lo) * sizeof(float));
    if (!ACC(o, 1))
        for (long v = 0; v < P; v++)
            memset(dp + v * C + lo, 0, (hi - lo) * sizeof(float));
    if (!ACC(o, 2))
        for (long v = 0; v < NT; v++)
            memset(dt + v * C + lo, 0, (hi - lo) * sizeof(float));
    for (long r = 0; r < R; r++) {
        const float *d = dy + r * C;
        float *a = dw + (long)ids[r] * C, *b = dp + (r % T) * C, *c = dt + (long)types[r] * C;
        for (long j = lo; j < hi; j++) {
            a[j] += d[j];
            b[j] += d[j];
            c[j] += d[j];
        }
    }
}

static void cpu_embed_bwd(graph *g, op *o)
{
    long C = g->t[o->out[0]].shape[1];
    par_range(g, o, C, NUMEL(g, o->out[0]), embed_bwd_range);
}

/* ---- layer normalisation over the last dimension ---------------------------- */

static void layernorm_range(graph *g, op *o, long lo, long hi, int tid)
{
    long C = g->t[o->in[1]].shape[0];
    const float *x = TF(g, o->in[0]), *gam = TF(g, o->in[1]), *bet = TF(g, o->in[2]);
    float *y = TF(g, o->out[0]), *mean = TF(g, o->out[1]), *rstd = TF(g, o->out[2]);
    for (long r = lo; r < hi; r++) {
        const float *v = x + r * C;
        float m = 0.0f, var = 0.0f;
        for (long c = 0; c < C; c++)
            m += v[c];
        m /= C;
        for (long c = 0; c < C; c++)
            var += (v[c] - m) * (v[c] - m);
        var /= C;
        float s = 1.0f / sqrtf(var + o->eps);
        for (long c = 0; c < C; c++)
            y[r * C + c] = (v[c] - m) * s * gam[c] + bet[c];
        mean[r] = m;
        rstd[r] = s;
    }
}

static void cpu_layernorm(graph *g, op *o)
{
    long n = NUMEL(g, o->in[0]), C = g->t[o->in[1]].shape[0];
    par_range(g, o, n / C, n * 4, layernorm_range);
}

/* dx per row; dgamma/dbeta partials per thread in the workspace. */
static void layernorm_bwd_range(graph *g, op *o, long lo, long hi, int tid)
{
    long C = g->t[o->in[2]].shape[0];
    const float *dy = TF(g, o->in[0]), *x = TF(g, o->in[1]), *gam = TF(g, o->in[2]);
    const float *mean = TF(g, o->in[3]), *rstd = TF(g, o->in[4]);
    float *dx = TF(g, o->out[0]);
    float *pg = (float *)backend_ws + (size_t)tid * 2 * C, *pb = pg + C;
    memset(pg, 0, 2 * C * sizeof(float));
    for (long r = lo; r < hi; r++) {
        const float *d = dy + r * C, *v = x + r * C;
        float m1 = 0.0f, m2 = 0.0f;
        for (long c = 0; c < C; c++) {
            float xh = (v[c] - mean[r]) * rstd[r];
            float dxh = d[c] * gam[c];
            m1 += dxh;
            m2 += dxh * xh;
            pg[c] += d[c] * xh;
            pb[c] += d[c];
        }
        m1 /= C;
        m2 /= C;
        for (long c = 0; c < C; c++) {
            float xh = (v[c] - mean[r]) * rstd[r];
            float t = rstd[r] * (d[c] * gam[c] - m1 - xh * m2);
            dx[r * C + c] = ACC(o, 0) ? dx[r * C + c] + t : t;
        }
    }
}

static void cpu_layernorm_bwd(graph *g, op *o)
{
    long n = NUMEL(g, o->in[0]), C = g->t[o->in[2]].shape[0];
    int nt = pool_threads();
    struct range_ctx c = {g, o, n / C, layernorm_bwd_range};
    for (int t = 0; t < nt; t++)
        memset((float *)backend_ws + (size_t)t * 2 * C, 0, 2 * C * sizeof(float));
    if (nt == 1)
        layernorm_bwd_range(g, o, 0, n / C, 0);
    else
        pool_run(range_run, &c);
    float *dg = TF(g, o->out[1]), *db = TF(g, o->out[2]);
    for (long j = 0; j < C; j++) {
        float sg = ACC(o, 1) ? dg[j] : 0.0f, sb = ACC(o, 2) ? db[j] : 0.0f;
        for (int t = 0; t < nt; t++) {
            sg += ((float *)backend_ws)[(size_t)t * 2 * C + j];
            sb += ((float *)backend_ws)[(size_t)t * 2 * C + C + j];
        }
        dg[j] = sg;
        db[j] = sb;
    }
}

/* ---- multi-head self-attention: q, k, v (B*T, C), head h = columns
 * [h*d, (h+1)*d); probs = softmax(q k^T / sqrt(d)) saved for the backward;
 * with a mask (attention dropout) y = (probs * mask) v. Flash form (out[1]
 * 3-D, pass_flash_attention): the probabilities stay in the workspace and
 * out[1] gets each row's lse = max + log(sum exp(s - max)) of the scaled
 * scores s; the backward recomputes probs = exp(s - lse). With dropout the
 * flash form's mask holds keep flags (0 / 1, times 1 / (1 - p) where
 * applied), and the backward draws them again into its out[3] ------------- */

/* The attention's dropout mask: fwd out[2], flash-form bwd out[3]; keep
 * flags in the flash form, 0 / (1 / (1 - p)) in the probabilities form. */
static void attention_mask_range(graph *g, op *o, long lo, long hi, int tid)
{
    int fwd = o->type == OP_ATTENTION;
    int flash = g->t[fwd ? o->out[1] : o->in[4]].ndim == 3;
    draw_mask(g, o, TF(g, o->out[fwd ? 2 : 3]), flash ? 1.0f : 1.0f / (1.0f - o->p), lo, hi);
}

/* What the mask's values are multiplied by: 1 / (1 - p) for keep flags. */
static float mask_scale(const op *o, int flash)
{
    return flash ? 1.0f / (1.0f - o->p) : 1.0f;
}

static void attention_range(graph *g, op *o, long lo, long hi, int tid)
{
    const tensor *pt = &g->t[o->out[1]]; /* probs (B, H, T, T) or lse (B, H, T) */
    long H = pt->shape[1], T = pt->shape[2];
    long C = g->t[o->out[0]].shape[1], d = C / H;
    int flash = pt->ndim == 3;
    const float *Q = TF(g, o->in[0]), *K = TF(g, o->in[1]), *V = TF(g, o->in[2]);
    float *y = TF(g, o->out[0]), *probs = TF(g, o->out[1]);
    const float *mask = o->out[2] >= 0 ? TF(g, o->out[2]) : NULL;
    float *pd = (float *)backend_ws + (size_t)tid * 2 * T * T;
    float scale = 1.0f / sqrtf((float)d), ms = mask_scale(o, flash);
    for (long bh = lo; bh < hi; bh++) {
        long b = bh / H, h = bh % H, off = b * T * C + h * d;
        float *P = flash ? pd + T * T : probs + bh * T * T;
        cpu_gemm(0, 1, T, T, d, scale, Q + off, C, K + off, C, 0.0f, P, T);
        for (long i = 0; i < T; i++) {
            float *r = P + i * T, m = r[0], s = 0.0f;
            for (long j = 1; j < T; j++)
                m = r[j] > m ? r[j] : m;
            for (long j = 0; j < T; j++) {
                r[j] = expf(r[j] - m);
                s += r[j];
            }
            for (long j = 0; j < T; j++)
                r[j] /= s;
            if (flash)
                probs[bh * T + i] = m + logf(s);
        }
        const float *A = P;
        if (mask) {
            for (long i = 0; i < T * T; i++)
                pd[i] = P[i] * (mask[bh * T * T + i] * ms);
            A = pd;
        }
        cpu_gemm(0, 0, T, d, T, 1.0f, A, T, V + off, C, 0.0f, y + off, C);
    }
}

static void cpu_attention(graph *g, op *o)
{
    const tensor *pt = &g->t[o->out[1]];
    long BH = pt->shape[0] * pt->shape[1], T = pt->shape[2];
    if (o->out[2] >= 0) /* attention-probability dropout mask */
        par_range(g, o, BH * T * T, BH * T * T * 4, attention_mask_range);
    par_range(g, o, BH, BH * T * T * 64, attention_range);
}

static void attention_bwd_range(graph *g, op *o, long lo, long hi, int tid)
{
    const tensor *pt = &g->t[o->in[4]];
    long H = pt->shape[1], T = pt->shape[2];
    long C = g->t[o->in[0]].shape[1], d = C / H;
    int flash = pt->ndim == 3; /* in[4] is the lse, in[5] the forward's y (unused here) */
    const float *dy = TF(g, o->in[0]), *Q = TF(g, o->in[1]), *K = TF(g, o->in[2]);
    const float *V = TF(g, o->in[3]), *probs = TF(g, o->in[4]);
    int mi = flash ? o->out[3] : o->in[5]; /* flash: the keep flags drawn again */
    const float *mask = mi >= 0 ? TF(g, mi) : NULL;
    float *dQ = TF(g, o->out[0]), *dK = TF(g, o->out[1]), *dV = TF(g, o->out[2]);
    float *dP = (float *)backend_ws + (size_t)tid * 2 * T * T, *pd = dP + T * T;
    float scale = 1.0f / sqrtf((float)d), ms = mask_scale(o, flash);
    for (long bh = lo; bh < hi; bh++) {
        long b = bh / H, h = bh % H, off = b * T * C + h * d;
        const float *P = probs + bh * T * T, *A = P;
        if (flash) { /* P = exp(s - lse), into the second workspace slot */
            cpu_gemm(0, 1, T, T, d, scale, Q + off, C, K + off, C, 0.0f, pd, T);
            for (long i = 0; i < T; i++)
                for (long j = 0; j < T; j++)
                    pd[i * T + j] = expf(pd[i * T + j] - probs[bh * T + i]);
            P = A = pd;
        }
        if (mask) { /* the dropped probabilities: flash form in dP's slot (free until dA) */
            float *m = flash ? dP : pd;
            for (long i = 0; i < T * T; i++)
                m[i] = P[i] * (mask[bh * T * T + i] * ms);
            A = m;
        }
        /* dV = A^T dY ; dA = dY V^T */
        cpu_gemm(1, 0, T, d, T, 1.0f, A, T, dy + off, C, ACC(o, 2) ? 1.0f : 0.0f, dV + off, C);
        cpu_gemm(0, 1, T, T, d, 1.0f, dy + off, C, V + off, C, 0.0f, dP, T);
        if (mask)
            for (long i = 0; i < T * T; i++)
                dP[i] *= mask[bh * T * T + i] * ms;
        for (long i = 0; i < T; i++) { /* softmax backward, row i */
            float s = 0.0f;
            for (long j = 0; j < T; j++)
                s += dP[i * T + j] * P[i * T + j];
            for (long j = 0; j < T; j++)
                dP[i * T + j] = P[i * T + j] * (dP[i * T + j] - s);
        }
        /* dQ = dS K scale ; dK = dS^T Q scale */
        cpu_gemm(0, 0, T, d, T, scale, dP, T, K + off, C, ACC(o, 0) ? 1.0f : 0.0f, dQ + off, C);
        cpu_gemm(1, 0, T, d, T, scale, dP, T, Q + off, C, ACC(o, 1) ? 1.0f : 0.0f, dK + off, C);
    }
}

static void cpu_attention_bwd(graph *g, op *o)
{
    const tensor *pt = &g->t[o->in[4]];
    long BH = pt->shape[0] * pt->shape[1], T = pt->shape[2];
    if (pt->ndim == 3 && o->out[3] >= 0) /* flash form with dropout: the forward's keep flags */
        par_range(g, o, BH * T * T, BH * T * T * 4, attention_mask_range);
    par_range(g, o, BH, BH * T * T * 64, attention_bwd_range);
}

/* ---- gather rows: y[b M + j] = x[b T + pos[b, j]] ------------------------------ */

static void cpu_gather(graph *g, op *o)
{
    const tensor *p = &g->t[o->in[1]];
    long B = p->shape[0], M = p->shape[1], C = g->t[o->out[0]].shape[1];
    long T = NUMEL(g, o->in[0]) / (B * C);
    const int32_t *pos = TI(g, o->in[1]);
    for (long r = 0; r < B * M; r++)
        memcpy(TF(g, o->out[0]) + r * C, TF(g, o->in[0]) + ((r / M) * T + pos[r]) * C,
               C * sizeof(float));
}

static void cpu_gather_bwd(graph *g, op *o)
{
    const tensor *p = &g->t[o->in[1]];
    long B = p->shape[0], M = p->shape[1], C = g->t[o->in[0]].shape[1];
    long T = NUMEL(g, o->out[0]) / (B * C);
    const int32_t *pos = TI(g, o->in[1]);
    float *dx = TF(g, o->out[0]);
    if (!ACC(o, 0))
        memset(dx, 0, B * T * C * sizeof(float));
    for (long r = 0; r < B * M; r++)
        for (long c = 0; c < C; c++)
            dx[((r / M) * T + pos[r]) * C + c] += TF(g, o->in[0])[r * C + c];
}

/* ---- softmax cross-entropy (mean over rows), one op -------------------------- */

/* Rows [lo, hi): lse[i] = log sum_j exp(x[i, j]) (summed in double). */
static void softmax_ce_range(graph *g, op *o, long lo, long hi, int tid)
{
    const tensor *x = &g->t[o->in[0]];
    long N = x->shape[x->ndim - 1];
    const float *in = TF(g, o->in[0]);
    float *lse = TF(g, o->out[1]);
    (void)tid;
    for (long i = lo; i < hi; i++) {
        const float *r = in + i * N;
        float m = r[0];
        double e = 0.0;
        for (long j = 1; j < N; j++)
            m = r[j] > m ? r[j] : m;
        for (long j = 0; j < N; j++)
            e += expf(r[j] - m);
        lse[i] = (float)(m + log(e));
    }
}

static void cpu_softmax_ce(graph *g, op *o)
{
    const tensor *x = &g->t[o->in[0]];
    long N = x->shape[x->ndim - 1], M = graph_numel(x) / N;
    const float *in = TF(g, o->in[0]), *lse = TF(g, o->out[1]);
    const int32_t *t = TI(g, o->in[1]);
    par_range(g, o, M, M * N * 4, softmax_ce_range);
    double s = 0.0;
    for (long i = 0; i < M; i++)
        s += (double)lse[i] - in[i * N + t[i]];
    TF(g, o->out[0])[0] = (float)(s / M);
}

/* dx (+)= (exp(x - lse) - onehot(target)) / M, rows [lo, hi). */
static void softmax_ce_bwd_range(graph *g, op *o, long lo, long hi, int tid)
{
    const tensor *x = &g->t[o->in[0]];
    long N = x->shape[x->ndim - 1], M = graph_numel(x) / N;
    const float *in = TF(g, o->in[0]), *lse = TF(g, o->in[2]);
    const int32_t *t = TI(g, o->in[1]);
    float *d = TF(g, o->out[0]), invm = 1.0f / M;
    (void)tid;
    for (long i = lo; i < hi; i++)
        for (long j = 0; j < N; j++) {
            float v = (expf(in[i * N + j] - lse[i]) - (j == t[i] ? 1.0f : 0.0f)) * invm;
            d[i * N + j] = ACC(o, 0) ? d[i * N + j] + v : v;
        }
}

static void cpu_softmax_ce_bwd(graph *g, op *o)
{
    const tensor *x = &g->t[o->in[0]];
    long N = x->shape[x->ndim - 1], M = graph_numel(x) / N;
    par_range(g, o, M, M * N * 4, softmax_ce_bwd_range);
}

/* ---- optimizers and EMA ---------------------------------------------------- */

/* SGD as torch.optim.SGD: g += wd w; buf = momentum buf + g (buf = g at the
 * first step); w -= lr buf. */
static void sgd_range(graph *g, op *o, long lo, long hi, int tid)
{
    float *w = TF(g, o->in[0]), *gr = TF(g, o->in[1]), *buf = TF(g, o->in[2]);
    int first = g->step == 1;
    for (long i = lo; i < hi; i++) {
        float d = gr[i] + o->wd * w[i];
        buf[i] = first ? d : o->momentum * buf[i] + d;
        w[i] -= o->lr * buf[i];
    }
}

/* AdamW as torch.optim.AdamW (decoupled weight decay, bias correction). */
static void adamw_range(graph *g, op *o, long lo, long hi, int tid)
{
    float *w = TF(g, o->in[0]), *gr = TF(g, o->in[1]);
    float *m = TF(g, o->in[2]), *v = TF(g, o->in[3]);
    double bc1 = 1.0 - pow(o->beta1, g->step), bc2 = 1.0 - pow(o->beta2, g->step);
    float step = o->lr / bc1, sbc2 = sqrt(bc2);
    for (long i = lo; i < hi; i++) {
        w[i] *= 1.0f - o->lr * o->wd;
        m[i] = o->beta1 * m[i] + (1.0f - o->beta1) * gr[i];
        v[i] = o->beta2 * v[i] + (1.0f - o->beta2) * gr[i] * gr[i];
        w[i] -= step * m[i] / (sqrtf(v[i]) / sbc2 + o->eps);
    }
}

static void ema_range(graph *g, op *o, long lo, long hi, int tid)
{
    const float *w = TF(g, o->in[0]);
    float *e = TF(g, o->in[1]);
    for (long i = lo; i < hi; i++)
        e[i] = o->momentum * e[i] + (1.0f - o->momentum) * w[i];
}

static void cpu_sgd(graph *g, op *o) { long n = NUMEL(g, o->in[0]); par_range(g, o, n, n * 2, sgd_range); }
static void cpu_adamw(graph *g, op *o) { long n = NUMEL(g, o->in[0]); par_range(g, o, n, n * 4, adamw_range); }
static void cpu_ema(graph *g, op *o) { long n = NUMEL(g, o->in[0]); par_range(g, o, n, n, ema_range); }

/* ---- table and workspace --------------------------------------------------- */

size_t cpu_op_workspace(const graph *g, const op *o)
{
    int nt = pool_threads();
    switch (o->type) {
    case OP_CONV:
    case OP_CONV_BWD:
        return cpu_conv_workspace(g, o);
    case OP_BN:
    case OP_BN_BWD: {
        long C = g->t[o->type == OP_BN ? o->in[1] : o->in[2]].shape[0];
        return (size_t)(nt + 2) * 2 * C * sizeof(double);
    }
    case OP_LAYERNORM_BWD:
        return (size_t)nt * 2 * g->t[o->in[2]].shape[0] * sizeof(float);
    case OP_ATTENTION:
    case OP_ATTENTION_BWD: {
        long T = g->t[o->type == OP_ATTENTION ? o->out[1] : o->in[4]].shape[2];
        return (size_t)nt * 2 * T * T * sizeof(float);
    }
    default:
        return 0;
    }
}

/* ---- data parallel: gradient buckets summed over the ranks (MPI) ------------- */

#define MAX_BUCKETS 256
static int bucket_req[MAX_BUCKETS];

static void cpu_allreduce(graph *g, op *o)
{
    tensor *t = &g->t[o->in[0]];
    if (!engine_comm || o->bucket < 0 || o->bucket >= MAX_BUCKETS)
        BUG("all-reduce of '%s' without ranks", t->name);
    if (engine_comm->iallreduce(t->data, (size_t)graph_numel(t), COMM_F32, COMM_SUM,
                                &bucket_req[o->bucket]))
        BUG("MPI_Iallreduce of '%s' failed", t->name);
}

static void cpu_allreduce_wait(graph *g, op *o)
{
    tensor *t = &g->t[o->in[0]];
    if (engine_comm->wait(bucket_req[o->bucket]))
        BUG("MPI_Wait of '%s' failed", t->name);
    float *d = t->data, k = 1.0f / (float)engine_comm->size;
    for (int64_t i = 0, n = graph_numel(t); i < n; i++)
        d[i] *= k;
}

void cpu_ops_register(void (**t)(graph *, op *))
{
    t[OP_ALLREDUCE] = cpu_allreduce;
    t[OP_ALLREDUCE_WAIT] = cpu_allreduce_wait;
    t[OP_CONV] = cpu_conv;
    t[OP_CONV_BWD] = cpu_conv_bwd;
    t[OP_BN] = cpu_bn;
    t[OP_BN_BWD] = cpu_bn_bwd;
    t[OP_ACT] = cpu_act_fwd;
    t[OP_ACT_BWD] = cpu_act_bwd;
    t[OP_MAXPOOL] = cpu_maxpool;
    t[OP_MAXPOOL_BWD] = cpu_maxpool_bwd;
    t[OP_AVGPOOL] = cpu_avgpool;
    t[OP_AVGPOOL_BWD] = cpu_avgpool_bwd;
    t[OP_FLATTEN] = cpu_flatten;
    t[OP_FLATTEN_BWD] = cpu_flatten_bwd;
    t[OP_LINEAR] = cpu_linear;
    t[OP_LINEAR_BWD] = cpu_linear_bwd;
    t[OP_DROPOUT] = cpu_dropout;
    t[OP_DROPOUT_BWD] = cpu_dropout_bwd;
    t[OP_ADD] = cpu_add;
    t[OP_COPY] = cpu_copy;
    t[OP_LOGSOFTMAX] = cpu_logsoftmax;
    t[OP_LOGSOFTMAX_BWD] = cpu_logsoftmax_bwd;
    t[OP_NLL] = cpu_nll;
    t[OP_NLL_BWD] = cpu_nll_bwd;
    t[OP_EMBED] = cpu_embed;
    t[OP_EMBED_BWD] = cpu_embed_bwd;
    t[OP_LAYERNORM] = cpu_layernorm;
    t[OP_LAYERNORM_BWD] = cpu_layernorm_bwd;
    t[OP_ATTENTION] = cpu_attention;
    t[OP_ATTENTION_BWD] = cpu_attention_bwd;
    t[OP_GATHER] = cpu_gather;
    t[OP_GATHER_BWD] = cpu_gather_bwd;
    t[OP_SOFTMAX_CE] = cpu_softmax_ce;
    t[OP_SOFTMAX_CE_BWD] = cpu_softmax_ce_bwd;
    t[OP_SGD] = cpu_sgd;
    t[OP_ADAMW] = cpu_adamw;
    t[OP_EMA] = cpu_ema;
}
