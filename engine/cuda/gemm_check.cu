/* gemm_check.cu - the products of a linear layer computed from their
 * definition (gemm_view.h), for two jobs:
 *
 *   cu_gemm_verify   checks an output written by a library call against the
 *                    definition: every element when there are at most
 *                    VERIFY_ALL of them, else VERIFY_SAMPLES elements drawn
 *                    by a hash; f32 accumulation, tolerance relative to the
 *                    sum of |terms| (so a layout or algorithm error, which is
 *                    of the order of that sum, cannot pass).
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

#define VERIFY_ALL 65536
#define VERIFY_SAMPLES 8192
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

/* Sample s -> output element (r, c). */
__device__ __forceinline__ void verify_pick(const gemm_view &v, size_t s, size_t total,
                                            int64_t *r, int64_t *c)
{
    size_t e = total <= VERIFY_ALL ? s : (size_t)(mix64(0x5eed0000ull + s) % total);
    *r = (int64_t)(e / (size_t)v.C);
    *c = (int64_t)(e % (size_t)v.C);
}

__global__ void k_gemm_verify(gemm_view v, const void *P, int pdt, const void *Q, int qdt,
                              const void *out, int odt, const void *c0, float beta,
                              const float *bias, int relu, float rtol, size_t nsamp, size_t total,
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
    if (bias) {
        acc += bias[c];
        mag += fabsf(bias[c]);
    }
    if (relu)
        acc = acc > 0.0f ? acc : 0.0f;
    float d = cu_ld(out, odt, (size_t)gv_out(&v, r, c));
    float tol = rtol * mag + 1e-6f;
    float e = fabsf(d - acc) / tol;
    ratio[s] = e == e ? e : 3.0e38f; /* NaN output: as bad as it gets */
    dev[s] = d;
    ref[s] = acc;
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

} /* namespace */

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
                    const void *out, int odt, const void *c0, float beta, const float *bias,
                    int relu, float rtol, gemm_verdict *vd)
{
    size_t total = (size_t)v->R * (size_t)v->C;
    size_t n = total <= VERIFY_ALL ? total : VERIFY_SAMPLES;
    float *d = NULL;
    size_t have = 0;
    if (cu_buffer((void **)&d, &have, 3 * n * sizeof(float)))
        return -1;
    k_gemm_verify<<<cu_blocks(n, 128), 128, 0, cu.s>>>(*v, P, pdt, Q, qdt, out, odt, c0, beta,
                                                       bias, relu, rtol, n, total, d, d + n,
                                                       d + 2 * n);
    cu_launched();
    float *h = (float *)malloc(3 * n * sizeof(float));
    if (!h)
        cu_fail(__FILE__, __LINE__, "malloc", "out of host memory");
    cudaCheck(cudaMemcpyAsync(h, d, 3 * n * sizeof(float), cudaMemcpyDeviceToHost, cu.s));
    cudaCheck(cudaStreamSynchronize(cu.s));
    long bad = 0;
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(h[i] <= 1.0f))
            bad++;
        if (h[i] > h[w])
            w = i;
    }
    vd->checked = (long)n;
    vd->bad = bad;
    vd->worst = h[w];
    vd->worst_dev = h[n + w];
    vd->worst_ref = h[2 * n + w];
    free(h);
    cu_free(d, have);
    return bad;
}
