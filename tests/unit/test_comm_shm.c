/* test_comm_shm.c - engine/comm_shm.c, the host communicator of the local
 * launcher's ranks: 1 to 4 ranks (forked processes over one region, with
 * 256-byte slots so that buffers cross many chunks), every collective
 * against a serial reference:
 *   - allreduce and iallreduce + wait, F32 / F64 / U64 x SUM / MAX / MIN,
 *     0, 1, 7, 64, 65 and 1001 elements: every rank's result equals, bit for
 *     bit, the reduction in rank order (so every rank has the same bits);
 *     with 3 ranks the reverse order gives other bits for some f32 sums
 *     (the data make the order matter, so the check can fail);
 *   - bcast of 0, 1, 1003 bytes from the last rank; barrier;
 *   - a rank that exits (the launcher marks it gone) makes the others' next
 *     collective fail instead of hanging;
 *   - bad input: 0 or too many ranks, a descriptor that is not a region, a
 *     rank out of range. */
#include "config.h"
#include "t.h"
#include "../../engine/comm.h"

#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SLOT 256
static const size_t sizes[] = {0, 1, 7, 64, 65, 1001};
#define NSIZES (sizeof sizes / sizeof *sizes)

/* rank r's element i of case k: magnitudes spread over 2^-20..2^20 so that
 * the order of a sum changes its rounding */
static double value(int r, size_t i, int k)
{
    uint64_t x = (uint64_t)(r + 1) * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(i + 1) * 0xBF58476D1CE4E5B9ULL ^
                 (uint64_t)(k + 1) * 0x94D049BB133111EBULL;
    x ^= x >> 31;
    x *= 0xD6E8FEB86689B7CDULL;
    x ^= x >> 27;
    double u = (double)(x >> 11) / 9007199254740992.0; /* [0, 1) */
    int e = (int)(x % 41) - 20;
    return (u - 0.5) * ldexp(1.0, e);
}

static void fill(void *buf, size_t n, int type, int r, int k)
{
    for (size_t i = 0; i < n; i++) {
        double v = value(r, i, k);
        if (type == COMM_F32)
            ((float *)buf)[i] = (float)v;
        else if (type == COMM_F64)
            ((double *)buf)[i] = v;
        else
            ((uint64_t *)buf)[i] = (uint64_t)(v * 1e6 + 1e12) * (uint64_t)(r + 3);
    }
}

#define COMBINE(acc, x, op) ((op) == COMM_SUM ? (acc) + (x) : (op) == COMM_MAX ? ((x) > (acc) ? (x) : (acc)) \
                                                                                : ((x) < (acc) ? (x) : (acc)))

/* the reduction over ranks in the order given (reverse: N-1 .. 0) */
static void reference(void *out, size_t n, int type, int op, int N, int k, int reverse)
{
    void *v = malloc(n * 8 + 8);
    for (int j = 0; j < N; j++) {
        int r = reverse ? N - 1 - j : j;
        fill(v, n, type, r, k);
        for (size_t i = 0; i < n; i++) {
            if (type == COMM_F32) {
                float *o = out, x = ((float *)v)[i];
                o[i] = j ? COMBINE(o[i], x, op) : x;
            } else if (type == COMM_F64) {
                double *o = out, x = ((double *)v)[i];
                o[i] = j ? COMBINE(o[i], x, op) : x;
            } else {
                uint64_t *o = out, x = ((uint64_t *)v)[i];
                o[i] = j ? COMBINE(o[i], x, op) : x;
            }
        }
    }
    free(v);
}

/* one rank's part: every collective, checked; the failures */
static int rank_run(int fd, int rank, int N)
{
    comm c;
    char err[256];
    memset(&c, 0, sizeof c);
    if (comm_shm_setup(&c, fd, rank, N, rank, err, sizeof err)) {
        fprintf(stderr, "rank %d: %s\n", rank, err);
        return 1;
    }
    int bad = 0, k = 0, order_matters = 0;
    void *buf = malloc(1001 * 8 + 8), *ref = malloc(1001 * 8 + 8), *rev = malloc(1001 * 8 + 8);
    for (int type = COMM_F32; type <= COMM_U64; type++)
        for (int op = COMM_SUM; op <= COMM_MIN; op++)
            for (size_t s = 0; s < NSIZES; s++, k++)
                for (int nb = 0; nb < 2; nb++) { /* blocking, then started + wait */
                    size_t n = sizes[s], es = type == COMM_F32 ? 4 : 8;
                    fill(buf, n, type, rank, k);
                    int rc, req = -1;
                    if (nb)
                        rc = c.iallreduce(buf, n, type, op, &req) || c.wait(req);
                    else
                        rc = c.allreduce(buf, n, type, op);
                    reference(ref, n, type, op, N, k, 0);
                    if (rc || memcmp(buf, ref, n * es)) {
                        fprintf(stderr, "rank %d of %d: %sallreduce type %d op %d n %zu: %s\n", rank, N,
                                nb ? "i" : "", type, op, n, rc ? "failed" : "differs from the rank-order reference");
                        bad++;
                    }
                    if (type == COMM_F32 && op == COMM_SUM && N == 3) {
                        reference(rev, n, type, op, N, k, 1);
                        order_matters += memcmp(ref, rev, n * es) != 0;
                    }
                }
    if (N == 3 && !order_matters) {
        fprintf(stderr, "rank %d: no f32 sum depends on the order (the bit-for-bit check cannot fail)\n", rank);
        bad++;
    }
    static const size_t bytes[] = {0, 1, 1003};
    for (size_t b = 0; b < 3; b++) {
        unsigned char *p = buf;
        for (size_t i = 0; i < bytes[b]; i++)
            p[i] = rank == N - 1 ? (unsigned char)(i * 7 + b) : 0xEE;
        int rc = c.bcast(buf, bytes[b], N - 1);
        for (size_t i = 0; i < bytes[b] && !rc; i++)
            rc = p[i] != (unsigned char)(i * 7 + b);
        if (rc) {
            fprintf(stderr, "rank %d of %d: bcast of %zu bytes from %d wrong\n", rank, N, bytes[b], N - 1);
            bad++;
        }
    }
    if (c.bcast(buf, 1, N) == 0) {
        fprintf(stderr, "rank %d: bcast from rank %d (out of range) succeeded\n", rank, N);
        bad++;
    }
    c.barrier();
    if (c.wait_s <= 0) {
        fprintf(stderr, "rank %d: no time counted in wait_s\n", rank);
        bad++;
    }
    c.fini();
    free(buf);
    free(ref);
    free(rev);
    return bad;
}

