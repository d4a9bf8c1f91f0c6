/* cudasim.cc - the simulator's launches (threads as fibers, barriers, warp
 * exchanges), the part of the CUDA runtime API that engine/cuda/ calls, on
 * host memory (cudasim.h says what it models), CUDA Graphs, and NCCL for one
 * rank. What it does not model (a device attribute it does not know, the
 * list of a graph's nodes) fails with cudaErrorNotSupported, so the engine
 * stops with the call named instead of running something else. */
#include "cudasim.h"

#include "config.h"
#ifdef HAVE_NCCL
#include <nccl.h>
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <time.h>
#ifndef __x86_64__
#include <ucontext.h>
#endif

#include <deque>
#include <map>
#include <vector>

#ifdef __x86_64__
/* Fiber switch without ucontext's signal-mask system calls (they took a third
 * of the run time): the callee-saved registers pushed on the old stack, the
 * stack pointer saved in *from, the new one loaded, its registers popped. */
extern "C" void cudasim_switch(void **from, void *to);
__asm__(".text\n"
        ".globl cudasim_switch\n"
        ".hidden cudasim_switch\n"
        ".type cudasim_switch,@function\n"
        "cudasim_switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        ".size cudasim_switch, .-cudasim_switch\n");
#endif

namespace cudasim {

uint3 tid, bid;
dim3 bdim, gdim;
void *dyn_smem;

namespace {

enum { NEW, RUN, BAR, WARP, DONE };

struct fiber {
#ifdef __x86_64__
    void *sp;
#else
    ucontext_t ctx;
#endif
    int state;
    int stack;     /* its stack (RUN, BAR, WARP), -1 before and after */
    unsigned mask; /* WARP: the lanes it waits with */
    uint3 t;
};

const size_t STACK = 256 * 1024;
const int MAXT = 1024;

#ifdef __x86_64__
void *sched;
#else
ucontext_t sched;
#endif
fiber *fibs;
char *stacks;
/* The stacks no fiber holds, the last freed on top: a thread takes one when
 * it starts and gives it back when it ends, so the threads of a kernel
 * without barriers all run on one stack, warm in the caches and the TLB.
 * (Each thread on a stack of its own, STACK bytes apart, took 12% of a
 * cuBLASLt check's time in the switch, loading a cold stack.) */
std::vector<int> free_stacks;
int nthreads, cur;
void (*body_fn)(void *);
void *body_ctx;
unsigned long long slots[MAXT / 32][32];
cudaError_t last_error = cudaSuccess;
int reverse_order = -1;
unsigned long long nlaunches;

/* to fiber i from the scheduler, and back */
void enter(int i)
{
#ifdef __x86_64__
    cudasim_switch(&sched, fibs[i].sp);
#else
    swapcontext(&sched, &fibs[i].ctx);
#endif
}

void leave()
{
#ifdef __x86_64__
    cudasim_switch(&fibs[cur].sp, sched);
#else
    swapcontext(&fibs[cur].ctx, &sched);
#endif
}

void entry()
{
    body_fn(body_ctx);
    fibs[cur].state = DONE;
#ifdef __x86_64__
    leave(); /* never comes back: the fiber is made anew for the next block */
    abort();
#endif /* else uc_link: back to the scheduler */
}

void wait(int st, unsigned mask)
{
    fibs[cur].state = st;
    fibs[cur].mask = mask;
    leave();
}

[[noreturn]] void deadlock(const char *name)
{
    fprintf(stderr, "cudasim: kernel %s, block (%u,%u,%u): threads wait at a barrier that the others "
                    "cannot reach:\n", name, bid.x, bid.y, bid.z);
    for (int i = 0; i < nthreads; i++)
        if (fibs[i].state != DONE)
            fprintf(stderr, "  thread (%u,%u,%u) waits at %s (mask %08x)\n", fibs[i].t.x, fibs[i].t.y,
                    fibs[i].t.z, fibs[i].state == BAR ? "__syncthreads" : "a warp barrier", fibs[i].mask);
    abort();
}

/* Releases the waiters of every barrier whose participants have all
 * arrived; 1 when one was released. */
int release()
{
    int alive = 0, atbar = 0;
    for (int i = 0; i < nthreads; i++) {
        alive += fibs[i].state != DONE;
        atbar += fibs[i].state == BAR;
    }
    if (alive && atbar == alive) {
        for (int i = 0; i < nthreads; i++)
            if (fibs[i].state == BAR)
                fibs[i].state = RUN;
        return 1;
    }
    int any = 0;
    for (int w = 0; w * 32 < nthreads; w++) {
        int first = -1;
        for (int l = 0; l < 32 && w * 32 + l < nthreads; l++)
            if (fibs[w * 32 + l].state == WARP) {
                first = w * 32 + l;
                break;
            }
        if (first < 0)
            continue;
        unsigned m = fibs[first].mask;
        int ok = 1;
        for (int l = 0; l < 32 && w * 32 + l < nthreads && ok; l++) {
            const fiber &f = fibs[w * 32 + l];
            if (!((m >> l) & 1) || f.state == DONE)
                continue;
            ok = f.state == WARP && f.mask == m;
        }
        if (!ok)
            continue;
        for (int l = 0; l < 32 && w * 32 + l < nthreads; l++)
            if (((m >> l) & 1) && fibs[w * 32 + l].state == WARP)
                fibs[w * 32 + l].state = RUN;
        any = 1;
    }
    return any;
}

/* the block's __shared__ arrays (shared_slot), kept for the launch */
struct slot {
    const char *key;
    void *p;
    size_t n;
};
std::vector<slot> shslots;
size_t slots_bytes, launch_smem;
const char *launch_name;

void slots_free()
{
    for (auto &s : shslots)
        free(s.p);
    shslots.clear();
    slots_bytes = 0;
}

/* fiber f's first frame, on a free stack */
void start(fiber &f)
{
    int k = free_stacks.back();
    free_stacks.pop_back();
    f.stack = k;
#ifdef __x86_64__
    /* as cudasim_switch leaves a stack: six registers, then the address
     * it returns to (entry, which sees a 16-byte aligned call frame) */
    void **top = (void **)(stacks + (size_t)(k + 1) * STACK);
    top[-1] = NULL;
    top[-2] = (void *)entry;
    for (int r = 3; r <= 8; r++)
        top[-r] = NULL;
    f.sp = &top[-8];
#else
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = stacks + (size_t)k * STACK;
    f.ctx.uc_stack.ss_size = STACK;
    f.ctx.uc_link = &sched;
    makecontext(&f.ctx, entry, 0);
#endif
    f.state = RUN;
}

void run_block(const char *name)
{
    for (auto &s : shslots)
        memset(s.p, 0xff, s.n);
    for (int i = 0; i < nthreads; i++) { /* each fiber's thread index is set by launch_now */
        fiber &f = fibs[i];
        f.state = NEW;
        f.stack = -1;
        f.mask = 0;
    }
    for (;;) {
        int ran = 0;
        for (int k = 0; k < nthreads; k++) {
            int i = reverse_order ? nthreads - 1 - k : k;
            fiber &f = fibs[i];
            if (f.state == NEW)
                start(f);
            else if (f.state != RUN)
                continue;
            cur = i;
            tid = f.t;
            enter(i);
            ran = 1;
            if (f.state == DONE) { /* its stack is free again */
                free_stacks.push_back(f.stack);
                f.stack = -1;
            }
        }
        int alive = 0;
        for (int i = 0; i < nthreads; i++)
            alive += fibs[i].state != DONE;
        if (!alive)
            return;
        if (!release() && !ran) /* nothing ran and nothing to release */
            deadlock(name);
    }
}

/* Device allocations with a guard zone on each side, checked after every
 * launch: a kernel that writes outside what cudaMalloc gave (the engine's
 * allocator rounds small requests up to 512 bytes: a write inside that
 * rounding is not seen) stops the run with the kernel named. */
const size_t GUARD = 256;
const unsigned char GUARD_BYTE = 0xfd;
/* the allocations in an array, for the check after every kernel (a walk of
 * a map's nodes was 4% of an ops_check run) */
struct guarded {
    char *p;
    size_t n;
};
std::vector<guarded> guard_list;
struct alloc_rec {
    size_t n;  /* bytes */
    size_t at; /* its place in guard_list */
};
std::map<char *, alloc_rec> allocs; /* user pointer -> its record */

/* 1 when the GUARD bytes at p all hold GUARD_BYTE (8 at a time: this runs
 * after every kernel over every allocation) */
int guard_intact(const unsigned char *p)
{
    static const uint64_t want = 0x0101010101010101ULL * GUARD_BYTE;
    for (size_t k = 0; k < GUARD; k += 8) {
        uint64_t w;
        memcpy(&w, p + k, 8);
        if (w != want)
            return 0;
    }
    return 1;
}

void guards_check(const char *name)
{
    for (const guarded &a : guard_list) {
        const unsigned char *lo = (const unsigned char *)a.p - GUARD, *hi = (const unsigned char *)a.p + a.n;
        if (guard_intact(lo) && guard_intact(hi))
            continue;
        for (size_t k = 0; k < GUARD; k++)
            if (lo[k] != GUARD_BYTE || hi[k] != GUARD_BYTE) {
                fprintf(stderr, "cudasim: kernel %s wrote %s an allocation of %zu bytes at %p "
                                "(%zu bytes %s it)\n", name, lo[k] != GUARD_BYTE ? "before" : "past the end of",
                        a.n, (void *)a.p, lo[k] != GUARD_BYTE ? GUARD - k : k + 1,
                        lo[k] != GUARD_BYTE ? "before" : "past");
                abort();
            }
    }
}

} // namespace

void *alloc(size_t n)
{
    size_t body = (n + 255) / 256 * 256;
    char *b = (char *)aligned_alloc(256, body + 2 * GUARD);
    if (!b)
        return NULL;
    memset(b, GUARD_BYTE, GUARD);
    memset(b + GUARD + n, GUARD_BYTE, body - n + GUARD);
    memset(b + GUARD, 0xa5, n); /* device memory is not zeroed */
    allocs[b + GUARD] = alloc_rec{n, guard_list.size()};
    guard_list.push_back(guarded{b + GUARD, n});
    return b + GUARD;
}

int inside_alloc(const void *p, size_t n)
{
    auto it = allocs.upper_bound((char *)p);
    if (it == allocs.begin())
        return 0;
    --it;
    return (const char *)p >= it->first && (const char *)p + n <= it->first + it->second.n;
}

int release_alloc(void *p, size_t *n)
{
    auto it = allocs.find((char *)p);
    if (it == allocs.end())
        return -1;
    guards_check("(before cudaFree)");
    *n = it->second.n;
    size_t k = it->second.at;
    allocs.erase(it);
    guard_list[k] = guard_list.back(); /* the last one takes its place */
    guard_list.pop_back();
    if (k < guard_list.size())
        allocs[guard_list[k].p].at = k;
    free((char *)p - GUARD);
    return 0;
}

/* Streams. Each stream (and the legacy NULL stream) keeps its issued work
 * in a queue; `done` counts what has run. How soon work runs is the
 * schedule, CUDASIM_STREAMS:
 *   issue      (default) every stream runs its work when it is issued;
 *   main-late  the first stream the process creates (the engine's compute
 *              stream) runs its work only when something needs it: a
 *              synchronisation, or a stream that waits on one of its
 *              events; every other stream runs at issue;
 *   side-late  the reverse: the first stream at issue, every other late.
 * Each late schedule is one the GPU may run (nothing runs before what it
 * was ordered after), and the worst one for a missing order: with the
 * compute stream late, a copy or an all-reduce on another stream that does
 * not wait for the kernel that writes its input reads the old contents;
 * with the others late, a kernel that does not wait for the copy or the
 * all-reduce it reads runs before it. The legacy stream always runs at
 * issue (the engine's streams are non-blocking: no implicit order with it).
 * A stream's wait on an event is an entry of its queue that, when reached,
 * runs the event's stream up to the event's record. */
struct sstream {
    std::deque<std::function<void()>> q;
    unsigned long long issued = 0, done = 0;
    int late = 0, busy = 0;
};
sstream legacy_stream;
std::vector<sstream *> all_streams; /* every stream made, destroyed ones too (a wait may still name one) */
int streams_policy = -1;            /* 0 issue, 1 main-late, 2 side-late */

sstream *S(cudaStream_t s) { return s ? (sstream *)s : &legacy_stream; }

int parse_policy(const char *v)
{
    int p = !v || !*v || !strcmp(v, "issue") ? 0 : !strcmp(v, "main-late") ? 1 : !strcmp(v, "side-late") ? 2 : -1;
    if (p < 0) {
        fprintf(stderr, "cudasim: CUDASIM_STREAMS=%s is not one of issue, main-late, side-late\n", v);
        abort();
    }
    return p;
}

int policy()
{
    if (streams_policy < 0)
        streams_policy = parse_policy(getenv("CUDASIM_STREAMS"));
    return streams_policy;
}

int main_made; /* the "main" stream has been made */

/* runs t's work until `upto` items of it have run (what that work waits
 * for first) */
void drain(sstream *t, unsigned long long upto)
{
    if (t->done >= upto)
        return;
    if (t->busy) { /* cannot happen with waits on events already recorded */
        fprintf(stderr, "cudasim: streams wait for each other in a cycle\n");
        abort();
    }
    t->busy = 1;
    while (t->done < upto) {
        std::function<void()> f = std::move(t->q.front());
        t->q.pop_front();
        f();
        t->done++;
    }
    t->busy = 0;
}

void drain_all()
{
    drain(&legacy_stream, legacy_stream.issued);
    for (sstream *t : all_streams)
        drain(t, t->issued);
}

/* f at the end of t's queue; run now unless t is late */
void push(sstream *t, std::function<void()> f)
{
    t->q.push_back(std::move(f));
    t->issued++;
    if (!t->late)
        drain(t, t->issued);
}

/* CUDA Graph capture: while `capturing` is set, the work of that stream
 * (origin 0) and of the streams that joined it by waiting on an event
 * recorded in it (origins 1, 2, ...) is recorded in `captured`, each node
 * with its origin, a wait as a node naming the origin and node count it
 * waits for; a call that would synchronise (or allocate) then fails as on
 * the GPU, with cudaErrorStreamCaptureUnsupported, and invalidates the
 * capture. A replay issues the nodes to one stream per origin, in the
 * order of the capture, under the same schedule: the order of a graph's
 * branches is tested as the order of streams is. */
struct cnode {
    int origin;
    std::function<void()> f; /* empty: a wait */
    int w_origin;
    unsigned long long w_pos;
};
cudaStream_t capturing;
std::vector<cudaStream_t> cap_streams; /* [0] the capturing stream, then those joined */
std::vector<unsigned long long> cap_count;
int capture_broken;
const char *capture_broken_by;
std::vector<cnode> captured;

int cap_origin(cudaStream_t s)
{
    if (!capturing || !s)
        return -1;
    for (size_t i = 0; i < cap_streams.size(); i++)
        if (cap_streams[i] == s)
            return (int)i;
    return -1;
}

int captures(cudaStream_t s) { return cap_origin(s) >= 0; }

/* A call not allowed while a stream is captured (cudaStreamCaptureModeThreadLocal,
 * what the engine uses): 1, the capture invalidated. */
int capture_refuses(const char *call)
{
    if (!capturing)
        return 0;
    if (!capture_broken)
        capture_broken_by = call;
    capture_broken = 1;
    return 1;
}

void capture_node(int o, std::function<void()> f, int w_origin = -1, unsigned long long w_pos = 0)
{
    captured.push_back(cnode{o, std::move(f), w_origin, w_pos});
    cap_count[(size_t)o]++;
}

void enqueue(cudaStream_t s, std::function<void()> f)
{
    int o = cap_origin(s);
    if (o >= 0)
        capture_node(o, std::move(f));
    else
        push(S(s), std::move(f));
}

void launch_now(const Cfg &c, void (*body)(void *), void *ctx, const char *name);

void run(const Cfg &c, void (*body)(void *), std::shared_ptr<void> ctx, const char *name)
{
    unsigned long long nt = (unsigned long long)c.b.x * c.b.y * c.b.z;
    if (nt == 0 || nt > (unsigned)MAXT || c.b.z > 64 || c.g.x == 0 || c.g.y == 0 || c.g.z == 0 ||
        c.g.x > 0x7fffffffu || c.g.y > 65535 || c.g.z > 65535) {
        last_error = cudaErrorInvalidConfiguration;
        return;
    }
    if (c.smem > 48 * 1024) { /* beyond the default without cudaFuncSetAttribute */
        last_error = cudaErrorInvalidValue;
        return;
    }
    Cfg cc = c;
    enqueue(c.s, [cc, body, ctx, name] { launch_now(cc, body, ctx.get(), name); });
}

void launch_now(const Cfg &c, void (*body)(void *), void *ctx, const char *name)
{
    if (reverse_order < 0) {
        const char *o = getenv("CUDASIM_ORDER");
        reverse_order = o && !strcmp(o, "reverse");
    }
    unsigned long long nt = (unsigned long long)c.b.x * c.b.y * c.b.z;
    if (!stacks) {
        stacks = (char *)mmap(NULL, STACK * MAXT, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        fibs = new fiber[MAXT];
        for (int k = MAXT - 1; k >= 0; k--)
            free_stacks.push_back(k);
        if (stacks == MAP_FAILED) {
            perror("cudasim: mmap of the fibers' stacks");
            abort();
        }
    }
    nlaunches++;
    std::vector<unsigned char> smem(c.smem ? c.smem : 1);
    nthreads = (int)nt;
    bdim = c.b;
    gdim = c.g;
    body_fn = body;
    body_ctx = ctx;
    dyn_smem = c.smem ? smem.data() : nullptr;
    launch_smem = c.smem;
    launch_name = name;
    /* the threads' indices, the same in every block (counted, not divided:
     * the divisions were a fifth of the launches' own time) */
    for (unsigned i = 0, x = 0, y = 0, z = 0; i < (unsigned)nt; i++) {
        fibs[i].t.x = x;
        fibs[i].t.y = y;
        fibs[i].t.z = z;
        if (++x == c.b.x) {
            x = 0;
            if (++y == c.b.y) {
                y = 0;
                z++;
            }
        }
    }
    /* blocks one after another; in reverse order with the threads
     * (CUDASIM_ORDER=reverse), so that a block reading what a later block
     * of the same launch writes (a race on a GPU) shows there too */
    for (unsigned zz = 0; zz < c.g.z; zz++)
        for (unsigned yy = 0; yy < c.g.y; yy++)
            for (unsigned xx = 0; xx < c.g.x; xx++) {
                unsigned z = reverse_order ? c.g.z - 1 - zz : zz, y = reverse_order ? c.g.y - 1 - yy : yy;
                unsigned x = reverse_order ? c.g.x - 1 - xx : xx;
                bid.x = x;
                bid.y = y;
                bid.z = z;
                if (c.smem)
                    memset(smem.data(), 0xff, c.smem); /* NaN: unwritten shared memory */
                run_block(name);
            }
    dyn_smem = nullptr;
    slots_free();
    guards_check(name);
}

void *shared_slot(const char *key, size_t n, const char *var)
{
    for (auto &s : shslots)
        if (s.key == key)
            return s.p;
    slots_bytes += n;
    if (slots_bytes + launch_smem > 48 * 1024) {
        fprintf(stderr, "cudasim: kernel %s: %zu bytes of shared memory (%s: %zu), more than 48 KiB\n",
                launch_name, slots_bytes + launch_smem, var, n);
        abort();
    }
    void *p = aligned_alloc(16, (n + 15) / 16 * 16);
    if (!p)
        abort();
    memset(p, 0xff, n);
    shslots.push_back(slot{key, p, n});
    return p;
}

void set_order(int reverse) { reverse_order = reverse != 0; }

void set_streams(const char *p)
{
    streams_policy = parse_policy(p);
    main_made = 0;
}

void syncthreads() { wait(BAR, 0); }

void syncwarp(unsigned mask) { wait(WARP, mask); }

void warp_exchange(unsigned mask, const void *mine, size_t n, int src, void *out)
{
    int w = cur / 32, l = cur % 32;
    memcpy(&slots[w][l], mine, n);
    wait(WARP, mask); /* every lane has put */
    memcpy(out, &slots[w][src & 31], n);
    wait(WARP, mask); /* every lane has got: the slots may be reused */
}

/* device time the simulated libraries add (cudnn.cc's CUDASIM_DNN_DELAY):
 * events read the device clock plus this */
static double clock_extra_ms;
void advance_clock(double ms) { clock_extra_ms += ms; }
double clock_extra() { return clock_extra_ms; }
/* The simulated device's clock: the CPU time of the thread that runs the
 * streams' work (the engine's one CUDA thread: work runs when issued, or
 * when a wait drains a late stream), so the time the process waits for a
 * CPU is not device time. On the wall clock, a test's timed races judged
 * the machine's load too: under make check -j2, a preemption of a few ms
 * between an event record and a call of CUDASIM_DNN_DELAY's exact 95 ms
 * once made the call lose to one of 100 ms (conv_search.sh). */
double now_ms()
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6 + clock_extra_ms;
}
/* the host's wall clock in ms (timeouts) */
double wall_ms()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

} // namespace cudasim

/* ---- the runtime API ------------------------------------------------------------- */

namespace {

struct sim_event {
    double ms;
    int stamped;  /* its time was taken (an eager record, or an external record node replayed) */
    int captured; /* last recorded inside a capture without cudaEventRecordExternal: CUDA
                   * answers cudaErrorCapturedEvent to a query, synchronize or elapsed time */
    int external; /* last recorded as an external node of a capture: synchronize waits for all */
    int in_capture; /* recorded on a captured stream: a stream that waits on it joins the capture */
    int cap_origin; /* then: the origin and node count of its record in the capture */
    unsigned long long cap_pos;
    cudasim::sstream *st; /* else: the stream it was last recorded on (null: never) */
    unsigned long long seq; /* and the count of that stream's work up to the record */
};

using cudasim::now_ms;

size_t allocated;
const size_t SIM_MEM = (size_t)16 << 30; /* what the simulated device claims to hold */

} // namespace

extern "C" {

/* CUDASIM_DEVICES=N: that many devices (each rank of a data-parallel run is
 * its own process with its own simulated memory); default 1 */
static int sim_devices()
{
    const char *v = getenv("CUDASIM_DEVICES");
    int n = v && *v ? atoi(v) : 1;
    return n >= 1 && n <= 64 ? n : 1;
}

cudaError_t cudaGetDeviceCount(int *n)
{
    *n = sim_devices();
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int d) { return d >= 0 && d < sim_devices() ? cudaSuccess : cudaErrorInvalidDevice; }

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int d)
{
    if (d < 0 || d >= sim_devices())
        return cudaErrorInvalidDevice;
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "cudasim (CUDA on the CPU; cuBLASLt, cuDNN and NCCL simulated)");
    p->major = 9;
    p->minor = 0;
    p->multiProcessorCount = 4;
    p->totalGlobalMem = SIM_MEM;
    p->sharedMemPerBlock = 48 * 1024;
    p->sharedMemPerBlockOptin = 227 * 1024;
    p->maxThreadsPerBlock = 1024;
    p->warpSize = 32;
    p->maxThreadsDim[0] = p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 0x7fffffff;
    p->maxGridSize[1] = p->maxGridSize[2] = 65535;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr a, int d)
{
    if (d < 0 || d >= sim_devices())
        return cudaErrorInvalidDevice;
    switch (a) {
    case cudaDevAttrClockRate: *v = 1000000; return cudaSuccess; /* kHz */
    case cudaDevAttrMultiProcessorCount: *v = 4; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMajor: *v = 9; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor: *v = 0; return cudaSuccess;
    default: return cudaErrorNotSupported;
    }
}

