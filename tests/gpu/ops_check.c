/* ops_check.c - every op of the models on the CUDA backend
 * against the CPU backend (the numerical reference), on random inputs, in the
 * manner of llm.c's dev/cuda kernel checks.
 *
 *   tests/gpu/ops_check [-q] [--precision P] [--layout nchw|nhwc] [--op TEXT]
 *                       [--seed N] [--module PATH] [--timeout SECONDS] [--self-test] [--no-full-size]
 *
 * For each configuration (precision x layout, plus two with the timed
 * algorithm search: --cudnn-benchmark on and --compile max-autotune, and
 * those of the knobs: attention and linear on the engine's own kernels,
 * convolutions on either cuDNN API, BatchNorm sums from GEN_STATS) a child
 * process loads engine/matrix-engine-cuda.so with dlopen (MATRIX_ENGINE_CUDA
 * overrides the path), builds one graph holding every case (tiny tensors, the
 * shapes of mnist_cnn and the ResNets in small; sizes of 1, odd and prime;
 * and the models' full-size shapes: every convolution of ResNet-18/50 at
 * 224 x 224, BERT-base/large's linears, layer norm, embedding, gather and
 * loss at T = 128, BERT-large's attention at 128 and 512, batch 2,
 * "full-size:" in their labels, left out with --no-full-size; --op and a
 * configuration's own filter both apply), uploads random inputs, calls the
 * module's prepare(g, nops) once, then runs the ops one at a time on both
 * backends and compares every output:
 *
 *   - outputs whose acc bit is clear are filled with NaN bytes (0xff) on both
 *     sides before the op, so that an element the op fails to write fails;
 *   - with fp16 / bf16 the activations and their gradients are stored as
 *     DT_F16 / DT_BF16 on the device: random f32 inputs are rounded to that
 *     type on the host before both backends see them (weights that feed a
 *     convolution or linear too, though they stay f32), and device outputs
 *     are converted back to f32 for the comparison;
 *   - after an op, the CPU's outputs (rounded to the storage type) are
 *     uploaded over the device's, so that the next op of a case (the
 *     backward after its forward) starts from the same values on both sides.
 *
 * An element passes when |dev - ref| <= atol * M + rtol * |ref|, M being the
 * magnitude of that output (see the table). Integer outputs (max-pool argmax)
 * must be equal (a tie, where both positions hold the maximum, passes);
 * dropout masks must be bit-identical to the CPU's.
 *
 *   precision  ops                        atol     rtol    why
 *   fp32       all                        1e-5     1e-4    f32 arithmetic in another order (no TF32)
 *   tf32       conv, linear (+ backward)  4e-3     1e-3    inputs rounded to TF32's 10-bit mantissa
 *   tf32       the others                 1e-5     1e-4    as fp32
 *   fp16       all                        2e-3     2e-3    f16 storage: 2^-11 a rounding, two in a
 *                                                          fused epilogue; f32 accumulation
 *   bf16       all                        1.6e-2   8e-3    bf16 storage: 2^-8 a rounding
 *   fp32/tf32  linear + tanh GELU         as above 1e-3    cuBLASLt's GELU epilogue may use
 *                                                          the hardware tanh (2^-11 relative)
 *
 *   M = for conv, linear and their backward: the largest sum of |terms| of the
 *       reduction (the CPU op run again on |inputs|); for the others: the
 *       largest |ref| of the output.
 *
 * Each op must also leave its inputs as they were on the device (SGD's
 * gradient excepted: fp16 training unscales it in place).
 *
 * SyncBN (built with NCCL, and in --self-test): engine_comm is a communicator
 * of one rank (this process), so the module makes a 1-rank NCCL communicator
 * and the CPU's SyncBN path runs too; the cases marked "syncbn" (a train BN
 * forward with sync set, a backward of one) run on the device first without
 * sync, then with it: besides the CPU comparison, the synchronised outputs
 * must equal the unsynchronised ones bit for bit (a sum over one rank changes
 * nothing).
 *
 * BatchNorm statistics from the convolution: the conv -> BN training cases
 * ("genstats" in their labels) run in every configuration, and in five of
 * their own with MATRIX_ENGINE_BNSTATS=conv (fp16 / bf16 / fp32 NHWC, fp16
 * with the search: the BN's sums then come from cuDNN's GEN_STATS where a
 * plan verifies) and =separate; after prepare the module's result lines
 * must show the mode and, with conv, every case paired (taken or fallen
 * back: "PASS|FAIL genstats CONFIG: ..."). With --op, the conv whose y a
 * named BN (or the forward of a named BN backward) reads runs too.
 *
 * One line per op: "PASS|FAIL op layout precision max_err ... case". Exit 0
 * when every op passes, 1 when one fails (or a child crashed), 77 when the
 * module cannot be loaded or there is no GPU (its setup says why).
 *
 * --kernels-only runs every op on the engine's own kernels: convolution,
 * linear and attention too (MATRIX_ENGINE_CONV=kernel, MATRIX_ENGINE_GEMM=kernel,
 * MATRIX_ENGINE_SDPA=kernel), in the configurations that differ in more than
 * the libraries' settings: what tests/cudasim/ops_check.sh runs on the CPU
 * simulator of those kernels.
 * --no-graph-api runs what needs no cuDNN graph (backend) API: attention on
 * the engine's kernels (MATRIX_ENGINE_SDPA=kernel), convolutions on cuDNN's
 * legacy API (MATRIX_ENGINE_CONV=legacy; the timed search configurations
 * too), linear on cuBLASLt; the configurations that differ in the graph
 * API's use or in a knob --kernels-only covers are skipped: what the
 * simulator runs with its cuBLASLt and legacy cuDNN (tests/cudasim/cublaslt.cc,
 * cudnn.cc).
 *
 * --self-test runs the same machinery with a second CPU backend in place of
 * the module (no GPU needed): it checks the harness itself (conversions
 * against known bit patterns, case building, comparisons), then runs it
 * against a device that spoils one element of each op's first output, last
 * output or first input, which must fail every op.
 *
 * Assumptions about the CUDA backend (engine/cuda/, backend.h), so that the
 * lead can check them:
 *   - storage types as pass_precision (engine/passes.c) makes them: f16 / bf16
 *     for activations and their gradients, except BN mean / invstd, dropout
 *     masks, the log-softmax output, the NLL loss and their gradients (f32);
 *     the input image stays f32 (the first convolution casts it); parameters,
 *     their gradients and optimizer state are f32, the max-pool argmax i32.
 *     So the log-softmax reads f16 logits and writes f32 log-probabilities,
 *     and its backward writes f16 logit gradients.
 *   - ops are called one at a time after prepare(g, nops) and one
 *     begin_step() (the engine's op-by-op path: dump, profile); the dropout
 *     case finds the step whose CPU mask matches the device's (1 expected)
 *     and the SGD case uses it (the first step: buf = g).
 *   - the optimizer ops of one type are consecutive and run in order: the
 *     first SGD (AdamW) op of the plan updates the tensors of every SGD
 *     (AdamW) op in one multi-tensor kernel, the others do nothing (ops.cu;
 *     MATRIX_ENGINE_OPTIM=per-tensor: one kernel per op); with --op the first
 *     runs too (printed only when failing) when a later one is selected.
 *   - fp16 training scales the loss gradient at NLL_BWD (and SOFTMAX_CE_BWD) by a power of two
 *     (65536 in ops.cu) and the first SGD op unscales every parameter
 *     gradient: the scale is detected there and the SGD case accepts the
 *     update with the gradient unscaled by it or not.
 *   - one EMA op (ops.cu's first EMA op updates every pair of the plan).
 */
#include "config.h"
#include "../../engine/backend.h"
#include "../../engine/comm.h"
#include "../../engine/engine.h"
#include "../../engine/graph.h"
#include "../../engine/rng.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- tolerances ------------------------------------------------------------ */

typedef struct tol {
    double atol; /* times the magnitude M of the output */
    double rtol; /* times |ref| */
} tol;

static const tol tol_fp32 = {1e-5, 1e-4};
static const tol tol_tf32_gemm = {4e-3, 1e-3};
static const tol tol_fp16 = {2e-3, 2e-3};
static const tol tol_bf16 = {1.6e-2, 8e-3};
static const tol tol_fp32_gelu_lt = {1e-5, 1e-3};
static const tol tol_tf32_gelu_lt = {4e-3, 1e-3};

/* ---- host conversions to / from f16 and bf16 (round to nearest even) ----------- */

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint16_t f32_to_f16(float f)
{
    uint32_t x = f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u)
        return sign | 0x7e00; /* NaN */
    if (ax >= 0x477ff000u)
        return sign | 0x7c00; /* 65520 and above round to infinity */
    if (ax < 0x38800000u) {   /* below 2^-14: a subnormal f16 or zero */
        int e = (int)(ax >> 23);
        if (e < 102) /* below 2^-25: zero */
            return sign;
        uint32_t m = (ax & 0x7fffffu) | 0x800000u;
        int shift = 126 - e; /* 14 .. 24 */
        uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1)))
            q++;
        return sign | (uint16_t)q;
    }
    uint32_t r = ax - 0x38000000u; /* exponent bias 127 -> 15 */
    r = (r + 0xfffu + ((r >> 13) & 1)) >> 13;
    return sign | (uint16_t)r;
}

static float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0) {
        float v = (float)m * 0x1p-24f;
        return sign ? -v : v;
    }
    if (e == 31)
        return bits_f32(sign | 0x7f800000u | (m << 13));
    return bits_f32(sign | ((e + 112) << 23) | (m << 13));
}

static uint16_t f32_to_bf16(float f)
{
    uint32_t x = f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40); /* NaN stays NaN */
    x += 0x7fffu + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

static float bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

/* v rounded to storage type dt and back. */
static float quant(int dt, float v)
{
    if (dt == DT_F16)
        return f16_to_f32(f32_to_f16(v));
    if (dt == DT_BF16)
        return bf16_to_f32(f32_to_bf16(v));
    return v;
}

/* n f32 values (i32 for DT_I32) to storage type dt, and back. */
static void to_storage(int dt, const float *src, void *dst, size_t n)
{
    if (dt == DT_F16)
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)dst)[i] = f32_to_f16(src[i]);
    else if (dt == DT_BF16)
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)dst)[i] = f32_to_bf16(src[i]);
    else
        memcpy(dst, src, n * 4);
}

static void from_storage(int dt, const void *src, float *dst, size_t n)
{
    if (dt == DT_F16)
        for (size_t i = 0; i < n; i++)
            dst[i] = f16_to_f32(((const uint16_t *)src)[i]);
    else if (dt == DT_BF16)
        for (size_t i = 0; i < n; i++)
            dst[i] = bf16_to_f32(((const uint16_t *)src)[i]);
    else
        memcpy(dst, src, n * 4);
}

/* ---- the suite: one configuration, one graph of every case ----------------------- */

enum tclass {
    CL_ACT, /* activation or activation gradient: f16 / bf16 with half precisions */
    CL_F32, /* parameter, its gradient, state, BN statistics, loss path: f32 */
    CL_W,   /* weight of a conv / linear: f32 storage, values rounded to the activation type */
    CL_I32, /* labels, argmax */
};

typedef struct tinfo {
    int cls;        /* enum tclass */
    int fill;       /* 0: none (an output), 1: uniform [lo, hi), 2: labels [0, hi),
                     * 3: per row of shape[1], distinct positions in [0, hi) */
    float lo, hi;
    float *h;       /* host values, f32 (i32 for CL_I32): the CPU graph's data */
    void *hs;       /* host copy in the device's storage type */
    void *d;        /* device storage */
    size_t n;       /* elements */
    size_t dbytes;  /* device bytes */
} tinfo;

typedef struct opinfo {
    char label[128]; /* the case, printed after the figures */
    int subject;     /* 1: the op under test (always printed); 0: setup (printed on failure) */
    int sel;         /* selected(): 0 kept in the graph, not run; 1 run; 2 run, printed on failure */
} opinfo;

typedef struct config {
    const char *name;
    int prec;   /* enum precision */
    int layout; /* LAYOUT_NCHW / LAYOUT_NHWC */
    int search; /* --cudnn-benchmark on, --compile max-autotune */
    int sdpa_kernel;  /* MATRIX_ENGINE_SDPA=kernel: flash attention on our kernels, not cuDNN */
    const char *only; /* run only these ops (as --op) */
    const char *conv; /* MATRIX_ENGINE_CONV (NULL: unset, auto: the graph API where it verifies) */
    const char *bnstats; /* MATRIX_ENGINE_BNSTATS (NULL: unset, separate) */
    int gemm_kernel;  /* MATRIX_ENGINE_GEMM=kernel: linear on the engine's own GEMM kernel */
} config;

typedef struct suite {
    const config *cf;
    const char *prec_name;
    int act_dt;       /* storage type of CL_ACT tensors on the device */
    int val_dt;       /* their values are representable in this type (act_dt, or
                       * with --self-test the half type while storage is f32) */
    int selftest;
    int sabotage;     /* self-test: 1, 2 the device spoils the first / last output element */
    int quiet;
    const char *only; /* --op: run only ops whose name or case contains this (and the
                       * configuration's own cf->only) */
    int passed_anyway;/* sabotage: ops that passed although spoilt */
    uint64_t seed;
    graph g;          /* device graph: storage types, device pointers */
    graph gc;         /* CPU graph: the same tensors and ops, host f32 data */
    tinfo *ti;
    int capti;
    opinfo *oi;
    int capoi;
    int ncase;
    backend cpu, dev;
    int pass, fail;
    int syncbn;       /* SyncBN cases over the one-rank communicator */
    int dev_step;     /* the device's step counter as the dropout case found it; -1 unknown */
    double loss_scale;/* detected at NLL_BWD / SOFTMAX_CE_BWD (1: none) */
    int nconvbn;      /* conv -> BN training cases (case_conv_bn) */
    int full;         /* adding the models' full-size cases: "full-size: " starts their labels */
    char *tused;      /* per tensor: 1 when an op in the graph reads or writes it (keep_selected) */
} suite;

static const char *prec_names[] = {"fp32", "tf32", "fp16", "bf16"};

/* --kernels-only (tests/cudasim/: the engine's kernels on the CPU simulator);
 * 2: --no-graph-api (cuBLASLt and cuDNN's legacy API, simulated there) */
static int kernels_only;

static void *xalloc(size_t bytes)
{
    size_t n = (bytes + 63) / 64 * 64;
    void *p = aligned_alloc(64, n ? n : 64);
    if (!p) {
        fprintf(stderr, "ops_check: out of host memory\n");
        exit(1);
    }
    memset(p, 0, n ? n : 64);
    return p;
}

/* ---- building cases --------------------------------------------------------------- */

static int T(suite *s, const char *what, int kind, int cls, int layout, int ndim, int64_t a,
             int64_t b, int64_t c, int64_t d)
{
    char name[GRAPH_NAME];
    int64_t sh[4] = {a, b, c, d};
    int dt = cls == CL_ACT ? s->act_dt : cls == CL_I32 ? DT_I32 : DT_F32;
    snprintf(name, sizeof name, "c%d.%s", s->ncase, what);
    int i = graph_tensor(&s->g, name, kind, dt, layout, ndim, sh);
    if (i >= s->capti) {
        int cap = s->capti ? 2 * s->capti : 1024;
        s->ti = realloc(s->ti, cap * sizeof *s->ti);
        if (!s->ti)
            exit(1);
        s->capti = cap;
    }
    memset(&s->ti[i], 0, sizeof s->ti[i]);
    s->ti[i].cls = cls;
    return i;
}

/* An input filled with uniform values in [lo, hi). */
static int IN(suite *s, const char *what, int kind, int cls, int layout, int ndim, int64_t a,
              int64_t b, int64_t c, int64_t d, float lo, float hi)
{
    int i = T(s, what, kind, cls, layout, ndim, a, b, c, d);
    s->ti[i].fill = 1;
    s->ti[i].lo = lo;
    s->ti[i].hi = hi;
    return i;
}

static op *O(suite *s, int type, int subject, const char *fmt, ...)
{
    op *o;
    va_list ap;
    int i = graph_op(&s->g, type, graph_op_name(type), &o);
    if (i >= s->capoi) {
        int cap = s->capoi ? 2 * s->capoi : 256;
        s->oi = realloc(s->oi, cap * sizeof *s->oi);
        if (!s->oi)
            exit(1);
        s->capoi = cap;
    }
    size_t pre = (size_t)snprintf(s->oi[i].label, sizeof s->oi[i].label, "%s",
                                  s->full ? "full-size: " : "");
    va_start(ap, fmt);
    vsnprintf(s->oi[i].label + pre, sizeof s->oi[i].label - pre, fmt, ap);
    va_end(ap);
    s->oi[i].subject = subject;
    return o;
}

static int L(const suite *s) { return s->cf->layout; }
static const char *LN(const suite *s) { return s->cf->layout == LAYOUT_NHWC ? "nhwc" : "nchw"; }

/* Index of the last op appended. */
static int last_op(const suite *s) { return s->g.nops - 1; }

typedef struct convspec {
    const char *tag;
    int N, C, H, W, Co, k, stride, pad;
} convspec;

static const convspec convs[] = {
    {"mnist conv1 1->10 k5", 4, 1, 28, 28, 10, 5, 1, 0},
    {"mnist conv2 10->20 k5", 4, 10, 12, 12, 20, 5, 1, 0},
    {"resnet_tiny stem 3->16 k3s1p1", 2, 3, 16, 16, 16, 3, 1, 1},
    {"resnet50 stem 3->8 k7s2p3", 2, 3, 20, 20, 8, 7, 2, 3},
    {"16->32 k3s2p1", 2, 16, 12, 12, 32, 3, 2, 1},
    {"32->64 k1s1 (pointwise)", 2, 32, 8, 8, 64, 1, 1, 0},
    {"16->32 k1s2 (downsample)", 2, 16, 12, 12, 32, 1, 2, 0},
    {"24->24 k3s1p1", 3, 24, 7, 7, 24, 3, 1, 1},
    /* batch 1: odd channels, a stride of 2 on an odd image; and two conv -> BN
     * (genstats) shapes, K = 12 and K = 10 (K not a multiple of 4: the
     * GEN_STATS sum of squares sits at K rounded up to 4) */
    {"batch 1 7->5 k3s2p1", 1, 7, 9, 9, 5, 3, 2, 1},
    {"batch 1 8->12 k3s1p1", 1, 8, 9, 9, 12, 3, 1, 1},
    {"batch 1 8->10 k1s1", 1, 8, 6, 6, 10, 1, 1, 0},
};
#define NCONV ((int)(sizeof convs / sizeof convs[0]))

