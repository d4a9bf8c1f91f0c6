/* comm_shm.c - the host communicator of ranks started by the local launcher
 * (comm.h): no MPI, one host, shared memory.
 *
 * The launcher makes the region (a memfd: POSIX shared memory without a
 * name to leak when a process is killed, and not bounded by /dev/shm's size
 * in a container) before it forks; every rank inherits the descriptor
 * across exec and maps it. Layout:
 *
 *   header (one page)  magic, ranks, slot size, the barrier, gone[]
 *   result             slot bytes: the reduced chunk
 *   slot[r]            slot bytes per rank: its chunk of the buffer
 *
 * A collective moves its buffer in chunks of one slot. Per chunk: each rank
 * copies its chunk into its slot; barrier; rank r reduces its 1/N of the
 * elements over slot[0], slot[1], ... slot[N-1] in that order into the
 * result; barrier; each rank copies the result out. The order of the
 * operands is the same for every element whichever rank reduces it, so every
 * rank gets the same bits, run after run. Slots are written before a
 * chunk's first barrier and read between its two; the result is written
 * between them and read until the next chunk's first barrier, so two
 * barriers a chunk order everything.
 *
 * The barrier is a counter and a generation word in the region: the last
 * rank to arrive bumps the generation and wakes the others (a shared futex);
 * the others spin briefly, then sleep on the futex. A peer that exited
 * without arriving (the launcher sets gone[r] when a rank exits 0 and wakes
 * the futex) makes the waiting ranks fail the collective (-1) instead of
 * waiting forever; a rank that dies otherwise is killed with the others by
 * the launcher (comm.c), and every rank dies with the launcher
 * (PR_SET_PDEATHSIG).
 *
 * iallreduce runs the reduction when it is called (the request is complete
 * on return; wait only checks it): there is no progress thread, so on CPU
 * ranks a bucket's all-reduce does not overlap the rest of the backward. */
#include "config.h"
#include "comm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SHM_MAGIC 0x6d78736863306d31ULL
#define SHM_HDR 4096
#define SPIN 4000 /* polls of the generation before sleeping on the futex */

struct shm_hdr {
    uint64_t magic;
    int32_t ranks;
    int32_t pad;
    uint64_t slot;                            /* bytes per slot (and of the result) */
    _Atomic uint32_t count;                   /* ranks arrived at the barrier */
    _Atomic uint32_t gen;                     /* barrier generation: the futex word */
    _Atomic uint32_t gone[COMM_SHM_MAX_RANKS]; /* set by the launcher: the rank exited */
};
_Static_assert(sizeof(struct shm_hdr) <= SHM_HDR, "the header fits its page");

static struct {
    struct shm_hdr *h;
    size_t bytes; /* mapped */
    int fd;
    unsigned req; /* last iallreduce request */
} sh = {.fd = -1};
static comm *self;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static size_t shm_bytes(int ranks, size_t slot) { return SHM_HDR + (size_t)(ranks + 1) * slot; }
static char *shm_result(struct shm_hdr *h) { return (char *)h + SHM_HDR; }
static char *shm_slot(struct shm_hdr *h, int r) { return (char *)h + SHM_HDR + (size_t)(r + 1) * h->slot; }

static void futex_wake_all(_Atomic uint32_t *w)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static void futex_sleep(_Atomic uint32_t *w, uint32_t val)
{
    struct timespec ts = {1, 0}; /* a wake may be missed by a dying waker: look again each second */
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT, val, &ts, NULL, 0);
}

static int peer_gone(struct shm_hdr *h)
{
    for (int r = 0; r < h->ranks; r++)
        if (atomic_load_explicit(&h->gone[r], memory_order_acquire))
            return 1;
    return 0;
}