cudaError_t cudaDriverGetVersion(int *v)
{
    *v = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
    *v = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = cudasim::last_error;
    cudasim::last_error = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void) { return cudasim::last_error; }

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorNotSupported: return "operation not supported (by cudasim, the CPU simulator)";
    case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated: return "operation failed due to a previous error during capture";
    case cudaErrorStreamCaptureUnjoined: return "capture was not joined to the origin stream";
    case cudaErrorIllegalState: return "the operation cannot be performed in the present state";
    default: return "cudasim: an error the simulator does not name";
    }
}

const char *cudaGetErrorName(cudaError_t e) { return cudaGetErrorString(e); }

cudaError_t cudaMalloc(void **p, size_t n)
{
    if (cudasim::capture_refuses("cudaMalloc"))
        return cudaErrorStreamCaptureUnsupported;
    if (allocated + n > SIM_MEM) {
        *p = NULL;
        return cudaErrorMemoryAllocation;
    }
    *p = cudasim::alloc(n);
    if (!*p)
        return cudaErrorMemoryAllocation;
    allocated += n;
    return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
    if (cudasim::capture_refuses("cudaFree"))
        return cudaErrorStreamCaptureUnsupported;
    if (!p)
        return cudaSuccess;
    cudasim::drain_all(); /* as the GPU: it waits for the device */
    size_t n = 0;
    if (cudasim::release_alloc(p, &n))
        return cudaErrorInvalidValue;
    allocated -= n;
    return cudaSuccess;
}