/* Every convolution shape of ResNet-18 and ResNet-50 (torchvision's, the
 * stride of a bottleneck on its 3x3) at 224 x 224, batch 2 (issue 11: the
 * real shapes of every model; the cases above are the small ones); close:
 * the convolution that closes a block (its eval epilogue adds the residual). */
typedef struct modelconv {
    convspec c;
    int close;
} modelconv;

static const modelconv convs_full[] = {
    {{"resnet stem 3->64 k7s2p3 224x224", 2, 3, 224, 224, 64, 7, 2, 3}, 0},
    {{"resnet50 64->64 k1 56x56", 2, 64, 56, 56, 64, 1, 1, 0}, 0},
    {{"resnet 64->64 k3p1 56x56", 2, 64, 56, 56, 64, 3, 1, 1}, 1},
    {{"resnet50 64->256 k1 56x56", 2, 64, 56, 56, 256, 1, 1, 0}, 1},
    {{"resnet50 256->64 k1 56x56", 2, 256, 56, 56, 64, 1, 1, 0}, 0},
    {{"resnet50 256->128 k1 56x56", 2, 256, 56, 56, 128, 1, 1, 0}, 0},
    {{"resnet50 128->128 k3s2p1 56x56", 2, 128, 56, 56, 128, 3, 2, 1}, 0},
    {{"resnet50 128->512 k1 28x28", 2, 128, 28, 28, 512, 1, 1, 0}, 1},
    {{"resnet50 256->512 k1s2 56x56 (downsample)", 2, 256, 56, 56, 512, 1, 2, 0}, 0},
    {{"resnet50 512->128 k1 28x28", 2, 512, 28, 28, 128, 1, 1, 0}, 0},
    {{"resnet 128->128 k3p1 28x28", 2, 128, 28, 28, 128, 3, 1, 1}, 1},
    {{"resnet50 512->256 k1 28x28", 2, 512, 28, 28, 256, 1, 1, 0}, 0},
    {{"resnet50 256->256 k3s2p1 28x28", 2, 256, 28, 28, 256, 3, 2, 1}, 0},
    {{"resnet50 256->1024 k1 14x14", 2, 256, 14, 14, 1024, 1, 1, 0}, 1},
    {{"resnet50 512->1024 k1s2 28x28 (downsample)", 2, 512, 28, 28, 1024, 1, 2, 0}, 0},
    {{"resnet50 1024->256 k1 14x14", 2, 1024, 14, 14, 256, 1, 1, 0}, 0},
    {{"resnet 256->256 k3p1 14x14", 2, 256, 14, 14, 256, 3, 1, 1}, 1},
    {{"resnet50 1024->512 k1 14x14", 2, 1024, 14, 14, 512, 1, 1, 0}, 0},
    {{"resnet50 512->512 k3s2p1 14x14", 2, 512, 14, 14, 512, 3, 2, 1}, 0},
    {{"resnet50 512->2048 k1 7x7", 2, 512, 7, 7, 2048, 1, 1, 0}, 1},
    {{"resnet50 1024->2048 k1s2 14x14 (downsample)", 2, 1024, 14, 14, 2048, 1, 2, 0}, 0},
    {{"resnet50 2048->512 k1 7x7", 2, 2048, 7, 7, 512, 1, 1, 0}, 0},
    {{"resnet 512->512 k3p1 7x7", 2, 512, 7, 7, 512, 3, 1, 1}, 1},
    {{"resnet18 64->128 k3s2p1 56x56", 2, 64, 56, 56, 128, 3, 2, 1}, 0},
    {{"resnet18 64->128 k1s2 56x56 (downsample)", 2, 64, 56, 56, 128, 1, 2, 0}, 0},
    {{"resnet18 128->256 k3s2p1 28x28", 2, 128, 28, 28, 256, 3, 2, 1}, 0},
    {{"resnet18 128->256 k1s2 28x28 (downsample)", 2, 128, 28, 28, 256, 1, 2, 0}, 0},
    {{"resnet18 256->512 k3s2p1 14x14", 2, 256, 14, 14, 512, 3, 2, 1}, 0},
    {{"resnet18 256->512 k1s2 14x14 (downsample)", 2, 256, 14, 14, 512, 1, 2, 0}, 0},
};
#define NCONV_FULL ((int)(sizeof convs_full / sizeof convs_full[0]))
/* --no-full-size: without them (the simulator, where they take minutes);
 * --self-test never has them (it checks the harness, on the CPU) */
static int no_full_size;

static int conv_out(int H, int k, int st, int p) { return (H + 2 * p - k) / st + 1; }

/* img: x is the model's input image, which stays f32 under mixed precision
 * (the device casts it to the activation type; its values are rounded to
 * that type here, so that both sides convolve the same numbers). */
static int conv_x(suite *s, const convspec *c, int img)
{
    return img ? IN(s, "image", TK_INPUT, CL_W, L(s), 4, c->N, c->C, c->H, c->W, -1, 1)
               : IN(s, "x", TK_ACT, CL_ACT, L(s), 4, c->N, c->C, c->H, c->W, -1, 1);
}

static void case_conv(suite *s, const convspec *c, int bias, int res, int act, int img)
{
    int OH = conv_out(c->H, c->k, c->stride, c->pad), OW = conv_out(c->W, c->k, c->stride, c->pad);
    s->ncase++;
    int x = conv_x(s, c, img);
    int w = IN(s, "w", TK_PARAM, CL_W, LAYOUT_ROW, 4, c->Co, c->C, c->k, c->k, -1, 1);
    int b = bias ? IN(s, "b", TK_PARAM, CL_F32, LAYOUT_ROW, 1, c->Co, 1, 1, 1, -1, 1) : -1;
    int r = res ? IN(s, "res", TK_ACT, CL_ACT, L(s), 4, c->N, c->Co, OH, OW, -1, 1) : -1;
    int y = T(s, "y", TK_ACT, CL_ACT, L(s), 4, c->N, c->Co, OH, OW);
    op *o = O(s, OP_CONV, 1, "%s%s%s%s%s", c->tag, bias ? " +bias" : "", res ? " +res" : "",
              act == ACT_RELU ? " +relu" : "", img ? " (f32 input image)" : "");
    o->in[0] = x; o->in[1] = w; o->in[2] = b; o->in[3] = r;
    o->out[0] = y;
    o->kh = o->kw = c->k; o->stride = c->stride; o->pad = c->pad;
    o->act = act;
    o->flops = 2.0 * c->N * c->Co * OH * OW * c->C * c->k * c->k;
}

/* acc: 1 = every present output accumulates; dx: 0 = no input gradient. */
static void case_conv_bwd(suite *s, const convspec *c, int bias, int acc, int dx, int img)
{
    int OH = conv_out(c->H, c->k, c->stride, c->pad), OW = conv_out(c->W, c->k, c->stride, c->pad);
    s->ncase++;
    int x = conv_x(s, c, img);
    int w = IN(s, "w", TK_PARAM, CL_W, LAYOUT_ROW, 4, c->Co, c->C, c->k, c->k, -1, 1);
    int b = bias ? IN(s, "b", TK_PARAM, CL_F32, LAYOUT_ROW, 1, c->Co, 1, 1, 1, -1, 1) : -1;
    int y = T(s, "y", TK_ACT, CL_ACT, L(s), 4, c->N, c->Co, OH, OW);
    op *f = O(s, OP_CONV, 0, "%s%s (forward of the backward case)", c->tag, bias ? " +bias" : "");
    f->in[0] = x; f->in[1] = w; f->in[2] = b; f->out[0] = y;
    f->kh = f->kw = c->k; f->stride = c->stride; f->pad = c->pad;
    int fi = last_op(s);
    int dy = IN(s, "dy", TK_GRAD, CL_ACT, L(s), 4, c->N, c->Co, OH, OW, -1, 1);
    int gx = dx ? T(s, "dx", TK_GRAD, CL_ACT, L(s), 4, c->N, c->C, c->H, c->W) : -1;
    int gw = T(s, "dw", TK_PGRAD, CL_F32, LAYOUT_ROW, 4, c->Co, c->C, c->k, c->k);
    int gb = bias ? T(s, "db", TK_PGRAD, CL_F32, LAYOUT_ROW, 1, c->Co, 1, 1, 1) : -1;
    op *o = O(s, OP_CONV_BWD, 1, "%s%s acc=%d%s%s", c->tag, bias ? " +db" : "", acc,
              dx ? "" : " no-dx", img ? " (f32 input image)" : "");
    o->in[0] = dy; o->in[1] = x; o->in[2] = w;
    o->out[0] = gx; o->out[1] = gw; o->out[2] = gb;
    o->fwd = fi;
    o->kh = o->kw = c->k; o->stride = c->stride; o->pad = c->pad;
    o->acc = acc ? (dx ? 1 : 0) | 2 | (bias ? 4 : 0) : 0;
}

/* A training conv (no epilogue) -> BatchNorm (+ ReLU) -> its backward: the
 * pattern whose BN statistics cuDNN's GEN_STATS may compute in the
 * convolution (MATRIX_ENGINE_BNSTATS=conv, NHWC); "genstats" in every label. */
static void case_conv_bn(suite *s, const convspec *c, int act)
{
    int OH = conv_out(c->H, c->k, c->stride, c->pad), OW = conv_out(c->W, c->k, c->stride, c->pad);
    s->ncase++;
    s->nconvbn++;
    int x = conv_x(s, c, 0);
    int w = IN(s, "w", TK_PARAM, CL_W, LAYOUT_ROW, 4, c->Co, c->C, c->k, c->k, -1, 1);
    int y = T(s, "y", TK_ACT, CL_ACT, L(s), 4, c->N, c->Co, OH, OW);
    op *f = O(s, OP_CONV, 1, "%s (genstats: conv -> bn)", c->tag);
    f->in[0] = x; f->in[1] = w; f->out[0] = y;
    f->kh = f->kw = c->k; f->stride = c->stride; f->pad = c->pad;
    f->flops = 2.0 * c->N * c->Co * OH * OW * c->C * c->k * c->k;
    int gam = IN(s, "gamma", TK_PARAM, CL_F32, LAYOUT_ROW, 1, c->Co, 1, 1, 1, 0.5f, 1.5f);
    int bet = IN(s, "beta", TK_PARAM, CL_F32, LAYOUT_ROW, 1, c->Co, 1, 1, 1, -0.5f, 0.5f);
    int rm = IN(s, "running_mean", TK_BUFFER, CL_F32, LAYOUT_ROW, 1, c->Co, 1, 1, 1, -0.5f, 0.5f);
    int rv = IN(s, "running_var", TK_BUFFER, CL_F32, LAYOUT_ROW, 1, c->Co, 1, 1, 1, 0.2f, 0.5f);
    int by = T(s, "bn_y", TK_ACT, CL_ACT, L(s), 4, c->N, c->Co, OH, OW);
    int mean = T(s, "mean", TK_ACT, CL_F32, LAYOUT_ROW, 1, c->Co, 1, 1, 1);
    int inv = T(s, "invstd", TK_ACT, CL_F32, LAYOUT_ROW, 1, c->Co, 1, 1, 1);
    op *o = O(s, OP_BN, 1, "%dx%dx%dx%d train%s (genstats: its sums from the conv)", c->N, c->Co,
              OH, OW, act == ACT_RELU ? " +relu" : "");
    o->in[0] = y; o->in[1] = gam; o->in[2] = bet; o->in[3] = rm; o->in[4] = rv;
    o->out[0] = by; o->out[1] = mean; o->out[2] = inv;
    o->train = 1; o->eps = 1e-5f; o->momentum = 0.1f; o->act = act;
    int bi = last_op(s);
    int dy = IN(s, "dy", TK_GRAD, CL_ACT, L(s), 4, c->N, c->Co, OH, OW, -1, 1);
    int gx = T(s, "dx", TK_GRAD, CL_ACT, L(s), 4, c->N, c->Co, OH, OW);
    int gg = T(s, "dgamma", TK_PGRAD, CL_F32, LAYOUT_ROW, 1, c->Co, 1, 1, 1);
    int gb = T(s, "dbeta", TK_PGRAD, CL_F32, LAYOUT_ROW, 1, c->Co, 1, 1, 1);
    op *b = O(s, OP_BN_BWD, 1, "%dx%dx%dx%d train (genstats: after the conv's sums)", c->N, c->Co,
              OH, OW);
    b->in[0] = dy; b->in[1] = y; b->in[2] = gam; b->in[3] = mean; b->in[4] = inv;
    b->out[0] = gx; b->out[1] = gg; b->out[2] = gb;
    b->fwd = bi; b->train = 1; b->eps = 1e-5f;
}

typedef struct bnspec {
    int N, C, H, W;
} bnspec;

static const bnspec bns[] = {{4, 16, 6, 6}, {2, 24, 9, 9}};

/* The BatchNorm kernels' other paths: batch 1 with an odd channel count
 * (element by element in both layouts), H W % 8 == 0 (NCHW's 8-wide path;
 * the two above take it only in NHWC), and 17 samples of 16 x 16 (several
 * blocks of partials per channel in both layouts, which pass 2 adds in
 * order; the two above fit one block), and 1100 samples of one channel
 * (NCHW: 138 rows of partials, more than pass 2's 128 threads: its strided
 * gather and a full tree of sums, whose barriers a smaller case cannot
 * test: with a few rows the tree's order does not change the sum). */
static const bnspec bns_edge[] = {{1, 7, 5, 5}, {3, 8, 4, 4}, {17, 8, 16, 16}, {1100, 1, 2, 2}};
#define NBNEDGE ((int)(sizeof bns_edge / sizeof bns_edge[0]))

/* BN op over x; returns its index. mean / invstd written to *mean, *inv. */
static int bn_fwd(suite *s, const bnspec *b, int train, int res, int act, int subject, int *x,
                  int *gam, int *mean, int *inv, const char *note)
{
    *x = IN(s, "x", TK_ACT, CL_ACT, L(s), 4, b->N, b->C, b->H, b->W, 0.5f, 2.5f);
    *gam = IN(s, "gamma", TK_PARAM, CL_F32, LAYOUT_ROW, 1, b->C, 1, 1, 1, 0.5f, 1.5f);
    int bet = IN(s, "beta", TK_PARAM, CL_F32, LAYOUT_ROW, 1, b->C, 1, 1, 1, -0.5f, 0.5f);
    int rm = IN(s, "running_mean", TK_BUFFER, CL_F32, LAYOUT_ROW, 1, b->C, 1, 1, 1, 0.5f, 2.5f);
    int rv = IN(s, "running_var", TK_BUFFER, CL_F32, LAYOUT_ROW, 1, b->C, 1, 1, 1, 0.2f, 0.5f);
    int r = res ? IN(s, "res", TK_ACT, CL_ACT, L(s), 4, b->N, b->C, b->H, b->W, -1, 1) : -1;
    int y = T(s, "y", TK_ACT, CL_ACT, L(s), 4, b->N, b->C, b->H, b->W);
    *mean = T(s, "mean", TK_ACT, CL_F32, LAYOUT_ROW, 1, b->C, 1, 1, 1);
    *inv = T(s, "invstd", TK_ACT, CL_F32, LAYOUT_ROW, 1, b->C, 1, 1, 1);
    op *o = O(s, OP_BN, subject, "%dx%dx%dx%d %s%s%s%s", b->N, b->C, b->H, b->W,
              train ? "train" : "eval", res ? " +res" : "", act == ACT_RELU ? " +relu" : "", note);
    o->in[0] = *x; o->in[1] = *gam; o->in[2] = bet; o->in[3] = rm; o->in[4] = rv; o->in[5] = r;
    o->out[0] = y; o->out[1] = *mean; o->out[2] = *inv;
    o->train = train;
    o->eps = 1e-5f;
    o->momentum = 0.1f;
    o->act = act;
    return last_op(s);
}

/* sync: SyncBN over the one-rank communicator (train only) */
static void case_bn(suite *s, const bnspec *b, int train, int res, int act, int sync)
{
    int x, gam, mean, inv;
    s->ncase++;
    int fi = bn_fwd(s, b, train, res, act, 1, &x, &gam, &mean, &inv, sync ? " syncbn" : "");
    s->g.ops[fi].sync = sync;
}

/* relu: the forward has a fused ReLU and the backward has its backward
 * folded in (pass_bn_relu_bwd): dy is the gradient of relu(BN(x)), masked by
 * the y > 0 the backward recomputes from x, gamma, beta, mean and invstd;
 * relu 2: of relu(BN(x) + res), the mask read from y and the masked dy
 * written into res's gradient too (out[3], acc bit 3 with acc). */
static void case_bn_bwd(suite *s, const bnspec *b, int train, int acc, int dx, int sync, int relu)
{
    int x, gam, mean, inv;
    s->ncase++;
    int fi = bn_fwd(s, b, train, relu == 2, relu ? ACT_RELU : ACT_NONE, 0, &x, &gam, &mean, &inv,
                    sync ? " syncbn (forward of the backward case)" : " (forward of the backward case)");
    s->g.ops[fi].sync = sync;
    int dy = IN(s, "dy", TK_GRAD, CL_ACT, L(s), 4, b->N, b->C, b->H, b->W, -1, 1);
    int gx = dx ? T(s, "dx", TK_GRAD, CL_ACT, L(s), 4, b->N, b->C, b->H, b->W) : -1;
    int gg = T(s, "dgamma", TK_PGRAD, CL_F32, LAYOUT_ROW, 1, b->C, 1, 1, 1);
    int gb = T(s, "dbeta", TK_PGRAD, CL_F32, LAYOUT_ROW, 1, b->C, 1, 1, 1);
    int gr = relu == 2 ? T(s, "dres", TK_GRAD, CL_ACT, L(s), 4, b->N, b->C, b->H, b->W) : -1;
    op *o = O(s, OP_BN_BWD, 1, "%dx%dx%dx%d %s%s acc=%d%s%s", b->N, b->C, b->H, b->W,
              train ? "train" : "eval",
              relu == 2 ? " +res +relu folded (mask read)" : relu ? " +relu folded" : "", acc,
              dx ? "" : " no-dx", sync ? " syncbn" : "");
    o->in[0] = dy; o->in[1] = x; o->in[2] = gam; o->in[3] = mean; o->in[4] = inv;
    /* beta, or with a residual input the forward's y */
    o->in[5] = relu == 2 ? s->g.ops[fi].out[0] : relu ? s->g.ops[fi].in[2] : -1;
    o->out[3] = gr;
    o->act = relu ? ACT_RELU : ACT_NONE;
    o->out[0] = gx; o->out[1] = gg; o->out[2] = gb;
    o->fwd = fi;
    o->train = train;
    o->eps = 1e-5f;
    o->acc = acc ? (dx ? 1 : 0) | 2 | 4 | (gr >= 0 ? 8 : 0) : 0;
}

