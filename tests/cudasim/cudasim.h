/* cudasim.h - runs the engine's own CUDA kernels on the CPU, so that they are
 * checked where no GPU is (tests/cudasim/local.mk: what is built and run;
 * cuBLASLt (cublaslt.cc) and cuDNN's legacy convolution API (cudnn.cc) are
 * simulated from their documented meaning, NCCL between the ranks of one
 * host (each rank a process, CUDASIM_DEVICES devices); cuDNN's graph API,
 * timing and the real libraries' own bugs need a GPU).
 *
 * The CUDA sources are compiled by the host C++ compiler after
 * tests/cudasim/translate.sed has rewritten what is not C++ or must be per
 * block (a launch "k<<<grid, block, smem, stream>>>(args)", __shared__ and
 * "extern __shared__" arrays, cub's header); this header is included first
 * (-include) and gives the rest a CPU meaning:
 *
 *   - a launch runs every block in turn, and each thread of a block as a
 *     fiber (an x86-64 register switch; ucontext elsewhere) that runs until
 *     it ends or waits: __syncthreads waits
 *     for every thread of the block that has not ended, a warp shuffle for
 *     the lanes of its mask. Threads run in order, or in reverse with
 *     CUDASIM_ORDER=reverse, so that a missing barrier (one thread reading
 *     shared memory another has not written yet) changes the result between
 *     the two orders; the blocks too (a block reading what another block
 *     of the same launch writes, a race on a GPU, reads it in one order
 *     only);
 *   - shared memory, __shared__ arrays (translated to shared_var) and the
 *     launch's dynamic part, is the block's own and filled with 0xff bytes
 *     (NaN) before each block, so a kernel that reads what it did not write
 *     reads NaN; more than 48 KiB in all fails the launch;
 *   - device memory is host memory, each allocation between guard zones
 *     checked after every launch (a write outside aborts naming the kernel);
 *     a launch beyond what a GPU accepts (more than 1024 threads a block, a
 *     grid dimension out of range: cudaErrorInvalidConfiguration; more than
 *     48 KiB of dynamic shared memory: cudaErrorInvalidValue) fails as on
 *     the GPU; a barrier some threads can never reach is reported and
 *     aborts;
 *   - a stream's work runs when it is issued, or (CUDASIM_STREAMS=main-late
 *     or side-late) one stream's work only when something waits for it, so
 *     that a missing order between streams shows (cudasim.cc says how);
 *     while a stream is captured into a CUDA Graph its work, and that of
 *     the streams that joined it, is recorded and replayed at each launch
 *     of the graph, the branches in the same schedule;
 *   - atomics are plain read-modify-writes (a fiber is never interrupted
 *     between two waits).
 *
 * The float arithmetic is the host's (no FMA contraction unless the compiler
 * makes one; expf / erff / tanhf from libm), so results differ from a GPU's
 * in the last bits, well inside ops_check's tolerances. */
#ifndef MATRIX_CUDASIM_H
#define MATRIX_CUDASIM_H

/* before the CUDA headers, which define them only when not yet defined */
#define __shared__ static
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)

#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
#include <functional>
#include <memory>
#include <tuple>
#include <utility>

