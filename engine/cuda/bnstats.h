/* bnstats.h - BatchNorm statistics from the convolution (issue 18 item 1):
 * the host-side decisions of conv.cu's CONVOLUTION_FORWARD -> GEN_STATS
 * graph, in plain C (no CUDA or cuDNN types) so that tests/unit/test_bnstats.c
 * checks them on the host:
 *
 *   - the knob MATRIX_ENGINE_BNSTATS=separate|conv (knobs.h: its values in
 *     the order of this enum);
 *   - which BatchNorm forward a convolution's output feeds (bns_pair): the
 *     conv has no epilogue (no bias, residual, activation or kept
 *     pre-activation), writes y in NHWC (GEN_STATS wants NHWC fully
 *     packed), and the first op after it that reads y is a training
 *     BatchNorm (not SyncBN) taking y as its x, with no op writing y in
 *     between (the sums stay those of the y the BN reads);
 *   - the check of the plan's sums against a double-precision sum of the
 *     plan's own y at prepare (bns_check) and its tolerance (bns_tol).
 *
 * Included by conv.cu (nvcc) and the unit test; graph.h is the engine's. */
#ifndef MATRIX_ENGINE_BNSTATS_H
#define MATRIX_ENGINE_BNSTATS_H

#include <math.h>
#include <stddef.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "../graph.h"
#ifdef __cplusplus
}
#endif

enum { BNS_SEPARATE, BNS_CONV }; /* knob_get(KNOB_BNSTATS)'s values (knobs.h) */

/* The BatchNorm op whose statistics forward conv op c of g (ops [0, nrun)
 * run) can generate: its index, or -1 with *why (a static string). */
static inline int bns_pair(const graph *g, int nrun, int c, const char **why)
{
    const op *o = &g->ops[c];
    int y = o->out[0];
    *why = NULL;
    if (o->type != OP_CONV || y < 0) {
        *why = "not a forward convolution";
        return -1;
    }
    if (o->in[2] >= 0 || o->in[3] >= 0 || o->out[1] >= 0 || o->act != ACT_NONE || o->acc) {
        *why = "the convolution has an epilogue (bias, residual, activation or pre-activation)";
        return -1;
    }
    if (g->t[y].layout != LAYOUT_NHWC || g->t[y].ndim != 4) {
        *why = "y is not NHWC (GEN_STATS wants NHWC fully packed)";
        return -1;
    }
    for (int k = c + 1; k < nrun; k++) {
        const op *b = &g->ops[k];
        int reads = 0;
        if (b->dead)
            continue;
        for (int i = 0; i < GRAPH_MAX_IN; i++)
            reads |= b->in[i] == y;
        for (int i = 0; i < GRAPH_MAX_OUT; i++)
            if (b->out[i] == y) {
                *why = "y is written again before it is read";
                return -1;
            }
        if (!reads)
            continue;
        if (b->type != OP_BN || b->in[0] != y) {
            *why = "the first op reading y is not a BatchNorm of it";
            return -1;
        }
        if (!b->train) {
            *why = "its BatchNorm uses the running statistics (eval)";
            return -1;
        }
        if (b->sync) {
            *why = "its BatchNorm is a SyncBN (its sums are reduced over the ranks in double)";
            return -1;
        }
        if (b->in[5] == y) {
            *why = "its BatchNorm adds y again as the residual";
            return -1;
        }
        return k;
    }
    *why = "no op reads y";
    return -1;
}

/* Tolerance of the sums of n values stored in a type of unit roundoff u
 * (f32 2^-24, f16 2^-11, bf16 2^-8), relative to sum |y| (sum) and to
 * sum y^2 (sum of squares): the plan may sum the f32 values before y is
 * rounded to its type (u a term, 2u + u^2 squared) and it sums in f32 in
 * an order of its own; 3e-5 bounds that for the sizes of a ResNet (about
 * 500 f32 roundings of 2^-24, a blocked sum with atomics or a second pass
 * over the blocks: log2 and sqrt growth, not n). */
#define BNS_F32_SUM_RTOL 3e-5

static inline void bns_tol(double u, double *rs, double *rq)
{
    *rs = u + BNS_F32_SUM_RTOL;
    *rq = 2.0 * u + u * u + BNS_F32_SUM_RTOL;
}

typedef struct bns_verdict {
    int bad;       /* channels outside the tolerance (a NaN counts) */
    int worst_c;   /* the channel of the worst ratio */
    double worst;  /* max |got - ref| / tolerance over both sums */
    double got, ref; /* that value and its reference */
} bns_verdict;

/* The plan's f32 sums (sum[k], sq[k]) of K channels against the double
 * reference (ref[k] = sum y, ref[K + k] = sum |y|, ref[2K + k] = sum y^2,
 * of the plan's own y): |got - ref| <= rs sum|y| + 1e-6 and <= rq sum y^2
 * + 1e-6 on every channel. The bad channel count. */
static inline int bns_check(const float *sum, const float *sq, const double *ref, size_t K,
                            double u, bns_verdict *v)
{
    double rs, rq;
    bns_tol(u, &rs, &rq);
    memset(v, 0, sizeof *v);
    for (size_t k = 0; k < K; k++) {
        double t1 = rs * ref[K + k] + 1e-6, t2 = rq * ref[2 * K + k] + 1e-6;
        double e1 = fabs((double)sum[k] - ref[k]) / t1, e2 = fabs((double)sq[k] - ref[2 * K + k]) / t2;
        if (e1 != e1)
            e1 = INFINITY;
        if (e2 != e2)
            e2 = INFINITY;
        if (e1 > 1.0 || e2 > 1.0)
            v->bad++;
        if (e1 > v->worst || (k == 0 && e1 >= v->worst)) {
            v->worst = e1;
            v->worst_c = (int)k;
            v->got = sum[k];
            v->ref = ref[k];
        }
        if (e2 > v->worst) {
            v->worst = e2;
            v->worst_c = (int)k;
            v->got = sq[k];
            v->ref = ref[2 * K + k];
        }
    }
    return v->bad;
}

#endif