/* The element-wise shapes: 8-wide vector paths (C % 8 == 0 in NHWC, H W % 8
 * == 0 in NCHW) and element-by-element ones. */
typedef struct ewspec {
    int N, C, H, W;
} ewspec;

static const ewspec ews[] = {{3, 8, 5, 7}, {2, 16, 8, 8}, {1, 3, 5, 7}, {1, 1, 1, 1}, {2, 1001, 1, 1}};
#define NEW ((int)(sizeof ews / sizeof ews[0]))

/* relu forward and backward (the backward reads the forward's output). */
static void case_act(suite *s, const ewspec *e, int acc)
{
    s->ncase++;
    int x = IN(s, "x", TK_ACT, CL_ACT, L(s), 4, e->N, e->C, e->H, e->W, -1, 1);
    int y = T(s, "y", TK_ACT, CL_ACT, L(s), 4, e->N, e->C, e->H, e->W);
    op *f = O(s, OP_ACT, !acc, "relu %dx%dx%dx%d", e->N, e->C, e->H, e->W);
    f->in[0] = x; f->out[0] = y; f->act = ACT_RELU;
    int fi = last_op(s);
    int dy = IN(s, "dy", TK_GRAD, CL_ACT, L(s), 4, e->N, e->C, e->H, e->W, -1, 1);
    int dx = T(s, "dx", TK_GRAD, CL_ACT, L(s), 4, e->N, e->C, e->H, e->W);
    op *o = O(s, OP_ACT_BWD, 1, "relu %dx%dx%dx%d acc=%d", e->N, e->C, e->H, e->W, acc);
    o->in[0] = dy; o->in[1] = y; o->out[0] = dx; o->act = ACT_RELU; o->fwd = fi;
    o->acc = acc;
}

typedef struct poolspec {
    const char *tag;
    int N, C, H, W, k, stride, pad;
} poolspec;

static const poolspec pools[] = {
    {"2x2s2 (mnist)", 4, 10, 24, 24, 2, 2, 0},
    {"3x3s2p1 (resnet)", 2, 16, 15, 15, 3, 2, 1},
    {"3x3s2p1 even", 2, 8, 16, 16, 3, 2, 1},
    {"3x3s2p1 7x7x7", 1, 7, 7, 7, 3, 2, 1},
    {"2x2s2 33x33 (odd: last column dropped)", 1, 1, 33, 33, 2, 2, 0},
};
#define NPOOL ((int)(sizeof pools / sizeof pools[0]))

static void case_maxpool(suite *s, const poolspec *p, int act, int acc)
{
    int OH = conv_out(p->H, p->k, p->stride, p->pad), OW = conv_out(p->W, p->k, p->stride, p->pad);
    s->ncase++;
    int x = IN(s, "x", TK_ACT, CL_ACT, L(s), 4, p->N, p->C, p->H, p->W, -1, 1);
    int y = T(s, "y", TK_ACT, CL_ACT, L(s), 4, p->N, p->C, OH, OW);
    int idx = T(s, "argmax", TK_ACT, CL_I32, L(s), 4, p->N, p->C, OH, OW);
    op *f = O(s, OP_MAXPOOL, !acc, "%s%s", p->tag, act == ACT_RELU ? " +relu" : "");
    f->in[0] = x; f->out[0] = y; f->out[1] = idx;
    f->kh = f->kw = p->k; f->stride = p->stride; f->pad = p->pad; f->act = act;
    int fi = last_op(s);
    int dy = IN(s, "dy", TK_GRAD, CL_ACT, L(s), 4, p->N, p->C, OH, OW, -1, 1);
    int dx = T(s, "dx", TK_GRAD, CL_ACT, L(s), 4, p->N, p->C, p->H, p->W);
    op *o = O(s, OP_MAXPOOL_BWD, 1, "%s acc=%d", p->tag, acc);
    o->in[0] = dy; o->in[1] = idx; o->out[0] = dx; o->fwd = fi;
    o->kh = o->kw = p->k; o->stride = p->stride; o->pad = p->pad;
    o->acc = acc;
}

static void case_avgpool(suite *s, int acc)
{
    s->ncase++;
    int x = IN(s, "x", TK_ACT, CL_ACT, L(s), 4, 3, 32, 4, 4, -1, 1);
    int y = T(s, "y", TK_ACT, CL_ACT, LAYOUT_ROW, 2, 3, 32, 1, 1);
    op *f = O(s, OP_AVGPOOL, !acc, "3x32x4x4 -> 3x32");
    f->in[0] = x; f->out[0] = y;
    int fi = last_op(s);
    int dy = IN(s, "dy", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, 3, 32, 1, 1, -1, 1);
    int dx = T(s, "dx", TK_GRAD, CL_ACT, L(s), 4, 3, 32, 4, 4);
    op *o = O(s, OP_AVGPOOL_BWD, 1, "3x32 -> 3x32x4x4 acc=%d", acc);
    o->in[0] = dy; o->out[0] = dx; o->fwd = fi; o->acc = acc;
}

static void case_flatten(suite *s, int acc)
{
    s->ncase++;
    int x = IN(s, "x", TK_ACT, CL_ACT, L(s), 4, 4, 20, 4, 4, -1, 1);
    int y = T(s, "y", TK_ACT, CL_ACT, LAYOUT_ROW, 2, 4, 320, 1, 1);
    op *f = O(s, OP_FLATTEN, !acc, "4x20x4x4 -> 4x320");
    f->in[0] = x; f->out[0] = y;
    int fi = last_op(s);
    int dy = IN(s, "dy", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, 4, 320, 1, 1, -1, 1);
    int dx = T(s, "dx", TK_GRAD, CL_ACT, L(s), 4, 4, 20, 4, 4);
    op *o = O(s, OP_FLATTEN_BWD, 1, "4x320 -> 4x20x4x4 acc=%d", acc);
    o->in[0] = dy; o->out[0] = dx; o->fwd = fi; o->acc = acc;
}

static void case_add_copy(suite *s, const ewspec *e, int acc)
{
    s->ncase++;
    int a = IN(s, "a", TK_ACT, CL_ACT, L(s), 4, e->N, e->C, e->H, e->W, -1, 1);
    int b = IN(s, "b", TK_ACT, CL_ACT, L(s), 4, e->N, e->C, e->H, e->W, -1, 1);
    int y = T(s, "y", TK_ACT, CL_ACT, L(s), 4, e->N, e->C, e->H, e->W);
    op *o = O(s, OP_ADD, 1, "%dx%dx%dx%d acc=%d", e->N, e->C, e->H, e->W, acc);
    o->in[0] = a; o->in[1] = b; o->out[0] = y; o->acc = acc;
    s->ncase++;
    int x = IN(s, "x", TK_GRAD, CL_ACT, L(s), 4, e->N, e->C, e->H, e->W, -1, 1);
    int z = T(s, "y", TK_GRAD, CL_ACT, L(s), 4, e->N, e->C, e->H, e->W);
    o = O(s, OP_COPY, 1, "%dx%dx%dx%d acc=%d", e->N, e->C, e->H, e->W, acc);
    o->in[0] = x; o->out[0] = z; o->acc = acc;
}

static void case_dropout2d(suite *s, int acc)
{
    s->ncase++;
    int x = IN(s, "x", TK_ACT, CL_ACT, L(s), 4, 4, 20, 8, 8, -1, 1);
    int y = T(s, "y", TK_ACT, CL_ACT, L(s), 4, 4, 20, 8, 8);
    int m = T(s, "mask", TK_ACT, CL_F32, LAYOUT_ROW, 2, 4, 20, 1, 1);
    op *f = O(s, OP_DROPOUT, !acc, "dropout2d p=0.5 4x20x8x8");
    f->in[0] = x; f->out[0] = y; f->out[1] = m; f->p = 0.5f; f->channel = 1;
    f->seed = rng_mix(s->seed * 31 + (uint64_t)s->ncase);
    int fi = last_op(s);
    int dy = IN(s, "dy", TK_GRAD, CL_ACT, L(s), 4, 4, 20, 8, 8, -1, 1);
    int dx = T(s, "dx", TK_GRAD, CL_ACT, L(s), 4, 4, 20, 8, 8);
    op *o = O(s, OP_DROPOUT_BWD, 1, "dropout2d 4x20x8x8 acc=%d", acc);
    o->in[0] = dy; o->in[1] = m; o->out[0] = dx; o->fwd = fi; o->channel = 1; o->acc = acc;
}

/* ---- cases without a layout: run in the NCHW configurations ----------------------- */

static void case_linear(suite *s, int M, int K, int N, int bias, int act)
{
    s->ncase++;
    int x = IN(s, "x", TK_ACT, CL_ACT, LAYOUT_ROW, 2, M, K, 1, 1, -1, 1);
    int w = IN(s, "w", TK_PARAM, CL_W, LAYOUT_ROW, 2, N, K, 1, 1, -1, 1);
    int b = bias ? IN(s, "b", TK_PARAM, CL_F32, LAYOUT_ROW, 1, N, 1, 1, 1, -1, 1) : -1;
    int y = T(s, "y", TK_ACT, CL_ACT, LAYOUT_ROW, 2, M, N, 1, 1);
    op *o = O(s, OP_LINEAR, 1, "%dx%d -> %dx%d%s%s", M, K, M, N, bias ? " +bias" : "",
              act == ACT_RELU ? " +relu" : "");
    o->in[0] = x; o->in[1] = w; o->in[2] = b; o->out[0] = y; o->act = act;
    o->flops = 2.0 * M * K * N;
}

static const char *act_label(int act)
{
    return act == ACT_RELU ? "relu" : act == ACT_GELU ? "gelu(erf)"
                         : act == ACT_GELU_TANH ? "gelu(tanh)" : act == ACT_TANH ? "tanh" : "none";
}

/* A linear with a GELU epilogue as pass_fuse makes it: with the
 * pre-activation kept (training) or not; the tanh form runs in cuBLASLt's
 * GELU(_AUX)(_BIAS) epilogue (GELU_AUX wants N % 8 == 0), the erf form in
 * the engine's kernel epilogue. */
static void case_linear_gelu(suite *s, int M, int K, int N, int bias, int act, int pre)
{
    s->ncase++;
    int x = IN(s, "x", TK_ACT, CL_ACT, LAYOUT_ROW, 2, M, K, 1, 1, -1, 1);
    int w = IN(s, "w", TK_PARAM, CL_W, LAYOUT_ROW, 2, N, K, 1, 1, -1, 1);
    int b = bias ? IN(s, "b", TK_PARAM, CL_F32, LAYOUT_ROW, 1, N, 1, 1, 1, -1, 1) : -1;
    int y = T(s, "y", TK_ACT, CL_ACT, LAYOUT_ROW, 2, M, N, 1, 1);
    int pr = pre ? T(s, "pre", TK_ACT, CL_ACT, LAYOUT_ROW, 2, M, N, 1, 1) : -1;
    op *o = O(s, OP_LINEAR, 1, "%dx%d -> %dx%d%s +%s%s", M, K, M, N, bias ? " +bias" : "",
              act_label(act), pre ? " +pre" : "");
    o->in[0] = x; o->in[1] = w; o->in[2] = b; o->out[0] = y; o->out[1] = pr; o->act = act;
    o->flops = 2.0 * M * K * N;
}

/* An element-wise GELU forward and backward (the backward reads x). */
static void case_act_gelu(suite *s, int M, int N, int act, int acc)
{
    s->ncase++;
    int x = IN(s, "x", TK_ACT, CL_ACT, LAYOUT_ROW, 2, M, N, 1, 1, -4, 4);
    int y = T(s, "y", TK_ACT, CL_ACT, LAYOUT_ROW, 2, M, N, 1, 1);
    op *f = O(s, OP_ACT, !acc, "%s %dx%d", act_label(act), M, N);
    f->in[0] = x; f->out[0] = y; f->act = act;
    int fi = last_op(s);
    int dy = IN(s, "dy", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, M, N, 1, 1, -1, 1);
    int dx = T(s, "dx", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, M, N, 1, 1);
    op *o = O(s, OP_ACT_BWD, 1, "%s %dx%d acc=%d", act_label(act), M, N, acc);
    o->in[0] = dy; o->in[1] = x; o->out[0] = dx; o->act = act; o->fwd = fi; o->acc = acc;
}

static void case_linear_bwd(suite *s, int M, int K, int N, int bias, int acc, int dx)
{
    s->ncase++;
    int x = IN(s, "x", TK_ACT, CL_ACT, LAYOUT_ROW, 2, M, K, 1, 1, -1, 1);
    int w = IN(s, "w", TK_PARAM, CL_W, LAYOUT_ROW, 2, N, K, 1, 1, -1, 1);
    int b = bias ? IN(s, "b", TK_PARAM, CL_F32, LAYOUT_ROW, 1, N, 1, 1, 1, -1, 1) : -1;
    int y = T(s, "y", TK_ACT, CL_ACT, LAYOUT_ROW, 2, M, N, 1, 1);
    op *f = O(s, OP_LINEAR, 0, "%dx%d -> %dx%d (forward of the backward case)", M, K, M, N);
    f->in[0] = x; f->in[1] = w; f->in[2] = b; f->out[0] = y;
    int fi = last_op(s);
    int dy = IN(s, "dy", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, M, N, 1, 1, -1, 1);
    int gx = dx ? T(s, "dx", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, M, K, 1, 1) : -1;
    int gw = T(s, "dw", TK_PGRAD, CL_F32, LAYOUT_ROW, 2, N, K, 1, 1);
    int gb = bias ? T(s, "db", TK_PGRAD, CL_F32, LAYOUT_ROW, 1, N, 1, 1, 1) : -1;
    op *o = O(s, OP_LINEAR_BWD, 1, "%dx%d <- %dx%d%s acc=%d%s", M, K, M, N, bias ? " +db" : "",
              acc, dx ? "" : " no-dx");
    o->in[0] = dy; o->in[1] = x; o->in[2] = w;
    o->out[0] = gx; o->out[1] = gw; o->out[2] = gb;
    o->fwd = fi;
    o->acc = acc ? (dx ? 1 : 0) | 2 | (bias ? 4 : 0) : 0;
}

static void case_logsoftmax(suite *s, int M, int N, int acc)
{
    s->ncase++;
    int x = IN(s, "x", TK_ACT, CL_ACT, LAYOUT_ROW, 2, M, N, 1, 1, -3, 3);
    int y = T(s, "y", TK_ACT, CL_F32, LAYOUT_ROW, 2, M, N, 1, 1);
    op *f = O(s, OP_LOGSOFTMAX, !acc, "%dx%d", M, N);
    f->in[0] = x; f->out[0] = y;
    int fi = last_op(s);
    int dy = IN(s, "dy", TK_GRAD, CL_F32, LAYOUT_ROW, 2, M, N, 1, 1, -1, 1);
    int dx = T(s, "dx", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, M, N, 1, 1);
    op *o = O(s, OP_LOGSOFTMAX_BWD, 1, "%dx%d acc=%d", M, N, acc);
    o->in[0] = dy; o->in[1] = y; o->out[0] = dx; o->fwd = fi; o->acc = acc;
}

static void case_nll(suite *s, int M, int N, int acc)
{
    s->ncase++;
    int lp = IN(s, "logp", TK_ACT, CL_F32, LAYOUT_ROW, 2, M, N, 1, 1, -5, 0);
    int t = T(s, "target", TK_INPUT, CL_I32, LAYOUT_ROW, 1, M, 1, 1, 1);
    s->ti[t].fill = 2;
    s->ti[t].hi = N;
    int loss = T(s, "loss", TK_ACT, CL_F32, LAYOUT_ROW, 1, 1, 1, 1, 1);
    op *f = O(s, OP_NLL, !acc, "%dx%d mean", M, N);
    f->in[0] = lp; f->in[1] = t; f->out[0] = loss;
    s->g.loss = loss;
    int fi = last_op(s);
    int d = T(s, "dlogp", TK_GRAD, CL_F32, LAYOUT_ROW, 2, M, N, 1, 1);
    op *o = O(s, OP_NLL_BWD, 1, "%dx%d acc=%d", M, N, acc);
    o->in[0] = t; o->out[0] = d; o->fwd = fi; o->acc = acc;
}

static void case_dropout(suite *s, int M, int acc)
{
    s->ncase++;
    int x = IN(s, "x", TK_ACT, CL_ACT, LAYOUT_ROW, 2, M, 50, 1, 1, -1, 1);
    int y = T(s, "y", TK_ACT, CL_ACT, LAYOUT_ROW, 2, M, 50, 1, 1);
    int m = T(s, "mask", TK_ACT, CL_F32, LAYOUT_ROW, 2, M, 50, 1, 1);
    op *f = O(s, OP_DROPOUT, !acc, "dropout p=0.5 %dx50", M);
    f->in[0] = x; f->out[0] = y; f->out[1] = m; f->p = 0.5f; f->channel = 0;
    f->seed = rng_mix(s->seed * 31 + (uint64_t)s->ncase);
    int fi = last_op(s);
    int dy = IN(s, "dy", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, M, 50, 1, 1, -1, 1);
    int dx = T(s, "dx", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, M, 50, 1, 1);
    op *o = O(s, OP_DROPOUT_BWD, 1, "dropout %dx50 acc=%d", M, acc);
    o->in[0] = dy; o->in[1] = m; o->out[0] = dx; o->fwd = fi; o->acc = acc;
}

