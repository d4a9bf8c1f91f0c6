/* conv.cu - OP_CONV and OP_CONV_BWD on cuDNN's legacy convolution API.
 *
 * Everything that can be decided once is decided in cu_conv_prepare: per op
 * (state in cu.priv[op index]) the tensor, filter and convolution
 * descriptors, one algorithm per direction (forward, backward data, backward
 * filter), private buffers, and how the forward epilogue runs. A step then
 * only enqueues library calls and kernels on cu.s.
 *
 * Types: cuDNN computes on cu.act_dt (x, w and y of one type, compute type
 * FLOAT for every precision). An activation stored in another type (the f32
 * input image under mixed precision) is cast into a private staging buffer
 * first, an output in another type is written there and cast back.
 * Precision fp32 allows only FMA kernels (CUDNN_FMA_MATH, and only results
 * whose mathType is FMA), tf32 the default math (TF32 on sm_80+), fp16 / bf16
 * tensor-op math; the descriptor of each direction takes the math type of its
 * chosen result, as PyTorch does.
 *
 * Weights: the parameter is f32 (K, C, R, S). With 16-bit data or NHWC,
 * cuDNN wants the filter in the data type and KRSC: a shadow (cu_weight_to),
 * filled in prepare, refilled at every forward when the weights are trained;
 * the backward (o->fwd) reads its forward's shadow. Its weight gradient then
 * goes through a scratch filter of the shadow's type / layout into the f32
 * gradient (cu_weight_grad_from); without a shadow cuDNN writes the f32
 * gradient itself, beta = the accumulate bit.
 *
 * Algorithms: cuDNN's heuristics (the first acceptable result), or with
 * cu.search our own timed search. cudnnFind* is not used: on an H100 its
 * picks made ResNet-50 slower than the heuristics (8,029 against 10,698 img/s,
 * fp16 NHWC batch 64, 2026-11-22), because it times candidates in isolation,
 * as plain convolutions, under its own workspace. Ours times every acceptable
 * candidate of the heuristics' list as it will run: the same call (the fused
 * conv + bias + ReLU where the forward is fused), the same buffers, beta,
 * math type and workspace cap, 2 warm-up runs then 5 timed runs each, median.
 * The heuristics' choice is timed too (before and after the others, 10 runs)
 * and kept unless another is faster by more than 2% and its slowest run is
 * faster than the heuristics' fastest (beyond the noise), and, when the step
 * is eager (no CUDA Graph), unless the other's runs with the host time of
 * their calls counted are slower than the heuristics' (more host work can
 * lose a host-bound step what the device gains; conv_search_host_kept
 * counts the problems where that kept the heuristics' choice). Acceptable: status
 * SUCCESS, the math type allowed by the precision, workspace within
 * min(1 GiB, free / 4). Every choice is logged on stderr per convolution
 * (shape, layout, type, direction, algorithm, time). Choices are cached per
 * problem for the process, so the repeated shapes of a ResNet are searched
 * once, and in the persistent plan cache (plans.cu), so later runs on the
 * same GPU and libraries search them not at all: a cached choice is used
 * only after its workspace query and one call succeed on this descriptor
 * (conv_from_plan), else it is searched again.
 *
 * Epilogue (v = conv + bias + res; pre = v; y = act(v), as engine/cpu): ReLU,
 * or no activation with a bias or a residual, and no pre-activation output,
 * goes to cudnnConvolutionBiasActivationForward (z = the residual with
 * alpha2 = 1, or z = y with alpha2 = 0; a bias of the data type, zeros when
 * the op has none; the identity activation needs IMPLICIT_PRECOMP_GEMM),
 * checked by one call in prepare; when cuDNN refuses it, and for the other
 * epilogues, cudnnConvolutionForward is followed by cu_epilogue.
 *
 * Graph API: once the legacy forward is prepared, the same convolution and
 * epilogue may run as one cuDNN graph-API plan instead (convgraph.h; the
 * section "the forward on the cuDNN graph API" below says when:
 * MATRIX_ENGINE_CONV=legacy|graph|auto, every plan verified numerically
 * first, timed against the legacy call under the search). The backward
 * stays on the legacy API.
 *
 * BatchNorm statistics (MATRIX_ENGINE_BNSTATS=conv, default separate): a
 * training forward convolution without epilogue whose NHWC output y feeds a
 * training BatchNorm first (bnstats.h, bns_pair) runs as the graph
 * CONVOLUTION_FORWARD -> GEN_STATS, which also writes the per-channel f32
 * sum and sum of squares of y into a buffer of the op (p->bns); ops.cu's
 * BatchNorm forward then skips its own sums pass over y and finishes from
 * them (cu_conv_bn_stats). Every such plan is verified at prepare (y as
 * above, the sums against a double sum of the plan's own y, bnstats.h's
 * tolerance); without one that verifies, the op takes the plain decision
 * and its BatchNorm sums y itself (conv_genstats_fallback). */
#include "cuda.h"
#include "convgraph.h"
#include "bnstats.h"
#include "../knobs.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef HAVE_CUDNN

enum { FWD, BWD_DATA, BWD_FILTER, NDIR };
enum { EPI_NONE, EPI_FUSED, EPI_KERNEL };
enum { ST_IN, ST_X, ST_OUT, NST }; /* staging: x or dy; bwd x; y or dx */

typedef struct conv_geo {
    int N, C, H, W; /* input (logical NCHW) */
    int K, OH, OW;  /* output */
    int R, S;       /* kernel */
    int stride, pad;
    int nhwc;
} conv_geo;

typedef struct conv_priv {
    conv_geo c;
    int dt;                                /* type cuDNN computes on: cu.act_dt */
    cudnnTensorDescriptor_t xd, yd;        /* x / dx, y / dy */
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd[NDIR]; /* per direction: its algorithm's math type */
    int algo[NDIR];
    size_t ws[NDIR];
    /* forward epilogue */
    int epi;
    cudnnTensorDescriptor_t bd;
    cudnnActivationDescriptor_t ad;
    void *bias;      /* fused: bias in dt (converted, or zeros), NULL: the f32 parameter */
    size_t bias_bytes;
    int bias_refill; /* convert the bias again at every forward */
    /* weights */
    void *wsh;       /* shadow: dt, KCRS / KRSC; NULL: the f32 parameter itself */
    size_t wsh_bytes;
    int wsh_own;     /* 1: allocated here (0: the forward's) */
    int wsh_refill;  /* refill at every run (the weights are trained) */
    /* activations stored in a type other than dt */
    void *st[NST];
    size_t st_bytes[NST];
    int st_shared;   /* backward: st[ST_X] is the forward's staged x */
    /* the forward on the cuDNN graph API (convgraph.h), when chosen */
    cg_plan *gp;                  /* the problem's plan (shared); NULL: the legacy call */
    cudnnBackendDescriptor_t gvp; /* this op's variant pack, made at its first run */
    /* BatchNorm statistics from the convolution (MATRIX_ENGINE_BNSTATS=conv) */
    int bn;          /* the BatchNorm op its y feeds (bns_pair), -1: none */
    float *bns;      /* with gp->pb.stats: sum at [0, K), sum of squares at [bns_k4, +K) */
    size_t bns_bytes;
    size_t bns_k4;   /* K rounded up to 4 (16-byte aligned second half) */
    int direct;      /* MATRIX_ENGINE_CONV=kernel: cu_conv_direct, no cuDNN */
} conv_priv;

/* Algorithm choice of one problem, cached for the process. */
typedef struct conv_key {
    int dir, need, dt, nhwc, math, search, fused, acc;
    int eager; /* timed search for an eager step: host time of the call counted too */
    int n, c, h, w, k, r, s, stride, pad;
} conv_key;

typedef struct conv_choice {
    conv_key key;
    int ok, algo;
    cudnnMathType_t math;
    size_t ws;
    size_t cap;     /* workspace cap it was chosen under */
    int timed;      /* candidates timed (0: heuristics only) */
    int heur_algo;  /* the heuristics' choice */
    float ms, heur_ms; /* medians of the choice and of the heuristics' choice */
    int host_kept;  /* another was faster on the device but not with its host time */
} conv_choice;

/* What a timed candidate run calls: the op, and whether the forward runs
 * fused (cudnnConvolutionBiasActivationForward). */
typedef struct conv_run {
    graph *g;
    const op *o;
    int fused;
} conv_run;

static conv_choice *cache;
static int ncache, capcache;

/* What the last prepare did (cu_conv_info). */
static struct {
    int prepared;
    int fused_cudnn, fused_epilogue, fused_refused;
    int search_kept, search_replaced; /* distinct problems timed */
    int search_host_kept; /* of the kept: another was faster on the device, not with its host time */
    int algos[NDIR][8];
    void *dw;          /* weight-gradient scratch shared by the backward ops */
    size_t dw_bytes;
    int engine;        /* MATRIX_ENGINE_CONV: CE_AUTO, CE_GRAPH, CE_LEGACY */
    /* forward ops on the cuDNN graph API, and why the others are not */
    int graph_ops, graph_no_engine, graph_verify_failed, graph_unchecked, graph_slower,
        graph_ineligible;
    /* BatchNorm statistics from the convolution: MATRIX_ENGINE_BNSTATS (bnstats.h) */
    int bnstats;       /* BNS_SEPARATE / BNS_CONV */
    int genstats_ops, genstats_fallback, genstats_unpaired;
    int *bn_conv;      /* per op index < nbn: the conv op whose GEN_STATS sums it reads, -1 */
    int nbn;
    char info[1536];
} cv;

enum { CE_AUTO, CE_GRAPH, CE_LEGACY, CE_KERNEL }; /* knob_get(KNOB_CONV)'s values (knobs.h) */
#define engine_names(e) knob_value(KNOB_CONV, (e))

static const char *const algo_names[NDIR][8] = {
    {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
     "WINOGRAD", "WINOGRAD_NONFUSED"},
    {"ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED", "", ""},
    {"ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING", ""},
};

/* ---- helpers ------------------------------------------------------------------- */

static int conv_err(const op *o, const char *why)
{
    fprintf(stderr, "matrix-engine: cuda: conv '%s': %s\n", o->name, why);
    return -2;
}

static cudnnTensorFormat_t conv_fmt(int nhwc) { return nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW; }

static cudnnMathType_t conv_math(void)
{
    return cu.pt.precision == PREC_FP32   ? CUDNN_FMA_MATH
           : cu.pt.precision == PREC_TF32 ? CUDNN_DEFAULT_MATH
                                          : CUDNN_TENSOR_OP_MATH;
}

/* The step runs op by op (no CUDA Graph replay): each cuDNN call's host
 * work is paid at every step, not only once at the capture. */
static int conv_eager(void) { return cu.pt.compile < COMPILE_REDUCE_OVERHEAD; }

static double conv_clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int conv_math_ok(cudnnMathType_t m)
{
    return cu.pt.precision != PREC_FP32 || m == CUDNN_FMA_MATH;
}


/* ---- geometry and descriptors ------------------------------------------------- */

static int fits_int(int64_t v) { return v > 0 && v <= INT_MAX; }

static int same_as(const graph *g, int a, int b)
{
    const tensor *x = &g->t[a], *y = &g->t[b];
    return graph_numel(x) == graph_numel(y) && x->dtype == y->dtype &&
           (x->layout == LAYOUT_NHWC) == (y->layout == LAYOUT_NHWC);
}

static int conv_geometry(const graph *g, const op *o, conv_geo *c)
{
    int bwd = o->type == OP_CONV_BWD;
    const tensor *x = &g->t[o->in[bwd ? 1 : 0]], *w = &g->t[o->in[bwd ? 2 : 1]];
    const tensor *y = &g->t[bwd ? o->in[0] : o->out[0]];
    if (x->ndim != 4 || y->ndim != 4 || w->ndim != 4 || w->dtype != DT_F32)
        return conv_err(o, "expects 4-D x, y and an f32 (K, C, R, S) weight");
    for (int k = 0; k < 4; k++)
        if (!fits_int(x->shape[k]) || !fits_int(y->shape[k]) || !fits_int(w->shape[k]))
            return conv_err(o, "a dimension is out of range");
    c->N = x->shape[0]; c->C = x->shape[1]; c->H = x->shape[2]; c->W = x->shape[3];
    c->K = y->shape[1]; c->OH = y->shape[2]; c->OW = y->shape[3];
    c->R = w->shape[2]; c->S = w->shape[3];
    c->stride = o->stride;
    c->pad = o->pad;
    c->nhwc = x->layout == LAYOUT_NHWC;
    if (y->shape[0] != c->N || w->shape[0] != c->K || w->shape[1] != c->C || c->R != o->kh ||
        c->S != o->kw || c->stride < 1 || c->pad < 0 || (y->layout == LAYOUT_NHWC) != c->nhwc)
        return conv_err(o, "inconsistent shapes, layouts or attributes");
    if (!cu_float_type(x->dtype) || !cu_float_type(y->dtype))
        return conv_err(o, "activations must be f32, f16 or bf16");
    return 0;
}