/* Pinned host memory (cudaHostAlloc): a copy to or from it is asynchronous;
 * a copy from pageable memory is taken at issue, and one to pageable memory
 * has run when the call returns (the CUDA runtime's documented behaviour). */
static std::map<char *, size_t> pinned;

static int is_pinned(const void *p)
{
    auto it = pinned.upper_bound((char *)p);
    if (it == pinned.begin())
        return 0;
    --it;
    return (const char *)p < it->first + it->second;
}

cudaError_t cudaHostAlloc(void **p, size_t n, unsigned)
{
    *p = aligned_alloc(256, n ? (n + 255) / 256 * 256 : 256);
    if (*p)
        pinned[(char *)*p] = n ? n : 1;
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaFreeHost(void *p)
{
    if (cudasim::capture_refuses("cudaFreeHost"))
        return cudaErrorStreamCaptureUnsupported;
    cudasim::drain_all(); /* as the GPU: it waits for the device */
    pinned.erase((char *)p);
    free(p);
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *fr, size_t *total)
{
    *total = SIM_MEM;
    *fr = allocated < SIM_MEM ? SIM_MEM - allocated : 0;
    return cudaSuccess;
}

/* on the legacy stream, which the engine's non-blocking streams are not
 * ordered with: it does not wait for them */
cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind)
{
    if (cudasim::capture_refuses("cudaMemcpy"))
        return cudaErrorStreamCaptureUnsupported;
    cudasim::drain(&cudasim::legacy_stream, cudasim::legacy_stream.issued);
    memmove(d, s, n);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k, cudaStream_t st)
{
    if (k == cudaMemcpyDefault)
        k = cudasim::inside_alloc(d, 1) ? (cudasim::inside_alloc(s, 1) ? cudaMemcpyDeviceToDevice
                                                                         : cudaMemcpyHostToDevice)
                                        : (cudasim::inside_alloc(s, 1) ? cudaMemcpyDeviceToHost
                                                                         : cudaMemcpyHostToHost);
    if ((k == cudaMemcpyHostToDevice || k == cudaMemcpyHostToHost) && !is_pinned(s)) {
        /* pageable source: staged at issue, the caller may reuse it at once */
        std::shared_ptr<std::vector<char>> stage = std::make_shared<std::vector<char>>((const char *)s,
                                                                                      (const char *)s + n);
        cudasim::enqueue(st, [d, stage, n] { memmove(d, stage->data(), n); });
    } else {
        cudasim::enqueue(st, [d, s, n] { memmove(d, s, n); });
    }
    if ((k == cudaMemcpyDeviceToHost || k == cudaMemcpyHostToHost) && !is_pinned(d) && !cudasim::captures(st))
        cudasim::drain(cudasim::S(st), cudasim::S(st)->issued); /* pageable destination: done on return */
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t st)
{
    cudasim::enqueue(st, [d, v, n] { memset(d, v, n); });
    return cudaSuccess;
}

