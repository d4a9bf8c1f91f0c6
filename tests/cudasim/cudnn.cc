/* cudnn.cc - the part of cuDNN's legacy convolution API that
 * engine/cuda/conv.cu calls, simulated on the CPU with its documented
 * meaning, so that the convolutions' default path (descriptors in NCHW and
 * NHWC, the heuristics' candidates, the workspace queries, the timed search
 * of cudnn_benchmark, the fused bias + activation call, the plan cache) runs
 * without a GPU:
 *
 *   forward        y  = alpha conv(x, w) + beta y
 *   bias + act     y  = act(alpha1 conv(x, w) + alpha2 z + bias), act RELU
 *                       or IDENTITY (IDENTITY only with IMPLICIT_PRECOMP_GEMM,
 *                       as cuDNN documents)
 *   backward data  dx = alpha conv^T(dy, w) + beta dx
 *   backward filt. dw = alpha sum_n,p dy x + beta dw
 *
 * cross-correlation, dilation 1, x, w, y of one type (f32, f16, bf16),
 * f32 accumulation (TF32-rounded inputs for f32 data under
 * CUDNN_DEFAULT_MATH, as on sm_80+), filter KCRS with NCHW and KRSC with
 * NHWC. beta 0 reads no output. Three algorithms per direction (1, 0, 2 in
 * the heuristics' order: workspace 4 KiB, none, 1 MiB), differing in the
 * order of the sums as real ones do; each reports the descriptor's math type.
 *
 * A bad call is loud: descriptors that do not make the convolution, an
 * unsupported mode, type or layout is refused (BAD_PARAM / NOT_SUPPORTED, a
 * line on stderr); an operand reaching past its cudaMalloc allocation or a
 * workspace smaller than the algorithm's aborts naming the call.
 *
 * Time: CUDASIM_DNN_DELAY="1=0.5,0=0.1" makes each call of those
 * algorithms (any direction) take that many milliseconds of device time,
 * whatever the CPU took to compute it, so that the engine's timed search
 * meets algorithms of known speed.
 *
 * The graph (backend) API is cudnngraph.cc's; it reads a handle's stream
 * with dnnsim::stream_of. */
#include "cudasim.h"

#include <cudnn.h>

#include "simlib.h"

#include <stdio.h>
#include <stdlib.h>

#include <vector>

