/* ops.cu - the CUDA kernels of every op of the convolutional models except
 * convolution (conv.cu) and linear (gemm.cu): BatchNorm and its backward,
 * activations, max / global average pooling, flatten, dropout, add / copy,
 * log-softmax / NLL, the optimizers (SGD and AdamW: one multi-tensor kernel
 * per type, launched by the first op of the type over a table of every
 * tensor's chunks made at prepare; MATRIX_ENGINE_OPTIM=per-tensor runs a
 * kernel per op instead, the same arithmetic), the multi-tensor EMA, and
 * dynamic loss scaling for fp16 training; and BERT's: the embedding
 * (backward: a deterministic scatter-add, rows sorted by id with cub, each
 * run of equal ids summed in row order), layer norm (a warp per row; dgamma
 * / dbeta from per-chunk partials summed in order), attention (a warp per
 * query row: scores, softmax saved in f32, the probability-dropout mask as
 * the CPU draws it, then the weighted sum of v; the backward in two passes,
 * query rows then key rows, through a saved dS) and the token-0 select.
 * AdamW's step count is read on the device, skipped fp16 steps not counted.
 * The attention kernels are plain SIMT code, not flash attention: correct
 * first.
 *
 * Semantics are engine/cpu/ops.c's, op for op: the same in / out slots, the
 * same formulas, the acc bits (bit k of o->acc set: add into out[k], clear:
 * overwrite), the same tie rule of max-pooling, the same dropout masks (the
 * counter-based generator of rng.h keyed by the op's seed and the step
 * number, read from the device counter *cu.step so that a CUDA Graph replay
 * draws new masks). Tensors are read and written through cu_ld / cu_st in
 * their storage type and computed in f32, except those f32 / i32 by
 * construction (parameters, their gradients, optimizer state, max-pool
 * indices, labels), which prepare checks. Reductions: BatchNorm statistics
 * sum in f32 over at most 16 rows (a plane in NCHW) per thread, then in
 * double; per-block partials are combined in a fixed order (deterministic,
 * no atomics); log-softmax is a warp per row; the NLL loss sums in double.
 * With MATRIX_ENGINE_BNSTATS=conv a training BatchNorm whose convolution
 * ran as CONVOLUTION_FORWARD -> GEN_STATS (conv.cu) skips its sums pass and
 * finishes from cuDNN's f32 sums (cu_conv_bn_stats), taken into double.
 * SyncBN (--syncbn on, data-parallel ranks): a BN op with o->sync and its
 * backward reduce their partials per channel in that order, all-reduce the
 * 2 C doubles with NCCL on cu.s (comm_nccl.cu's cu_nccl_sum_f64) and finish
 * from the global sums and count, as cpu_bn does over MPI.
 *
 * Element-wise kernels are grid-stride loops moving 8 elements per thread
 * with 16-byte loads / stores when every pointer is 16-byte aligned and 8
 * consecutive elements share a channel pattern (channels-last: C % 8 == 0,
 * NCHW: H W % 8 == 0), else element by element.
 *
 * Loss scaling (--precision fp16 with training): cu.scaler[0] is the scale,
 * NLL_BWD multiplies its gradient by it; the first optimizer op of the plan
 * resets the found-inf flag scaler[1] and unscales every parameter gradient
 * in one multi-tensor kernel, setting the flag on inf / nan; the optimizer
 * kernels skip their update when the flag is set; after the last optimizer
 * op the scale is halved on inf / nan and doubled after 2000 clean steps
 * (torch.cuda.amp.GradScaler's defaults), scaler[2] counting clean steps
 * and scaler[3] skipped ones. The momentum buffer starts at the first step
 * not skipped (torch.optim.SGD), which is the CPU's g->step == 1 when
 * nothing is skipped.
 *
 * Nothing here synchronises, allocates or copies to the host during a step:
 * scratch (BatchNorm partials and coefficients, SyncBN's sums, the gradient,
 * optimizer and EMA tables) is allocated and uploaded by cu_ops_prepare. */
#include "cuda.h"
#include "../knobs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "vec.cuh"

#include <cub/cub.cuh>

namespace {

/* rng.h on the device (same constants, same arithmetic). */
__host__ __device__ __forceinline__ uint64_t d_rng_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

__host__ __device__ __forceinline__ float d_rng_uniform(uint64_t key, uint64_t i)
{
    return (float)(d_rng_mix(key + i * 0x9e3779b97f4a7c15ULL) >> 40) * (1.0f / 16777216.0f);
}

/* The dropout stream of an op at the current step (cpu ops.c dropout_mask_range). */
__device__ __forceinline__ uint64_t drop_key(uint64_t seed, const int64_t *step)
{
    return d_rng_mix(seed ^ ((uint64_t)*step << 40));
}

constexpr unsigned FULL = 0xffffffffu;

/* ---- geometry ------------------------------------------------------------------------ */

/* N, C, spatial size and layout of a 4-D (or 2-D: N, C) tensor (cpu dims()). */
struct geo {
    size_t N, C, P;
    int nhwc;
};

geo dims(const tensor *t)
{
    geo d;
    d.N = (size_t)t->shape[0];
    d.C = t->ndim > 1 ? (size_t)t->shape[1] : 1;
    d.P = t->ndim == 4 ? (size_t)(t->shape[2] * t->shape[3]) : 1;
    d.nhwc = t->layout == LAYOUT_NHWC;
    return d;
}

/* Channel c and sample-channel pair n * C + c of element i. With 8-element
 * vectors (chan_vec): channels-last, elements i .. i + 7 are channels c .. c + 7
 * (pairs nc .. nc + 7); NCHW, they share c and nc. */
struct chan {
    size_t C, P, PC;
    int nhwc;
    __device__ size_t of(size_t i) const { return nhwc ? umod(i, C) : umod(udiv(i, P), C); }
    __device__ size_t nc(size_t i) const { return nhwc ? udiv(i, PC) * C + umod(i, C) : udiv(i, P); }
    __device__ size_t step(int k) const { return nhwc ? (size_t)k : 0; }
};

chan mkchan(const geo &d) { return chan{d.C, d.P, d.C * d.P, d.nhwc}; }
bool chan_vec(const geo &d) { return d.nhwc ? d.C % 8 == 0 : d.P % 8 == 0; }

/* ---- plan-wide state, made by cu_ops_prepare ---------------------------------------- */

struct gslot { float *p; size_t n; };                      /* a parameter gradient */
struct eslot { const float *w; float *e; size_t n; float m; }; /* an EMA pair */

struct {
    double *part;        /* BatchNorm per-block partial sums */
    size_t part_bytes;
    float *coef;         /* BatchNorm per-channel coefficients, 6 C */
    size_t coef_bytes;
    int fp16;            /* loss scaling on (fp16 training) */
    int first_opt, last_opt, first_ema; /* op indices, -1: none */
    gslot *grads;
    int ngrads;
    eslot *emas;
    int nemas;
    /* BERT's ops */
    float *lnp;          /* LayerNorm backward: per row-chunk partials of dgamma, dbeta */
    size_t lnp_bytes;
    float *ds;           /* attention backward: dS = P (dA - rowsum), (B H, T, T) */
    size_t ds_bytes;
    float *pb;           /* flash-form attention backward: the recomputed P, (B H, T, T) */
    size_t pb_bytes;
    float *ep;           /* embedding backward: token-type partials */
    size_t ep_bytes;
    void *sort;          /* embedding backward: ids sorted with their rows (cub) */
    size_t sort_bytes, sort_tmp;
    double *red;         /* SyncBN: this rank's sums (2 C), every rank's (2 C) */
    size_t red_bytes;
} S = {NULL, 0, NULL, 0, 0, -1, -1, -1, NULL, 0, NULL, 0, NULL, 0, NULL, 0, NULL, 0,
       NULL, 0, NULL, 0, 0, NULL, 0};

/* ---- activation, add, copy ----------------------------------------------------------- */

struct act_fwd_f {
    const void *x;
    void *y;
    int xdt, ydt, act;
    template <int V>
    __device__ void run(size_t i) const
    {
        float v[V];
        ldv<V>(x, xdt, i, v);
#pragma unroll
        for (int k = 0; k < V; k++)
            v[k] = act_f(act, v[k]);
        stv<V>(y, ydt, i, v);
    }
};

/* v is the output y for relu / tanh, the input x for the GELUs. */
struct act_bwd_f {
    const void *dy, *v;
    void *dx;
    int ddt, vdt, xdt, act, acc;
    template <int V>
    __device__ void run(size_t i) const
    {
        float d[V], w[V], o[V];
        ldv<V>(dy, ddt, i, d);
        ldv<V>(v, vdt, i, w);
        if (acc)
            ldv<V>(dx, xdt, i, o);
#pragma unroll
        for (int k = 0; k < V; k++) {
            float t;
            switch (act) {
            case ACT_RELU: t = w[k] > 0.0f ? d[k] : 0.0f; break;
            case ACT_TANH: t = d[k] * (1.0f - w[k] * w[k]); break;
            case ACT_GELU: {
                float x = w[k];
                float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
                float pdf = 0.39894228040143268f * expf(-0.5f * x * x);
                t = d[k] * (cdf + x * pdf);
                break;
            }
            case ACT_GELU_TANH: {
                float x = w[k], th = tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x));
                t = d[k] * (0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) *
                                                    0.79788456080286536f *
                                                    (1.0f + 3.0f * 0.044715f * x * x));
                break;
            }
            default: t = d[k];
            }
            o[k] = acc ? o[k] + t : t;
        }
        stv<V>(dx, xdt, i, o);
    }
};

struct add_f {
    const void *a, *b;
    void *y;
    int adt, bdt, ydt, acc;
    template <int V>
    __device__ void run(size_t i) const
    {
        float u[V], v[V], o[V];
        ldv<V>(a, adt, i, u);
        ldv<V>(b, bdt, i, v);
        if (acc)
            ldv<V>(y, ydt, i, o);
#pragma unroll
        for (int k = 0; k < V; k++)
            o[k] = (acc ? o[k] : 0.0f) + u[k] + v[k];
        stv<V>(y, ydt, i, o);
    }
};

void op_act(graph *g, op *o)
{
    int xi = o->in[0], yi = o->out[0];
    act_fwd_f f = {CU_PTR(g, xi), CU_PTR(g, yi), CU_DT(g, xi), CU_DT(g, yi), o->act};
    launch_map(f, cu_numel(g, xi), al16(f.x) && al16(f.y));
}

void op_act_bwd(graph *g, op *o)
{
    int di = o->in[0], vi = o->in[1], xi = o->out[0];
    act_bwd_f f = {CU_PTR(g, di), CU_PTR(g, vi), CU_PTR(g, xi), CU_DT(g, di), CU_DT(g, vi),
                   CU_DT(g, xi), o->act, CU_ACC(o, 0)};
    launch_map(f, cu_numel(g, di), al16(f.dy) && al16(f.v) && al16(f.dx));
}

void op_add(graph *g, op *o)
{
    int ai = o->in[0], bi = o->in[1], yi = o->out[0];
    add_f f = {CU_PTR(g, ai), CU_PTR(g, bi), CU_PTR(g, yi), CU_DT(g, ai), CU_DT(g, bi),
               CU_DT(g, yi), CU_ACC(o, 0)};
    launch_map(f, cu_numel(g, yi), al16(f.a) && al16(f.b) && al16(f.y));
}

void op_copy(graph *g, op *o)
{
    int xi = o->in[0], yi = o->out[0];
    cu_cast(CU_PTR(g, xi), CU_DT(g, xi), CU_PTR(g, yi), CU_DT(g, yi), cu_numel(g, yi), CU_ACC(o, 0));
}

/* ---- batch normalisation -------------------------------------------------------------
 * Pass 1 (train forward, backward): per-channel sums of (x, x^2), or of
 * (dy, dy (x - mean)) for the backward, into per-block partials
 * S.part[(y * 2 + q) * C + c] (q: which sum, y: block row of the grid).
 * Pass 2: one block per channel adds the partials in a fixed order, then
 * its thread 0 does the CPU's per-channel arithmetic in double and writes the
 * per-channel coefficients into S.coef. Pass 3: one element-wise kernel.
 *
 * SyncBN (a train BN op with o->sync, and its backward), cpu_bn's
 * semantics: between passes 1 and 2, k_bn_reduce adds the partials per
 * channel in bn_gather's order into S.red[0 .. 2C), NCCL sums that over the
 * ranks into S.red[2C .. 4C) on cu.s, and pass 2 reads those global sums as
 * one row of partials (gy = 1) with the count times the ranks: mean,
 * variance, the running statistics (the unbiased factor of the global count)
 * and dx are the global batch's; dgamma / dbeta stay this rank's sums, as on
 * the CPU (the gradient all-reduce averages them). With one rank the result
 * is the unsynchronised op's bit for bit (a 1-rank sum is a copy, and adding
 * one row of partials to 0.0 is exact). */

constexpr int BN_FLUSH = 16;    /* f32 partials fold into double every BN_FLUSH rows */
constexpr int BN_BLOCKS = 1024; /* blocks aimed at by pass 1 */

struct bn_grid_t {
    dim3 grid;
    int txb; /* channels-last: log2 of the channel groups per block */
};

/* The forward's per-channel scale and shift from gamma, beta and the f32
 * mean / invstd it saved (k_bn_final's arithmetic), and its pre-activation
 * x sc + sh as one explicit fma (bn_apply_f): a backward with the ReLU
 * folded in (pass_bn_relu_bwd) recomputes y > 0 through the same functions,
 * so no contraction can differ between the two. */
__device__ __forceinline__ void bn_fwd_coef(float gam, float bet, float mf, float invf, float &sc,
                                            float &sh)
{
    sc = __fmul_rn(gam, invf);
    sh = __fsub_rn(bet, __fmul_rn(mf, sc));
}

__device__ __forceinline__ float bn_pre(float v, float sc, float sh)
{
    return __fmaf_rn(v, sc, sh);
}

/* v rounded to storage type dt and back. */
__device__ __forceinline__ float cu_round(int dt, float v)
{
    switch (dt) {
    case DT_F16: return __half2float(__float2half_rn(v));
    case DT_BF16: return __bfloat162float(__float2bfloat16_rn(v));
    default: return v;
    }
}

/* dy masked as op_act_bwd masks it with the forward's y (stored as ydt):
 * y = relu(x sc + sh) > 0, recomputed. */
__device__ __forceinline__ float bn_relu_dy(float d, float v, float sc, float sh, int ydt)
{
    return cu_round(ydt, act_f(ACT_RELU, bn_pre(v, sc, sh))) > 0.0f ? d : 0.0f;
}

/* The mask of a backward with the ReLU folded in, for pass 1: the forward's
 * gamma, beta, saved mean / invstd (f32) and y's storage type to recompute
 * it (BWD 2), or y itself to read it (BWD 3: a BN with a residual input). */
struct bn_relu_t {
    const float *gam, *bet, *mean, *inv;
    const void *y;
    int ydt;
};

/* Pass 1 grid for V elements per load. Channels-last: blocks of TX x TY
 * threads (TX = 1 << txb groups of V channels, TY = 256 / TX rows), at least
 * BN_FLUSH rows per thread; NCHW: block (c, y) of 8 warps, a warp per plane. */
bn_grid_t bn_grid(const geo &d, int V)
{
    bn_grid_t b;
    if (d.nhwc) {
        size_t G = d.C / V, R = d.N * d.P;
        int txb = 0;
        while (txb < 5 && ((size_t)1 << txb) < G)
            txb++;
        size_t TX = (size_t)1 << txb, TY = 256 / TX, gx = (G + TX - 1) / TX;
        size_t gy = (R + TY * BN_FLUSH - 1) / (TY * BN_FLUSH), cap = BN_BLOCKS / gx;
        if (cap < 1)
            cap = 1;
        if (gy > cap)
            gy = cap;
        if (gy > 65535)
            gy = 65535;
        if (gy < 1)
            gy = 1;
        b.grid = dim3((unsigned)gx, (unsigned)gy);
        b.txb = txb;
    } else {
        size_t gy = (d.N + 7) / 8, cap = BN_BLOCKS / d.C;
        if (cap < 1)
            cap = 1;
        if (gy > cap)
            gy = cap;
        if (gy > 65535)
            gy = 65535;
        if (gy < 1)
            gy = 1;
        b.grid = dim3((unsigned)d.C, (unsigned)gy);
        b.txb = 0;
    }
    return b;
}

int bn_vec(const geo &d, const void *x, const void *dy)
{
    return chan_vec(d) && al16(x) && (!dy || al16(dy)) ? 8 : 1;
}

/* Bytes of partials pass 1 writes for d (either vector width). */
size_t bn_part_bytes(const geo &d)
{
    size_t a = bn_grid(d, 1).grid.y, b = chan_vec(d) ? bn_grid(d, 8).grid.y : 0;
    return (a > b ? a : b) * 2 * d.C * sizeof(double);
}