static int conv_descriptors(const op *o, conv_priv *p)
{
    const conv_geo *c = &p->c;
    cudnnDataType_t t = cu_dnn_type(p->dt);
    cudnnTensorFormat_t f = conv_fmt(c->nhwc);
    cudnnCheck(cudnnCreateTensorDescriptor(&p->xd));
    cudnnCheck(cudnnCreateTensorDescriptor(&p->yd));
    cudnnCheck(cudnnCreateFilterDescriptor(&p->wd));
    cudnnCheck(cudnnSetTensor4dDescriptor(p->xd, f, t, c->N, c->C, c->H, c->W));
    cudnnCheck(cudnnSetTensor4dDescriptor(p->yd, f, t, c->N, c->K, c->OH, c->OW));
    cudnnCheck(cudnnSetFilter4dDescriptor(p->wd, t, f, c->K, c->C, c->R, c->S));
    for (int d = 0; d < NDIR; d++) {
        cudnnCheck(cudnnCreateConvolutionDescriptor(&p->cd[d]));
        cudnnCheck(cudnnSetConvolution2dDescriptor(p->cd[d], c->pad, c->pad, c->stride, c->stride,
                                                   1, 1, CUDNN_CROSS_CORRELATION,
                                                   CUDNN_DATA_FLOAT));
        cudnnCheck(cudnnSetConvolutionMathType(p->cd[d], conv_math()));
    }
    int n, k, h, w;
    cudnnCheck(cudnnGetConvolution2dForwardOutputDim(p->cd[FWD], p->xd, p->wd, &n, &k, &h, &w));
    if (n != c->N || k != c->K || h != c->OH || w != c->OW)
        return conv_err(o, "output shape differs from cuDNN's");
    return 0;
}

/* ---- algorithm choice ----------------------------------------------------------- */

/* One result of a heuristic query or a timed search, any direction. */
typedef struct conv_cand {
    int algo;
    cudnnStatus_t status;
    float time;
    size_t memory;
    cudnnMathType_t math;
} conv_cand;

template <typename Perf> static int conv_copy(const Perf *r, int n, conv_cand *out)
{
    for (int i = 0; i < n; i++) {
        out[i].algo = (int)r[i].algo;
        out[i].status = r[i].status;
        out[i].time = r[i].time;
        out[i].memory = r[i].memory;
        out[i].math = r[i].mathType;
    }
    return n;
}

static int conv_max_count(int dir)
{
    int n = 0;
    if (dir == FWD)
        cudnnCheck(cudnnGetConvolutionForwardAlgorithmMaxCount(cu.dnn, &n));
    else if (dir == BWD_DATA)
        cudnnCheck(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(cu.dnn, &n));
    else
        cudnnCheck(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(cu.dnn, &n));
    return n;
}

/* Results of the heuristics into out (max entries); *st: the call's status.
 * The descriptor has the requested math type. */
static int conv_query(conv_priv *p, int dir, conv_cand *out, int max, cudnnStatus_t *st)
{
    int n = 0;
    cudnnHandle_t h = cu.dnn;
    cudnnConvolutionDescriptor_t cd = p->cd[dir];
    if (dir == FWD) {
        cudnnConvolutionFwdAlgoPerf_t r[32];
        *st = cudnnGetConvolutionForwardAlgorithm_v7(h, p->xd, p->wd, cd, p->yd, max, &n, r);
        return *st == CUDNN_STATUS_SUCCESS ? conv_copy(r, n, out) : 0;
    }
    if (dir == BWD_DATA) {
        cudnnConvolutionBwdDataAlgoPerf_t r[32];
        *st = cudnnGetConvolutionBackwardDataAlgorithm_v7(h, p->wd, p->yd, cd, p->xd, max, &n, r);
        return *st == CUDNN_STATUS_SUCCESS ? conv_copy(r, n, out) : 0;
    }
    cudnnConvolutionBwdFilterAlgoPerf_t r[32];
    *st = cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, p->xd, p->yd, cd, p->wd, max, &n, r);
    return *st == CUDNN_STATUS_SUCCESS ? conv_copy(r, n, out) : 0;
}

/* Workspace of algo with math set on the direction's descriptor; 0 on success. */
static int conv_ws_size(conv_priv *p, int dir, int algo, cudnnMathType_t math, size_t *bytes)
{
    cudnnStatus_t s;
    cudnnCheck(cudnnSetConvolutionMathType(p->cd[dir], math));
    if (dir == FWD)
        s = cudnnGetConvolutionForwardWorkspaceSize(cu.dnn, p->xd, p->wd, p->cd[dir], p->yd,
                                                    (cudnnConvolutionFwdAlgo_t)algo, bytes);
    else if (dir == BWD_DATA)
        s = cudnnGetConvolutionBackwardDataWorkspaceSize(cu.dnn, p->wd, p->yd, p->cd[dir], p->xd,
                                                         (cudnnConvolutionBwdDataAlgo_t)algo,
                                                         bytes);
    else
        s = cudnnGetConvolutionBackwardFilterWorkspaceSize(cu.dnn, p->xd, p->yd, p->cd[dir],
                                                           p->wd,
                                                           (cudnnConvolutionBwdFilterAlgo_t)algo,
                                                           bytes);
    return s == CUDNN_STATUS_SUCCESS ? 0 : -1;
}

/* The first acceptable candidate in the heuristics' order into *ch; need
 * >= 0: only that algorithm. 1 when found. */
static int conv_pick(conv_priv *p, int dir, int need, conv_cand *r, int n, size_t cap,
                     conv_choice *ch)
{
    for (int i = 0; i < n; i++) {
        size_t bytes = 0;
        if (r[i].status != CUDNN_STATUS_SUCCESS || !conv_math_ok(r[i].math) ||
            (need >= 0 && r[i].algo != need) || r[i].algo < 0 || r[i].algo >= 8 ||
            r[i].memory > cap || conv_ws_size(p, dir, r[i].algo, r[i].math, &bytes) != 0 ||
            bytes > cap)
            continue;
        ch->ok = 1;
        ch->algo = r[i].algo;
        ch->math = r[i].math;
        ch->ws = bytes > r[i].memory ? bytes : r[i].memory;
        return 1;
    }
    return 0;
}

static conv_key conv_make_key(const conv_priv *p, int dir, int need, const conv_run *cr)
{
    conv_key k;
    memset(&k, 0, sizeof k);
    k.dir = dir; k.need = need; k.dt = p->dt; k.nhwc = p->c.nhwc;
    k.math = (int)conv_math(); k.search = cu.search;
    k.eager = cu.search && conv_eager();
    k.fused = cr->fused;
    k.acc = dir == FWD ? cr->o->in[3] >= 0 : (int)CU_ACC(cr->o, dir == BWD_DATA ? 0 : 1);
    k.n = p->c.N; k.c = p->c.C; k.h = p->c.H; k.w = p->c.W;
    k.k = p->c.K; k.r = p->c.R; k.s = p->c.S; k.stride = p->c.stride; k.pad = p->c.pad;
    return k;
}

static conv_choice *conv_cached(const conv_key *k)
{
    for (int i = 0; i < ncache; i++)
        if (!memcmp(&cache[i].key, k, sizeof *k))
            return &cache[i];
    return NULL;
}

static void conv_remember(const conv_choice *ch)
{
    conv_choice *e = conv_cached(&ch->key);
    if (!e) {
        if (ncache == capcache) {
            int cap = capcache ? 2 * capcache : 64;
            conv_choice *n = (conv_choice *)realloc(cache, cap * sizeof *n);
            if (!n)
                return; /* not cached: searched again next time */
            cache = n;
            capcache = cap;
        }
        e = &cache[ncache++];
    }
    *e = *ch;
}

static int conv_needs_shadow(const conv_priv *p);

/* The forward operands of op o as the legacy call reads them (the staged
 * x, the weight shadow, the fused call's bias: the converted one, zeros,
 * or the f32 parameter), as of prepare. */
static void conv_op_bufs(graph *g, const op *o, const conv_priv *p, conv_bufs *b)
{
    b->x = p->st[ST_IN] ? p->st[ST_IN] : CU_PTR(g, o->in[0]);
    b->w = p->wsh ? p->wsh : CU_PTR(g, o->in[1]);
    b->bias = p->bias ? p->bias : o->in[2] >= 0 ? CU_PTR(g, o->in[2]) : NULL;
    b->res = o->in[3] >= 0 ? CU_PTR(g, o->in[3]) : NULL;
    b->y = p->st[ST_OUT] ? p->st[ST_OUT] : CU_PTR(g, o->out[0]);
    b->sum = p->bns;
    b->sqsum = p->bns ? p->bns + p->bns_k4 : NULL;
}

/* One legacy forward library call on b: cudnnConvolutionForward, or with
 * fused cudnnConvolutionBiasActivationForward (z = the residual with
 * alpha2 = 1, else y with alpha2 = 0). */
static cudnnStatus_t conv_fwd_call(const conv_priv *p, const conv_bufs *b, int fused, int algo,
                                   void *ws, size_t wsb)
{
    const float one = 1.0f, zero = 0.0f, alpha2 = b->res ? 1.0f : 0.0f;
    if (!fused)
        return cudnnConvolutionForward(cu.dnn, &one, p->xd, b->x, p->wd, b->w, p->cd[FWD],
                                       (cudnnConvolutionFwdAlgo_t)algo, ws, wsb, &zero, p->yd,
                                       b->y);
    return cudnnConvolutionBiasActivationForward(
        cu.dnn, &one, p->xd, b->x, p->wd, b->w, p->cd[FWD], (cudnnConvolutionFwdAlgo_t)algo, ws,
        wsb, &alpha2, p->yd, b->res ? b->res : b->y, p->bd, b->bias, p->ad, p->yd, b->y);
}

/* One call of direction dir with algorithm c as the step will make it (the
 * op's buffers, beta, the fused forward when cr->fused), workspace ws. */