namespace cudasim {

/* the thread that runs now */
extern uint3 tid, bid;
extern dim3 bdim, gdim;
extern void *dyn_smem;

struct Cfg {
    dim3 g, b;
    size_t smem;
    cudaStream_t s;
    Cfg(dim3 g_, dim3 b_, size_t smem_ = 0, cudaStream_t s_ = 0) : g(g_), b(b_), smem(smem_), s(s_) {}
};

/* Runs body(ctx) as every thread of the grid (or, while c.s is being
 * captured into a CUDA Graph, records the launch for the graph's replays,
 * ctx kept alive by it); the launch's error (bad configuration) goes to
 * cudaGetLastError. */
void run(const Cfg &c, void (*body)(void *), std::shared_ptr<void> ctx, const char *name);
/* Work of stream s in stream order: now, or recorded while s is captured
 * (a copy, a set, cub's sort). */
void enqueue(cudaStream_t s, std::function<void()> f);
/* 1 when the n bytes at p lie inside one cudaMalloc allocation (a library
 * call's operands: cublaslt.cc checks them before it reads or writes) */
int inside_alloc(const void *p, size_t n);
/* adds ms of device time: the events recorded after it see it (a simulated
 * library call's duration) */
void advance_clock(double ms);
double clock_extra();
/* the simulated device's clock in ms (what events record): the CPU time of
 * the thread running the work, plus advance_clock's */
double now_ms();
/* the host's wall clock in ms */
double wall_ms();

template <class... P> struct Launch {
    Cfg c;
    void (*k)(P...);
    const char *name;
    template <class... A> void operator()(A &&...a) const
    {
        struct Ctx {
            void (*k)(P...);
            std::tuple<P...> args;
        };
        auto ctx = std::make_shared<Ctx>(Ctx{k, std::tuple<P...>(std::forward<A>(a)...)});
        run(c, [](void *p) {
                Ctx *x = static_cast<Ctx *>(p);
                std::apply(x->k, x->args); /* by value: each thread its own copy */
            }, ctx, name);
    }
};
template <class... P> Launch<P...> launch(const Cfg &c, void (*k)(P...), const char *name)
{
    return Launch<P...>{c, k, name};
}

/* The block's copy of the __shared__ array tagged by key (one static char per
 * declaration), n bytes, 0xff-filled at the block's start. */
void *shared_slot(const char *key, size_t n, const char *name);
template <class T> T &shared_var(const char *key, const char *name)
{
    return *static_cast<T *>(shared_slot(key, sizeof(T), name));
}

void syncthreads();
/* the streams' schedule (CUDASIM_STREAMS: issue, main-late, side-late) for
 * the streams made after it; the next one made is the "main" one */
void set_streams(const char *policy);
/* the order threads run in: 0 forward, 1 reverse (CUDASIM_ORDER overrides
 * nothing once this is called) */
void set_order(int reverse);
/* every lane of mask (that has not ended) puts 8 bytes and gets those of lane src */
void warp_exchange(unsigned mask, const void *mine, size_t n, int src, void *out);
inline unsigned lane() { return (tid.x + bdim.x * (tid.y + bdim.y * tid.z)) & 31u; }

template <class T> T shfl_xor(unsigned mask, T v, int m, int width = 32)
{
    static_assert(sizeof(T) <= 8, "8 bytes at most");
    int l = (int)lane(), seg = l & ~(width - 1), s = l ^ m;
    if (s < seg || s >= seg + width)
        s = l;
    T r;
    warp_exchange(mask, &v, sizeof v, s, &r);
    return r;
}
template <class T> T shfl_down(unsigned mask, T v, unsigned d, int width = 32)
{
    static_assert(sizeof(T) <= 8, "8 bytes at most");
    int l = (int)lane(), seg = l & ~(width - 1), s = l + (int)d;
    if (s >= seg + width)
        s = l;
    T r;
    warp_exchange(mask, &v, sizeof v, s, &r);
    return r;
}
template <class T> T shfl_up(unsigned mask, T v, unsigned d, int width = 32)
{
    int l = (int)lane(), seg = l & ~(width - 1), s = l - (int)d;
    if (s < seg)
        s = l;
    T r;
    warp_exchange(mask, &v, sizeof v, s, &r);
    return r;
}
template <class T> T shfl(unsigned mask, T v, int src, int width = 32)
{
    int l = (int)lane(), seg = l & ~(width - 1);
    T r;
    warp_exchange(mask, &v, sizeof v, seg + (src & (width - 1)), &r);
    return r;
}

template <class T> T atomic_add(T *p, T v)
{
    T old = *p;
    *p = old + v;
    return old;
}
template <class T> T atomic_max(T *p, T v)
{
    T old = *p;
    if (v > old)
        *p = v;
    return old;
}
template <class T> T atomic_min(T *p, T v)
{
    T old = *p;
    if (v < old)
        *p = v;
    return old;
}
template <class T> T atomic_cas(T *p, T cmp, T v)
{
    T old = *p;
    if (old == cmp)
        *p = v;
    return old;
}
template <class T> T atomic_exch(T *p, T v)
{
    T old = *p;
    *p = v;
    return old;
}

} // namespace cudasim

inline void cudasim_order(int reverse) { cudasim::set_order(reverse); }
inline void cudasim_streams(const char *policy) { cudasim::set_streams(policy); }

#define threadIdx (cudasim::tid)
#define blockIdx (cudasim::bid)
#define blockDim (cudasim::bdim)
#define gridDim (cudasim::gdim)
static constexpr int warpSize = 32;
#define __syncthreads() cudasim::syncthreads()
#define __shfl_xor_sync(m, v, ...) cudasim::shfl_xor((m), (v), __VA_ARGS__)
#define __shfl_down_sync(m, v, ...) cudasim::shfl_down((m), (v), __VA_ARGS__)
#define __shfl_up_sync(m, v, ...) cudasim::shfl_up((m), (v), __VA_ARGS__)
#define __shfl_sync(m, v, ...) cudasim::shfl((m), (v), __VA_ARGS__)
#define atomicAdd(p, v) cudasim::atomic_add((p), (v))
#define atomicMax(p, v) cudasim::atomic_max((p), (v))
#define atomicMin(p, v) cudasim::atomic_min((p), (v))
#define atomicCAS(p, c, v) cudasim::atomic_cas((p), (c), (v))
#define atomicExch(p, v) cudasim::atomic_exch((p), (v))

namespace cudasim {
void syncwarp(unsigned mask);
}
inline void __syncwarp(unsigned mask = 0xffffffffu) { cudasim::syncwarp(mask); }

/* rounding intrinsics: the host's arithmetic rounds to nearest (compiled
 * with -ffp-contract=off, so never fused behind their back) */
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __frcp_rn(float a) { return 1.0f / a; }
inline float __fsqrt_rn(float a) { return sqrtf(a); }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }

template <class T> inline T __ldg(const T *p) { return *p; }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
inline unsigned __float_as_uint(float f) { unsigned i; memcpy(&i, &f, 4); return i; }
inline float __uint_as_float(unsigned i) { float f; memcpy(&f, &i, 4); return f; }

#endif /* __cplusplus */
#endif