/* Pass 1, channels-last: rows R = N * P of C channels; thread (tx, ty) owns
 * channels c0 .. c0 + V - 1 and rows blockIdx.y * TY + ty + k gridDim.y TY.
 * BWD: 0 the forward's sums, 1 the backward's, 2 the backward's with dy
 * masked by the folded ReLU (rl), y > 0 recomputed, 3 the same with y read.
 * Long (about 85 lines) because the four passes share one body: the f32
 * partials per 16 rows, their double sums and the block's tree reduction are
 * the same code for each, and the BWD cases are compile-time branches of it;
 * split into device functions they would pass a dozen per-thread arrays. */
template <int V, int BWD>
__global__ void __launch_bounds__(256)
k_bn_sums_nhwc(const void *x, int xdt, const void *dy, int ddt, const void *mean, int mdt,
               size_t R, size_t C, int txb, double *part, bn_relu_t rl)
{
    __shared__ double sh[2 * V][256];
    const int tid = threadIdx.x, TX = 1 << txb, TY = 256 >> txb;
    const int tx = tid & (TX - 1), ty = tid >> txb;
    size_t c0 = ((size_t)blockIdx.x * TX + tx) * V;
    bool on = c0 < C;
    float m[V], fa[V], fb[V], sc[V], sf[V];
    double da[V], db[V];
#pragma unroll
    for (int k = 0; k < V; k++) {
        m[k] = BWD && on ? cu_ld(mean, mdt, c0 + k) : 0.0f;
        sc[k] = sf[k] = 0.0f;
        if (BWD == 2 && on)
            bn_fwd_coef(rl.gam[c0 + k], rl.bet[c0 + k], rl.mean[c0 + k], rl.inv[c0 + k], sc[k], sf[k]);
        fa[k] = fb[k] = 0.0f;
        da[k] = db[k] = 0.0;
    }
    if (on) {
        int cnt = 0;
        for (size_t r = (size_t)blockIdx.y * TY + ty; r < R; r += (size_t)gridDim.y * TY) {
            float v[V];
            ldv<V>(x, xdt, r * C + c0, v);
            if constexpr (BWD) {
                float d[V], w[V];
                ldv<V>(dy, ddt, r * C + c0, d);
                if constexpr (BWD == 3)
                    ldv<V>(rl.y, rl.ydt, r * C + c0, w);
#pragma unroll
                for (int k = 0; k < V; k++) {
                    if constexpr (BWD == 2)
                        d[k] = bn_relu_dy(d[k], v[k], sc[k], sf[k], rl.ydt);
                    if constexpr (BWD == 3)
                        d[k] = w[k] > 0.0f ? d[k] : 0.0f;
                    fa[k] += d[k];
                    fb[k] += d[k] * (v[k] - m[k]);
                }
            } else {
#pragma unroll
                for (int k = 0; k < V; k++) {
                    fa[k] += v[k];
                    fb[k] += v[k] * v[k];
                }
            }
            if (++cnt == BN_FLUSH) {
#pragma unroll
                for (int k = 0; k < V; k++) {
                    da[k] += fa[k];
                    db[k] += fb[k];
                    fa[k] = fb[k] = 0.0f;
                }
                cnt = 0;
            }
        }
#pragma unroll
        for (int k = 0; k < V; k++) {
            da[k] += fa[k];
            db[k] += fb[k];
        }
    }
#pragma unroll
    for (int k = 0; k < V; k++) {
        sh[k][tid] = da[k];
        sh[V + k][tid] = db[k];
    }
    __syncthreads();
    for (int h = TY / 2; h > 0; h >>= 1) {
        if (ty < h)
#pragma unroll
            for (int q = 0; q < 2 * V; q++)
                sh[q][tid] += sh[q][tid + h * TX];
        __syncthreads();
    }
    if (ty == 0 && on) {
        double *pa = part + (size_t)blockIdx.y * 2 * C, *pb = pa + C;
#pragma unroll
        for (int k = 0; k < V; k++) {
            pa[c0 + k] = sh[k][tx];
            pb[c0 + k] = sh[V + k][tx];
        }
    }
}

/* Pass 1, NCHW: block (c, y); warp w sums the planes n = y * 8 + w + k 8
 * gridDim.y of channel c, each plane in f32 then in double. BWD as
 * k_bn_sums_nhwc's. */
template <int V, int BWD>
__global__ void __launch_bounds__(256)
k_bn_sums_nchw(const void *x, int xdt, const void *dy, int ddt, const void *mean, int mdt,
               size_t N, size_t C, size_t P, double *part, bn_relu_t rl)
{
    __shared__ double sh[2][8];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    size_t c = blockIdx.x;
    float m = BWD ? cu_ld(mean, mdt, c) : 0.0f, sc = 0.0f, sf = 0.0f;
    if (BWD == 2)
        bn_fwd_coef(rl.gam[c], rl.bet[c], rl.mean[c], rl.inv[c], sc, sf);
    double da = 0.0, db = 0.0;
    for (size_t n = (size_t)blockIdx.y * 8 + warp; n < N; n += (size_t)gridDim.y * 8) {
        size_t base = (n * C + c) * P;
        float fa = 0.0f, fb = 0.0f;
        for (size_t q = (size_t)lane * V; q < P; q += 32 * V) {
            float v[V];
            ldv<V>(x, xdt, base + q, v);
            if constexpr (BWD) {
                float d[V], w[V];
                ldv<V>(dy, ddt, base + q, d);
                if constexpr (BWD == 3)
                    ldv<V>(rl.y, rl.ydt, base + q, w);
#pragma unroll
                for (int k = 0; k < V; k++) {
                    if constexpr (BWD == 2)
                        d[k] = bn_relu_dy(d[k], v[k], sc, sf, rl.ydt);
                    if constexpr (BWD == 3)
                        d[k] = w[k] > 0.0f ? d[k] : 0.0f;
                    fa += d[k];
                    fb += d[k] * (v[k] - m);
                }
            } else {
#pragma unroll
                for (int k = 0; k < V; k++) {
                    fa += v[k];
                    fb += v[k] * v[k];
                }
            }
        }
        da += fa;
        db += fb;
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        da += __shfl_down_sync(FULL, da, off);
        db += __shfl_down_sync(FULL, db, off);
    }
    if (lane == 0) {
        sh[0][warp] = da;
        sh[1][warp] = db;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double a = 0.0, b = 0.0;
        for (int w = 0; w < 8; w++) {
            a += sh[0][w];
            b += sh[1][w];
        }
        part[(size_t)blockIdx.y * 2 * C + c] = a;
        part[((size_t)blockIdx.y * 2 + 1) * C + c] = b;
    }
}

/* Pass 1 launch; returns the rows of partials written (gridDim.y). */
template <int V, int BWD>
void bn_sums_launch(const bn_grid_t &b, const geo &d, const void *x, int xdt, const void *dy,
                    int ddt, const void *mean, int mdt, const bn_relu_t &rl)
{
    if (d.nhwc)
        k_bn_sums_nhwc<V, BWD><<<b.grid, 256, 0, cu.s>>>(x, xdt, dy, ddt, mean, mdt, d.N * d.P,
                                                        d.C, b.txb, S.part, rl);
    else
        k_bn_sums_nchw<V, BWD><<<b.grid, 256, 0, cu.s>>>(x, xdt, dy, ddt, mean, mdt, d.N, d.C,
                                                        d.P, S.part, rl);
    cu_launched();
}

/* bwd: 0 the forward's sums, 1 the backward's, 2 / 3 the backward's with
 * the ReLU folded in (*relu; 3: y read). */
int bn_sums(int bwd, const geo &d, const void *x, int xdt, const void *dy, int ddt,
            const void *mean, int mdt, const bn_relu_t *relu = NULL)
{
    int V = bn_vec(d, x, bwd ? dy : NULL);
    if (bwd == 3 && !al16(relu->y))
        V = 1;
    bn_grid_t b = bn_grid(d, V);
    bn_relu_t rl = relu ? *relu : bn_relu_t{NULL, NULL, NULL, NULL, NULL, DT_F32};
    if (V == 8) {
        if (bwd == 3)
            bn_sums_launch<8, 3>(b, d, x, xdt, dy, ddt, mean, mdt, rl);
        else if (bwd == 2)
            bn_sums_launch<8, 2>(b, d, x, xdt, dy, ddt, mean, mdt, rl);
        else if (bwd)
            bn_sums_launch<8, 1>(b, d, x, xdt, dy, ddt, mean, mdt, rl);
        else
            bn_sums_launch<8, 0>(b, d, x, xdt, dy, ddt, mean, mdt, rl);
    } else {
        if (bwd == 3)
            bn_sums_launch<1, 3>(b, d, x, xdt, dy, ddt, mean, mdt, rl);
        else if (bwd == 2)
            bn_sums_launch<1, 2>(b, d, x, xdt, dy, ddt, mean, mdt, rl);
        else if (bwd)
            bn_sums_launch<1, 1>(b, d, x, xdt, dy, ddt, mean, mdt, rl);
        else
            bn_sums_launch<1, 0>(b, d, x, xdt, dy, ddt, mean, mdt, rl);
    }
    return (int)b.grid.y;
}

/* Pass 2 helper: block (128 threads) sum of the gy partials of channel c,
 * fixed order; the result in sa[0], sb[0]. */
__device__ void bn_gather(const double *part, int gy, size_t C, size_t c, double *sa, double *sb)
{
    const int tid = threadIdx.x;
    double a = 0.0, b = 0.0;
    for (int y = tid; y < gy; y += 128) {
        a += part[(size_t)y * 2 * C + c];
        b += part[((size_t)y * 2 + 1) * C + c];
    }
    sa[tid] = a;
    sb[tid] = b;
    __syncthreads();
    for (int h = 64; h > 0; h >>= 1) {
        if (tid < h) {
            sa[tid] += sa[tid + h];
            sb[tid] += sb[tid + h];
        }
        __syncthreads();
    }
}

/* SyncBN, pass 1b: this rank's per-channel sums (bn_gather's order) into
 * red[c], red[C + c]. */
__global__ void __launch_bounds__(128)
k_bn_reduce(const double *part, int gy, size_t C, double *red)
{
    __shared__ double sa[128], sb[128];
    size_t c = blockIdx.x;
    bn_gather(part, gy, C, c, sa, sb);
    if (threadIdx.x == 0) {
        red[c] = sa[0];
        red[C + c] = sb[0];
    }
}

/* SyncBN: the gy rows of partials of S.part summed per channel, this rank's
 * into S.red[0 .. 2C), over every rank into S.red[2C .. 4C) (returned: one
 * row of partials for pass 2). */
const double *bn_sync(const geo &d, int gy)
{
    k_bn_reduce<<<(unsigned)d.C, 128, 0, cu.s>>>(S.part, gy, d.C, S.red);
    cu_launched();
    cu_nccl_sum_f64(S.red, S.red + 2 * d.C, 2 * d.C);
    return S.red + 2 * d.C;
}

/* Pass 2, forward (cpu_bn): train: batch statistics from the sums, running
 * statistics updated; eval: the running statistics. Writes mean, invstd and
 * coef[c] = gamma invstd, coef[C + c] = beta - mean coef[c]. fs, fq (train,
 * not NULL): the sums are the f32 ones of the convolution's GEN_STATS
 * (cu_conv_bn_stats), taken into double here before any arithmetic (the
 * variance E[x^2] - m^2 cancels: in f32 it would lose what the sums hold). */
__global__ void __launch_bounds__(128)
k_bn_final(const double *part, int gy, const float *fs, const float *fq, size_t C, double cnt,
           float eps, float mom, int train, const float *gam, const float *bet, float *rm,
           float *rv, void *mean, int mdt, void *inv, int idt, float *coef)
{
    __shared__ double sa[128], sb[128];
    size_t c = blockIdx.x;
    if (train && fs) {
        sa[0] = (double)fs[c];
        sb[0] = (double)fq[c];
    } else if (train)
        bn_gather(part, gy, C, c, sa, sb);
    if (threadIdx.x != 0)
        return;
    double m, istd;
    if (train) {
        double s = sa[0], ss = sb[0];
        m = s / cnt;
        double var = __dsub_rn(ss / cnt, __dmul_rn(m, m));
        if (var < 0)
            var = 0;
        istd = 1.0 / sqrt(var + (double)eps);
        double k = 1.0 - (double)mom;
        rm[c] = (float)__dadd_rn(__dmul_rn(k, (double)rm[c]), __dmul_rn((double)mom, m));
        rv[c] = (float)__dadd_rn(__dmul_rn(k, (double)rv[c]),
                                 __dmul_rn(__dmul_rn((double)mom, var),
                                           cnt > 1 ? cnt / (cnt - 1) : 1.0));
    } else {
        m = rm[c];
        istd = 1.0 / sqrt((double)rv[c] + (double)eps);
    }
    float mf = (float)m, invf = (float)istd;
    cu_st(mean, mdt, c, mf);
    cu_st(inv, idt, c, invf);
    float sc, sh;
    bn_fwd_coef(gam[c], bet[c], mf, invf, sc, sh);
    coef[c] = sc;
    coef[C + c] = sh;
}

/* Pass 3, forward: y = act(x sc + sh (+ res)). */
struct bn_apply_f {
    const void *x, *res;
    void *y;
    int xdt, rdt, ydt, act;
    const float *coef;
    size_t C;
    chan ch;
    template <int V>
    __device__ void run(size_t i) const
    {
        float v[V], r[V];
        ldv<V>(x, xdt, i, v);
        if (res)
            ldv<V>(res, rdt, i, r);
        size_t c = ch.of(i);
#pragma unroll
        for (int k = 0; k < V; k++) {
            size_t ck = c + ch.step(k);
            float w = bn_pre(v[k], coef[ck], coef[C + ck]);
            if (res)
                w += r[k];
            v[k] = act_f(act, w);
        }
        stv<V>(y, ydt, i, v);
    }
};

void op_bn(graph *g, op *o)
{
    int xi = o->in[0], ri = o->in[5], yi = o->out[0];
    geo d = dims(&g->t[xi]);
    const void *x = CU_PTR(g, xi);
    const double *part = S.part;
    double cnt = (double)d.N * (double)d.P;
    int gy = 0;
    const float *fs = NULL, *fq = NULL;
    /* MATRIX_ENGINE_BNSTATS=conv: the convolution's GEN_STATS summed x already */
    if (o->train && !o->sync && cu_conv_bn_stats((int)(o - g->ops), &fs, &fq))
        gy = 0;
    else if (o->train)
        gy = bn_sums(0, d, x, CU_DT(g, xi), NULL, DT_F32, NULL, DT_F32);
    if (o->train && o->sync) { /* SyncBN: sums and count over every rank */
        part = bn_sync(d, gy);
        gy = 1;
        cnt *= cu_nccl_ranks();
    }
    k_bn_final<<<(unsigned)d.C, 128, 0, cu.s>>>(
        part, gy, fs, fq, d.C, cnt, o->eps, o->momentum, o->train,
        (const float *)CU_PTR(g, o->in[1]), (const float *)CU_PTR(g, o->in[2]),
        (float *)CU_PTR(g, o->in[3]), (float *)CU_PTR(g, o->in[4]), CU_PTR(g, o->out[1]),
        CU_DT(g, o->out[1]), CU_PTR(g, o->out[2]), CU_DT(g, o->out[2]), S.coef);
    cu_launched();
    bn_apply_f f = {x, ri >= 0 ? CU_PTR(g, ri) : NULL, CU_PTR(g, yi), CU_DT(g, xi),
                    ri >= 0 ? CU_DT(g, ri) : DT_F32, CU_DT(g, yi), o->act, S.coef, d.C,
                    mkchan(d)};
    int vec = chan_vec(d) && al16(f.x) && (!f.res || al16(f.res)) && al16(f.y);
    launch_map(f, d.N * d.C * d.P, vec);
}

/* Pass 2, backward (cpu_bn_bwd): dgamma (+)= sum dy xhat, dbeta (+)= sum dy;
 * coef = A (dy), B1 (x - mean), B0, mean: dx = A dy + B1 (x - mean) + B0.
 * glob (SyncBN): the sums over every rank for dx (cnt is then the global
 * count), NULL: this rank's. bet (the ReLU folded in, else NULL): the
 * forward's scale and shift too, coef[4 C + c], coef[5 C + c], for the mask
 * of pass 3. */