static cudnnStatus_t conv_call(conv_priv *p, const conv_run *cr, int dir, int algo, void *ws,
                               size_t wsb)
{
    graph *g = cr->g;
    const op *o = cr->o;
    const float one = 1.0f;
    if (dir == FWD) {
        conv_bufs b;
        conv_op_bufs(g, o, p, &b);
        return conv_fwd_call(p, &b, cr->fused, algo, ws, wsb);
    }
    const void *dy = p->st[ST_IN] ? p->st[ST_IN] : CU_PTR(g, o->in[0]);
    if (dir == BWD_DATA) {
        const void *w = p->wsh ? p->wsh : CU_PTR(g, o->in[2]);
        void *dx = p->st[ST_OUT] ? p->st[ST_OUT] : CU_PTR(g, o->out[0]);
        const float beta = !p->st[ST_OUT] && CU_ACC(o, 0) ? 1.0f : 0.0f;
        return cudnnConvolutionBackwardData(cu.dnn, &one, p->wd, w, p->yd, dy, p->cd[BWD_DATA],
                                            (cudnnConvolutionBwdDataAlgo_t)algo, ws, wsb, &beta,
                                            p->xd, dx);
    }
    const void *x = p->st[ST_X] ? p->st[ST_X] : CU_PTR(g, o->in[1]);
    int sh = conv_needs_shadow(p);
    void *dw = sh ? cv.dw : CU_PTR(g, o->out[1]);
    const float beta = !sh && CU_ACC(o, 1) ? 1.0f : 0.0f;
    return cudnnConvolutionBackwardFilter(cu.dnn, &one, p->xd, x, p->yd, dy, p->cd[BWD_FILTER],
                                          (cudnnConvolutionBwdFilterAlgo_t)algo, ws, wsb, &beta,
                                          p->wd, dw);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

#define CONV_WARM 2
#define CONV_REPS 5
#define CONV_MARGIN 0.02f

/* One thing a timed race runs: run(ctx) makes one call as the step would
 * (0, or non-zero when the library refuses it); prep(ctx), when set, is
 * called once before the runs (what a step sets once, e.g. a math type). */
typedef struct conv_runner {
    int (*run)(void *ctx);
    void (*prep)(void *ctx);
    void *ctx;
} conv_runner;

/* Time r: CONV_REPS runs, each timed alone by events, after CONV_WARM;
 * t[] sorted ascending. *hx: the median over the runs of the larger of the
 * device time and the host time of the call (the library's host work and
 * launches: what a run costs an eager step that the host cannot run ahead
 * of). 0, or -1 when the call is refused (nothing of it lingers). */
static int conv_time(const conv_runner *r, cudaEvent_t *ev, float *t, float *hx)
{
    float host[CONV_REPS];
    if (r->prep)
        r->prep(r->ctx);
    for (int i = 0; i < CONV_WARM + CONV_REPS; i++) {
        int k = i - CONV_WARM;
        if (k >= 0)
            cudaCheck(cudaEventRecord(ev[2 * k], cu.s));
        double h0 = conv_clock_ms();
        if (r->run(r->ctx) != 0) {
            (void)cudaGetLastError();
            cudaCheck(cudaStreamSynchronize(cu.s));
            return -1;
        }
        if (k >= 0) {
            host[k] = (float)(conv_clock_ms() - h0);
            cudaCheck(cudaEventRecord(ev[2 * k + 1], cu.s));
        }
    }
    cudaCheck(cudaStreamSynchronize(cu.s));
    for (int k = 0; k < CONV_REPS; k++) {
        cudaCheck(cudaEventElapsedTime(&t[k], ev[2 * k], ev[2 * k + 1]));
        host[k] = host[k] > t[k] ? host[k] : t[k];
    }
    qsort(t, CONV_REPS, sizeof *t, cmp_float);
    qsort(host, CONV_REPS, sizeof *host, cmp_float);
    *hx = host[CONV_REPS / 2];
    return 0;
}

/* What a race found: the medians of the kept one and of the incumbent
 * (-1: it did not run), how many ran, and whether another was faster on
 * the device but lost with the host time of its calls counted. */
typedef struct conv_race_out {
    float ms, heur_ms;
    int timed, host_kept;
} conv_race_out;

/* The timed race of r[0..n), r[h] the incumbent (the heuristics' choice):
 * the index kept, -1 when none ran. The incumbent runs before and after
 * the others (10 runs); the fastest other on the device replaces it only
 * beyond the noise (median > 2% better, slowest run faster than the
 * incumbent's fastest) and, for an eager step, when its runs with their
 * host time counted are not slower than the incumbent's (a call with more
 * host work can lose a host-bound step what it wins on the device; either
 * way the incumbent is the floor). Used by the legacy algorithm search and
 * by the graph API's plans against the legacy call. */
static int conv_race(const conv_runner *r, int n, int h, conv_race_out *out)
{
    cudaEvent_t ev[2 * CONV_REPS];
    for (int k = 0; k < 2 * CONV_REPS; k++)
        cudaCheck(cudaEventCreate(&ev[k]));
    float th[2 * CONV_REPS] = {0}, t[CONV_REPS], best_hi = 0, best_med = 0;
    float hx, best_hx = 0, h_hx = 0, h_hx2 = 0;
    int best = -1, hok = conv_time(&r[h], ev, th, &h_hx) == 0;
    memset(out, 0, sizeof *out);
    out->timed = hok;
    for (int i = 0; i < n; i++) {
        if (i == h || conv_time(&r[i], ev, t, &hx) != 0)
            continue;
        out->timed++;
        if (best < 0 || t[CONV_REPS / 2] < best_med) {
            best = i;
            best_hi = t[CONV_REPS - 1];
            best_med = t[CONV_REPS / 2];
            best_hx = hx;
        }
    }
    if (hok) { /* the incumbent again, after the others: 10 runs */
        if (conv_time(&r[h], ev, th + CONV_REPS, &h_hx2) != 0)
            memcpy(th + CONV_REPS, th, sizeof t);
        else if (h_hx2 < h_hx)
            h_hx = h_hx2; /* the incumbent's better of its two medians */
        qsort(th, 2 * CONV_REPS, sizeof *th, cmp_float);
    }
    for (int k = 0; k < 2 * CONV_REPS; k++)
        cudaCheck(cudaEventDestroy(ev[k]));
    float h_lo = th[0], h_med = 0.5f * (th[CONV_REPS - 1] + th[CONV_REPS]);
    out->heur_ms = hok ? h_med : -1.0f;
    if (!hok && best < 0)
        return -1;
    int faster = best >= 0 && best_med < h_med * (1.0f - CONV_MARGIN) && best_hi < h_lo;
    int host_ok = !conv_eager() || best_hx <= h_hx * (1.0f + CONV_MARGIN);
    if (!hok || (faster && host_ok)) {
        out->ms = best_med;
        return best;
    }
    out->host_kept = faster;
    out->ms = h_med;
    return h;
}

/* A legacy candidate as a runner: its math type set once, then the call. */
typedef struct conv_cand_run {
    conv_priv *p;
    const conv_run *cr;
    int dir;
    const conv_cand *c;
    void *ws;
} conv_cand_run;

static void conv_cand_prep(void *ctx)
{
    conv_cand_run *k = (conv_cand_run *)ctx;
    cudnnCheck(cudnnSetConvolutionMathType(k->p->cd[k->dir], k->c->math));
}

static int conv_cand_call(void *ctx)
{
    conv_cand_run *k = (conv_cand_run *)ctx;
    return conv_call(k->p, k->cr, k->dir, k->c->algo, k->ws, k->c->memory) !=
           CUDNN_STATUS_SUCCESS;
}

/* The timed search over the acceptable candidates r[0..n) (heuristics'
 * order, r[h] the heuristics' choice, workspaces in .memory): conv_race
 * on their calls as the step makes them; the index kept, with ch->ms /
 * heur_ms / timed filled; -1 when none ran, -2 when the workspace cannot
 * be had. */
static int conv_search(conv_priv *p, const conv_run *cr, int dir, conv_cand *r, int n, int h,
                       conv_choice *ch)
{
    size_t wsb = 0, have = 0;
    for (int i = 0; i < n; i++)
        if (r[i].memory > wsb)
            wsb = r[i].memory;
    void *ws = NULL;
    if (cu_buffer(&ws, &have, wsb))
        return -2;
    conv_cand_run k[32];
    conv_runner run[32];
    for (int i = 0; i < n && i < 32; i++) {
        k[i].p = p;
        k[i].cr = cr;
        k[i].dir = dir;
        k[i].c = &r[i];
        k[i].ws = ws;
        run[i].run = conv_cand_call;
        run[i].prep = conv_cand_prep;
        run[i].ctx = &k[i];
    }
    conv_race_out out;
    int kept = conv_race(run, n < 32 ? n : 32, h, &out);
    cu_free(ws, have);
    ch->timed = out.timed;
    ch->heur_ms = out.heur_ms;
    ch->ms = out.ms;
    ch->host_kept = out.host_kept;
    cv.search_host_kept += out.host_kept;
    return kept;
}

static const char *const dir_names[NDIR] = {"fwd", "bwd_data", "bwd_filter"};

/* One line per convolution on stderr (the point's log): what runs it. */
static void conv_log(const op *o, const conv_priv *p, int dir, const conv_choice *ch, int cached)
{
    const conv_geo *c = &p->c;
    char how[224];
    if (!ch->timed)
        snprintf(how, sizeof how, "heuristics (not timed)");
    else if (ch->algo == ch->heur_algo)
        snprintf(how, sizeof how, "%.4f ms median, kept the heuristics' choice (%d timed%s)", ch->ms,
                 ch->timed,
                 ch->host_kept ? "; one faster on the device lost with the host time of its calls"
                               : "");
    else
        snprintf(how, sizeof how, "%.4f ms median, heuristics' %s %.4f ms (%+.1f%%, %d timed)",
                 ch->ms, algo_names[dir][ch->heur_algo], ch->heur_ms,
                 ch->heur_ms > 0 ? 100.0 * (ch->ms - ch->heur_ms) / ch->heur_ms : 0.0, ch->timed);
    fprintf(stderr,
            "matrix-engine: cuda: conv '%s' %s %dx%dx%dx%d k%d %dx%d s%d p%d %s %s%s: %s %s%s: %s\n",
            o->name, dir_names[dir], c->N, c->C, c->H, c->W, c->K, c->R, c->S, c->stride, c->pad,
            c->nhwc ? "nhwc" : "nchw",
            p->dt == DT_F16 ? "f16" : p->dt == DT_BF16 ? "bf16" : "f32",
            dir == FWD && ch->key.fused ? " fused" : "", algo_names[dir][ch->algo],
            ch->math == CUDNN_TENSOR_OP_MATH ? "tensor-op" :
            ch->math == CUDNN_FMA_MATH ? "fma" : "default-math",
            cached == 2 ? " (plan cache)" : cached ? " (cached)" : "", how);
}

/* ---- the persistent plan cache (plans.cu) ------------------------------------------------ */

/* The plan cache's key of a problem: every field of k, readable, the
 * workspace cap as a power of two of MiB (the cap follows the free memory),
 * and a digest of k (a field added to conv_key changes the key). */
/* The workspace cap in plan cache keys: a power of two of MiB (0 below 1 MiB). */
static size_t conv_cap_mib(size_t cap)
{
    size_t mib = cap >> 20, b = 1;
    while (b * 2 <= mib)
        b *= 2;
    return mib ? b : 0;
}

static void conv_plan_key(const conv_key *k, size_t cap, char *s, size_t n)
{
    snprintf(s, n,
             "conv1 %s n%d c%d h%d w%d k%d r%d s%d u%d p%d %s %s math%d %s fused%d acc%d need%d "
             "cap%zuM #%016llx",
             dir_names[k->dir], k->n, k->c, k->h, k->w, k->k, k->r, k->s, k->stride, k->pad,
             k->nhwc ? "nhwc" : "nchw", k->dt == DT_F16 ? "f16" : k->dt == DT_BF16 ? "bf16" : "f32",
             k->math, !k->search ? "heuristic" : k->eager ? "timed-eager" : "timed-graph", k->fused,
             k->acc, k->need, conv_cap_mib(cap),
             (unsigned long long)cu_digest(k, sizeof *k));
}

/* A fused forward's new choice, kept until its fused call has been tried
 * (conv_prepare_fwd): one that cuDNN then refuses is not stored, else every
 * later run would reject it and search it again. */
static struct {
    char key[256];
    conv_choice ch;
    int pending;
} fused_put;

static void conv_plan_put(const char *key, const conv_choice *ch)
{
    char v[160];
    snprintf(v, sizeof v, "algo=%d math=%d ws=%zu timed=%d heur=%d ms=%.6g heur_ms=%.6g", ch->algo,
             (int)ch->math, ch->ws, ch->timed, ch->heur_algo, ch->ms, ch->heur_ms);
    (void)plancache_put(cu.plans, key, v);
}

/* The choice of key from the plan cache into *ch, checked before it is
 * used: an algorithm of this direction (the required one when need >= 0),
 * a math type the precision allows, a workspace cuDNN gives for it on this
 * descriptor within the cap, and one call as the step makes it (the op's
 * buffers, before the first step) that succeeds. 1 when used; 0 when there
 * is none or it fails a check (rejected: searched again); -1 when the
 * workspace of the trial call cannot be had. */
static int conv_from_plan(conv_priv *p, const conv_run *cr, int dir, int need, size_t cap,
                          const char *key, conv_choice *ch)
{
    const char *v = plancache_get(cu.plans, key);
    if (!v)
        return 0;
    int algo, math, timed, heur, used = 0;
    size_t ws, bytes = 0;
    float ms, hms;
    const char *why = NULL;
    if (sscanf(v, "algo=%d math=%d ws=%zu timed=%d heur=%d ms=%g heur_ms=%g%n", &algo, &math, &ws,
               &timed, &heur, &ms, &hms, &used) != 7 || v[used])
        why = "malformed";
    else if (algo < 0 || algo >= 8 || !algo_names[dir][algo][0] || (need >= 0 && algo != need))
        why = "not an algorithm of this direction";
    else if ((math != CUDNN_DEFAULT_MATH && math != CUDNN_TENSOR_OP_MATH &&
              math != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION && math != CUDNN_FMA_MATH) ||
             !conv_math_ok((cudnnMathType_t)math))
        why = "a math type this precision does not allow";
    else if (conv_ws_size(p, dir, algo, (cudnnMathType_t)math, &bytes) != 0)
        why = "cuDNN refuses it for this descriptor";
    else if (bytes > cap || ws > cap)
        why = "its workspace exceeds the cap";
    else {
        size_t wsb = bytes > ws ? bytes : ws, have = 0;
        void *w = NULL;
        if (cu_buffer(&w, &have, wsb))
            return -1;
        cudnnStatus_t st = conv_call(p, cr, dir, algo, w, wsb);
        if (st != CUDNN_STATUS_SUCCESS)
            (void)cudaGetLastError(); /* refused: nothing of it may linger */
        cudaCheck(cudaStreamSynchronize(cu.s));
        cu_free(w, have);
        if (st != CUDNN_STATUS_SUCCESS)
            why = "cuDNN refuses the call";
        ws = wsb;
    }
    if (why) {
        plancache_reject(cu.plans, key, why);
        return 0;
    }
    ch->ok = 1;
    ch->algo = algo;
    ch->math = (cudnnMathType_t)math;
    ch->ws = ws;
    ch->cap = cap;
    ch->timed = timed > 0 ? timed : 0;
    ch->heur_algo = heur >= 0 && heur < 8 && algo_names[dir][heur][0] ? heur : algo;
    ch->ms = ms;
    ch->heur_ms = hms;
    return 1;
}

/* Choice ch into p for direction dir, its math type on the descriptor;
 * logged (cached: 0 searched now, 1 earlier in this process, 2 from the
 * plan cache). 1. */
static int conv_use(conv_priv *p, const conv_run *cr, int dir, const conv_choice *ch, int cached)
{
    cudnnCheck(cudnnSetConvolutionMathType(p->cd[dir], ch->math));
    p->algo[dir] = ch->algo;
    p->ws[dir] = ch->ws;
    conv_log(cr->o, p, dir, ch, cached);
    return 1;
}

/* Algorithm of direction dir (need >= 0: only that one) into p->algo / ws,
 * the descriptor's math type set to the choice's: this process's earlier
 * choice of the same problem, else the plan cache's once checked here, else
 * the heuristics or the timed search (then put in the plan cache). 1 when
 * one was found, -1 when the search's workspace cannot be had. */
static int conv_choose(conv_priv *p, const conv_run *cr, int dir, int need, size_t cap)
{
    conv_cand r[32];
    conv_choice ch;
    memset(&ch, 0, sizeof ch);
    ch.key = conv_make_key(p, dir, need, cr);
    conv_choice *e = conv_cached(&ch.key);
    if (e && (e->ok ? e->ws <= cap : cap <= e->cap))
        return e->ok ? conv_use(p, cr, dir, e, 1) : 0;
    char pkey[256]; /* then the plan cache: checked against this descriptor */
    conv_plan_key(&ch.key, cap, pkey, sizeof pkey);
    int pr = conv_from_plan(p, cr, dir, need, cap, pkey, &ch);
    if (pr > 0)
        conv_remember(&ch);
    if (pr)
        return pr > 0 ? conv_use(p, cr, dir, &ch, 2) : -1;
    int max = conv_max_count(dir), n;
    if (max > 32)
        max = 32;
    if (max < 1)
        max = 1;
    cudnnStatus_t st;
    cudnnCheck(cudnnSetConvolutionMathType(p->cd[dir], conv_math()));
    n = conv_query(p, dir, r, max, &st);
    cudnnCheck(st);
    int found = conv_pick(p, dir, need, r, n, cap, &ch);
    if (found && cu.search) {
        /* the acceptable candidates, one per (algorithm, math type), with
         * their workspaces; the heuristics' choice among them */
        conv_cand ok[32];
        int nok = 0, h = -1;
        for (int i = 0; i < n; i++) {
            size_t bytes = 0;
            if (r[i].status != CUDNN_STATUS_SUCCESS || !conv_math_ok(r[i].math) ||
                (need >= 0 && r[i].algo != need) || r[i].algo < 0 || r[i].algo >= 8 ||
                conv_ws_size(p, dir, r[i].algo, r[i].math, &bytes) != 0 || bytes > cap ||
                r[i].memory > cap)
                continue;
            int dup = 0;
            for (int j = 0; j < nok; j++)
                dup |= ok[j].algo == r[i].algo && ok[j].math == r[i].math;
            if (dup)
                continue;
            ok[nok] = r[i];
            ok[nok].memory = bytes > r[i].memory ? bytes : r[i].memory;
            if (ok[nok].algo == ch.algo && ok[nok].math == ch.math && h < 0)
                h = nok;
            nok++;
        }
        ch.heur_algo = ch.algo;
        if (h >= 0 && nok > 1) {
            int k = conv_search(p, cr, dir, ok, nok, h, &ch);
            if (k == -2)
                return -1;
            if (k >= 0) {
                if (k != h)
                    cv.search_replaced++;
                else
                    cv.search_kept++;
                ch.algo = ok[k].algo;
                ch.math = ok[k].math;
                ch.ws = ok[k].memory;
            }
        }
    }
    if (!cu.search || !ch.timed)
        ch.heur_algo = ch.algo;
    ch.ok = found;
    ch.cap = cap;
    conv_remember(&ch);
    if (!found)
        return 0;
    if (cr->fused) { /* stored once the fused call is accepted */
        snprintf(fused_put.key, sizeof fused_put.key, "%s", pkey);
        fused_put.ch = ch;
        fused_put.pending = 1;
    } else
        conv_plan_put(pkey, &ch);
    return conv_use(p, cr, dir, &ch, 0);
}

/* ---- private buffers ---------------------------------------------------------------- */

static int conv_needs_shadow(const conv_priv *p) { return p->dt != DT_F32 || p->c.nhwc; }

static void conv_fill_shadow(graph *g, int w, conv_priv *p)
{
    const conv_geo *c = &p->c;
    cu_weight_to((const float *)CU_PTR(g, w), p->wsh, p->dt, c->nhwc, c->K, c->C, c->R, c->S);
}

/* Own shadow of weight w, filled now; refilled per run when trained. */
static int conv_own_shadow(graph *g, int w, conv_priv *p, int trains)
{
    const conv_geo *c = &p->c;
    size_t bytes = (size_t)c->K * c->C * c->R * c->S * graph_dtype_size(p->dt);
    if (cu_buffer(&p->wsh, &p->wsh_bytes, bytes))
        return -1;
    p->wsh_own = 1;
    p->wsh_refill = trains && g->t[w].kind != TK_CONST;
    conv_fill_shadow(g, w, p);
    return 0;
}

/* Staging buffer in slot k for tensor t when its storage type is not dt. */
static int conv_stage(graph *g, conv_priv *p, int k, int t)
{
    if (t < 0 || CU_DT(g, t) == p->dt)
        return 0;
    return cu_buffer(&p->st[k], &p->st_bytes[k], cu_numel(g, t) * graph_dtype_size(p->dt));
}

/* Tensor t in type dt: itself, or cast into the staging buffer. */
static const void *conv_in(graph *g, int t, const conv_priv *p, int k)
{
    if (!p->st[k])
        return CU_PTR(g, t);
    cu_cast(CU_PTR(g, t), CU_DT(g, t), p->st[k], p->dt, cu_numel(g, t), 0);
    return p->st[k];
}

static const void *conv_weights(graph *g, int w, conv_priv *p)
{
    if (!p->wsh)
        return CU_PTR(g, w);
    if (p->wsh_refill)
        conv_fill_shadow(g, w, p);
    return p->wsh;
}

static void conv_ws_check(const conv_priv *p, int dir)
{
    if (p->ws[dir] > cu.ws_bytes)
        cu_fail(__FILE__, __LINE__, "conv", "workspace smaller than prepared");
}

/* ---- forward ---------------------------------------------------------------------------- */

static void conv_graph_run(graph *g, op *o, conv_priv *p);
static int conv_graph_prepare(graph *g, op *o, conv_priv *p, size_t cap);

static conv_view conv_view_of(const conv_geo *c)
{
    conv_view v = {c->N, c->C, c->H, c->W, c->K, c->OH, c->OW, c->R, c->S, c->stride, c->pad, c->nhwc, 0};
    return v;
}

/* The forward's residual and pre-activation match y: 0, or -2 said. */
static int conv_check_fwd(const graph *g, const op *o)
{
    int res = o->in[3], pre = o->out[1];
    if ((res >= 0 && !same_as(g, res, o->out[0])) || (pre >= 0 && !same_as(g, pre, o->out[0])))
        return conv_err(o, "residual / pre-activation differ from y in size, layout or type");
    return 0;
}

/* The backward's gradients match their tensors: 0, or -2 said. */
static int conv_check_bwd(const graph *g, const op *o, const conv_geo *c)
{
    int dxt = o->out[0], dwt = o->out[1];
    if ((dxt >= 0 && (cu_numel(g, dxt) != cu_numel(g, o->in[1]) || !cu_float_type(CU_DT(g, dxt)) ||
                      (g->t[dxt].layout == LAYOUT_NHWC) != c->nhwc)) ||
        (dwt >= 0 && (CU_DT(g, dwt) != DT_F32 || cu_numel(g, dwt) != cu_numel(g, o->in[2]))) ||
        (o->out[2] >= 0 && (CU_DT(g, o->out[2]) != DT_F32 || cu_numel(g, o->out[2]) != (size_t)c->K)))
        return conv_err(o, "gradient shapes or types differ from their tensors'");
    return 0;
}

/* y = act(y + bias + res), pre = the sum (cpu's epilogue), after a plain
 * convolution */
static void conv_epilogue(graph *g, const op *o, const conv_geo *c)
{
    int yt = o->out[0];
    cu_epilogue(CU_PTR(g, yt), CU_DT(g, yt), o->in[2] >= 0 ? (const float *)CU_PTR(g, o->in[2]) : NULL,
                o->in[3] >= 0 ? CU_PTR(g, o->in[3]) : NULL, o->act,
                o->out[1] >= 0 ? CU_PTR(g, o->out[1]) : NULL, c->N, c->K, (size_t)c->OH * c->OW, c->nhwc);
}

/* MATRIX_ENGINE_CONV=kernel: the convolution from its definition, then the
 * epilogue kernel */
static void conv_direct_fwd(graph *g, op *o, const conv_priv *p)
{
    const conv_geo *c = &p->c;
    conv_view v = conv_view_of(c);
    int yt = o->out[0];
    cu_conv_direct(0, &v, CU_PTR(g, o->in[0]), CU_DT(g, o->in[0]), (const float *)CU_PTR(g, o->in[1]), NULL,
                   CU_PTR(g, yt), CU_DT(g, yt), 0);
    if (o->in[2] >= 0 || o->in[3] >= 0 || o->act != ACT_NONE || o->out[1] >= 0)
        conv_epilogue(g, o, c);
}

static void conv_direct_bwd(graph *g, op *o, const conv_priv *p)
{
    const conv_geo *c = &p->c;
    conv_view v = conv_view_of(c);
    int dy = o->in[0], x = o->in[1], dxt = o->out[0], dwt = o->out[1], dbt = o->out[2];
    if (dxt >= 0)
        cu_conv_direct(1, &v, CU_PTR(g, dxt), CU_DT(g, dxt), (const float *)CU_PTR(g, o->in[2]), NULL,
                       CU_PTR(g, dy), CU_DT(g, dy), CU_ACC(o, 0));
    if (dwt >= 0)
        cu_conv_direct(2, &v, CU_PTR(g, x), CU_DT(g, x), NULL, (float *)CU_PTR(g, dwt), CU_PTR(g, dy),
                       CU_DT(g, dy), CU_ACC(o, 1));
    if (dbt >= 0)
        cu_channel_sum(CU_PTR(g, dy), CU_DT(g, dy), (float *)CU_PTR(g, dbt), CU_ACC(o, 2), c->N, c->K,
                       (size_t)c->OH * c->OW, c->nhwc);
}

static void conv_fwd(graph *g, op *o)
{
    conv_priv *p = (conv_priv *)cu.priv[o - g->ops];
    const conv_geo *c = &p->c;
    if (p->direct) {
        conv_direct_fwd(g, o, p);
        return;
    }
    conv_bufs b;
    conv_op_bufs(g, o, p, &b);
    b.x = conv_in(g, o->in[0], p, ST_IN);
    b.w = conv_weights(g, o->in[1], p);
    int yt = o->out[0];
    if (p->bias_refill && (p->epi == EPI_FUSED || p->gp)) /* the trained bias, in their type */
        cu_cast(CU_PTR(g, o->in[2]), DT_F32, p->bias, p->dt, c->K, 0);
    if (p->gp) {
        conv_graph_run(g, o, p);
        return;
    }
    conv_ws_check(p, FWD);
    if (p->epi == EPI_FUSED) {
        cudnnCheck(conv_fwd_call(p, &b, 1, p->algo[FWD], cu.ws, p->ws[FWD]));
        return;
    }
    cudnnCheck(conv_fwd_call(p, &b, 0, p->algo[FWD], cu.ws, p->ws[FWD]));
    if (p->st[ST_OUT])
        cu_cast(p->st[ST_OUT], p->dt, CU_PTR(g, yt), CU_DT(g, yt), cu_numel(g, yt), 0);
    if (p->epi == EPI_KERNEL)
        conv_epilogue(g, o, c);
}

/* cudnnConvolutionBiasActivationForward possible for this op? */
static int conv_fusable(const graph *g, const op *o, const conv_priv *p)
{
    int y = o->out[0], res = o->in[3];
    if (o->out[1] >= 0 || p->st[ST_OUT] || CU_DT(g, y) != p->dt)
        return 0;
    if (res >= 0 && CU_DT(g, res) != p->dt)
        return 0;
    return o->act == ACT_RELU || (o->act == ACT_NONE && (o->in[2] >= 0 || res >= 0));
}

/* Bias and activation of the fused call. Inference: converted once here;
 * training: at every forward (the f32 bias is trained). */
static int conv_fused_setup(graph *g, const op *o, conv_priv *p, int trains)
{
    const conv_geo *c = &p->c;
    int b = o->in[2];
    cudnnCheck(cudnnCreateTensorDescriptor(&p->bd));
    cudnnCheck(cudnnSetTensor4dDescriptor(p->bd, conv_fmt(c->nhwc), cu_dnn_type(p->dt), 1, c->K,
                                          1, 1));
    cudnnCheck(cudnnCreateActivationDescriptor(&p->ad));
    cudnnCheck(cudnnSetActivationDescriptor(
        p->ad, o->act == ACT_RELU ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
        CUDNN_NOT_PROPAGATE_NAN, 0.0));
    if (b >= 0 && p->dt == DT_F32)
        return 0; /* FLOAT config: the f32 parameter is the bias */
    if (cu_buffer(&p->bias, &p->bias_bytes, (size_t)c->K * graph_dtype_size(p->dt)))
        return -1;
    if (b < 0) {
        cudaCheck(cudaMemsetAsync(p->bias, 0, p->bias_bytes, cu.s));
        return 0;
    }
    cu_cast(CU_PTR(g, b), DT_F32, p->bias, p->dt, c->K, 0);
    p->bias_refill = trains && g->t[b].kind != TK_CONST;
    return 0;
}

/* One fused call on the real buffers (before the first step: writing y does
 * no harm); *st its status. -1 when the workspace cannot be had. */
static int conv_fused_trial(graph *g, const op *o, conv_priv *p, cudnnStatus_t *st)
{
    void *ws;
    size_t have;
    conv_bufs b;
    if (cu_buffer(&ws, &have, p->ws[FWD]))
        return -1;
    conv_op_bufs(g, o, p, &b);
    *st = conv_fwd_call(p, &b, 1, p->algo[FWD], ws, p->ws[FWD]);
    if (*st != CUDNN_STATUS_SUCCESS)
        (void)cudaGetLastError(); /* refused: nothing of it may linger */
    cudaCheck(cudaStreamSynchronize(cu.s));
    cu_free(ws, have);
    return 0;
}

static int conv_no_algo(const op *o, int dir)
{
    static const char *const what[NDIR] = {"forward", "backward data", "backward filter"};
    char why[160];
    snprintf(why, sizeof why, "no %s algorithm for this precision within the workspace cap",
             what[dir]);
    return conv_err(o, why);
}

static int conv_prepare_fwd(graph *g, op *o, conv_priv *p, int trains, size_t cap)
{
    int r, res = o->in[3], pre = o->out[1];
    if ((r = conv_check_fwd(g, o)))
        return r;
    if ((r = conv_stage(g, p, ST_IN, o->in[0])) || (r = conv_stage(g, p, ST_OUT, o->out[0])))
        return r;
    if (conv_needs_shadow(p) && (r = conv_own_shadow(g, o->in[1], p, trains)))
        return r;
    int epi = o->in[2] >= 0 || res >= 0 || pre >= 0 || o->act != ACT_NONE;
    p->epi = epi ? EPI_KERNEL : EPI_NONE;
    if (epi && conv_fusable(g, o, p)) {
        /* the search times the fused call itself, so set it up first */
        conv_run fr = {g, o, 1};
        cudnnStatus_t st;
        int c;
        if ((r = conv_fused_setup(g, o, p, trains)))
            return r;
        c = conv_choose(p, &fr,
                        FWD, o->act == ACT_NONE ? CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM : -1,
                        cap);
        if (c < 0)
            return -1;
        if (c > 0) {
            if ((r = conv_fused_trial(g, o, p, &st)))
                return r;
            if (st == CUDNN_STATUS_SUCCESS && fused_put.pending)
                conv_plan_put(fused_put.key, &fused_put.ch);
            fused_put.pending = 0;
            if (st == CUDNN_STATUS_SUCCESS)
                p->epi = EPI_FUSED;
            else if (!cv.fused_refused++)
                fprintf(stderr,
                        "matrix-engine: cuda: cudnnConvolutionBiasActivationForward refused '%s' "
                        "(%s); conv + epilogue kernel instead\n",
                        o->name, cudnnGetErrorString(st));
        }
    }
    if (p->epi != EPI_FUSED) {
        conv_run ur = {g, o, 0};
        int c = conv_choose(p, &ur, FWD, -1, cap);
        if (c < 0)
            return -1;
        if (!c)
            return conv_no_algo(o, FWD);
    }
    /* the legacy path is prepared (the fallback, and the checks' reference):
     * the cuDNN graph API may take the op from it */
    if (cv.engine != CE_LEGACY && (r = conv_graph_prepare(g, o, p, cap)))
        return r;
    if (p->gp)
        return 0;
    if (p->epi == EPI_FUSED)
        cv.fused_cudnn++;
    else if (p->epi == EPI_KERNEL)
        cv.fused_epilogue++;
    cv.algos[FWD][p->algo[FWD]]++;
    if (p->ws[FWD] > cu.ws_need)
        cu.ws_need = p->ws[FWD];
    return 0;
}

/* ---- the forward on the cuDNN graph API (convgraph.h) ------------------------------------- */

/* A forward convolution whose legacy path is prepared may instead run as
 * one cuDNN graph: conv + bias + residual + ReLU (what the op has) in one
 * operation graph, an engine config of the heuristics (mode A, then B when
 * A gives none that verifies). MATRIX_ENGINE_CONV picks: legacy (never),
 * graph (whenever a plan verifies), auto (default: when a plan verifies
 * and, under cudnn_benchmark, wins conv_race against the legacy call as
 * the step makes it; without the search, the heuristics' first plan that
 * verifies and is not compiled at run time). Every plan is run on random inputs at prepare and checked
 * against the definition (cu_conv_verify, gemm's tolerance rule), the
 * legacy call on the same inputs beside it; a plan that differs is never
 * used. The decision per problem is kept for the process (the repeated
 * shapes of a ResNet are decided once, and share one plan) and in the plan
 * cache (a stored engine is rebuilt from its integers and verified again
 * before use; a stored "legacy" is used as is: the legacy path is the
 * floor). Each forward logs one line: "conv graph 'NAME' ...: cuDNN graph
 * API ..." or "...: legacy (graph: REASON)". */

/* A decision for one problem, kept for the process. */
typedef struct cg_key {
    int engine, search, eager, strict, tf32, no_rtc;
    int stats; /* CONVOLUTION_FORWARD -> GEN_STATS ("convgs1" keys) */
    int dt, wdt, bdt, bias, res, act, nhwc, w_krsc;
    int n, c, h, w, k, r, s, stride, pad;
} cg_key;

typedef struct cg_entry {
    cg_key key;
    cg_plan *cp;        /* the plan that runs; NULL: the legacy call */
    int reason;         /* the counter a legacy decision adds to (&cv.graph_*), by index */
    char why[512];      /* how it was decided (graph) or why not (legacy) */
} cg_entry;

enum { CGR_NONE, CGR_NO_ENGINE, CGR_VERIFY, CGR_UNCHECKED, CGR_SLOWER };

static cg_entry *cg_entries;
static int ncg, capcg;

#define CG_TIMED 4 /* verified plans timed against the legacy call, at most */

/* Why op o's forward cannot be one graph (NULL: it can): the graph writes y
 * in the type cuDNN computes on, with no pre-activation output, ReLU or
 * no activation. */
static const char *conv_graph_ineligible(const graph *g, const op *o, const conv_priv *p)
{
    if (o->out[1] >= 0)
        return "the pre-activation is kept";
    if (p->st[ST_OUT] || CU_DT(g, o->out[0]) != p->dt)
        return "y is stored in another type";
    if (o->in[3] >= 0 && CU_DT(g, o->in[3]) != p->dt)
        return "the residual is stored in another type";
    if (o->act != ACT_NONE && o->act != ACT_RELU)
        return "an activation other than ReLU";
    if (o->in[2] >= 0 && p->dt != DT_F32 && !p->bias) /* not made: the fused call's setup did not run */
        return "no bias in the type cuDNN computes on";
    return NULL;
}

/* The problem of op o as the graph will read it: x as the legacy call
 * reads it (staged or not), w the shadow or the f32 parameter, the bias
 * the fused call's (converted) or the f32 parameter. */
static void conv_graph_problem(const graph *g, const op *o, const conv_priv *p, int stats,
                               cg_problem *pb)
{
    const conv_geo *c = &p->c;
    memset(pb, 0, sizeof *pb);
    pb->v.N = c->N; pb->v.C = c->C; pb->v.H = c->H; pb->v.W = c->W;
    pb->v.K = c->K; pb->v.OH = c->OH; pb->v.OW = c->OW; pb->v.R = c->R; pb->v.S = c->S;
    pb->v.stride = c->stride; pb->v.pad = c->pad;
    pb->v.nhwc = c->nhwc;
    pb->v.w_krsc = p->wsh && c->nhwc; /* the shadow is KRSC with NHWC data */
    pb->dt = p->dt;
    pb->wdt = p->wsh ? p->dt : DT_F32;
    pb->bias = o->in[2] >= 0;
    pb->bdt = p->bias ? p->dt : DT_F32;
    pb->res = o->in[3] >= 0;
    pb->act = o->act;
    pb->strict = cu.pt.precision == PREC_FP32;
    /* auto without the search takes the heuristics' first plan untimed: not
     * one whose kernel cuDNN compiles at run time (seconds of start-up per
     * point, warm plan cache or not, for a gain nobody measured) */
    pb->no_rtc = cv.engine == CE_AUTO && !cu.search;
    /* GEN_STATS: asked for by MATRIX_ENGINE_BNSTATS=conv, whose engines are
     * mostly runtime fusion: allowed, the compile time is the price asked */
    pb->stats = stats;
    if (stats)
        pb->no_rtc = 0;
    (void)g;
}

static cg_key conv_graph_key(const cg_problem *pb)
{
    cg_key k;
    memset(&k, 0, sizeof k);
    k.engine = cv.engine; k.search = cu.search; k.eager = cu.search && conv_eager();
    k.strict = pb->strict; k.tf32 = cu.pt.precision == PREC_TF32; k.no_rtc = pb->no_rtc;
    k.stats = pb->stats;
    k.dt = pb->dt; k.wdt = pb->wdt; k.bdt = pb->bias ? pb->bdt : 0; k.bias = pb->bias;
    k.res = pb->res; k.act = pb->act; k.nhwc = (int)pb->v.nhwc; k.w_krsc = pb->v.w_krsc;
    k.n = (int)pb->v.N; k.c = (int)pb->v.C; k.h = (int)pb->v.H; k.w = (int)pb->v.W;
    k.k = (int)pb->v.K; k.r = (int)pb->v.R; k.s = (int)pb->v.S;
    k.stride = (int)pb->v.stride; k.pad = (int)pb->v.pad;
    return k;
}

static const char *dt_name(int dt) { return dt == DT_F16 ? "f16" : dt == DT_BF16 ? "bf16" : "f32"; }

/* The plan cache's key of a graph decision: every field of k, the cap as
 * conv_plan_key has it, a digest of k. A GEN_STATS graph is another
 * problem: "convgs1" (a "convg1" entry, made before GEN_STATS existed, is
 * never read for it; and the digest covers k.stats). */
static void conv_graph_plan_key(const cg_key *k, size_t cap, char *s, size_t n)
{
    snprintf(s, n,
             "%s n%d c%d h%d w%d k%d r%d s%d u%d p%d %s %s w%s%s bias%d%s res%d act%d "
             "%s %s %s cap%zuM #%016llx",
             k->stats ? "convgs1" : "convg1", k->n, k->c, k->h, k->w, k->k, k->r, k->s, k->stride, k->pad,
             k->nhwc ? "nhwc" : "nchw", dt_name(k->dt), dt_name(k->wdt),
             k->w_krsc ? "-krsc" : "", k->bias, k->bias ? dt_name(k->bdt) : "", k->res, k->act,
             k->strict ? "fp32" : k->tf32 ? "tf32" : "16bit", engine_names(k->engine),
             !k->search ? "heuristic" : k->eager ? "timed-eager" : "timed-graph",
             conv_cap_mib(cap), (unsigned long long)cu_digest(k, sizeof *k));
}

/* The output of the check, for the log. */
typedef struct cg_verdict {
    long checked;
    float rel, legacy_rel; /* max |got - ref| relative to sum|terms| (graph, legacy; -1 unknown) */
    double srel;           /* GEN_STATS: the worst sum's |got - ref| / its tolerance */
    char why[200];         /* a failure: what */
} cg_verdict;

/* Scratch of a check: every buffer one allocation. */
typedef struct cg_scratch {
    void *p[12];
    size_t h[12];
    int n;
} cg_scratch;

static void *cg_get(cg_scratch *s, size_t bytes)
{
    void *p = NULL;
    if (s->n == 12) /* a bug, never reported as a shortage (sdpa.cu's sd_get) */
        cu_fail(__FILE__, __LINE__, "cg_get", "more than 12 scratch buffers (BUG)");
    if (cu_buffer(&p, &s->h[s->n], bytes ? bytes : 4))
        return NULL;
    s->p[s->n++] = p;
    return p;
}

static void cg_scratch_free(cg_scratch *s)
{
    cudaCheck(cudaStreamSynchronize(cu.s));
    for (int i = 0; i < s->n; i++)
        cu_free(s->p[i], s->h[i]);
    s->n = 0;
}

/* Unit roundoff of storage type dt (how far a stored y is from the f32
 * value a GEN_STATS plan may have summed). */
static double conv_unit_roundoff(int dt)
{
    return dt == DT_F16 ? 0x1p-11 : dt == DT_BF16 ? 0x1p-8 : 0x1p-24;
}

/* A GEN_STATS plan's sums (sums: K at [0, K), K at [k4, ...)) of its own
 * output y against their double-precision definition (bnstats.h,
 * bns_check): 1 right, 0 wrong (vd->why), -1 not checked (no memory). */
static int conv_stats_check(const conv_priv *p, const void *y, const float *sums, size_t k4,
                            cg_verdict *vd)
{
    const conv_geo *g = &p->c;
    size_t K = (size_t)g->K;
    double *ref = (double *)malloc(3 * K * sizeof(double));
    float *h = (float *)malloc(2 * k4 * sizeof(float));
    if (!ref || !h)
        cu_fail(__FILE__, __LINE__, "malloc", "out of host memory");
    int r = cu_chan_sums_ref(y, p->dt, (size_t)g->N, K, (size_t)g->OH * g->OW, g->nhwc, ref);
    if (r == 0) {
        cudaCheck(cudaMemcpyAsync(h, sums, 2 * k4 * sizeof(float), cudaMemcpyDeviceToHost, cu.s));
        cudaCheck(cudaStreamSynchronize(cu.s));
        bns_verdict v;
        double rs, rq, u = conv_unit_roundoff(p->dt);
        bns_tol(u, &rs, &rq);
        int bad = bns_check(h, h + k4, ref, K, u, &v);
        vd->srel = v.worst;
        r = bad == 0;
        if (bad)
            snprintf(vd->why, sizeof vd->why,
                     "GEN_STATS sums: %d of %zu channels outside the tolerance (%.2g of sum|y|, "
                     "%.2g of sum y^2); worst channel %d: got %.9g, double sum %.9g",
                     bad, K, rs, rq, v.worst_c, v.got, v.ref);
    } else {
        snprintf(vd->why, sizeof vd->why, "not checked: no device memory for the check");
        r = -1;
    }
    free(ref);
    free(h);
    return r;
}

/* Run plan c of problem pb and op o's legacy forward on the same random
 * inputs (scratch, never the engine's tensors; outputs poisoned with NaN
 * bytes first, so an element not written fails) and check both against
 * the definition (cu_conv_verify, rtol of y's type / TF32), and a
 * GEN_STATS plan's sums against the double sums of its own y
 * (conv_stats_check). 1 the plan is right, 0 wrong (vd->why), -1 not
 * checked (no device memory). Not split (about 95 lines): one check whose
 * buffers are shared by its two runs. */
static int conv_graph_verify(const op *o, const conv_priv *p, const cg_problem *pb,
                             const cg_cand *c, cg_verdict *vd)
{
    const conv_geo *g = &p->c;
    size_t es = graph_dtype_size(p->dt), nx = (size_t)g->N * g->C * g->H * g->W;
    size_t ny = (size_t)g->N * g->K * g->OH * g->OW, nw = (size_t)g->K * g->C * g->R * g->S;
    size_t wsb = (size_t)c->ws > p->ws[FWD] ? (size_t)c->ws : p->ws[FWD];
    cg_scratch s;
    memset(&s, 0, sizeof s);
    memset(vd, 0, sizeof *vd);
    vd->legacy_rel = -1.0f;
    void *x = cg_get(&s, nx * es), *w = cg_get(&s, nw * graph_dtype_size(pb->wdt));
    float *bf = (float *)cg_get(&s, (size_t)g->K * 4);
    void *bd = cg_get(&s, (size_t)g->K * es), *res = pb->res ? cg_get(&s, ny * es) : NULL;
    void *yg = cg_get(&s, ny * es), *yl = cg_get(&s, ny * es), *ws = cg_get(&s, wsb);
    size_t k4 = ((size_t)g->K + 3) / 4 * 4;
    float *sums = pb->stats ? (float *)cg_get(&s, 2 * k4 * sizeof(float)) : NULL;
    if (!x || !w || !bf || !bd || (pb->res && !res) || !yg || !yl || !ws || (pb->stats && !sums)) {
        cg_scratch_free(&s);
        snprintf(vd->why, sizeof vd->why, "not checked: no device memory for the check");
        return -1;
    }
    cu_fill_uniform(x, p->dt, nx, 0xc0d1);
    cu_fill_uniform(w, pb->wdt, nw, 0xc0d2);
    cu_fill_uniform(bf, DT_F32, (size_t)g->K, 0xc0d3);
    cu_cast(bf, DT_F32, bd, p->dt, (size_t)g->K, 0);
    if (res)
        cu_fill_uniform(res, p->dt, ny, 0xc0d4);
    cudaCheck(cudaMemsetAsync(yg, 0xff, ny * es, cu.s));
    cudaCheck(cudaMemsetAsync(yl, 0xff, ny * es, cu.s));
    if (sums)
        cudaCheck(cudaMemsetAsync(sums, 0xff, 2 * k4 * sizeof(float), cu.s));
    /* the bias each path reads: the graph's (and the fused call's) in its
     * type; the fused call without a bias reads its zeros; the kernel
     * epilogue the f32 one */
    const void *gbias = pb->bias ? (pb->bdt == DT_F32 ? (const void *)bf : bd) : NULL;
    conv_bufs gb = {x, w, gbias, res, yg, sums, sums ? sums + k4 : NULL};
    conv_bufs lb = {x, w, pb->bias ? gbias : p->bias, res, yl, NULL, NULL};
    cudnnStatus_t ls = conv_fwd_call(p, &lb, p->epi == EPI_FUSED, p->algo[FWD], ws, wsb);
    if (ls == CUDNN_STATUS_SUCCESS && p->epi == EPI_KERNEL)
        cu_epilogue(yl, p->dt, pb->bias ? bf : NULL, res, o->act, NULL, (size_t)g->N,
                    (size_t)g->K, (size_t)g->OH * g->OW, g->nhwc);
    if (ls != CUDNN_STATUS_SUCCESS)
        (void)cudaGetLastError();
    cudnnStatus_t gs = cg_execute(cu.dnn, pb, c->plan, &gb, ws);
    if (gs != CUDNN_STATUS_SUCCESS) {
        (void)cudaGetLastError();
        cg_scratch_free(&s);
        snprintf(vd->why, sizeof vd->why, "cudnnBackendExecute on the check's inputs: %s",
                 cudnnGetErrorString(gs));
        return 0;
    }
    float rtol = cu_verify_rtol(p->dt, cu.pt.precision == PREC_TF32);
    gemm_verdict v1, v2;
    long bad = cu_conv_verify(&pb->v, x, p->dt, w, pb->wdt, gbias, pb->bdt, res, o->act, yg,
                              ls == CUDNN_STATUS_SUCCESS ? yl : NULL, p->dt, rtol, &v1, &v2);
    int sok = bad == 0 && pb->stats ? conv_stats_check(p, yg, sums, k4, vd) : 1;
    cg_scratch_free(&s);
    if (sok != 1) { /* y right, its sums not (or not checked): vd->why says which */
        vd->checked = v1.checked;
        vd->rel = v1.worst * rtol;
        return sok;
    }
    if (bad < 0) {
        snprintf(vd->why, sizeof vd->why, "not checked: no device memory for the check");
        return -1;
    }
    vd->checked = v1.checked;
    vd->rel = v1.worst * rtol;
    if (ls == CUDNN_STATUS_SUCCESS)
        vd->legacy_rel = v2.worst * rtol;
    if (bad == 0)
        return 1;
    snprintf(vd->why, sizeof vd->why,
             "max_rel_err=%.3g (tolerance %.1g of sum|terms|, %ld of %ld elements outside; "
             "got %g, definition %g; legacy %.3g)",
             vd->rel, rtol, v1.bad, v1.checked, v1.worst_dev, v1.worst_ref, vd->legacy_rel);
    return 0;
}

/* Runners of the race: the legacy forward as the step runs it (the fused
 * call, or the call and the epilogue kernel), and a graph plan through a
 * variant pack made before the race. */
typedef struct cg_legacy_run {
    const op *o;
    const conv_priv *p;
    conv_bufs b;
    void *ws;
} cg_legacy_run;

static int cg_legacy_call(void *ctx)
{
    cg_legacy_run *k = (cg_legacy_run *)ctx;
    const conv_priv *p = k->p;
    const conv_geo *c = &p->c;
    if (conv_fwd_call(p, &k->b, p->epi == EPI_FUSED, p->algo[FWD], k->ws, p->ws[FWD]) !=
        CUDNN_STATUS_SUCCESS)
        return -1;
    if (p->epi == EPI_KERNEL)
        cu_epilogue(k->b.y, p->dt, k->o->in[2] >= 0 ? (const float *)k->b.bias : NULL, k->b.res,
                    k->o->act, NULL, (size_t)c->N, (size_t)c->K, (size_t)c->OH * c->OW,
                    c->nhwc);
    return 0;
}

typedef struct cg_graph_run {
    cudnnBackendDescriptor_t plan, vp;
} cg_graph_run;

static int cg_graph_call(void *ctx)
{
    cg_graph_run *k = (cg_graph_run *)ctx;
    return !k->vp || cudnnBackendExecute(cu.dnn, k->plan, k->vp) != CUDNN_STATUS_SUCCESS;
}

/* Race the verified plans c[0..n) (heuristics' order) against op o's
 * legacy forward (auto) or among themselves (graph), on the op's own
 * buffers before the first step: the index of the plan kept, or -1 for
 * the legacy call (*out: the medians); -2 when the workspace cannot be
 * had. */
static int conv_graph_race(graph *g, const op *o, const conv_priv *p, const cg_problem *pb,
                           cg_cand *c, int n, conv_race_out *out)
{
    size_t wsb = p->ws[FWD], have = 0;
    for (int i = 0; i < n; i++)
        if ((size_t)c[i].ws > wsb)
            wsb = (size_t)c[i].ws;
    void *ws = NULL;
    if (cu_buffer(&ws, &have, wsb))
        return -2;
    cg_legacy_run lr;
    lr.o = o;
    lr.p = p;
    conv_op_bufs(g, o, p, &lr.b);
    if (p->epi == EPI_KERNEL) /* the kernel epilogue reads the f32 parameter */
        lr.b.bias = o->in[2] >= 0 ? CU_PTR(g, o->in[2]) : NULL;
    lr.ws = ws;
    conv_bufs gb;
    conv_op_bufs(g, o, p, &gb);
    if (!pb->bias)
        gb.bias = NULL;
    cg_graph_run gr[CG_TIMED];
    conv_runner run[CG_TIMED + 1];
    /* a GEN_STATS plan does more than the legacy call (the BatchNorm's
     * sums pass): it races only the other GEN_STATS plans */
    int nr = 0, legacy = cv.engine == CE_AUTO && !pb->stats;
    if (legacy) {
        run[nr].run = cg_legacy_call;
        run[nr].prep = NULL;
        run[nr++].ctx = &lr;
    }
    for (int i = 0; i < n && i < CG_TIMED; i++) {
        gr[i].plan = c[i].plan;
        if (cg_vpack(pb, &gb, ws, &gr[i].vp) != CUDNN_STATUS_SUCCESS)
            gr[i].vp = NULL; /* its runs fail: it cannot be kept */
        run[nr].run = cg_graph_call;
        run[nr].prep = NULL;
        run[nr++].ctx = &gr[i];
    }
    int k = conv_race(run, nr, 0, out);
    for (int i = 0; i < n && i < CG_TIMED; i++)
        if (gr[i].vp)
            cudnnBackendDestroyDescriptor(gr[i].vp);
    cu_free(ws, have);
    if (k < 0) /* nothing ran: the legacy call */
        return -1;
    return legacy ? k - 1 : k;
}

/* Decide problem pb of op o into e: a stored decision when the plan cache
 * has one (an engine is rebuilt and verified first), else the heuristics'
 * plans verified and, with the search, raced. -1 when device memory for
 * the race cannot be had. Not split (about 100 lines): the decision's
 * steps share the graph, the candidates and their verdicts. */
static int conv_graph_decide(graph *g, const op *o, const conv_priv *p, const cg_problem *pb,
                             size_t cap, cg_entry *e)
{
    char pkey[320], val[640];
    const char *v;
    conv_graph_plan_key(&e->key, cap, pkey, sizeof pkey);
    cg_plan *cp = (cg_plan *)calloc(1, sizeof *cp);
    if (!cp)
        cu_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    cp->pb = *pb;
    int built = cg_build(cp, cu.dnn) == 0;
    if ((v = plancache_get(cu.plans, pkey))) {
        char eng[512], why[64];
        long long wsz;
        float ms, lms;
        int timed, used = 0;
        dg_engine de;
        cg_cand c;
        cg_verdict vd;
        const char *rej = NULL;
        if (sscanf(v, "legacy why=%63s%n", why, &used) == 1 && !v[used]) {
            e->reason = !strcmp(why, "slower") ? CGR_SLOWER
                        : !strcmp(why, "verify-failed") ? CGR_VERIFY
                                                        : CGR_NO_ENGINE;
            snprintf(e->why, sizeof e->why, "graph: %s (plan cache)", why);
            cg_free(cp);
            free(cp);
            return 0;
        }
        if (sscanf(v, "graph eng=%511s ws=%lld ms=%g legacy_ms=%g timed=%d%n", eng, &wsz, &ms,
                   &lms, &timed, &used) != 5 || v[used] || dg_engine_parse(eng, &de))
            rej = "malformed";
        else if (!built)
            rej = "the graph cannot be built";
        else if (cg_plan_of(cp, cu.dnn, &de, cap, &c))
            rej = "its engine config does not make a plan here";
        else if (conv_graph_verify(o, p, pb, &c, &vd) != 1) {
            rej = "it failed the numerical check";
            cg_cand_free(&c);
        } else if (cg_keep(cp, &c))
            rej = "cuDNN refuses to keep it";
        if (!rej) {
            snprintf(e->why, sizeof e->why,
                     "engine %.300s (plan cache), verified on %ld elements max_rel_err %.2g; "
                     "%.4f ms median, legacy %.4f ms",
                     eng, vd.checked, vd.rel, ms, lms);
            e->cp = cp;
            return 0;
        }
        plancache_reject(cu.plans, pkey, rej);
        cg_free(cp); /* and again from the start */
        memset(cp, 0, sizeof *cp);
        cp->pb = *pb;
        built = cg_build(cp, cu.dnn) == 0;
    }
    cg_cand c[CG_CONFIGS];
    cg_verdict vc[CG_CONFIGS]; /* the verified ones' verdicts */
    int n = 0, nver = 0;
    cg_verdict vd, worst;
    memset(&worst, 0, sizeof worst);
    static const cudnnBackendHeurMode_t modes[2] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_B};
    /* plans one at a time in the heuristics' order, each verified, until
     * one (without the search) or CG_TIMED (to race) are right */
    char last[400] = "";
    int want = cu.search ? CG_TIMED : 1;
    for (int m = 0; built && m < 2 && !nver; m++) {
        cudnnBackendDescriptor_t cfg[CG_CONFIGS];
        n = cg_configs(cp, modes[m], cfg);
        if (!n)
            snprintf(last, sizeof last, "%.390s", cp->b.why);
        for (int i = 0; i < n && nver < want; i++) {
            if (cg_try(cp, cu.dnn, cfg[i], cap, &c[nver], last, sizeof last))
                continue;
            int r = conv_graph_verify(o, p, pb, &c[nver], &vd);
            if (r == 1) { /* verified, in the heuristics' order */
                vc[nver++] = vd;
                continue;
            }
            if (r == 0 && (!worst.why[0] || vd.rel > worst.rel))
                worst = vd;
            if (r == -1)
                e->reason = CGR_UNCHECKED;
            cg_cand_free(&c[nver]);
        }
        dg_free_configs(cfg, CG_CONFIGS);
    }
    int k = nver ? 0 : -1;
    conv_race_out ro;
    memset(&ro, 0, sizeof ro);
    if (nver && cu.search) {
        k = conv_graph_race(g, o, p, pb, c, nver, &ro);
        if (k == -2) {
            for (int i = 0; i < nver; i++)
                cg_cand_free(&c[i]);
            cg_free(cp);
            free(cp);
            return -1;
        }
    }
    if (k >= 0 && cg_keep(cp, &c[k]) != 0) { /* c[k] destroyed there: cp->b.why says why */
        for (int i = 0; i < nver; i++)
            if (i != k)
                cg_cand_free(&c[i]);
        nver = 0;
        k = -1;
    }
    if (k >= 0) {
        char eng[512];
        dg_engine_str(&cp->use.eng, eng, sizeof eng); /* "" when it does not fit: not stored */
        char chk[160];
        snprintf(chk, sizeof chk, "verified on %ld elements max_rel_err %.2g (legacy %.2g)",
                 vc[k].checked, vc[k].rel, vc[k].legacy_rel);
        if (pb->stats) /* the sums' worst error, as a fraction of their tolerance */
            snprintf(chk + strlen(chk), sizeof chk - strlen(chk), ", sums at %.2g of tolerance",
                     vc[k].srel);
        if (cu.search)
            snprintf(e->why, sizeof e->why, "engine %.300s, %s; %.4f ms median, %s %.4f ms (%d timed)",
                     eng, chk, ro.ms,
                     cv.engine == CE_AUTO && !pb->stats ? "legacy" : "the heuristics' first",
                     ro.heur_ms, ro.timed);
        else
            snprintf(e->why, sizeof e->why, "engine %.300s, %s; the heuristics' first (not timed)",
                     eng, chk);
        snprintf(val, sizeof val, "graph eng=%s ws=%lld ms=%.6g legacy_ms=%.6g timed=%d", eng,
                 (long long)cp->use.ws, cu.search ? ro.ms : 0.0, cu.search ? ro.heur_ms : 0.0,
                 ro.timed);
        if (!eng[0])
            val[0] = 0;
        e->cp = cp;
    } else {
        const char *tag;
        if (nver) {
            e->reason = CGR_SLOWER;
            tag = "slower";
            snprintf(e->why, sizeof e->why,
                     "graph: slower: legacy %.4f ms median, %d timed (the best graph plan did not "
                     "beat it beyond the noise%s)", ro.heur_ms, ro.timed,
                     ro.host_kept ? ", or lost with the host time of its calls" : "");
        } else if (worst.why[0]) {
            e->reason = CGR_VERIFY;
            tag = "verify-failed";
            snprintf(e->why, sizeof e->why, "graph: verify failed %.200s", worst.why);
        } else if (e->reason == CGR_UNCHECKED) {
            tag = NULL; /* out of memory for the check: not a lasting decision */
            snprintf(e->why, sizeof e->why, "graph: not checked: no device memory for the check");
        } else {
            e->reason = CGR_NO_ENGINE;
            tag = "no-engine";
            snprintf(e->why, sizeof e->why, "graph: no engine (%.300s)",
                     built ? last : cp->b.why);
        }
        if (tag)
            snprintf(val, sizeof val, "legacy why=%s", tag);
        else
            val[0] = 0;
        cg_free(cp);
        free(cp);
    }
    for (int i = 0; i < nver; i++)
        if (i != k)
            cg_cand_free(&c[i]);
    if (val[0])
        (void)plancache_put(cu.plans, pkey, val);
    return 0;
}

