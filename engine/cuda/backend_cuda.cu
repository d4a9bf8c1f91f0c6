/* backend_cuda.cu - the CUDA backend's table (backend.h): set-up, the caching
 * allocator, copies, prepare, the step (eager, or one CUDA Graph per step
 * replayed) timed with CUDA events, and the device description.
 *
 * Start-up: this file is a module (matrix-engine-cuda.so) that main.c loads
 * only for --device cuda, lazy module loading is asked for before the first
 * CUDA call, and cuDNN / cuBLASLt handles are made by conv.cu / gemm.cu only
 * when the plan has convolutions / linears.
 *
 * Allocator: device memory comes from cudaMalloc in size classes (512 bytes
 * up to 1 MiB, 2 MiB above) and freed blocks are kept for reuse; when
 * cudaMalloc fails the cache is returned to the driver and the call retried
 * once. The engine plans activations into one arena, so the allocator serves
 * few, large requests; peak_mem_bytes is the high-water mark of bytes handed
 * out (not of the cache) from the end of prepare on, prepare_peak_mem_bytes
 * the one before (algorithm searches, GEMM checks). Never managed memory. */
#include "cuda.h"
#include "../comm.h"
#include "../data.h"
#include "../knobs.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

cu_state cu;

[[noreturn]] void cu_fail(const char *file, int line, const char *call, const char *err)
{
    fprintf(stderr, "matrix-engine: %s:%d: %s: %s\n", file, line, call, err);
    exit(1);
}

const char *cu_cublas_status(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "cuBLAS error";
    }
}

/* ---- caching allocator ------------------------------------------------------- */

struct block { void *p; size_t bytes; };

static struct {
    struct block *cache; /* freed blocks, reused by exact size class */
    int n, cap;
    size_t in_use, peak, reserved, peak_reserved, failed;
    size_t prepare_peak; /* high-water mark up to the end of prepare (searches, checks) */
} pool;

static size_t size_class(size_t bytes)
{
    if (bytes <= ((size_t)1 << 20))
        return bytes < 512 ? 512 : (bytes + 511) & ~(size_t)511;
    return (bytes + ((size_t)2 << 20) - 1) & ~(((size_t)2 << 20) - 1);
}

static void pool_trim(void)
{
    for (int i = 0; i < pool.n; i++) {
        cudaFree(pool.cache[i].p);
        pool.reserved -= pool.cache[i].bytes;
    }
    pool.n = 0;
}

void *cu_alloc(size_t bytes)
{
    size_t sz = size_class(bytes);
    void *p = NULL;
    for (int i = 0; i < pool.n; i++)
        if (pool.cache[i].bytes == sz) {
            p = pool.cache[i].p;
            pool.cache[i] = pool.cache[--pool.n];
            break;
        }
    if (!p) {
        cudaError_t e = cudaMalloc(&p, sz);
        if (e == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();
            pool_trim();
            e = cudaMalloc(&p, sz);
        }
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            pool.failed = bytes;
            return NULL;
        }
        pool.reserved += sz;
        if (pool.reserved > pool.peak_reserved)
            pool.peak_reserved = pool.reserved;
    }
    pool.in_use += sz;
    if (pool.in_use > pool.peak)
        pool.peak = pool.in_use;
    return p;
}

void cu_free(void *p, size_t bytes)
{
    if (!p)
        return;
    if (pool.n == pool.cap) {
        pool.cap = pool.cap ? 2 * pool.cap : 64;
        pool.cache = (struct block *)realloc(pool.cache, pool.cap * sizeof *pool.cache);
        if (!pool.cache)
            cu_fail(__FILE__, __LINE__, "realloc", "out of host memory");
    }
    size_t sz = size_class(bytes);
    pool.cache[pool.n++] = (struct block){p, sz};
    pool.in_use -= sz;
}