/* R x C: 64 x 9 fits one chunk of ops.cu's multi-tensor optimizer kernels,
 * 160 x 129 (20,640 elements) spans two, the second partial. */
static void case_sgd(suite *s, float momentum, int R, int C)
{
    s->ncase++;
    int w = IN(s, "w", TK_PARAM, CL_F32, LAYOUT_ROW, 2, R, C, 1, 1, -1, 1);
    int gr = IN(s, "grad", TK_PGRAD, CL_F32, LAYOUT_ROW, 2, R, C, 1, 1, -1, 1);
    int m = IN(s, "momentum", TK_STATE, CL_F32, LAYOUT_ROW, 2, R, C, 1, 1, -1, 1);
    op *o = O(s, OP_SGD, 1, "%dx%d lr=0.1 momentum=%g wd=1e-4", R, C, momentum);
    o->in[0] = w; o->in[1] = gr; o->in[2] = m;
    o->lr = 0.1f; o->momentum = momentum; o->wd = 1e-4f;
}

static void case_ema(suite *s)
{
    s->ncase++;
    int w = IN(s, "w", TK_PARAM, CL_F32, LAYOUT_ROW, 2, 64, 9, 1, 1, -1, 1);
    int e = IN(s, "ema", TK_STATE, CL_F32, LAYOUT_ROW, 2, 64, 9, 1, 1, -1, 1);
    op *o = O(s, OP_EMA, 1, "64x9 decay=0.5");
    o->in[0] = w; o->in[1] = e; o->momentum = 0.5f;
}

/* ---- BERT's ops ---------------------------------------------------------------------- */

static void case_embed(suite *s, int B, int Tn, int C, int V, int P, int NT, int acc)
{
    s->ncase++;
    int ids = T(s, "ids", TK_INPUT, CL_I32, LAYOUT_ROW, 2, B, Tn, 1, 1);
    s->ti[ids].fill = 2;
    s->ti[ids].hi = V;
    int types = T(s, "types", TK_INPUT, CL_I32, LAYOUT_ROW, 2, B, Tn, 1, 1);
    s->ti[types].fill = 2;
    s->ti[types].hi = NT;
    int we = IN(s, "word", TK_PARAM, CL_F32, LAYOUT_ROW, 2, V, C, 1, 1, -1, 1);
    int pe = IN(s, "pos", TK_PARAM, CL_F32, LAYOUT_ROW, 2, P, C, 1, 1, -1, 1);
    int te = IN(s, "type", TK_PARAM, CL_F32, LAYOUT_ROW, 2, NT, C, 1, 1, -1, 1);
    int y = T(s, "y", TK_ACT, CL_ACT, LAYOUT_ROW, 2, B * Tn, C, 1, 1);
    op *f = O(s, OP_EMBED, !acc, "B=%d T=%d C=%d V=%d", B, Tn, C, V);
    f->in[0] = ids; f->in[1] = types; f->in[2] = we; f->in[3] = pe; f->in[4] = te; f->out[0] = y;
    int fi = last_op(s);
    int dy = IN(s, "dy", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, B * Tn, C, 1, 1, -1, 1);
    int dw = T(s, "dword", TK_PGRAD, CL_F32, LAYOUT_ROW, 2, V, C, 1, 1);
    int dp = T(s, "dpos", TK_PGRAD, CL_F32, LAYOUT_ROW, 2, P, C, 1, 1);
    int dt = T(s, "dtype", TK_PGRAD, CL_F32, LAYOUT_ROW, 2, NT, C, 1, 1);
    op *o = O(s, OP_EMBED_BWD, 1, "B=%d T=%d C=%d V=%d acc=%d", B, Tn, C, V, acc);
    o->in[0] = dy; o->in[1] = ids; o->in[2] = types;
    o->out[0] = dw; o->out[1] = dp; o->out[2] = dt; o->fwd = fi; o->acc = acc ? 7 : 0;
}

static void case_layernorm(suite *s, int R, int C, int acc)
{
    s->ncase++;
    int x = IN(s, "x", TK_ACT, CL_ACT, LAYOUT_ROW, 2, R, C, 1, 1, -2, 2);
    int ga = IN(s, "gamma", TK_PARAM, CL_F32, LAYOUT_ROW, 1, C, 1, 1, 1, 0.5, 1.5);
    int be = IN(s, "beta", TK_PARAM, CL_F32, LAYOUT_ROW, 1, C, 1, 1, 1, -1, 1);
    int y = T(s, "y", TK_ACT, CL_ACT, LAYOUT_ROW, 2, R, C, 1, 1);
    int mu = T(s, "mean", TK_ACT, CL_F32, LAYOUT_ROW, 1, R, 1, 1, 1);
    int rs = T(s, "rstd", TK_ACT, CL_F32, LAYOUT_ROW, 1, R, 1, 1, 1);
    op *f = O(s, OP_LAYERNORM, !acc, "%dx%d", R, C);
    f->in[0] = x; f->in[1] = ga; f->in[2] = be; f->out[0] = y; f->out[1] = mu; f->out[2] = rs;
    f->eps = 1e-12f;
    int fi = last_op(s);
    int dy = IN(s, "dy", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, R, C, 1, 1, -1, 1);
    int dx = T(s, "dx", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, R, C, 1, 1);
    int dg = T(s, "dgamma", TK_PGRAD, CL_F32, LAYOUT_ROW, 1, C, 1, 1, 1);
    int db = T(s, "dbeta", TK_PGRAD, CL_F32, LAYOUT_ROW, 1, C, 1, 1, 1);
    op *o = O(s, OP_LAYERNORM_BWD, 1, "%dx%d acc=%d", R, C, acc);
    o->in[0] = dy; o->in[1] = x; o->in[2] = ga; o->in[3] = mu; o->in[4] = rs;
    o->out[0] = dx; o->out[1] = dg; o->out[2] = db; o->fwd = fi; o->acc = acc ? 7 : 0;
}

static void case_attention(suite *s, int B, int Tn, int H, int C, int drop, int acc)
{
    s->ncase++;
    int q = IN(s, "q", TK_ACT, CL_ACT, LAYOUT_ROW, 2, B * Tn, C, 1, 1, -1, 1);
    int k = IN(s, "k", TK_ACT, CL_ACT, LAYOUT_ROW, 2, B * Tn, C, 1, 1, -1, 1);
    int v = IN(s, "v", TK_ACT, CL_ACT, LAYOUT_ROW, 2, B * Tn, C, 1, 1, -1, 1);
    int y = T(s, "y", TK_ACT, CL_ACT, LAYOUT_ROW, 2, B * Tn, C, 1, 1);
    int pr = T(s, "probs", TK_ACT, CL_F32, LAYOUT_ROW, 4, B, H, Tn, Tn);
    int m = drop ? T(s, "mask", TK_ACT, CL_F32, LAYOUT_ROW, 4, B, H, Tn, Tn) : -1;
    op *f = O(s, OP_ATTENTION, !acc, "B=%d T=%d H=%d C=%d%s", B, Tn, H, C, drop ? " dropout 0.1" : "");
    f->in[0] = q; f->in[1] = k; f->in[2] = v; f->out[0] = y; f->out[1] = pr; f->out[2] = m;
    f->heads = H;
    f->p = 0.1f;
    f->seed = rng_mix(s->seed * 37 + (uint64_t)s->ncase);
    int fi = last_op(s);
    int dy = IN(s, "dy", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, B * Tn, C, 1, 1, -1, 1);
    int dq = T(s, "dq", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, B * Tn, C, 1, 1);
    int dk = T(s, "dk", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, B * Tn, C, 1, 1);
    int dv = T(s, "dv", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, B * Tn, C, 1, 1);
    op *o = O(s, OP_ATTENTION_BWD, 1, "B=%d T=%d H=%d C=%d%s acc=%d", B, Tn, H, C,
              drop ? " dropout 0.1" : "", acc);
    o->in[0] = dy; o->in[1] = q; o->in[2] = k; o->in[3] = v; o->in[4] = pr; o->in[5] = m;
    o->out[0] = dq; o->out[1] = dk; o->out[2] = dv; o->fwd = fi; o->acc = acc ? 7 : 0;
    o->heads = H;
}

/* Attention in the flash form (pass_flash_attention, fp16 / bf16 on CUDA):
 * out[1] is the rows' lse (B, H, T); the backward reads it and the
 * forward's y. cuDNN's fused SDPA runs it where it has an engine (acc 0),
 * else the engine's kernels (acc 1: cuDNN cannot accumulate). drop: with
 * attention dropout 0.1, the keep flags (io type) drawn by the forward
 * (out[2]) and again by the backward (out[3]), as pass_autodiff makes it:
 * cuDNN's composite graphs take them as an input. */
static void case_attention_flash(suite *s, int B, int Tn, int H, int C, int drop, int acc)
{
    s->ncase++;
    int q = IN(s, "q", TK_ACT, CL_ACT, LAYOUT_ROW, 2, B * Tn, C, 1, 1, -1, 1);
    int k = IN(s, "k", TK_ACT, CL_ACT, LAYOUT_ROW, 2, B * Tn, C, 1, 1, -1, 1);
    int v = IN(s, "v", TK_ACT, CL_ACT, LAYOUT_ROW, 2, B * Tn, C, 1, 1, -1, 1);
    int y = T(s, "y", TK_ACT, CL_ACT, LAYOUT_ROW, 2, B * Tn, C, 1, 1);
    int ls = T(s, "lse", TK_ACT, CL_F32, LAYOUT_ROW, 3, B, H, Tn, 1);
    int m = drop ? T(s, "keep", TK_ACT, CL_ACT, LAYOUT_ROW, 4, B, H, Tn, Tn) : -1;
    const char *dn = drop ? " dropout 0.1" : "";
    op *f = O(s, OP_ATTENTION, !acc, "flash B=%d T=%d H=%d C=%d%s", B, Tn, H, C, dn);
    f->in[0] = q; f->in[1] = k; f->in[2] = v; f->out[0] = y; f->out[1] = ls; f->out[2] = m;
    f->heads = H;
    f->p = 0.1f;
    f->seed = rng_mix(s->seed * 37 + (uint64_t)s->ncase);
    uint64_t seed = f->seed;
    int fi = last_op(s);
    int dy = IN(s, "dy", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, B * Tn, C, 1, 1, -1, 1);
    int dq = T(s, "dq", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, B * Tn, C, 1, 1);
    int dk = T(s, "dk", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, B * Tn, C, 1, 1);
    int dv = T(s, "dv", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, B * Tn, C, 1, 1);
    int m2 = drop ? T(s, "keep.bwd", TK_ACT, CL_ACT, LAYOUT_ROW, 4, B, H, Tn, Tn) : -1;
    op *o = O(s, OP_ATTENTION_BWD, 1, "flash B=%d T=%d H=%d C=%d%s acc=%d", B, Tn, H, C, dn, acc);
    o->in[0] = dy; o->in[1] = q; o->in[2] = k; o->in[3] = v; o->in[4] = ls; o->in[5] = y;
    o->out[0] = dq; o->out[1] = dk; o->out[2] = dv; o->out[3] = m2; o->fwd = fi;
    o->acc = acc ? 7 : 0;
    o->heads = H;
    o->p = 0.1f;
    o->seed = seed;
}

/* BERT's MLM gather: M distinct positions of each of B sequences of T. */
static void case_gather(suite *s, int B, int Tn, int M, int C, int acc)
{
    s->ncase++;
    int x = IN(s, "x", TK_ACT, CL_ACT, LAYOUT_ROW, 2, B * Tn, C, 1, 1, -1, 1);
    int pos = T(s, "pos", TK_INPUT, CL_I32, LAYOUT_ROW, 2, B, M, 1, 1);
    s->ti[pos].fill = 3;
    s->ti[pos].hi = Tn;
    int y = T(s, "y", TK_ACT, CL_ACT, LAYOUT_ROW, 2, B * M, C, 1, 1);
    op *f = O(s, OP_GATHER, !acc, "B=%d T=%d M=%d C=%d", B, Tn, M, C);
    f->in[0] = x; f->in[1] = pos; f->out[0] = y;
    int fi = last_op(s);
    int dy = IN(s, "dy", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, B * M, C, 1, 1, -1, 1);
    int dx = T(s, "dx", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, B * Tn, C, 1, 1);
    op *o = O(s, OP_GATHER_BWD, 1, "B=%d T=%d M=%d C=%d acc=%d", B, Tn, M, C, acc);
    o->in[0] = dy; o->in[1] = pos; o->out[0] = dx; o->fwd = fi; o->acc = acc;
}

/* The fused softmax cross-entropy: logits in the io type, M rows of N. */
static void case_softmax_ce(suite *s, int M, int N, int acc)
{
    s->ncase++;
    int x = IN(s, "logits", TK_ACT, CL_ACT, LAYOUT_ROW, 2, M, N, 1, 1, -4, 4);
    int t = T(s, "target", TK_INPUT, CL_I32, LAYOUT_ROW, 1, M, 1, 1, 1);
    s->ti[t].fill = 2;
    s->ti[t].hi = N;
    int loss = T(s, "loss", TK_ACT, CL_F32, LAYOUT_ROW, 1, 1, 1, 1, 1);
    int lse = T(s, "lse", TK_ACT, CL_F32, LAYOUT_ROW, 1, M, 1, 1, 1);
    op *f = O(s, OP_SOFTMAX_CE, !acc, "%dx%d mean", M, N);
    f->in[0] = x; f->in[1] = t; f->out[0] = loss; f->out[1] = lse;
    s->g.loss = loss;
    int fi = last_op(s);
    int d = T(s, "dlogits", TK_GRAD, CL_ACT, LAYOUT_ROW, 2, M, N, 1, 1);
    op *o = O(s, OP_SOFTMAX_CE_BWD, 1, "%dx%d acc=%d", M, N, acc);
    o->in[0] = x; o->in[1] = t; o->in[2] = lse; o->out[0] = d; o->fwd = fi; o->acc = acc;
}

static void case_adamw(suite *s, int R, int C)
{
    s->ncase++;
    int w = IN(s, "w", TK_PARAM, CL_F32, LAYOUT_ROW, 2, R, C, 1, 1, -1, 1);
    int gr = IN(s, "grad", TK_PGRAD, CL_F32, LAYOUT_ROW, 2, R, C, 1, 1, -1, 1);
    int m = IN(s, "adam_m", TK_STATE, CL_F32, LAYOUT_ROW, 2, R, C, 1, 1, -0.1, 0.1);
    int v = IN(s, "adam_v", TK_STATE, CL_F32, LAYOUT_ROW, 2, R, C, 1, 1, 0, 0.01);
    op *o = O(s, OP_ADAMW, 1, "%dx%d lr=1e-3 wd=0.01", R, C);
    o->in[0] = w; o->in[1] = gr; o->in[2] = m; o->in[3] = v;
    o->lr = 1e-3f; o->wd = 0.01f; o->beta1 = 0.9f; o->beta2 = 0.999f; o->eps = 1e-8f;
}

/* The ResNets' convolutions at full size: the training forward (no
 * epilogue), eval's folded forward (bias + ReLU; + residual where it closes
 * a block), the backward (dx but at the stem, which reads the f32 image),
 * and conv -> BN (GEN_STATS) for one shape of each kind. */
static void build_full_conv(suite *s)
{
    s->full = 1;
    for (int i = 0; i < NCONV_FULL; i++) {
        const convspec *c = &convs_full[i].c;
        int stem = i == 0;
        case_conv(s, c, 0, 0, ACT_NONE, stem);
        case_conv(s, c, 1, convs_full[i].close, ACT_RELU, stem);
        case_conv_bwd(s, c, 0, 0, !stem, stem);
    }
    static const int bn[] = {2, 4, 6, 8, 13, 19};
    for (size_t k = 0; k < sizeof bn / sizeof bn[0]; k++)
        case_conv_bn(s, &convs_full[bn[k]].c, k % 2 ? ACT_NONE : ACT_RELU);
    s->full = 0;
}

/* BERT-base's and BERT-large's ops at full size, batch 2, T = 128 (256 token
 * rows; the MLM head's 2 x 20 masked rows): the linears forward and
 * backward (the decoder's 30522 columns, not a multiple of 8), layer norm,
 * BERT-large's attention (T 128 with dropout, and 512), gather and
 * embedding (the 30522-token vocabulary), the loss over 30522 classes. */
static void build_full_bert(suite *s)
{
    s->full = 1;
    static const int widths[][2] = {{768, 3072}, {1024, 4096}}; /* C, the FFN's */
    for (int m = 0; m < 2; m++) {
        int C = widths[m][0], F = widths[m][1];
        case_linear(s, 256, C, C, 1, ACT_NONE);             /* query, key, value, attn_out */
        case_linear_gelu(s, 256, C, F, 1, ACT_GELU, 1);     /* ffn_in + the erf GELU */
        case_linear(s, 256, F, C, 1, ACT_NONE);             /* ffn_out */
        case_linear(s, 40, C, 30522, 1, ACT_NONE);          /* mlm.decoder */
        case_linear_bwd(s, 256, C, C, 1, 0, 1);
        case_linear_bwd(s, 256, C, F, 1, 0, 1);
        case_linear_bwd(s, 256, F, C, 1, 1, 1);             /* accumulating, as the residual's */
        case_linear_bwd(s, 40, C, 30522, 1, 1, 1);          /* dw adds to the embedding's */
        case_layernorm(s, 256, C, 0);
    }
    /* BERT-large's heads, BERT-base's at T = 512 (its 2 x 128 x 12 x 64
     * are among the flash cases of build(), with one head at T = 512), the
     * MLM rows */
    case_attention_flash(s, 2, 128, 16, 1024, 1, 0);
    case_attention_flash(s, 1, 512, 16, 1024, 0, 0);
    for (int drop = 0; drop < 2; drop++)
        case_attention_flash(s, 1, 512, 12, 768, drop, 0);
    case_gather(s, 2, 128, 20, 1024, 0);
    case_embed(s, 2, 128, 1024, 30522, 512, 2, 0);
    case_softmax_ce(s, 40, 30522, 0);
    s->full = 0;
}

