/* gemm_check.cu - the products of a linear layer computed from their
 * definition (gemm_view.h), for two jobs:
 *
 *   cu_gemm_verify   checks an output written by a library call against the
 *                    definition: every element when there are at most
 *                    VERIFY_ALL of them, else VERIFY_SAMPLES elements drawn
 *                    by a hash and the whole last row and last column (up
 *                    to VERIFY_EDGE elements each, the last ones): the
 *                    partial tiles at the edges, where a tiled kernel's
 *                    bounds handling goes wrong, in every tiling; a hash
 *                    draw missed a wrong last element of a 1000 x 2048 dw
 *                    (tests/cudasim/lt_faults.sh); f32 accumulation, tolerance relative to the
 *                    sum of |terms| (so a layout or algorithm error, which is
 *                    of the order of that sum, cannot pass). The epilogue's
 *                    outputs too: bias, ReLU or tanh GELU applied, the
 *                    pre-activation stored (GELU_AUX), every element of the
 *                    bias gradient (BGRADB: the sums of P over t).
 *   cu_conv_verify   the same for a forward convolution with its epilogue
 *                    (bias, residual, ReLU), the edges being the last
 *                    pixel's channels and the last channel's pixels:
 *                    conv.cu checks a cuDNN graph-API plan, and the legacy
 *                    call beside it, on the same inputs.
 *   cu_chan_sums_ref per-channel sums of a convolution's output in double
 *                    (sum, sum |y|, sum y^2), against which conv.cu checks the
 *                    f32 sums of a GEN_STATS plan (bnstats.h's tolerance).
 *   cu_gemm_fallback computes the product itself (64 x 64 output tiles,
 *                    16-deep slices of the inner dimension in shared memory,
 *                    4 x 4 outputs per thread, f32 accumulation): used when
 *                    no cuBLASLt algorithm passes cu_gemm_verify.
 *
 * Both read every operand through the view's strides and cu_ld, so one
 * kernel serves the three products and every storage type. */
#include "cuda.h"
#include "gemm_view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VERIFY_ALL 65536
#define VERIFY_SAMPLES 8192
#define VERIFY_EDGE 16384
#define FB_TILE 64
#define FB_K 16

namespace {

__device__ __forceinline__ uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

__global__ void k_fill_uniform(void *p, int dt, size_t n, uint64_t seed)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float u = (float)(mix64(seed ^ mix64(i)) >> 40) * (1.0f / 16777216.0f); /* [0, 1) */
        cu_st(p, dt, i, 2.0f * u - 1.0f);
    }
}

/* Samples of a rows x cols product's output: all, or VERIFY_SAMPLES hashed
 * ones, then the last row's last up-to-VERIFY_EDGE and the last column's
 * (gemm: R x C; convolution: pixels x channels). */
__host__ __device__ __forceinline__ size_t verify_edge(size_t n) { return n < VERIFY_EDGE ? n : VERIFY_EDGE; }

static size_t verify_count(size_t rows, size_t cols)
{
    size_t total = rows * cols;
    return total <= VERIFY_ALL ? total : VERIFY_SAMPLES + verify_edge(cols) + verify_edge(rows);
}

/* Edge sample q (counted from VERIFY_SAMPLES) -> (row, col) of the product. */
__device__ __forceinline__ void verify_edge_pick(size_t rows, size_t cols, size_t q, int64_t *r, int64_t *c)
{
    size_t er = verify_edge(cols), ec = verify_edge(rows);
    if (q < er) { /* the last row */
        *r = (int64_t)rows - 1;
        *c = (int64_t)(cols - er + q);
    } else { /* the last column */
        *r = (int64_t)(rows - ec + (q - er));
        *c = (int64_t)cols - 1;
    }
}

/* Sample s -> output element (r, c), in verify_count's order. */
__device__ __forceinline__ void verify_pick(const gemm_view &v, size_t s, size_t total,
                                            int64_t *r, int64_t *c)
{
    if (total <= VERIFY_ALL || s < VERIFY_SAMPLES) {
        size_t e = total <= VERIFY_ALL ? s : (size_t)(mix64(0x5eed0000ull + s) % total);
        *r = (int64_t)(e / (size_t)v.C);
        *c = (int64_t)(e % (size_t)v.C);
        return;
    }
    verify_edge_pick((size_t)v.R, (size_t)v.C, s - VERIFY_SAMPLES, r, c);
}

