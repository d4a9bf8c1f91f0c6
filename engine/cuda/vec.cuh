/* vec.cuh - device helpers shared by kernels.cu and ops.cu: 1- or
 * 8-element loads / stores in any storage type, cheap 32-bit division, the
 * CPU's activations, the grid-stride launcher of element-wise functors. Included after cuda.h, inside no namespace. */
#ifndef MATRIX_ENGINE_CUDA_VEC_CUH
#define MATRIX_ENGINE_CUDA_VEC_CUH

#include "cuda.h"

#include <math.h>

namespace {

/* ---- element access, 1 or 8 consecutive elements ------------------------------ */

union u8h { uint4 u; __half2 h[4]; };
union u8b { uint4 u; __nv_bfloat162 b[4]; };

/* r[k] = p[i + k], k < V; V == 8: i is a multiple of 8 and p 16-byte aligned. */
template <int V>
__device__ __forceinline__ void ldv(const void *p, int dt, size_t i, float (&r)[V])
{
    if constexpr (V == 1) {
        r[0] = cu_ld(p, dt, i);
    } else {
        static_assert(V == 8, "1 or 8 elements");
        if (dt == DT_F16) {
            u8h x;
            x.u = *reinterpret_cast<const uint4 *>(static_cast<const __half *>(p) + i);
#pragma unroll
            for (int k = 0; k < 4; k++) {
                float2 f = __half22float2(x.h[k]);
                r[2 * k] = f.x;
                r[2 * k + 1] = f.y;
            }
        } else if (dt == DT_BF16) {
            u8b x;
            x.u = *reinterpret_cast<const uint4 *>(static_cast<const __nv_bfloat16 *>(p) + i);
#pragma unroll
            for (int k = 0; k < 4; k++) {
                float2 f = __bfloat1622float2(x.b[k]);
                r[2 * k] = f.x;
                r[2 * k + 1] = f.y;
            }
        } else {
            const float4 *q = reinterpret_cast<const float4 *>(static_cast<const float *>(p) + i);
            float4 a = q[0], b = q[1];
            r[0] = a.x; r[1] = a.y; r[2] = a.z; r[3] = a.w;
            r[4] = b.x; r[5] = b.y; r[6] = b.z; r[7] = b.w;
        }
    }
}

/* p[i + k] = r[k], k < V (same alignment rules as ldv). */
template <int V>
__device__ __forceinline__ void stv(void *p, int dt, size_t i, const float (&r)[V])
{
    if constexpr (V == 1) {
        cu_st(p, dt, i, r[0]);
    } else {
        static_assert(V == 8, "1 or 8 elements");
        if (dt == DT_F16) {
            u8h x;
#pragma unroll
            for (int k = 0; k < 4; k++)
                x.h[k] = __floats2half2_rn(r[2 * k], r[2 * k + 1]);
            *reinterpret_cast<uint4 *>(static_cast<__half *>(p) + i) = x.u;
        } else if (dt == DT_BF16) {
            u8b x;
#pragma unroll
            for (int k = 0; k < 4; k++)
                x.b[k] = __floats2bfloat162_rn(r[2 * k], r[2 * k + 1]);
            *reinterpret_cast<uint4 *>(static_cast<__nv_bfloat16 *>(p) + i) = x.u;
        } else {
            float4 *q = reinterpret_cast<float4 *>(static_cast<float *>(p) + i);
            q[0] = make_float4(r[0], r[1], r[2], r[3]);
            q[1] = make_float4(r[4], r[5], r[6], r[7]);
        }
    }
}

/* a / b and a % b, in 32 bits when both fit (64-bit division is slow). */
__device__ __forceinline__ size_t udiv(size_t a, size_t b)
{
    return ((a | b) >> 32) == 0 ? (size_t)((unsigned)a / (unsigned)b) : a / b;
}
__device__ __forceinline__ size_t umod(size_t a, size_t b) { return a - udiv(a, b) * b; }

/* The CPU's activations (cpu.h cpu_act). */
__device__ __forceinline__ float act_f(int act, float x)
{
    switch (act) {
    case ACT_RELU: return x > 0.0f ? x : 0.0f;
    case ACT_GELU: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case ACT_TANH: return tanhf(x);
    case ACT_GELU_TANH:
        return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    default: return x;
    }
}

/* ---- launching an element-wise functor ---------------------------------------- */

/* Grid-stride over n elements: f.run<8>(i) for the vector part when vec,
 * then f.run<1>(i) for the rest. */
template <class F>
__global__ void k_map(F f, size_t n, int vec)
{
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t nv = vec ? n / 8 : 0;
    for (size_t j = t; j < nv; j += stride)
        f.template run<8>(j * 8);
    for (size_t i = nv * 8 + t; i < n; i += stride)
        f.template run<1>(i);
}

template <class F>
void launch_map(const F &f, size_t n, int vec)
{
    if (n == 0)
        return;
    size_t work = vec ? (n + 7) / 8 : n;
    k_map<F><<<cu_blocks(work, 256), 256, 0, cu.s>>>(f, n, vec);
    cu_launched();
}

bool al16(const void *p) { return ((uintptr_t)p & 15) == 0; }

} // namespace

#endif