cudaError_t cudaMemset(void *d, int v, size_t n)
{
    if (cudasim::capture_refuses("cudaMemset"))
        return cudaErrorStreamCaptureUnsupported;
    cudasim::drain(&cudasim::legacy_stream, cudasim::legacy_stream.issued);
    memset(d, v, n);
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned)
{
    cudasim::sstream *t = new cudasim::sstream;
    int pol = cudasim::policy(), first = !cudasim::main_made;
    cudasim::main_made = 1;
    t->late = pol == 1 ? first : pol == 2 ? !first : 0;
    cudasim::all_streams.push_back(t);
    *s = (cudaStream_t)t;
    return cudaSuccess;
}

/* its work still runs (now); the object stays, an event may name it */
cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    if (s)
        cudasim::drain(cudasim::S(s), cudasim::S(s)->issued);
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    if (cudasim::capture_refuses("cudaStreamSynchronize"))
        return cudaErrorStreamCaptureUnsupported;
    cudasim::drain(cudasim::S(s), cudasim::S(s)->issued);
    return cudaSuccess;
}

/* Outside a capture: s's later work runs after the event's stream has run
 * up to the event's record (an event never recorded: nothing to wait for).
 * Inside a capture, a stream that waits on an event of the capture joins
 * it (its later work is recorded in the graph), as CUDA's cross-stream
 * capture does. */
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t ev, unsigned)
{
    sim_event *e = (sim_event *)ev;
    if (cudasim::capturing && e->in_capture) {
        int o = cudasim::cap_origin(s);
        if (o < 0) {
            o = (int)cudasim::cap_streams.size();
            cudasim::cap_streams.push_back(s);
            cudasim::cap_count.push_back(0);
        }
        cudasim::capture_node(o, nullptr, e->cap_origin, e->cap_pos);
        return cudaSuccess;
    }
    if (cudasim::captures(s) || !e->st)
        return cudaSuccess;
    cudasim::sstream *src = e->st;
    unsigned long long n = e->seq;
    cudasim::push(cudasim::S(s), [src, n] { cudasim::drain(src, n); });
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    if (cudasim::capture_refuses("cudaDeviceSynchronize"))
        return cudaErrorStreamCaptureUnsupported;
    cudasim::drain_all();
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    *e = (cudaEvent_t) new sim_event{now_ms(), 0, 0, 0, 0, 0, 0, nullptr, 0};
    return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned) { return cudaEventCreate(e); }

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    delete (sim_event *)e;
    return cudaSuccess;
}

