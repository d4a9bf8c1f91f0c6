/* convgraph.h - a forward convolution and its pointwise epilogue as one
 * cuDNN graph (backend) API operation graph (convgraph.cu), for conv.cu:
 *
 *   y = act(conv(x, w) + bias + res)      (bias, res and act each optional)
 *   or y = conv(x, w), sum[k] = sum y, sqsum[k] = sum y^2   (stats: GEN_STATS)
 *
 *   x (N, C, H, W), y and res (N, K, OH, OW): the engine's NHWC or NCHW
 *   strides, type dt; w (K, C, R, S) stored KRSC or KCRS, type wdt (what
 *   the legacy path reads: the shadow, or the f32 parameter); bias
 *   (1, K, 1, 1) of type bdt; intermediates virtual f32; compute f32.
 *
 * conv.cu decides whether a plan of it runs (verification against the
 * definition and the legacy call, timing, the plan cache); this file only
 * builds: the graph, the heuristics' engine configs that the precision
 * allows as finalized plans, a plan from stored engine integers, variant
 * packs. Every failure is a reason (cp->b.why), never the end of the
 * process. Only with HAVE_CUDNN. */
#ifndef MATRIX_ENGINE_CUDA_CONVGRAPH_H
#define MATRIX_ENGINE_CUDA_CONVGRAPH_H

#include "dnngraph.h"

#ifdef HAVE_CUDNN

#define CG_CONFIGS 12 /* engine configs asked of the heuristics per mode */

/* The problem: geometry, types, epilogue, what the precision allows. */
typedef struct cg_problem {
    conv_view v;
    int dt;       /* x, y, res: DT_F32 / DT_F16 / DT_BF16 */
    int wdt;      /* w */
    int bias;     /* 1: + bias[k] */
    int bdt;      /* its type */
    int res;      /* 1: + res */
    int act;      /* ACT_NONE or ACT_RELU */
    int strict;   /* precision fp32: FMA only (no tensor cores, no TF32) */
    int no_rtc;   /* no runtime-compiled engine (its compile time is start-up) */
    int stats;    /* 1: + GEN_STATS of y (no epilogue, NHWC): per-channel f32 sum and sum
                   * of squares (1, K, 1, 1), for the BatchNorm that reads y (bnstats.h) */
} cg_problem;

/* The operands of one forward call (legacy or graph), device pointers. */
typedef struct conv_bufs {
    const void *x, *w, *bias, *res;
    void *y;
    float *sum, *sqsum; /* GEN_STATS outputs (pb.stats), K floats each, 16-byte aligned */
} conv_bufs;

/* A finalized plan of one engine config. */
typedef struct cg_cand {
    cudnnBackendDescriptor_t plan; /* NULL: none */
    int64_t ws;                    /* its workspace, bytes */
    dg_engine eng;                 /* its engine, knobs and notes */
} cg_cand;

/* The graph of a problem and, once chosen, its plan. */
typedef struct cg_plan {
    cg_problem pb;
    dg_bag b;                        /* every descriptor (the kept plan too); why */
    cudnnBackendDescriptor_t graph;  /* the finalized operation graph; NULL: not built */
    cg_cand use;                     /* the plan that runs (use.plan NULL: none) */
} cg_plan;

/* Build cp->graph for cp->pb on handle h: 0, or -1 with cp->b.why. */
int cg_build(cg_plan *cp, cudnnHandle_t h);
/* The heuristics' engine configs of mode, best first, into cfg[0..
 * CG_CONFIGS) (dg_free_configs(cfg, CG_CONFIGS) after): the count, 0 with
 * cp->b.why when the heuristics fail. Plans are made one at a time
 * (cg_try), so that a caller that needs one finalizes (for runtime-fusion
 * engines: compiles) no more than it uses. */
int cg_configs(cg_plan *cp, cudnnBackendHeurMode_t mode, cudnnBackendDescriptor_t *cfg);
/* cfg's plan into *c when cuDNN's notes on its engine fit the problem
 * (cg_refusal), it finalizes on h and its workspace is at most cap: 0,
 * else -1 with the reason in why. */
int cg_try(cg_plan *cp, cudnnHandle_t h, cudnnBackendDescriptor_t cfg, size_t cap, cg_cand *c,
           char *why, size_t wn);
/* The plan of engine e (a stored choice): 0 with *c, or -1 with cp->b.why
 * (the engine or its knobs do not fit this graph, a note the problem does
 * not allow, or its workspace above cap). */
int cg_plan_of(cg_plan *cp, cudnnHandle_t h, const dg_engine *e, size_t cap, cg_cand *c);
/* Why the problem does not allow engine e's notes, or NULL. */
const char *cg_refusal(const cg_problem *pb, const dg_engine *e);
/* Make c cp's plan (kept in the bag): 0, or -1 (c destroyed). */
int cg_keep(cg_plan *cp, cg_cand *c);
/* Destroy a candidate's plan (NULL is fine). */
void cg_cand_free(cg_cand *c);
/* The variant pack of plan for operands b and workspace ws. */
cudnnStatus_t cg_vpack(const cg_problem *pb, const conv_bufs *b, void *ws,
                       cudnnBackendDescriptor_t *vp);
/* One run of plan on b (a variant pack made and destroyed here: for the
 * checks at prepare, not for the step). */
cudnnStatus_t cg_execute(cudnnHandle_t h, const cg_problem *pb, cudnnBackendDescriptor_t plan,
                         const conv_bufs *b, void *ws);
/* Destroy everything of cp (not cp itself). */
void cg_free(cg_plan *cp);

#endif /* HAVE_CUDNN */
#endif
