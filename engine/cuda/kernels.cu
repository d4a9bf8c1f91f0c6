/* kernels.cu - kernels shared by the CUDA op files (cuda.h, "shared
 * kernels"): the epilogue of a convolution / GEMM (bias, residual,
 * pre-activation copy, activation), per-channel sums (bias gradients), storage
 * type casts and the re-layout of convolution weights and their gradients.
 *
 * Conventions: everything runs on cu.s and is followed by cu_launched(); no
 * call synchronises, allocates or touches the host (steps are captured into
 * CUDA Graphs). Tensors are read and written through cu_ld / cu_st in their
 * storage type (f32, f16, bf16) and computed in f32. Element-wise kernels are
 * grid-stride loops; when every pointer is 16-byte aligned (and, where an
 * element's channel matters, 8 consecutive elements share a channel pattern)
 * a thread moves 8 elements with vector loads / stores, the remainder going
 * element by element. "acc" means add into the destination, else overwrite.
 * Activations are the CPU's (engine/cpu/cpu.h cpu_act).
 *
 * cu_channel_sum uses no scratch (nothing of cu.ws): out is zeroed with
 * cudaMemsetAsync unless acc, then every block adds its f32 per-channel
 * partial with atomicAdd, so the last bits of a sum vary from run to run. */
#include "cuda.h"

#include <math.h>
#include "vec.cuh"

namespace {

/* ---- epilogue -------------------------------------------------------------------- */

struct epi_f {
    void *y;
    const float *bias;
    const void *res;
    void *pre;
    int dt, act, nhwc;
    size_t C, P;
    template <int V>
    __device__ void run(size_t i) const
    {
        float v[V], r[V];
        ldv<V>(y, dt, i, v);
        if (bias) {
            /* V == 8: nhwc and C % 8 == 0 (channels c .. c + 7), or
             * nchw and P % 8 == 0 (one channel) */
            size_t c = nhwc ? umod(i, C) : umod(udiv(i, P), C);
#pragma unroll
            for (int k = 0; k < V; k++)
                v[k] += bias[nhwc ? c + k : c];
        }
        if (res) {
            ldv<V>(res, dt, i, r);
#pragma unroll
            for (int k = 0; k < V; k++)
                v[k] += r[k];
        }
        if (pre)
            stv<V>(pre, dt, i, v);
#pragma unroll
        for (int k = 0; k < V; k++)
            v[k] = act_f(act, v[k]);
        stv<V>(y, dt, i, v);
    }
};

/* ---- per-channel sums -------------------------------------------------------------
 * out[c] += sum, with one float atomicAdd per channel and block (out is zeroed
 * first when !acc). No scratch. */

constexpr int SUM_ROWS = 32;    /* channels-last: rows per thread, at least */
constexpr int SUM_BLOCKS = 512; /* blocks aimed at (fewer atomics per channel) */

/* Channels-last / row-major: rows R = N * P of C channels. A block is TX x TY
 * threads (TX = 1 << txb); thread (tx, ty) owns channels c0 .. c0 + V - 1 of
 * group blockIdx.x * TX + tx and rows blockIdx.y * TY + ty + k gridDim.y TY. */
template <int V>
__global__ void __launch_bounds__(256)
k_chsum_nhwc(const void *x, int dt, float *out, size_t R, size_t C, int txb)
{
    __shared__ float sh[V][256];
    const int tid = threadIdx.x, TX = 1 << txb, TY = 256 >> txb;
    const int tx = tid & (TX - 1), ty = tid >> txb;
    size_t c0 = ((size_t)blockIdx.x * TX + tx) * V;
    bool on = c0 < C;
    float a[V];
#pragma unroll
    for (int k = 0; k < V; k++)
        a[k] = 0.0f;
    if (on)
        for (size_t r = (size_t)blockIdx.y * TY + ty; r < R; r += (size_t)gridDim.y * TY) {
            float v[V];
            ldv<V>(x, dt, r * C + c0, v);
#pragma unroll
            for (int k = 0; k < V; k++)
                a[k] += v[k];
        }
#pragma unroll
    for (int k = 0; k < V; k++)
        sh[k][tid] = a[k];
    __syncthreads();
    for (int h = TY / 2; h > 0; h >>= 1) {
        if (ty < h)
#pragma unroll
            for (int k = 0; k < V; k++)
                sh[k][tid] += sh[k][tid + h * TX];
        __syncthreads();
    }
    if (ty == 0 && on)
#pragma unroll
        for (int k = 0; k < V; k++)
            atomicAdd(&out[c0 + k], sh[k][tx]);
}

/* NCHW: block (c, y) of 8 warps; warp w sums the planes n = y * 8 + w + k 8
 * gridDim.y of channel c. V == 8 needs P % 8 == 0. */
template <int V>
__global__ void __launch_bounds__(256)
k_chsum_nchw(const void *x, int dt, float *out, size_t N, size_t C, size_t P)
{
    __shared__ float sh[8];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    size_t c = blockIdx.x;
    float a = 0.0f;
    for (size_t n = (size_t)blockIdx.y * 8 + warp; n < N; n += (size_t)gridDim.y * 8) {
        size_t base = (n * C + c) * P;
        for (size_t q = (size_t)lane * V; q < P; q += 32 * V) {
            float v[V];
            ldv<V>(x, dt, base + q, v);
#pragma unroll
            for (int k = 0; k < V; k++)
                a += v[k];
        }
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        a += __shfl_down_sync(0xffffffffu, a, off);
    if (lane == 0)
        sh[warp] = a;
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int w = 0; w < 8; w++)
            s += sh[w];
        atomicAdd(&out[c], s);
    }
}

