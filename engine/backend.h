/* backend.h - what a backend provides to run a graph.
 *
 * The graph, the passes and the measurement are shared; a backend is a table
 * of function pointers: one per op type plus memory and synchronisation.
 * engine/cpu/ fills it with plain C (+ CBLAS); a CUDA backend (engine/cuda/)
 * fills the same table with cuDNN / cuBLAS calls and custom kernels. */
#ifndef MATRIX_ENGINE_BACKEND_H
#define MATRIX_ENGINE_BACKEND_H

#include "engine.h"
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

    /* Device backends (cuda) only; NULL / 0 on cpu. */
    int host_visible;   /* 1: t->data is host memory (cpu) */
    /* After the memory plan, with every tensor in device memory and before
     * the first step: descriptors, algorithm choice, private buffers, the
     * workspace. 0 on success; -1 when out of memory (oom_bytes() says how
     * much was asked for), -3 when a setting is refused (a bad
     * MATRIX_ENGINE_* value or combination: the engine exits 2, a usage
     * error), -2 on another failure (message on stderr each time). */
    int (*prepare)(graph *g, int nrun);
    /* One whole step (ops [0, nrun)), waited for; 0 on success. NULL: the
     * engine calls ops[] one by one and then sync(). during (may be NULL)
     * is called with ctx once the step is queued and before it is waited
     * for: host work that overlaps the step (the next batch of --data). */
    int (*step)(graph *g, int nrun, void (*during)(void *ctx), void *ctx);
    /* Start a step run op by op (dump, profile): what step() does before
     * the first op (the device's step counter). */
    void (*begin_step)(void);
    /* Device time of the last step() (CUDA events), seconds. */
    double (*step_seconds)(void);
    size_t (*peak)(void);      /* device memory high-water mark, bytes */
    size_t (*oom_bytes)(void); /* size of the last failed device allocation */
    /* Result-record lines ("key=value\n...") describing the device. */
    const char *(*info)(void);
    /* Steps whose update dynamic loss scaling skipped so far (an inf or
     * NaN in the scaled gradients, as torch.cuda.amp.GradScaler does), -1
     * where nothing scales the loss; synchronises. NULL: never skips. */
    double (*steps_skipped)(void);
    /* Dense peak of the device for this precision, flop/s; 0 when unknown. */
    double (*peak_flops)(int precision);
    /* Per-op profile on the device (NULL: the engine times each op with the
     * host clock after sync()): prof_mark(i, 0) before op i and (i, 1)
     * after it, in a step run op by op; prof_read adds each op's device
     * time, seconds, to s[0..nrun) once the step is waited for. */
    void (*prof_mark)(int i, int end);
    void (*prof_read)(double *s, int nrun);
    /* --data's pinned upload (data.h's ring; NULL: the engine uploads each
     * batch with upload()). stage_open: DATA_SLOTS slots of n pinned host
     * buffers (returned in host[slot * n + i]) and as many device buffers
     * of bytes[i]; 0, or -1 when out of memory (oom_bytes()). The backend
     * frees them in fini(). stage_reuse(slot): returns once the last copy
     * out of slot's host buffers is done (the host may write them).
     * stage_send(slot): queues slot's host to device copies on a copy
     * stream, after the last stage_take of slot. stage_take(slot, dst):
     * queues on the step's stream, after slot's stage_send, a device copy
     * of each buffer into dst[i] (NULL: none), so that what follows on
     * that stream (the step, a CUDA Graph replay) reads the batch. */
    int (*stage_open)(int n, const size_t *bytes, void **host);
    void (*stage_reuse)(int slot);
    void (*stage_send)(int slot);
    void (*stage_take)(int slot, void *const *dst);
} backend;

/* Entry point of the CUDA backend module (engine/cuda/, built as
 * matrix-engine-cuda.so and loaded with dlopen only for --device cuda, so
 * that CPU points never load the CUDA libraries). Fills b for point p;
 * 0 on success, else -1 with the reason (no GPU, driver too old) in err. */
typedef int (*backend_cuda_setup_fn)(backend *b, const point *p, char *err, size_t n);
#define BACKEND_CUDA_SETUP "backend_cuda_setup"

/* Workspace of the currently running op, set up by the engine before the
 * run from the largest backend->workspace() of the plan. */
extern void *backend_ws;
extern size_t backend_ws_bytes;

/* Fill b with the CPU backend (engine/cpu/backend_cpu.c). */
void backend_cpu_setup(backend *b);

#endif