/* The decision of problem pb for op o, kept for the process: the entry
 * (*cached: an earlier op of the same problem made it), or NULL when
 * device memory for the checks cannot be had. */
static cg_entry *conv_graph_entry(graph *g, const op *o, const conv_priv *p, const cg_problem *pb,
                                  size_t cap, int *cached)
{
    cg_key key = conv_graph_key(pb);
    for (int i = 0; i < ncg; i++)
        if (!memcmp(&cg_entries[i].key, &key, sizeof key)) {
            *cached = 1;
            return &cg_entries[i];
        }
    *cached = 0;
    if (ncg == capcg) {
        int cap2 = capcg ? 2 * capcg : 32;
        cg_entry *ne = (cg_entry *)realloc(cg_entries, cap2 * sizeof *ne);
        if (!ne)
            cu_fail(__FILE__, __LINE__, "realloc", "out of host memory");
        cg_entries = ne;
        capcg = cap2;
    }
    cg_entry *e = &cg_entries[ncg];
    memset(e, 0, sizeof *e);
    e->key = key;
    if (conv_graph_decide(g, o, p, pb, cap, e))
        return NULL;
    ncg++;
    return e;
}

static void conv_graph_log(const op *o, const conv_priv *p, const char *what, int cached,
                           const char *how)
{
    const conv_geo *c = &p->c;
    fprintf(stderr,
            "matrix-engine: cuda: %s '%s' %dx%dx%dx%d k%d %dx%d s%d p%d %s %s%s%s%s%s: %s\n",
            what, o->name, c->N, c->C, c->H, c->W, c->K, c->R, c->S, c->stride, c->pad,
            c->nhwc ? "nhwc" : "nchw", dt_name(p->dt), o->in[2] >= 0 ? " +bias" : "",
            o->in[3] >= 0 ? " +res" : "", o->act == ACT_RELU ? " +relu" : "",
            cached ? " (cached)" : "", how);
}

