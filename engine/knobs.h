/* knobs.h - the engine's MATRIX_ENGINE_* settings from the environment:
 * one table of their names and the values each takes, in plain C so that
 * the CPU build reads and checks the CUDA backend's too.
 *
 * A knob is a developer's switch (a GPU check, a test, two code paths
 * compared), not a factor of a study, so it is not a flag of the point.
 * The engine checks every knob before anything runs (knobs_check, from
 * session_flags): a value that is none of the knob's is exit 2 with the
 * knob, the value and the values it takes, never a silent default. The
 * result's `knobs` key lists the knobs set, and the log says what each one
 * changed, or that it changed nothing for the point.
 *
 * Included by the engine (C) and by the CUDA module (nvcc), which calls
 * knob_get from the engine's executable (-rdynamic). */
#ifndef MATRIX_ENGINE_KNOBS_H
#define MATRIX_ENGINE_KNOBS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Each knob's values in order: the first is the default (unset or empty). */
enum knob {
    KNOB_CONV,        /* cuda: auto | graph | legacy (cuDNN's graph API for convolutions) | kernel
                       * (no cuDNN: the engine's own kernel, from the definition) */
    KNOB_BNSTATS,     /* cuda: separate | conv (BatchNorm sums from cuDNN's GEN_STATS) */
    KNOB_OPTIM,       /* cuda: fused | per-tensor (the optimizer's kernels) */
    KNOB_SDPA,        /* cuda: auto | kernel (attention: cuDNN's fused SDPA or the engine's kernels) */
    KNOB_GEMM,        /* cuda: auto | kernel (linear: cuBLASLt, or the engine's own GEMM kernel) */
    KNOB_POISON,      /* cuda: 0 | 1 (activations and gradients NaN-filled at prepare) */
    KNOB_BN_BWD,      /* fused | separate (a BatchNorm's ReLU backward inside its backward) */
    KNOB_DATA_UPLOAD, /* pinned | pageable (--data on a device; data.h) */
    KNOB_LAUNCH,      /* auto | local | mpirun (who starts the ranks; comm.h) */
    KNOB_DP,          /* 0 | 1 (one rank through the data-parallel path) */
    KNOB_PROFILE,     /* 0 | 1 (the timed steps op by op, a table on stderr) */
    KNOB_COUNT
};

/* The value s of knob k (NULL or "": the default) as the index of one of
 * its values; -1 when s is none of them, with
 * "MATRIX_ENGINE_X='s' is not one of a, b (default a)" in err. */
int knob_parse(enum knob k, const char *s, char *err, size_t n);
/* knob_parse of the knob's environment variable. */
int knob_get(enum knob k, char *err, size_t n);
/* Whether the knob's variable is set and not empty. */
int knob_is_set(enum knob k);
/* "MATRIX_ENGINE_SDPA" */
const char *knob_name(enum knob k);
/* The name of value v of knob k ("kernel"). */
const char *knob_value(enum knob k, int v);

/* MATRIX_ENGINE_DIE_RANK=K[:exit|:skew], a test knob (session.c): rank K
 * (a number >= 0) dies at its third step (*by_exit 0: SIGKILL; 1: exit
 * status 7), or (2, :skew) changes one of its weights there, so that the
 * ranks end with different parameters. *rank -1 when unset or empty. 0,
 * or -1 with what is wrong in err. */
int knob_die_rank(int *rank, int *by_exit, char *err, size_t n);

/* MATRIX_ENGINE_BUCKET_KB=K: the data-parallel gradient buckets hold about
 * K KiB each (1 to 4 GiB; default 25 MiB, PyTorch DDP's): *bytes. 0, or -1
 * with what is wrong in err. knob_bucket_is_set: whether it is set. */
int knob_bucket_bytes(size_t *bytes, char *err, size_t n);
int knob_bucket_is_set(void);

/* Every knob of the table, MATRIX_ENGINE_BUCKET_KB, MATRIX_ENGINE_DIE_RANK, and the one pair refused
 * (MATRIX_ENGINE_BNSTATS=conv with MATRIX_ENGINE_CONV=legacy): 0, or -1 with
 * the first problem in err. */
int knobs_check(char *err, size_t n);

/* The knobs set, "MATRIX_ENGINE_BN_BWD=separate MATRIX_ENGINE_SDPA=kernel"
 * (the order of the table, then MATRIX_ENGINE_BUCKET_KB and
 * MATRIX_ENGINE_DIE_RANK), or "none". */
void knobs_list(char *out, size_t n);

#ifdef __cplusplus
}
#endif

#endif
