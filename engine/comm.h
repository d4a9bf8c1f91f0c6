/* comm.h - data-parallel ranks: --gpus N > 1 runs N processes of the engine,
 * one per GPU (or, on the cpu device, N CPU ranks), each with the per-GPU
 * batch, gradients averaged over the ranks before the optimizer step.
 *
 * Why the engine starts them itself (comm_launch: N copies of the same
 * engine command line): a point stays one process for the runner (one
 * command, one result file written by rank 0, one exit status), and the
 * launcher is the watchdog: a rank that dies takes the others down, and the
 * launcher ends with the same status or dies of the same signal, so the
 * runner records `crashed`.
 *
 * Two launchers (MATRIX_ENGINE_LAUNCH=auto|local|mpirun, auto = local):
 *   local   comm.c forks and execs the ranks on this host itself, with a
 *           shared-memory region made before the fork: no MPI needed.
 *   mpirun  Open MPI's mpirun -np N (as before; it is its own watchdog).
 * A rank learns which from its environment (comm_is_rank, comm_join):
 * MATRIX_ENGINE_RANK_OF (the launcher's pid) and either
 * MATRIX_ENGINE_SHM_FD, MATRIX_ENGINE_RANK, MATRIX_ENGINE_RANKS,
 * MATRIX_ENGINE_LOCAL_RANK (local) or Open MPI's OMPI_COMM_WORLD_* (mpirun).
 *
 * The communicator is an interface with three implementations:
 *   shm   engine/comm_shm.c (in the engine): host buffers over the local
 *         launcher's shared memory; CPU ranks' collectives, and the host
 *         side of GPU ranks (NCCL's bootstrap, the stopping rule, the
 *         end-of-run checks).
 *   MPI   engine/comm_mpi.c, the module matrix-engine-mpi.so (dlopen'ed only
 *         by mpirun's ranks, so no other process maps libmpi): the same.
 *   NCCL  engine/cuda/comm_nccl (in the CUDA module): device buffers, the
 *         CUDA backend's gradient buckets and SyncBN statistics; its
 *         ncclUniqueId goes from rank 0 to the others over the host
 *         communicator's bcast, whichever it is.
 * engine_comm (the host communicator) is NULL in a single-process point. */
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
    const char *name; /* "shm", "mpi" */
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

/* The shared-memory communicator (comm_shm.c). */
#define COMM_SHM_MAX_RANKS 64
#define COMM_SHM_SLOT ((size_t)4 << 20) /* bytes a rank moves per chunk */
/* Launcher: make the region for `ranks` ranks, `slot_bytes` per chunk, its
 * header mapped at *map; the descriptor (inherited across exec), or -1 with
 * err. */
int comm_shm_create(int ranks, size_t slot_bytes, void **map, char *err, size_t n);
/* Launcher: `rank` exited; a rank waiting for it in a collective fails the
 * collective instead of waiting forever. */
void comm_shm_gone(void *map, int rank);
void comm_shm_unmap(void *map);
/* Rank: map the region of descriptor fd and fill c (its fini unmaps); 0,
 * or -1 with err. */
int comm_shm_setup(comm *c, int fd, int rank, int size, int local_rank, char *err, size_t n);

/* 1 when this process is a rank started by comm_launch (either launcher). */
int comm_is_rank(void);
/* In a rank: "local" or "mpirun", the launcher that started it. */
const char *comm_launcher(void);
/* Start `ranks` ranks of this command line (MATRIX_ENGINE_LAUNCH picks the
 * launcher) and wait for them; returns the exit status to end with (after
 * raising a rank's fatal signal on this process); -1 with err when the
 * ranks cannot be started (the point is unsupported), -2 with err when
 * MATRIX_ENGINE_LAUNCH is not one of auto, local, mpirun (knobs.h). */
int comm_launch(int argc, char **argv, int ranks, char *err, size_t n);
/* In a rank: join the others (engine_comm set): the shared memory of the
 * local launcher, or the MPI module under mpirun; 0, -1 with err (the point
 * is unsupported), or -2 with err when a variable the local launcher sets
 * (MATRIX_ENGINE_SHM_FD, _RANKS, _RANK, _LOCAL_RANK) is not a number it
 * would set (exit 2). */
int comm_join(char *err, size_t n);
/* Leave (unmap, or MPI_Finalize and unload). */
void comm_leave(void);

#ifdef __cplusplus
}
#endif

#endif