namespace {

const uint64_t MAGIC = 0x63756461736e6e31ull; /* "cudasnn1" */
const int NALGO = 3;
const int ALGO_ORDER[NALGO] = {1, 0, 2};

size_t algo_ws(int algo) { return algo == 1 ? 4096 : algo == 2 ? (size_t)1 << 20 : 0; }

struct sim_tensor {
    uint64_t magic;
    cudnnTensorFormat_t fmt;
    cudnnDataType_t dt;
    int n, c, h, w;
};

struct sim_filter {
    uint64_t magic;
    cudnnDataType_t dt;
    cudnnTensorFormat_t fmt;
    int k, c, r, s;
};

struct sim_conv {
    uint64_t magic;
    int pad_h, pad_w, u, v, dh, dw;
    cudnnConvolutionMode_t mode;
    cudnnDataType_t compute;
    cudnnMathType_t math;
};

struct sim_act {
    uint64_t magic;
    cudnnActivationMode_t mode;
};

struct sim_handle {
    uint64_t magic;
    cudaStream_t s;
};

size_t dt_size(cudnnDataType_t t) { return t == CUDNN_DATA_FLOAT ? 4 : 2; }

int kind(cudnnDataType_t t)
{
    return t == CUDNN_DATA_FLOAT ? simlib::F32 : t == CUDNN_DATA_HALF ? simlib::F16 : simlib::BF16;
}
float load(const void *p, cudnnDataType_t t, size_t i) { return simlib::load(p, kind(t), i); }
void store(void *p, cudnnDataType_t t, size_t i, float v) { simlib::store(p, kind(t), i, v); }
using simlib::tf32;

cudnnStatus_t refuse(cudnnStatus_t st, const char *call, const char *why)
{
    fprintf(stderr, "cudasim: %s: %s\n", call, why);
    return st;
}

size_t tidx(const sim_tensor *t, int n, int c, int h, int w)
{
    return t->fmt == CUDNN_TENSOR_NHWC ? (((size_t)n * t->h + h) * t->w + w) * t->c + c
                                       : (((size_t)n * t->c + c) * t->h + h) * t->w + w;
}

size_t fidx(const sim_filter *f, int k, int c, int r, int s)
{
    return f->fmt == CUDNN_TENSOR_NHWC ? (((size_t)k * f->r + r) * f->s + s) * f->c + c
                                       : (((size_t)k * f->c + c) * f->r + r) * f->s + s;
}

size_t tbytes(const sim_tensor *t) { return (size_t)t->n * t->c * t->h * t->w * dt_size(t->dt); }
size_t fbytes(const sim_filter *f) { return (size_t)f->k * f->c * f->r * f->s * dt_size(f->dt); }

/* The convolution x (*) w -> y the descriptors make, or a refusal. */
cudnnStatus_t check_conv(const sim_tensor *x, const sim_filter *w, const sim_conv *cd, const sim_tensor *y,
                         const char *call)
{
    char why[256];
    if (!x || x->magic != MAGIC || !w || w->magic != MAGIC || !cd || cd->magic != MAGIC || !y ||
        y->magic != MAGIC)
        return refuse(CUDNN_STATUS_BAD_PARAM, call, "a descriptor that no Create / Set made");
    if (cd->mode != CUDNN_CROSS_CORRELATION || cd->dh != 1 || cd->dw != 1 || cd->compute != CUDNN_DATA_FLOAT)
        return refuse(CUDNN_STATUS_NOT_SUPPORTED, call,
                      "only cross-correlation, dilation 1, compute type FLOAT are simulated");
    if (x->dt != w->dt || x->dt != y->dt)
        return refuse(CUDNN_STATUS_NOT_SUPPORTED, call, "x, w and y of different types");
    if (x->fmt != y->fmt || x->fmt != w->fmt)
        return refuse(CUDNN_STATUS_NOT_SUPPORTED, call, "x, w and y in different layouts (not simulated)");
    int oh = (x->h + 2 * cd->pad_h - w->r) / cd->u + 1, ow = (x->w + 2 * cd->pad_w - w->s) / cd->v + 1;
    if (x->c != w->c || y->n != x->n || y->c != w->k || y->h != oh || y->w != ow) {
        snprintf(why, sizeof why,
                 "x %dx%dx%dx%d, w %dx%dx%dx%d, pad %d/%d stride %d/%d give y %dx%dx%dx%d, not %dx%dx%dx%d",
                 x->n, x->c, x->h, x->w, w->k, w->c, w->r, w->s, cd->pad_h, cd->pad_w, cd->u, cd->v, x->n,
                 w->k, oh, ow, y->n, y->c, y->h, y->w);
        return refuse(CUDNN_STATUS_BAD_PARAM, call, why);
    }
    return CUDNN_STATUS_SUCCESS;
}

void operand(const char *call, const char *what, const void *p, size_t n) { simlib::operand(call, what, p, n, 1); }

int algo_known(int algo) { return algo >= 0 && algo < NALGO; }

void workspace(const char *call, int algo, const void *ws, size_t bytes)
{
    if (bytes < algo_ws(algo)) {
        fprintf(stderr, "cudasim: %s: algorithm %d needs %zu bytes of workspace, given %zu\n", call, algo,
                algo_ws(algo), bytes);
        abort();
    }
    if (algo_ws(algo))
        operand(call, "the workspace", ws, algo_ws(algo));
}

double delay_ms(int algo) { return simlib::delay_ms("CUDASIM_DNN_DELAY", algo); }

/* Canonical f32 copies: x (n, c, h, w), w (k, c, r, s), TF32-rounded when
 * the math type makes f32 data TF32. */
std::vector<float> canon_x(const sim_tensor *t, const void *p, int t32)
{
    std::vector<float> v((size_t)t->n * t->c * t->h * t->w);
    size_t i = 0;
    for (int n = 0; n < t->n; n++)
        for (int c = 0; c < t->c; c++)
            for (int h = 0; h < t->h; h++)
                for (int w = 0; w < t->w; w++) {
                    float f = load(p, t->dt, tidx(t, n, c, h, w));
                    v[i++] = t32 ? tf32(f) : f;
                }
    return v;
}

std::vector<float> canon_w(const sim_filter *f, const void *p, int t32)
{
    std::vector<float> v((size_t)f->k * f->c * f->r * f->s);
    size_t i = 0;
    for (int k = 0; k < f->k; k++)
        for (int c = 0; c < f->c; c++)
            for (int r = 0; r < f->r; r++)
                for (int s = 0; s < f->s; s++) {
                    float x = load(p, f->dt, fidx(f, k, c, r, s));
                    v[i++] = t32 ? tf32(x) : x;
                }
    return v;
}

int is_t32(const sim_conv *cd, cudnnDataType_t dt)
{
    return dt == CUDNN_DATA_FLOAT && cd->math != CUDNN_FMA_MATH;
}

simlib::conv_dims dims_of(const sim_tensor &x, const sim_filter &w, const sim_conv &cd, const sim_tensor &y)
{
    return simlib::conv_dims{x.n, x.c, x.h, x.w, w.k, w.r, w.s, y.h, y.w, cd.u, cd.v, cd.pad_h, cd.pad_w};
}

/* The forward sums (n, k, oh, ow) in canonical order, by algorithm: 0 c
 * outer then r, s; 1 r, s outer then c; 2 as 0 in blocks of 8 channels. */
std::vector<float> fwd_sums(const sim_tensor &x, const sim_filter &w, const sim_conv &cd, const sim_tensor &y,
                            const std::vector<float> &X, const std::vector<float> &W, int algo)
{
    std::vector<float> out((size_t)y.n * y.c * y.h * y.w);
    simlib::conv_fwd(dims_of(x, w, cd, y), X.data(), W.data(),
                     algo == 1 ? simlib::CONV_RS_OUTER : algo == 2 ? simlib::CONV_C_BLOCK8 : simlib::CONV_C_OUTER,
                     out.data());
    return out;
}

sim_tensor *T_(cudnnTensorDescriptor_t d) { return reinterpret_cast<sim_tensor *>(d); }
sim_filter *F_(cudnnFilterDescriptor_t d) { return reinterpret_cast<sim_filter *>(d); }
sim_conv *C_(cudnnConvolutionDescriptor_t d) { return reinterpret_cast<sim_conv *>(d); }

cudaStream_t stream_of(cudnnHandle_t h)
{
    sim_handle *s = reinterpret_cast<sim_handle *>(h);
    return s && s->magic == MAGIC ? s->s : 0;
}

template <class Perf> void perf_list(const sim_conv *cd, int want, int *got, Perf *r)
{
    *got = 0;
    for (int i = 0; i < NALGO && *got < want; i++) {
        Perf *p = &r[(*got)++];
        memset(p, 0, sizeof *p);
        p->algo = (decltype(p->algo))ALGO_ORDER[i];
        p->status = CUDNN_STATUS_SUCCESS;
        p->time = -1.0f; /* the heuristics time nothing */
        p->memory = algo_ws(ALGO_ORDER[i]);
        p->determinism = CUDNN_DETERMINISTIC;
        p->mathType = cd->math;
    }
}

/* the Get*Algorithm_v7 calls: the heuristics' list for the convolution */
template <class Perf>
cudnnStatus_t perf_query(const sim_tensor *x, const sim_filter *w, const sim_conv *cd, const sim_tensor *y,
                         const char *call, int want, int *got, Perf *r)
{
    cudnnStatus_t st = check_conv(x, w, cd, y, call);
    if (st == CUDNN_STATUS_SUCCESS)
        perf_list(cd, want, got, r);
    return st;
}

/* the Get*WorkspaceSize calls */
cudnnStatus_t ws_query(const sim_tensor *x, const sim_filter *w, const sim_conv *cd, const sim_tensor *y,
                       const char *call, int algo, size_t *bytes)
{
    cudnnStatus_t st = check_conv(x, w, cd, y, call);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    if (!algo_known(algo))
        return CUDNN_STATUS_NOT_SUPPORTED;
    *bytes = algo_ws(algo);
    return CUDNN_STATUS_SUCCESS;
}

/* what a convolution call checks first: the convolution, its algorithm,
 * the workspace (aborts when short) */
cudnnStatus_t call_check(const sim_tensor *x, const sim_filter *w, const sim_conv *cd, const sim_tensor *y,
                         const char *call, int algo, const void *ws, size_t wsb)
{
    cudnnStatus_t st = check_conv(x, w, cd, y, call);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    if (!algo_known(algo))
        return refuse(CUDNN_STATUS_NOT_SUPPORTED, call, "an algorithm the heuristics never offered");
    workspace(call, algo, ws, wsb);
    return CUDNN_STATUS_SUCCESS;
}

/* a call's work starts: its workspace is scratch; the device clock then */
double call_begin(void *ws, int algo)
{
    if (algo_ws(algo))
        memset(ws, 0xff, algo_ws(algo));
    return cudasim::now_ms();
}

/* and ends: with CUDASIM_DNN_DELAY it took that long, whatever the CPU took */
void call_end(double extra, double t0)
{
    if (extra > 0.0)
        cudasim::advance_clock(extra - (cudasim::now_ms() - t0));
}

} // namespace