static void build_cases(suite *s)
{
    /* conv -> BN training (GEN_STATS with MATRIX_ENGINE_BNSTATS=conv) */
    case_conv_bn(s, &convs[4], ACT_RELU);
    case_conv_bn(s, &convs[5], ACT_NONE);
    case_conv_bn(s, &convs[7], ACT_RELU);
    case_conv_bn(s, &convs[9], ACT_RELU);
    case_conv_bn(s, &convs[10], ACT_NONE);
    /* convolution: every shape without epilogue and with bias + residual + relu,
     * the others on some */
    for (int i = 0; i < NCONV; i++) {
        case_conv(s, &convs[i], 0, 0, ACT_NONE, 0);
        case_conv(s, &convs[i], 1, 1, ACT_RELU, 0);
        if (i % 2 == 0) {
            case_conv(s, &convs[i], 1, 0, ACT_NONE, 0);
            case_conv(s, &convs[i], 1, 0, ACT_RELU, 0);
        } else
            case_conv(s, &convs[i], 0, 1, ACT_RELU, 0);
    }
    /* the first convolution of each model reads the f32 input image */
    case_conv(s, &convs[0], 1, 0, ACT_NONE, 1);
    case_conv(s, &convs[2], 0, 0, ACT_NONE, 1);
    case_conv(s, &convs[3], 0, 0, ACT_NONE, 1);
    for (int i = 0; i < NCONV; i++) {
        int bias = i < 2; /* mnist's convolutions have a bias, the ResNets' none */
        case_conv_bwd(s, &convs[i], bias, 0, i != 0 && i != 2, 0);
        case_conv_bwd(s, &convs[i], bias, 1, 1, 0);
        if (i == 3)
            case_conv_bwd(s, &convs[i], 1, 0, 1, 0);
    }
    case_conv_bwd(s, &convs[0], 1, 0, 0, 1);
    case_conv_bwd(s, &convs[2], 0, 1, 0, 1);
    for (int i = 0; i < 2; i++)
        for (int train = 0; train < 2; train++) {
            case_bn(s, &bns[i], train, 0, ACT_NONE, 0);
            case_bn(s, &bns[i], train, 0, ACT_RELU, 0);
            case_bn(s, &bns[i], train, 1, ACT_RELU, 0);
            for (int relu = 0; relu < 3; relu++) {
                case_bn_bwd(s, &bns[i], train, 0, 1, 0, relu);
                case_bn_bwd(s, &bns[i], train, 1, 1, 0, relu);
            }
        }
    case_bn_bwd(s, &bns[0], 1, 0, 0, 0, 0);
    case_bn_bwd(s, &bns[1], 1, 0, 0, 0, 1);
    for (int i = 0; i < NBNEDGE; i++)
        for (int train = 0; train < 2; train++) {
            case_bn(s, &bns_edge[i], train, 0, ACT_NONE, 0);
            case_bn(s, &bns_edge[i], train, 1, ACT_RELU, 0);
            for (int relu = 0; relu < 3; relu++)
                case_bn_bwd(s, &bns_edge[i], train, relu == 1, 1, 0, relu);
        }
    for (int i = 0; s->syncbn && i < 2; i++) {
        case_bn(s, &bns[i], 1, 0, ACT_NONE, 1);
        case_bn(s, &bns[i], 1, 1, ACT_RELU, 1);
        case_bn_bwd(s, &bns[i], 1, i, 1, 1, i);
    }
    if (s->syncbn) { /* SyncBN over several blocks of partials per channel */
        case_bn(s, &bns_edge[2], 1, 0, ACT_RELU, 1);
        case_bn_bwd(s, &bns_edge[2], 1, 0, 1, 1, 2);
    }
    for (int acc = 0; acc < 2; acc++) {
        for (int i = 0; i < NEW; i++) {
            case_act(s, &ews[i], acc);
            case_add_copy(s, &ews[i], acc);
        }
        for (int i = 0; i < NPOOL; i++)
            case_maxpool(s, &pools[i], acc ? ACT_NONE : ACT_RELU, acc);
        case_avgpool(s, acc);
        case_flatten(s, acc);
        case_dropout2d(s, acc);
    }
    case_maxpool(s, &pools[1], ACT_NONE, 0);
    int full = !no_full_size && !s->selftest;
    if (full)
        build_full_conv(s);
    if (s->cf->layout != LAYOUT_NCHW)
        return;
    if (full)
        build_full_bert(s);
    case_linear(s, 8, 320, 50, 1, ACT_NONE);
    case_linear(s, 8, 320, 50, 1, ACT_RELU);
    case_linear(s, 8, 50, 10, 1, ACT_NONE);
    case_linear(s, 5, 128, 10, 0, ACT_NONE);
    case_linear(s, 3, 2048, 24, 1, ACT_NONE);
    case_linear_bwd(s, 8, 320, 50, 1, 0, 1);
    case_linear_bwd(s, 8, 320, 50, 1, 1, 1);
    case_linear_bwd(s, 8, 50, 10, 1, 0, 0);
    case_linear_bwd(s, 5, 128, 10, 0, 1, 1);
    case_linear_bwd(s, 3, 2048, 24, 1, 0, 1);
    /* sizes of 1, odd and prime sizes (1, 7, 33, 1000, 1001) in every role */
    case_linear(s, 1, 7, 33, 1, ACT_RELU);
    case_linear(s, 33, 1001, 7, 1, ACT_NONE);
    case_linear(s, 7, 1, 1000, 0, ACT_NONE);
    case_linear(s, 1001, 33, 1, 1, ACT_NONE);
    case_linear_bwd(s, 1, 7, 33, 1, 0, 1);
    case_linear_bwd(s, 33, 1001, 7, 1, 1, 1);
    case_linear_bwd(s, 7, 1000, 1, 0, 0, 1);
    case_linear_bwd(s, 1001, 33, 1, 1, 0, 1);
    case_linear_bwd(s, 7, 1, 1001, 1, 1, 1);
    /* the classifiers of the real models: resnet50 / resnet18 fc at batch 4 */
    case_linear(s, 4, 2048, 1000, 1, ACT_NONE);
    case_linear_bwd(s, 4, 2048, 1000, 1, 0, 1);
    case_linear_bwd(s, 4, 512, 1000, 1, 1, 1);
    /* GELU epilogues: the tanh form (cuBLASLt), the erf form (BERT's: kernel);
     * N = 64 / 3072 (GELU_AUX's multiple of 8) and 33 (not) */
    for (int pre = 0; pre < 2; pre++) {
        case_linear_gelu(s, 8, 32, 64, 1, ACT_GELU_TANH, pre);
        case_linear_gelu(s, 7, 33, 33, 1, ACT_GELU_TANH, pre);
        case_linear_gelu(s, 5, 16, 64, 0, ACT_GELU_TANH, pre);
        case_linear_gelu(s, 8, 32, 64, 1, ACT_GELU, pre);
    }
    case_linear_gelu(s, 16, 768, 3072, 1, ACT_GELU_TANH, 1); /* BERT-base's ffn_in */
    for (int acc = 0; acc < 2; acc++) {
        case_act_gelu(s, 7, 33, ACT_GELU_TANH, acc);
        case_act_gelu(s, 7, 33, ACT_GELU, acc);
    }
    /* the bias gradient of BERT-base's linears from the dw product (BGRADB) */
    case_linear_bwd(s, 16, 768, 3072, 1, 0, 1);
    case_linear_bwd(s, 16, 3072, 768, 1, 0, 1);
    for (int acc = 0; acc < 2; acc++) {
        case_logsoftmax(s, 8, 10, acc);
        case_nll(s, 16, 10, acc);
        case_dropout(s, 8, acc);
        case_dropout(s, 7, acc); /* 350 elements: a tail after the 8-wide vectors */
    }
    /* sizes of 1, odd, prime and wide (issue 11): one row of one class, a
     * 1001-wide row (more than a warp's 32 lanes a pass), more rows than the
     * NLL reduction's 256 threads */
    case_logsoftmax(s, 1, 1, 0);
    case_logsoftmax(s, 1, 1001, 0);
    case_logsoftmax(s, 33, 7, 1);
    case_nll(s, 1, 1, 0);
    case_nll(s, 1001, 10, 0);
    case_dropout(s, 1, 0);
    /* the optimizers: consecutive ops, as in a plan (ops.cu's first op of a
     * type updates the tensors of every op of that type) */
    case_sgd(s, 0.0f, 64, 9);
    case_sgd(s, 0.9f, 64, 9);
    case_sgd(s, 0.9f, 160, 129);
    case_sgd(s, 0.9f, 1, 1);     /* a tensor of one element: one chunk of 1 */
    case_sgd(s, 0.9f, 128, 128); /* exactly one chunk (16,384) */
    case_adamw(s, 64, 9);
    case_adamw(s, 160, 129);
    case_adamw(s, 1, 1);
    case_adamw(s, 1, 16385);     /* two chunks, the second of one element */
    case_ema(s);
    /* BERT's ops: odd and prime sizes, and a real row width (768) */
    for (int acc = 0; acc < 2; acc++) {
        case_embed(s, 3, 7, 24, 50, 16, 2, acc);
        case_layernorm(s, 5, 768, acc);
        case_layernorm(s, 33, 7, acc);
        case_attention(s, 2, 7, 2, 16, 0, acc);
        case_attention(s, 2, 33, 4, 64, 1, acc);
        case_gather(s, 3, 7, 2, 24, acc);
    }
    case_embed(s, 2, 128, 64, 1000, 512, 2, 0);
    /* more rows than one partial (the token-type table's 256, layer norm's
     * dgamma / dbeta 64), the last one short: the partials' combine; word
     * ids from 5, so runs of ~60 equal ids in the sorted scatter-add */
    for (int acc = 0; acc < 2; acc++) {
        case_embed(s, 3, 100, 64, 5, 512, 2, acc);
        case_layernorm(s, 129, acc ? 33 : 768, acc);
    }
    case_attention(s, 1, 128, 12, 768, 0, 0);
    /* one token, one head; an odd head width (d = 33) with dropout */
    case_attention(s, 1, 1, 1, 8, 0, 0);
    case_attention(s, 3, 7, 1, 33, 1, 1);
    case_layernorm(s, 1, 1, 0);
    case_layernorm(s, 1, 1001, 1);
    case_embed(s, 1, 1, 8, 1, 1, 1, 0); /* one token of a vocabulary of one */
    case_gather(s, 1, 1, 1, 1, 0);
    case_gather(s, 2, 128, 20, 768, 0); /* BERT-base's MLM rows at T = 128 */
    /* the MLM loss: one row of one class, a prime width, more rows than
     * the loss reduction's 256 threads, and BERT's 30522-token vocabulary */
    for (int acc = 0; acc < 2; acc++)
        case_softmax_ce(s, 7, 33, acc);
    case_softmax_ce(s, 1, 1, 0);
    case_softmax_ce(s, 2, 1001, 0); /* 2 rows: one row's scaled gradient, 65536 (1 - p), is beyond fp16 */
    case_softmax_ce(s, 300, 7, 0);
    case_softmax_ce(s, 5, 30522, 0);
    /* the flash form: odd sizes (d = 8, 16), BERT-base's heads (d = 64) at
     * T = 128, and one of them at T = 512 (the kernels' shared memory holds
     * T = 512 with d = 64; all 12 heads at T = 512 are a full-size case: on
     * the simulator they were 12 s of each precision's 20) */
    for (int drop = 0; drop < 2; drop++) { /* without, then with attention dropout */
        for (int acc = 0; acc < 2; acc++) {
            case_attention_flash(s, 2, 7, 2, 16, drop, acc);
            case_attention_flash(s, 2, 33, 4, 64, drop, acc);
        }
        case_attention_flash(s, 2, 128, 12, 768, drop, 0);
        case_attention_flash(s, 1, 512, 1, 64, drop, 0);
    }
}

/* ---- running and comparing --------------------------------------------------------- */

static int is_gemm(int type)
{
    return type == OP_CONV || type == OP_CONV_BWD || type == OP_LINEAR || type == OP_LINEAR_BWD;
}

static const tol *tol_for(const suite *s, const op *o)
{
    int type = o->type;
    if (type == OP_LINEAR && o->act == ACT_GELU_TANH &&
        (s->cf->prec == PREC_FP32 || s->cf->prec == PREC_TF32))
        return s->cf->prec == PREC_FP32 ? &tol_fp32_gelu_lt : &tol_tf32_gelu_lt;
    switch (s->cf->prec) {
    case PREC_TF32: return is_gemm(type) ? &tol_tf32_gemm : &tol_fp32;
    case PREC_FP16: return &tol_fp16;
    case PREC_BF16: return &tol_bf16;
    default: return &tol_fp32;
    }
}

/* The tensors an op writes: out[] and the ones it updates in place. */
typedef struct outs {
    int n;
    int t[GRAPH_MAX_OUT + 3];
    int slot[GRAPH_MAX_OUT + 3]; /* out[] slot, -1 for in place */
    int keep[GRAPH_MAX_OUT + 3]; /* 1: the old contents are read (acc or in place): not poisoned */
} outs;

static outs op_outs(const op *o)
{
    outs r;
    memset(&r, 0, sizeof r);
    for (int k = 0; k < GRAPH_MAX_OUT; k++)
        if (o->out[k] >= 0) {
            r.t[r.n] = o->out[k];
            r.slot[r.n] = k;
            r.keep[r.n++] = (o->acc >> k) & 1;
        }
    int inplace[3] = {-1, -1, -1};
    if (o->type == OP_BN) {
        inplace[0] = o->in[3];
        inplace[1] = o->in[4];
    } else if (o->type == OP_SGD) {
        inplace[0] = o->in[0];
        inplace[1] = o->in[2];
    } else if (o->type == OP_ADAMW) {
        inplace[0] = o->in[0];
        inplace[1] = o->in[2];
        inplace[2] = o->in[3];
    } else if (o->type == OP_EMA)
        inplace[0] = o->in[1];
    for (int k = 0; k < 3; k++)
        if (inplace[k] >= 0) {
            r.t[r.n] = inplace[k];
            r.slot[r.n] = -1;
            r.keep[r.n++] = 1;
        }
    return r;
}

/* The CPU backend's kernels take their scratch space from backend_ws. */
static void ensure_ws(size_t ws)
{
    if (ws > backend_ws_bytes) {
        free(backend_ws);
        backend_ws = xalloc(ws);
        backend_ws_bytes = ws;
    }
}

/* --self-test's spoilt device: the CPU op, then NaN bytes over the first
 * element of its first output (mode 1), the last element of its last output
 * (mode 2), or the first element of its first input (mode 3); every op must
 * then fail. */
static backend_op_fn real_ops[OP_COUNT];
static int sabotage_mode;

static void sabotaged_op(graph *g, op *o)
{
    real_ops[o->type](g, o);
    outs r = op_outs(o);
    int t = sabotage_mode == 1 ? r.t[0] : sabotage_mode == 2 ? r.t[r.n - 1] : o->in[0];
    size_t n = (size_t)graph_numel(&g->t[t]);
    memset((unsigned char *)g->t[t].data + (sabotage_mode == 2 ? (n - 1) * 4 : 0), 0xff, 4);
}

static void cpu_run(suite *s, int i)
{
    op *o = &s->gc.ops[i];
    ensure_ws(s->cpu.workspace(&s->gc, o));
    s->cpu.ops[o->type](&s->gc, o);
}

static void dev_upload(suite *s, int t)
{
    tinfo *q = &s->ti[t];
    if (q->cls == CL_I32)
        memcpy(q->hs, q->h, q->n * 4);
    else
        to_storage(s->g.t[t].dtype, q->h, q->hs, q->n);
    s->dev.upload(q->d, q->hs, q->dbytes);
}

/* Device values of t as f32 (i32 stays i32) into out. */
static void dev_download(suite *s, int t, float *out)
{
    tinfo *q = &s->ti[t];
    s->dev.download(q->hs, q->d, q->dbytes);
    if (q->cls == CL_I32)
        memcpy(out, q->hs, q->n * 4);
    else
        from_storage(s->g.t[t].dtype, q->hs, out, q->n);
    if (s->selftest && q->cls == CL_ACT) /* as if stored in the half type */
        for (size_t j = 0; j < q->n; j++)
            out[j] = quant(s->val_dt, out[j]);
}

/* Round the CPU's values of t to its storage type (so that both sides go on
 * from the same numbers) and upload them over the device's. */
static void propagate(suite *s, int t)
{
    tinfo *q = &s->ti[t];
    if (q->cls == CL_ACT)
        for (size_t j = 0; j < q->n; j++)
            q->h[j] = quant(s->val_dt, q->h[j]);
    dev_upload(s, t);
}

static void poison(suite *s, int t)
{
    tinfo *q = &s->ti[t];
    memset(q->h, 0xff, q->n * 4);
    memset(q->hs, 0xff, q->dbytes);
    s->dev.upload(q->d, q->hs, q->dbytes);
}

/* Magnitude of each out[] slot of op i: for conv / linear and their backward
 * the largest element of the same op run on |inputs| (and |old contents| of
 * accumulated outputs), that is the largest sum of |terms|; else 0 (the
 * caller uses the largest |ref|). */
static void magnitude(suite *s, int i, double M[GRAPH_MAX_OUT])
{
    op *o = &s->gc.ops[i];
    void *saved_in[GRAPH_MAX_IN], *saved_out[GRAPH_MAX_OUT];
    float *tmp_in[GRAPH_MAX_IN] = {0}, *tmp_out[GRAPH_MAX_OUT] = {0};
    for (int k = 0; k < GRAPH_MAX_OUT; k++)
        M[k] = 0;
    if (!is_gemm(o->type))
        return;
    for (int k = 0; k < GRAPH_MAX_IN; k++) {
        int t = o->in[k];
        if (t < 0 || s->ti[t].cls == CL_I32)
            continue;
        saved_in[k] = s->gc.t[t].data;
        tmp_in[k] = xalloc(s->ti[t].n * 4);
        for (size_t j = 0; j < s->ti[t].n; j++)
            tmp_in[k][j] = fabsf(s->ti[t].h[j]);
        s->gc.t[t].data = tmp_in[k];
    }
    for (int k = 0; k < GRAPH_MAX_OUT; k++) {
        int t = o->out[k];
        if (t < 0)
            continue;
        saved_out[k] = s->gc.t[t].data;
        tmp_out[k] = xalloc(s->ti[t].n * 4);
        if ((o->acc >> k) & 1)
            for (size_t j = 0; j < s->ti[t].n; j++)
                tmp_out[k][j] = fabsf(s->ti[t].h[j]);
        s->gc.t[t].data = tmp_out[k];
    }
    cpu_run(s, i);
    for (int k = 0; k < GRAPH_MAX_OUT; k++) {
        int t = o->out[k];
        if (t < 0)
            continue;
        for (size_t j = 0; j < s->ti[t].n; j++)
            if (tmp_out[k][j] > M[k])
                M[k] = tmp_out[k][j];
        s->gc.t[t].data = saved_out[k];
        free(tmp_out[k]);
    }
    for (int k = 0; k < GRAPH_MAX_IN; k++)
        if (tmp_in[k]) {
            s->gc.t[o->in[k]].data = saved_in[k];
            free(tmp_in[k]);
        }
}