/* N ranks over one region; the failures (a rank that did not exit 0
 * counts one) */
static int run_ranks(int N)
{
    char err[256];
    void *map = NULL;
    int fd = comm_shm_create(N, SLOT, &map, err, sizeof err);
    if (fd < 0) {
        fprintf(stderr, "create %d: %s\n", N, err);
        return 1;
    }
    pid_t pid[4];
    for (int r = 0; r < N; r++)
        if ((pid[r] = fork()) == 0) {
            alarm(60); /* a hang is a failure, not a stuck test */
            int bad = rank_run(fd, r, N);
            _exit(bad > 100 ? 100 : bad);
        }
    int bad = 0;
    for (int r = 0; r < N; r++) {
        int st = 0;
        waitpid(pid[r], &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st)) {
            fprintf(stderr, "%d ranks: rank %d ended with status 0x%x\n", N, r, st);
            bad++;
        }
    }
    comm_shm_unmap(map);
    close(fd);
    return bad;
}

/* rank 2 of 3 exits at once; the launcher (this process) marks it gone:
 * the others' allreduce fails (each exits 0 when it did) */
static int run_gone(void)
{
    char err[256];
    void *map = NULL;
    int fd = comm_shm_create(3, SLOT, &map, err, sizeof err), bad = 0;
    if (fd < 0)
        return 1;
    pid_t pid[3];
    for (int r = 0; r < 3; r++)
        if ((pid[r] = fork()) == 0) {
            alarm(60);
            if (r == 2)
                _exit(0);
            comm c;
            memset(&c, 0, sizeof c);
            if (comm_shm_setup(&c, fd, r, 3, r, err, sizeof err))
                _exit(3);
            float x[100] = {0};
            int rc = c.allreduce(x, 100, COMM_F32, COMM_SUM);
            c.fini();
            _exit(rc ? 0 : 1);
        }
    int st = 0;
    waitpid(pid[2], &st, 0);
    comm_shm_gone(map, 2);
    for (int r = 0; r < 2; r++) {
        waitpid(pid[r], &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st)) {
            fprintf(stderr, "gone peer: rank %d ended with status 0x%x (0: its collective failed)\n", r, st);
            bad++;
        }
    }
    comm_shm_unmap(map);
    close(fd);
    return bad;
}

int main(void)
{
    char err[256];
    void *map = NULL;
    for (int N = 1; N <= 4; N++)
        CHECK_INT(run_ranks(N), 0);
    CHECK_INT(run_gone(), 0);

    CHECK_INT(comm_shm_create(0, SLOT, &map, err, sizeof err), -1);
    CHECK(strstr(err, "1 to 64 ranks, not 0") != NULL);
    CHECK_INT(comm_shm_create(COMM_SHM_MAX_RANKS + 1, SLOT, &map, err, sizeof err), -1);
    comm c;
    memset(&c, 0, sizeof c);
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (f) {
        CHECK_INT(comm_shm_setup(&c, fileno(f), 0, 2, 0, err, sizeof err), -1);
        CHECK(strstr(err, "is not the launcher's shared memory") != NULL);
        fclose(f);
    }
    int fd = comm_shm_create(2, SLOT, &map, err, sizeof err);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK_INT(comm_shm_setup(&c, fd, 2, 2, 0, err, sizeof err), -1);
        CHECK(strstr(err, "holds no region for rank 2 of 2") != NULL);
        CHECK_INT(comm_shm_setup(&c, fd, 0, 3, 0, err, sizeof err), -1);
        comm_shm_unmap(map);
        close(fd);
    }
    return T_DONE();
}
