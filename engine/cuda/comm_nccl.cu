/* comm_nccl.cu - the data-parallel collectives of the CUDA backend on NCCL
 * (engine/comm.h): one communicator over the ranks, bootstrapped through
 * the host communicator engine_comm (rank 0's ncclUniqueId broadcast with
 * its bcast: shm under the engine's local launcher, MPI under mpirun; NCCL
 * needs nothing else from it), its own non-blocking stream.
 *
 *   OP_ALLREDUCE       records "bucket ready" on cu.s, makes the comm stream
 *                      wait for it, ncclAllReduce(ncclAvg) of the bucket in
 *                      place on the comm stream, records "bucket done": the
 *                      sum runs while cu.s goes on with the backward.
 *   OP_ALLREDUCE_WAIT  makes cu.s wait for "bucket done" (before the
 *                      optimizer); ncclAvg already divided by the ranks.
 *   cu_nccl_sum_f64    SyncBN (ops.cu): ncclAllReduce(ncclDouble, ncclSum)
 *                      of a BatchNorm's per-channel sums directly on cu.s,
 *                      whose next kernel needs the result.
 *
 * Events order the two streams, so a step is still capturable into one CUDA
 * Graph (--compile reduce-overhead); NCCL's calls are capturable too. Both
 * kinds of call go to the one communicator, in the plan's op order on every
 * rank; NCCL runs a communicator's operations in the order they were issued,
 * so a SyncBN sum in the backward may wait for a bucket in flight. The
 * communicator is made when the plan has an all-reduce op or a SyncBN op. */
#include "cuda.h"
#include "../comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_NCCL
#include <nccl.h>