__global__ void __launch_bounds__(128)
k_bn_bwd_final(const double *part, int gy, size_t C, double cnt, int train, const float *gam,
               const void *mean, int mdt, const void *inv, int idt, float *dg, int acc_g,
               float *dbt, int acc_b, const double *glob, const float *bet, float *coef)
{
    __shared__ double sa[128], sb[128];
    size_t c = blockIdx.x;
    bn_gather(part, gy, C, c, sa, sb);
    if (threadIdx.x != 0)
        return;
    float invf = cu_ld(inv, idt, c);
    double s = sa[0], sx = sb[0] * (double)invf;
    dg[c] = (float)((acc_g ? (double)dg[c] : 0.0) + sx);
    dbt[c] = (float)((acc_b ? (double)dbt[c] : 0.0) + s);
    if (glob) {
        s = glob[c];
        sx = glob[C + c] * (double)invf;
    }
    double k = (double)__fmul_rn(gam[c], invf);
    coef[c] = (float)k;
    coef[C + c] = train ? (float)(-k * (double)invf * sx / cnt) : 0.0f;
    coef[2 * C + c] = train ? (float)(-k * s / cnt) : 0.0f;
    coef[3 * C + c] = cu_ld(mean, mdt, c);
    if (bet)
        bn_fwd_coef(gam[c], bet[c], cu_ld(mean, mdt, c), invf, coef[4 * C + c], coef[5 * C + c]);
}

/* A BN backward with the ReLU folded in (pass_bn_relu_bwd) as op_bn_bwd
 * reads it: act ReLU of a BN forward with that ReLU; in[5] its beta (no
 * residual input: y recomputed, from f32 gamma / beta / mean / invstd, what
 * the forward's coefficients were computed from: a 16-bit mean would not
 * give its y) or its y (read; out[3], the residual's gradient, only with a
 * dx). 0, or -1 with the reason said. */
int want(const graph *g, const op *o, int k, int dt, int in);

int bn_bwd_relu_check(const graph *g, const op *o)
{
    const op *f = o->fwd >= 0 && o->fwd < g->nops ? &g->ops[o->fwd] : NULL;
    int bad = 0, ready = f && o->in[5] >= 0 && o->in[5] == f->out[0];
    for (int k = 2; k <= (ready ? 4 : 5); k++)
        bad |= want(g, o, k, DT_F32, 1);
    if (o->act != ACT_RELU || o->in[5] < 0 || !f || f->type != OP_BN || f->act != ACT_RELU ||
        (!ready && (f->in[5] >= 0 || f->in[2] != o->in[5] || o->out[3] >= 0)) ||
        (ready && o->out[3] >= 0 && (o->out[0] < 0 || !cu_float_type(CU_DT(g, o->out[3]))))) {
        fprintf(stderr, "matrix-engine: cuda: op '%s' (batchnorm backward) has an activation "
                "folded in but not a ReLU of its BN forward with that forward's beta (no "
                "residual input) or y (and a dx where it writes the residual's gradient) "
                "(BUG)\n", o->name);
        bad = -1;
    }
    return bad;
}

/* 1 when BN backward op o belongs to a SyncBN forward. */
int bn_bwd_sync(const graph *g, const op *o)
{
    return o->fwd >= 0 && o->fwd < g->nops && g->ops[o->fwd].sync;
}

/* Pass 3, backward: dx (+)= A dy + B1 (x - mean) + B0; relu (the ReLU
 * folded in): dy masked by y > 0, read from y when given, else recomputed
 * with coef[4 C], coef[5 C]; res: the masked dy into the residual's
 * gradient too ((+)= with racc, as the OP_COPY it replaces). */
struct bn_dx_f {
    const void *dy, *x, *y;
    void *dx, *res;
    int ddt, xdt, odt, acc, relu, ydt, rdt, racc;
    const float *coef;
    size_t C;
    chan ch;
    template <int V>
    __device__ void run(size_t i) const
    {
        float d[V], v[V], o[V], w[V];
        ldv<V>(dy, ddt, i, d);
        ldv<V>(x, xdt, i, v);
        if (acc)
            ldv<V>(dx, odt, i, o);
        if (y)
            ldv<V>(y, ydt, i, w);
        size_t c = ch.of(i);
#pragma unroll
        for (int k = 0; k < V; k++) {
            size_t ck = c + ch.step(k);
            if (y)
                d[k] = w[k] > 0.0f ? d[k] : 0.0f;
            else if (relu)
                d[k] = bn_relu_dy(d[k], v[k], coef[4 * C + ck], coef[5 * C + ck], ydt);
            float t = coef[ck] * d[k] + coef[C + ck] * (v[k] - coef[3 * C + ck]) + coef[2 * C + ck];
            o[k] = acc ? o[k] + t : t;
        }
        stv<V>(dx, odt, i, o);
        if (res) {
            if (racc) {
                float r[V];
                ldv<V>(res, rdt, i, r);
#pragma unroll
                for (int k = 0; k < V; k++)
                    d[k] = r[k] + d[k];
            }
            stv<V>(res, rdt, i, d);
        }
    }
};

/* relu (pass_bn_relu_bwd: o->act ACT_RELU, checked at prepare): dy is the
 * gradient of the forward's relu(BN(x) [+ res]); passes 1 and 3 mask it as
 * op_act_bwd would: with the y they recompute from in[5] = beta, or with
 * in[5] = the forward's y read (a residual input), pass 3 then also writing
 * the masked dy into the residual's gradient out[3]. */
void op_bn_bwd(graph *g, op *o)
{
    int di = o->in[0], xi = o->in[1], mi = o->in[3], ii = o->in[4];
    int relu = o->act == ACT_RELU, ydt = relu ? CU_DT(g, g->ops[o->fwd].out[0]) : DT_F32;
    int ready = relu && o->in[5] == g->ops[o->fwd].out[0];
    geo d = dims(&g->t[xi]);
    const void *dy = CU_PTR(g, di), *x = CU_PTR(g, xi), *y = ready ? CU_PTR(g, o->in[5]) : NULL;
    const float *gam = (const float *)CU_PTR(g, o->in[2]);
    const float *bet = relu && !ready ? (const float *)CU_PTR(g, o->in[5]) : NULL;
    bn_relu_t rl = {gam, bet, (const float *)CU_PTR(g, mi), (const float *)CU_PTR(g, ii), y, ydt};
    int gy = bn_sums(ready ? 3 : relu ? 2 : 1, d, x, CU_DT(g, xi), dy, CU_DT(g, di), CU_PTR(g, mi),
                     CU_DT(g, mi), &rl);
    const double *part = S.part, *glob = NULL;
    double cnt = (double)d.N * (double)d.P;
    if (o->train && bn_bwd_sync(g, o)) { /* SyncBN: dx from the sums over every rank */
        glob = bn_sync(d, gy);
        part = S.red; /* this rank's sums, one row */
        gy = 1;
        cnt *= cu_nccl_ranks();
    }
    k_bn_bwd_final<<<(unsigned)d.C, 128, 0, cu.s>>>(
        part, gy, d.C, cnt, o->train,
        gam, CU_PTR(g, mi), CU_DT(g, mi), CU_PTR(g, ii),
        CU_DT(g, ii), (float *)CU_PTR(g, o->out[1]), CU_ACC(o, 1),
        (float *)CU_PTR(g, o->out[2]), CU_ACC(o, 2), glob, bet, S.coef);
    cu_launched();
    if (o->out[0] < 0)
        return;
    int oi = o->out[0];
    int ri = ready ? o->out[3] : -1;
    bn_dx_f f = {dy, x, y, CU_PTR(g, oi), ri >= 0 ? CU_PTR(g, ri) : NULL, CU_DT(g, di),
                 CU_DT(g, xi), CU_DT(g, oi), CU_ACC(o, 0), relu, ydt,
                 ri >= 0 ? CU_DT(g, ri) : DT_F32, CU_ACC(o, 3), S.coef, d.C, mkchan(d)};
    int vec = chan_vec(d) && al16(f.dy) && al16(f.x) && al16(f.dx) && (!f.y || al16(f.y)) &&
              (!f.res || al16(f.res));
    launch_map(f, d.N * d.C * d.P, vec);
}

/* ---- pooling -------------------------------------------------------------------------- */

struct pool_geo {
    size_t N, C, H, W, OH, OW;
    int nhwc, kh, kw, stride, pad;
};

/* x: the (N, C, H, W) side, y: the (N, C, OH, OW) side; window of op w. */
pool_geo pool_geometry(const graph *g, int xi, int yi, const op *w)
{
    const tensor *x = &g->t[xi], *y = &g->t[yi];
    pool_geo p = {(size_t)x->shape[0], (size_t)x->shape[1], (size_t)x->shape[2],
                  (size_t)x->shape[3], (size_t)y->shape[2], (size_t)y->shape[3],
                  x->layout == LAYOUT_NHWC, w->kh, w->kw, w->stride, w->pad};
    return p;
}

/* Offset of (n, c, h, w) in an (N, C, H, W) tensor of that layout. */
__device__ __forceinline__ size_t at4(int nhwc, size_t n, size_t c, size_t h, size_t w,
                                      size_t C, size_t H, size_t W)
{
    return nhwc ? ((n * H + h) * W + w) * C + c : ((n * C + c) * H + h) * W + w;
}

/* (n, c, h, w) of element i of an (N, C, H, W) tensor of that layout. */
__device__ __forceinline__ void of4(int nhwc, size_t i, size_t C, size_t H, size_t W,
                                    size_t *n, size_t *c, size_t *h, size_t *w)
{
    if (nhwc) {
        *c = umod(i, C);
        i = udiv(i, C);
        *w = umod(i, W);
        i = udiv(i, W);
        *h = umod(i, H);
        *n = udiv(i, H);
    } else {
        *w = umod(i, W);
        i = udiv(i, W);
        *h = umod(i, H);
        i = udiv(i, H);
        *c = umod(i, C);
        *n = udiv(i, C);
    }
}

/* A thread per output: the window scanned row by row, the first strict
 * maximum kept (cpu maxpool_range); idx = ih * W + iw of it. NCHW starts
 * from the window's first valid position, channels-last from 0, as the CPU. */
__global__ void k_maxpool(const void *x, int xdt, void *y, int ydt, int32_t *idx, pool_geo p,
                          int relu, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        size_t nn, c, oh, ow;
        of4(p.nhwc, i, p.C, p.OH, p.OW, &nn, &c, &oh, &ow);
        long long ih0 = (long long)oh * p.stride - p.pad, iw0 = (long long)ow * p.stride - p.pad;
        long long H = (long long)p.H, W = (long long)p.W;
        int i0 = ih0 < 0 ? (int)-ih0 : 0, i1 = ih0 + p.kh > H ? (int)(H - ih0) : p.kh;
        int j0 = iw0 < 0 ? (int)-iw0 : 0, j1 = iw0 + p.kw > W ? (int)(W - iw0) : p.kw;
        float m = -INFINITY;
        int32_t mi = p.nhwc ? 0 : (int32_t)((ih0 + i0) * W + iw0 + j0);
        for (int a = i0; a < i1; a++)
            for (int b = j0; b < j1; b++) {
                size_t ih = (size_t)(ih0 + a), iw = (size_t)(iw0 + b);
                float v = cu_ld(x, xdt, at4(p.nhwc, nn, c, ih, iw, p.C, p.H, p.W));
                if (v > m) {
                    m = v;
                    mi = (int32_t)(ih * p.W + iw);
                }
            }
        cu_st(y, ydt, i, relu && m < 0.0f ? 0.0f : m);
        idx[i] = mi;
    }
}

void op_maxpool(graph *g, op *o)
{
    int xi = o->in[0], yi = o->out[0];
    pool_geo p = pool_geometry(g, xi, yi, o);
    size_t n = cu_numel(g, yi);
    if (n == 0)
        return;
    k_maxpool<<<cu_blocks(n, 256), 256, 0, cu.s>>>(CU_PTR(g, xi), CU_DT(g, xi), CU_PTR(g, yi),
                                                   CU_DT(g, yi), (int32_t *)CU_PTR(g, o->out[1]),
                                                   p, o->act == ACT_RELU, n);
    cu_launched();
}

/* A thread per input position (a gather, so any storage type and acc work
 * without atomics): dx = (acc ? dx : 0) + the dy of every window containing
 * the position whose maximum it was, windows in output order (the order of
 * the CPU's scatter, so f32 sums are the same). */
__global__ void k_maxpool_bwd(const void *dy, int ddt, const int32_t *idx, void *dx, int xdt,
                              pool_geo p, int acc, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        size_t nn, c, ih, iw;
        of4(p.nhwc, i, p.C, p.H, p.W, &nn, &c, &ih, &iw);
        int32_t pos = (int32_t)(ih * p.W + iw);
        /* windows oh with oh s - pad <= ih < oh s - pad + kh */
        long long ah = (long long)ih + p.pad - p.kh + 1, aw = (long long)iw + p.pad - p.kw + 1;
        long long oh0 = ah <= 0 ? 0 : (ah + p.stride - 1) / p.stride;
        long long ow0 = aw <= 0 ? 0 : (aw + p.stride - 1) / p.stride;
        long long oh1 = ((long long)ih + p.pad) / p.stride, ow1 = ((long long)iw + p.pad) / p.stride;
        if (oh1 > (long long)p.OH - 1)
            oh1 = (long long)p.OH - 1;
        if (ow1 > (long long)p.OW - 1)
            ow1 = (long long)p.OW - 1;
        float s = acc ? cu_ld(dx, xdt, i) : 0.0f;
        for (long long oh = oh0; oh <= oh1; oh++)
            for (long long ow = ow0; ow <= ow1; ow++) {
                size_t j = at4(p.nhwc, nn, c, (size_t)oh, (size_t)ow, p.C, p.OH, p.OW);
                if (idx[j] == pos)
                    s += cu_ld(dy, ddt, j);
            }
        cu_st(dx, xdt, i, s);
    }
}

void op_maxpool_bwd(graph *g, op *o)
{
    int di = o->in[0], ii = o->in[1], xi = o->out[0];
    /* the window is the forward op's (checked by prepare) */
    pool_geo p = pool_geometry(g, xi, di, &g->ops[o->fwd]);
    size_t n = cu_numel(g, xi);
    if (n == 0)
        return;
    k_maxpool_bwd<<<cu_blocks(n, 256), 256, 0, cu.s>>>(CU_PTR(g, di), CU_DT(g, di),
                                                       (const int32_t *)CU_PTR(g, ii),
                                                       CU_PTR(g, xi), CU_DT(g, xi), p,
                                                       CU_ACC(o, 0), n);
    cu_launched();
}

/* Global average: a thread per (n, c), the plane summed in order in f32 and
 * divided by P, as the CPU. */
__global__ void k_avgpool(const void *x, int xdt, void *y, int ydt, size_t N, size_t C, size_t P,
                          int nhwc)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < N * C; j += stride) {
        size_t n = udiv(j, C), c = j - n * C;
        float s = 0.0f;
        for (size_t q = 0; q < P; q++)
            s += cu_ld(x, xdt, nhwc ? (n * P + q) * C + c : j * P + q);
        cu_st(y, ydt, j, s / (float)P);
    }
}

void op_avgpool(graph *g, op *o)
{
    int xi = o->in[0], yi = o->out[0];
    geo d = dims(&g->t[xi]);
    if (d.N * d.C == 0)
        return;
    k_avgpool<<<cu_blocks(d.N * d.C, 256), 256, 0, cu.s>>>(CU_PTR(g, xi), CU_DT(g, xi),
                                                           CU_PTR(g, yi), CU_DT(g, yi), d.N,
                                                           d.C, d.P, d.nhwc);
    cu_launched();
}

/* dx (+)= dy[n, c] / P. */
struct avg_bwd_f {
    const void *dy;
    void *dx;
    int ddt, xdt, acc;
    float Pf;
    chan ch;
    template <int V>
    __device__ void run(size_t i) const
    {
        float o[V];
        if (acc)
            ldv<V>(dx, xdt, i, o);
        size_t nc = ch.nc(i);
#pragma unroll
        for (int k = 0; k < V; k++) {
            float v = cu_ld(dy, ddt, nc + ch.step(k)) / Pf;
            o[k] = acc ? o[k] + v : v;
        }
        stv<V>(dx, xdt, i, o);
    }
};

void op_avgpool_bwd(graph *g, op *o)
{
    int di = o->in[0], xi = o->out[0];
    geo d = dims(&g->t[xi]);
    avg_bwd_f f = {CU_PTR(g, di), CU_PTR(g, xi), CU_DT(g, di), CU_DT(g, xi), CU_ACC(o, 0),
                   (float)d.P, mkchan(d)};
    launch_map(f, d.N * d.C * d.P, chan_vec(d) && al16(f.dx));
}

/* ---- flatten: (N, C, H, W) <-> (N, C*H*W) in (c, h, w) order ------------------------- */

/* Element i of the flat side; lay: its offset in the 4-D tensor. */
struct flat_f {
    const void *src;
    void *dst;
    int sdt, ddt, backward, acc;
    size_t C, P;
    int nhwc;
    template <int V>
    __device__ void run(size_t i) const
    {
        static_assert(V == 1, "scalar");
        size_t lay = i;
        if (nhwc) {
            size_t n = udiv(i, C * P), r = i - n * C * P, c = udiv(r, P), q = r - c * P;
            lay = (n * P + q) * C + c;
        }
        if (!backward) {
            cu_st(dst, ddt, i, cu_ld(src, sdt, lay));
        } else {
            float v = cu_ld(src, sdt, i);
            cu_st(dst, ddt, lay, acc ? cu_ld(dst, ddt, lay) + v : v);
        }
    }
};