/* The tanh GELU (cuda.h / vec.cuh act_f's ACT_GELU_TANH), here without vec.cuh. */
__device__ __forceinline__ float verify_gelu_tanh(float x)
{
    return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
}

__global__ void k_gemm_verify(gemm_view v, const void *P, int pdt, const void *Q, int qdt,
                              const void *out, int odt, const void *c0, float beta,
                              gemm_epi_ref e, float rtol, size_t nsamp, size_t total,
                              float *ratio, float *dev, float *ref)
{
    size_t s = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= nsamp)
        return;
    int64_t r, c;
    verify_pick(v, s, total, &r, &c);
    float acc = 0.0f, mag = 0.0f;
    for (int64_t t = 0; t < v.T; t++) {
        float a = cu_ld(P, pdt, (size_t)gv_p(&v, r, t)), b = cu_ld(Q, qdt, (size_t)gv_q(&v, t, c));
        acc = fmaf(a, b, acc);
        mag += fabsf(a * b);
    }
    if (c0 && beta != 0.0f) { /* D = A B + beta C, C as it was before the call */
        float cv = beta * cu_ld(c0, odt, (size_t)gv_out(&v, r, c));
        acc += cv;
        mag += fabsf(cv);
    }
    if (e.bias) {
        acc += e.bias[c];
        mag += fabsf(e.bias[c]);
    }
    float tol = rtol * mag + 1e-6f, worst = 0.0f;
    if (e.aux) { /* the pre-activation the call stored (GELU_AUX) */
        float a = cu_ld(e.aux, odt, (size_t)gv_out(&v, r, c));
        float ea = fabsf(a - acc) / tol;
        worst = ea == ea ? ea : 3.0e38f;
    }
    if (e.act == ACT_RELU)
        acc = acc > 0.0f ? acc : 0.0f;
    else if (e.act == ACT_GELU_TANH) {
        acc = verify_gelu_tanh(acc);
        /* the library's tanh may be the hardware approximation (2^-11 relative) */
        tol += 1e-3f * fabsf(acc) + 1e-5f;
    }
    float d = cu_ld(out, odt, (size_t)gv_out(&v, r, c));
    float ed = fabsf(d - acc) / tol;
    ed = ed == ed ? ed : 3.0e38f; /* NaN output: as bad as it gets */
    ratio[s] = ed > worst ? ed : worst;
    dev[s] = d;
    ref[s] = acc;
}

/* Bias gradient (BGRADB): bgrad[r] against sum over t of P(r, t), r < R. */
__global__ void k_bgrad_verify(gemm_view v, const void *P, int pdt, const float *bgrad, float rtol,
                               float *ratio, float *dev, float *ref)
{
    int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= v.R)
        return;
    float acc = 0.0f, mag = 0.0f;
    for (int64_t t = 0; t < v.T; t++) {
        float a = cu_ld(P, pdt, (size_t)gv_p(&v, r, t));
        acc += a;
        mag += fabsf(a);
    }
    float d = bgrad[r], e = fabsf(d - acc) / (rtol * mag + 1e-6f);
    ratio[r] = e == e ? e : 3.0e38f;
    dev[r] = d;
    ref[r] = acc;
}

__global__ void __launch_bounds__(256) k_gemm_fallback(gemm_view v, const void *P, int pdt,
                                                       const void *Q, int qdt, void *out, int odt,
                                                       float beta)
{
    __shared__ float ps[FB_K][FB_TILE + 1];
    __shared__ float qs[FB_K][FB_TILE + 1];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int64_t r0 = (int64_t)blockIdx.y * FB_TILE, c0 = (int64_t)blockIdx.x * FB_TILE;
    float acc[4][4] = {};
    for (int64_t t0 = 0; t0 < v.T; t0 += FB_K) {
        for (int e = threadIdx.x; e < FB_TILE * FB_K; e += 256) {
            int i = e % FB_TILE, k = e / FB_TILE;
            int64_t r = r0 + i, c = c0 + i, t = t0 + k;
            ps[k][i] = r < v.R && t < v.T ? cu_ld(P, pdt, (size_t)gv_p(&v, r, t)) : 0.0f;
            qs[k][i] = c < v.C && t < v.T ? cu_ld(Q, qdt, (size_t)gv_q(&v, t, c)) : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < FB_K; k++) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                a[i] = ps[k][ty * 4 + i];
                b[i] = qs[k][tx * 4 + i];
            }
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) {
            int64_t r = r0 + ty * 4 + i, c = c0 + tx * 4 + j;
            if (r >= v.R || c >= v.C)
                continue;
            size_t o = (size_t)gv_out(&v, r, c);
            float val = acc[i][j];
            if (beta != 0.0f)
                val += beta * cu_ld(out, odt, o);
            cu_st(out, odt, o, val);
        }
}