/* MATRIX_ENGINE_BNSTATS=conv, forward op o whose y feeds BatchNorm p->bn
 * (bns_pair): the convolution as CONVOLUTION_FORWARD -> GEN_STATS when a
 * plan verifies (y and the sums), the BatchNorm then reading its sums
 * (cu_conv_bn_stats); else the op goes on to the plain decision and the
 * BatchNorm sums y itself (conv_genstats_fallback). Logged either way.
 * 1 taken, 0 not, -1 no device memory. */
static int conv_graph_stats(graph *g, op *o, conv_priv *p, size_t cap)
{
    const char *no = conv_graph_ineligible(g, o, p);
    char how[700];
    int cached = 0;
    cg_entry *e = NULL;
    if (!no) {
        p->bns_k4 = ((size_t)p->c.K + 3) / 4 * 4;
        if (cu_buffer((void **)&p->bns, &p->bns_bytes, 2 * p->bns_k4 * sizeof(float)))
            return -1;
        cg_problem pb;
        conv_graph_problem(g, o, p, 1, &pb);
        if (!(e = conv_graph_entry(g, o, p, &pb, cap, &cached)))
            return -1;
    }
    if (e && e->cp) {
        p->gp = e->cp;
        cv.genstats_ops++;
        cv.bn_conv[p->bn] = (int)(o - g->ops);
        if ((size_t)e->cp->use.ws > cu.ws_need)
            cu.ws_need = (size_t)e->cp->use.ws;
        snprintf(how, sizeof how,
                 "cuDNN graph API CONVOLUTION_FORWARD -> GEN_STATS, BatchNorm '%.64s' reads its "
                 "f32 sums; %.500s",
                 g->ops[p->bn].name, e->why);
        conv_graph_log(o, p, "conv genstats", cached, how);
        return 1;
    }
    cu_free(p->bns, p->bns_bytes);
    p->bns = NULL;
    p->bns_bytes = 0;
    cv.genstats_fallback++;
    snprintf(how, sizeof how, "not fused: BatchNorm '%.64s' sums y itself (genstats: %.500s)",
             g->ops[p->bn].name, no ? no : e->why);
    conv_graph_log(o, p, "conv genstats", cached, how);
    return 0;
}