int cu_buffer(void **p, size_t *have, size_t bytes)
{
    *p = NULL;
    *have = 0;
    if (!bytes)
        return 0;
    if (!(*p = cu_alloc(bytes)))
        return -1;
    *have = bytes;
    return 0;
}

int cu_plan_trains(const graph *g, int nrun)
{
    for (int i = 0; i < nrun; i++) {
        int t = g->ops[i].type;
        if (t == OP_SGD || t == OP_ADAMW || t == OP_CONV_BWD || t == OP_LINEAR_BWD)
            return 1;
    }
    return 0;
}

/* Tensor memory for the engine: zeroed, like the CPU backend's. */
static void *be_alloc(size_t bytes)
{
    void *p = cu_alloc(bytes);
    if (p) { /* on cu.s (non-blocking: no implicit order with the legacy stream) */
        cudaCheck(cudaMemsetAsync(p, 0, bytes, cu.s));
        cudaCheck(cudaStreamSynchronize(cu.s));
    }
    return p;
}

static void be_free(void *p, size_t bytes) { cu_free(p, bytes); }
static size_t be_peak(void) { return pool.peak; }
static size_t be_oom_bytes(void) { return pool.failed; }

/* ---- copies, sync ---------------------------------------------------------------- */

static void be_upload(void *dst, const void *src, size_t n)
{
    /* on cu.s and waited for: a pageable cudaMemcpy may return before its
     * DMA lands, and the legacy stream is not ordered with cu.s */
    cudaCheck(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, cu.s));
    cudaCheck(cudaStreamSynchronize(cu.s));
}

static void be_download(void *dst, const void *src, size_t n)
{
    cudaCheck(cudaStreamSynchronize(cu.s));
    cudaCheck(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost));
}

static void be_sync(void) { cudaCheck(cudaStreamSynchronize(cu.s)); }

/* ---- --data's pinned upload (backend.h stage_*, data.h's ring) ------------------------------
 *
 * Batch b lives in slot b % DATA_SLOTS: pinned host buffers the engine
 * writes, then device buffers the copy stream fills, then the input
 * tensors, copied device to device on cu.s just before the step. The
 * step (and a CUDA Graph replay, which reads the input tensors' fixed
 * addresses) is thus ordered after its batch's copy by stream order and
 * one event, and the copy of batch k+1 never writes what step k reads: it
 * lands in the other slot's device buffers while step k runs. Orders:
 * sent[slot] (cs) before the take's device copies (cu.s wait); taken[slot]
 * (cu.s) before the slot's next send (cs wait: its device buffers are
 * free); sent[slot] before the host writes the slot again (stage_reuse).
 * With the engine's step loop each of these waits is already satisfied
 * when reached (the step in between was waited for), so none of them
 * holds the host or the step. */
#define STAGE_MAX 2 /* buffers per slot: the input and the labels */

static struct {
    int n;
    size_t bytes[STAGE_MAX];
    void *host[DATA_SLOTS][STAGE_MAX]; /* cudaHostAlloc */
    void *dev[DATA_SLOTS][STAGE_MAX];  /* cu_alloc */
    cudaStream_t cs;                   /* the copy stream */
    cudaEvent_t sent[DATA_SLOTS], taken[DATA_SLOTS];
    int open;
} stg;

static void stage_release(void)
{
    if (!stg.open)
        return;
    cudaStreamSynchronize(stg.cs);
    for (int s = 0; s < DATA_SLOTS; s++) {
        for (int i = 0; i < stg.n; i++) {
            if (stg.host[s][i])
                cudaFreeHost(stg.host[s][i]);
            cu_free(stg.dev[s][i], stg.bytes[i]);
        }
        cudaEventDestroy(stg.sent[s]);
        cudaEventDestroy(stg.taken[s]);
    }
    cudaStreamDestroy(stg.cs);
    memset(&stg, 0, sizeof stg);
}