/* One sampled output element of a forward convolution (conv_view) from
 * its definition, f32 accumulation: out and out2 (when given) against it,
 * ratio = |got - ref| / (rtol * sum|terms| + 1e-6), as k_gemm_verify. */
__global__ void k_conv_verify(conv_view v, const void *x, int xdt, const void *w, int wdt,
                              const void *bias, int bdt, const void *res, int act,
                              const void *out, const void *out2, int ydt, float rtol,
                              size_t nsamp, size_t total, float *ratio, float *dev, float *ref,
                              float *ratio2)
{
    size_t s = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= nsamp)
        return;
    int64_t n, k, oh, ow;
    if (total > VERIFY_ALL && s >= VERIFY_SAMPLES) {
        /* the edges of the product (pixels x channels): the last pixel's
         * channels, then the last channel of the last pixels */
        int64_t p;
        verify_edge_pick((size_t)(v.N * v.OH * v.OW), (size_t)v.K, s - VERIFY_SAMPLES, &p, &k);
        ow = p % v.OW; p /= v.OW;
        oh = p % v.OH; n = p / v.OH;
    } else {
        int64_t q = (int64_t)(total <= VERIFY_ALL ? s : (size_t)(mix64(0xc0de0000ull + s) % total));
        if (v.nhwc) { /* y (N, OH, OW, K) */
            k = q % v.K; q /= v.K;
            ow = q % v.OW; q /= v.OW;
            oh = q % v.OH; n = q / v.OH;
        } else {      /* y (N, K, OH, OW) */
            ow = q % v.OW; q /= v.OW;
            oh = q % v.OH; q /= v.OH;
            k = q % v.K; n = q / v.K;
        }
    }
    const size_t e = v.nhwc ? (size_t)(((n * v.OH + oh) * v.OW + ow) * v.K + k)
                            : (size_t)(((n * v.K + k) * v.OH + oh) * v.OW + ow);
    float acc = 0.0f, mag = 0.0f;
    for (int64_t r = 0; r < v.R; r++) {
        int64_t ih = oh * v.stride - v.pad + r;
        if (ih < 0 || ih >= v.H)
            continue;
        for (int64_t t = 0; t < v.S; t++) {
            int64_t iw = ow * v.stride - v.pad + t;
            if (iw < 0 || iw >= v.W)
                continue;
            for (int64_t c = 0; c < v.C; c++) {
                size_t xi = v.nhwc ? (size_t)(((n * v.H + ih) * v.W + iw) * v.C + c)
                                   : (size_t)(((n * v.C + c) * v.H + ih) * v.W + iw);
                size_t wi = v.w_krsc ? (size_t)(((k * v.R + r) * v.S + t) * v.C + c)
                                     : (size_t)(((k * v.C + c) * v.R + r) * v.S + t);
                float a = cu_ld(x, xdt, xi), b = cu_ld(w, wdt, wi);
                acc = fmaf(a, b, acc);
                mag += fabsf(a * b);
            }
        }
    }
    if (bias) {
        float b = cu_ld(bias, bdt, (size_t)k);
        acc += b;
        mag += fabsf(b);
    }
    if (res) {
        float z = cu_ld(res, ydt, e);
        acc += z;
        mag += fabsf(z);
    }
    if (act == ACT_RELU)
        acc = acc > 0.0f ? acc : 0.0f;
    float tol = rtol * mag + 1e-6f;
    float d = cu_ld(out, ydt, e), ed = fabsf(d - acc) / tol;
    ratio[s] = ed == ed ? ed : 3.0e38f; /* NaN output: as bad as it gets */
    dev[s] = d;
    ref[s] = acc;
    if (out2) {
        float d2 = cu_ld(out2, ydt, e), e2 = fabsf(d2 - acc) / tol;
        ratio2[s] = e2 == e2 ? e2 : 3.0e38f;
    }
}