/* The graph path for forward op o (legacy already prepared in p): p->gp
 * when a plan is used; the decision logged. -1 when device memory for the
 * checks cannot be had (prepare fails as for the legacy search). */
static int conv_graph_prepare(graph *g, op *o, conv_priv *p, size_t cap)
{
    const char *no = conv_graph_ineligible(g, o, p);
    char how[640];
    cg_entry *e = NULL;
    int cached = 0;
    if (cv.bnstats == BNS_CONV && p->bn >= 0) {
        int r = conv_graph_stats(g, o, p, cap);
        if (r)
            return r < 0 ? -1 : 0;
    }
    if (no) {
        cv.graph_ineligible++;
        snprintf(how, sizeof how, "legacy (graph: not one graph: %s)", no);
    } else {
        cg_problem pb;
        conv_graph_problem(g, o, p, 0, &pb);
        if (!(e = conv_graph_entry(g, o, p, &pb, cap, &cached)))
            return -1;
        if (e->cp) {
            p->gp = e->cp;
            cv.graph_ops++;
            if ((size_t)e->cp->use.ws > cu.ws_need)
                cu.ws_need = (size_t)e->cp->use.ws;
            snprintf(how, sizeof how, "cuDNN graph API, %s", e->why);
        } else {
            cv.graph_no_engine += e->reason == CGR_NO_ENGINE;
            cv.graph_verify_failed += e->reason == CGR_VERIFY;
            cv.graph_unchecked += e->reason == CGR_UNCHECKED;
            cv.graph_slower += e->reason == CGR_SLOWER;
            snprintf(how, sizeof how, "legacy (%s)", e->why);
        }
    }
    conv_graph_log(o, p, "conv graph", cached, how);
    return 0;
}