static int be_stage_open(int n, const size_t *bytes, void **host)
{
    if (n < 1 || n > STAGE_MAX || stg.open)
        cu_fail(__FILE__, __LINE__, "be_stage_open", n < 1 || n > STAGE_MAX ? "buffers per slot not 1 or 2" : "opened twice");
    stg.open = 1;
    stg.n = n;
    cudaCheck(cudaStreamCreateWithFlags(&stg.cs, cudaStreamNonBlocking));
    for (int s = 0; s < DATA_SLOTS; s++) {
        cudaCheck(cudaEventCreateWithFlags(&stg.sent[s], cudaEventDisableTiming));
        cudaCheck(cudaEventCreateWithFlags(&stg.taken[s], cudaEventDisableTiming));
    }
    for (int s = 0; s < DATA_SLOTS; s++)
        for (int i = 0; i < n; i++) {
            stg.bytes[i] = bytes[i];
            if (cudaHostAlloc(&stg.host[s][i], bytes[i], cudaHostAllocDefault) != cudaSuccess) {
                (void)cudaGetLastError();
                stg.host[s][i] = NULL;
                pool.failed = bytes[i];
                return -1;
            }
            memset(stg.host[s][i], 0, bytes[i]);
            host[s * n + i] = stg.host[s][i];
            if (!(stg.dev[s][i] = cu_alloc(bytes[i])))
                return -1;
        }
    return 0;
}

static void be_stage_reuse(int slot) { cudaCheck(cudaEventSynchronize(stg.sent[slot])); }

static void be_stage_send(int slot)
{
    cudaCheck(cudaStreamWaitEvent(stg.cs, stg.taken[slot], 0));
    for (int i = 0; i < stg.n; i++)
        cudaCheck(cudaMemcpyAsync(stg.dev[slot][i], stg.host[slot][i], stg.bytes[i], cudaMemcpyHostToDevice, stg.cs));
    cudaCheck(cudaEventRecord(stg.sent[slot], stg.cs));
}

static void be_stage_take(int slot, void *const *dst)
{
    cudaCheck(cudaStreamWaitEvent(cu.s, stg.sent[slot], 0));
    for (int i = 0; i < stg.n; i++)
        if (dst[i])
            cudaCheck(cudaMemcpyAsync(dst[i], stg.dev[slot][i], stg.bytes[i], cudaMemcpyDeviceToDevice, cu.s));
    cudaCheck(cudaEventRecord(stg.taken[slot], cu.s));
}
static size_t be_workspace(const graph *, const op *) { return 0; }

/* ---- init / fini ----------------------------------------------------------------- */

static struct {
    cudaEvent_t ev0, ev1;
    float last_ms;
    int graphs;          /* --compile reduce-overhead / max-autotune */
    int steps;           /* steps run so far */
    cudaGraph_t cg;
    cudaGraphExec_t exec;
    size_t graph_nodes;
    int prepared;
    graph *g;
} run;

/* NVML at start-up: SM clock, temperature, throttle reasons (be_info adds the end) */
static int nvml_start_sm, nvml_start_temp;
static unsigned long long nvml_start_throttle;

static void nvml_clocks(int *sm_mhz, int *sm_max_mhz, int *temp_c, unsigned long long *throttle);

static void prof_release(void); /* the per-op profile's events (below) */

static int be_init(int)
{
    cudaCheck(cudaSetDevice(cu.dev));
    cudaCheck(cudaGetDeviceProperties(&cu.prop, cu.dev));
    /* recorded (driver=, cuda_runtime=) and in the plan cache's context:
     * never a 0 in their place */
    cudaCheck(cudaDriverGetVersion(&cu.driver_version));
    cudaCheck(cudaRuntimeGetVersion(&cu.runtime_version));
    int smmax0;
    nvml_clocks(&nvml_start_sm, &smmax0, &nvml_start_temp, &nvml_start_throttle);
    cudaCheck(cudaStreamCreateWithFlags(&cu.s, cudaStreamNonBlocking));
    cudaCheck(cudaEventCreate(&run.ev0));
    cudaCheck(cudaEventCreate(&run.ev1));
    cu.step = (int64_t *)be_alloc(sizeof(int64_t));
    cu.scaler = (float *)be_alloc(4 * sizeof(float));
    if (!cu.step || !cu.scaler) {
        fprintf(stderr, "matrix-engine: out of device memory at start-up\n");
        return -1;
    }
    return 0;
}