/* The comparison of one op: the worst element over its outputs. */
typedef struct verdict {
    double max_err;   /* largest |dev - ref| */
    double ratio;     /* largest |dev - ref| / (atol M + rtol |ref|): pass <= 1 */
    int bad;          /* elements out of tolerance, NaN included */
    int nan;          /* NaN / inf elements in the device output */
    char worst[GRAPH_NAME + 48]; /* tensor and element of the worst ratio */
    char note[160];
} verdict;

static void compare_f32(const char *name, const float *dev, const float *ref, size_t n, double M,
                        const tol *tl, verdict *v)
{
    double m = M;
    if (m <= 0)
        for (size_t j = 0; j < n; j++)
            if (fabs(ref[j]) > m)
                m = fabs(ref[j]);
    for (size_t j = 0; j < n; j++) {
        double d = dev[j], r = ref[j];
        double err = fabs(d - r), lim = tl->atol * m + tl->rtol * fabs(r);
        double ratio = lim > 0 ? err / lim : err > 0 ? INFINITY : 0;
        if (!isfinite(d) || !isfinite(r)) {
            v->nan += !isfinite(d);
            err = INFINITY;
            ratio = INFINITY;
        }
        if (ratio > 1)
            v->bad++;
        if (err > v->max_err)
            v->max_err = err;
        if (ratio > v->ratio || !v->worst[0]) {
            v->ratio = ratio > v->ratio ? ratio : v->ratio;
            snprintf(v->worst, sizeof v->worst, "%s[%zu] dev %.7g ref %.7g", name, j, d, r);
        }
    }
}

/* Max-pool argmax: equal, or both positions hold the maximum (a tie). */
static void compare_argmax(suite *s, const op *o, const int32_t *dev, const int32_t *ref, verdict *v)
{
    const tensor *x = &s->gc.t[o->in[0]], *y = &s->gc.t[o->out[1]];
    const float *xv = s->ti[o->in[0]].h;
    long N = x->shape[0], C = x->shape[1], HW = x->shape[2] * x->shape[3];
    long OHW = y->shape[2] * y->shape[3];
    int nhwc = x->layout == LAYOUT_NHWC, ties = 0;
    for (long j = 0; j < N * C * OHW; j++) {
        if (dev[j] == ref[j])
            continue;
        long n, c;
        if (nhwc) {
            n = j / (OHW * C);
            c = j % C;
        } else {
            n = j / (C * OHW);
            c = (j / OHW) % C;
        }
        long a = ref[j], b = dev[j];
        if (b >= 0 && b < HW) {
            float va = nhwc ? xv[(n * HW + a) * C + c] : xv[(n * C + c) * HW + a];
            float vb = nhwc ? xv[(n * HW + b) * C + c] : xv[(n * C + c) * HW + b];
            if (va == vb) {
                ties++;
                continue;
            }
        }
        if (v->bad++ == 0)
            snprintf(v->worst, sizeof v->worst, "argmax[%ld] dev %ld ref %ld", j, b, a);
        v->ratio = INFINITY;
    }
    if (ties)
        snprintf(v->note + strlen(v->note), sizeof v->note - strlen(v->note), " argmax ties %d", ties);
}

static int exact_equal(const float *a, const float *b, size_t n)
{
    return memcmp(a, b, n * 4) == 0;
}

/* Compare the outputs of op i; dev[k] holds the device values of out slot k. */
static void compare_outs(suite *s, int i, const outs *r, float **devv, const double *M, verdict *v)
{
    op *o = &s->gc.ops[i];
    const tol *tl = tol_for(s, o);
    for (int k = 0; k < r->n; k++) {
        int t = r->t[k];
        if (o->type == OP_MAXPOOL && r->slot[k] == 1) {
            compare_argmax(s, o, (const int32_t *)devv[k], (const int32_t *)s->ti[t].h, v);
            continue;
        }
        if (o->type == OP_DROPOUT && r->slot[k] == 1) {
            if (!exact_equal(devv[k], s->ti[t].h, s->ti[t].n)) {
                v->bad++;
                v->ratio = INFINITY;
                snprintf(v->worst, sizeof v->worst, "mask differs from the CPU's");
            }
            continue;
        }
        compare_f32(s->g.t[t].name, devv[k], s->ti[t].h, s->ti[t].n,
                    r->slot[k] >= 0 ? M[r->slot[k]] : 0, tl, v);
    }
}

typedef struct snapshot {
    int n;
    int t[GRAPH_MAX_OUT + 3];
    float *h[GRAPH_MAX_OUT + 3];
} snapshot;

static void snap_take(suite *s, const outs *r, snapshot *sn)
{
    sn->n = 0;
    for (int k = 0; k < r->n; k++) {
        int t = r->t[k];
        sn->t[sn->n] = t;
        sn->h[sn->n] = xalloc(s->ti[t].n * 4);
        memcpy(sn->h[sn->n++], s->ti[t].h, s->ti[t].n * 4);
    }
}

static void snap_restore(suite *s, const snapshot *sn)
{
    for (int k = 0; k < sn->n; k++)
        memcpy(s->ti[sn->t[k]].h, sn->h[k], s->ti[sn->t[k]].n * 4);
}

static void snap_free(snapshot *sn)
{
    for (int k = 0; k < sn->n; k++)
        free(sn->h[k]);
    sn->n = 0;
}

/* The CPU reference of op i, for the ops whose reference depends on what the
 * device did: dropout (the device's step counter), SGD (step counter, loss
 * scale), NLL_BWD (loss scale). Runs the candidates from the snapshot and
 * keeps the first that matches; returns the verdict of the chosen one. */
static verdict cpu_candidates(suite *s, int i, const outs *r, float **devv, const double *M,
                              const snapshot *sn)
{
    op *o = &s->gc.ops[i];
    verdict best;
    memset(&best, 0, sizeof best);
    best.ratio = INFINITY;
    int steps[20], nsteps = 0;
    double scales[2] = {1.0, 1.0};
    int nscales = 1;
    int stepdep = o->type == OP_DROPOUT || o->type == OP_ATTENTION || o->type == OP_ATTENTION_BWD;
    int optim = o->type == OP_SGD || o->type == OP_ADAMW;
    if (stepdep) {
        steps[nsteps++] = s->dev_step >= 0 ? s->dev_step : s->g.step;
        for (int k = 0; k <= 16; k++)
            if (k != steps[0])
                steps[nsteps++] = k;
    } else if (optim) {
        if (s->dev_step >= 0)
            steps[nsteps++] = s->dev_step;
        else {
            steps[nsteps++] = 1; /* first step: buf = g */
            steps[nsteps++] = 2; /* later steps: momentum */
        }
        if (s->loss_scale != 1.0) {
            scales[nscales++] = 1.0 / s->loss_scale;
        }
    } else
        steps[nsteps++] = s->g.step;
    int chosen_step = steps[0];
    double chosen_scale = 1.0;
    for (int a = 0; a < nsteps; a++)
        for (int b = 0; b < nscales; b++) {
            verdict v;
            memset(&v, 0, sizeof v);
            snap_restore(s, sn);
            s->gc.step = steps[a];
            float *gsave = NULL;
            if (optim && scales[b] != 1.0) {
                tinfo *q = &s->ti[o->in[1]];
                gsave = xalloc(q->n * 4);
                memcpy(gsave, q->h, q->n * 4);
                for (size_t j = 0; j < q->n; j++)
                    q->h[j] = (float)(q->h[j] * scales[b]);
            }
            for (int k = 0; k < r->n; k++)
                if (!r->keep[k])
                    memset(s->ti[r->t[k]].h, 0xff, s->ti[r->t[k]].n * 4);
            cpu_run(s, i);
            if (gsave) {
                memcpy(s->ti[o->in[1]].h, gsave, s->ti[o->in[1]].n * 4);
                free(gsave);
            }
            compare_outs(s, i, r, devv, M, &v);
            if (v.ratio < best.ratio || a + b == 0) {
                best = v;
                chosen_step = steps[a];
                chosen_scale = scales[b];
            }
            if (v.ratio <= 1)
                goto done;
        }
done:
    /* leave the chosen reference in the host buffers */
    snap_restore(s, sn);
    s->gc.step = chosen_step;
    if (optim && chosen_scale != 1.0) {
        tinfo *q = &s->ti[o->in[1]];
        for (size_t j = 0; j < q->n; j++)
            q->h[j] = (float)(q->h[j] * chosen_scale);
    }
    for (int k = 0; k < r->n; k++)
        if (!r->keep[k])
            memset(s->ti[r->t[k]].h, 0xff, s->ti[r->t[k]].n * 4);
    cpu_run(s, i);
    s->gc.step = s->g.step;
    if (stepdep) {
        if (best.ratio <= 1) {
            if (s->dev_step < 0)
                s->dev_step = chosen_step;
            snprintf(best.note + strlen(best.note), sizeof best.note - strlen(best.note),
                     " mask of step %d", chosen_step);
        } else
            snprintf(best.note + strlen(best.note), sizeof best.note - strlen(best.note),
                     " no CPU mask of steps 0-16 matches");
    }
    if (optim)
        snprintf(best.note + strlen(best.note), sizeof best.note - strlen(best.note),
                 " %s%s", chosen_step == 1 ? "first step" : "a later step",
                 chosen_scale != 1.0 ? ", gradient unscaled by the loss scale" : "");
    return best;
}

/* NLL_BWD with fp16 training may hold the loss gradient times the loss scale:
 * find it (a power of two) and scale the reference. */
static void nll_bwd_scale(suite *s, int i, const outs *r, float **devv, const snapshot *sn)
{
    op *o = &s->gc.ops[i];
    tinfo *q = &s->ti[o->out[0]];
    const float *old = o->acc & 1 ? sn->h[0] : NULL;
    size_t jmax = 0;
    double gmax = 0;
    for (size_t j = 0; j < q->n; j++) {
        double g = q->h[j] - (old ? old[j] : 0.0);
        if (fabs(g) > gmax) {
            gmax = fabs(g);
            jmax = j;
        }
    }
    (void)r;
    if (gmax == 0 || !isfinite(devv[0][jmax]))
        return;
    double ratio = (devv[0][jmax] - (old ? old[jmax] : 0.0)) / (q->h[jmax] - (old ? old[jmax] : 0.0));
    if (!(ratio > 0))
        return;
    double p2 = exp2(round(log2(ratio)));
    if (fabs(ratio / p2 - 1) > 1e-3)
        return; /* not a power of two: compared unscaled, and fails */
    if (p2 == 1.0)
        return;
    if (s->loss_scale == 1.0)
        s->loss_scale = p2;
    for (size_t j = 0; j < q->n; j++) {
        double base = old ? old[j] : 0.0;
        q->h[j] = (float)(base + (q->h[j] - base) * p2);
    }
}

/* The device copies of op i's inputs (not written by it) still hold what
 * was uploaded: a kernel that used an input as scratch shows here. SGD's
 * gradient is exempt: fp16 training unscales it in place. */
static void check_inputs(suite *s, int i, const outs *r, verdict *v)
{
    const op *o = &s->g.ops[i];
    for (int k = 0; k < GRAPH_MAX_IN; k++) {
        int t = o->in[k], written = 0;
        if (t < 0 || ((o->type == OP_SGD || o->type == OP_ADAMW) && k == 1))
            continue;
        for (int j = 0; j < r->n; j++)
            written |= r->t[j] == t;
        for (int j = 0; j < k; j++)
            written |= o->in[j] == t; /* checked once */
        if (written)
            continue;
        tinfo *q = &s->ti[t];
        void *now = xalloc(q->dbytes);
        s->dev.download(now, q->d, q->dbytes);
        if (memcmp(now, q->hs, q->dbytes) != 0) {
            v->bad++;
            v->ratio = INFINITY;
            snprintf(v->worst, sizeof v->worst, "input in[%d] %s was modified", k, s->g.t[t].name);
        }
        free(now);
    }
}

static void print_line(suite *s, int i, const verdict *v, int setup)
{
    const op *o = &s->g.ops[i];
    int pass = v->ratio <= 1 && v->bad == 0;
    const char *layout = "row"; /* the layout of the op's first 4-D tensor, if any */
    for (int k = 0; k < GRAPH_MAX_IN + GRAPH_MAX_OUT; k++) {
        int t = k < GRAPH_MAX_IN ? o->in[k] : o->out[k - GRAPH_MAX_IN];
        if (t >= 0 && s->g.t[t].ndim == 4 && s->g.t[t].layout != LAYOUT_ROW) {
            layout = LN(s);
            break;
        }
    }
    if (pass && (s->quiet || setup))
        return;
    printf("%s %-16s %-4s %-4s max_err %-10.3e err/tol %-9.3g %s%s%s%s", pass ? "PASS" : "FAIL",
           graph_op_name(o->type), layout, s->prec_name, v->max_err, v->ratio, s->oi[i].label,
           s->cf->search ? " [search]" : "", setup ? " [setup]" : "", v->note);
    if (!pass)
        printf(" | %d bad, %d NaN/inf; worst %s", v->bad, v->nan, v->worst);
    printf("\n");
}

/* 1 when op i's name or case contains text (NULL: any) */
static int names(const suite *s, int i, const char *text)
{
    return !text || strstr(graph_op_name(s->g.ops[i].type), text) || strstr(s->oi[i].label, text);
}

/* 1 when op i passes --op and its configuration's own filter (both, where
 * both are set: --op full-size in fp16-nhwc-bnstats-conv is the full-size
 * genstats cases) */
static int matches(const suite *s, int i)
{
    return names(s, i, s->only) && names(s, i, s->cf->only);
}

/* 1 when --op or the configuration names ops: the others do not run */
static int filtered(const suite *s) { return s->only || s->cf->only; }

/* With --op: 1 for the ops it names, 2 (run, printed only when failing) for
 * the forward of a named backward and for the ops that find the device's
 * step counter and loss scale (dropout, NLL backward), 0 for the others. */
static int selected(const suite *s, int i)
{
    const op *o = &s->g.ops[i];
    if (!filtered(s) || matches(s, i))
        return 1;
    if (i + 1 < s->g.nops && s->g.ops[i + 1].fwd == i && matches(s, i + 1))
        return 2;
    /* the conv whose y a named BN (or the BN of a named backward) reads:
     * with MATRIX_ENGINE_BNSTATS=conv it computes that BN's sums */
    if (o->type == OP_CONV && i + 1 < s->g.nops && s->g.ops[i + 1].type == OP_BN &&
        s->g.ops[i + 1].in[0] == o->out[0] &&
        (matches(s, i + 1) ||
         (i + 2 < s->g.nops && s->g.ops[i + 2].fwd == i + 1 && matches(s, i + 2))))
        return 2;
    if (o->type == OP_SGD || o->type == OP_ADAMW) { /* the first of its type updates all */
        int first = 1, later = 0;
        for (int j = 0; j < s->g.nops; j++)
            if (s->g.ops[j].type == o->type) {
                first &= j >= i;
                later |= j > i && matches(s, j);
            }
        return first && later ? 2 : 0;
    }
    return o->type == OP_DROPOUT || o->type == OP_NLL_BWD ? 2 : 0;
}

/* With --op or a configuration's own filter, before anything is allocated
 * or prepared: the graph cut to the ops selected() runs, plus the forward
 * of each backward kept (the backends read attributes there; kept, not
 * run), in their order, backward ops' fwd renumbered; the tensors no op
 * left uses get no storage (tused). prepare then searches and verifies the algorithms of
 * these ops only (preparing every case took about 13 s a configuration on
 * the simulator, whatever --op named), and the conv -> BN pairs that
 * bnstats_check expects are those kept whole. Without a filter every op runs. */
static void keep_selected(suite *s)
{
    graph *g = &s->g;
    int n = g->nops, j = 0;
    s->tused = xalloc((size_t)g->nt);
    for (int i = 0; i < n; i++)
        s->oi[i].sel = selected(s, i);
    if (!filtered(s)) {
        memset(s->tused, 1, (size_t)g->nt);
        return;
    }
    int *map = xalloc((size_t)n * sizeof *map);
    for (int i = n - 1; i >= 0; i--) /* a forward comes before its backward */
        if (s->oi[i].sel && g->ops[i].fwd >= 0 && !s->oi[g->ops[i].fwd].sel)
            s->oi[g->ops[i].fwd].sel = -1;
    for (int i = 0; i < n; i++) {
        map[i] = -1;
        if (!s->oi[i].sel)
            continue;
        map[i] = j;
        g->ops[j] = g->ops[i];
        s->oi[j] = s->oi[i];
        if (s->oi[j].sel < 0)
            s->oi[j].sel = 0;
        j++;
    }
    g->nops = j;
    for (int i = 0; i < j; i++) {
        op *o = &g->ops[i];
        if (o->fwd >= 0)
            o->fwd = map[o->fwd];
        for (int k = 0; k < GRAPH_MAX_IN; k++)
            if (o->in[k] >= 0)
                s->tused[o->in[k]] = 1;
        for (int k = 0; k < GRAPH_MAX_OUT; k++)
            if (o->out[k] >= 0)
                s->tused[o->out[k]] = 1;
    }
    s->nconvbn = 0;
    for (int i = 0; i < j; i++) {
        const op *c = &g->ops[i];
        if (c->type != OP_CONV || !strstr(s->oi[i].label, "(genstats: conv -> bn)"))
            continue;
        for (int k = i + 1; k < j; k++)
            if (g->ops[k].type == OP_BN && g->ops[k].in[0] == c->out[0]) {
                s->nconvbn++;
                break;
            }
    }
    free(map);
}