/* A record inside a capture is an ordering edge of the graph, not a node
 * that takes a time (CUDA: the event then answers cudaErrorCapturedEvent to
 * a query, a synchronize or an elapsed time), unless external: then a node
 * whose replays take the time, as an eager record does. */
static cudaError_t event_record(cudaEvent_t ev, cudaStream_t s, int external)
{
    sim_event *e = (sim_event *)ev;
    int o = cudasim::cap_origin(s);
    if (external && o < 0)
        return cudaErrorIllegalState; /* cudaEventRecordExternal outside a capture */
    e->in_capture = o >= 0;
    e->captured = o >= 0 && !external;
    e->external = o >= 0 && external;
    if (o >= 0 && !external)
        cudasim::enqueue(s, [] {});
    else
        cudasim::enqueue(s, [e] {
            e->ms = now_ms();
            e->stamped = 1;
        });
    if (o >= 0) {
        e->cap_origin = o;
        e->cap_pos = cudasim::cap_count[(size_t)o];
    } else {
        e->st = cudasim::S(s);
        e->seq = e->st->issued;
    }
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t s) { return event_record(ev, s, 0); }

cudaError_t cudaEventRecordWithFlags(cudaEvent_t ev, cudaStream_t s, unsigned flags)
{
    return event_record(ev, s, (flags & cudaEventRecordExternal) != 0);
}

