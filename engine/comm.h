/* comm.h - data-parallel ranks: --gpus N > 1 runs N processes of the engine,
 * one per GPU (or, on the cpu device, N CPU ranks), each with the per-GPU
 * batch, gradients averaged over the ranks before the optimizer step.
 *
 * Why the engine starts them itself (comm_launch: mpirun -np N on the same
 * engine command line): a point stays one process for the runner (one
 * command, one result file written by rank 0, one exit status), and mpirun
 * is the watchdog: a rank that dies takes the others down (exit 137 for a
 * KILL), which the launcher turns back into the same signal, so the runner
 * records `crashed`.
 *
 * The communicator is an interface with two implementations:
 *   MPI   engine/comm_mpi.c, the module matrix-engine-mpi.so (dlopen'ed only
 *         by ranks, so a single-process point never maps libmpi): host
 *         buffers, the CPU backend's collectives; it also bootstraps NCCL.
 *   NCCL  engine/cuda/comm_nccl (in the CUDA module): device buffers, the
 *         CUDA backend's gradient buckets and SyncBN statistics.
 * engine_comm is NULL in a single-process point. */
#ifndef MATRIX_ENGINE_COMM_H
#define MATRIX_ENGINE_COMM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum comm_op { COMM_SUM, COMM_MAX, COMM_MIN };
enum comm_type { COMM_F32, COMM_F64, COMM_U64 };

typedef struct comm {
    int rank, size;   /* this rank, how many */
    int local_rank;   /* rank on this host: the GPU it uses */
    const char *name; /* "mpi" */
    char version[128];
    /* In place over the ranks, host memory, blocking. 0 on success. */
    int (*allreduce)(void *buf, size_t n, int type, int op);
    /* The same, started: *req for wait(). */
    int (*iallreduce)(void *buf, size_t n, int type, int op, int *req);
    int (*wait)(int req);
    int (*bcast)(void *buf, size_t bytes, int root);
    void (*barrier)(void);
    void (*fini)(void);
    double wait_s;    /* seconds spent blocked in allreduce / wait (timed steps: reset) */
} comm;

extern comm *engine_comm;

/* Module entry point (comm_mpi.c): MPI_Init, fill c; 0, or -1 with err. */
typedef int (*comm_mpi_setup_fn)(comm *c, char *err, size_t n);
#define COMM_MPI_SETUP "comm_mpi_setup"

/* 1 when this process is a rank started by comm_launch. */
int comm_is_rank(void);
/* Start `ranks` ranks of this command line under mpirun and wait for them;
 * returns the exit status to end with (raising a rank's fatal signal on
 * this process); -1 with err when mpirun cannot be started. */
int comm_launch(int argc, char **argv, int ranks, char *err, size_t n);
/* In a rank: load the MPI module and join (engine_comm set); 0, or -1 with
 * err. */
int comm_join(char *err, size_t n);
/* Leave (MPI_Finalize) and unload. */
void comm_leave(void);

#ifdef __cplusplus
}
#endif

#endif