/* Every rank arrives; 0, or -1 when a peer exited without arriving. */
static int shm_barrier_wait(struct shm_hdr *h)
{
    uint32_t g = atomic_load_explicit(&h->gen, memory_order_acquire);
    if (atomic_fetch_add_explicit(&h->count, 1, memory_order_acq_rel) == (uint32_t)h->ranks - 1) {
        atomic_store_explicit(&h->count, 0, memory_order_relaxed);
        atomic_fetch_add_explicit(&h->gen, 1, memory_order_release);
        futex_wake_all(&h->gen);
        return 0;
    }
    for (int i = 0; i < SPIN; i++)
        if (atomic_load_explicit(&h->gen, memory_order_acquire) != g)
            return 0;
    while (atomic_load_explicit(&h->gen, memory_order_acquire) == g) {
        /* gone, and the generation read again after it: a peer that was the
         * last to arrive bumps it before it exits, so a gone peer with the
         * generation unchanged never arrived (read before, the generation
         * could be older than the gone flag) */
        if (peer_gone(h) && atomic_load_explicit(&h->gen, memory_order_acquire) == g) {
            fprintf(stderr, "matrix-engine: shm: a rank exited while the others waited for it in a collective\n");
            return -1;
        }
        futex_sleep(&h->gen, g);
    }
    return 0;
}

static size_t type_size(int type) { return type == COMM_F32 ? 4 : 8; }

/* result[lo, hi) = slot[0] op slot[1] op ... op slot[N-1], in rank order */
#define REDUCE(T)                                                                          \
    do {                                                                                   \
        T *out = (T *)shm_result(h);                                                       \
        const T *s0 = (const T *)shm_slot(h, 0);                                           \
        for (size_t i = lo; i < hi; i++)                                                   \
            out[i] = s0[i];                                                                \
        for (int r = 1; r < h->ranks; r++) {                                               \
            const T *s = (const T *)shm_slot(h, r);                                        \
            if (op == COMM_SUM)                                                            \
                for (size_t i = lo; i < hi; i++)                                           \
                    out[i] = out[i] + s[i];                                                \
            else if (op == COMM_MAX)                                                       \
                for (size_t i = lo; i < hi; i++)                                           \
                    out[i] = s[i] > out[i] ? s[i] : out[i];                                \
            else                                                                           \
                for (size_t i = lo; i < hi; i++)                                           \
                    out[i] = s[i] < out[i] ? s[i] : out[i];                                \
        }                                                                                  \
    } while (0)

static void shm_reduce(struct shm_hdr *h, size_t lo, size_t hi, int type, int op)
{
    if (type == COMM_F32)
        REDUCE(float);
    else if (type == COMM_F64)
        REDUCE(double);
    else
        REDUCE(uint64_t);
}

static int shm_allreduce_now(void *buf, size_t n, int type, int op)
{
    struct shm_hdr *h = sh.h;
    size_t es = type_size(type), per = h->slot / es;
    int me = self->rank, N = h->ranks;
    if ((type != COMM_F32 && type != COMM_F64 && type != COMM_U64) ||
        (op != COMM_SUM && op != COMM_MAX && op != COMM_MIN))
        return -1;
    for (size_t off = 0; off < n; off += per) {
        size_t m = n - off < per ? n - off : per;
        char *b = (char *)buf + off * es;
        memcpy(shm_slot(h, me), b, m * es);
        if (shm_barrier_wait(h))
            return -1;
        shm_reduce(h, m * (size_t)me / (size_t)N, m * (size_t)(me + 1) / (size_t)N, type, op);
        if (shm_barrier_wait(h))
            return -1;
        memcpy(b, shm_result(h), m * es);
    }
    return 0;
}

static int c_allreduce(void *buf, size_t n, int type, int op)
{
    double t0 = now_s();
    int rc = shm_allreduce_now(buf, n, type, op);
    self->wait_s += now_s() - t0;
    return rc;
}

static int c_iallreduce(void *buf, size_t n, int type, int op, int *req)
{
    if (c_allreduce(buf, n, type, op))
        return -1;
    sh.req = sh.req % INT_MAX + 1;
    *req = (int)sh.req;
    return 0;
}

static int c_wait(int req) { return req > 0 ? 0 : -1; }

static int c_bcast(void *buf, size_t bytes, int root)
{
    struct shm_hdr *h = sh.h;
    if (root < 0 || root >= h->ranks)
        return -1;
    for (size_t off = 0; off < bytes; off += h->slot) {
        size_t m = bytes - off < h->slot ? bytes - off : h->slot;
        if (self->rank == root)
            memcpy(shm_slot(h, root), (char *)buf + off, m);
        if (shm_barrier_wait(h))
            return -1;
        if (self->rank != root)
            memcpy((char *)buf + off, shm_slot(h, root), m);
        if (shm_barrier_wait(h))
            return -1;
    }
    return 0;
}