/* The step's graph forward: the op's variant pack (its tensors, cu.ws),
 * made at its first run as cu.ws exists only after every prepare. */
static void conv_graph_run(graph *g, op *o, conv_priv *p)
{
    if ((size_t)p->gp->use.ws > cu.ws_bytes)
        cu_fail(__FILE__, __LINE__, "conv", "workspace smaller than prepared");
    if (!p->gvp) {
        conv_bufs b;
        conv_op_bufs(g, o, p, &b);
        if (!p->gp->pb.bias)
            b.bias = NULL;
        cudnnCheck(cg_vpack(&p->gp->pb, &b, cu.ws, &p->gvp));
    }
    cudnnCheck(cudnnBackendExecute(cu.dnn, p->gp->use.plan, p->gvp));
}

static void conv_graph_release(void)
{
    for (int i = 0; i < ncg; i++)
        if (cg_entries[i].cp) {
            cg_free(cg_entries[i].cp);
            free(cg_entries[i].cp);
        }
    free(cg_entries);
    cg_entries = NULL;
    ncg = capcg = 0;
}

/* ---- backward ---------------------------------------------------------------------------- */

static void conv_bwd(graph *g, op *o)
{
    conv_priv *p = (conv_priv *)cu.priv[o - g->ops];
    const conv_geo *c = &p->c;
    if (p->direct) {
        conv_direct_bwd(g, o, p);
        return;
    }
    const float one = 1.0f;
    const void *dy = conv_in(g, o->in[0], p, ST_IN);
    const void *x = p->st_shared ? p->st[ST_X] : conv_in(g, o->in[1], p, ST_X);
    int dxt = o->out[0], dwt = o->out[1], dbt = o->out[2];
    if (dxt >= 0) {
        const void *w = conv_weights(g, o->in[2], p);
        void *dx = p->st[ST_OUT] ? p->st[ST_OUT] : CU_PTR(g, dxt);
        const float beta = !p->st[ST_OUT] && CU_ACC(o, 0) ? 1.0f : 0.0f;
        conv_ws_check(p, BWD_DATA);
        cudnnCheck(cudnnConvolutionBackwardData(cu.dnn, &one, p->wd, w, p->yd, dy, p->cd[BWD_DATA],
                                                (cudnnConvolutionBwdDataAlgo_t)p->algo[BWD_DATA],
                                                cu.ws, p->ws[BWD_DATA], &beta, p->xd, dx));
        if (p->st[ST_OUT])
            cu_cast(dx, p->dt, CU_PTR(g, dxt), CU_DT(g, dxt), cu_numel(g, dxt), CU_ACC(o, 0));
    }
    if (dwt >= 0) {
        float *dw = (float *)CU_PTR(g, dwt);
        int sh = conv_needs_shadow(p); /* the filter is in dt / KRSC: via the scratch */
        const float beta = !sh && CU_ACC(o, 1) ? 1.0f : 0.0f;
        conv_ws_check(p, BWD_FILTER);
        cudnnCheck(cudnnConvolutionBackwardFilter(
            cu.dnn, &one, p->xd, x, p->yd, dy, p->cd[BWD_FILTER],
            (cudnnConvolutionBwdFilterAlgo_t)p->algo[BWD_FILTER], cu.ws, p->ws[BWD_FILTER], &beta,
            p->wd, sh ? cv.dw : dw));
        if (sh)
            cu_weight_grad_from(cv.dw, p->dt, c->nhwc, dw, CU_ACC(o, 1), c->K, c->C, c->R, c->S);
    }
    if (dbt >= 0)
        cu_channel_sum(CU_PTR(g, o->in[0]), CU_DT(g, o->in[0]), (float *)CU_PTR(g, dbt),
                       CU_ACC(o, 2), c->N, c->K, (size_t)c->OH * c->OW, c->nhwc);
}

/* The forward op of backward o, when it is a prepared conv of the same
 * weights and types, else NULL. */
static conv_priv *conv_forward_of(graph *g, const op *o, const conv_priv *p)
{
    int f = o->fwd, i = (int)(o - g->ops);
    if (f < 0 || f >= i || g->ops[f].type != OP_CONV || g->ops[f].in[1] != o->in[2] ||
        g->ops[f].in[0] != o->in[1] || !cu.priv[f])
        return NULL;
    conv_priv *fp = (conv_priv *)cu.priv[f];
    if (fp->dt != p->dt || fp->c.nhwc != p->c.nhwc || memcmp(&fp->c, &p->c, sizeof p->c))
        return NULL;
    return fp;
}

static int conv_prepare_bwd(graph *g, op *o, conv_priv *p, int trains, size_t cap)
{
    int r, dxt = o->out[0], dwt = o->out[1];
    const conv_geo *c = &p->c;
    conv_priv *fp = conv_forward_of(g, o, p);
    if ((r = conv_check_bwd(g, o, c)))
        return r;
    if ((r = conv_stage(g, p, ST_IN, o->in[0])) || (dxt >= 0 && (r = conv_stage(g, p, ST_OUT, dxt))))
        return r;
    if (fp && fp->st[ST_IN]) {
        p->st[ST_X] = fp->st[ST_IN]; /* the forward's staged x, still valid */
        p->st_shared = 1;
    } else if ((r = conv_stage(g, p, ST_X, o->in[1])))
        return r;
    if (conv_needs_shadow(p) && dxt >= 0) {
        if (fp && fp->wsh) {
            p->wsh = fp->wsh; /* refilled by the forward of the same step */
            p->wsh_bytes = fp->wsh_bytes;
        } else if ((r = conv_own_shadow(g, o->in[2], p, trains)))
            return r;
    }
    if (conv_needs_shadow(p) && dwt >= 0) {
        size_t bytes = (size_t)c->K * c->C * c->R * c->S * graph_dtype_size(p->dt);
        if (bytes > cv.dw_bytes) {
            cu_free(cv.dw, cv.dw_bytes);
            if (cu_buffer(&cv.dw, &cv.dw_bytes, bytes))
                return -1;
        }
    }
    static const int dirs[2] = {BWD_DATA, BWD_FILTER};
    for (int k = 0; k < 2; k++) {
        int d = dirs[k];
        if (o->out[k] < 0)
            continue;
        conv_run br = {g, o, 0};
        int c = conv_choose(p, &br, d, -1, cap);
        if (c < 0)
            return -1;
        if (!c)
            return conv_no_algo(o, d);
        cv.algos[d][p->algo[d]]++;
        if (p->ws[d] > cu.ws_need)
            cu.ws_need = p->ws[d];
    }
    return 0;
}