/* The value of "key=" in the module's result lines, -1 when absent. */
static long info_key(const char *info, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = info; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, key, n) && p[n] == '=')
            return strtol(p + n + 1, NULL, 10);
    return -1;
}

/* MATRIX_ENGINE_BNSTATS did what it says, from the module's result lines
 * after prepare: separate, no GEN_STATS convolution; conv (NHWC), every
 * conv -> BN case paired (GEN_STATS taken, or fallen back: printed, as
 * cuDNN may have no engine for a type), and in fp16 at least one taken:
 * with none, the conv cases would compare the separate path twice and pass
 * without having run GEN_STATS (model_check.sh's bnstats_check wants the
 * same: cuDNN's runtime fusion has conv -> genstats for fp16 NHWC on
 * sm_80+). 0, or 1 printed as FAIL. */
static int bnstats_check(suite *s)
{
    const char *info = s->dev.info ? s->dev.info() : "";
    long ops = info_key(info, "conv_genstats_ops"), fb = info_key(info, "conv_genstats_fallback");
    int on = !strcmp(s->cf->bnstats, "conv");
    long want = on && s->cf->layout == LAYOUT_NHWC ? s->nconvbn : 0;
    int vacuous = on && want > 0 && ops == 0 && s->cf->prec == PREC_FP16;
    int ok = strstr(info, on ? "conv_bnstats=conv\n" : "conv_bnstats=separate\n") != NULL &&
             ops >= 0 && fb >= 0 && ops + fb == want && (on || ops == 0) && !vacuous;
    printf("%s genstats %s: MATRIX_ENGINE_BNSTATS=%s: conv_genstats_ops=%ld "
           "conv_genstats_fallback=%ld (conv -> BN pairs expected: %ld)%s\n",
           ok ? "PASS" : "FAIL", s->cf->name, s->cf->bnstats, ops, fb, want,
           vacuous ? "; none took GEN_STATS in fp16: nothing of it was checked" : "");
    if (ok)
        s->pass++;
    return !ok;
}

/* 1 when op o of g is a SyncBN op: a forward with sync, a backward of one. */
static int op_syncs(const graph *g, const op *o)
{
    if (o->type == OP_BN)
        return o->sync;
    return o->type == OP_BN_BWD && o->fwd >= 0 && g->ops[o->fwd].sync;
}

/* SyncBN op i on the device without its sync: its outputs' device bytes
 * into twin[k], then every output back to its bytes before the call. */
static void sync_twin(suite *s, int i, const outs *r, void **twin)
{
    op *od = &s->g.ops[i];
    int *flag = od->type == OP_BN ? &od->sync : &s->g.ops[od->fwd].sync;
    void *before[GRAPH_MAX_OUT + 3];
    for (int k = 0; k < r->n; k++) {
        tinfo *q = &s->ti[r->t[k]];
        before[k] = xalloc(q->dbytes);
        twin[k] = xalloc(q->dbytes);
        s->dev.download(before[k], q->d, q->dbytes);
    }
    *flag = 0;
    s->dev.ops[od->type](&s->g, od);
    s->dev.sync();
    *flag = 1;
    for (int k = 0; k < r->n; k++) {
        tinfo *q = &s->ti[r->t[k]];
        s->dev.download(twin[k], q->d, q->dbytes);
        s->dev.upload(q->d, before[k], q->dbytes);
        free(before[k]);
    }
}

/* After the synchronised run (outputs' device bytes in hs): equal to the
 * twin's bit for bit; frees twin. */
static void sync_compare(suite *s, const outs *r, void **twin, verdict *v)
{
    for (int k = 0; k < r->n; k++) {
        tinfo *q = &s->ti[r->t[k]];
        if (memcmp(q->hs, twin[k], q->dbytes) != 0) {
            v->bad++;
            v->ratio = INFINITY;
            snprintf(v->worst, sizeof v->worst, "%.*s synced (1 rank) != unsynced", GRAPH_NAME - 1,
                     s->g.t[r->t[k]].name);
        }
        free(twin[k]);
    }
    if (!v->bad)
        snprintf(v->note + strlen(v->note), sizeof v->note - strlen(v->note),
                 " (= unsynchronised, bit for bit)");
}

static void run_op(suite *s, int i, int setup)
{
    op *oc = &s->gc.ops[i], *od = &s->g.ops[i];
    outs r = op_outs(oc);
    double M[GRAPH_MAX_OUT];
    float *devv[GRAPH_MAX_OUT + 3];
    snapshot sn;
    verdict v;
    memset(&v, 0, sizeof v);

    magnitude(s, i, M);
    for (int k = 0; k < r.n; k++)
        if (!r.keep[k])
            poison(s, r.t[k]);
    snap_take(s, &r, &sn);
    /* the device first: its result decides between the CPU candidates */
    if (s->selftest)
        ensure_ws(s->cpu.workspace(&s->g, od));
    void *twin[GRAPH_MAX_OUT + 3];
    int syncs = op_syncs(&s->g, od);
    if (syncs)
        sync_twin(s, i, &r, twin);
    s->dev.ops[od->type](&s->g, od);
    s->dev.sync();
    for (int k = 0; k < r.n; k++) {
        devv[k] = xalloc(s->ti[r.t[k]].n * 4);
        dev_download(s, r.t[k], devv[k]);
    }
    verdict vs;
    memset(&vs, 0, sizeof vs);
    if (syncs)
        sync_compare(s, &r, twin, &vs);
    verdict vin;
    memset(&vin, 0, sizeof vin);
    check_inputs(s, i, &r, &vin);
    if (vin.bad) /* a spoilt input (an id of -1...) must not reach the later ops */
        for (int k = 0; k < GRAPH_MAX_IN; k++)
            if (oc->in[k] >= 0)
                dev_upload(s, oc->in[k]);
    if (oc->type == OP_DROPOUT || oc->type == OP_SGD || oc->type == OP_ADAMW ||
        (oc->type == OP_ATTENTION && oc->out[2] >= 0) ||
        (oc->type == OP_ATTENTION_BWD && oc->out[3] >= 0)) /* flash form: keep flags drawn again */
        v = cpu_candidates(s, i, &r, devv, M, &sn);
    else {
        cpu_run(s, i);
        int lossb = oc->type == OP_NLL_BWD || oc->type == OP_SOFTMAX_CE_BWD;
        if (lossb && !s->selftest)
            nll_bwd_scale(s, i, &r, devv, &sn);
        compare_outs(s, i, &r, devv, M, &v);
        if (lossb && s->loss_scale != 1.0)
            snprintf(v.note, sizeof v.note, " loss scale %g", s->loss_scale);
    }
    if (vin.bad) {
        v.bad += vin.bad;
        v.ratio = INFINITY;
        snprintf(v.worst, sizeof v.worst, "%s", vin.worst);
    }
    if (vs.bad) {
        v.bad += vs.bad;
        v.ratio = INFINITY;
        snprintf(v.worst, sizeof v.worst, "%s", vs.worst);
    } else if (syncs)
        snprintf(v.note + strlen(v.note), sizeof v.note - strlen(v.note), "%s", vs.note);
    int pass = v.ratio <= 1 && v.bad == 0;
    if (pass)
        s->pass++;
    else
        s->fail++;
    if (s->sabotage) {
        if (pass && s->passed_anyway++ < 10)
            printf("FAIL self-test: %s %s passes with a spoilt %s\n", graph_op_name(od->type),
                   s->oi[i].label, s->sabotage == 1 ? "first output" : s->sabotage == 2 ? "last output" : "input");
    } else
        print_line(s, i, &v, setup || !s->oi[i].subject);
    for (int k = 0; k < r.n; k++) {
        propagate(s, r.t[k]);
        free(devv[k]);
    }
    snap_free(&sn);
}

/* ---- one configuration ------------------------------------------------------------- */

static void fill_tensor(suite *s, int t)
{
    tinfo *q = &s->ti[t];
    uint64_t key = rng_mix(s->seed * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)t << 20) ^ 0x6f7073ULL);
    if (q->fill == 3) { /* each row: the first m of a shuffle of 0..hi-1 */
        int32_t *v = (int32_t *)q->h;
        size_t m = (size_t)s->g.t[t].shape[1], T = (size_t)q->hi;
        int32_t *perm = (int32_t *)xalloc(T * sizeof *perm);
        for (size_t r = 0; r * m < q->n; r++) {
            for (size_t j = 0; j < T; j++)
                perm[j] = (int32_t)j;
            for (size_t j = 0; j < m; j++) {
                size_t k = j + (size_t)(rng_uniform(key, r * T + j) * (double)(T - j));
                k = k >= T ? T - 1 : k;
                int32_t x = perm[j];
                perm[j] = perm[k];
                perm[k] = x;
                v[r * m + j] = perm[j];
            }
        }
        free(perm);
        return;
    }
    if (q->fill == 2) {
        int32_t *v = (int32_t *)q->h;
        for (size_t j = 0; j < q->n; j++) {
            int l = (int)(rng_uniform(key, j) * q->hi);
            v[j] = l >= (int)q->hi ? (int)q->hi - 1 : l;
        }
        return;
    }
    for (size_t j = 0; j < q->n; j++) {
        float v = q->lo + (q->hi - q->lo) * rng_uniform(key, j);
        if (q->cls == CL_ACT || q->cls == CL_W)
            v = quant(s->val_dt, v);
        q->h[j] = v;
    }
}

/* The SyncBN cases' communicator: one rank, this process. A collective of
 * one rank leaves its buffer as it is, a broadcast from rank 0 too. */
static int one_allreduce(void *buf, size_t n, int type, int how)
{
    (void)buf, (void)n, (void)type, (void)how;
    return 0;
}
static int one_iallreduce(void *buf, size_t n, int type, int how, int *req)
{
    *req = 0;
    return one_allreduce(buf, n, type, how);
}
static int one_wait(int req) { return req; }
static int one_bcast(void *buf, size_t bytes, int root)
{
    (void)buf, (void)bytes;
    return root; /* 0: rank 0 is this process */
}
static void one_noop(void) {}
static comm one_rank = {0, 1, 0, "one rank", "", one_allreduce, one_iallreduce, one_wait,
                        one_bcast, one_noop, one_noop, 0.0};

static void dev_noop(void) {}
static int dev_init_noop(int threads) { (void)threads; return 0; }
static void *host_alloc(size_t bytes) { return xalloc(bytes); }
static void host_free(void *p, size_t bytes) { (void)bytes; free(p); }
static void host_copy(void *dst, const void *src, size_t n) { memcpy(dst, src, n); }

/* What a child exits with when it reported its failures itself (a CUDA error
 * ends it through cu_fail with exit 1, a crash with a signal). */
#define CHILD_FAILED 3

/* Run every case of configuration cf; returns 0 all passed, CHILD_FAILED a
 * failure (printed), 77 skip. */
static int run_config(const config *cf, const char *module, int selftest, int sabotage,
                      int quiet, const char *only, uint64_t seed)
{
    suite S, *s = &S;
    memset(s, 0, sizeof *s);
    s->cf = cf;
    s->prec_name = prec_names[cf->prec];
    s->act_dt = (cf->prec == PREC_FP16 || cf->prec == PREC_BF16) && !selftest
                    ? (cf->prec == PREC_FP16 ? DT_F16 : DT_BF16)
                    : DT_F32;
    s->val_dt = cf->prec == PREC_FP16 ? DT_F16 : cf->prec == PREC_BF16 ? DT_BF16 : DT_F32;
    s->selftest = selftest;
    s->sabotage = sabotage;
    s->quiet = quiet || sabotage;
    s->only = only;
    s->seed = seed;
    s->dev_step = -1;
#ifdef HAVE_NCCL
    s->syncbn = 1;
#else
    s->syncbn = selftest; /* the module refuses SyncBN without NCCL */
#endif
    if (s->syncbn)
        engine_comm = &one_rank;
    s->loss_scale = 1.0;

    backend_cpu_setup(&s->cpu);
    if (selftest) {
        s->dev = s->cpu;
        s->dev.name = "cpu-as-device";
        s->dev.init = dev_init_noop;
        s->dev.fini = dev_noop;
        s->dev.alloc = host_alloc;
        s->dev.free = host_free;
        s->dev.upload = host_copy;
        s->dev.download = host_copy;
        if (sabotage) {
            memcpy(real_ops, s->cpu.ops, sizeof real_ops);
            sabotage_mode = sabotage;
            for (int k = 0; k < OP_COUNT; k++)
                if (s->dev.ops[k])
                    s->dev.ops[k] = sabotaged_op;
        }
    } else {
        char err[512] = "";
        void *h = dlopen(module, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *e = dlerror();
            if (e && strstr(e, "undefined symbol")) {
                printf("FAIL %s: %s (the module needs a symbol this program lacks)\n", cf->name, e);
                return CHILD_FAILED;
            }
            printf("SKIP: cannot load the CUDA backend: %s\n", e ? e : module);
            return 77;
        }
        backend_cuda_setup_fn setup;
        *(void **)(&setup) = dlsym(h, BACKEND_CUDA_SETUP);
        if (!setup) {
            printf("FAIL %s: %s has no %s\n", cf->name, module, BACKEND_CUDA_SETUP);
            return CHILD_FAILED;
        }
        point pt;
        memset(&pt, 0, sizeof pt);
        pt.model = "ops_check";
        pt.train = 1;
        pt.batch = 4;
        pt.seq_len = 128;
        pt.precision = cf->prec;
        pt.channels_last = cf->layout == LAYOUT_NHWC;
        pt.cudnn_benchmark = cf->search;
        pt.compile = cf->search ? COMPILE_MAX_AUTOTUNE : COMPILE_NONE;
        pt.gpus = 1;
        pt.threads = 1;
        pt.device = DEV_CUDA;
        pt.seed = seed;
        pt.plan_cache = "off"; /* every check searches and verifies afresh */
        memset(&s->dev, 0, sizeof s->dev);
        if (setup(&s->dev, &pt, err, sizeof err)) {
            printf("SKIP: no GPU: the CUDA backend cannot run here: %s\n",
                   err[0] ? err : "backend_cuda_setup failed without a reason");
            return 77;
        }
        if (s->dev.init(1)) {
            printf("FAIL %s: the CUDA backend's init failed\n", cf->name);
            return CHILD_FAILED;
        }
    }
    /* the reference on every core (at most 16): the full-size cases are
     * most of its work, seconds a configuration on 2 threads */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (s->cpu.init(ncpu < 2 ? 2 : ncpu > 16 ? 16 : (int)ncpu)) {
        printf("FAIL %s: cannot start the CPU backend's threads\n", cf->name);
        return CHILD_FAILED;
    }

    graph_init(&s->g);
    build_cases(s);
    keep_selected(s);
    graph *g = &s->g;
    g->nfwd = g->nops;
    g->step = 1;
    g->output = g->ops[0].out[0];
    /* flag the old contents of accumulated outputs as inputs */
    for (int i = 0; i < g->nops; i++)
        for (int k = 0; k < GRAPH_MAX_OUT; k++)
            if (g->ops[i].out[k] >= 0 && ((g->ops[i].acc >> k) & 1)) {
                tinfo *q = &s->ti[g->ops[i].out[k]];
                q->fill = 1;
                q->lo = -1;
                q->hi = 1;
            }
    /* the CPU graph: the same tensors and ops, host data */
    s->gc = *g;
    s->gc.t = xalloc(g->nt * sizeof *g->t);
    s->gc.ops = xalloc(g->nops * sizeof *g->ops);
    memcpy(s->gc.t, g->t, g->nt * sizeof *g->t);
    memcpy(s->gc.ops, g->ops, g->nops * sizeof *g->ops);
    s->gc.capt = g->nt;
    s->gc.capops = g->nops;
    size_t dev_bytes = 0;
    for (int t = 0; t < g->nt; t++) {
        tinfo *q = &s->ti[t];
        if (!s->tused[t]) { /* no op left reads or writes it: no storage */
            q->n = q->dbytes = 0;
            continue;
        }
        q->n = (size_t)graph_numel(&g->t[t]);
        q->dbytes = q->n * graph_dtype_size(g->t[t].dtype);
        q->h = xalloc(q->n * 4);
        q->hs = xalloc(q->dbytes);
        q->d = s->dev.alloc(q->dbytes);
        if (!q->d) {
            printf("FAIL %s: device allocation of %zu bytes failed\n", cf->name, q->dbytes);
            return CHILD_FAILED;
        }
        dev_bytes += q->dbytes;
        s->gc.t[t].data = q->h;
        g->t[t].data = q->d;
        if (q->fill)
            fill_tensor(s, t);
        else
            memset(q->h, 0xff, q->n * 4); /* outputs start as NaN */
        int k = g->t[t].kind;
        if (k != TK_ACT && k != TK_GRAD)
            g->t[t].host = q->hs;
        dev_upload(s, t);
    }
    if (s->dev.prepare) {
        int rc = s->dev.prepare(g, g->nops);
        if (rc) {
            printf("FAIL %s: prepare(g, %d) returned %d (%s)\n", cf->name, g->nops, rc,
                   rc == -1 ? "out of device memory" : "see stderr");
            return CHILD_FAILED;
        }
    }
    if (!selftest && cf->bnstats && bnstats_check(s) != 0)
        s->fail++;
    /* prepare may have run trial calls: the inputs again */
    for (int t = 0; t < g->nt; t++)
        if (s->ti[t].fill && s->tused[t])
            dev_upload(s, t);
    /* as the engine's op-by-op steps (dump, profile): the device's step
     * counter goes to 1, g->step's value */
    if (s->dev.begin_step)
        s->dev.begin_step();
    if (!s->quiet)
        printf("== %s: %d ops, %d tensors, %.1f KiB on the device (%s)\n", cf->name, g->nops, g->nt,
               dev_bytes / 1024.0, s->dev.name ? s->dev.name : "?");
    for (int i = 0; i < g->nops; i++)
        if (s->oi[i].sel)
            run_op(s, i, s->oi[i].sel == 2);
    int rc = s->fail || s->pass == 0 ? CHILD_FAILED : 0;
    if (sabotage) {
        rc = s->pass == 0 && s->fail > 0 ? 0 : CHILD_FAILED;
        printf("%s self-test %s: a device that spoils the %s element of its %s %s fails %d of %d ops\n",
               rc ? "FAIL" : "PASS", cf->name, sabotage == 2 ? "last" : "first",
               sabotage == 2 ? "last" : "first", sabotage == 3 ? "input" : "output", s->fail,
               s->pass + s->fail);
    } else
        printf("ops_check %s: %d passed, %d failed\n", cf->name, s->pass, s->fail);
    fflush(stdout);
    for (int t = 0; t < g->nt; t++) {
        if (s->ti[t].d)
            s->dev.free(s->ti[t].d, s->ti[t].dbytes);
        free(s->ti[t].h);
        free(s->ti[t].hs);
    }
    free(s->tused);
    s->dev.fini();
    s->cpu.fini();
    graph_free(&s->gc);
    graph_free(&s->g);
    free(s->ti);
    free(s->oi);
    return rc;
}

