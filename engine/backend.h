/* backend.h - what a backend provides to run a graph.
 *
 * The graph, the passes and the measurement are shared; a backend is a table
 * of function pointers: one per op type plus memory and synchronisation.
 * engine/cpu/ fills it with plain C (+ CBLAS); a CUDA backend (engine/cuda/)
 * fills the same table with cuDNN / cuBLAS calls and custom kernels. */
#ifndef MATRIX_ENGINE_BACKEND_H
#define MATRIX_ENGINE_BACKEND_H

#include "graph.h"

typedef void (*backend_op_fn)(graph *g, op *o);

typedef struct backend {
    const char *name;   /* "cpu", "cuda" */
    /* Start the backend with threads host threads; 0 on success. */
    int (*init)(int threads);
    void (*fini)(void);
    /* Tensor memory on the device; host and device are the same on cpu. */
    void *(*alloc)(size_t bytes);
    void (*free)(void *p, size_t bytes);
    void (*upload)(void *dst, const void *src, size_t bytes);
    void (*download)(void *dst, const void *src, size_t bytes);
    void (*sync)(void); /* wait for queued work (timing boundaries) */
    /* Scratch space per op, bytes; the caller provides it in backend_ws. */
    size_t (*workspace)(const graph *g, const op *o);
    /* Bytes a forward op of a training graph keeps for its backward (the CPU
     * convolution's im2col columns), 0 for none. The engine gives them a
     * planned tensor: the forward's out[3], the backward's in[3]. */
    size_t (*saved)(const graph *g, const op *fwd);
    backend_op_fn ops[OP_COUNT];
} backend;

/* Workspace of the currently running op, set up by the engine before the
 * run from the largest backend->workspace() of the plan. */
extern void *backend_ws;
extern size_t backend_ws_bytes;

/* Fill b with the CPU backend (engine/cpu/backend_cpu.c). */
void backend_cpu_setup(backend *b);

#endif