/* ---- the file's interface ----------------------------------------------------------------- */

void cu_conv_register(backend_op_fn *t)
{
    t[OP_CONV] = conv_fwd;
    t[OP_CONV_BWD] = conv_bwd;
}

static void conv_info_algos(char *s, size_t n, const char *key, int dir)
{
    size_t len = strlen(s);
    int any = 0;
    for (int a = 0; a < 8; a++)
        any |= cv.algos[dir][a];
    if (!any)
        return;
    len += snprintf(s + len, n > len ? n - len : 0, "%s=", key);
    for (int a = 0, first = 1; a < 8; a++)
        if (cv.algos[dir][a]) {
            len += snprintf(s + len, n > len ? n - len : 0, "%s%s:%d", first ? "" : ",",
                            algo_names[dir][a], cv.algos[dir][a]);
            first = 0;
        }
    if (len < n)
        snprintf(s + len, n - len, "\n");
}

static void conv_make_info(void)
{
    char *s = cv.info;
    size_t n = sizeof cv.info;
    snprintf(s, n,
             "conv_fused_cudnn=%d\nconv_fused_epilogue=%d\nconv_algo_search=%s\n"
             "conv_search_kept=%d\nconv_search_replaced=%d\nconv_search_host_kept=%d\n"
             "conv_cudnn_version=%zu\nconv_engine=%s\nconv_graph_ops=%d\n"
             "conv_graph_no_engine=%d\nconv_graph_verify_failed=%d\nconv_graph_unchecked=%d\n"
             "conv_graph_slower=%d\nconv_graph_ineligible=%d\nconv_bnstats=%s\n"
             "conv_genstats_ops=%d\nconv_genstats_fallback=%d\nconv_genstats_unpaired=%d\n",
             cv.fused_cudnn, cv.fused_epilogue,
             cu.search ? "timed" : "heuristic",
             cv.search_kept, cv.search_replaced, cv.search_host_kept, cudnnGetVersion(),
             engine_names(cv.engine), cv.graph_ops, cv.graph_no_engine, cv.graph_verify_failed,
             cv.graph_unchecked, cv.graph_slower, cv.graph_ineligible, knob_value(KNOB_BNSTATS, cv.bnstats),
             cv.genstats_ops, cv.genstats_fallback, cv.genstats_unpaired);
    conv_info_algos(s, n, "conv_algos_fwd", FWD);
    conv_info_algos(s, n, "conv_algos_bwd_data", BWD_DATA);
    conv_info_algos(s, n, "conv_algos_bwd_filter", BWD_FILTER);
}

/* MATRIX_ENGINE_CONV into cv.engine: 0, or -3 (a refused setting: exit 2)
 * with the message. The engine refused a bad value before anything ran
 * (knobs_check); a program that prepares without the engine's session
 * (tests/gpu/ops_check) gets the same message here. */
static int conv_engine_env(void)
{
    char err[256];
    int v = knob_get(KNOB_CONV, err, sizeof err);
    if (v < 0) {
        fprintf(stderr, "matrix-engine: cuda: %s\n", err);
        return -3;
    }
    cv.engine = v;
    return 0;
}

/* MATRIX_ENGINE_BNSTATS into cv.bnstats (after conv_engine_env): 0, or -3
 * (a refused setting: exit 2) with the message (a value not known; conv under MATRIX_ENGINE_CONV=legacy,
 * which builds no graph). */
static int conv_bnstats_env(void)
{
    char err[256];
    int m = knob_get(KNOB_BNSTATS, err, sizeof err);
    if (m < 0) {
        fprintf(stderr, "matrix-engine: cuda: %s\n", err);
        return -3;
    }
    if (m == BNS_CONV && (cv.engine == CE_LEGACY || cv.engine == CE_KERNEL)) {
        fprintf(stderr, "matrix-engine: cuda: MATRIX_ENGINE_BNSTATS=conv needs the cuDNN graph "
                        "API, which MATRIX_ENGINE_CONV=%s turns off\n", engine_names(cv.engine));
        return -3;
    }
    cv.bnstats = m;
    return 0;
}

/* cv.bn_conv for ops [0, nrun), every entry -1 (no BatchNorm reads sums
 * of a convolution yet). */
static void conv_bnstats_table(int nrun)
{
    cv.nbn = nrun;
    cv.bn_conv = (int *)malloc((nrun ? nrun : 1) * sizeof *cv.bn_conv);
    if (!cv.bn_conv)
        cu_fail(__FILE__, __LINE__, "malloc", "out of host memory");
    for (int i = 0; i < nrun; i++)
        cv.bn_conv[i] = -1;
}

/* The private state of conv op i, in cu.priv[i]. */
static conv_priv *conv_priv_new(int i)
{
    conv_priv *p = (conv_priv *)calloc(1, sizeof *p);
    if (!p)
        cu_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    cu.priv[i] = p;
    p->dt = cu.act_dt;
    p->bn = -1;
    return p;
}

/* MATRIX_ENGINE_CONV=kernel: no cuDNN handle, no descriptors; each op's
 * geometry, its gradients' shapes and types checked as the cuDNN paths
 * check them. */
static int conv_direct_prepare(graph *g, int nrun)
{
    cv.prepared = 1;
    for (int i = 0; i < nrun; i++) {
        op *o = &g->ops[i];
        if (o->type != OP_CONV && o->type != OP_CONV_BWD)
            continue;
        conv_priv *p = conv_priv_new(i);
        p->direct = 1;
        int r = conv_geometry(g, o, &p->c);
        if (!r)
            r = o->type == OP_CONV ? conv_check_fwd(g, o) : conv_check_bwd(g, o, &p->c);
        if (r)
            return r;
    }
    conv_make_info();
    return 0;
}

/* The log's two lines on how convolutions and BatchNorm statistics will run
 * (MATRIX_ENGINE_CONV, MATRIX_ENGINE_BNSTATS, cudnn_benchmark). */
static void conv_log_paths(void)
{
    fprintf(stderr,
            "matrix-engine: cuda: convolutions: MATRIX_ENGINE_CONV=%s: %s\n",
            engine_names(cv.engine),
            cv.engine == CE_KERNEL ? "every direction on the engine's own kernel, from the definition "
                                     "(no cuDNN; a slow reference)"
            : cv.engine == CE_LEGACY ? "cuDNN's legacy API only"
            : cv.engine == CE_GRAPH
                ? "forwards on the cuDNN graph API wherever a plan verifies, else legacy"
                : cu.search ? "forwards on the cuDNN graph API where a plan verifies and beats the "
                              "legacy call (cudnn_benchmark), else legacy"
                            : "forwards on the cuDNN graph API where the heuristics' first plan "
                              "that verifies and is not compiled at run time exists, else legacy");
    fprintf(stderr, "matrix-engine: cuda: BatchNorm statistics: MATRIX_ENGINE_BNSTATS=%s: %s\n",
            knob_value(KNOB_BNSTATS, cv.bnstats),
            cv.bnstats == BNS_CONV
                ? "a training BatchNorm fed by a convolution without epilogue reads the f32 sums "
                  "of cuDNN's GEN_STATS (CONVOLUTION_FORWARD -> GEN_STATS graph, verified), else "
                  "sums its input itself"
                : "every BatchNorm sums its input itself (f32 per 16 rows, then double)");
}

int cu_conv_prepare(graph *g, int nrun)
{
    int any = 0, r;
    free(cv.bn_conv);
    memset(&cv, 0, sizeof cv);
    for (int i = 0; i < nrun; i++)
        any |= g->ops[i].type == OP_CONV || g->ops[i].type == OP_CONV_BWD;
    if ((r = conv_engine_env()) || (r = conv_bnstats_env()))
        return r;
    if (!any)
        return 0;
    conv_bnstats_table(nrun);
    conv_log_paths();
    if (cv.engine == CE_KERNEL)
        return conv_direct_prepare(g, nrun);
    cudnnStatus_t st = cudnnCreate(&cu.dnn);
    if (st != CUDNN_STATUS_SUCCESS) {
        cu.dnn = NULL;
        fprintf(stderr, "matrix-engine: cuda: cudnnCreate: %s\n", cudnnGetErrorString(st));
        return -2;
    }
    cudnnCheck(cudnnSetStream(cu.dnn, cu.s));
    cv.prepared = 1;
    size_t free_b = 0, total_b = 0;
    cudaCheck(cudaMemGetInfo(&free_b, &total_b));
    size_t cap = free_b / 4 < ((size_t)1 << 30) ? free_b / 4 : (size_t)1 << 30;
    int trains = cu_plan_trains(g, nrun);
    for (int i = 0; i < nrun; i++) {
        op *o = &g->ops[i];
        if (o->type != OP_CONV && o->type != OP_CONV_BWD)
            continue;
        conv_priv *p = conv_priv_new(i);
        if ((r = conv_geometry(g, o, &p->c)) || (r = conv_descriptors(o, p)))
            return r;
        if (cv.bnstats == BNS_CONV && o->type == OP_CONV) {
            const char *why;
            p->bn = bns_pair(g, nrun, i, &why);
            if (p->bn < 0) {
                cv.genstats_unpaired++;
                fprintf(stderr, "matrix-engine: cuda: conv genstats '%s': not paired: %s\n",
                        o->name, why);
            }
        }
        r = o->type == OP_CONV ? conv_prepare_fwd(g, o, p, trains, cap)
                               : conv_prepare_bwd(g, o, p, trains, cap);
        if (r)
            return r;
    }
    if (cv.engine != CE_LEGACY)
        fprintf(stderr,
                "matrix-engine: cuda: convolutions: %d forward(s) on the cuDNN graph API; legacy: %d "
                "no engine, %d failed the check, %d not checked, %d slower, %d not one graph\n",
                cv.graph_ops, cv.graph_no_engine, cv.graph_verify_failed, cv.graph_unchecked,
                cv.graph_slower, cv.graph_ineligible);
    if (cv.bnstats == BNS_CONV)
        fprintf(stderr,
                "matrix-engine: cuda: BatchNorm statistics: %d convolution(s) with GEN_STATS "
                "(their BatchNorm skips its sums pass), %d fell back (no plan, or its check "
                "failed), %d not paired\n",
                cv.genstats_ops, cv.genstats_fallback, cv.genstats_unpaired);
    conv_make_info();
    return 0;
}

void cu_conv_release(graph *g)
{
    for (int i = 0; cu.priv && g && i < cu.nops && i < g->nops; i++) {
        if (g->ops[i].type != OP_CONV && g->ops[i].type != OP_CONV_BWD)
            continue;
        conv_priv *p = (conv_priv *)cu.priv[i];
        if (!p)
            continue;
        if (p->xd)
            cudnnCheck(cudnnDestroyTensorDescriptor(p->xd));
        if (p->yd)
            cudnnCheck(cudnnDestroyTensorDescriptor(p->yd));
        if (p->bd)
            cudnnCheck(cudnnDestroyTensorDescriptor(p->bd));
        if (p->wd)
            cudnnCheck(cudnnDestroyFilterDescriptor(p->wd));
        if (p->ad)
            cudnnCheck(cudnnDestroyActivationDescriptor(p->ad));
        if (p->gvp)
            cudnnBackendDestroyDescriptor(p->gvp);
        for (int d = 0; d < NDIR; d++)
            if (p->cd[d])
                cudnnCheck(cudnnDestroyConvolutionDescriptor(p->cd[d]));
        if (p->wsh_own)
            cu_free(p->wsh, p->wsh_bytes);
        cu_free(p->bns, p->bns_bytes);
        cu_free(p->bias, p->bias_bytes);
        for (int k = 0; k < NST; k++)
            if (!(k == ST_X && p->st_shared))
                cu_free(p->st[k], p->st_bytes[k]);
        free(p);
        cu.priv[i] = NULL;
    }
    cu_free(cv.dw, cv.dw_bytes);
    cv.dw = NULL;
    cv.dw_bytes = 0;
    conv_graph_release(); /* the plans, before their handle */
    free(cv.bn_conv);
    cv.bn_conv = NULL;
    cv.nbn = 0;
    if (cu.dnn)
        cudnnCheck(cudnnDestroy(cu.dnn));
    cu.dnn = NULL;
}

const char *cu_conv_info(void) { return cv.prepared ? cv.info : ""; }

int cu_conv_bn_stats(int bn, const float **sum, const float **sqsum)
{
    if (!cv.bn_conv || bn < 0 || bn >= cv.nbn || cv.bn_conv[bn] < 0 || !cu.priv)
        return 0;
    const conv_priv *p = (const conv_priv *)cu.priv[cv.bn_conv[bn]];
    if (!p || !p->bns)
        return 0;
    *sum = p->bns;
    *sqsum = p->bns + p->bns_k4;
    return 1;
}

#else /* !HAVE_CUDNN: the backend refuses to start (backend_cuda_setup) */

void cu_conv_register(backend_op_fn *) {}

int cu_conv_prepare(graph *g, int nrun)
{
    for (int i = 0; i < nrun; i++)
        if (g->ops[i].type == OP_CONV || g->ops[i].type == OP_CONV_BWD) {
            fprintf(stderr, "matrix-engine: cuda: built without cuDNN: no convolutions\n");
            return -2;
        }
    return 0;
}

void cu_conv_release(graph *) {}
const char *cu_conv_info(void) { return ""; }
int cu_conv_bn_stats(int, const float **, const float **) { return 0; }

#endif
