/* dnngraph.h - building blocks of cuDNN graph (backend) API plans from C,
 * shared by sdpa.cu (attention) and convgraph.cu (convolutions).
 *
 * A dg_bag owns every descriptor made for one plan (tensors, operations,
 * the operation graph, heuristics, engine configs made from stored knobs,
 * the execution plan) and the reason of the last failure: each builder
 * returns 0, or -1 with bag->why naming the cuDNN call and its status, and
 * dg_drop destroys what the bag holds (newest first). Nothing here ends the
 * process: a plan that cannot be made is a reason, and the caller falls
 * back to its other path. Only with HAVE_CUDNN. */
#ifndef MATRIX_ENGINE_CUDA_DNNGRAPH_H
#define MATRIX_ENGINE_CUDA_DNNGRAPH_H

#include "cuda.h"
#include "dg_engine.h"

#ifdef HAVE_CUDNN

#define DG_MAX_DESC 112

typedef struct dg_bag {
    cudnnBackendDescriptor_t desc[DG_MAX_DESC]; /* every descriptor made, in order */
    int ndesc;
    char why[400];                              /* the last failure */
} dg_bag;

/* A failed cuDNN call while building: the reason into b->why, return -1. */
#define DG(b, x)                                                                                  \
    do {                                                                                          \
        cudnnStatus_t e_ = (x);                                                                   \
        if (e_ != CUDNN_STATUS_SUCCESS) {                                                         \
            snprintf((b)->why, sizeof (b)->why, "%s: %s", #x, cudnnGetErrorString(e_));           \
            return -1;                                                                            \
        }                                                                                         \
    } while (0)

/* A new descriptor of type, owned by the bag. */
int dg_new(dg_bag *b, cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *out);
/* Keep d (made elsewhere, e.g. a finalized plan) in the bag: destroyed with it. */
int dg_keep(dg_bag *b, cudnnBackendDescriptor_t d);
/* A finalized 4-D tensor: type, dims, strides, uid, 16-byte alignment;
 * by_value (a host pointer in the variant pack) or virtual (an
 * intermediate of the graph, never in memory). */
int dg_tensor(dg_bag *b, int64_t uid, cudnnDataType_t dt, const int64_t *dim, const int64_t *str,
              int by_value, int virt, cudnnBackendDescriptor_t *out);
/* Attribute a of d := descriptor v. */
int dg_set_desc(dg_bag *b, cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t a,
                cudnnBackendDescriptor_t v);
/* A pointwise operation y = mode(x[, b]) computed in f32, appended to ops. */
int dg_op_pw(dg_bag *b, cudnnPointwiseMode_t mode, cudnnBackendDescriptor_t x,
             cudnnBackendDescriptor_t bx, cudnnBackendDescriptor_t y,
             cudnnBackendDescriptor_t *ops, int *nops);
/* The finalized operation graph of ops[0..n) on handle h. */
int dg_graph(dg_bag *b, cudnnHandle_t h, const cudnnBackendDescriptor_t *ops, int n,
             cudnnBackendDescriptor_t *graph);
/* The engine configs cuDNN's heuristics (mode) give for graph, best first,
 * into cfg[0..max): the count (0: none), or -1 with b->why. Each cfg[i] is
 * made here, also when fewer are returned: dg_free_configs(cfg, max). */
int dg_heur(dg_bag *b, cudnnBackendDescriptor_t graph, cudnnBackendHeurMode_t mode,
            cudnnBackendDescriptor_t *cfg, int max);
void dg_free_configs(cudnnBackendDescriptor_t *cfg, int max);
/* An execution plan of cfg on handle h, finalized, and its workspace;
 * the status of the first call that failed (nothing is left on failure:
 * *plan NULL). The caller destroys *plan (or dg_keep's it). */
cudnnStatus_t dg_plan(cudnnHandle_t h, cudnnBackendDescriptor_t cfg, cudnnBackendDescriptor_t *plan,
                      int64_t *ws);
/* A variant pack of n (uid, pointer) pairs and workspace ws; the status
 * (nothing is left on failure: *vp NULL). The caller destroys *vp. */
cudnnStatus_t dg_vpack(const int64_t *uid, void *const *ptr, int n, void *ws,
                       cudnnBackendDescriptor_t *vp);
/* Destroy what the bag holds, newest first; the bag is empty after. */
void dg_drop(dg_bag *b);

/* Read cfg's engine, knobs and notes into e: 0, or -1 with b->why (the
 * descriptors made to read them are destroyed here). */
int dg_engine_of(dg_bag *b, cudnnBackendDescriptor_t cfg, dg_engine *e);
/* Make the engine config of e (its id and knob choices) for graph, owned
 * by the bag (notes are not set: they are the engine's). 0 or -1. */
int dg_config_of(dg_bag *b, cudnnBackendDescriptor_t graph, const dg_engine *e,
                 cudnnBackendDescriptor_t *cfg);

#endif /* HAVE_CUDNN */
#endif