template <class F>
__global__ void k_map1(F f, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        f.template run<1>(i);
}

void flatten(graph *g, int xi, int yi, int backward, int acc)
{
    geo d = dims(&g->t[backward ? yi : xi]);
    size_t n = d.N * d.C * d.P;
    if (n == 0)
        return;
    if (!d.nhwc) { /* the same order: a copy */
        cu_cast(CU_PTR(g, xi), CU_DT(g, xi), CU_PTR(g, yi), CU_DT(g, yi), n, acc);
        return;
    }
    flat_f f = {CU_PTR(g, xi), CU_PTR(g, yi), CU_DT(g, xi), CU_DT(g, yi), backward, acc,
                d.C, d.P, d.nhwc};
    k_map1<flat_f><<<cu_blocks(n, 256), 256, 0, cu.s>>>(f, n);
    cu_launched();
}

void op_flatten(graph *g, op *o) { flatten(g, o->in[0], o->out[0], 0, 0); }
void op_flatten_bwd(graph *g, op *o) { flatten(g, o->in[0], o->out[0], 1, CU_ACC(o, 0)); }

/* ---- dropout ----------------------------------------------------------------------------
 * mask[i] = U(key, i) < p ? 0 : 1 / (1 - p), key = mix(seed ^ step << 40)
 * (cpu dropout_mask_range), per element or per (n, c) (dropout2d). */

/* Element-wise: mask and y = x mask in one pass. */
struct drop_f {
    const void *x;
    void *y, *mask;
    int xdt, ydt, mdt;
    float p, scale;
    uint64_t seed;
    const int64_t *step;
    template <int V>
    __device__ void run(size_t i) const
    {
        uint64_t key = drop_key(seed, step);
        float v[V], m[V];
        ldv<V>(x, xdt, i, v);
#pragma unroll
        for (int k = 0; k < V; k++) {
            m[k] = d_rng_uniform(key, (uint64_t)(i + k)) < p ? 0.0f : scale;
            v[k] = v[k] * m[k];
        }
        stv<V>(mask, mdt, i, m);
        stv<V>(y, ydt, i, v);
    }
};

struct drop_mask_f {
    void *mask;
    int mdt;
    float p, scale;
    uint64_t seed;
    const int64_t *step;
    template <int V>
    __device__ void run(size_t i) const
    {
        static_assert(V == 1, "scalar");
        uint64_t key = drop_key(seed, step);
        cu_st(mask, mdt, i, d_rng_uniform(key, (uint64_t)i) < p ? 0.0f : scale);
    }
};

/* y = x mask[n, c]. */
struct drop_ch_f {
    const void *x, *mask;
    void *y;
    int xdt, mdt, ydt;
    chan ch;
    template <int V>
    __device__ void run(size_t i) const
    {
        float v[V];
        ldv<V>(x, xdt, i, v);
        size_t nc = ch.nc(i);
#pragma unroll
        for (int k = 0; k < V; k++)
            v[k] = v[k] * cu_ld(mask, mdt, nc + ch.step(k));
        stv<V>(y, ydt, i, v);
    }
};

void op_dropout(graph *g, op *o)
{
    int xi = o->in[0], yi = o->out[0], mi = o->out[1];
    float scale = 1.0f / (1.0f - o->p);
    if (!o->channel) {
        drop_f f = {CU_PTR(g, xi), CU_PTR(g, yi), CU_PTR(g, mi), CU_DT(g, xi), CU_DT(g, yi),
                    CU_DT(g, mi), o->p, scale, o->seed, cu.step};
        launch_map(f, cu_numel(g, xi), al16(f.x) && al16(f.y) && al16(f.mask));
        return;
    }
    size_t nm = cu_numel(g, mi);
    if (nm) {
        drop_mask_f m = {CU_PTR(g, mi), CU_DT(g, mi), o->p, scale, o->seed, cu.step};
        k_map1<drop_mask_f><<<cu_blocks(nm, 256), 256, 0, cu.s>>>(m, nm);
        cu_launched();
    }
    geo d = dims(&g->t[xi]);
    drop_ch_f f = {CU_PTR(g, xi), CU_PTR(g, mi), CU_PTR(g, yi), CU_DT(g, xi), CU_DT(g, mi),
                   CU_DT(g, yi), mkchan(d)};
    launch_map(f, d.N * d.C * d.P, chan_vec(d) && al16(f.x) && al16(f.y));
}

/* dx (+)= dy mask[i] (or mask[n, c]). */
struct drop_bwd_f {
    const void *dy, *mask;
    void *dx;
    int ddt, mdt, xdt, acc, channel;
    chan ch;
    template <int V>
    __device__ void run(size_t i) const
    {
        float d[V], m[V], o[V];
        ldv<V>(dy, ddt, i, d);
        if (!channel) {
            ldv<V>(mask, mdt, i, m);
        } else {
            size_t nc = ch.nc(i);
#pragma unroll
            for (int k = 0; k < V; k++)
                m[k] = cu_ld(mask, mdt, nc + ch.step(k));
        }
        if (acc)
            ldv<V>(dx, xdt, i, o);
#pragma unroll
        for (int k = 0; k < V; k++)
            o[k] = (acc ? o[k] : 0.0f) + d[k] * m[k];
        stv<V>(dx, xdt, i, o);
    }
};

void op_dropout_bwd(graph *g, op *o)
{
    int di = o->in[0], mi = o->in[1], xi = o->out[0];
    geo d = dims(&g->t[xi]);
    drop_bwd_f f = {CU_PTR(g, di), CU_PTR(g, mi), CU_PTR(g, xi), CU_DT(g, di), CU_DT(g, mi),
                    CU_DT(g, xi), CU_ACC(o, 0), o->channel, mkchan(d)};
    int vec = al16(f.dy) && al16(f.dx) && (o->channel ? chan_vec(d) : al16(f.mask));
    launch_map(f, cu_numel(g, xi), vec);
}

/* ---- log-softmax and negative log-likelihood (mean over rows) ---------------------------- */

/* A warp per row of (M, N). */
__global__ void k_logsoftmax(const void *x, int xdt, void *y, int ydt, size_t M, size_t N)
{
    const int lane = threadIdx.x & 31;
    for (size_t row = (size_t)blockIdx.x * 8 + (threadIdx.x >> 5); row < M;
         row += (size_t)gridDim.x * 8) {
        size_t b = row * N;
        float m = -INFINITY, s = 0.0f;
        for (size_t j = lane; j < N; j += 32) {
            float v = cu_ld(x, xdt, b + j);
            m = v > m ? v : m;
        }
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            float v = __shfl_xor_sync(FULL, m, off);
            m = v > m ? v : m;
        }
        for (size_t j = lane; j < N; j += 32)
            s += expf(cu_ld(x, xdt, b + j) - m);
#pragma unroll
        for (int off = 16; off > 0; off >>= 1)
            s += __shfl_xor_sync(FULL, s, off);
        float l = m + logf(s);
        for (size_t j = lane; j < N; j += 32)
            cu_st(y, ydt, b + j, cu_ld(x, xdt, b + j) - l);
    }
}

/* dx (+)= dy - exp(y) sum(dy), a warp per row. */
__global__ void k_logsoftmax_bwd(const void *dy, int ddt, const void *y, int ydt, void *dx,
                                 int xdt, int acc, size_t M, size_t N)
{
    const int lane = threadIdx.x & 31;
    for (size_t row = (size_t)blockIdx.x * 8 + (threadIdx.x >> 5); row < M;
         row += (size_t)gridDim.x * 8) {
        size_t b = row * N;
        float s = 0.0f;
        for (size_t j = lane; j < N; j += 32)
            s += cu_ld(dy, ddt, b + j);
#pragma unroll
        for (int off = 16; off > 0; off >>= 1)
            s += __shfl_xor_sync(FULL, s, off);
        for (size_t j = lane; j < N; j += 32) {
            float v = cu_ld(dy, ddt, b + j) - expf(cu_ld(y, ydt, b + j)) * s;
            cu_st(dx, xdt, b + j, acc ? cu_ld(dx, xdt, b + j) + v : v);
        }
    }
}

/* (M, N) of a tensor: N its last dimension. */
void rows(const graph *g, int t, size_t *M, size_t *N)
{
    const tensor *x = &g->t[t];
    *N = (size_t)x->shape[x->ndim - 1];
    *M = *N ? cu_numel(g, t) / *N : 0;
}

void op_logsoftmax(graph *g, op *o)
{
    int xi = o->in[0], yi = o->out[0];
    size_t M, N;
    rows(g, xi, &M, &N);
    if (M == 0)
        return;
    k_logsoftmax<<<cu_blocks(M, 8), 256, 0, cu.s>>>(CU_PTR(g, xi), CU_DT(g, xi), CU_PTR(g, yi),
                                                    CU_DT(g, yi), M, N);
    cu_launched();
}

void op_logsoftmax_bwd(graph *g, op *o)
{
    int di = o->in[0], yi = o->in[1], xi = o->out[0];
    size_t M, N;
    rows(g, yi, &M, &N);
    if (M == 0)
        return;
    k_logsoftmax_bwd<<<cu_blocks(M, 8), 256, 0, cu.s>>>(CU_PTR(g, di), CU_DT(g, di),
                                                        CU_PTR(g, yi), CU_DT(g, yi),
                                                        CU_PTR(g, xi), CU_DT(g, xi),
                                                        CU_ACC(o, 0), M, N);
    cu_launched();
}

/* loss = sum_i (lse[i] - x[i, t[i]]) / M, in double; one block. The NLL
 * (x the log-probabilities) has no lse: 0 in its place. */
__global__ void __launch_bounds__(256)
k_target_loss(const void *x, int xdt, const int32_t *t, const float *lse, void *loss, int sdt,
              size_t M, size_t N)
{
    __shared__ double sh[256];
    const int tid = threadIdx.x;
    double s = 0.0;
    for (size_t i = tid; i < M; i += 256)
        s += (lse ? (double)lse[i] : 0.0) - (double)cu_ld(x, xdt, i * N + (size_t)(int64_t)t[i]);
    sh[tid] = s;
    __syncthreads();
    for (int h = 128; h > 0; h >>= 1) {
        if (tid < h)
            sh[tid] += sh[tid + h];
        __syncthreads();
    }
    if (tid == 0)
        cu_st(loss, sdt, 0, (float)(sh[0] / (double)M));
}

void op_nll(graph *g, op *o)
{
    int li = o->in[0];
    size_t M, N;
    rows(g, li, &M, &N);
    k_target_loss<<<1, 256, 0, cu.s>>>(CU_PTR(g, li), CU_DT(g, li), (const int32_t *)CU_PTR(g, o->in[1]),
                                       NULL, CU_PTR(g, o->out[0]), CU_DT(g, o->out[0]), M, N);
    cu_launched();
}

/* d (+)= -(1 / M) scale at (i, t[i]), 0 elsewhere. */
__global__ void k_nll_bwd(const int32_t *t, void *d, int ddt, size_t M, size_t N, float invm,
                          const float *scaler, int acc)
{
    float v0 = invm * scaler[0];
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < M * N; i += stride) {
        size_t r = udiv(i, N), j = i - r * N;
        float v = acc ? cu_ld(d, ddt, i) : 0.0f;
        if ((int64_t)t[r] == (int64_t)j)
            v -= v0;
        cu_st(d, ddt, i, v);
    }
}

void op_nll_bwd(graph *g, op *o)
{
    int di = o->out[0];
    size_t M, N;
    rows(g, di, &M, &N);
    if (M * N == 0)
        return;
    float invm = 1.0f / (float)M;
    k_nll_bwd<<<cu_blocks(M * N, 256), 256, 0, cu.s>>>((const int32_t *)CU_PTR(g, o->in[0]),
                                                       CU_PTR(g, di), CU_DT(g, di), M, N, invm,
                                                       cu.scaler, CU_ACC(o, 0));
    cu_launched();
}

/* ---- softmax cross-entropy, one op (BERT's MLM loss) --------------------------------------- */

constexpr int CE_THREADS = 256;

/* lse[r] = log sum_j exp(x[r, j]), a block per row: one pass over the row
 * with a running maximum (each thread rescales its sum when its maximum
 * grows), then the block's (max, sum) pairs combined. */
__global__ void __launch_bounds__(CE_THREADS)
k_softmax_ce_lse(const void *x, int xdt, float *lse, size_t M, size_t N)
{
    __shared__ float sm[CE_THREADS / 32], ss[CE_THREADS / 32];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    for (size_t row = blockIdx.x; row < M; row += gridDim.x) {
        size_t b = row * N;
        float m = -INFINITY, s = 0.0f;
        for (size_t j = threadIdx.x; j < N; j += CE_THREADS) {
            float v = cu_ld(x, xdt, b + j);
            if (v > m) {
                s = s * expf(m - v) + 1.0f;
                m = v;
            } else if (v != -INFINITY) { /* -inf adds 0 (exp(-inf - -inf) would be NaN); NaN stays NaN */
                s += expf(v - m);
            }
        }
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            float om = __shfl_xor_sync(FULL, m, off), os = __shfl_xor_sync(FULL, s, off);
            float nm = fmaxf(m, om);
            s = (m == -INFINITY ? 0.0f : s * expf(m - nm)) + (om == -INFINITY ? 0.0f : os * expf(om - nm));
            m = nm;
        }
        if (lane == 0) {
            sm[w] = m;
            ss[w] = s;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            float bm = sm[0], bs = ss[0];
            for (int k = 1; k < CE_THREADS / 32; k++) {
                float nm = fmaxf(bm, sm[k]);
                bs = (bm == -INFINITY ? 0.0f : bs * expf(bm - nm)) +
                     (sm[k] == -INFINITY ? 0.0f : ss[k] * expf(sm[k] - nm));
                bm = nm;
            }
            lse[row] = bm + logf(bs);
        }
        __syncthreads();
    }
}

void op_softmax_ce(graph *g, op *o)
{
    int xi = o->in[0];
    size_t M, N;
    rows(g, xi, &M, &N);
    if (M == 0)
        return;
    float *lse = (float *)CU_PTR(g, o->out[1]);
    k_softmax_ce_lse<<<cu_blocks(M, 1), CE_THREADS, 0, cu.s>>>(CU_PTR(g, xi), CU_DT(g, xi), lse, M, N);
    cu_launched();
    k_target_loss<<<1, 256, 0, cu.s>>>(CU_PTR(g, xi), CU_DT(g, xi), (const int32_t *)CU_PTR(g, o->in[1]),
                                       lse, CU_PTR(g, o->out[0]), CU_DT(g, o->out[0]), M, N);
    cu_launched();
}

/* d (+)= (exp(x - lse[r]) - [j == t[r]]) scale / M, a block per row. */
__global__ void k_softmax_ce_bwd(const void *x, int xdt, const int32_t *t, const float *lse, void *d,
                                 int ddt, size_t M, size_t N, float invm, const float *scaler, int acc)
{
    float sc = invm * scaler[0];
    for (size_t row = blockIdx.x; row < M; row += gridDim.x) {
        size_t b = row * N, tr = (size_t)(int64_t)t[row];
        float l = lse[row];
        for (size_t j = threadIdx.x; j < N; j += blockDim.x) {
            float v = (expf(cu_ld(x, xdt, b + j) - l) - (j == tr ? 1.0f : 0.0f)) * sc;
            cu_st(d, ddt, b + j, acc ? cu_ld(d, ddt, b + j) + v : v);
        }
    }
}

void op_softmax_ce_bwd(graph *g, op *o)
{
    int xi = o->in[0], di = o->out[0];
    size_t M, N;
    rows(g, xi, &M, &N);
    if (M * N == 0)
        return;
    k_softmax_ce_bwd<<<cu_blocks(M, 1), 256, 0, cu.s>>>(CU_PTR(g, xi), CU_DT(g, xi),
                                                        (const int32_t *)CU_PTR(g, o->in[1]),
                                                        (const float *)CU_PTR(g, o->in[2]),
                                                        CU_PTR(g, di), CU_DT(g, di), M, N,
                                                        1.0f / (float)M, cu.scaler, CU_ACC(o, 0));
    cu_launched();
}

/* ---- SGD, loss scaling, EMA -------------------------------------------------------------- */

__global__ void k_found_reset(float *scaler) { scaler[1] = 0.0f; }

/* Every parameter gradient times 1 / scale; scaler[1] = 1 when one of them
 * held an inf / nan (torch's _amp_foreach_non_finite_check_and_unscale_).
 * Block (x, y): tensor y + k gridDim.y, grid-stride over its elements. */
