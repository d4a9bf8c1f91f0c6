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
 *     invalidates it. */
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

    printf("cudasim self-test: %d failed\n", failed);
    return failed ? 1 : 0;
}