cudaError_t cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus *st)
{
    *st = cudasim::cap_origin(s) >= 0 ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t ev)
{
    if (cudasim::capture_refuses("cudaEventSynchronize"))
        return cudaErrorStreamCaptureUnsupported;
    sim_event *e = (sim_event *)ev;
    if (e->captured)
        return cudaErrorCapturedEvent;
    if (e->external) /* a node of a graph: its latest replay, wherever launched */
        cudasim::drain_all();
    else if (e->st)
        cudasim::drain(e->st, e->seq);
    return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    sim_event *x = (sim_event *)a, *y = (sim_event *)b;
    if (x->captured || y->captured)
        return cudaErrorCapturedEvent;
    if (!x->stamped || !y->stamped)
        return cudaErrorInvalidResourceHandle; /* never recorded */
    *ms = (float)(y->ms - x->ms);
    return cudaSuccess;
}

/* CUDA Graphs: a graph is the captured work, each node with its origin
 * stream (cudasim::cnode); a launch replays it on the stream (kernels,
 * copies, sets, event records, with the arguments of the capture, as on
 * the GPU): one stream per origin, late or not as the origin was, each
 * node issued in the capture's order, and all of them run before the
 * launching stream's next work. */
struct sim_graph {
    std::vector<cudasim::cnode> nodes;
    std::vector<int> late; /* per origin */
};

cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode)
{
    if (cudasim::capturing)
        return cudaErrorIllegalState;
    cudasim::capturing = s;
    cudasim::cap_streams.assign(1, s);
    cudasim::cap_count.assign(1, 0);
    cudasim::capture_broken = 0;
    cudasim::captured.clear();
    return cudaSuccess;
}

/* 1 when every joined stream's last captured node is ordered before the
 * end of the capturing stream's work (CUDA refuses the capture otherwise:
 * cudaErrorStreamCaptureUnjoined) */