#define ncclCheck(x) do { ncclResult_t r_ = (x); \
    if (r_ != ncclSuccess) cu_fail(__FILE__, __LINE__, #x, ncclGetErrorString(r_)); } while (0)

static struct {
    ncclComm_t nc;
    cudaStream_t s;
    cudaEvent_t *ready, *done;
    cudaEvent_t *t0, *t1; /* timing: each bucket's all-reduce on nc.s */
    int timed;            /* 1: t0 / t1 recorded and read (0 after a timing call failed) */
    double comm_ms, step_ms; /* summed over the steps seen (cu_nccl_step_end) */
    int steps;
    int nb;      /* gradient buckets (events) */
    int ranks;   /* 0: no communicator */
    int version;
} nc;

static void nccl_allreduce(graph *g, op *o)
{
    tensor *t = &g->t[o->in[0]];
    int k = o->bucket;
    cudaCheck(cudaEventRecord(nc.ready[k], cu.s));
    cudaCheck(cudaStreamWaitEvent(nc.s, nc.ready[k], 0));
    /* in a capture (--compile reduce-overhead) a plain record is only an
     * edge of the graph, and the event then refuses an elapsed time
     * (cudaErrorCapturedEvent): external record nodes take the time at
     * each replay */
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaCheck(cudaStreamIsCapturing(nc.s, &cs));
    unsigned fl = cs == cudaStreamCaptureStatusActive ? cudaEventRecordExternal : 0;
    if (nc.timed)
        cudaCheck(cudaEventRecordWithFlags(nc.t0[k], nc.s, fl));
    ncclCheck(ncclAllReduce(t->data, t->data, (size_t)graph_numel(t), ncclFloat, ncclAvg, nc.nc,
                            nc.s));
    if (nc.timed)
        cudaCheck(cudaEventRecordWithFlags(nc.t1[k], nc.s, fl));
    cudaCheck(cudaEventRecord(nc.done[k], nc.s));
}

/* After a step (be_step, its end waited for): the time NCCL's stream spent
 * in the step's all-reduces, summed, against the step's step_ms; eager
 * steps and CUDA Graph replays alike. A timing call that fails stops the
 * timing (its error cleared, not left for the next cudaCheck): no share
 * rather than a wrong one. */
void cu_nccl_step_end(float step_ms)
{
    if (!nc.timed)
        return;
    double sum = 0;
    for (int k = 0; k < nc.nb; k++) {
        float ms = 0;
        if (cudaEventElapsedTime(&ms, nc.t0[k], nc.t1[k]) != cudaSuccess) {
            (void)cudaGetLastError();
            nc.timed = 0;
            nc.comm_ms = nc.step_ms = 0;
            nc.steps = 0;
            return;
        }
        sum += ms;
    }
    nc.comm_ms += sum;
    nc.step_ms += step_ms;
    nc.steps++;
}

static void nccl_wait(graph *, op *o)
{
    cudaCheck(cudaStreamWaitEvent(cu.s, nc.done[o->bucket], 0));
}

void cu_nccl_register(backend_op_fn *t)
{
    t[OP_ALLREDUCE] = nccl_allreduce;
    t[OP_ALLREDUCE_WAIT] = nccl_wait;
}

void cu_nccl_sum_f64(const double *send, double *recv, size_t n)
{
    if (!nc.ranks)
        cu_fail(__FILE__, __LINE__, "cu_nccl_sum_f64", "no NCCL communicator (BUG: prepare saw no SyncBN op)");
    ncclCheck(ncclAllReduce(send, recv, n, ncclDouble, ncclSum, nc.nc, cu.s));
}

int cu_nccl_ranks(void) { return nc.ranks; }

/* The communicator over engine_comm's ranks (rank 0's id broadcast over
 * the host communicator, whichever launcher started the ranks), its
 * stream; 0, or -2 with the reason on stderr. */
static int nccl_open(void)
{
    if (!engine_comm) {
        fprintf(stderr, "matrix-engine: cuda: all-reduce or SyncBN ops without ranks\n");
        return -2;
    }
    ncclUniqueId id;
    if (engine_comm->rank == 0)
        ncclCheck(ncclGetUniqueId(&id));
    if (engine_comm->bcast(&id, sizeof id, 0)) {
        fprintf(stderr, "matrix-engine: cuda: broadcasting the NCCL id over the host communicator (%s) failed\n",
                engine_comm->name);
        return -2;
    }
    ncclCheck(ncclCommInitRank(&nc.nc, engine_comm->size, id, engine_comm->rank));
    ncclCheck(ncclGetVersion(&nc.version));
    cudaCheck(cudaStreamCreateWithFlags(&nc.s, cudaStreamNonBlocking));
    nc.ranks = engine_comm->size;
    return 0;
}

int cu_nccl_prepare(graph *g, int nrun)
{
    int nb = 0, nsync = 0;
    for (int i = 0; i < nrun; i++) {
        if (g->ops[i].type == OP_ALLREDUCE && g->ops[i].bucket + 1 > nb)
            nb = g->ops[i].bucket + 1;
        nsync += g->ops[i].type == OP_BN && g->ops[i].sync;
    }
    if (!nb && !nsync)
        return 0;
    int rc = nccl_open();
    if (rc || !nb)
        return rc;
    nc.ready = (cudaEvent_t *)calloc((size_t)nb, sizeof *nc.ready);
    nc.done = (cudaEvent_t *)calloc((size_t)nb, sizeof *nc.done);
    if (!nc.ready || !nc.done)
        cu_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    nc.timed = 1;
    nc.t0 = (cudaEvent_t *)calloc((size_t)nb, sizeof *nc.t0);
    nc.t1 = (cudaEvent_t *)calloc((size_t)nb, sizeof *nc.t1);
    if (!nc.t0 || !nc.t1)
        cu_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    for (int k = 0; k < nb; k++) {
        cudaCheck(cudaEventCreateWithFlags(&nc.ready[k], cudaEventDisableTiming));
        cudaCheck(cudaEventCreateWithFlags(&nc.done[k], cudaEventDisableTiming));
        cudaCheck(cudaEventCreate(&nc.t0[k]));
        cudaCheck(cudaEventCreate(&nc.t1[k]));
    }
    nc.nb = nb;
    return 0;
}

void cu_nccl_release(void)
{
    if (!nc.ranks)
        return;
    cudaStreamSynchronize(cu.s);
    cudaStreamSynchronize(nc.s);
    for (int k = 0; k < nc.nb; k++) {
        cudaEventDestroy(nc.ready[k]);
        cudaEventDestroy(nc.done[k]);
        if (nc.t0)
            cudaEventDestroy(nc.t0[k]);
        if (nc.t1)
            cudaEventDestroy(nc.t1[k]);
    }
    free(nc.ready);
    free(nc.done);
    free(nc.t0);
    free(nc.t1);
    cudaStreamDestroy(nc.s);
    ncclCommDestroy(nc.nc);
    memset(&nc, 0, sizeof nc);
}

const char *cu_nccl_info(void)
{
    static char buf[256];
    if (!nc.ranks)
        return "";
    int n = snprintf(buf, sizeof buf, "nccl_version=%d.%d.%d\n", nc.version / 10000,
                     (nc.version / 100) % 100, nc.version % 100);
    /* the share of the steps' time NCCL's stream spent in the gradient
     * all-reduces (overlapped with the backward or not); none when a
     * timing call failed */
    if (nc.nb && nc.timed && nc.steps > 0 && nc.step_ms > 0 && n > 0 && (size_t)n < sizeof buf)
        snprintf(buf + n, sizeof buf - (size_t)n, "comm_allreduce_ms=%.4g\ncomm_allreduce_share=%.4g\n",
                 nc.comm_ms / nc.steps, nc.comm_ms / nc.step_ms);
    return buf;
}

#else /* !HAVE_NCCL */

void cu_nccl_register(backend_op_fn *) {}
int cu_nccl_prepare(graph *g, int nrun)
{
    for (int i = 0; i < nrun; i++) {
        if (g->ops[i].type == OP_ALLREDUCE) {
            fprintf(stderr, "matrix-engine: cuda: built without NCCL: no data-parallel ranks\n");
            return -2;
        }
        if (g->ops[i].type == OP_BN && g->ops[i].sync) {
            fprintf(stderr, "matrix-engine: cuda: built without NCCL: SyncBN (op '%s') needs "
                    "NCCL; rebuild with NCCL or run --syncbn off\n", g->ops[i].name);
            return -2;
        }
    }
    return 0;
}
void cu_nccl_sum_f64(const double *, double *, size_t)
{
    cu_fail(__FILE__, __LINE__, "cu_nccl_sum_f64", "built without NCCL (BUG: prepare refuses SyncBN)");
}
int cu_nccl_ranks(void) { return 0; }
void cu_nccl_release(void) {}
void cu_nccl_step_end(float) {}
const char *cu_nccl_info(void) { return ""; }

#endif