static void be_fini(void)
{
    stage_release();
    if (run.exec)
        cudaGraphExecDestroy(run.exec);
    if (run.cg)
        cudaGraphDestroy(run.cg);
    run.exec = NULL;
    run.cg = NULL;
    if (run.prepared && run.g) {
        cu_ops_release(run.g);
        cu_sdpa_release(run.g);
        cu_nccl_release();
        cu_gemm_release(run.g);
        cu_conv_release(run.g);
    }
    run.prepared = 0;
    prof_release();
    cu_free(cu.ws, cu.ws_bytes);
    cu_free(cu.step, sizeof(int64_t));
    cu_free(cu.scaler, 4 * sizeof(float));
    cu.ws = NULL;
    cudaStreamSynchronize(cu.s);
    pool_trim();
    free(pool.cache);
    pool.cache = NULL;
    pool.cap = 0;
    free(cu.priv);
    cu.priv = NULL;
    cudaEventDestroy(run.ev0);
    cudaEventDestroy(run.ev1);
    cudaStreamDestroy(cu.s);
}

/* ---- prepare ------------------------------------------------------------------------- */

/* MATRIX_ENGINE_POISON=1 (the GPU checks): every byte of the activations
 * and their gradients 0xff, NaN in f32, f16 and bf16, so an element an op
 * forgot to write shows in the checks; the log says how much (when: after
 * the memory plan, again at the end of prepare). 0, or -3 with the message
 * for a value the engine would have refused before it ran (knobs_check). */
static int be_poison(graph *g, const char *when)
{
    char err[256];
    int on = knob_get(KNOB_POISON, err, sizeof err);
    size_t bytes = 0;
    int n = 0;
    if (on < 0) {
        fprintf(stderr, "matrix-engine: cuda: %s\n", err);
        return -3;
    }
    if (!on)
        return 0;
    for (int i = 0; i < g->nt; i++) {
        tensor *t = &g->t[i];
        if ((t->kind == TK_ACT || t->kind == TK_GRAD) && !t->dead && t->data) {
            cudaCheck(cudaMemsetAsync(t->data, 0xff, t->bytes, cu.s));
            bytes += t->bytes;
            n++;
        }
    }
    fprintf(stderr, "matrix-engine: cuda: MATRIX_ENGINE_POISON=1: %d activation and gradient tensors filled "
            "with 0xff (NaN) %s, %zu bytes written\n", n, when, bytes);
    return 0;
}

static int be_prepare(graph *g, int nrun)
{
    run.g = g;
    cu.nops = g->nops;
    cu.priv = (void **)calloc(g->nops + 1, sizeof *cu.priv);
    if (!cu.priv)
        cu_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    int rc;
    if ((rc = be_poison(g, "before the prepares")))
        return rc;
    run.prepared = 1;
    cu_plans_open(); /* the choices of earlier runs (plans.cu), saved below */
    if ((rc = cu_conv_prepare(g, nrun)) || (rc = cu_gemm_prepare(g, nrun)) ||
        (rc = cu_sdpa_prepare(g, nrun)) || (rc = cu_ops_prepare(g, nrun)) ||
        (rc = cu_nccl_prepare(g, nrun))) {
        cu_plans_close(); /* what was searched before the failure still holds */
        return rc;
    }
    cu_plans_close();
    cu.ws_bytes = cu.ws_need;
    cu.ws = cu_alloc(cu.ws_bytes);
    if (!cu.ws)
        return -1;
    /* again: the prepares' trial calls and timed races ran on the ops' own
     * buffers (the fused call's trial, cached choices' checks, the searches,
     * the graph plans' races) and left finite values in the arena, which an
     * op of the first step that forgets elements of its output, sharing
     * those bytes, would show instead of NaN */
    be_poison(g, "at the end of prepare");
    cudaCheck(cudaStreamSynchronize(cu.s));
    /* peak_mem_bytes is what the steps need (tensors, private buffers, the
     * workspace): the scratch of the algorithm searches and GEMM checks,
     * freed by now, is reported apart as prepare_peak_mem_bytes */
    pool.prepare_peak = pool.peak;
    pool.peak = pool.in_use;
    return 0;
}