/* ---- casts and weight re-layout ---------------------------------------------------- */

struct cast_f {
    const void *src;
    void *dst;
    int sdt, ddt, acc;
    template <int V>
    __device__ void run(size_t i) const
    {
        float v[V];
        ldv<V>(src, sdt, i, v);
        if (acc) {
            float d[V];
            ldv<V>(dst, ddt, i, d);
#pragma unroll
            for (int k = 0; k < V; k++)
                v[k] = d[k] + v[k];
        }
        stv<V>(dst, ddt, i, v);
    }
};

/* dst (KRSC) element i from w (KCRS). Scalar only. */
struct w_krsc_f {
    const float *w;
    void *dst;
    int ddt;
    size_t C, R, S;
    template <int V>
    __device__ void run(size_t i) const
    {
        static_assert(V == 1, "scalar");
        size_t c = umod(i, C), t = udiv(i, C);
        size_t s = umod(t, S);
        t = udiv(t, S);
        size_t r = umod(t, R), k = udiv(t, R);
        cu_st(dst, ddt, i, w[((k * C + c) * R + r) * S + s]);
    }
};

/* dw (KCRS) element i from src (KRSC) (+)=. Scalar only. */
struct wg_krsc_f {
    const void *src;
    float *dw;
    int sdt, acc;
    size_t C, R, S;
    template <int V>
    __device__ void run(size_t i) const
    {
        static_assert(V == 1, "scalar");
        size_t s = umod(i, S), t = udiv(i, S);
        size_t r = umod(t, R);
        t = udiv(t, R);
        size_t c = umod(t, C), k = udiv(t, C);
        float v = cu_ld(src, sdt, ((k * R + r) * S + s) * C + c);
        dw[i] = acc ? dw[i] + v : v;
    }
};

/* k_map instantiates run<8> too: never called for these (vec 0). */
template <class F>
__global__ void k_map1(F f, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        f.template run<1>(i);
}

template <class F>
void launch_map1(const F &f, size_t n)
{
    if (n == 0)
        return;
    k_map1<F><<<cu_blocks(n, 256), 256, 0, cu.s>>>(f, n);
    cu_launched();
}

} /* namespace */