__global__ void k_unscale(const gslot *tab, int nt, float *scaler)
{
    float inv = 1.0f / scaler[0];
    int found = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (int t = blockIdx.y; t < nt; t += gridDim.y) {
        float *p = tab[t].p;
        size_t n = tab[t].n;
        for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
            float v = p[i];
            if (!isfinite(v))
                found = 1;
            p[i] = v * inv;
        }
    }
    if (found)
        scaler[1] = 1.0f;
}

/* After the last SGD op (torch's _amp_update_scale_, growth 2, backoff 0.5,
 * interval 2000). */
__global__ void k_scale_update(float *s)
{
    if (s[1] != 0.0f) {
        s[0] = s[0] * 0.5f;
        s[2] = 0.0f;
        s[3] = s[3] + 1.0f;
    } else {
        float ok = s[2] + 1.0f;
        if (ok >= 2000.0f) {
            float ns = s[0] * 2.0f;
            if (isfinite(ns))
                s[0] = ns;
            s[2] = 0.0f;
        } else
            s[2] = ok;
    }
}

constexpr int MT_BLOCKS_X = 64; /* blocks per tensor of the multi-tensor kernels */

/* fp16 training: the first optimizer op (SGD or AdamW) unscales every
 * parameter gradient, the last updates the scale. */
void opt_begin(graph *g, op *o)
{
    if (S.fp16 && (int)(o - g->ops) == S.first_opt && S.ngrads > 0) {
        k_found_reset<<<1, 1, 0, cu.s>>>(cu.scaler);
        cu_launched();
        dim3 grid(MT_BLOCKS_X, (unsigned)(S.ngrads < 65535 ? S.ngrads : 65535));
        k_unscale<<<grid, 256, 0, cu.s>>>(S.grads, S.ngrads, cu.scaler);
        cu_launched();
    }
}

void opt_end(graph *g, op *o)
{
    if (S.fp16 && (int)(o - g->ops) == S.last_opt) {
        k_scale_update<<<1, 1, 0, cu.s>>>(cu.scaler);
        cu_launched();
    }
}

/* ---- the optimizer ops: one multi-tensor kernel per type ------------------------------------
 *
 * cu_ops_prepare gives each optimizer type (SGD, AdamW) a device table of
 * its tensors (w, g, state, n and the op's own hyperparameters) and a table
 * of chunks: (tensor, chunk c) pairs, chunk c being elements [c OPT_CHUNK,
 * (c + 1) OPT_CHUNK) of the tensor, one block each. The first op of the type
 * in the plan launches one kernel over every chunk; the other ops of the type
 * do nothing. Both tables are uploaded once at prepare: a step allocates,
 * copies and synchronises nothing, and a CUDA Graph captures the one launch.
 *
 * Chunks rather than the EMA's blockIdx.y = tensor with a fixed 64 blocks
 * per tensor: every block does the same work (at most OPT_CHUNK elements),
 * so the kernel's tail is one chunk, not the largest tensor's share spread
 * over 64 blocks while the blocks of the small tensors (ResNet-50: 107 of
 * its 161 tensors are biases / BN affines of <= 2048 elements) sit idle; a
 * bias gets one block instead of 64 that mostly exit at once. ResNet-50
 * (25.6 M parameters): 1,667 blocks, about 1.6 waves of 8 blocks of 256
 * threads on an H100's 132 SMs; BERT-large (335 M): ~20,700.
 *
 * Where it launches, and why the first op is the right one: pass_autodiff
 * appends every optimizer op after the whole backward (and the EMA ops
 * after them), pass_data_parallel puts every OP_ALLREDUCE_WAIT right before
 * the first optimizer op (insert_allreduces at grads_in_completion_order's
 * first_opt), and no later pass reorders ops; so at the first optimizer op
 * every gradient is complete and averaged over the ranks, as the fp16
 * unscale of every gradient at that same op (opt_begin) already requires.
 * Launching at the last op of the type would not be safer and would break
 * the op-by-op callers that check each op right after it runs
 * (tests/gpu/ops_check). What launching at the first op relies on, prepare
 * checks (opt_prepare): the ops from the first optimizer op to the last are
 * all optimizer ops (nothing between them reads a weight the kernel has
 * already updated, or writes a gradient it has already read), and no two
 * optimizer ops write overlapping memory (the chunks of one kernel run in
 * any order); where either fails the ops run per tensor and the log says
 * why. MATRIX_ENGINE_OPTIM=per-tensor asks for the per-tensor kernels (the
 * checks compare the two bit for bit: tests/gpu/model_check.sh). */

constexpr size_t OPT_CHUNK = 16384; /* elements per block: 64 per thread */
constexpr int OPT_THREADS = 256;

struct sgd_slot { float *w; const float *g; float *buf; size_t n; float lr, mom, wd; };
struct adamw_slot { float *w; const float *g; float *m, *v; size_t n; float lr, wd, beta1, beta2, eps; };
struct opt_chunk { int t; unsigned c; }; /* tensor t of the table, its chunk c */

struct {
    int per_tensor;          /* MATRIX_ENGINE_OPTIM=per-tensor, or a check of opt_prepare failed */
    int first_sgd, first_adamw; /* op index that launches the kernel, -1: none */
    sgd_slot *sgd;           /* device tables */
    adamw_slot *adamw;
    opt_chunk *sgd_ch, *adamw_ch;
    int nsgd, nadamw, nsgd_ch, nadamw_ch;
} OPT = {0, -1, -1, NULL, NULL, NULL, NULL, 0, 0, 0, 0};

/* One element of cpu sgd_range: g += wd w; buf = momentum buf + g (g at the
 * first update); w -= lr buf, without contraction into fma (the CPU's
 * rounding). The per-tensor and the multi-tensor kernel both call it, so
 * their arithmetic is the same by construction. */
__device__ __forceinline__ void sgd_elem(float *w, const float *gr, float *buf, size_t i, float lr,
                                         float mom, float wd, bool first)
{
    float d = __fadd_rn(gr[i], __fmul_rn(wd, w[i]));
    float b = first ? d : __fadd_rn(__fmul_rn(mom, buf[i]), d);
    buf[i] = b;
    w[i] = __fsub_rn(w[i], __fmul_rn(lr, b));
}

/* The first update: step 1 less the steps skipped before this one. */
__device__ __forceinline__ bool sgd_first(const int64_t *step, const float *scaler)
{
    return *step - (int64_t)scaler[3] == 1;
}

/* One SGD op (MATRIX_ENGINE_OPTIM=per-tensor). Skipped when scaler[1]
 * (inf / nan found by the unscale). */
__global__ void k_sgd(float *w, const float *gr, float *buf, size_t n, float lr, float mom,
                      float wd, const int64_t *step, const float *scaler)
{
    if (scaler[1] != 0.0f)
        return;
    bool first = sgd_first(step, scaler);
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        sgd_elem(w, gr, buf, i, lr, mom, wd, first);
}

/* Every SGD tensor, a block per chunk (k_sgd's arithmetic: sgd_elem). */
__global__ void k_sgd_mt(const sgd_slot *tab, const opt_chunk *ch, const int64_t *step,
                         const float *scaler)
{
    if (scaler[1] != 0.0f)
        return;
    bool first = sgd_first(step, scaler);
    opt_chunk c = ch[blockIdx.x];
    sgd_slot s = tab[c.t];
    size_t lo = (size_t)c.c * OPT_CHUNK, hi = lo + OPT_CHUNK < s.n ? lo + OPT_CHUNK : s.n;
    for (size_t i = lo + threadIdx.x; i < hi; i += blockDim.x)
        sgd_elem(s.w, s.g, s.buf, i, s.lr, s.mom, s.wd, first);
}

/* cpu adamw_range (torch.optim.AdamW): a step skipped for inf / nan does not
 * count (the optimizer step t is the device step counter minus the skipped
 * steps, as torch's state['step'] under GradScaler). The bias corrections
 * st = lr / (1 - beta1^t) and sbc2 = sqrt(1 - beta2^t), in double. */
__device__ __forceinline__ void adamw_corr(float lr, float beta1, float beta2, const int64_t *step,
                                           const float *scaler, float *st, float *sbc2)
{
    double t = (double)*step - (double)scaler[3];
    double bc1 = 1.0 - pow((double)beta1, t), bc2 = 1.0 - pow((double)beta2, t);
    *st = (float)(lr / bc1);
    *sbc2 = (float)sqrt(bc2);
}

/* One element of the AdamW update. Plain float operators, as the kernel
 * always had them: nvcc contracts some into fma (1 - lr wd, the moment
 * updates); the per-tensor and the multi-tensor kernel both call this one
 * function so that they contract alike (their SASS was compared, NOTES.md). */
__device__ __forceinline__ void adamw_elem(float *w, const float *gr, float *m, float *v, size_t i,
                                           float lr, float wd, float beta1, float beta2, float eps,
                                           float st, float sbc2)
{
    float wi = w[i] * (1.0f - lr * wd), g = gr[i];
    float mi = beta1 * m[i] + (1.0f - beta1) * g;
    float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    w[i] = wi - st * mi / (sqrtf(vi) / sbc2 + eps);
}

/* One AdamW op (MATRIX_ENGINE_OPTIM=per-tensor). */
__global__ void k_adamw(float *w, const float *gr, float *m, float *v, size_t n, float lr,
                        float wd, float beta1, float beta2, float eps, const int64_t *step,
                        const float *scaler)
{
    if (scaler[1] != 0.0f)
        return;
    float st, sbc2;
    adamw_corr(lr, beta1, beta2, step, scaler, &st, &sbc2);
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        adamw_elem(w, gr, m, v, i, lr, wd, beta1, beta2, eps, st, sbc2);
}

/* Every AdamW tensor, a block per chunk (k_adamw's arithmetic). */
__global__ void k_adamw_mt(const adamw_slot *tab, const opt_chunk *ch, const int64_t *step,
                           const float *scaler)
{
    if (scaler[1] != 0.0f)
        return;
    opt_chunk c = ch[blockIdx.x];
    adamw_slot s = tab[c.t];
    float st, sbc2;
    adamw_corr(s.lr, s.beta1, s.beta2, step, scaler, &st, &sbc2);
    size_t lo = (size_t)c.c * OPT_CHUNK, hi = lo + OPT_CHUNK < s.n ? lo + OPT_CHUNK : s.n;
    for (size_t i = lo + threadIdx.x; i < hi; i += blockDim.x)
        adamw_elem(s.w, s.g, s.m, s.v, i, s.lr, s.wd, s.beta1, s.beta2, s.eps, st, sbc2);
}

void op_sgd(graph *g, op *o)
{
    opt_begin(g, o);
    if (!OPT.per_tensor) {
        if ((int)(o - g->ops) == OPT.first_sgd && OPT.nsgd_ch > 0) {
            k_sgd_mt<<<(unsigned)OPT.nsgd_ch, OPT_THREADS, 0, cu.s>>>(OPT.sgd, OPT.sgd_ch, cu.step,
                                                                      cu.scaler);
            cu_launched();
        }
    } else if (size_t n = cu_numel(g, o->in[0])) {
        k_sgd<<<cu_blocks(n, 256), 256, 0, cu.s>>>(
            (float *)CU_PTR(g, o->in[0]), (const float *)CU_PTR(g, o->in[1]),
            (float *)CU_PTR(g, o->in[2]), n, o->lr, o->momentum, o->wd, cu.step, cu.scaler);
        cu_launched();
    }
    opt_end(g, o);
}

void op_adamw(graph *g, op *o)
{
    opt_begin(g, o);
    if (!OPT.per_tensor) {
        if ((int)(o - g->ops) == OPT.first_adamw && OPT.nadamw_ch > 0) {
            k_adamw_mt<<<(unsigned)OPT.nadamw_ch, OPT_THREADS, 0, cu.s>>>(OPT.adamw, OPT.adamw_ch,
                                                                          cu.step, cu.scaler);
            cu_launched();
        }
    } else if (size_t n = cu_numel(g, o->in[0])) {
        k_adamw<<<cu_blocks(n, 256), 256, 0, cu.s>>>(
            (float *)CU_PTR(g, o->in[0]), (const float *)CU_PTR(g, o->in[1]),
            (float *)CU_PTR(g, o->in[2]), (float *)CU_PTR(g, o->in[3]), n, o->lr, o->wd,
            o->beta1, o->beta2, o->eps, cu.step, cu.scaler);
        cu_launched();
    }
    opt_end(g, o);
}

/* ---- the optimizer tables, made by cu_ops_prepare ------------------------------------------ */

void *upload_table(const void *h, size_t n); /* with the prepare helpers, below */

struct opt_span { uintptr_t lo, hi; int op; }; /* bytes [lo, hi) an optimizer op writes */

int span_cmp(const void *a, const void *b)
{
    uintptr_t x = ((const opt_span *)a)->lo, y = ((const opt_span *)b)->lo;
    return x < y ? -1 : x > y;
}

/* Why the optimizer ops of ops[0 .. nrun) cannot each share their type's
 * kernel launched at the type's first op (see the head of the optimizer
 * ops), written into why; NULL when they can. */
const char *opt_unfusable(const graph *g, int nrun, char *why, size_t n)
{
    int first = -1, last = -1, ns = 0;
    for (int i = 0; i < nrun; i++)
        if (g->ops[i].type == OP_SGD || g->ops[i].type == OP_ADAMW) {
            first = first < 0 ? i : first;
            last = i;
        }
    for (int i = first; i >= 0 && i <= last; i++)
        if (g->ops[i].type != OP_SGD && g->ops[i].type != OP_ADAMW) {
            snprintf(why, n, "op '%s' (%s) lies between the optimizer ops", g->ops[i].name,
                     graph_op_name(g->ops[i].type));
            return why;
        }
    opt_span *sp = (opt_span *)calloc(3 * (size_t)(last - first + 1) + 1, sizeof *sp);
    if (!sp)
        cu_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    for (int i = first; i >= 0 && i <= last; i++) {
        const op *o = &g->ops[i];
        const int wr[3] = {o->in[0], o->in[2], o->type == OP_ADAMW ? o->in[3] : -1};
        for (int k = 0; k < 3; k++)
            if (wr[k] >= 0 && cu_numel(g, wr[k]) > 0) {
                sp[ns].lo = (uintptr_t)CU_PTR(g, wr[k]);
                sp[ns].hi = sp[ns].lo + cu_numel(g, wr[k]) * sizeof(float);
                sp[ns++].op = i;
            }
    }
    qsort(sp, (size_t)ns, sizeof *sp, span_cmp);
    const char *r = NULL;
    for (int k = 1; k < ns && !r; k++)
        if (sp[k].lo < sp[k - 1].hi) {
            snprintf(why, n, "optimizer ops '%s' and '%s' write overlapping memory",
                     g->ops[sp[k - 1].op].name, g->ops[sp[k].op].name);
            r = why;
        }
    free(sp);
    return r;
}

/* The device table of (tensor, chunk) pairs covering tensors of n[0 .. nt)
 * elements, their count in *nch; NULL when out of memory. */
opt_chunk *opt_chunks(const size_t *n, int nt, int *nch)
{
    size_t total = 0;
    for (int t = 0; t < nt; t++)
        total += (n[t] + OPT_CHUNK - 1) / OPT_CHUNK;
    if (total > 0x7fffffff) /* a grid's x dimension */
        cu_fail(__FILE__, __LINE__, "opt_chunks", "more than 2^31 optimizer chunks");
    *nch = (int)total;
    if (!total)
        return NULL;
    opt_chunk *h = (opt_chunk *)calloc(total, sizeof *h);
    if (!h)
        cu_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    size_t k = 0;
    for (int t = 0; t < nt; t++)
        for (size_t c = 0; c * OPT_CHUNK < n[t]; c++)
            h[k++] = opt_chunk{t, (unsigned)c};
    opt_chunk *d = (opt_chunk *)upload_table(h, total * sizeof *h);
    free(h);
    return d;
}

/* The tables of opt_prepare; -1 when out of device memory. */
int opt_tables(graph *g, int nrun)
{
    sgd_slot *hs = (sgd_slot *)calloc((size_t)OPT.nsgd + 1, sizeof *hs);
    adamw_slot *ha = (adamw_slot *)calloc((size_t)OPT.nadamw + 1, sizeof *ha);
    size_t *ns = (size_t *)calloc((size_t)OPT.nsgd + 1, sizeof *ns);
    size_t *na = (size_t *)calloc((size_t)OPT.nadamw + 1, sizeof *na);
    if (!hs || !ha || !ns || !na)
        cu_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    int s = 0, a = 0, rc = 0;
    for (int i = 0; i < nrun; i++) {
        const op *o = &g->ops[i];
        if (o->type != OP_SGD && o->type != OP_ADAMW)
            continue;
        float *w = (float *)CU_PTR(g, o->in[0]), *st = (float *)CU_PTR(g, o->in[2]);
        const float *gr = (const float *)CU_PTR(g, o->in[1]);
        if (o->type == OP_SGD) {
            ns[s] = cu_numel(g, o->in[0]);
            hs[s] = sgd_slot{w, gr, st, ns[s], o->lr, o->momentum, o->wd};
            s++;
        } else {
            na[a] = cu_numel(g, o->in[0]);
            ha[a] = adamw_slot{w, gr, st, (float *)CU_PTR(g, o->in[3]), na[a], o->lr, o->wd,
                               o->beta1, o->beta2, o->eps};
            a++;
        }
    }
    if (OPT.nsgd && (!(OPT.sgd = (sgd_slot *)upload_table(hs, OPT.nsgd * sizeof *hs)) ||
                     !(OPT.sgd_ch = opt_chunks(ns, OPT.nsgd, &OPT.nsgd_ch))))
        rc = -1;
    if (!rc && OPT.nadamw &&
        (!(OPT.adamw = (adamw_slot *)upload_table(ha, OPT.nadamw * sizeof *ha)) ||
         !(OPT.adamw_ch = opt_chunks(na, OPT.nadamw, &OPT.nadamw_ch))))
        rc = -1;
    free(hs);
    free(ha);
    free(ns);
    free(na);
    return rc;
}