/* ---- the step ---------------------------------------------------------------------------- */

__global__ void k_step_inc(int64_t *s) { *s += 1; }

static void be_begin_step(void)
{
    k_step_inc<<<1, 1, 0, cu.s>>>(cu.step);
    cu_launched();
}

static void run_ops(graph *g, int nrun, backend *b)
{
    be_begin_step();
    for (int i = 0; i < nrun; i++)
        b->ops[g->ops[i].type](g, &g->ops[i]);
}

static backend *the_backend;

/* The step queued on cu.s (eagerly, or its CUDA Graph replayed), then
 * during(ctx) on the host while it runs (--data: the next batch made and
 * its copy queued on the copy stream), then the wait for its end. */
static int be_step(graph *g, int nrun, void (*during)(void *ctx), void *ctx)
{
    cudaCheck(cudaEventRecord(run.ev0, cu.s));
    if (!run.graphs || run.steps == 0) {
        /* eager; with graphs, the first step also loads every kernel and
         * runs the lazy parts of the libraries before the capture */
        run_ops(g, nrun, the_backend);
    } else {
        if (!run.exec) {
            cudaCheck(cudaStreamBeginCapture(cu.s, cudaStreamCaptureModeThreadLocal));
            run_ops(g, nrun, the_backend);
            cudaCheck(cudaStreamEndCapture(cu.s, &run.cg));
            cudaCheck(cudaGraphInstantiate(&run.exec, run.cg, 0));
            cudaCheck(cudaGraphGetNodes(run.cg, NULL, &run.graph_nodes));
        }
        cudaCheck(cudaGraphLaunch(run.exec, cu.s));
    }
    cudaCheck(cudaEventRecord(run.ev1, cu.s));
    if (during)
        during(ctx);
    cudaCheck(cudaEventSynchronize(run.ev1));
    cudaCheck(cudaEventElapsedTime(&run.last_ms, run.ev0, run.ev1));
    cu_nccl_step_end(run.last_ms);
    run.steps++;
    return 0;
}

static double be_step_seconds(void) { return run.last_ms / 1e3; }

/* ---- per-op profile (--profile): a pair of events around each op -------------------------- */

static struct {
    cudaEvent_t *ev; /* (2 * n): op i's start and end */
    int n;
} prof;

static void be_prof_mark(int i, int end)
{
    if (!prof.ev) {
        prof.n = run.g ? run.g->nops : i + 1;
        prof.ev = (cudaEvent_t *)calloc(2 * (size_t)prof.n, sizeof *prof.ev);
        if (!prof.ev)
            cu_fail(__FILE__, __LINE__, "calloc", "out of host memory");
        for (int k = 0; k < 2 * prof.n; k++)
            cudaCheck(cudaEventCreate(&prof.ev[k]));
    }
    if (i >= prof.n)
        cu_fail(__FILE__, __LINE__, "be_prof_mark", "op index beyond the graph");
    cudaCheck(cudaEventRecord(prof.ev[2 * i + end], cu.s));
}

static void be_prof_read(double *s, int nrun)
{
    if (!prof.ev)
        return;
    cudaCheck(cudaEventSynchronize(prof.ev[2 * (nrun - 1) + 1]));
    for (int i = 0; i < nrun && i < prof.n; i++) {
        float ms = 0;
        cudaCheck(cudaEventElapsedTime(&ms, prof.ev[2 * i], prof.ev[2 * i + 1]));
        s[i] += ms / 1e3;
    }
}