/* ---- the interface (cuda.h) -------------------------------------------------------------- */

void cu_epilogue(void *y, int dt, const float *bias, const void *res, int act, void *pre,
                 size_t N, size_t C, size_t P, int nhwc)
{
    if (!bias && !res && !pre && act == ACT_NONE)
        return;
    size_t n = N * C * P;
    epi_f f = {y, bias, res, pre, dt, act, nhwc, C, P};
    int vec = al16(y) && (!res || al16(res)) && (!pre || al16(pre)) &&
              (!bias || (nhwc ? C % 8 == 0 : P % 8 == 0));
    launch_map(f, n, vec);
}

void cu_channel_sum(const void *x, int dt, float *out, int acc, size_t N, size_t C, size_t P,
                    int nhwc)
{
    if (C == 0)
        return;
    if (!acc)
        cudaCheck(cudaMemsetAsync(out, 0, C * sizeof(float), cu.s));
    if (N * P == 0)
        return;
    if (nhwc || P == 1) {
        /* rows of C contiguous channels (a (M, C) matrix: N = M, P = 1) */
        size_t R = N * P;
        int V = C % 8 == 0 && al16(x) ? 8 : 1;
        size_t G = C / V;
        int txb = 0;
        while (txb < 5 && ((size_t)1 << txb) < G)
            txb++;
        size_t TX = (size_t)1 << txb, TY = 256 / TX, gx = (G + TX - 1) / TX;
        size_t gy = (R + TY * SUM_ROWS - 1) / (TY * SUM_ROWS), cap = SUM_BLOCKS / gx;
        if (cap < 1)
            cap = 1;
        if (gy > cap)
            gy = cap;
        if (gy > 65535)
            gy = 65535;
        if (gy < 1)
            gy = 1;
        dim3 grid((unsigned)gx, (unsigned)gy);
        if (V == 8)
            k_chsum_nhwc<8><<<grid, 256, 0, cu.s>>>(x, dt, out, R, C, txb);
        else
            k_chsum_nhwc<1><<<grid, 256, 0, cu.s>>>(x, dt, out, R, C, txb);
        cu_launched();
    } else {
        int V = P % 8 == 0 && al16(x) ? 8 : 1;
        size_t gy = (N + 7) / 8, cap = SUM_BLOCKS / C; /* planes per warp: N / (8 gy) */
        if (cap < 1)
            cap = 1;
        if (gy > cap)
            gy = cap;
        if (gy < 1)
            gy = 1;
        dim3 grid((unsigned)C, (unsigned)gy);
        if (V == 8)
            k_chsum_nchw<8><<<grid, 256, 0, cu.s>>>(x, dt, out, N, C, P);
        else
            k_chsum_nchw<1><<<grid, 256, 0, cu.s>>>(x, dt, out, N, C, P);
        cu_launched();
    }
}

void cu_cast(const void *src, int sdt, void *dst, int ddt, size_t n, int acc)
{
    cast_f f = {src, dst, sdt, ddt, acc};
    launch_map(f, n, al16(src) && al16(dst));
}

void cu_weight_to(const float *w, void *dst, int ddt, int nhwc, size_t K, size_t C, size_t R,
                  size_t S)
{
    size_t n = K * C * R * S;
    if (!nhwc || C == 1) { /* same order */
        cu_cast(w, DT_F32, dst, ddt, n, 0);
        return;
    }
    w_krsc_f f = {w, dst, ddt, C, R, S};
    launch_map1(f, n);
}

void cu_weight_grad_from(const void *src, int sdt, int nhwc, float *dw, int acc, size_t K,
                         size_t C, size_t R, size_t S)
{
    size_t n = K * C * R * S;
    if (!nhwc || C == 1) {
        cu_cast(src, sdt, dw, DT_F32, n, acc);
        return;
    }
    wg_krsc_f f = {src, dw, sdt, acc, C, R, S};
    launch_map1(f, n);
}