namespace dnnsim {
cudaStream_t stream_of(cudnnHandle_t h) { return ::stream_of(h); }
} // namespace dnnsim

extern "C" {

cudnnStatus_t cudnnCreate(cudnnHandle_t *h)
{
    sim_handle *s = new sim_handle{MAGIC, 0};
    *h = reinterpret_cast<cudnnHandle_t>(s);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t h)
{
    delete reinterpret_cast<sim_handle *>(h);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s)
{
    reinterpret_cast<sim_handle *>(h)->s = s;
    return CUDNN_STATUS_SUCCESS;
}

size_t cudnnGetVersion(void) { return CUDNN_VERSION; }

const char *cudnnGetErrorString(cudnnStatus_t s)
{
    switch (s) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM (cudasim)";
    case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED (cudasim)";
    case CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED: return "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED (cudasim)";
    case CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH: return "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH (cudasim)";
    default: return "a cuDNN error (cudasim)";
    }
}

#define CREATE(fn, T, D)                                 \
    cudnnStatus_t fn(D *d)                               \
    {                                                    \
        T *s = (T *)calloc(1, sizeof(T));                \
        if (!s)                                          \
            return CUDNN_STATUS_ALLOC_FAILED;            \
        *d = reinterpret_cast<D>(s);                     \
        return CUDNN_STATUS_SUCCESS;                     \
    }