static void prof_release(void)
{
    for (int k = 0; prof.ev && k < 2 * prof.n; k++)
        cudaEventDestroy(prof.ev[k]);
    free(prof.ev);
    prof.ev = NULL;
    prof.n = 0;
}

/* ---- description --------------------------------------------------------------------------- */

/* Dense peaks, flop/s (datasheets, SXM unless named): fp32 (FMA), tf32,
 * fp16 / bf16 tensor cores, without sparsity. */
static const struct peak_row {
    const char *match; /* substring of the device name */
    double fp32, tf32, half;
} peaks[] = {
    {"H200", 66.9e12, 494.7e12, 989.4e12},
    {"H100 PCIe", 51.2e12, 378e12, 756e12},
    {"H100 NVL", 60e12, 417.5e12, 835e12},
    {"H100", 66.9e12, 494.7e12, 989.4e12},
    {"H800", 66.9e12, 494.7e12, 989.4e12},
    {"A100", 19.5e12, 156e12, 312e12},
    {"A800", 19.5e12, 156e12, 312e12},
    {"L40S", 91.6e12, 183e12, 362e12},
    {"A10", 31.2e12, 62.5e12, 125e12},
    {NULL, 0, 0, 0},
};

static double be_peak_flops(int precision)
{
    for (const struct peak_row *r = peaks; r->match; r++)
        if (strstr(cu.prop.name, r->match))
            return precision == PREC_FP32 ? r->fp32 : precision == PREC_TF32 ? r->tf32 : r->half;
    if (precision == PREC_FP32) { /* 128 FP32 lanes per SM (sm_80 / sm_90), 2 flops per FMA */
        int khz = 0;
        cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, cu.dev);
        return 2.0 * 128 * cu.prop.multiProcessorCount * khz * 1e3;
    }
    return 0;
}

/* SM clock, temperature (degrees C, -1 unknown) and throttle reasons through
 * NVML, loaded at run time (optional). */
static void nvml_clocks(int *sm_mhz, int *sm_max_mhz, int *temp_c, unsigned long long *throttle)
{
    typedef int (*init_fn)(void);
    typedef int (*by_bus_fn)(const char *, void **);
    typedef int (*clock_fn)(void *, int, unsigned *);
    typedef int (*reasons_fn)(void *, unsigned long long *);
    *sm_mhz = *sm_max_mhz = 0;
    *temp_c = -1;
    *throttle = ~0ULL;
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    init_fn init = (init_fn)dlsym(h, "nvmlInit_v2");
    by_bus_fn by_bus = (by_bus_fn)dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2");
    clock_fn clk = (clock_fn)dlsym(h, "nvmlDeviceGetClockInfo");
    clock_fn maxclk = (clock_fn)dlsym(h, "nvmlDeviceGetMaxClockInfo");
    clock_fn temp = (clock_fn)dlsym(h, "nvmlDeviceGetTemperature");
    reasons_fn reasons = (reasons_fn)dlsym(h, "nvmlDeviceGetCurrentClocksThrottleReasons");
    void (*shutdown)(void) = (void (*)(void))dlsym(h, "nvmlShutdown");
    char bus[32];
    void *dev = NULL;
    unsigned v = 0;
    snprintf(bus, sizeof bus, "%08x:%02x:%02x.0", cu.prop.pciDomainID, cu.prop.pciBusID,
             cu.prop.pciDeviceID);
    if (init && by_bus && clk && init() == 0) {
        if (by_bus(bus, &dev) == 0) {
            if (clk(dev, 1 /* NVML_CLOCK_SM */, &v) == 0)
                *sm_mhz = (int)v;
            if (maxclk && maxclk(dev, 1, &v) == 0)
                *sm_max_mhz = (int)v;
            if (temp && temp(dev, 0 /* NVML_TEMPERATURE_GPU */, &v) == 0)
                *temp_c = (int)v;
            if (reasons && reasons(dev, throttle) != 0)
                *throttle = ~0ULL;
        }
        if (shutdown)
            shutdown();
    }
    dlclose(h);
}

