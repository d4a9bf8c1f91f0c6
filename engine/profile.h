/* profile.h - per-op profiles (--profile FILE).
 *
 * After the timed steps (which it does not perturb), the engine runs
 * PROFILE_STEPS more steps op by op with each op timed: the host clock
 * after the backend's sync on the cpu, a pair of CUDA events around each op
 * on the GPU (a CUDA Graph step runs eagerly then). FILE gets one CSV row
 * per op of the step, in the step's order, plus the input pipeline of
 * --data as the row "input_pipeline":
 *
 *   op,kind,calls,total_ms,mean_ms,pct_step,mem_bytes
 *
 * op: the op's name in the graph (conv1, conv1.bwd, ...); kind: its type
 * (conv2d, relu, ... ; "data" for the pipeline); calls: times it ran;
 * total_ms / mean_ms: over the calls, milliseconds; pct_step: share of the
 * sum of every row's total, percent; mem_bytes: bytes it writes (its output
 * tensors) plus its kernel workspace. The PyTorch engine writes the same
 * columns from torch.profiler. */
#ifndef MATRIX_ENGINE_PROFILE_H
#define MATRIX_ENGINE_PROFILE_H

#include "graph.h"

#include <stddef.h>

#define PROFILE_STEPS 20
#define PROFILE_HEADER "op,kind,calls,total_ms,mean_ms,pct_step,mem_bytes"

/* One row of the profile. */
typedef struct profile_row {
    const char *op, *kind;
    long calls;
    double total_s;   /* seconds over the calls */
    size_t mem_bytes;
} profile_row;

/* Write rows to path (its directory made when missing), as outfile.h
 * says: 0, or -1 with the reason in err. */
int profile_write(const char *path, const profile_row *rows, int n, char *err, size_t en);
/* Bytes op o writes: its output tensors (each once, views not counted). */
size_t profile_op_bytes(const graph *g, const op *o);

#endif