/* MATRIX_ENGINE_OPTIM (fused, the default, or per-tensor), the launching
 * ops, the checks of opt_unfusable and the tables; a log line says which
 * kernels run. 0, -1 out of device memory, -3 a bad MATRIX_ENGINE_OPTIM
 * (a refused setting: exit 2). */
int opt_prepare(graph *g, int nrun)
{
    char why[2 * GRAPH_NAME + 64];
    int per_tensor = knob_get(KNOB_OPTIM, why, sizeof why); /* 0 fused, 1 per-tensor */
    if (per_tensor < 0) { /* refused by the engine before it ran; said here to a test that prepares */
        fprintf(stderr, "matrix-engine: cuda: %s\n", why);
        return -3;
    }
    for (int i = 0; i < nrun; i++) {
        if (g->ops[i].type == OP_SGD && OPT.nsgd++ == 0)
            OPT.first_sgd = i;
        if (g->ops[i].type == OP_ADAMW && OPT.nadamw++ == 0)
            OPT.first_adamw = i;
    }
    if (!OPT.nsgd && !OPT.nadamw)
        return 0;
    const char *no = per_tensor ? "MATRIX_ENGINE_OPTIM=per-tensor" : opt_unfusable(g, nrun, why, sizeof why);
    if (no) {
        OPT.per_tensor = 1;
        fprintf(stderr, "matrix-engine: cuda: optimizer: %d SGD and %d AdamW tensors, one kernel "
                "each (%s)\n", OPT.nsgd, OPT.nadamw, no);
        return 0;
    }
    if (opt_tables(g, nrun))
        return -1;
    if (OPT.nsgd)
        fprintf(stderr, "matrix-engine: cuda: optimizer: %d SGD tensors in one multi-tensor "
                "kernel (%d blocks of up to %zu elements)\n", OPT.nsgd, OPT.nsgd_ch, OPT_CHUNK);
    if (OPT.nadamw)
        fprintf(stderr, "matrix-engine: cuda: optimizer: %d AdamW tensors in one multi-tensor "
                "kernel (%d blocks of up to %zu elements)\n", OPT.nadamw, OPT.nadamw_ch, OPT_CHUNK);
    return 0;
}

void opt_release(void)
{
    cu_free(OPT.sgd, OPT.nsgd * sizeof(sgd_slot));
    cu_free(OPT.adamw, OPT.nadamw * sizeof(adamw_slot));
    cu_free(OPT.sgd_ch, OPT.nsgd_ch * sizeof(opt_chunk));
    cu_free(OPT.adamw_ch, OPT.nadamw_ch * sizeof(opt_chunk));
    OPT.sgd = NULL;
    OPT.adamw = NULL;
    OPT.sgd_ch = OPT.adamw_ch = NULL;
    OPT.nsgd = OPT.nadamw = OPT.nsgd_ch = OPT.nadamw_ch = 0;
    OPT.per_tensor = 0;
    OPT.first_sgd = OPT.first_adamw = -1;
}

/* cpu ema_range over every pair: e = m e + (1 - m) w, without fma. */
__global__ void k_ema(const eslot *tab, int nt)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (int t = blockIdx.y; t < nt; t += gridDim.y) {
        const float *w = tab[t].w;
        float *e = tab[t].e;
        float m = tab[t].m, m1 = __fsub_rn(1.0f, m);
        size_t n = tab[t].n;
        for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
            e[i] = __fadd_rn(__fmul_rn(m, e[i]), __fmul_rn(m1, w[i]));
    }
}

/* The first EMA op of the plan updates every pair; the others do nothing. */
void op_ema(graph *g, op *o)
{
    if ((int)(o - g->ops) != S.first_ema || S.nemas == 0)
        return;
    dim3 grid(MT_BLOCKS_X, (unsigned)(S.nemas < 65535 ? S.nemas : 65535));
    k_ema<<<grid, 256, 0, cu.s>>>(S.emas, S.nemas);
    cu_launched();
}

/* ---- BERT: embedding, layer norm, attention, token-0 select ------------------------------ */

/* y[r, j] = word[ids[r], j] + pos[r % T, j] + type[types[r], j] (cpu embed_range) */
__global__ void k_embed(const int32_t *ids, const int32_t *types, const float *we,
                        const float *pe, const float *te, void *y, int ydt, size_t R, size_t T,
                        size_t C)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < R * C; i += stride) {
        size_t r = i / C, j = i - r * C;
        float v = we[(size_t)ids[r] * C + j] + pe[(r % T) * C + j] + te[(size_t)types[r] * C + j];
        cu_st(y, ydt, i, v);
    }
}

void op_embed(graph *g, op *o)
{
    size_t R = cu_numel(g, o->in[0]), T = (size_t)g->t[o->in[0]].shape[1];
    size_t C = (size_t)g->t[o->in[2]].shape[1];
    if (!R)
        return;
    k_embed<<<cu_blocks(R * C, 256), 256, 0, cu.s>>>(
        (const int32_t *)CU_PTR(g, o->in[0]), (const int32_t *)CU_PTR(g, o->in[1]),
        (const float *)CU_PTR(g, o->in[2]), (const float *)CU_PTR(g, o->in[3]),
        (const float *)CU_PTR(g, o->in[4]), CU_PTR(g, o->out[0]), CU_DT(g, o->out[0]), R, T, C);
    cu_launched();
}

__global__ void k_iota(int32_t *v, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        v[i] = (int32_t)i;
}

/* Word table: rows sorted by id (stable: in row order); the first position
 * of each run of equal ids sums that run's dy rows in order and adds them to
 * dw[id] (deterministic, no atomics). Block: one sorted position, 128
 * columns; grid.y over column blocks. */
__global__ void k_embed_word_bwd(const int32_t *key, const int32_t *row, const void *dy, int ddt,
                                 float *dw, size_t R, size_t C)
{
    size_t i = blockIdx.x, j = (size_t)blockIdx.y * blockDim.x + threadIdx.x;
    if (j >= C || (i > 0 && key[i] == key[i - 1]))
        return;
    float acc = 0.0f;
    for (size_t k = i; k < R && key[k] == key[i]; k++)
        acc += cu_ld(dy, ddt, (size_t)row[k] * C + j);
    dw[(size_t)key[i] * C + j] += acc;
}

/* Position table: dpos[p, j] (+)= sum over b of dy[b T + p, j], in b order. */
__global__ void k_embed_pos_bwd(const void *dy, int ddt, float *dp, size_t B, size_t T,
                                size_t P, size_t C, int acc)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < P * C; i += stride) {
        size_t p = i / C, j = i - p * C;
        float s = 0.0f;
        if (p < T)
            for (size_t b = 0; b < B; b++)
                s += cu_ld(dy, ddt, (b * T + p) * C + j);
        dp[i] = acc ? dp[i] + s : s;
    }
}

constexpr int EMB_CHUNK = 256; /* rows per partial of the token-type table */

/* Token-type table, pass 1: per chunk of EMB_CHUNK rows and column, the sum
 * of dy over the chunk's rows of each type: part[(chunk NT + t) C + j]. */
__global__ void k_embed_type_part(const void *dy, int ddt, const int32_t *types, float *part,
                                  size_t R, size_t NT, size_t C)
{
    size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x, ch = blockIdx.y;
    if (j >= C)
        return;
    for (size_t t = 0; t < NT; t++)
        part[(ch * NT + t) * C + j] = 0.0f;
    size_t r1 = (ch + 1) * EMB_CHUNK < R ? (ch + 1) * EMB_CHUNK : R;
    for (size_t r = ch * EMB_CHUNK; r < r1; r++)
        part[(ch * NT + (size_t)types[r]) * C + j] += cu_ld(dy, ddt, r * C + j);
}

/* Pass 2: dtype[t, j] (+)= the chunks' partials in chunk order. */
__global__ void k_embed_type_sum(const float *part, float *dt, size_t nch, size_t NT, size_t C,
                                 int acc)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= NT * C)
        return;
    size_t t = i / C, j = i - t * C;
    float s = 0.0f;
    for (size_t ch = 0; ch < nch; ch++)
        s += part[(ch * NT + t) * C + j];
    dt[i] = acc ? dt[i] + s : s;
}

/* Bytes of the sort buffers (keys, rows: in and out) and cub's scratch. */
size_t embed_sort_need(size_t R, size_t *tmp)
{
    size_t t = 0;
    cub::DeviceRadixSort::SortPairs(NULL, t, (const int32_t *)NULL, (int32_t *)NULL,
                                    (const int32_t *)NULL, (int32_t *)NULL, (int)R);
    *tmp = t;
    return 4 * R * sizeof(int32_t) + 256 + t;
}

void op_embed_bwd(graph *g, op *o)
{
    const tensor *wt = &g->t[o->out[0]];
    size_t V = (size_t)wt->shape[0], C = (size_t)wt->shape[1];
    size_t R = cu_numel(g, o->in[1]), T = (size_t)g->t[o->in[1]].shape[1], B = R / T;
    size_t P = (size_t)g->t[o->out[1]].shape[0], NT = (size_t)g->t[o->out[2]].shape[0];
    const void *dy = CU_PTR(g, o->in[0]);
    int ddt = CU_DT(g, o->in[0]);
    const int32_t *ids = (const int32_t *)CU_PTR(g, o->in[1]);
    const int32_t *types = (const int32_t *)CU_PTR(g, o->in[2]);
    if (!R)
        return;
    /* word table: sort (id, row), then per run of equal ids */
    int32_t *kin = (int32_t *)S.sort, *kout = kin + R, *rin = kout + R, *rout = rin + R;
    void *tmp = (void *)(((uintptr_t)(rout + R) + 255) & ~(uintptr_t)255);
    size_t tb = S.sort_tmp;
    int bits = 1;
    while (bits < 31 && ((size_t)1 << bits) < V)
        bits++;
    cudaCheck(cudaMemcpyAsync(kin, ids, R * sizeof(int32_t), cudaMemcpyDeviceToDevice, cu.s));
    k_iota<<<cu_blocks(R, 256), 256, 0, cu.s>>>(rin, R);
    cu_launched();
    cudaCheck(cub::DeviceRadixSort::SortPairs(tmp, tb, kin, kout, rin, rout, (int)R, 0, bits, cu.s));
    float *dw = (float *)CU_PTR(g, o->out[0]);
    if (!CU_ACC(o, 0))
        cudaCheck(cudaMemsetAsync(dw, 0, V * C * sizeof(float), cu.s));
    dim3 grid((unsigned)R, (unsigned)((C + 127) / 128));
    k_embed_word_bwd<<<grid, 128, 0, cu.s>>>(kout, rout, dy, ddt, dw, R, C);
    cu_launched();
    /* position table */
    k_embed_pos_bwd<<<cu_blocks(P * C, 256), 256, 0, cu.s>>>(dy, ddt, (float *)CU_PTR(g, o->out[1]),
                                                              B, T, P, C, CU_ACC(o, 1));
    cu_launched();
    /* token-type table */
    size_t nch = (R + EMB_CHUNK - 1) / EMB_CHUNK;
    dim3 pg((unsigned)((C + 127) / 128), (unsigned)nch);
    k_embed_type_part<<<pg, 128, 0, cu.s>>>(dy, ddt, types, S.ep, R, NT, C);
    cu_launched();
    k_embed_type_sum<<<cu_blocks(NT * C, 256), 256, 0, cu.s>>>(S.ep, (float *)CU_PTR(g, o->out[2]),
                                                               nch, NT, C, CU_ACC(o, 2));
    cu_launched();
}

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int k = 16; k > 0; k >>= 1)
        v += __shfl_xor_sync(FULL, v, k);
    return v;
}

__device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
    for (int k = 16; k > 0; k >>= 1)
        v = fmaxf(v, __shfl_xor_sync(FULL, v, k));
    return v;
}

/* LayerNorm over the last dimension, a warp per row (cpu layernorm_range):
 * mean, biased variance, rstd = 1 / sqrt(var + eps); y = (x - m) rstd g + b. */
