/* comm_mpi.c - the MPI communicator (comm.h), built as the module
 * matrix-engine-mpi.so with mpicc's flags and loaded only by ranks. Host
 * buffers; MPI_COMM_WORLD. */
#include "config.h"
#include "comm.h"
#include "measure.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REQ 256

static comm *self;
static MPI_Request reqs[MAX_REQ];
static int req_used[MAX_REQ];

static MPI_Datatype mtype(int type)
{
    return type == COMM_F64 ? MPI_DOUBLE : type == COMM_U64 ? MPI_UINT64_T : MPI_FLOAT;
}

static MPI_Op mop(int op) { return op == COMM_MAX ? MPI_MAX : op == COMM_MIN ? MPI_MIN : MPI_SUM; }

static int c_allreduce(void *buf, size_t n, int type, int op)
{
    double t0 = measure_now();
    int rc = MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, mtype(type), mop(op), MPI_COMM_WORLD);
    self->wait_s += measure_now() - t0;
    return rc == MPI_SUCCESS ? 0 : -1;
}

static int c_iallreduce(void *buf, size_t n, int type, int op, int *req)
{
    int k = 0;
    while (k < MAX_REQ && req_used[k])
        k++;
    if (k == MAX_REQ)
        return -1;
    if (MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, mtype(type), mop(op), MPI_COMM_WORLD,
                       &reqs[k]) != MPI_SUCCESS)
        return -1;
    req_used[k] = 1;
    *req = k;
    return 0;
}

static int c_wait(int req)
{
    if (req < 0 || req >= MAX_REQ || !req_used[req])
        return -1;
    double t0 = measure_now();
    int rc = MPI_Wait(&reqs[req], MPI_STATUS_IGNORE);
    self->wait_s += measure_now() - t0;
    req_used[req] = 0;
    return rc == MPI_SUCCESS ? 0 : -1;
}

static int c_bcast(void *buf, size_t bytes, int root)
{
    return MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

static void c_barrier(void) { MPI_Barrier(MPI_COMM_WORLD); }

static void c_fini(void)
{
    int done = 0;
    MPI_Finalized(&done);
    if (!done)
        MPI_Finalize();
}

__attribute__((visibility("default"))) int comm_mpi_setup(comm *c, char *err, size_t n)
{
    int provided = 0, len = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        snprintf(err, n, "MPI_Init failed");
        return -1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &c->local_rank);
    MPI_Comm_free(&local);
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Get_library_version(v, &len);
    v[strcspn(v, ",\n")] = 0;
    snprintf(c->version, sizeof c->version, "%.120s", v);
    c->name = "mpi";
    c->allreduce = c_allreduce;
    c->iallreduce = c_iallreduce;
    c->wait = c_wait;
    c->bcast = c_bcast;
    c->barrier = c_barrier;
    c->fini = c_fini;
    self = c;
    return 0;
}
