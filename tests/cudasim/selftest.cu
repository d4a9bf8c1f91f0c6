/* selftest.cu - the simulator's own checks (tests/cudasim/selftest.sh): CUDA
 * source, translated and compiled as the engine's kernels are, run against
 * what a GPU must give, so that a simulator that hides a kernel's bug fails
 * here first:
 *   - a shared-memory tree reduction gives the exact sum in both thread
 *     orders, and without its barrier a wrong one in at least one order;
 *   - blocks run in reverse order with the threads: a block reading what
 *     an earlier block of the same launch wrote (a race on a GPU) reads it
 *     in forward order and not in reverse;
 *   - warp shuffles (xor, down, up, broadcast) and __syncwarp;
 *   - dynamic shared memory reads NaN where nothing wrote it;
 *   - a launch a GPU refuses is refused (threads, shared memory, grid);
 *   - a barrier some threads cannot reach, or a write just outside an
 *     allocation, aborts with the kernel named;
 *   - atomics, a 3-D grid and block, and cub's sort (stable, by key bits);
 *   - CUDA Graphs: a captured stream's work does not run during the capture
 *     and runs in order at each replay; a synchronisation inside a capture
 *     invalidates it;
 *   - streams (CUDASIM_STREAMS): under each schedule a kernel that waits
 *     for the event after another stream's write reads it, in the graph of
 *     a fork and join too; without the wait it reads the old value under
 *     main-late (reading the first stream's write) or side-late (the other
 *     way), and at issue in neither; a copy from pageable memory is taken
 *     at issue, one from pinned memory when it runs; a capture whose joined
 *     stream is not joined back is refused. */
#include <cub/cub.cuh>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int failed;
#define CHECK(cond, ...) do { if (!(cond)) { printf("FAIL: " __VA_ARGS__); printf("\n"); failed++; } \
    else { printf("PASS: " __VA_ARGS__); printf("\n"); } } while (0)