__global__ void k_layernorm(const void *x, int xdt, const float *gam, const float *bet, void *y,
                            int ydt, float *mean, float *rstd, size_t rows, size_t C, float eps)
{
    size_t r = (size_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (r >= rows)
        return;
    size_t o = r * C;
    float s = 0.0f;
    for (size_t c = lane; c < C; c += 32)
        s += cu_ld(x, xdt, o + c);
    float m = warp_sum(s) / (float)C, v = 0.0f;
    for (size_t c = lane; c < C; c += 32) {
        float d = cu_ld(x, xdt, o + c) - m;
        v += d * d;
    }
    float var = warp_sum(v) / (float)C, sd = 1.0f / sqrtf(var + eps);
    for (size_t c = lane; c < C; c += 32)
        cu_st(y, ydt, o + c, (cu_ld(x, xdt, o + c) - m) * sd * gam[c] + bet[c]);
    if (lane == 0) {
        mean[r] = m;
        rstd[r] = sd;
    }
}

void op_layernorm(graph *g, op *o)
{
    size_t C = (size_t)g->t[o->in[1]].shape[0], rows = cu_numel(g, o->in[0]) / C;
    if (!rows)
        return;
    k_layernorm<<<(unsigned)((rows + 7) / 8), 256, 0, cu.s>>>(
        CU_PTR(g, o->in[0]), CU_DT(g, o->in[0]), (const float *)CU_PTR(g, o->in[1]),
        (const float *)CU_PTR(g, o->in[2]), CU_PTR(g, o->out[0]), CU_DT(g, o->out[0]),
        (float *)CU_PTR(g, o->out[1]), (float *)CU_PTR(g, o->out[2]), rows, C, o->eps);
    cu_launched();
}

/* dx, a warp per row (cpu layernorm_bwd_range). */
__global__ void k_layernorm_dx(const void *dy, int ddt, const void *x, int xdt, const float *gam,
                               const float *mean, const float *rstd, void *dx, int dxdt,
                               size_t rows, size_t C, int acc)
{
    size_t r = (size_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (r >= rows)
        return;
    size_t o = r * C;
    float m1 = 0.0f, m2 = 0.0f, mu = mean[r], sd = rstd[r];
    for (size_t c = lane; c < C; c += 32) {
        float xh = (cu_ld(x, xdt, o + c) - mu) * sd, dxh = cu_ld(dy, ddt, o + c) * gam[c];
        m1 += dxh;
        m2 += dxh * xh;
    }
    m1 = warp_sum(m1) / (float)C;
    m2 = warp_sum(m2) / (float)C;
    for (size_t c = lane; c < C; c += 32) {
        float xh = (cu_ld(x, xdt, o + c) - mu) * sd;
        float t = sd * (cu_ld(dy, ddt, o + c) * gam[c] - m1 - xh * m2);
        cu_st(dx, dxdt, o + c, acc ? cu_ld(dx, dxdt, o + c) + t : t);
    }
}

constexpr int LN_CHUNK = 64; /* rows per partial of dgamma / dbeta */

/* dgamma / dbeta partials: per chunk of LN_CHUNK rows and column j. */
__global__ void k_layernorm_dgb_part(const void *dy, int ddt, const void *x, int xdt,
                                     const float *mean, const float *rstd, float *part,
                                     size_t rows, size_t C)
{
    size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x, ch = blockIdx.y;
    if (j >= C)
        return;
    size_t r1 = (ch + 1) * LN_CHUNK < rows ? (ch + 1) * LN_CHUNK : rows;
    float sg = 0.0f, sb = 0.0f;
    for (size_t r = ch * LN_CHUNK; r < r1; r++) {
        float d = cu_ld(dy, ddt, r * C + j);
        sg += d * (cu_ld(x, xdt, r * C + j) - mean[r]) * rstd[r];
        sb += d;
    }
    part[(2 * ch) * C + j] = sg;
    part[(2 * ch + 1) * C + j] = sb;
}

__global__ void k_layernorm_dgb_sum(const float *part, float *dg, float *db, size_t nch, size_t C,
                                    int accg, int accb)
{
    size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= C)
        return;
    float sg = 0.0f, sb = 0.0f;
    for (size_t ch = 0; ch < nch; ch++) {
        sg += part[(2 * ch) * C + j];
        sb += part[(2 * ch + 1) * C + j];
    }
    dg[j] = accg ? dg[j] + sg : sg;
    db[j] = accb ? db[j] + sb : sb;
}

void op_layernorm_bwd(graph *g, op *o)
{
    size_t C = (size_t)g->t[o->in[2]].shape[0], rows = cu_numel(g, o->in[0]) / C;
    const void *dy = CU_PTR(g, o->in[0]), *x = CU_PTR(g, o->in[1]);
    int ddt = CU_DT(g, o->in[0]), xdt = CU_DT(g, o->in[1]);
    const float *mean = (const float *)CU_PTR(g, o->in[3]), *rstd = (const float *)CU_PTR(g, o->in[4]);
    if (!rows)
        return;
    if (o->out[0] >= 0) {
        k_layernorm_dx<<<(unsigned)((rows + 7) / 8), 256, 0, cu.s>>>(
            dy, ddt, x, xdt, (const float *)CU_PTR(g, o->in[2]), mean, rstd, CU_PTR(g, o->out[0]),
            CU_DT(g, o->out[0]), rows, C, CU_ACC(o, 0));
        cu_launched();
    }
    size_t nch = (rows + LN_CHUNK - 1) / LN_CHUNK;
    dim3 pg((unsigned)((C + 127) / 128), (unsigned)nch);
    k_layernorm_dgb_part<<<pg, 128, 0, cu.s>>>(dy, ddt, x, xdt, mean, rstd, S.lnp, rows, C);
    cu_launched();
    k_layernorm_dgb_sum<<<cu_blocks(C, 128), 128, 0, cu.s>>>(
        S.lnp, (float *)CU_PTR(g, o->out[1]), (float *)CU_PTR(g, o->out[2]), nch, C,
        CU_ACC(o, 1), CU_ACC(o, 2));
    cu_launched();
}

/* Attention geometry: q, k, v (B T, C), H heads of d = C / H columns;
 * flash: out[1] / in[4] is the rows' lse (B, H, T), not the probabilities. */
struct att_geo {
    size_t B, H, T, C, d;
    int flash;
};

att_geo att_dims(const graph *g, int probs, int y)
{
    const tensor *p = &g->t[probs];
    att_geo a;
    a.B = (size_t)p->shape[0];
    a.H = (size_t)p->shape[1];
    a.T = (size_t)p->shape[2];
    a.C = (size_t)g->t[y].shape[1];
    a.d = a.C / a.H;
    a.flash = p->ndim == 3;
    return a;
}

/* warps per block; dynamic shared memory: T + d floats per warp (the flash
 * form's backward: T + 2 d) */
constexpr int ATT_WARPS = 4;

/* The row a warp of the attention kernels owns: (b, h, i) and the offset of
 * its d columns in the (B T, C) tensors. 0 past the last row. */
struct att_row {
    int w, lane;
    size_t bh, i, b, h, qo;
};

__device__ __forceinline__ int att_row_of(const att_geo &a, att_row *r)
{
    r->w = threadIdx.x / 32;
    r->lane = threadIdx.x % 32;
    size_t row = (size_t)blockIdx.x * ATT_WARPS + r->w;
    if (row >= a.B * a.H * a.T)
        return 0;
    r->bh = row / a.T;
    r->i = row - r->bh * a.T;
    r->b = r->bh / a.H;
    r->h = r->bh - r->b * a.H;
    r->qo = (r->b * a.T + r->i) * a.C + r->h * a.d;
    return 1;
}

/* d values of row offset o of x (storage dt) into shared memory, by the warp. */
__device__ __forceinline__ void att_load_row(float *dst, const void *x, int dt, size_t o, size_t d,
                                             int lane)
{
    for (size_t k = lane; k < d; k += 32)
        dst[k] = cu_ld(x, dt, o + k);
    __syncwarp();
}

/* A warp per query row (b, h, i): scores over the T keys (lane j, j + 32,
 * ...), softmax (probs saved, f32; or in the flash form only the row's lse),
 * then y_i = sum_j (p_ij mask_ij ms) v_j, lanes over the d columns (cpu
 * attention_range). The mask (type mdt) holds 0 / 1 / (1 - p) with ms = 1,
 * or in the flash form keep flags 0 / 1 with ms = 1 / (1 - p). */
__global__ void k_attention(const void *Q, const void *K, const void *V, int qdt, float *probs,
                            float *lse, const void *mask, int mdt, float ms, void *y, int ydt,
                            att_geo a, float scale)
{
    extern __shared__ float sm[];
    att_row r;
    if (!att_row_of(a, &r))
        return;
    float *sc = sm + (size_t)r.w * (a.T + a.d), *q = sc + a.T;
    size_t bh = r.bh, i = r.i, b = r.b, h = r.h, qo = r.qo;
    int lane = r.lane;
    att_load_row(q, Q, qdt, qo, a.d, lane);
    float mx = -INFINITY;
    for (size_t j = lane; j < a.T; j += 32) {
        size_t ko = (b * a.T + j) * a.C + h * a.d;
        float s = 0.0f;
        for (size_t k = 0; k < a.d; k++)
            s += q[k] * cu_ld(K, qdt, ko + k);
        s *= scale;
        sc[j] = s;
        mx = fmaxf(mx, s);
    }
    mx = warp_max(mx);
    float sum = 0.0f;
    for (size_t j = lane; j < a.T; j += 32) {
        float e = expf(sc[j] - mx);
        sc[j] = e;
        sum += e;
    }
    sum = warp_sum(sum);
    float *pr = probs ? probs + (bh * a.T + i) * a.T : NULL;
    size_t mo = (bh * a.T + i) * a.T;
    if (lse && lane == 0)
        lse[bh * a.T + i] = mx + logf(sum);
    for (size_t j = lane; j < a.T; j += 32) {
        float p = sc[j] / sum;
        if (pr)
            pr[j] = p;
        sc[j] = mask ? p * (cu_ld(mask, mdt, mo + j) * ms) : p;
    }
    __syncwarp();
    for (size_t k = lane; k < a.d; k += 32) {
        float acc = 0.0f;
        for (size_t j = 0; j < a.T; j++)
            acc += sc[j] * cu_ld(V, qdt, (b * a.T + j) * a.C + h * a.d + k);
        cu_st(y, ydt, qo + k, acc);
    }
}

size_t att_smem(const att_geo &a) { return (size_t)ATT_WARPS * (a.T + a.d) * sizeof(float); }
size_t att_smem_bwd(const att_geo &a)
{
    return (size_t)ATT_WARPS * (a.T + (a.flash ? 2 : 1) * a.d) * sizeof(float);
}

/* Draw the attention dropout mask t of op o (p, seed) at the current step,
 * as the cpu draws it: keep flags 0 / 1 in the flash form, else 0 / (1 / (1 - p)). */
void att_draw_mask(graph *g, const op *o, int t, int flash)
{
    size_t nm = cu_numel(g, t);
    if (!nm)
        return;
    drop_mask_f m = {CU_PTR(g, t), CU_DT(g, t), o->p, flash ? 1.0f : 1.0f / (1.0f - o->p),
                     o->seed, cu.step};
    k_map1<drop_mask_f><<<cu_blocks(nm, 256), 256, 0, cu.s>>>(m, nm);
    cu_launched();
}

void op_attention(graph *g, op *o)
{
    att_geo a = att_dims(g, o->out[1], o->out[0]);
    size_t rows = a.B * a.H * a.T;
    const void *mask = NULL;
    if (o->out[2] >= 0) { /* attention-probability dropout mask, as the cpu draws it */
        att_draw_mask(g, o, o->out[2], a.flash);
        mask = CU_PTR(g, o->out[2]);
    }
    if (cu_sdpa_run(g, o)) /* cuDNN's fused SDPA (sdpa.cu), the mask as an input */
        return;
    if (!rows)
        return;
    k_attention<<<(unsigned)((rows + ATT_WARPS - 1) / ATT_WARPS), 32 * ATT_WARPS, att_smem(a),
                  cu.s>>>(CU_PTR(g, o->in[0]), CU_PTR(g, o->in[1]), CU_PTR(g, o->in[2]),
                          CU_DT(g, o->in[0]), a.flash ? NULL : (float *)CU_PTR(g, o->out[1]),
                          a.flash ? (float *)CU_PTR(g, o->out[1]) : NULL, mask,
                          mask ? CU_DT(g, o->out[2]) : DT_F32,
                          a.flash ? 1.0f / (1.0f - o->p) : 1.0f, CU_PTR(g, o->out[0]),
                          CU_DT(g, o->out[0]), a, 1.0f / sqrtf((float)a.d));
    cu_launched();
}

/* Backward, pass 1, a warp per query row i: dA_ij = dy_i . v_j (masked),
 * dS_ij = p_ij (dA_ij - sum_j dA_ij p_ij) saved, dq_i (+)= scale sum_j dS_ij k_j.
 * Flash form (lse): p_ij = exp(scale q_i . k_j - lse_i) recomputed and
 * written to pbuf (B H, T, T), which pass 2 reads as the probabilities. */
__global__ void k_attention_bwd_q(const void *dY, int ddt, const void *Q, const void *K,
                                  const void *V, int qdt, const float *probs, const float *lse,
                                  float *pbuf, const void *mask, int mdt, float ms, float *dS,
                                  void *dQ, int dqdt, att_geo a, float scale, int acc)
{
    extern __shared__ float sm[];
    att_row r;
    if (!att_row_of(a, &r))
        return;
    float *sc = sm + (size_t)r.w * (a.T + (lse ? 2 : 1) * a.d), *dy = sc + a.T, *q = dy + a.d;
    size_t bh = r.bh, i = r.i, b = r.b, h = r.h, qo = r.qo;
    int lane = r.lane;
    att_load_row(dy, dY, ddt, qo, a.d, lane);
    if (lse)
        att_load_row(q, Q, qdt, qo, a.d, lane);
    float *pw = lse ? pbuf + (bh * a.T + i) * a.T : NULL;
    const float *pr = lse ? pw : probs + (bh * a.T + i) * a.T;
    size_t mo = (bh * a.T + i) * a.T;
    float li = lse ? lse[bh * a.T + i] : 0.0f;
    float s = 0.0f;
    for (size_t j = lane; j < a.T; j += 32) {
        size_t vo = (b * a.T + j) * a.C + h * a.d;
        if (pw) { /* this lane writes p_ij and reads it back below: no sync needed */
            float sj = 0.0f;
            for (size_t k = 0; k < a.d; k++)
                sj += q[k] * cu_ld(K, qdt, vo + k);
            pw[j] = expf(sj * scale - li);
        }
        float da = 0.0f;
        for (size_t k = 0; k < a.d; k++)
            da += dy[k] * cu_ld(V, qdt, vo + k);
        if (mask)
            da *= cu_ld(mask, mdt, mo + j) * ms;
        sc[j] = da;
        s += da * pr[j];
    }
    s = warp_sum(s);
    float *dsr = dS + (bh * a.T + i) * a.T;
    for (size_t j = lane; j < a.T; j += 32) {
        float d = pr[j] * (sc[j] - s);
        sc[j] = d;
        dsr[j] = d;
    }
    __syncwarp();
    for (size_t k = lane; k < a.d; k += 32) {
        float acc2 = 0.0f;
        for (size_t j = 0; j < a.T; j++)
            acc2 += sc[j] * cu_ld(K, qdt, (b * a.T + j) * a.C + h * a.d + k);
        acc2 *= scale;
        cu_st(dQ, dqdt, qo + k, acc ? cu_ld(dQ, dqdt, qo + k) + acc2 : acc2);
    }
}

/* Pass 2, a warp per key row j: dv_j (+)= sum_i (p_ij mask_ij) dy_i,
 * dk_j (+)= scale sum_i dS_ij q_i; lanes over the d columns. */
__global__ void k_attention_bwd_kv(const void *dY, int ddt, const void *Q, int qdt,
                                   const float *probs, const void *mask, int mdt, float ms,
                                   const float *dS, void *dK, int dkdt, void *dV, int dvdt,
                                   att_geo a, float scale, int acck, int accv)
{
    int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    size_t row = (size_t)blockIdx.x * ATT_WARPS + w;
    if (row >= a.B * a.H * a.T)
        return;
    size_t bh = row / a.T, j = row - bh * a.T, b = bh / a.H, h = bh - b * a.H;
    size_t ko = (b * a.T + j) * a.C + h * a.d;
    for (size_t k = lane; k < a.d; k += 32) {
        float sv = 0.0f, sk = 0.0f;
        for (size_t i = 0; i < a.T; i++) {
            size_t pi = (bh * a.T + i) * a.T + j, io = (b * a.T + i) * a.C + h * a.d + k;
            float p = probs[pi];
            if (mask)
                p *= cu_ld(mask, mdt, pi) * ms;
            sv += p * cu_ld(dY, ddt, io);
            sk += dS[pi] * cu_ld(Q, qdt, io);
        }
        sk *= scale;
        if (dV)
            cu_st(dV, dvdt, ko + k, accv ? cu_ld(dV, dvdt, ko + k) + sv : sv);
        if (dK)
            cu_st(dK, dkdt, ko + k, acck ? cu_ld(dK, dkdt, ko + k) + sk : sk);
    }
}

void op_attention_bwd(graph *g, op *o)
{
    att_geo a = att_dims(g, o->in[4], o->in[0]);
    /* flash form: in[5] is the forward's y, not a mask; with dropout the
     * keep flags are drawn again into out[3] (the forward's: same seed, step) */
    int mi = a.flash ? o->out[3] : o->in[5];
    if (a.flash && mi >= 0)
        att_draw_mask(g, o, mi, 1);
    if (cu_sdpa_run(g, o)) /* cuDNN's fused SDPA backward (sdpa.cu) */
        return;
    size_t rows = a.B * a.H * a.T;
    if (!rows)
        return;
    const void *mask = mi >= 0 ? CU_PTR(g, mi) : NULL;
    int mdt = mi >= 0 ? CU_DT(g, mi) : DT_F32;
    float ms = a.flash ? 1.0f / (1.0f - o->p) : 1.0f;
    float scale = 1.0f / sqrtf((float)a.d);
    unsigned blocks = (unsigned)((rows + ATT_WARPS - 1) / ATT_WARPS);
    int qdt = CU_DT(g, o->in[1]), ddt = CU_DT(g, o->in[0]);
    const float *lse = a.flash ? (const float *)CU_PTR(g, o->in[4]) : NULL;
    const float *probs = a.flash ? S.pb : (const float *)CU_PTR(g, o->in[4]);
    k_attention_bwd_q<<<blocks, 32 * ATT_WARPS, att_smem_bwd(a), cu.s>>>(
        CU_PTR(g, o->in[0]), ddt, CU_PTR(g, o->in[1]), CU_PTR(g, o->in[2]), CU_PTR(g, o->in[3]),
        qdt, a.flash ? NULL : probs, lse, S.pb, mask, mdt, ms, S.ds, CU_PTR(g, o->out[0]),
        CU_DT(g, o->out[0]), a, scale, CU_ACC(o, 0));
    cu_launched();
    k_attention_bwd_kv<<<blocks, 32 * ATT_WARPS, 0, cu.s>>>(
        CU_PTR(g, o->in[0]), ddt, CU_PTR(g, o->in[1]), qdt, probs, mask, mdt, ms, S.ds,
        o->out[1] >= 0 ? CU_PTR(g, o->out[1]) : NULL, o->out[1] >= 0 ? CU_DT(g, o->out[1]) : 0,
        o->out[2] >= 0 ? CU_PTR(g, o->out[2]) : NULL, o->out[2] >= 0 ? CU_DT(g, o->out[2]) : 0, a,
        scale, CU_ACC(o, 1), CU_ACC(o, 2));
    cu_launched();
}

/* Gathered rows: y[r, c] = x[(r / M) T + pos[r], c] for r < B M; the
 * backward adds dy into those rows of dx (positions are distinct within a
 * sequence, so no two threads write one element). */
__global__ void k_gather(const void *x, int xdt, const int32_t *pos, void *y, int ydt, size_t R,
                         size_t M, size_t T, size_t C, int bwd, int acc)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < R * C; i += stride) {
        size_t r = i / C, c = i - r * C;
        size_t t = ((r / M) * T + (size_t)(int64_t)pos[r]) * C + c;
        if (!bwd)
            cu_st(y, ydt, i, cu_ld(x, xdt, t));
        else /* x = dy (B M, C), y = dx (B T, C) */
            cu_st(y, ydt, t, acc ? cu_ld(y, ydt, t) + cu_ld(x, xdt, i) : cu_ld(x, xdt, i));
    }
}

