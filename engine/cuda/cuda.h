/* cuda.h - internals of the CUDA backend (engine/cuda/, compiled by nvcc as
 * C++ into the module matrix-engine-cuda.so that main.c loads with dlopen).
 *
 * Files and owners of the op table (backend.h):
 *   backend_cuda.cu  setup, init, the caching allocator, upload / download,
 *                    prepare (calls the two below), step (eager or one CUDA
 *                    Graph per step), CUDA-event timing, device description.
 *   conv.cu          OP_CONV, OP_CONV_BWD on cuDNN (legacy convolution API:
 *                    heuristics, timed search, fused conv+bias+add+ReLU; the
 *                    forward on the graph API where a plan verifies and, with
 *                    the search, is faster: MATRIX_ENGINE_CONV); with
 *                    MATRIX_ENGINE_BNSTATS=conv a conv feeding a training
 *                    BatchNorm also writes its per-channel sums (GEN_STATS).
 *   gemm.cu          OP_LINEAR, OP_LINEAR_BWD on cuBLASLt.
 *   ops.cu           every other op of the convolutional models: BatchNorm,
 *                    pooling, activations, add / copy, flatten, dropout,
 *                    log-softmax / NLL, SGD, multi-tensor EMA, loss scaling.
 *   kernels.cu       kernels shared by the files above (epilogue, channel
 *                    sums, casts, weight re-layout).
 *   sdpa.cu          OP_ATTENTION(_BWD) in the flash form on cuDNN's fused
 *                    scaled-dot-product attention (graph API), when cuDNN has
 *                    an engine; else ops.cu's kernels run them.
 *   gemm_check.cu    the linear products from their definition (gemm_view.h):
 *                    validation of every cuBLASLt algorithm before use, and
 *                    the fallback kernel when none is right; the forward
 *                    convolution's definition, to check graph-API plans.
 *   dnngraph.cu      building blocks of cuDNN graph (backend) API plans
 *                    (dnngraph.h), shared by sdpa.cu and convgraph.cu.
 *   convgraph.cu     a forward convolution with its bias / residual / ReLU
 *                    epilogue as one graph-API operation graph (convgraph.h);
 *                    conv.cu decides per convolution whether a plan of it runs.
 *
 * Data types: t->dtype of every tensor is its storage type. Parameters,
 * their gradients (TK_PGRAD), optimizer state, BN statistics and the loss
 * path stay f32; with --precision fp16 / bf16 pass_precision makes the
 * activations and their gradients f16 / bf16. Kernels compute in f32 and load
 * / store through cu_ld / cu_st, so one kernel serves every storage type.
 *
 * Every call is asynchronous on cu.s; nothing in an op synchronises, allocates
 * or copies to the host, so that a step can be captured into a CUDA Graph.
 * Errors in a CUDA / cuDNN / cuBLAS call end the process through cu_fail
 * (file, line, call, error text). */
#ifndef MATRIX_ENGINE_CUDA_H
#define MATRIX_ENGINE_CUDA_H

#include "config.h"

extern "C" {
#include "../backend.h"
#include "../engine.h"
#include "../graph.h"
}
#include "../plancache.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#ifdef HAVE_CUDNN
#include <cudnn.h>
#endif
#include <cublasLt.h>

#include "gemm_view.h"

/* ---- checks ----------------------------------------------------------------- */

/* Print "matrix-engine: FILE:LINE: CALL: ERROR" and exit(1). */
[[noreturn]] void cu_fail(const char *file, int line, const char *call, const char *err);