static char info_buf[8192];

static void info_add(const char *fmt, ...)
{
    size_t len = strlen(info_buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(info_buf + len, sizeof info_buf - len, fmt, ap);
    va_end(ap);
}

static const char *be_info(void)
{
    int drv = cu.driver_version, rt = cu.runtime_version, sm = 0, smmax = 0, temp = -1;
    unsigned long long thr = ~0ULL;
    float sc[4] = {0, 0, 0, 0};
    info_buf[0] = 0;
    nvml_clocks(&sm, &smmax, &temp, &thr);
    info_add("gpu=%s\n", cu.prop.name);
    info_add("gpu_cc=%d.%d\n", cu.prop.major, cu.prop.minor);
    info_add("gpu_sms=%d\n", cu.prop.multiProcessorCount);
    info_add("gpu_mem_bytes=%zu\n", cu.prop.totalGlobalMem);
    info_add("driver=%d.%d\n", drv / 1000, (drv % 1000) / 10);
    info_add("cuda_runtime=%d.%d\n", rt / 1000, (rt % 1000) / 10);
#ifdef HAVE_CUDNN
    info_add("cudnn=%zu\n", cudnnGetVersion());
#endif
    info_add("cublaslt=%zu\n", cublasLtGetVersion());
    if (sm)
        info_add("sm_clock_mhz=%d\nsm_clock_max_mhz=%d\n", sm, smmax);
    /* measurement quality (matrix's results.csv columns): clocks and
     * temperature at start and end, throttling seen at either (NVML reasons
     * power cap 0x4, HW slowdown 0x8, SW / HW thermal 0x20 / 0x40, power
     * brake 0x80; idle, application clocks and sync boost are not throttling) */
    if (nvml_start_sm)
        info_add("gpu_sm_mhz_start=%d\n", nvml_start_sm);
    if (sm)
        info_add("gpu_sm_mhz_end=%d\n", sm);
    if (nvml_start_temp >= 0)
        info_add("gpu_temp_c_start=%d\n", nvml_start_temp);
    if (temp >= 0)
        info_add("gpu_temp_c_end=%d\n", temp);
    if (thr != ~0ULL || nvml_start_throttle != ~0ULL) {
        static const struct { unsigned long long bit; const char *name; } why[] = {
            {0x4, "sw_power_cap"}, {0x8, "hw_slowdown"}, {0x20, "sw_thermal"},
            {0x40, "hw_thermal"}, {0x80, "hw_power_brake"}};
        unsigned long long seen = (thr != ~0ULL ? thr : 0) |
                                  (nvml_start_throttle != ~0ULL ? nvml_start_throttle : 0);
        int any = 0;
        info_add("gpu_throttle=");
        for (size_t i = 0; i < sizeof why / sizeof why[0]; i++)
            if (seen & why[i].bit)
                info_add("%s%s", any++ ? "+" : "", why[i].name);
        info_add("%s\n", any ? "" : "none");
    }
    info_add("cuda_graph=%s\n", run.exec ? "on" : "off");
    if (run.exec)
        info_add("cuda_graph_nodes=%zu\n", run.graph_nodes);
    info_add("device_reserved_peak_bytes=%zu\n", pool.peak_reserved);
    info_add("prepare_peak_mem_bytes=%zu\n", pool.prepare_peak);
    /* the legacy stream's cudaMemcpy is not ordered with cu.s (non-blocking): cu.s first */
    if (cu.scaler && cudaStreamSynchronize(cu.s) == cudaSuccess &&
        cudaMemcpy(sc, cu.scaler, sizeof sc, cudaMemcpyDeviceToHost) == cudaSuccess &&
        cu.pt.precision == PREC_FP16 && cu.pt.train)
        info_add("loss_scale=%g\nsteps_skipped=%.0f\n", sc[0], sc[3]);
    info_add("%s", cu_plans_info());
    if (run.prepared) {
        info_add("%s", cu_conv_info());
        info_add("%s", cu_gemm_info());
        info_add("%s", cu_sdpa_info());
        info_add("%s", cu_nccl_info());
    }
    return info_buf;
}

/* scaler[3], the skipped steps' count (ops.cu's loss scaling), for dumps */
static double be_steps_skipped(void)
{
    float sc[4];
    if (!cu.scaler || cu.pt.precision != PREC_FP16 || !cu.pt.train)
        return -1.0;
    cudaCheck(cudaStreamSynchronize(cu.s)); /* the step that wrote it may still run */
    cudaCheck(cudaMemcpy(sc, cu.scaler, sizeof sc, cudaMemcpyDeviceToHost));
    return sc[3];
}

/* ---- the entry point ---------------------------------------------------------------------------- */

extern "C" __attribute__((visibility("default"))) int
backend_cuda_setup(backend *b, const point *p, char *err, size_t n)
{
    int count = 0;
    /* kernels load on first launch (the default from CUDA 12.2; asked for
     * in case the driver default differs) */
    setenv("CUDA_MODULE_LOADING", "LAZY", 0);
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        snprintf(err, n, "no usable CUDA GPU: %s",
                 e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found 0 devices");
        (void)cudaGetLastError();
        return -1;
    }
    if (count < p->gpus) {
        const char *vis = getenv("CUDA_VISIBLE_DEVICES");
        snprintf(err, n, "gpus: %d needs %d visible GPUs; %d visible%s%s%s", p->gpus, p->gpus, count,
                 vis ? " (CUDA_VISIBLE_DEVICES=" : "", vis ? vis : "", vis ? ")" : "");
        return -1;
    }
    memset(&cu, 0, sizeof cu);
    memset(&run, 0, sizeof run);
    cu.pt = *p;
    cu.dev = engine_comm ? engine_comm->local_rank % count : 0; /* one GPU per rank */
    cu.act_dt = p->precision == PREC_FP16 ? DT_F16 : p->precision == PREC_BF16 ? DT_BF16 : DT_F32;
    cu.search = p->cudnn_benchmark || p->compile == COMPILE_MAX_AUTOTUNE;
    cu.autotune = p->compile == COMPILE_MAX_AUTOTUNE;
    run.graphs = p->compile >= COMPILE_REDUCE_OVERHEAD;
#ifndef HAVE_CUDNN
    snprintf(err, n, "the CUDA backend was built without cuDNN");
    return -1;
#endif
    memset(b, 0, sizeof *b);
    b->name = "cuda";
    b->init = be_init;
    b->fini = be_fini;
    b->alloc = be_alloc;
    b->free = be_free;
    b->upload = be_upload;
    b->download = be_download;
    b->sync = be_sync;
    b->workspace = be_workspace;
    b->saved = NULL;
    cu_conv_register(b->ops);
    cu_gemm_register(b->ops);
    cu_ops_register(b->ops);
    cu_nccl_register(b->ops);
    b->host_visible = 0;
    b->prepare = be_prepare;
    b->step = be_step;
    b->begin_step = be_begin_step;
    b->step_seconds = be_step_seconds;
    b->peak = be_peak;
    b->oom_bytes = be_oom_bytes;
    b->info = be_info;
    b->steps_skipped = be_steps_skipped;
    b->peak_flops = be_peak_flops;
    b->prof_mark = be_prof_mark;
    b->prof_read = be_prof_read;
    b->stage_open = be_stage_open;
    b->stage_reuse = be_stage_reuse;
    b->stage_send = be_stage_send;
    b->stage_take = be_stage_take;
    the_backend = b;
    return 0;
}