/* ---- self-test of the harness's own pieces ---------------------------------------- */

static int selftest_units(void)
{
    struct { float f; uint16_t h; } f16[] = {
        {1.0f, 0x3c00}, {-2.0f, 0xc000}, {65504.0f, 0x7bff}, {65519.0f, 0x7bff},
        {65520.0f, 0x7c00}, {0x1p-24f, 0x0001}, {0x1p-25f, 0x0000}, {0x1.8p-24f, 0x0002},
        {0x1p-14f, 0x0400}, {0.1f, 0x2e66}, {0.0f, 0x0000}, {-0.0f, 0x8000},
        {1.0f + 0x1p-11f, 0x3c00}, {1.0f + 0x1.8p-11f, 0x3c01}, {INFINITY, 0x7c00},
        {0x1.ffcp-15f, 0x0400}, {0x1.ff8p-15f, 0x03ff},
    };
    struct { float f; uint16_t h; } bf[] = {
        {1.0f, 0x3f80}, {0.1f, 0x3dcd}, {-3.0f, 0xc040}, {1.0f + 0x1p-8f, 0x3f80},
        {1.0f + 0x1.8p-8f, 0x3f81}, {INFINITY, 0x7f80},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof f16 / sizeof f16[0]; i++) {
        uint16_t h = f32_to_f16(f16[i].f);
        if (h != f16[i].h) {
            printf("FAIL self-test: f32_to_f16(%a) = 0x%04x, expected 0x%04x\n", f16[i].f, h, f16[i].h);
            bad++;
        }
        if (isfinite(f16[i].f) && fabsf(f16[i].f) <= 65504.0f &&
            f16_to_f32(h) != quant(DT_F16, f16_to_f32(h))) {
            printf("FAIL self-test: f16 round trip of 0x%04x\n", h);
            bad++;
        }
    }
    for (uint32_t h = 0; h < 0x7c00; h++) /* every finite positive f16 round-trips */
        if (f32_to_f16(f16_to_f32((uint16_t)h)) != h) {
            printf("FAIL self-test: f16 0x%04x does not round-trip\n", h);
            bad++;
            break;
        }
    if (!isnan(f16_to_f32(f32_to_f16(NAN))) || !isnan(bf16_to_f32(f32_to_bf16(NAN)))) {
        printf("FAIL self-test: NaN does not stay NaN\n");
        bad++;
    }
    for (size_t i = 0; i < sizeof bf / sizeof bf[0]; i++) {
        uint16_t h = f32_to_bf16(bf[i].f);
        if (h != bf[i].h) {
            printf("FAIL self-test: f32_to_bf16(%a) = 0x%04x, expected 0x%04x\n", bf[i].f, h, bf[i].h);
            bad++;
        }
    }
    /* poison bytes are NaN in every float storage type */
    uint16_t ph = 0xffff;
    uint32_t pf = 0xffffffffu;
    if (!isnan(f16_to_f32(ph)) || !isnan(bf16_to_f32(ph)) || !isnan(bits_f32(pf))) {
        printf("FAIL self-test: 0xff bytes are not NaN\n");
        bad++;
    }
    /* the comparison catches NaN, an error out of tolerance, and passes a close value */
    float ref[3] = {1.0f, -2.0f, 0.5f}, dev[3] = {1.0f, -2.0f, 0.5f};
    verdict v;
    memset(&v, 0, sizeof v);
    compare_f32("t", dev, ref, 3, 0, &tol_fp32, &v);
    if (v.bad || v.ratio > 1) {
        printf("FAIL self-test: equal tensors compare unequal\n");
        bad++;
    }
    dev[1] = bits_f32(0xffffffffu);
    memset(&v, 0, sizeof v);
    compare_f32("t", dev, ref, 3, 0, &tol_fp32, &v);
    if (v.bad != 1 || v.nan != 1) {
        printf("FAIL self-test: a NaN element passes\n");
        bad++;
    }
    dev[1] = -2.0f * (1 + 3e-4f);
    memset(&v, 0, sizeof v);
    compare_f32("t", dev, ref, 3, 0, &tol_fp32, &v);
    if (v.bad != 1) {
        printf("FAIL self-test: an error of 3e-4 relative passes at fp32\n");
        bad++;
    }
    memset(&v, 0, sizeof v);
    compare_f32("t", dev, ref, 3, 0, &tol_fp16, &v);
    if (v.bad != 0) {
        printf("FAIL self-test: an error of 3e-4 relative fails at fp16\n");
        bad++;
    }
    printf("%s self-test of conversions and comparisons\n", bad ? "FAIL" : "PASS");
    return bad;
}

/* ---- main ---------------------------------------------------------------------------- */

static const config configs[] = {
    {"fp32-nchw", PREC_FP32, LAYOUT_NCHW, 0, 0, NULL, NULL, NULL, 0},
    {"fp32-nhwc", PREC_FP32, LAYOUT_NHWC, 0, 0, NULL, NULL, NULL, 0},
    {"tf32-nchw", PREC_TF32, LAYOUT_NCHW, 0, 0, NULL, NULL, NULL, 0},
    {"tf32-nhwc", PREC_TF32, LAYOUT_NHWC, 0, 0, NULL, NULL, NULL, 0},
    {"fp16-nchw", PREC_FP16, LAYOUT_NCHW, 0, 0, NULL, NULL, NULL, 0},
    {"fp16-nhwc", PREC_FP16, LAYOUT_NHWC, 0, 0, NULL, NULL, NULL, 0},
    {"bf16-nchw", PREC_BF16, LAYOUT_NCHW, 0, 0, NULL, NULL, NULL, 0},
    {"bf16-nhwc", PREC_BF16, LAYOUT_NHWC, 0, 0, NULL, NULL, NULL, 0},
    {"fp32-nchw-search", PREC_FP32, LAYOUT_NCHW, 1, 0, NULL, NULL, NULL, 0},
    {"fp16-nhwc-search", PREC_FP16, LAYOUT_NHWC, 1, 0, NULL, NULL, NULL, 0},
    /* the flash form of attention on the engine's kernels (the configurations
     * above give it to cuDNN's fused SDPA wherever cuDNN has an engine) */
    {"fp16-nchw-sdpa-kernel", PREC_FP16, LAYOUT_NCHW, 0, 1, "attention", NULL, NULL, 0},
    {"bf16-nchw-sdpa-kernel", PREC_BF16, LAYOUT_NCHW, 0, 1, "attention", NULL, NULL, 0},
    /* linear on the engine's own GEMM kernel (the configurations above give
     * it cuBLASLt, which leaves that kernel only the products it gets wrong) */
    {"fp32-nchw-gemm-kernel", PREC_FP32, LAYOUT_NCHW, 0, 0, "linear", NULL, NULL, 1},
    {"bf16-nchw-gemm-kernel", PREC_BF16, LAYOUT_NCHW, 0, 0, "linear", NULL, NULL, 1},
    /* convolutions on the engine's own kernel from the definition (no cuDNN) */
    {"fp32-nchw-conv-kernel", PREC_FP32, LAYOUT_NCHW, 0, 0, "conv", "kernel", NULL, 0},
    {"fp16-nhwc-conv-kernel", PREC_FP16, LAYOUT_NHWC, 0, 0, "conv", "kernel", NULL, 0},
    /* convolutions on cuDNN's legacy API only, and on the graph API wherever
     * a plan verifies (the configurations above: auto) */
    {"fp32-nchw-conv-legacy", PREC_FP32, LAYOUT_NCHW, 0, 0, "conv", "legacy", NULL, 0},
    {"fp16-nhwc-conv-legacy", PREC_FP16, LAYOUT_NHWC, 0, 0, "conv", "legacy", NULL, 0},
    {"bf16-nhwc-conv-graph", PREC_BF16, LAYOUT_NHWC, 0, 0, "conv", "graph", NULL, 0},
    {"fp16-nhwc-search-conv-graph", PREC_FP16, LAYOUT_NHWC, 1, 0, "conv", "graph", NULL, 0},
    /* BatchNorm statistics from the convolution (cuDNN's GEN_STATS) forced
     * on, and off; the conv -> BN cases only ("genstats" in their labels) */
    {"fp16-nhwc-bnstats-conv", PREC_FP16, LAYOUT_NHWC, 0, 0, "genstats", NULL, "conv", 0},
    {"bf16-nhwc-bnstats-conv", PREC_BF16, LAYOUT_NHWC, 0, 0, "genstats", NULL, "conv", 0},
    {"fp32-nhwc-bnstats-conv", PREC_FP32, LAYOUT_NHWC, 0, 0, "genstats", NULL, "conv", 0},
    {"fp16-nhwc-search-bnstats-conv", PREC_FP16, LAYOUT_NHWC, 1, 0, "genstats", NULL, "conv", 0},
    {"fp16-nhwc-bnstats-separate", PREC_FP16, LAYOUT_NHWC, 0, 0, "genstats", NULL, "separate", 0},
};
#define NCONFIG ((int)(sizeof configs / sizeof configs[0]))

/* 1 when name is one of the comma-separated names of list */
static int name_listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: ops_check [-q] [--precision fp32|tf32|fp16|bf16] [--layout nchw|nhwc] [--op TEXT]\n"
               "                 [--seed N] [--module PATH] [--timeout SECONDS] [--self-test]\n"
               "                 [--kernels-only | --no-graph-api] [--config NAME,NAME...] [--no-full-size]\n"
               "Every op of the models on the CUDA backend against the CPU backend.\n"
               "--kernels-only: every op on the engine's own kernels (MATRIX_ENGINE_CONV, _GEMM and\n"
               "_SDPA=kernel: no cuDNN or cuBLASLt), in the configurations that differ in more than\n"
               "the libraries' settings (tests/cudasim/ runs it on the CPU).\n"
               "--no-graph-api: attention on the engine's kernels, convolutions on cuDNN's legacy API,\n"
               "linear on cuBLASLt (tests/cudasim/ simulates those two).\n"
               "--config: only the configurations of these names (as the summaries print them).\n"
               "--no-full-size: without the models' full-size cases (\"full-size:\" in their labels:\n"
               "ResNet-18/50's convolutions at 224 x 224, BERT-base/large's ops at T = 128).\n"
               "Exit 0 all pass, 1 a failure, 77 no GPU or no CUDA module.\n");
}

/* The module: --module, $MATRIX_ENGINE_CUDA, $top_builddir/engine/, or
 * ../../engine/ from this program (tests/gpu/ops_check in the build tree). */
static void module_path(const char *arg, char *out, size_t n)
{
    const char *env = getenv("MATRIX_ENGINE_CUDA"), *top = getenv("top_builddir");
    char exe[PATH_MAX];
    ssize_t len;
    if (arg)
        snprintf(out, n, "%s", arg);
    else if (env && *env)
        snprintf(out, n, "%s", env);
    else if (top && *top)
        snprintf(out, n, "%s/engine/matrix-engine-cuda.so", top);
    else if ((len = readlink("/proc/self/exe", exe, sizeof exe - 1)) > 0) {
        exe[len] = 0;
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = 0;
        snprintf(out, n, "%s/../../engine/matrix-engine-cuda.so", exe);
    } else
        snprintf(out, n, "engine/matrix-engine-cuda.so");
}

int main(int argc, char **argv)
{
    const char *prec = NULL, *layout = NULL, *only = NULL, *module_arg = NULL, *names = NULL;
    int quiet = 0, selftest = 0, timeout = 600;
    uint64_t seed = 1;
    char module[PATH_MAX + 64];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-q") == 0)
            quiet = 1;
        else if (strcmp(a, "--self-test") == 0)
            selftest = 1;
        else if (strcmp(a, "--kernels-only") == 0)
            kernels_only = 1;
        else if (strcmp(a, "--no-graph-api") == 0)
            kernels_only = 2;
        else if (strcmp(a, "--no-full-size") == 0)
            no_full_size = 1;
        else if (strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (v && strcmp(a, "--precision") == 0)
            prec = argv[++i];
        else if (v && strcmp(a, "--layout") == 0)
            layout = argv[++i];
        else if (v && strcmp(a, "--op") == 0)
            only = argv[++i];
        else if (v && strcmp(a, "--config") == 0)
            names = argv[++i];
        else if (v && strcmp(a, "--module") == 0)
            module_arg = argv[++i];
        else if (v && strcmp(a, "--seed") == 0)
            seed = strtoull(argv[++i], NULL, 10);
        else if (v && strcmp(a, "--timeout") == 0)
            timeout = atoi(argv[++i]);
        else {
            fprintf(stderr, "ops_check: unknown argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    /* a name in --config that no configuration has is a mistake, not a filter */
    for (const char *p = names; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int known = 0;
        for (int c = 0; c < NCONFIG && !known; c++)
            known = strlen(configs[c].name) == len && strncmp(configs[c].name, p, len) == 0;
        if (!known) {
            fprintf(stderr, "ops_check: --config: no configuration is named '%.*s'; the names:", (int)len, p);
            for (int c = 0; c < NCONFIG; c++)
                fprintf(stderr, "%s %s", c ? "," : "", configs[c].name);
            fprintf(stderr, "\n");
            return 2;
        }
        p = e ? e + 1 : p + len;
    }
    module_path(module_arg, module, sizeof module);
    /* the backend's own arena poisoning (model_check) would hit our inputs:
     * this program poisons each op's outputs itself */
    unsetenv("MATRIX_ENGINE_POISON");
    setvbuf(stdout, NULL, _IOLBF, 0);
    int failed = 0, ran = 0, skipped = 0;
    if (selftest)
        failed += selftest_units() != 0;
    else {
        struct stat st;
        if (stat(module, &st) != 0) {
            printf("SKIP: no CUDA backend module at '%s' (%s)\n", module, strerror(errno));
            return 77;
        }
        printf("ops_check: module %s\n", module);
    }
    int nrun = NCONFIG + (selftest ? 3 : 0);
    for (int c = 0; c < nrun; c++) {
        /* --self-test ends with three spoilt-device runs */
        int sabotage = c >= NCONFIG ? c - NCONFIG + 1 : 0;
        const config *cf = &configs[sabotage ? (sabotage == 2 ? 5 : 0) : c];
        if (prec && strcmp(prec, prec_names[cf->prec]) != 0)
            continue;
        if (layout && strcmp(layout, cf->layout == LAYOUT_NHWC ? "nhwc" : "nchw") != 0)
            continue;
        if (selftest && cf->search && !sabotage)
            continue;
        if (names && !sabotage && !name_listed(names, cf->name))
            continue;
        /* the others differ in what cuDNN runs only; the sdpa- and gemm-kernel
         * ones repeat what the others run here (MATRIX_ENGINE_SDPA=kernel,
         * MATRIX_ENGINE_GEMM=kernel) */
        if (kernels_only == 1 &&
            (cf->search || cf->conv || cf->bnstats || cf->sdpa_kernel || cf->gemm_kernel || sabotage))
            continue;
        if (kernels_only == 2 && (cf->conv || cf->bnstats || cf->sdpa_kernel || cf->gemm_kernel || sabotage))
            continue;
        /* a child per configuration: the module is loaded fresh each time, and
         * a crash or a CUDA error (cu_fail exits) costs that configuration only */
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) {
            perror("ops_check: fork");
            return 1;
        }
        if (pid == 0) {
            alarm(timeout);
            if (cf->sdpa_kernel || kernels_only)
                setenv("MATRIX_ENGINE_SDPA", "kernel", 1);
            else
                unsetenv("MATRIX_ENGINE_SDPA");
            if (cf->gemm_kernel || kernels_only == 1)
                setenv("MATRIX_ENGINE_GEMM", "kernel", 1);
            else
                unsetenv("MATRIX_ENGINE_GEMM");
            if (kernels_only)
                setenv("MATRIX_ENGINE_CONV", kernels_only == 1 ? "kernel" : "legacy", 1);
            else if (cf->conv)
                setenv("MATRIX_ENGINE_CONV", cf->conv, 1);
            else
                unsetenv("MATRIX_ENGINE_CONV");
            if (cf->bnstats)
                setenv("MATRIX_ENGINE_BNSTATS", cf->bnstats, 1);
            else
                unsetenv("MATRIX_ENGINE_BNSTATS");
            int rc = run_config(cf, module, selftest, sabotage, quiet, only, seed);
            fflush(stdout);
            _exit(rc);
        }
        int status;
        while (waitpid(pid, &status, 0) < 0)
            if (errno != EINTR) {
                perror("ops_check: waitpid");
                return 1;
            }
        if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
            skipped++;
            break; /* no GPU or no module: the other configurations would say the same */
        }
        ran++;
        if (WIFSIGNALED(status)) {
            printf("FAIL %s: the check died of signal %d (%s)%s\n", cf->name, WTERMSIG(status),
                   strsignal(WTERMSIG(status)),
                   WTERMSIG(status) == SIGALRM ? ": it ran past --timeout" : "");
            failed++;
        } else if (WEXITSTATUS(status) != 0) {
            if (WEXITSTATUS(status) != CHILD_FAILED)
                printf("FAIL %s: the check exited %d before its summary (a CUDA error? see stderr)\n",
                       cf->name, WEXITSTATUS(status));
            failed++;
        }
    }
    if (skipped && !ran)
        return 77;
    printf("ops_check: %d configuration(s), %d failed\n", ran, failed);
    return failed || ran == 0 ? 1 : 0;
}