static void gather(graph *g, op *o, int bwd)
{
    const tensor *p = &g->t[o->in[1]];
    size_t B = (size_t)p->shape[0], M = (size_t)p->shape[1];
    int src = o->in[0], dst = o->out[0], big = bwd ? dst : src;
    size_t C = (size_t)g->t[bwd ? src : dst].shape[1];
    size_t T = B && C ? cu_numel(g, big) / (B * C) : 0;
    int acc = bwd && CU_ACC(o, 0);
    if (bwd && !acc) /* the other rows get 0 (all-zero bits in every float type) */
        cudaCheck(cudaMemsetAsync(CU_PTR(g, dst), 0, cu_numel(g, dst) * graph_dtype_size(CU_DT(g, dst)), cu.s));
    if (B * M * C == 0)
        return;
    k_gather<<<cu_blocks(B * M * C, 256), 256, 0, cu.s>>>(CU_PTR(g, src), CU_DT(g, src),
                                                          (const int32_t *)CU_PTR(g, o->in[1]),
                                                          CU_PTR(g, dst), CU_DT(g, dst), B * M, M,
                                                          T, C, bwd, acc);
    cu_launched();
}

void op_gather(graph *g, op *o) { gather(g, o, 0); }
void op_gather_bwd(graph *g, op *o) { gather(g, o, 1); }

/* ---- prepare helpers --------------------------------------------------------------------- */

int want(const graph *g, const op *o, int k, int dt, int in)
{
    int t = in ? o->in[k] : o->out[k];
    if (t < 0 || g->t[t].dtype == dt)
        return 0;
    fprintf(stderr, "matrix-engine: cuda: op '%s' (%s): %s[%d] '%s' is not %s\n", o->name,
            graph_op_name(o->type), in ? "in" : "out", k, g->t[t].name,
            dt == DT_I32 ? "i32" : "f32");
    return -1;
}

/* Copy n bytes from the host to d in stream order and wait; returns d. */
void *upload_to(void *d, const void *h, size_t n)
{
    cudaCheck(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, cu.s));
    cudaCheck(cudaStreamSynchronize(cu.s));
    return d;
}

/* Device copy of n bytes of host table h; NULL when out of memory. */
void *upload_table(const void *h, size_t n)
{
    void *d = cu_alloc(n);
    return d ? upload_to(d, h, n) : NULL;
}

} /* namespace */

/* ---- the interface (cuda.h) ------------------------------------------------------------------ */

int cu_attention_flash_ref(int fwd, const void *q, const void *k, const void *v, int dt,
                           void *y, float *lse, const void *dy, void *dq, void *dk, void *dv,
                           float *pbuf, float *ds, const void *keep, float p, size_t B, size_t H,
                           size_t T, size_t C)
{
    float ms = keep ? 1.0f / (1.0f - p) : 1.0f;
    att_geo a = {B, H, T, C, C / H, 1};
    if ((fwd ? att_smem(a) : att_smem_bwd(a)) > 48 * 1024)
        return -1;
    size_t rows = B * H * T;
    unsigned blocks = (unsigned)((rows + ATT_WARPS - 1) / ATT_WARPS);
    float scale = 1.0f / sqrtf((float)a.d);
    if (fwd) {
        k_attention<<<blocks, 32 * ATT_WARPS, att_smem(a), cu.s>>>(q, k, v, dt, NULL, lse, keep, dt,
                                                                   ms, y, dt, a, scale);
        cu_launched();
        return 0;
    }
    k_attention_bwd_q<<<blocks, 32 * ATT_WARPS, att_smem_bwd(a), cu.s>>>(
        dy, dt, q, k, v, dt, NULL, lse, pbuf, keep, dt, ms, ds, dq, dt, a, scale, 0);
    cu_launched();
    k_attention_bwd_kv<<<blocks, 32 * ATT_WARPS, 0, cu.s>>>(dy, dt, q, dt, pbuf, keep, dt, ms, ds,
                                                           dk, dt, dv, dt, a, scale, 0, 0);
    cu_launched();
    return 0;
}

void cu_attention_draw_keep(void *keep, int dt, size_t n, float p, uint64_t seed)
{
    if (!n)
        return;
    drop_mask_f m = {keep, dt, p, 1.0f, seed, cu.step};
    k_map1<drop_mask_f><<<cu_blocks(n, 256), 256, 0, cu.s>>>(m, n);
    cu_launched();
}

void cu_ops_register(backend_op_fn *t)
{
    t[OP_EMBED] = op_embed;
    t[OP_EMBED_BWD] = op_embed_bwd;
    t[OP_LAYERNORM] = op_layernorm;
    t[OP_LAYERNORM_BWD] = op_layernorm_bwd;
    t[OP_ATTENTION] = op_attention;
    t[OP_ATTENTION_BWD] = op_attention_bwd;
    t[OP_GATHER] = op_gather;
    t[OP_GATHER_BWD] = op_gather_bwd;
    t[OP_ADAMW] = op_adamw;
    t[OP_BN] = op_bn;
    t[OP_BN_BWD] = op_bn_bwd;
    t[OP_ACT] = op_act;
    t[OP_ACT_BWD] = op_act_bwd;
    t[OP_MAXPOOL] = op_maxpool;
    t[OP_MAXPOOL_BWD] = op_maxpool_bwd;
    t[OP_AVGPOOL] = op_avgpool;
    t[OP_AVGPOOL_BWD] = op_avgpool_bwd;
    t[OP_FLATTEN] = op_flatten;
    t[OP_FLATTEN_BWD] = op_flatten_bwd;
    t[OP_DROPOUT] = op_dropout;
    t[OP_DROPOUT_BWD] = op_dropout_bwd;
    t[OP_ADD] = op_add;
    t[OP_COPY] = op_copy;
    t[OP_LOGSOFTMAX] = op_logsoftmax;
    t[OP_LOGSOFTMAX_BWD] = op_logsoftmax_bwd;
    t[OP_NLL] = op_nll;
    t[OP_NLL_BWD] = op_nll_bwd;
    t[OP_SOFTMAX_CE] = op_softmax_ce;
    t[OP_SOFTMAX_CE_BWD] = op_softmax_ce_bwd;
    t[OP_SGD] = op_sgd;
    t[OP_EMA] = op_ema;
}

/* Before the run: check every op's tensors have the types the kernels read
 * (want), size the scratch buffers from the ops that need them (BN partial
 * sums and coefficients, SyncBN's sums, embedding sort and partials,
 * layer-norm partials, attention scores), allocate them, set the loss scale,
 * and upload the tables of gradients (fp16 unscaling) and EMA pairs. Not
 * split (about 180 lines): the switch is one pass over the ops whose cases
 * each add to the same running maxima and the bad flag, and the steps after
 * it use them once; this CUDA code also cannot be run on the machines it is
 * maintained on (no GPU), so it is kept as verified on one. */
int cu_ops_prepare(graph *g, int nrun)
{
    size_t part = 0, cmax = 0, sortb = 0, sortt = 0, epb = 0, lnb = 0, dsb = 0, pbb = 0;
    size_t csync = 0; /* SyncBN: the most channels */
    int nopt = 0, nema = 0, bad = 0;
    cu_ops_release(g);
    for (int i = 0; i < nrun; i++) {
        const op *o = &g->ops[i];
        switch (o->type) {
        case OP_BN:
        case OP_BN_BWD: {
            geo d = dims(&g->t[o->in[o->type == OP_BN ? 0 : 1]]);
            size_t pb = o->type == OP_BN && !o->train ? 0 : bn_part_bytes(d);
            part = pb > part ? pb : part;
            cmax = d.C > cmax ? d.C : cmax;
            if (o->train && (o->type == OP_BN ? o->sync : bn_bwd_sync(g, o)))
                csync = d.C > csync ? d.C : csync;
            if (o->type == OP_BN)
                for (int k = 1; k <= 4; k++)
                    bad |= want(g, o, k, DT_F32, 1);
            else
                bad |= want(g, o, 2, DT_F32, 1) | want(g, o, 1, DT_F32, 0) |
                       want(g, o, 2, DT_F32, 0);
            if (o->type == OP_BN_BWD && o->act != ACT_NONE)
                bad |= bn_bwd_relu_check(g, o);
            break;
        }
        case OP_MAXPOOL:
            bad |= want(g, o, 1, DT_I32, 0);
            break;
        case OP_MAXPOOL_BWD:
            bad |= want(g, o, 1, DT_I32, 1);
            if (o->fwd < 0 || o->fwd >= g->nops || g->ops[o->fwd].type != OP_MAXPOOL) {
                fprintf(stderr, "matrix-engine: cuda: op '%s' (maxpool backward) has no "
                        "max-pool forward op\n", o->name);
                bad = -1;
            }
            break;
        case OP_NLL:
            bad |= want(g, o, 1, DT_I32, 1);
            break;
        case OP_NLL_BWD:
            bad |= want(g, o, 0, DT_I32, 1);
            break;
        case OP_SOFTMAX_CE:
            bad |= want(g, o, 1, DT_I32, 1) | want(g, o, 0, DT_F32, 0) | want(g, o, 1, DT_F32, 0);
            break;
        case OP_SOFTMAX_CE_BWD:
            bad |= want(g, o, 1, DT_I32, 1) | want(g, o, 2, DT_F32, 1);
            break;
        case OP_GATHER:
        case OP_GATHER_BWD:
            bad |= want(g, o, 1, DT_I32, 1);
            break;
        case OP_SGD:
        case OP_ADAMW: /* w, g, state (one buffer for SGD, two for AdamW) */
            for (int k = 0; k < (o->type == OP_SGD ? 3 : 4); k++)
                bad |= want(g, o, k, DT_F32, 1);
            if (S.first_opt < 0)
                S.first_opt = i;
            S.last_opt = i;
            nopt++;
            break;
        case OP_EMA:
            for (int k = 0; k < 2; k++)
                bad |= want(g, o, k, DT_F32, 1);
            if (S.first_ema < 0)
                S.first_ema = i;
            nema++;
            break;
        case OP_EMBED:
            bad |= want(g, o, 0, DT_I32, 1) | want(g, o, 1, DT_I32, 1);
            for (int k = 2; k < 5; k++)
                bad |= want(g, o, k, DT_F32, 1);
            break;
        case OP_EMBED_BWD: {
            bad |= want(g, o, 1, DT_I32, 1) | want(g, o, 2, DT_I32, 1);
            for (int k = 0; k < 3; k++)
                bad |= want(g, o, k, DT_F32, 0);
            size_t R = cu_numel(g, o->in[1]), tmp = 0, need = embed_sort_need(R, &tmp);
            sortb = need > sortb ? need : sortb;
            sortt = tmp > sortt ? tmp : sortt;
            size_t ep = ((R + EMB_CHUNK - 1) / EMB_CHUNK) * (size_t)g->t[o->out[2]].shape[0] *
                        (size_t)g->t[o->out[2]].shape[1] * sizeof(float);
            epb = ep > epb ? ep : epb;
            break;
        }
        case OP_LAYERNORM:
            for (int k = 1; k < 3; k++)
                bad |= want(g, o, k, DT_F32, 1) | want(g, o, k, DT_F32, 0);
            break;
        case OP_LAYERNORM_BWD: {
            for (int k = 2; k < 5; k++)
                bad |= want(g, o, k, DT_F32, 1);
            bad |= want(g, o, 1, DT_F32, 0) | want(g, o, 2, DT_F32, 0);
            size_t C = (size_t)g->t[o->in[2]].shape[0], rows = cu_numel(g, o->in[0]) / C;
            size_t b = 2 * ((rows + LN_CHUNK - 1) / LN_CHUNK) * C * sizeof(float);
            lnb = b > lnb ? b : lnb;
            break;
        }
        case OP_ATTENTION:
        case OP_ATTENTION_BWD: {
            int fwd = o->type == OP_ATTENTION;
            att_geo a = att_dims(g, fwd ? o->out[1] : o->in[4], fwd ? o->out[0] : o->in[0]);
            /* masks: f32 in the probabilities form; flash-form keep flags any float type */
            bad |= fwd ? want(g, o, 1, DT_F32, 0) | (a.flash ? 0 : want(g, o, 2, DT_F32, 0))
                       : want(g, o, 4, DT_F32, 1) | (a.flash ? 0 : want(g, o, 5, DT_F32, 1));
            if ((fwd ? att_smem(a) : att_smem_bwd(a)) > 48 * 1024 && !cu_sdpa_takes(g, o)) {
                fprintf(stderr, "matrix-engine: cuda: attention '%s': sequence length %zu is "
                        "beyond the attention kernel's shared memory\n", o->name, a.T);
                bad = -1;
            }
            if (!fwd && !cu_sdpa_takes(g, o)) {
                size_t b = a.B * a.H * a.T * a.T * sizeof(float);
                dsb = b > dsb ? b : dsb;
                if (a.flash)
                    pbb = b > pbb ? b : pbb;
            }
            break;
        }
        default:
            break;
        }
    }
    if (bad)
        return -2;
    if (part) {
        S.part_bytes = part;
        if (!(S.part = (double *)cu_alloc(part)))
            return -1;
    }
    if (cmax) {
        S.coef_bytes = 6 * cmax * sizeof(float);
        if (!(S.coef = (float *)cu_alloc(S.coef_bytes)))
            return -1;
    }
    if (csync && !(S.red = (double *)cu_alloc(S.red_bytes = 4 * csync * sizeof(double))))
        return -1;
    if ((sortb && !(S.sort = cu_alloc(S.sort_bytes = sortb))) ||
        (epb && !(S.ep = (float *)cu_alloc(S.ep_bytes = epb))) ||
        (lnb && !(S.lnp = (float *)cu_alloc(S.lnp_bytes = lnb))) ||
        (dsb && !(S.ds = (float *)cu_alloc(S.ds_bytes = dsb))) ||
        (pbb && !(S.pb = (float *)cu_alloc(S.pb_bytes = pbb))))
        return -1;
    S.sort_tmp = sortt;
    S.fp16 = cu.pt.precision == PREC_FP16 && nopt > 0;
    if (!cu.scaler) {
        fprintf(stderr, "matrix-engine: cuda: no loss-scaler buffer\n");
        return -2;
    }
    float sc[4] = {S.fp16 ? 65536.0f : 1.0f, 0.0f, 0.0f, 0.0f};
    upload_to(cu.scaler, sc, sizeof sc);
    if (S.fp16) {
        gslot *h = (gslot *)calloc(nopt, sizeof *h);
        if (!h)
            cu_fail(__FILE__, __LINE__, "calloc", "out of host memory");
        for (int i = 0; i < nrun; i++)
            if (g->ops[i].type == OP_SGD || g->ops[i].type == OP_ADAMW) {
                int t = g->ops[i].in[1];
                h[S.ngrads].p = (float *)CU_PTR(g, t);
                h[S.ngrads].n = cu_numel(g, t);
                S.ngrads++;
            }
        S.grads = (gslot *)upload_table(h, nopt * sizeof *h);
        free(h);
        if (!S.grads)
            return -1;
    }
    if (nema) {
        eslot *h = (eslot *)calloc(nema, sizeof *h);
        if (!h)
            cu_fail(__FILE__, __LINE__, "calloc", "out of host memory");
        for (int i = 0; i < nrun; i++)
            if (g->ops[i].type == OP_EMA) {
                const op *o = &g->ops[i];
                h[S.nemas].w = (const float *)CU_PTR(g, o->in[0]);
                h[S.nemas].e = (float *)CU_PTR(g, o->in[1]);
                h[S.nemas].n = cu_numel(g, o->in[0]);
                h[S.nemas].m = o->momentum;
                S.nemas++;
            }
        S.emas = (eslot *)upload_table(h, nema * sizeof *h);
        free(h);
        if (!S.emas)
            return -1;
    }
    return opt_prepare(g, nrun);
}

void cu_ops_release(graph *g)
{
    (void)g;
    opt_release();
    cu_free(S.part, S.part_bytes);
    cu_free(S.coef, S.coef_bytes);
    cu_free(S.grads, S.ngrads * sizeof(gslot));
    cu_free(S.emas, S.nemas * sizeof(eslot));
    cu_free(S.sort, S.sort_bytes);
    cu_free(S.ep, S.ep_bytes);
    cu_free(S.lnp, S.lnp_bytes);
    cu_free(S.ds, S.ds_bytes);
    cu_free(S.pb, S.pb_bytes);
    cu_free(S.red, S.red_bytes);
    S.red = NULL;
    S.red_bytes = 0;
    S.sort = NULL;
    S.ep = S.lnp = S.ds = S.pb = NULL;
    S.sort_bytes = S.ep_bytes = S.lnp_bytes = S.ds_bytes = S.pb_bytes = S.sort_tmp = 0;
    S.part = NULL;
    S.coef = NULL;
    S.grads = NULL;
    S.emas = NULL;
    S.part_bytes = S.coef_bytes = 0;
    S.ngrads = S.nemas = 0;
    S.fp16 = 0;
    S.first_opt = S.last_opt = S.first_ema = -1;
}