#define DESTROY(fn, D)                                   \
    cudnnStatus_t fn(D d)                                \
    {                                                    \
        free(d);                                         \
        return CUDNN_STATUS_SUCCESS;                     \
    }
CREATE(cudnnCreateTensorDescriptor, sim_tensor, cudnnTensorDescriptor_t)
CREATE(cudnnCreateFilterDescriptor, sim_filter, cudnnFilterDescriptor_t)
CREATE(cudnnCreateConvolutionDescriptor, sim_conv, cudnnConvolutionDescriptor_t)
CREATE(cudnnCreateActivationDescriptor, sim_act, cudnnActivationDescriptor_t)
DESTROY(cudnnDestroyTensorDescriptor, cudnnTensorDescriptor_t)
DESTROY(cudnnDestroyFilterDescriptor, cudnnFilterDescriptor_t)
DESTROY(cudnnDestroyConvolutionDescriptor, cudnnConvolutionDescriptor_t)
DESTROY(cudnnDestroyActivationDescriptor, cudnnActivationDescriptor_t)

cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, cudnnTensorFormat_t f, cudnnDataType_t t, int n,
                                         int c, int h, int w)
{
    const char *call = "cudnnSetTensor4dDescriptor";
    if (n < 1 || c < 1 || h < 1 || w < 1)
        return refuse(CUDNN_STATUS_BAD_PARAM, call, "a dimension under 1");
    if ((f != CUDNN_TENSOR_NCHW && f != CUDNN_TENSOR_NHWC) ||
        (t != CUDNN_DATA_FLOAT && t != CUDNN_DATA_HALF && t != CUDNN_DATA_BFLOAT16))
        return refuse(CUDNN_STATUS_NOT_SUPPORTED, call, "a format or type not simulated");
    *T_(d) = sim_tensor{MAGIC, f, t, n, c, h, w};
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t t, cudnnTensorFormat_t f, int k,
                                         int c, int h, int w)
{
    const char *call = "cudnnSetFilter4dDescriptor";
    if (k < 1 || c < 1 || h < 1 || w < 1)
        return refuse(CUDNN_STATUS_BAD_PARAM, call, "a dimension under 1");
    if ((f != CUDNN_TENSOR_NCHW && f != CUDNN_TENSOR_NHWC) ||
        (t != CUDNN_DATA_FLOAT && t != CUDNN_DATA_HALF && t != CUDNN_DATA_BFLOAT16))
        return refuse(CUDNN_STATUS_NOT_SUPPORTED, call, "a format or type not simulated");
    *F_(d) = sim_filter{MAGIC, t, f, k, c, h, w};
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int ph, int pw, int u, int v, int dh,
                                              int dw, cudnnConvolutionMode_t mode, cudnnDataType_t compute)
{
    if (ph < 0 || pw < 0 || u < 1 || v < 1 || dh < 1 || dw < 1)
        return refuse(CUDNN_STATUS_BAD_PARAM, "cudnnSetConvolution2dDescriptor", "a negative pad or a stride under 1");
    *C_(d) = sim_conv{MAGIC, ph, pw, u, v, dh, dw, mode, compute, CUDNN_DEFAULT_MATH};
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t m)
{
    if (m != CUDNN_DEFAULT_MATH && m != CUDNN_TENSOR_OP_MATH && m != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION &&
        m != CUDNN_FMA_MATH)
        return refuse(CUDNN_STATUS_BAD_PARAM, "cudnnSetConvolutionMathType", "an unknown math type");
    C_(d)->math = m;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t d, cudnnActivationMode_t mode,
                                           cudnnNanPropagation_t, double)
{
    if (mode != CUDNN_ACTIVATION_RELU && mode != CUDNN_ACTIVATION_IDENTITY)
        return refuse(CUDNN_STATUS_NOT_SUPPORTED, "cudnnSetActivationDescriptor", "only RELU and IDENTITY are simulated");
    *reinterpret_cast<sim_act *>(d) = sim_act{MAGIC, mode};
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t cd,
                                                    const cudnnTensorDescriptor_t xd, const cudnnFilterDescriptor_t wd,
                                                    int *n, int *c, int *h, int *w)
{
    const sim_conv *k = C_(cd);
    const sim_tensor *x = T_(xd);
    const sim_filter *f = F_(wd);
    if (k->magic != MAGIC || x->magic != MAGIC || f->magic != MAGIC || x->c != f->c)
        return refuse(CUDNN_STATUS_BAD_PARAM, "cudnnGetConvolution2dForwardOutputDim", "descriptors that do not fit");
    *n = x->n;
    *c = f->k;
    *h = (x->h + 2 * k->pad_h - f->r) / k->u + 1;
    *w = (x->w + 2 * k->pad_w - f->s) / k->v + 1;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionForwardAlgorithmMaxCount(cudnnHandle_t, int *n)
{
    *n = NALGO;
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithmMaxCount(cudnnHandle_t, int *n)
{
    *n = NALGO;
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(cudnnHandle_t, int *n)
{
    *n = NALGO;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t, const cudnnTensorDescriptor_t xd,
                                                     const cudnnFilterDescriptor_t wd,
                                                     const cudnnConvolutionDescriptor_t cd,
                                                     const cudnnTensorDescriptor_t yd, const int want, int *got,
                                                     cudnnConvolutionFwdAlgoPerf_t *r)
{
    return perf_query(T_(xd), F_(wd), C_(cd), T_(yd), "cudnnGetConvolutionForwardAlgorithm_v7", want, got, r);
}

cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(cudnnHandle_t, const cudnnFilterDescriptor_t wd,
                                                          const cudnnTensorDescriptor_t dyd,
                                                          const cudnnConvolutionDescriptor_t cd,
                                                          const cudnnTensorDescriptor_t dxd, const int want,
                                                          int *got, cudnnConvolutionBwdDataAlgoPerf_t *r)
{
    return perf_query(T_(dxd), F_(wd), C_(cd), T_(dyd), "cudnnGetConvolutionBackwardDataAlgorithm_v7", want, got, r);
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(cudnnHandle_t, const cudnnTensorDescriptor_t xd,
                                                            const cudnnTensorDescriptor_t dyd,
                                                            const cudnnConvolutionDescriptor_t cd,
                                                            const cudnnFilterDescriptor_t dwd, const int want,
                                                            int *got, cudnnConvolutionBwdFilterAlgoPerf_t *r)
{
    return perf_query(T_(xd), F_(dwd), C_(cd), T_(dyd), "cudnnGetConvolutionBackwardFilterAlgorithm_v7", want, got, r);
}

cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t, const cudnnTensorDescriptor_t xd,
                                                      const cudnnFilterDescriptor_t wd,
                                                      const cudnnConvolutionDescriptor_t cd,
                                                      const cudnnTensorDescriptor_t yd, cudnnConvolutionFwdAlgo_t algo,
                                                      size_t *bytes)
{
    return ws_query(T_(xd), F_(wd), C_(cd), T_(yd), "cudnnGetConvolutionForwardWorkspaceSize", (int)algo, bytes);
}

cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(cudnnHandle_t, const cudnnFilterDescriptor_t wd,
                                                           const cudnnTensorDescriptor_t dyd,
                                                           const cudnnConvolutionDescriptor_t cd,
                                                           const cudnnTensorDescriptor_t dxd,
                                                           cudnnConvolutionBwdDataAlgo_t algo, size_t *bytes)
{
    return ws_query(T_(dxd), F_(wd), C_(cd), T_(dyd), "cudnnGetConvolutionBackwardDataWorkspaceSize", (int)algo, bytes);
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(cudnnHandle_t, const cudnnTensorDescriptor_t xd,
                                                             const cudnnTensorDescriptor_t dyd,
                                                             const cudnnConvolutionDescriptor_t cd,
                                                             const cudnnFilterDescriptor_t dwd,
                                                             cudnnConvolutionBwdFilterAlgo_t algo, size_t *bytes)
{
    return ws_query(T_(xd), F_(dwd), C_(cd), T_(dyd), "cudnnGetConvolutionBackwardFilterWorkspaceSize", (int)algo, bytes);
}

/* the forward, fused or not: y = act(alpha1 conv + alpha2 z + bias) or
 * alpha conv + beta y */
static cudnnStatus_t forward(cudnnHandle_t h, const char *call, const void *alpha, cudnnTensorDescriptor_t xd,
                             const void *x, cudnnFilterDescriptor_t wd, const void *w,
                             cudnnConvolutionDescriptor_t cdd, int algo, void *ws, size_t wsb, const void *beta,
                             cudnnTensorDescriptor_t zd, const void *z, cudnnTensorDescriptor_t bd, const void *bias,
                             const sim_act *act, cudnnTensorDescriptor_t yd, void *y)
{
    cudnnStatus_t st = call_check(T_(xd), F_(wd), C_(cdd), T_(yd), call, algo, ws, wsb);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    const sim_tensor X = *T_(xd), Y = *T_(yd);
    const sim_filter W = *F_(wd);
    const sim_conv C = *C_(cdd);
    sim_tensor B{}, Z{};
    if (act) {
        if (act->magic != MAGIC)
            return refuse(CUDNN_STATUS_BAD_PARAM, call, "an activation descriptor never set");
        if (act->mode == CUDNN_ACTIVATION_IDENTITY && algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
            return CUDNN_STATUS_NOT_SUPPORTED; /* as documented */
        B = *T_(bd);
        Z = *T_(zd);
        if (B.magic != MAGIC || B.n != 1 || B.c != Y.c || B.h != 1 || B.w != 1 ||
            (B.dt != Y.dt && B.dt != CUDNN_DATA_FLOAT))
            return refuse(CUDNN_STATUS_BAD_PARAM, call, "the bias is not 1 x K x 1 x 1 of y's type or FLOAT");
        if (Z.magic != MAGIC || Z.n != Y.n || Z.c != Y.c || Z.h != Y.h || Z.w != Y.w || Z.dt != Y.dt ||
            Z.fmt != Y.fmt)
            return refuse(CUDNN_STATUS_BAD_PARAM, call, "z's descriptor differs from y's");
        operand(call, "the bias", bias, tbytes(&B));
        operand(call, "z", z, tbytes(&Z));
    }
    operand(call, "x", x, tbytes(&X));
    operand(call, "w", w, fbytes(&W));
    operand(call, "y", y, tbytes(&Y));
    const float a1 = *(const float *)alpha, b2 = *(const float *)beta; /* beta, or alpha2 when fused */
    const double extra = delay_ms(algo);
    const int fused = act != nullptr, relu = act && act->mode == CUDNN_ACTIVATION_RELU;
    cudasim::enqueue(stream_of(h), [=] {
        const double t0 = call_begin(ws, algo);
        int t32 = is_t32(&C, X.dt);
        std::vector<float> xs = canon_x(&X, x, t32), wv = canon_w(&W, w, t32);
        std::vector<float> acc = fwd_sums(X, W, C, Y, xs, wv, algo);
        size_t i = 0;
        for (int n = 0; n < Y.n; n++)
            for (int k = 0; k < Y.c; k++)
                for (int oh = 0; oh < Y.h; oh++)
                    for (int ow = 0; ow < Y.w; ow++) {
                        size_t o = tidx(&Y, n, k, oh, ow);
                        float v = a1 * acc[i++];
                        if (fused) {
                            if (b2 != 0.0f)
                                v += b2 * load(z, Z.dt, tidx(&Z, n, k, oh, ow));
                            v += load(bias, B.dt, (size_t)k);
                            if (relu)
                                v = v > 0.0f ? v : 0.0f;
                        } else if (b2 != 0.0f)
                            v += b2 * load(y, Y.dt, o);
                        store(y, Y.dt, o, v);
                    }
        call_end(extra, t0);
    });
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t xd,
                                      const void *x, const cudnnFilterDescriptor_t wd, const void *w,
                                      const cudnnConvolutionDescriptor_t cd, cudnnConvolutionFwdAlgo_t algo, void *ws,
                                      size_t wsb, const void *beta, const cudnnTensorDescriptor_t yd, void *y)
{
    return forward(h, "cudnnConvolutionForward", alpha, xd, x, wd, w, cd, (int)algo, ws, wsb, beta, nullptr,
                   nullptr, nullptr, nullptr, nullptr, yd, y);
}

cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t h, const void *alpha1, const cudnnTensorDescriptor_t xd, const void *x,
    const cudnnFilterDescriptor_t wd, const void *w, const cudnnConvolutionDescriptor_t cd,
    cudnnConvolutionFwdAlgo_t algo, void *ws, size_t wsb, const void *alpha2, const cudnnTensorDescriptor_t zd,
    const void *z, const cudnnTensorDescriptor_t bd, const void *bias, const cudnnActivationDescriptor_t ad,
    const cudnnTensorDescriptor_t yd, void *y)
{
    return forward(h, "cudnnConvolutionBiasActivationForward", alpha1, xd, x, wd, w, cd, (int)algo, ws, wsb, alpha2,
                   zd, z, bd, bias, reinterpret_cast<const sim_act *>(ad), yd, y);
}

cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t h, const void *alpha, const cudnnFilterDescriptor_t wd,
                                           const void *w, const cudnnTensorDescriptor_t dyd, const void *dy,
                                           const cudnnConvolutionDescriptor_t cd, cudnnConvolutionBwdDataAlgo_t al,
                                           void *ws, size_t wsb, const void *beta,
                                           const cudnnTensorDescriptor_t dxd, void *dx)
{
    const char *call = "cudnnConvolutionBackwardData";
    const int algo = (int)al;
    cudnnStatus_t st = call_check(T_(dxd), F_(wd), C_(cd), T_(dyd), call, algo, ws, wsb);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    const sim_tensor X = *T_(dxd), Y = *T_(dyd);
    const sim_filter W = *F_(wd);
    const sim_conv C = *C_(cd);
    operand(call, "w", w, fbytes(&W));
    operand(call, "dy", dy, tbytes(&Y));
    operand(call, "dx", dx, tbytes(&X));
    const float a = *(const float *)alpha, b = *(const float *)beta;
    const double extra = delay_ms(algo);
    cudasim::enqueue(stream_of(h), [=] {
        const double t0 = call_begin(ws, algo);
        int t32 = is_t32(&C, X.dt);
        std::vector<float> dys = canon_x(&Y, dy, t32), wv = canon_w(&W, w, t32);
        /* per element: k (descending for algorithm 1), then r, s */
        std::vector<float> sums((size_t)X.n * X.c * X.h * X.w);
        simlib::conv_dgrad(dims_of(X, W, C, Y), dys.data(), wv.data(), algo == 1, sums.data());
        size_t i = 0;
        for (int n = 0; n < X.n; n++)
            for (int c = 0; c < X.c; c++)
                for (int ih = 0; ih < X.h; ih++)
                    for (int iw = 0; iw < X.w; iw++) {
                        size_t o = tidx(&X, n, c, ih, iw);
                        float v = a * sums[i++];
                        if (b != 0.0f)
                            v += b * load(dx, X.dt, o);
                        store(dx, X.dt, o, v);
                    }
        call_end(extra, t0);
    });
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t xd,
                                             const void *x, const cudnnTensorDescriptor_t dyd, const void *dy,
                                             const cudnnConvolutionDescriptor_t cd,
                                             cudnnConvolutionBwdFilterAlgo_t al, void *ws, size_t wsb,
                                             const void *beta, const cudnnFilterDescriptor_t dwd, void *dw)
{
    const char *call = "cudnnConvolutionBackwardFilter";
    const int algo = (int)al;
    cudnnStatus_t st = call_check(T_(xd), F_(dwd), C_(cd), T_(dyd), call, algo, ws, wsb);
    if (st != CUDNN_STATUS_SUCCESS)
        return st;
    const sim_tensor X = *T_(xd), Y = *T_(dyd);
    const sim_filter W = *F_(dwd);
    const sim_conv C = *C_(cd);
    operand(call, "x", x, tbytes(&X));
    operand(call, "dy", dy, tbytes(&Y));
    operand(call, "dw", dw, fbytes(&W));
    const float a = *(const float *)alpha, b = *(const float *)beta;
    const double extra = delay_ms(algo);
    cudasim::enqueue(stream_of(h), [=] {
        const double t0 = call_begin(ws, algo);
        int t32 = is_t32(&C, X.dt);
        std::vector<float> xs = canon_x(&X, x, t32), dys = canon_x(&Y, dy, t32);
        /* per element: a part per image (descending for algorithm 1) over oh, ow; the parts added */
        std::vector<float> sums((size_t)W.k * W.c * W.r * W.s);
        simlib::conv_wgrad(dims_of(X, W, C, Y), xs.data(), dys.data(), algo == 1, sums.data());
        size_t i = 0;
        for (int k = 0; k < W.k; k++)
            for (int c = 0; c < W.c; c++)
                for (int r = 0; r < W.r; r++)
                    for (int s = 0; s < W.s; s++) {
                        size_t o = fidx(&W, k, c, r, s);
                        float v = a * sums[i++];
                        if (b != 0.0f)
                            v += b * load(dw, W.dt, o);
                        store(dw, W.dt, o, v);
                    }
        call_end(extra, t0);
    });
    return CUDNN_STATUS_SUCCESS;
}

} // extern "C"