static void c_barrier(void)
{
    if (shm_barrier_wait(sh.h))
        fprintf(stderr, "matrix-engine: shm: barrier failed\n");
}

static void c_fini(void)
{
    if (sh.h)
        munmap(sh.h, sh.bytes);
    if (sh.fd >= 0)
        close(sh.fd);
    sh.h = NULL;
    sh.fd = -1;
}

int comm_shm_create(int ranks, size_t slot_bytes, void **map, char *err, size_t n)
{
    if (ranks < 1 || ranks > COMM_SHM_MAX_RANKS) {
        snprintf(err, n, "the local launcher starts 1 to %d ranks, not %d", COMM_SHM_MAX_RANKS, ranks);
        return -1;
    }
    slot_bytes = (slot_bytes + 63) / 64 * 64;
    if (slot_bytes < 64)
        slot_bytes = 64;
    /* no MFD_CLOEXEC: the ranks inherit it across exec */
    int fd = (int)syscall(SYS_memfd_create, "matrix-engine-ranks", 0u);
    if (fd < 0) {
        snprintf(err, n, "shared memory for %d ranks: memfd_create: %s", ranks, strerror(errno));
        return -1;
    }
    size_t bytes = shm_bytes(ranks, slot_bytes);
    if (ftruncate(fd, (off_t)bytes)) {
        snprintf(err, n, "shared memory for %d ranks (%zu bytes): %s", ranks, bytes, strerror(errno));
        close(fd);
        return -1;
    }
    struct shm_hdr *h = mmap(NULL, SHM_HDR, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (h == MAP_FAILED) {
        snprintf(err, n, "shared memory for %d ranks: mmap: %s", ranks, strerror(errno));
        close(fd);
        return -1;
    }
    h->ranks = ranks;
    h->slot = slot_bytes;
    atomic_store(&h->count, 0);
    atomic_store(&h->gen, 0);
    for (int r = 0; r < COMM_SHM_MAX_RANKS; r++)
        atomic_store(&h->gone[r], 0);
    h->magic = SHM_MAGIC;
    *map = h;
    return fd;
}

void comm_shm_gone(void *map, int rank)
{
    struct shm_hdr *h = map;
    if (!h || rank < 0 || rank >= COMM_SHM_MAX_RANKS)
        return;
    atomic_store_explicit(&h->gone[rank], 1, memory_order_release);
    futex_wake_all(&h->gen);
}

void comm_shm_unmap(void *map)
{
    if (map)
        munmap(map, SHM_HDR);
}

int comm_shm_setup(comm *c, int fd, int rank, int size, int local_rank, char *err, size_t n)
{
    struct stat st;
    if (fstat(fd, &st) || (size_t)st.st_size < SHM_HDR) {
        snprintf(err, n, "shm: descriptor %d is not the launcher's shared memory", fd);
        return -1;
    }
    struct shm_hdr *h = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (h == MAP_FAILED) {
        snprintf(err, n, "shm: mmap of descriptor %d: %s", fd, strerror(errno));
        return -1;
    }
    if (h->magic != SHM_MAGIC || h->ranks != size || rank < 0 || rank >= size ||
        (size_t)st.st_size != shm_bytes(h->ranks, h->slot)) {
        snprintf(err, n, "shm: descriptor %d holds no region for rank %d of %d", fd, rank, size);
        munmap(h, (size_t)st.st_size);
        return -1;
    }
    fcntl(fd, F_SETFD, FD_CLOEXEC); /* not for what this rank may start */
    sh.h = h;
    sh.bytes = (size_t)st.st_size;
    sh.fd = fd;
    sh.req = 0;
    c->rank = rank;
    c->size = size;
    c->local_rank = local_rank;
    c->name = "shm";
    snprintf(c->version, sizeof c->version, "shared memory (memfd), %zu KiB slots, futex barrier",
             (size_t)h->slot >> 10);
    c->allreduce = c_allreduce;
    c->iallreduce = c_iallreduce;
    c->wait = c_wait;
    c->bcast = c_bcast;
    c->barrier = c_barrier;
    c->fini = c_fini;
    c->wait_s = 0;
    self = c;
    return 0;
}