static int capture_joined(size_t *unjoined)
{
    size_t no = cudasim::cap_streams.size();
    std::vector<unsigned long long> reach(no, 0); /* nodes of each origin ordered before the end */
    reach[0] = cudasim::cap_count[0];
    for (int changed = 1; changed;) {
        changed = 0;
        std::vector<unsigned long long> pos(no, 0);
        for (const cudasim::cnode &nd : cudasim::captured) {
            unsigned long long k = ++pos[(size_t)nd.origin];
            if (!nd.f && k <= reach[(size_t)nd.origin] && nd.w_pos > reach[(size_t)nd.w_origin]) {
                reach[(size_t)nd.w_origin] = nd.w_pos;
                changed = 1;
            }
        }
    }
    for (size_t o = 1; o < no; o++)
        if (reach[o] < cudasim::cap_count[o]) {
            *unjoined = o;
            return 0;
        }
    return 1;
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g)
{
    if (!cudasim::capturing || s != cudasim::capturing)
        return cudaErrorIllegalState;
    *g = nullptr;
    size_t o = 0;
    cudaError_t err = cudaSuccess;
    if (cudasim::capture_broken) {
        fprintf(stderr, "cudasim: the capture was invalidated by %s inside it\n", cudasim::capture_broken_by);
        err = cudaErrorStreamCaptureInvalidated;
    } else if (!capture_joined(&o)) {
        fprintf(stderr, "cudasim: the capture ends with work of a joined stream (the %zu%s joined) that the "
                        "capturing stream does not wait for\n", o, o == 1 ? "st" : o == 2 ? "nd" : "th");
        err = cudaErrorStreamCaptureUnjoined;
    }
    if (err == cudaSuccess) {
        sim_graph *sg = new sim_graph;
        sg->nodes.swap(cudasim::captured);
        for (cudaStream_t c : cudasim::cap_streams)
            sg->late.push_back(cudasim::S(c)->late);
        *g = (cudaGraph_t)sg;
    }
    cudasim::capturing = nullptr;
    cudasim::cap_streams.clear();
    cudasim::cap_count.clear();
    cudasim::captured.clear();
    return err;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *x, cudaGraph_t g, unsigned long long)
{
    if (!g)
        return cudaErrorInvalidValue;
    *x = (cudaGraphExec_t) new sim_graph(*(sim_graph *)g);
    return cudaSuccess;
}

static void replay(const sim_graph *sg)
{
    std::vector<cudasim::sstream> sub(sg->late.size());
    for (size_t o = 0; o < sub.size(); o++)
        sub[o].late = sg->late[o];
    for (const cudasim::cnode &nd : sg->nodes) {
        if (nd.f) {
            cudasim::push(&sub[(size_t)nd.origin], nd.f);
        } else {
            cudasim::sstream *src = &sub[(size_t)nd.w_origin];
            unsigned long long n = nd.w_pos;
            cudasim::push(&sub[(size_t)nd.origin], [src, n] { cudasim::drain(src, n); });
        }
    }
    for (cudasim::sstream &t : sub)
        cudasim::drain(&t, t.issued);
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t s)
{
    if (!x)
        return cudaErrorInvalidValue;
    sim_graph *sg = (sim_graph *)x;
    cudasim::enqueue(s, [sg] { replay(sg); });
    return cudaSuccess;
}

cudaError_t cudaGraphGetNodes(cudaGraph_t g, cudaGraphNode_t *nodes, size_t *n)
{
    if (!g || nodes) /* the list of nodes itself: not simulated */
        return nodes ? cudaErrorNotSupported : cudaErrorInvalidValue;
    *n = ((sim_graph *)g)->nodes.size();
    return cudaSuccess;
}

/* as the GPU, after the launches issued before it have run */
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t x)
{
    cudasim::drain_all();
    delete (sim_graph *)x;
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t g)
{
    delete (sim_graph *)g;
    return cudaSuccess;
}

/* ---- NCCL ------------------------------------------------------------------------
 * The collectives of a communicator over the ranks of one machine, each rank
 * its own process (the engine's launcher starts them): rank 0's unique id
 * names a POSIX shared memory object, every rank maps it, and an all-reduce
 * copies each rank's part into its slot, waits for all (a barrier in the
 * shared memory), reduces the slots in rank order (every rank computes the
 * same sum, bit for bit) into its output, and waits again, in chunks of the
 * slot's size. It runs in stream order at issue (captured into a CUDA Graph
 * like any stream work), so every rank must issue the same collectives in
 * the same order, as NCCL requires. A rank that waits more than
 * CUDASIM_NCCL_TIMEOUT seconds (default 120) for its peers aborts saying so.
 * CUDASIM_DEVICES=N makes the simulated machine have N devices. */
#ifdef HAVE_NCCL
} // extern "C"

namespace {
const size_t NCCL_SLOT = (size_t)8 << 20;
struct nccl_shm {
    unsigned count, gen, nranks, joined;
};
struct sim_comm {
    nccl_shm *h;
    char *slots;
    int rank, nranks;
    size_t bytes;
};

void nccl_barrier(sim_comm *c)
{
    unsigned gen = __atomic_load_n(&c->h->gen, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&c->h->count, 1, __ATOMIC_ACQ_REL) == (unsigned)c->nranks) {
        __atomic_store_n(&c->h->count, 0, __ATOMIC_RELAXED);
        __atomic_add_fetch(&c->h->gen, 1, __ATOMIC_RELEASE);
        return;
    }
    const char *t = getenv("CUDASIM_NCCL_TIMEOUT");
    double limit = (t && *t ? atof(t) : 120.0) * 1e3, t0 = cudasim::wall_ms();
    while (__atomic_load_n(&c->h->gen, __ATOMIC_ACQUIRE) == gen) {
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
        if (cudasim::wall_ms() - t0 > limit) {
            fprintf(stderr, "cudasim: NCCL rank %d of %d: its peers did not reach the collective in %.0f s\n",
                    c->rank, c->nranks, limit / 1e3);
            abort();
        }
    }
}