/* Block k (256 threads) sums channel k of y over its N P positions in
 * double: ref[k] = sum y, ref[K + k] = sum |y|, ref[2K + k] = sum y^2. */
__global__ void __launch_bounds__(256)
k_chan_sums_ref(const void *y, int dt, size_t N, size_t K, size_t P, int nhwc, double *ref)
{
    __shared__ double sh[3][256];
    size_t k = blockIdx.x, R = N * P;
    double a = 0.0, b = 0.0, c = 0.0;
    for (size_t r = threadIdx.x; r < R; r += 256) {
        size_t i = nhwc ? r * K + k : ((r / P) * K + k) * P + r % P;
        double v = (double)cu_ld(y, dt, i);
        a += v;
        b += fabs(v);
        c += v * v;
    }
    sh[0][threadIdx.x] = a;
    sh[1][threadIdx.x] = b;
    sh[2][threadIdx.x] = c;
    __syncthreads();
    for (int h = 128; h > 0; h >>= 1) {
        if ((int)threadIdx.x < h)
            for (int q = 0; q < 3; q++)
                sh[q][threadIdx.x] += sh[q][threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        for (int q = 0; q < 3; q++)
            ref[q * K + k] = sh[q][0];
}

} /* namespace */

/* The verdict of nt samples on the device (ratio, dev, ref: 3 nt floats at
 * d; with d2, nt more ratios of a second output into vd2): elements above
 * 1 are bad; the worst one's values. Synchronises cu.s. The bad count of vd. */
static long verify_gather(const float *d, size_t nt, const float *d2, gemm_verdict *vd,
                          gemm_verdict *vd2)
{
    size_t m = d2 ? 4 * nt : 3 * nt;
    float *h = (float *)malloc(m * sizeof(float));
    if (!h)
        cu_fail(__FILE__, __LINE__, "malloc", "out of host memory");
    cudaCheck(cudaMemcpyAsync(h, d, 3 * nt * sizeof(float), cudaMemcpyDeviceToHost, cu.s));
    if (d2)
        cudaCheck(cudaMemcpyAsync(h + 3 * nt, d2, nt * sizeof(float), cudaMemcpyDeviceToHost, cu.s));
    cudaCheck(cudaStreamSynchronize(cu.s));
    for (int pass = 0; pass < (d2 ? 2 : 1); pass++) {
        const float *r = pass ? h + 3 * nt : h;
        gemm_verdict *o = pass ? vd2 : vd;
        long bad = 0;
        size_t w = 0;
        for (size_t i = 0; i < nt; i++) {
            if (!(r[i] <= 1.0f))
                bad++;
            if (r[i] > r[w])
                w = i;
        }
        o->checked = (long)nt;
        o->bad = bad;
        o->worst = r[w];
        o->worst_dev = pass ? 0.0f : h[nt + w];
        o->worst_ref = h[2 * nt + w];
    }
    free(h);
    return vd->bad;
}

void cu_fill_uniform(void *p, int dt, size_t n, uint64_t seed)
{
    if (!n)
        return;
    k_fill_uniform<<<cu_blocks(n, 256), 256, 0, cu.s>>>(p, dt, n, seed);
    cu_launched();
}

void cu_gemm_fallback(const gemm_view *v, const void *P, int pdt, const void *Q, int qdt,
                      void *out, int odt, float beta)
{
    if (v->R < 1 || v->C < 1)
        return;
    dim3 grid((unsigned)((v->C + FB_TILE - 1) / FB_TILE), (unsigned)((v->R + FB_TILE - 1) / FB_TILE));
    if (grid.y > 65535u)
        cu_fail(__FILE__, __LINE__, "cu_gemm_fallback", "too many rows for the fallback kernel");
    k_gemm_fallback<<<grid, 256, 0, cu.s>>>(*v, P, pdt, Q, qdt, out, odt, beta);
    cu_launched();
}

long cu_gemm_verify(const gemm_view *v, const void *P, int pdt, const void *Q, int qdt,
                    const void *out, int odt, const void *c0, float beta, const gemm_epi_ref *e,
                    float rtol, gemm_verdict *vd)
{
    size_t total = (size_t)v->R * (size_t)v->C;
    size_t n = verify_count((size_t)v->R, (size_t)v->C);
    size_t nb = e->bgrad ? (size_t)v->R : 0, nt = n + nb;
    float *d = NULL;
    size_t have = 0;
    if (cu_buffer((void **)&d, &have, 3 * nt * sizeof(float)))
        return -1;
    k_gemm_verify<<<cu_blocks(n, 128), 128, 0, cu.s>>>(*v, P, pdt, Q, qdt, out, odt, c0, beta, *e,
                                                       rtol, n, total, d, d + nt, d + 2 * nt);
    cu_launched();
    if (nb) {
        k_bgrad_verify<<<cu_blocks(nb, 128), 128, 0, cu.s>>>(*v, P, pdt, e->bgrad, rtol, d + n,
                                                             d + nt + n, d + 2 * nt + n);
        cu_launched();
    }
    long bad = verify_gather(d, nt, NULL, vd, NULL);
    cu_free(d, have);
    return bad;
}

float cu_verify_rtol(int out_dt, int tf32)
{
    if (out_dt == DT_BF16)
        return 1e-2f; /* bf16 output: 2^-8 a rounding */
    if (out_dt == DT_F16)
        return 4e-3f; /* f16 output: 2^-11 a rounding, split-K partials */
    if (tf32)
        return 4e-3f; /* TF32: inputs rounded to a 10-bit mantissa inside */
    return 2e-4f;     /* f32 accumulation of f32 or 16-bit inputs into f32 */
}

long cu_conv_verify(const conv_view *v, const void *x, int xdt, const void *w, int wdt,
                    const void *bias, int bdt, const void *res, int act, const void *out,
                    const void *out2, int ydt, float rtol, gemm_verdict *vd, gemm_verdict *vd2)
{
    size_t total = (size_t)(v->N * v->K * v->OH * v->OW);
    size_t n = verify_count((size_t)(v->N * v->OH * v->OW), (size_t)v->K);
    float *d = NULL;
    size_t have = 0;
    memset(vd, 0, sizeof *vd);
    if (vd2)
        memset(vd2, 0, sizeof *vd2);
    if (!n)
        return 0;
    if (cu_buffer((void **)&d, &have, 4 * n * sizeof(float)))
        return -1;
    k_conv_verify<<<cu_blocks(n, 128), 128, 0, cu.s>>>(*v, x, xdt, w, wdt, bias, bdt, res, act,
                                                       out, out2, ydt, rtol, n, total, d, d + n,
                                                       d + 2 * n, d + 3 * n);
    cu_launched();
    long bad = verify_gather(d, n, out2 ? d + 3 * n : NULL, vd, out2 ? vd2 : NULL);
    cu_free(d, have);
    return bad;
}

int cu_chan_sums_ref(const void *y, int dt, size_t N, size_t K, size_t P, int nhwc, double *ref)
{
    double *d = NULL;
    size_t have = 0;
    if (!K)
        return 0;
    if (K > 0x7fffffffu || cu_buffer((void **)&d, &have, 3 * K * sizeof(double)))
        return -1;
    k_chan_sums_ref<<<(unsigned)K, 256, 0, cu.s>>>(y, dt, N, K, P, nhwc, d);
    cu_launched();
    cudaCheck(cudaMemcpyAsync(ref, d, 3 * K * sizeof(double), cudaMemcpyDeviceToHost, cu.s));
    cudaCheck(cudaStreamSynchronize(cu.s));
    cu_free(d, have);
    return 0;
}

/* ---- convolutions from their definition (MATRIX_ENGINE_CONV=kernel) ---------------------------- */

__device__ __forceinline__ size_t cv_idx(const conv_view &v, int64_t n, int64_t c, int64_t h, int64_t w,
                                         int64_t C, int64_t H, int64_t W)
{
    return v.nhwc ? (size_t)(((n * H + h) * W + w) * C + c) : (size_t)(((n * C + c) * H + h) * W + w);
}

/* one thread per element of the direction's output, a grid-stride loop */
__global__ void k_conv_direct(int dir, conv_view v, const void *x, int xdt, const float *w, float *dw,
                              void *y, int ydt, int acc, size_t total)
{
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < total;
         e += (size_t)gridDim.x * blockDim.x) {
        double sum = 0.0;
        if (dir == 0) { /* e over y (n, k, oh, ow) */
            int64_t ow = (int64_t)(e % (size_t)v.OW), oh = (int64_t)(e / (size_t)v.OW % (size_t)v.OH);
            int64_t k = (int64_t)(e / ((size_t)v.OW * v.OH) % (size_t)v.K);
            int64_t n = (int64_t)(e / ((size_t)v.OW * v.OH * v.K));
            for (int64_t c = 0; c < v.C; c++)
                for (int64_t r = 0; r < v.R; r++) {
                    int64_t ih = oh * v.stride - v.pad + r;
                    if (ih < 0 || ih >= v.H)
                        continue;
                    for (int64_t s = 0; s < v.S; s++) {
                        int64_t iw = ow * v.stride - v.pad + s;
                        if (iw < 0 || iw >= v.W)
                            continue;
                        sum += (double)cu_ld(x, xdt, cv_idx(v, n, c, ih, iw, v.C, v.H, v.W)) *
                               w[((k * v.C + c) * v.R + r) * v.S + s];
                    }
                }
            cu_st(y, ydt, cv_idx(v, n, k, oh, ow, v.K, v.OH, v.OW), (float)sum);
        } else if (dir == 1) { /* e over dx (n, c, h, w); y is dy */
            int64_t iw = (int64_t)(e % (size_t)v.W), ih = (int64_t)(e / (size_t)v.W % (size_t)v.H);
            int64_t c = (int64_t)(e / ((size_t)v.W * v.H) % (size_t)v.C);
            int64_t n = (int64_t)(e / ((size_t)v.W * v.H * v.C));
            for (int64_t k = 0; k < v.K; k++)
                for (int64_t r = 0; r < v.R; r++) {
                    int64_t t = ih + v.pad - r; /* oh * stride */
                    if (t < 0 || t % v.stride || t / v.stride >= v.OH)
                        continue;
                    for (int64_t s = 0; s < v.S; s++) {
                        int64_t u = iw + v.pad - s;
                        if (u < 0 || u % v.stride || u / v.stride >= v.OW)
                            continue;
                        sum += (double)cu_ld(y, ydt, cv_idx(v, n, k, t / v.stride, u / v.stride, v.K, v.OH, v.OW)) *
                               w[((k * v.C + c) * v.R + r) * v.S + s];
                    }
                }
            size_t i = cv_idx(v, n, c, ih, iw, v.C, v.H, v.W);
            /* x is dx here */
            cu_st((void *)x, xdt, i, (float)(acc ? sum + cu_ld(x, xdt, i) : sum));
        } else { /* e over dw (k, c, r, s) */
            int64_t s = (int64_t)(e % (size_t)v.S), r = (int64_t)(e / (size_t)v.S % (size_t)v.R);
            int64_t c = (int64_t)(e / ((size_t)v.S * v.R) % (size_t)v.C);
            int64_t k = (int64_t)(e / ((size_t)v.S * v.R * v.C));
            for (int64_t n = 0; n < v.N; n++)
                for (int64_t oh = 0; oh < v.OH; oh++) {
                    int64_t ih = oh * v.stride - v.pad + r;
                    if (ih < 0 || ih >= v.H)
                        continue;
                    for (int64_t ow = 0; ow < v.OW; ow++) {
                        int64_t iw = ow * v.stride - v.pad + s;
                        if (iw < 0 || iw >= v.W)
                            continue;
                        sum += (double)cu_ld(y, ydt, cv_idx(v, n, k, oh, ow, v.K, v.OH, v.OW)) *
                               cu_ld(x, xdt, cv_idx(v, n, c, ih, iw, v.C, v.H, v.W));
                    }
                }
            dw[e] = (float)(acc ? sum + dw[e] : sum);
        }
    }
}

void cu_conv_direct(int dir, const conv_view *v, const void *x, int xdt, const float *w, float *dw,
                    const void *y, int ydt, int acc)
{
    size_t total = dir == 0 ? (size_t)(v->N * v->K * v->OH * v->OW)
                 : dir == 1 ? (size_t)(v->N * v->C * v->H * v->W)
                            : (size_t)(v->K * v->C * v->R * v->S);
    if (!total)
        return;
    k_conv_direct<<<cu_blocks(total, 128), 128, 0, cu.s>>>(dir, *v, x, xdt, w, dw, (void *)y, ydt, acc, total);
    cu_launched();
}