#define cudaCheck(x) do { cudaError_t e_ = (x); \
    if (e_ != cudaSuccess) cu_fail(__FILE__, __LINE__, #x, cudaGetErrorString(e_)); } while (0)
#ifdef HAVE_CUDNN
#define cudnnCheck(x) do { cudnnStatus_t e_ = (x); \
    if (e_ != CUDNN_STATUS_SUCCESS) cu_fail(__FILE__, __LINE__, #x, cudnnGetErrorString(e_)); } while (0)
#endif
const char *cu_cublas_status(cublasStatus_t s);
#define cublasCheck(x) do { cublasStatus_t e_ = (x); \
    if (e_ != CUBLAS_STATUS_SUCCESS) cu_fail(__FILE__, __LINE__, #x, cu_cublas_status(e_)); } while (0)
/* After a kernel launch: launch errors (bad configuration) are caught here. */
#define cu_launched() cudaCheck(cudaGetLastError())

/* ---- the backend's state -------------------------------------------------------- */

typedef struct cu_state {
    int dev;                  /* device ordinal (0) */
    cudaDeviceProp prop;
    int driver_version;       /* cudaDriverGetVersion's (12080: 12.8), read by be_init */
    int runtime_version;      /* cudaRuntimeGetVersion's */
    cudaStream_t s;           /* the one stream every op runs on */
    point pt;                 /* the point: precision, cudnn_benchmark, compile, ... */
    int act_dt;               /* storage type of activations: DT_F32, DT_F16, DT_BF16 */
    int search;               /* 1: timed algorithm search for convolutions
                               * (--cudnn-benchmark on or --compile max-autotune) */
    int autotune;             /* 1: --compile max-autotune: also time every
                               * cuBLASLt algorithm candidate of every GEMM */
#ifdef HAVE_CUDNN
    cudnnHandle_t dnn;        /* created by conv.cu's prepare, only when the graph has convolutions */
#endif
    cublasLtHandle_t lt;      /* created by gemm.cu's prepare, only when the graph has linears */
    void *ws;                 /* workspace of cuDNN / cuBLASLt calls, ws_bytes long */
    size_t ws_bytes;          /* set by backend_cuda.cu's prepare: the largest ws_need */
    size_t ws_need;           /* prepare functions raise it to what their ops need */
    int64_t *step;            /* device: step counter, +1 at the start of every step
                               * (kernels read it, so that a graph replay sees the new value) */
    float *scaler;            /* device, f32[4]: [0] loss scale (1 unless fp16 training),
                               * [1] found inf/nan in this step's gradients (0 / 1),
                               * [2] steps since the scale last changed, [3] steps skipped */
    plancache *plans;         /* the persistent plan cache (plans.cu); NULL: off */
    int nops;                 /* ops of the plan */
    void **priv;              /* per op index: private state of conv.cu / gemm.cu / ops.cu */
} cu_state;

extern cu_state cu;

/* Device memory through the caching allocator (backend_cuda.cu): NULL when
 * the device is out of memory (the size is kept for the status=oom record).
 * Never managed memory. Counted in peak_mem_bytes. */
void *cu_alloc(size_t bytes);
void cu_free(void *p, size_t bytes);
/* A private buffer of bytes for prepare: *p (NULL for 0 bytes) and *have
 * (what to give cu_free); -1 when out of memory. */
int cu_buffer(void **p, size_t *have, size_t bytes);
/* 1 when weights change between steps: the plan has an optimizer or a
 * backward op. */
int cu_plan_trains(const graph *g, int nrun);

/* ---- element access -------------------------------------------------------------- */

static inline size_t cu_numel(const graph *g, int t) { return (size_t)graph_numel(&g->t[t]); }
#define CU_DT(g, i) ((g)->t[(i)].dtype)
#define CU_PTR(g, i) ((g)->t[(i)].data)
#define CU_ACC(o, k) (((o)->acc >> (k)) & 1)
/* A floating-point storage type (activations may be any of them). */
static inline int cu_float_type(int dt) { return dt == DT_F32 || dt == DT_F16 || dt == DT_BF16; }

__device__ __forceinline__ float cu_ld(const void *p, int dt, size_t i)
{
    switch (dt) {
    case DT_F16: return __half2float(((const __half *)p)[i]);
    case DT_BF16: return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    default: return ((const float *)p)[i];
    }
}

__device__ __forceinline__ void cu_st(void *p, int dt, size_t i, float v)
{
    switch (dt) {
    case DT_F16: ((__half *)p)[i] = __float2half_rn(v); break;
    case DT_BF16: ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v); break;
    default: ((float *)p)[i] = v;
    }
}

/* Blocks for n elements at threads per block, capped for grid-stride loops. */
static inline unsigned cu_blocks(size_t n, unsigned threads)
{
    size_t b = (n + threads - 1) / threads;
    return (unsigned)(b < 1 ? 1 : b > 65535u * 8 ? 65535u * 8 : b);
}

#ifdef HAVE_CUDNN
static inline cudnnDataType_t cu_dnn_type(int dt)
{
    return dt == DT_F16 ? CUDNN_DATA_HALF : dt == DT_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}
#endif

static inline cudaDataType_t cu_blas_type(int dt)
{
    return dt == DT_F16 ? CUDA_R_16F : dt == DT_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

/* ---- shared kernels (kernels.cu), all on cu.s --------------------------------------- */

/* Epilogue over a tensor of N x C x P elements, layout NCHW (nhwc 0:
 * channel of element i is (i / P) % C) or channels-last / row-major 2-D
 * (nhwc 1: channel is i % C; a (M, C) matrix is N = M, P = 1, nhwc 1):
 *   v = y[i] + bias[c] + res[i];  pre[i] = v (when pre);  y[i] = act(v).
 * y, res, pre have storage type dt; bias is f32; bias, res, pre may be NULL. */
void cu_epilogue(void *y, int dt, const float *bias, const void *res, int act, void *pre,
                 size_t N, size_t C, size_t P, int nhwc);

/* out[c] (+)= sum over n, p of x (storage dt), f32 result; acc: add to out.
 * Same geometry rules as cu_epilogue. (Bias gradients of conv / linear.) */
void cu_channel_sum(const void *x, int dt, float *out, int acc, size_t N, size_t C, size_t P,
                    int nhwc);

/* dst[i] (+)= src[i] for i < n, converting storage types (acc: add). */
void cu_cast(const void *src, int sdt, void *dst, int ddt, size_t n, int acc);

/* Convolution weights: the f32 parameter (K, C, R, S) to storage type ddt in
 * layout KCRS (nhwc 0) or KRSC (nhwc 1, what cuDNN wants with NHWC data). */
void cu_weight_to(const float *w, void *dst, int ddt, int nhwc, size_t K, size_t C, size_t R,
                  size_t S);
/* And a weight gradient back: dw (K, C, R, S) f32 (+)= src (storage sdt,
 * layout KCRS / KRSC). */
void cu_weight_grad_from(const void *src, int sdt, int nhwc, float *dw, int acc, size_t K,
                         size_t C, size_t R, size_t S);

/* ---- the products of a linear from their definition (gemm_check.cu) --------------------- */

/* What cu_gemm_verify found: elements checked, elements outside the
 * tolerance, the worst |dev - ref| / tolerance and that element's values. */
typedef struct gemm_verdict {
    long checked, bad;
    float worst, worst_dev, worst_ref;
    int refused; /* cuBLASLt refused the call: nothing was checked */
} gemm_verdict;

/* p[i] = uniform [-1, 1) from seed, i < n, storage type dt. */
void cu_fill_uniform(void *p, int dt, size_t n, uint64_t seed);
/* out (storage odt) = view product of P (pdt) and Q (qdt) + beta * out,
 * f32 accumulation: the kernel used when no cuBLASLt algorithm is right. */
void cu_gemm_fallback(const gemm_view *v, const void *P, int pdt, const void *Q, int qdt,
                      void *out, int odt, float beta);
/* What the epilogue of a checked call must have done (all optional). */
typedef struct gemm_epi_ref {
    const float *bias;  /* f32, added per output column c before the activation */
    int act;            /* ACT_NONE, ACT_RELU or ACT_GELU_TANH, after the bias */
    const void *aux;    /* the pre-activation the call stored: out's type and layout */
    const float *bgrad; /* the bias gradient the call stored: bgrad[r] = sum_t P(r, t), r < R */
} gemm_epi_ref;

/* Check out against the view product (+ beta * c0, c0 in out's layout and
 * type, when c0; then the epilogue e): |out - ref| <= rtol * sum|terms| +
 * 1e-6 on every element, or on 8192 hashed ones when there are more than
 * 65536 (+ 1e-3 |ref| after a tanh GELU: the library may use the hardware
 * tanh); e->aux and e->bgrad likewise (every bias-gradient element).
 * Synchronises cu.s (prepare only). The count of bad elements, -1 when out
 * of device memory. */
long cu_gemm_verify(const gemm_view *v, const void *P, int pdt, const void *Q, int qdt,
                    const void *out, int odt, const void *c0, float beta, const gemm_epi_ref *e,
                    float rtol, gemm_verdict *vd);

/* Tolerance of the checks above, relative to the sum of |terms| of each
 * output element (gemm.cu, conv.cu): by the output's storage type, and
 * TF32 for f32 products whose inputs the library may round to TF32. */
float cu_verify_rtol(int out_dt, int tf32);

/* A forward convolution from its definition: x (N, C, H, W) and y (N, K,
 * OH, OW) in layout NHWC (nhwc) or NCHW, w (K, C, R, S) stored KRSC (w_krsc)
 * or KCRS; one stride and one padding for both spatial dimensions. */
typedef struct conv_view {
    int64_t N, C, H, W, K, OH, OW, R, S, stride, pad;
    int nhwc, w_krsc;
} conv_view;

/* Check out (and out2 when not NULL: vd2) against the definition of v on
 * x (type xdt) and w (wdt), + bias[k] (type bdt, when bias) + res (y's
 * type ydt and layout, when res), then ReLU when act is ACT_RELU: every
 * element up to 65536, else 8192 hashed ones, |got - ref| <= rtol *
 * sum|terms| + 1e-6, as cu_gemm_verify. Synchronises cu.s (prepare only).
 * The bad elements of out, -1 when out of device memory. */
long cu_conv_verify(const conv_view *v, const void *x, int xdt, const void *w, int wdt,
                    const void *bias, int bdt, const void *res, int act, const void *out,
                    const void *out2, int ydt, float rtol, gemm_verdict *vd, gemm_verdict *vd2);

/* A convolution computed from its definition (gemm_check.cu), in every
 * direction, for MATRIX_ENGINE_CONV=kernel (no cuDNN: a reference path the
 * checks use, and the CPU simulator): v as above with w the f32 parameter
 * (K, C, R, S; w_krsc 0), accumulation in double.
 *   dir 0: y = conv(x, w)                    (y of type ydt, overwritten)
 *   dir 1: dx (+)= conv_transpose(dy, w)     (dx of type xdt; acc: add)
 *   dir 2: dw (+)= correlation of x and dy   (dw f32 (K, C, R, S); acc: add) */
void cu_conv_direct(int dir, const conv_view *v, const void *x, int xdt, const float *w, float *dw,
                    const void *y, int ydt, int acc);

/* Per-channel sums of y (N, K, P positions, NHWC (nhwc) or NCHW, storage
 * type dt) in double into the host array ref (3 K): ref[k] = sum y,
 * ref[K + k] = sum |y|, ref[2K + k] = sum y^2 (conv.cu checks a GEN_STATS
 * plan's f32 sums against them). Synchronises cu.s (prepare only). 0, or
 * -1 when out of device memory. */
int cu_chan_sums_ref(const void *y, int dt, size_t N, size_t K, size_t P, int nhwc, double *ref);

/* conv.cu: the per-channel f32 sum and sum of squares of the input of
 * BatchNorm op bn that its convolution's cuDNN graph (CONVOLUTION_FORWARD ->
 * GEN_STATS) writes in the same step (MATRIX_ENGINE_BNSTATS=conv): 1 with
 * *sum, *sqsum (K floats each), or 0 when op bn computes its own sums. */
int cu_conv_bn_stats(int bn, const float **sum, const float **sqsum);

/* ---- the op files ----------------------------------------------------------------------- */

/* comm_nccl.cu: OP_ALLREDUCE / OP_ALLREDUCE_WAIT on NCCL (data-parallel
 * ranks); prepare makes the communicator when the plan has them or a SyncBN
 * op (OP_BN with sync; without NCCL it refuses that plan). */
void cu_nccl_register(backend_op_fn *t);
int cu_nccl_prepare(graph *g, int nrun);
void cu_nccl_release(void);
const char *cu_nccl_info(void);
/* after each step (its end waited for): the time of its all-reduces against step_ms */
void cu_nccl_step_end(float step_ms);
/* SyncBN: recv[0 .. n) = the sum over the ranks of every rank's send[0 ..
 * n) (device doubles; send == recv: in place), enqueued on cu.s. */
void cu_nccl_sum_f64(const double *send, double *recv, size_t n);
/* The communicator's ranks; 0 when prepare made none. */
int cu_nccl_ranks(void);

/* Fill the table slots each file implements. */
void cu_conv_register(backend_op_fn *t);  /* conv.cu: OP_CONV, OP_CONV_BWD */
void cu_gemm_register(backend_op_fn *t);  /* gemm.cu: OP_LINEAR, OP_LINEAR_BWD */
void cu_ops_register(backend_op_fn *t);   /* ops.cu: the rest */

/* Prepare functions, called in this order by backend_cuda.cu's prepare with
 * every tensor in device memory and cu.priv zeroed: handles, descriptors,
 * algorithm choice (the timed search runs here), private buffers (cu_alloc),
 * cu.ws_need. 0 on success, -1 when cu_alloc failed, -3 when a setting is
 * refused (a bad MATRIX_ENGINE_* value: exit 2), -2 on another failure
 * (message on stderr). Only ops [0, nrun) run. */
int cu_conv_prepare(graph *g, int nrun);
int cu_gemm_prepare(graph *g, int nrun);
int cu_ops_prepare(graph *g, int nrun);
/* Release what prepare made (before the allocator goes away). */
void cu_conv_release(graph *g);
void cu_gemm_release(graph *g);
void cu_ops_release(graph *g);

/* sdpa.cu: attention in the flash form on cuDNN's fused SDPA. Prepare (run
 * before cu_ops_prepare) builds a plan per problem and takes the ops cuDNN
 * has an engine for; cu_sdpa_takes says whether it took op o;
 * cu_sdpa_run runs o when taken (1), else 0 (ops.cu's kernels run it). */
int cu_sdpa_prepare(graph *g, int nrun);
/* ops.cu: its flash-form attention kernels on raw pointers, (B T, C) rows
 * of type dt, lse (B, H, T) f32; the backward needs pbuf and ds scratch of
 * B H T T floats each; keep: NULL, or dropout keep flags (B, H, T, T) of
 * type dt, applied with 1 / (1 - p). sdpa.cu checks cuDNN's plans against
 * it. 0, or -1 when T and C / H are beyond the kernels' shared memory. */
int cu_attention_flash_ref(int fwd, const void *q, const void *k, const void *v, int dt,
                           void *y, float *lse, const void *dy, void *dq, void *dk, void *dv,
                           float *pbuf, float *ds, const void *keep, float p, size_t B, size_t H,
                           size_t T, size_t C);
/* ops.cu: n dropout keep flags (0 / 1, type dt) of probability p and
 * stream seed at the current step, as every dropout mask is drawn. */
void cu_attention_draw_keep(void *keep, int dt, size_t n, float p, uint64_t seed);
int cu_sdpa_takes(const graph *g, const op *o);
int cu_sdpa_run(graph *g, op *o);
void cu_sdpa_release(graph *g);
const char *cu_sdpa_info(void);

/* Lines "key=value\n" about the library choices made (algorithms, fusions),
 * appended to the result record; "" when none. */
const char *cu_conv_info(void);
const char *cu_gemm_info(void);

/* ---- the persistent plan cache (plans.cu, on engine/plancache.h) -------------------------- */

/* Open cu.plans for this GPU and these library versions (--plan-cache /
 * MATRIX_PLAN_CACHE / the XDG cache directory; NULL when off), before the
 * prepare functions; they look each choice up (a hit is checked against the
 * descriptor before use) and put what they searched. */
void cu_plans_open(void);
/* Save what was put (lock, merge, atomic rename), say the counts on stderr,
 * and close; the counts stay for cu_plans_info. */
void cu_plans_close(void);
/* plan_cache lines for the result record (plancache_info). */
const char *cu_plans_info(void);
/* Bytes as lower-case hex into out (2 n + 1 bytes); and back: 0, or -1 when
 * s is not exactly 2 n hex digits. (cuBLASLt algorithms are opaque bytes
 * that its documentation says may be stored and restored.) */
void cu_hex_put(const void *p, size_t n, char *out);
int cu_hex_get(const char *s, void *p, size_t n);
/* FNV-1a 64 of n bytes: a digest of a whole choice key struct in the plan
 * key, so that a field added to the struct changes the key. */
uint64_t cu_digest(const void *p, size_t n);

#endif