template <class T> void nccl_reduce(const sim_comm *c, void *out, size_t n, ncclRedOp_t op)
{
    for (size_t i = 0; i < n; i++) {
        T acc = ((const T *)c->slots)[i];
        for (int r = 1; r < c->nranks; r++) {
            T v = ((const T *)(c->slots + (size_t)r * NCCL_SLOT))[i];
            acc = op == ncclMax ? (v > acc ? v : acc) : op == ncclMin ? (v < acc ? v : acc)
                  : op == ncclProd ? acc * v : acc + v;
        }
        if (op == ncclAvg)
            acc = acc / (T)c->nranks;
        ((T *)out)[i] = acc;
    }
}

void nccl_reduce16(const sim_comm *c, void *out, size_t n, ncclRedOp_t op, int bf)
{
    for (size_t i = 0; i < n; i++) {
        float acc = 0.0f;
        for (int r = 0; r < c->nranks; r++) {
            const void *p = c->slots + (size_t)r * NCCL_SLOT;
            float v = bf ? __bfloat162float(((const __nv_bfloat16 *)p)[i]) : __half2float(((const __half *)p)[i]);
            acc = r == 0 ? v : op == ncclMax ? fmaxf(acc, v) : op == ncclMin ? fminf(acc, v)
                  : op == ncclProd ? acc * v : acc + v;
        }
        if (op == ncclAvg)
            acc /= (float)c->nranks;
        if (bf)
            ((__nv_bfloat16 *)out)[i] = __float2bfloat16_rn(acc);
        else
            ((__half *)out)[i] = __float2half_rn(acc);
    }
}
} // namespace

extern "C" {

ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    static unsigned serial;
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "/cudasim-nccl-%ld-%u-%ld", (long)getpid(), serial++,
             (long)time(NULL));
    return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    if (nranks < 1 || rank < 0 || rank >= nranks || strncmp(id.internal, "/cudasim-nccl-", 14) != 0)
        return ncclInvalidArgument;
    sim_comm *c = (sim_comm *)calloc(1, sizeof *c);
    if (!c)
        return ncclSystemError;
    c->rank = rank;
    c->nranks = nranks;
    c->bytes = 4096 + (size_t)nranks * NCCL_SLOT;
    int fd = shm_open(id.internal, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)c->bytes) != 0) {
        fprintf(stderr, "cudasim: NCCL: shared memory %s: %s\n", id.internal, strerror(errno));
        if (fd >= 0)
            close(fd);
        free(c);
        return ncclSystemError;
    }
    void *m = mmap(NULL, c->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        free(c);
        return ncclSystemError;
    }
    c->h = (nccl_shm *)m;
    c->slots = (char *)m + 4096;
    __atomic_add_fetch(&c->h->joined, 1, __ATOMIC_ACQ_REL);
    nccl_barrier(c); /* every rank has it mapped: the name can go */
    if (rank == 0)
        shm_unlink(id.internal);
    *comm = (ncclComm_t)c;
    return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    sim_comm *c = (sim_comm *)comm;
    if (c) {
        munmap(c->h, c->bytes);
        free(c);
    }
    return ncclSuccess;
}

ncclResult_t ncclGetVersion(int *v)
{
    *v = NCCL_VERSION_CODE;
    return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t r)
{
    return r == ncclSuccess ? "no error" : r == ncclInvalidArgument ? "invalid argument (cudasim)"
                                                                    : "cudasim: an NCCL error";
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t dt, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t s)
{
    static const size_t size[] = {[ncclInt8] = 1, [ncclUint8] = 1, [ncclInt32] = 4, [ncclUint32] = 4,
                                  [ncclInt64] = 8, [ncclUint64] = 8, [ncclFloat16] = 2, [ncclFloat32] = 4,
                                  [ncclFloat64] = 8, [ncclBfloat16] = 2};
    sim_comm *c = (sim_comm *)comm;
    if (!c || (int)dt < 0 || (size_t)dt >= sizeof size / sizeof size[0] || !size[dt] ||
        (op != ncclSum && op != ncclAvg && op != ncclMax && op != ncclMin && op != ncclProd) ||
        (op == ncclAvg && dt != ncclFloat16 && dt != ncclFloat32 && dt != ncclFloat64 && dt != ncclBfloat16))
        return ncclInvalidArgument;
    const size_t es = size[dt];
    if (!cudasim::inside_alloc(send, count * es) || !cudasim::inside_alloc(recv, count * es)) {
        fprintf(stderr, "cudasim: ncclAllReduce: a buffer of %zu bytes is not inside one cudaMalloc allocation\n",
                count * es);
        abort();
    }
    cudasim::enqueue(s, [c, send, recv, count, dt, op, es] {
        const size_t per = NCCL_SLOT / es;
        for (size_t off = 0; off < count || (count == 0 && off == 0); off += per) {
            size_t n = count - off < per ? count - off : per;
            memcpy(c->slots + (size_t)c->rank * NCCL_SLOT, (const char *)send + off * es, n * es);
            nccl_barrier(c);
            void *out = (char *)recv + off * es;
            switch (dt) {
            case ncclFloat32: nccl_reduce<float>(c, out, n, op); break;
            case ncclFloat64: nccl_reduce<double>(c, out, n, op); break;
            case ncclInt32: nccl_reduce<int32_t>(c, out, n, op); break;
            case ncclUint32: nccl_reduce<uint32_t>(c, out, n, op); break;
            case ncclInt64: nccl_reduce<int64_t>(c, out, n, op); break;
            case ncclUint64: nccl_reduce<uint64_t>(c, out, n, op); break;
            case ncclInt8: nccl_reduce<int8_t>(c, out, n, op); break;
            case ncclUint8: nccl_reduce<uint8_t>(c, out, n, op); break;
            case ncclFloat16: nccl_reduce16(c, out, n, op, 0); break;
            default: nccl_reduce16(c, out, n, op, 1); break;
            }
            nccl_barrier(c); /* every rank has read the slots */
            if (count == 0)
                break;
        }
    });
    return ncclSuccess;
}
#endif

} // extern "C"