__global__ void k_tree(const float *x, float *out, int n, int barrier)
{
    __shared__ float sh[256];
    int t = threadIdx.x;
    float s = 0.0f;
    for (int i = t; i < n; i += 256)
        s += x[i];
    sh[t] = s;
    __syncthreads();
    for (int h = 128; h > 0; h >>= 1) {
        if (t < h)
            sh[t] += sh[t + h];
        if (barrier)
            __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = sh[0];
}

/* out[4 w + k]: warp w's xor sum, down-sum at lane 0, lane 5's up-shifted
 * value (lane 3's), the broadcast of lane 7 */
__global__ void k_warp(const float *x, float *out)
{
    int t = threadIdx.x, lane = t & 31, w = t >> 5;
    float v = x[t], a = v, b = v;
    for (int o = 16; o > 0; o >>= 1)
        a += __shfl_xor_sync(0xffffffffu, a, o);
    for (int o = 16; o > 0; o >>= 1)
        b += __shfl_down_sync(0xffffffffu, b, o);
    float u = __shfl_up_sync(0xffffffffu, v, 2);
    float c = __shfl_sync(0xffffffffu, v, 7);
    __syncwarp();
    if (lane == 5) {
        out[4 * w] = a;
        out[4 * w + 2] = u;
        out[4 * w + 3] = c;
    }
    if (lane == 0)
        out[4 * w + 1] = b;
}

__global__ void k_dyn(float *out)
{
    extern __shared__ float sm[];
    if (threadIdx.x == 1)
        sm[1] = 2.0f;
    __syncthreads();
    if (threadIdx.x == 0) {
        out[0] = sm[1];
        out[1] = sm[3]; /* never written */
    }
}

__global__ void k_nothing(float *out) { out[threadIdx.x] = 1.0f; }

/* each block writes its slot, then reads its predecessor's: a race */
__global__ void k_chain(float *out)
{
    out[blockIdx.x] = 1.0f + blockIdx.x;
    if (blockIdx.x > 0)
        out[32 + blockIdx.x] = out[blockIdx.x - 1];
}

__global__ void k_oob(float *p, int i) { p[i] = 1.0f; }

__global__ void k_stuck(void)
{
    if (threadIdx.x == 0)
        __syncthreads();
    else
        __syncwarp();
}

__global__ void k_add(float *p, float v) { p[threadIdx.x] += v; }

__global__ void k_set(float *p, float v) { *p = v; }
__global__ void k_copy(const float *x, float *y) { *y = *x; }

/* under schedule pol, with streams a (made first: the "main" stream) and b:
 * got[0] what b read of a's write, got[1] what a read of b's write (each
 * with the wait when `wait`), got[2] / got[3] the same in a replayed graph
 * (fork and join; the fork's branch reads a's write after the fork when
 * not `wait`) */
static void streams_case(const char *pol, int wait, float *dev, float got[4])
{
    cudasim_streams(pol);
    cudaStream_t a, b;
    cudaEvent_t e1, e2;
    cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
    cudaEventCreate(&e1);
    cudaEventCreate(&e2);
    cudaMemset(dev, 0, 8 * sizeof(float));
    k_set<<<1, 1, 0, a>>>(dev, 7.0f);
    cudaEventRecord(e1, a);
    if (wait)
        cudaStreamWaitEvent(b, e1, 0);
    k_copy<<<1, 1, 0, b>>>(dev, dev + 1);
    k_set<<<1, 1, 0, b>>>(dev + 2, 5.0f);
    cudaEventRecord(e2, b);
    if (wait)
        cudaStreamWaitEvent(a, e2, 0);
    k_copy<<<1, 1, 0, a>>>(dev + 2, dev + 3);
    cudaDeviceSynchronize();
    got[0] = dev[1];
    got[1] = dev[3];
    /* a graph: a forks b (e1), a writes, b reads it (after e1 when not
     * `wait`), b writes, a joins b (e2) and reads it */
    cudaGraph_t g;
    cudaGraphExec_t x;
    cudaStreamBeginCapture(a, cudaStreamCaptureModeThreadLocal);
    if (!wait)
        cudaEventRecord(e1, a);
    k_set<<<1, 1, 0, a>>>(dev + 4, 9.0f);
    if (wait)
        cudaEventRecord(e1, a);
    cudaStreamWaitEvent(b, e1, 0);
    k_copy<<<1, 1, 0, b>>>(dev + 4, dev + 5);
    k_set<<<1, 1, 0, b>>>(dev + 6, 3.0f);
    cudaEventRecord(e2, b);
    cudaStreamWaitEvent(a, e2, 0);
    k_copy<<<1, 1, 0, a>>>(dev + 6, dev + 7);
    if (cudaStreamEndCapture(a, &g) != cudaSuccess || cudaGraphInstantiate(&x, g, 0) != cudaSuccess) {
        got[2] = got[3] = -1.0f;
    } else {
        cudaGraphLaunch(x, a);
        cudaStreamSynchronize(a);
        got[2] = dev[5];
        got[3] = dev[7];
        cudaGraphExecDestroy(x);
        cudaGraphDestroy(g);
    }
    cudaEventDestroy(e1);
    cudaEventDestroy(e2);
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
}

__global__ void k_atomic_3d(int *count, int *maxv, float *sum)
{
    int lin = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    int blk = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    atomicAdd(count, 1);
    atomicMax(maxv, blk * 1000 + lin);
    atomicAdd(sum, 0.5f);
}

/* Runs case k in a child: 1 when it died of SIGABRT, its stderr in msg. */
static int aborts(int k, char *msg, size_t n)
{
    fflush(stdout);
    int fd[2];
    if (pipe(fd) != 0)
        return 0;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 2);
        close(fd[0]);
        float *p;
        cudaMalloc((void **)&p, 10 * sizeof(float));
        if (k == 0)
            k_stuck<<<1, 32>>>();
        else
            k_oob<<<1, 1>>>(p, k == 1 ? 10 : -1);
        _exit(0);
    }
    close(fd[1]);
    size_t got = 0;
    ssize_t r;
    while (got < n - 1 && (r = read(fd[0], msg + got, n - 1 - got)) > 0)
        got += (size_t)r;
    msg[got] = 0;
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    float *x, *out;
    cudaMalloc((void **)&x, 512 * sizeof(float));
    cudaMalloc((void **)&out, 64 * sizeof(float));
    float want = 0.0f;
    for (int i = 0; i < 512; i++) { /* integers: every order of addition is exact */
        x[i] = (float)(i % 97);
        want += x[i];
    }
    int wrong_somewhere = 0;
    for (int rev = 0; rev < 2; rev++) {
        cudasim_order(rev);
        k_tree<<<1, 256>>>(x, out, 512, 1);
        CHECK(cudaGetLastError() == cudaSuccess && out[0] == want,
              "tree reduction with its barriers, %s order: %g (want %g)", rev ? "reverse" : "forward",
              out[0], want);
        k_tree<<<1, 256>>>(x, out, 512, 0);
        printf("  without the barrier in its loop, %s order: %g\n", rev ? "reverse" : "forward", out[0]);
        wrong_somewhere |= out[0] != want;
    }
    CHECK(wrong_somewhere, "a reduction missing a barrier gives a wrong sum in one of the two orders");
    int seen[2];
    for (int rev = 0; rev < 2; rev++) {
        cudasim_order(rev);
        for (int i = 0; i < 64; i++)
            out[i] = 0.0f;
        k_chain<<<8, 1>>>(out);
        seen[rev] = 0;
        for (int b = 1; b < 8; b++)
            seen[rev] += out[32 + b] == (float)b;
    }
    CHECK(seen[0] == 7 && seen[1] == 0,
          "blocks in reverse order with the threads: a block reading its predecessor's write sees it in %d of 7 "
          "blocks forward (want 7), %d reverse (want 0)", seen[0], seen[1]);
    cudasim_order(0);

    for (int i = 0; i < 64; i++)
        x[i] = (float)i;
    k_warp<<<1, 64>>>(x, out);
    for (int w = 0; w < 2; w++) {
        float s = 0.0f;
        for (int l = 0; l < 32; l++)
            s += (float)(32 * w + l);
        CHECK(out[4 * w] == s && out[4 * w + 1] == s, "warp %d: xor and down sums %g %g (want %g)", w,
              out[4 * w], out[4 * w + 1], s);
        CHECK(out[4 * w + 2] == (float)(32 * w + 3) && out[4 * w + 3] == (float)(32 * w + 7),
              "warp %d: up-shift %g (want %d), broadcast %g (want %d)", w, out[4 * w + 2], 32 * w + 3,
              out[4 * w + 3], 32 * w + 7);
    }

    k_dyn<<<1, 32, 16 * sizeof(float)>>>(out);
    CHECK(out[0] == 2.0f && isnan(out[1]), "dynamic shared memory: written %g, unwritten %g (NaN)", out[0],
          out[1]);

    k_nothing<<<1, 1025>>>(out);
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration, "1025 threads a block are refused");
    k_nothing<<<1, 32, 49 * 1024>>>(out);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue, "49 KiB of dynamic shared memory is refused");
    k_nothing<<<dim3(1, 65536), 32>>>(out);
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration, "a grid of 65536 in y is refused");
    CHECK(cudaGetLastError() == cudaSuccess, "the error is cleared once read");

    char msg[4096];
    CHECK(aborts(0, msg, sizeof msg) && strstr(msg, "kernel k_stuck"),
          "a barrier that some threads cannot reach aborts, naming the kernel");
    CHECK(aborts(1, msg, sizeof msg) && strstr(msg, "kernel k_oob wrote past the end"),
          "a write one element past an allocation aborts, naming the kernel");
    CHECK(aborts(2, msg, sizeof msg) && strstr(msg, "kernel k_oob wrote before"),
          "a write one element before an allocation aborts, naming the kernel");

    int *cnt, *mx;
    float *sum;
    cudaMalloc((void **)&cnt, sizeof(int));
    cudaMalloc((void **)&mx, sizeof(int));
    cudaMalloc((void **)&sum, sizeof(float));
    *cnt = 0;
    *mx = -1;
    *sum = 0.0f;
    k_atomic_3d<<<dim3(2, 3, 2), dim3(4, 2, 3)>>>(cnt, mx, sum);
    CHECK(*cnt == 12 * 24 && *mx == 11 * 1000 + 23 && *sum == 0.5f * 12 * 24,
          "atomics over a 3-D grid and block: count %d, max %d, sum %g", *cnt, *mx, *sum);

    int keys[8] = {5, 3, 5, 1, 3, 0x105, 1, 5}, vals[8], ko[8], vo[8];
    for (int i = 0; i < 8; i++)
        vals[i] = i;
    size_t tb = 0;
    cub::DeviceRadixSort::SortPairs(NULL, tb, keys, ko, vals, vo, 8, 0, 8);
    void *tmp = malloc(tb);
    cub::DeviceRadixSort::SortPairs(tmp, tb, keys, ko, vals, vo, 8, 0, 8);
    free(tmp);
    /* on the low 8 bits 0x105 sorts as 5; equal keys keep their order */
    int wk[8] = {1, 1, 3, 3, 5, 5, 0x105, 5}, wv[8] = {3, 6, 1, 4, 0, 2, 5, 7}, same = 1;
    for (int i = 0; i < 8; i++)
        same &= ko[i] == wk[i] && vo[i] == wv[i];
    CHECK(same, "cub's SortPairs on bits [0, 8): stable, by those bits");

    cudaStream_t st;
    cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
    cudaMemsetAsync(out, 0, 4 * sizeof(float), st);
    int ok = cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
    cudaMemsetAsync(out, 0, 2 * sizeof(float), st);
    k_add<<<1, 4, 0, st>>>(out, 1.5f);
    k_add<<<1, 2, 0, st>>>(out, 2.0f);
    ok &= out[0] == 0.0f; /* nothing ran yet */
    cudaGraph_t gr;
    cudaGraphExec_t ex;
    size_t nn = 0;
    ok &= cudaStreamEndCapture(st, &gr) == cudaSuccess && cudaGraphInstantiate(&ex, gr, 0) == cudaSuccess &&
          cudaGraphGetNodes(gr, NULL, &nn) == cudaSuccess && nn == 3;
    ok &= out[0] == 0.0f;
    cudaGraphLaunch(ex, st);
    cudaGraphLaunch(ex, st);
    CHECK(ok && out[0] == 3.5f && out[1] == 3.5f && out[2] == 3.0f && out[3] == 3.0f,
          "a CUDA Graph of 3 nodes (%zu) replays in order: %g %g %g %g (want 3.5 3.5 3 3)", nn, out[0], out[1],
          out[2], out[3]);
    cudaGraphExecDestroy(ex);
    cudaGraphDestroy(gr);
    cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal);
    k_add<<<1, 1, 0, st>>>(out, 1.0f);
    cudaError_t se = cudaStreamSynchronize(st);
    cudaError_t ee = cudaStreamEndCapture(st, &gr);
    CHECK(se == cudaErrorStreamCaptureUnsupported && ee == cudaErrorStreamCaptureInvalidated && out[0] == 3.5f,
          "a synchronisation inside a capture is refused and invalidates it");

    /* streams, under the three schedules */
    const char *pols[3] = {"issue", "main-late", "side-late"};
    for (int pi = 0; pi < 3; pi++) {
        float got[4];
        streams_case(pols[pi], 1, out, got);
        CHECK(got[0] == 7.0f && got[1] == 5.0f && got[2] == 9.0f && got[3] == 3.0f,
              "%s: reads after a wait for the other stream's event see its write: %g %g, in a graph %g %g "
              "(want 7 5 9 3)", pols[pi], got[0], got[1], got[2], got[3]);
        streams_case(pols[pi], 0, out, got);
        int want_b = pi != 1, want_a = pi != 2; /* right without the wait */
        CHECK((got[0] == 7.0f) == want_b && (got[1] == 5.0f) == want_a && (got[2] == 9.0f) == want_b,
              "%s, no wait: the second stream read %g (want %s), the first %g (want %s), a graph's branch "
              "%g (want %s)", pols[pi], got[0], want_b ? "7" : "0: read too early", got[1],
              want_a ? "5" : "0: read too early", got[2], want_b ? "9" : "0: read too early");
    }
    cudasim_streams("side-late");
    cudaStream_t m, sd;
    cudaStreamCreateWithFlags(&m, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&sd, cudaStreamNonBlocking);
    float *pin, page[2] = {1.0f, 1.0f};
    cudaHostAlloc((void **)&pin, 2 * sizeof(float), cudaHostAllocDefault);
    pin[0] = pin[1] = 1.0f;
    cudaMemcpyAsync(out, page, 2 * sizeof(float), cudaMemcpyHostToDevice, sd);
    cudaMemcpyAsync(out + 2, pin, 2 * sizeof(float), cudaMemcpyHostToDevice, sd);
    page[0] = pin[0] = 2.0f; /* before the copies ran: the pinned one reads it */
    cudaStreamSynchronize(sd);
    CHECK(out[0] == 1.0f && out[2] == 2.0f,
          "side-late: a copy from pageable memory takes it at issue (%g, want 1), from pinned memory when it "
          "runs (%g, want 2: a host write before the copy's event would be caught)", out[0], out[2]);
    out[4] = 4.0f;
    cudaMemcpyAsync(page, out + 4, sizeof(float), cudaMemcpyDeviceToHost, sd);
    CHECK(page[0] == 4.0f, "side-late: a copy to pageable memory has run when it returns (%g, want 4)",
          page[0]);
    cudaFreeHost(pin);
    cudaEvent_t ef;
    cudaEventCreate(&ef);
    cudaGraph_t gu;
    cudaStreamBeginCapture(m, cudaStreamCaptureModeThreadLocal);
    cudaEventRecord(ef, m);
    cudaStreamWaitEvent(sd, ef, 0);
    k_add<<<1, 1, 0, sd>>>(out, 1.0f);
    cudaError_t ue = cudaStreamEndCapture(m, &gu);
    CHECK(ue == cudaErrorStreamCaptureUnjoined,
          "a capture that ends with a forked stream not joined back is refused (%s)", cudaGetErrorName(ue));
    cudaEventDestroy(ef);
    cudaStreamDestroy(m);
    cudaStreamDestroy(sd);
    cudasim_streams("issue");

    printf("cudasim self-test: %d failed\n", failed);
    return failed ? 1 : 0;
}
