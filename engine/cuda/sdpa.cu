/* sdpa.cu - OP_ATTENTION and OP_ATTENTION_BWD in the flash form
 * (pass_flash_attention: no dropout mask, the rows' log-sum-exp kept
 * instead of the probabilities) on cuDNN's fused scaled-dot-product
 * attention, through the cuDNN graph (backend) API from C.
 *
 * The graph is one node: cuDNN's unified SDPA operation
 * (CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR, cuDNN >= 9.13.1; the
 * backward CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR), the node
 * cudnn-frontend builds for Q, K, V, an attention scale, O and Stats
 * (include/cudnn_frontend/node/scaled_dot_product_flash_attention.h,
 * UnifiedSDPANode). Tensors, in cuDNN's (B, H, S, D) order:
 *
 *   Q, K, V, O, dO, dQ, dK, dV  (B, H, T, d), strides (T C, d, C, 1): the
 *       engine's (B T, C) rows with head h in columns [h d, (h + 1) d)
 *       ("BSHD"), f16 / bf16, uids 1..8;
 *   Stats  (B, H, T, 1) f32, strides (H T, T, 1, 1): the natural-log
 *       log-sum-exp of each row of scaled scores, exactly our lse (out[1]
 *       of the forward, in[4] of the backward), uid 9;
 *   scale  1 / sqrt(d), f32, passed by value (a host pointer in the
 *       variant pack), uid 10.
 *
 * The backward tries the unified SDPA_BWD operation first; released cuDNN
 * has no engines for it on SM80 / SM90 (cudnn-frontend does not use it;
 * NVIDIA/cudnn-frontend#895 is adding them), so it then builds the composite
 * graph that cudnn-frontend's CompositeSDPABackwardNode expands to and that
 * cuDNN's flash backward engines pattern-match (sd_composite_bwd).
 *
 * Attention dropout (training; the flash form with keep flags, see
 * pass_flash_attention): the mask is the engine's own, drawn by ops.cu as
 * the CPU draws every dropout mask (counter-based, per seed, step and
 * index), 0 / 1 in the io type (B, H, T, T), and given to cuDNN as an input
 * tensor, with 1 / (1 - p) by value: cudnn-frontend's "custom dropout mask"
 * (SDPA_attributes::set_dropout(mask, scale), set_dropout(mask, scale,
 * scale_inv) backward), which exists only in its composite graphs (its
 * unified node takes Philox seed / offset only), so both directions are
 * composite graphs here: sd_composite_fwd (the frontend's composite forward
 * with its composite softmax) and sd_composite_bwd with the mask nodes. The
 * forward draws the mask before cuDNN runs, the backward draws it again
 * into a tensor of its own (same stream: the same flags), so nothing but the
 * lse is kept between them. The check (sd_verify) gives cuDNN and our
 * kernels the same flags.
 *
 * Plan-time support check: the operation graph is finalized, engine configs
 * come from the heuristics (mode A, then the fallback list), and the first
 * whose execution plan finalizes (cudnnBackendFinalize) and needs at most
 * SDPA_WS_CAP of workspace is kept. When none does (no engine for the shape
 * or the precision, a cuDNN without the operation, ...) the op runs on
 * ops.cu's own kernels in the same flash form, and the log says why.
 * Then, as gemm.cu does for cuBLASLt, the plan is run once on random inputs
 * and compared with our kernels (sd_verify): a plan that computes something
 * else is not used (the log says what differed).
 * fp32 / tf32 never come here: the flash form is made only for fp16 / bf16
 * (cuDNN's flash SDPA is 16-bit only), and those keep our kernels.
 *
 * cuDNN writes dQ, dK and dV: a backward that accumulates into one of them
 * (acc bit) or lacks one runs on our kernel. Forward and backward are
 * independent: both forms of the backward read the same lse.
 *
 * Plans are made once per (direction, B, H, T, d, type) for the process
 * (BERT repeats its shapes per layer); each op gets its variant pack (its
 * tensors, cu.ws) at its first run, as cu.ws exists only after every
 * prepare. MATRIX_ENGINE_SDPA=kernel forces our kernels (for the checks).
 *
 * The graph-API building blocks (descriptors owned by a bag, tensors,
 * pointwise nodes, heuristics, plans, variant packs) are dnngraph.cu's,
 * shared with convgraph.cu.
 *
 * Nothing here has run on a GPU yet (written without one): `make check-gpu`
 * (ops_check's flash cases in fp16 / bf16, model_check's bert_tiny) is what
 * validates it; see engine/NOTES.md. */
#include "cuda.h"
#include "dnngraph.h"
#include "../knobs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SDPA_WS_CAP ((int64_t)1 << 30)
#define SDPA_CONFIGS 8

enum { U_Q = 1, U_K, U_V, U_O, U_DO, U_DQ, U_DK, U_DV, U_STATS, U_SCALE };

static struct {
    int fwd_cudnn, fwd_kernel, bwd_cudnn, bwd_kernel;
    int unchecked; /* ops on a cuDNN plan the check could not run for */
    int bwd_composite; /* backward ops on the composite graph */
    int fwd_drop, bwd_drop; /* of the cuDNN ops, those with our dropout mask as an input */
    int kernel_drop;   /* ops with dropout on the engine's kernels */
    int prepared;
    int mode; /* MATRIX_ENGINE_SDPA: 0 auto (cuDNN where it runs and checks out), 1 kernel */
    char info[640];
} sd;

#ifdef HAVE_CUDNN

/* One finalized plan of one problem. */
typedef struct sdpa_plan {
    int fwd, dt;
    int64_t B, H, T, d;
    int ok;                               /* 1: plan made; 0: cuDNN has none (kernel) */
    int verified;                         /* ok and checked against our kernels */
    dg_bag b;                             /* every descriptor made, the plan last; why */
    cudnnBackendDescriptor_t plan;
    int64_t ws;                           /* workspace: the plan's, then (composite) ours */
    int composite;                        /* cuDNN's composite graph (backward; dropout) */
    int64_t ws_plan;                      /* composite backward: the plan's part, 256-aligned */
    int drop;                             /* dropout: our keep flags an input (U_MASK) */
    int order;                            /* composite forward: which product first */
    float p;                              /* dropout: the first op's (the check's) */
} sdpa_plan;

/* The by-value scalars of a variant pack: it points here. */
typedef struct sd_scalars {
    float scale, one, dscale, dscale_inv; /* 1 / sqrt(d), 1, 1 / (1 - p), 1 - p */
} sd_scalars;

/* What an op runs: its plan and, from its first run, its variant pack. */
typedef struct sdpa_op {
    sdpa_plan *pl;
    cudnnBackendDescriptor_t vpack;
    sd_scalars v;
} sdpa_op;

static cudnnHandle_t sd_dnn;
static sdpa_plan **plans;
static int nplans;

/* A tensor of pl (dnngraph.h's dg_tensor), not virtual. */
static int sd_tensor(sdpa_plan *pl, int64_t uid, cudnnDataType_t dt, const int64_t *dim,
                     const int64_t *str, int by_value, cudnnBackendDescriptor_t *out)
{
    return dg_tensor(&pl->b, uid, dt, dim, str, by_value, 0, out);
}

/* The SDPA operation of pl (forward or backward) over its tensors. */
static int sd_operation(sdpa_plan *pl, cudnnBackendDescriptor_t *op)
{
    cudnnDataType_t dt = cu_dnn_type(pl->dt);
    int64_t C = pl->H * pl->d;
    int64_t dim[4] = {pl->B, pl->H, pl->T, pl->d}, str[4] = {pl->T * C, pl->d, C, 1};
    int64_t sdim[4] = {pl->B, pl->H, pl->T, 1}, sstr[4] = {pl->H * pl->T, pl->T, 1, 1};
    int64_t one[4] = {1, 1, 1, 1};
    cudnnBackendDescriptor_t q, k, v, o, st, sc;
    if (sd_tensor(pl, U_Q, dt, dim, str, 0, &q) || sd_tensor(pl, U_K, dt, dim, str, 0, &k) ||
        sd_tensor(pl, U_V, dt, dim, str, 0, &v) || sd_tensor(pl, U_O, dt, dim, str, 0, &o) ||
        sd_tensor(pl, U_STATS, CUDNN_DATA_FLOAT, sdim, sstr, 0, &st) ||
        sd_tensor(pl, U_SCALE, CUDNN_DATA_FLOAT, one, one, 1, &sc))
        return -1;
    if (pl->fwd) {
        if (dg_new(&pl->b, CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR, op) ||
            dg_set_desc(&pl->b, *op, CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, q) ||
            dg_set_desc(&pl->b, *op, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, k) ||
            dg_set_desc(&pl->b, *op, CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, v) ||
            dg_set_desc(&pl->b, *op, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, o) ||
            dg_set_desc(&pl->b, *op, CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, st) ||
            dg_set_desc(&pl->b, *op, CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, sc))
            return -1;
    } else {
        cudnnBackendDescriptor_t dO, dQ, dK, dV;
        if (sd_tensor(pl, U_DO, dt, dim, str, 0, &dO) || sd_tensor(pl, U_DQ, dt, dim, str, 0, &dQ) ||
            sd_tensor(pl, U_DK, dt, dim, str, 0, &dK) || sd_tensor(pl, U_DV, dt, dim, str, 0, &dV))
            return -1;
        if (dg_new(&pl->b, CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR, op) ||
            dg_set_desc(&pl->b, *op, CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC, q) ||
            dg_set_desc(&pl->b, *op, CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC, k) ||
            dg_set_desc(&pl->b, *op, CUDNN_ATTR_OPERATION_SDPA_BWD_VDESC, v) ||
            dg_set_desc(&pl->b, *op, CUDNN_ATTR_OPERATION_SDPA_BWD_ODESC, o) ||
            dg_set_desc(&pl->b, *op, CUDNN_ATTR_OPERATION_SDPA_BWD_STATSDESC, st) ||
            dg_set_desc(&pl->b, *op, CUDNN_ATTR_OPERATION_SDPA_BWD_SCALEDESC, sc) ||
            dg_set_desc(&pl->b, *op, CUDNN_ATTR_OPERATION_SDPA_BWD_DODDESC, dO) ||
            dg_set_desc(&pl->b, *op, CUDNN_ATTR_OPERATION_SDPA_BWD_DQDESC, dQ) ||
            dg_set_desc(&pl->b, *op, CUDNN_ATTR_OPERATION_SDPA_BWD_DKDESC, dK) ||
            dg_set_desc(&pl->b, *op, CUDNN_ATTR_OPERATION_SDPA_BWD_DVDESC, dV))
            return -1;
    }
    DG(&pl->b, cudnnBackendFinalize(*op));
    return 0;
}

/* ---- the composite backward graph --------------------------------------------------------- */

/* cuDNN's flash backward engines match this graph (cudnn-frontend's
 * CompositeSDPABackwardNode without dropout, bias or masks; the unified
 * SDPA_BWD operation has no engines in released cuDNN on SM80 / SM90):
 *
 *   softmax_sum = rowsum(dO * O) * 1            (f32, non-virtual: workspace)
 *   P   = exp(scale * Q K^T - Stats)            (virtual, f32)
 *   dV  = P^T dO                                (P^T: a reshape of P in the io type)
 *   dS  = scale * P * (dO V^T - softmax_sum)    (virtual, f32)
 *   dK  = dS^T Q                                (dS^T: a reshape in the io type)
 *   dQ  = identity(dQ_accum), dQ_accum = dS K   (f32, non-virtual: workspace)
 *
 * K and V are given as K^T, V^T (dims (B, H, d, T), strides (T C, d, 1, C));
 * K for dQ is a reshape back. softmax_sum and dQ_accum are dense, in the
 * workspace after the plan's own (pl->ws_plan), as the frontend lays them. */

enum { U_ONE = 11, U_SSUM, U_DQACC, U_MASK, U_DSCALE, U_DSCALE_INV, U_VIRT = 100 };

static int sd_virt(sdpa_plan *pl, int64_t *uid, cudnnDataType_t dt, const int64_t *dim,
                   const int64_t *str, cudnnBackendDescriptor_t *out)
{
    return dg_tensor(&pl->b, (*uid)++, dt, dim, str, 0, 1, out);
}

/* A matmul / reduction / reshape operation, appended to ops. */
static int sd_op_mm(sdpa_plan *pl, cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b,
                    cudnnBackendDescriptor_t c, cudnnBackendDescriptor_t *ops, int *nops)
{
    cudnnBackendDescriptor_t mm, op;
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    if (dg_new(&pl->b, CUDNN_BACKEND_MATMUL_DESCRIPTOR, &mm))
        return -1;
    DG(&pl->b, cudnnBackendSetAttribute(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp));
    DG(&pl->b, cudnnBackendFinalize(mm));
    if (dg_new(&pl->b, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, &op) ||
        dg_set_desc(&pl->b, op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, a) ||
        dg_set_desc(&pl->b, op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, b) ||
        dg_set_desc(&pl->b, op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, c) ||
        dg_set_desc(&pl->b, op, CUDNN_ATTR_OPERATION_MATMUL_DESC, mm))
        return -1;
    DG(&pl->b, cudnnBackendFinalize(op));
    ops[(*nops)++] = op;
    return 0;
}

static int sd_op_reduce(sdpa_plan *pl, cudnnReduceTensorOp_t how, cudnnBackendDescriptor_t x,
                        cudnnBackendDescriptor_t y, cudnnBackendDescriptor_t *ops, int *nops)
{
    cudnnBackendDescriptor_t red, op;
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    if (dg_new(&pl->b, CUDNN_BACKEND_REDUCTION_DESCRIPTOR, &red))
        return -1;
    DG(&pl->b, cudnnBackendSetAttribute(red, CUDNN_ATTR_REDUCTION_OPERATOR,
                                CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &how));
    DG(&pl->b, cudnnBackendSetAttribute(red, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp));
    DG(&pl->b, cudnnBackendFinalize(red));
    if (dg_new(&pl->b, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, &op) ||
        dg_set_desc(&pl->b, op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x) ||
        dg_set_desc(&pl->b, op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y) ||
        dg_set_desc(&pl->b, op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, red))
        return -1;
    DG(&pl->b, cudnnBackendFinalize(op));
    ops[(*nops)++] = op;
    return 0;
}

static int sd_op_reshape(sdpa_plan *pl, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y,
                         cudnnBackendDescriptor_t *ops, int *nops)
{
    cudnnBackendDescriptor_t op;
    if (dg_new(&pl->b, CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, &op) ||
        dg_set_desc(&pl->b, op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x) ||
        dg_set_desc(&pl->b, op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y))
        return -1;
    DG(&pl->b, cudnnBackendFinalize(op));
    ops[(*nops)++] = op;
    return 0;
}

/* The composite backward's operations into ops (*nops of them). With
 * dropout (pl->drop) the frontend's custom-mask nodes are added:
 * softmax_sum times 1 - p instead of 1, P times the keep flags and 1 / (1 - p)
 * before dV, dP times the keep flags, dS times 1 / (1 - p). Not split (about
 * 90 lines): the graph above, one statement per node, in the order the
 * frontend builds it. */
static int sd_composite_bwd(sdpa_plan *pl, cudnnBackendDescriptor_t *ops, int *nops)
{
    cudnnDataType_t io = cu_dnn_type(pl->dt), f32 = CUDNN_DATA_FLOAT;
    int64_t B = pl->B, H = pl->H, T = pl->T, d = pl->d, C = H * d, vu = U_VIRT;
    int64_t qd[4] = {B, H, T, d}, qs[4] = {T * C, d, C, 1};       /* Q, O, dO, dQ, dK, dV */
    int64_t td[4] = {B, H, d, T}, ts[4] = {T * C, d, 1, C};       /* K^T, V^T */
    int64_t sd4[4] = {B, H, T, 1}, ss[4] = {H * T, T, 1, 1};      /* Stats, softmax_sum */
    int64_t pd[4] = {B, H, T, T}, ps[4] = {H * T * T, T * T, T, 1}; /* scores, keep flags */
    int64_t ptd[4] = {B, H, T, T}, pts[4] = {H * T * T, T * T, 1, T}; /* P^T, dS^T */
    int64_t aqs[4] = {H * T * d, T * d, d, 1};                    /* dQ_accum: dense */
    int64_t dos[4] = {H * T * d, T * d, H * d, 1};                /* dO * O (frontend's) */
    int64_t one4[4] = {1, 1, 1, 1};
    cudnnBackendDescriptor_t q, kt, vt, o, dO, st, dq, dk, dv, sc, one, ssum, dqa;
    cudnnBackendDescriptor_t doo, rs, s, s1, s2, p, pt, dp, dp1, ds0, ds, dst, kv;
    cudnnBackendDescriptor_t keep = NULL, dsc = NULL, pk = NULL, pk1 = NULL, dpk = NULL, ds1 = NULL;
    if (dg_tensor(&pl->b, U_Q, io, qd, qs, 0, 0, &q) || dg_tensor(&pl->b, U_K, io, td, ts, 0, 0, &kt) ||
        dg_tensor(&pl->b, U_V, io, td, ts, 0, 0, &vt) || dg_tensor(&pl->b, U_O, io, qd, qs, 0, 0, &o) ||
        dg_tensor(&pl->b, U_DO, io, qd, qs, 0, 0, &dO) ||
        dg_tensor(&pl->b, U_STATS, f32, sd4, ss, 0, 0, &st) ||
        dg_tensor(&pl->b, U_DQ, io, qd, qs, 0, 0, &dq) || dg_tensor(&pl->b, U_DK, io, qd, qs, 0, 0, &dk) ||
        dg_tensor(&pl->b, U_DV, io, qd, qs, 0, 0, &dv) ||
        dg_tensor(&pl->b, U_SCALE, f32, one4, one4, 1, 0, &sc) ||
        dg_tensor(&pl->b, pl->drop ? U_DSCALE_INV : U_ONE, f32, one4, one4, 1, 0, &one) ||
        dg_tensor(&pl->b, U_SSUM, f32, sd4, ss, 0, 0, &ssum) ||
        dg_tensor(&pl->b, U_DQACC, f32, qd, aqs, 0, 0, &dqa) ||
        sd_virt(pl, &vu, f32, qd, dos, &doo) || sd_virt(pl, &vu, f32, sd4, ss, &rs) ||
        sd_virt(pl, &vu, f32, pd, ps, &s) || sd_virt(pl, &vu, f32, pd, ps, &s1) ||
        sd_virt(pl, &vu, f32, pd, ps, &s2) || sd_virt(pl, &vu, f32, pd, ps, &p) ||
        sd_virt(pl, &vu, io, ptd, pts, &pt) || sd_virt(pl, &vu, f32, pd, ps, &dp) ||
        sd_virt(pl, &vu, f32, pd, ps, &dp1) || sd_virt(pl, &vu, f32, pd, ps, &ds0) ||
        sd_virt(pl, &vu, f32, pd, ps, &ds) || sd_virt(pl, &vu, io, ptd, pts, &dst) ||
        sd_virt(pl, &vu, io, qd, qs, &kv))
        return -1;
    if (pl->drop &&
        (dg_tensor(&pl->b, U_MASK, io, pd, ps, 0, 0, &keep) ||
         dg_tensor(&pl->b, U_DSCALE, f32, one4, one4, 1, 0, &dsc) ||
         sd_virt(pl, &vu, f32, pd, ps, &pk) || sd_virt(pl, &vu, f32, pd, ps, &pk1) ||
         sd_virt(pl, &vu, f32, pd, ps, &dpk) || sd_virt(pl, &vu, f32, pd, ps, &ds1)))
        return -1;
    cudnnBackendDescriptor_t pv = pl->drop ? pk1 : p;   /* P as dV reads it */
    cudnnBackendDescriptor_t dpm = pl->drop ? dpk : dp; /* dP as the softmax reads it */
    cudnnBackendDescriptor_t dsd = pl->drop ? ds1 : ds0; /* dS before the attention scale */
    if (dg_op_pw(&pl->b, CUDNN_POINTWISE_MUL, dO, o, doo, ops, nops) ||     /* dO * O */
        sd_op_reduce(pl, CUDNN_REDUCE_TENSOR_ADD, doo, rs, ops, nops) ||  /* rowsum */
        dg_op_pw(&pl->b, CUDNN_POINTWISE_MUL, rs, one, ssum, ops, nops) ||  /* softmax_sum */
        sd_op_mm(pl, q, kt, s, ops, nops) ||                            /* Q K^T */
        dg_op_pw(&pl->b, CUDNN_POINTWISE_MUL, s, sc, s1, ops, nops) ||      /* * scale */
        dg_op_pw(&pl->b, CUDNN_POINTWISE_SUB, s1, st, s2, ops, nops) ||     /* - Stats */
        dg_op_pw(&pl->b, CUDNN_POINTWISE_EXP, s2, NULL, p, ops, nops) ||    /* P */
        (pl->drop && (dg_op_pw(&pl->b, CUDNN_POINTWISE_MUL, p, keep, pk, ops, nops) || /* * keep */
                      dg_op_pw(&pl->b, CUDNN_POINTWISE_MUL, pk, dsc, pk1, ops, nops))) || /* / (1-p) */
        sd_op_reshape(pl, pv, pt, ops, nops) ||                         /* P^T */
        sd_op_mm(pl, pt, dO, dv, ops, nops) ||                          /* dV */
        sd_op_mm(pl, dO, vt, dp, ops, nops) ||                          /* dO V^T */
        (pl->drop && dg_op_pw(&pl->b, CUDNN_POINTWISE_MUL, dp, keep, dpk, ops, nops)) || /* * keep */
        dg_op_pw(&pl->b, CUDNN_POINTWISE_SUB, dpm, ssum, dp1, ops, nops) || /* - softmax_sum */
        dg_op_pw(&pl->b, CUDNN_POINTWISE_MUL, dp1, p, ds0, ops, nops) ||    /* * P */
        (pl->drop && dg_op_pw(&pl->b, CUDNN_POINTWISE_MUL, ds0, dsc, ds1, ops, nops)) || /* / (1-p) */
        dg_op_pw(&pl->b, CUDNN_POINTWISE_MUL, dsd, sc, ds, ops, nops) ||    /* dS */
        sd_op_reshape(pl, ds, dst, ops, nops) ||                        /* dS^T */
        sd_op_mm(pl, dst, q, dk, ops, nops) ||                          /* dK */
        sd_op_reshape(pl, kt, kv, ops, nops) ||                         /* K */
        sd_op_mm(pl, ds, kv, dqa, ops, nops) ||                         /* dQ_accum */
        dg_op_pw(&pl->b, CUDNN_POINTWISE_IDENTITY, dqa, NULL, dq, ops, nops)) /* dQ */
        return -1;
    return 0;
}

/* The composite forward with dropout (cudnn-frontend's composite SDPA node
 * with a custom dropout mask, its softmax the composite softmax node; the
 * unified SDPA_FWD operation takes no mask):
 *
 *   S  = scale * Q K^T;  M = rowmax(S);  E = exp(S - M);  Z = rowsum(E)
 *   Stats = M + log(Z)                           (f32, out)
 *   P  = E / Z;  A = P * (1 / (1 - p)) * keep   (A in the io type)
 *   O  = A V
 *
 * keep (B, H, T, T) dense in the io type, 1 / (1 - p) by value. The order
 * of the two products: pl->order 0 is the frontend node's (scale, then
 * mask); 1 is what NVIDIA's sample fp16_fwd_with_custom_dropout.cpp builds
 * (its set_dropout arguments swapped: mask first). Not split (about 50
 * lines): one statement per node. */
static int sd_composite_fwd(sdpa_plan *pl, cudnnBackendDescriptor_t *ops, int *nops)
{
    cudnnDataType_t io = cu_dnn_type(pl->dt), f32 = CUDNN_DATA_FLOAT;
    int64_t B = pl->B, H = pl->H, T = pl->T, d = pl->d, C = H * d, vu = U_VIRT;
    int64_t qd[4] = {B, H, T, d}, qs[4] = {T * C, d, C, 1};       /* Q, V, O */
    int64_t td[4] = {B, H, d, T}, ts[4] = {T * C, d, 1, C};       /* K^T */
    int64_t sd4[4] = {B, H, T, 1}, ss[4] = {H * T, T, 1, 1};      /* Stats, row max / sum */
    int64_t pd[4] = {B, H, T, T}, ps[4] = {H * T * T, T * T, T, 1}; /* scores, keep flags */
    int64_t one4[4] = {1, 1, 1, 1};
    cudnnBackendDescriptor_t q, kt, v, o, st, sc, dsc, keep;
    cudnnBackendDescriptor_t s, s1, mx, s2, e, z, l, p, a1, a2;
    if (dg_tensor(&pl->b, U_Q, io, qd, qs, 0, 0, &q) || dg_tensor(&pl->b, U_K, io, td, ts, 0, 0, &kt) ||
        dg_tensor(&pl->b, U_V, io, qd, qs, 0, 0, &v) || dg_tensor(&pl->b, U_O, io, qd, qs, 0, 0, &o) ||
        dg_tensor(&pl->b, U_STATS, f32, sd4, ss, 0, 0, &st) ||
        dg_tensor(&pl->b, U_SCALE, f32, one4, one4, 1, 0, &sc) ||
        dg_tensor(&pl->b, U_DSCALE, f32, one4, one4, 1, 0, &dsc) ||
        dg_tensor(&pl->b, U_MASK, io, pd, ps, 0, 0, &keep) ||
        sd_virt(pl, &vu, f32, pd, ps, &s) || sd_virt(pl, &vu, f32, pd, ps, &s1) ||
        sd_virt(pl, &vu, f32, sd4, ss, &mx) || sd_virt(pl, &vu, f32, pd, ps, &s2) ||
        sd_virt(pl, &vu, f32, pd, ps, &e) || sd_virt(pl, &vu, f32, sd4, ss, &z) ||
        sd_virt(pl, &vu, f32, sd4, ss, &l) || sd_virt(pl, &vu, f32, pd, ps, &p) ||
        sd_virt(pl, &vu, f32, pd, ps, &a1) || sd_virt(pl, &vu, io, pd, ps, &a2))
        return -1;
    cudnnBackendDescriptor_t first = pl->order ? keep : dsc, second = pl->order ? dsc : keep;
    if (sd_op_mm(pl, q, kt, s, ops, nops) ||                            /* Q K^T */
        dg_op_pw(&pl->b, CUDNN_POINTWISE_MUL, s, sc, s1, ops, nops) ||      /* * scale */
        sd_op_reduce(pl, CUDNN_REDUCE_TENSOR_MAX, s1, mx, ops, nops) ||  /* M */
        dg_op_pw(&pl->b, CUDNN_POINTWISE_SUB, s1, mx, s2, ops, nops) ||     /* S - M */
        dg_op_pw(&pl->b, CUDNN_POINTWISE_EXP, s2, NULL, e, ops, nops) ||    /* E */
        sd_op_reduce(pl, CUDNN_REDUCE_TENSOR_ADD, e, z, ops, nops) ||    /* Z */
        dg_op_pw(&pl->b, CUDNN_POINTWISE_LOG, z, NULL, l, ops, nops) ||     /* log Z */
        dg_op_pw(&pl->b, CUDNN_POINTWISE_ADD, mx, l, st, ops, nops) ||      /* Stats */
        dg_op_pw(&pl->b, CUDNN_POINTWISE_DIV, e, z, p, ops, nops) ||        /* P */
        dg_op_pw(&pl->b, CUDNN_POINTWISE_MUL, p, first, a1, ops, nops) ||   /* dropout, */
        dg_op_pw(&pl->b, CUDNN_POINTWISE_MUL, a1, second, a2, ops, nops) || /* both parts */
        sd_op_mm(pl, a2, v, o, ops, nops))                              /* O */
        return -1;
    return 0;
}

/* The first engine config of the heuristics (mode A, then the fallback
 * list) whose execution plan finalizes with at most SDPA_WS_CAP of
 * workspace: pl->plan and pl->ws. */
static int sd_plan(sdpa_plan *pl, cudnnBackendDescriptor_t graph)
{
    static const cudnnBackendHeurMode_t modes[2] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK};
    char last[200] = "the heuristics returned no engine config";
    for (int m = 0; m < 2; m++) {
        cudnnBackendDescriptor_t cfg[SDPA_CONFIGS];
        int n = dg_heur(&pl->b, graph, modes[m], cfg, SDPA_CONFIGS), found = -1;
        if (n < 0) {
            snprintf(last, sizeof last, "%.190s", pl->b.why);
            continue;
        }
        for (int i = 0; i < n && found < 0; i++) {
            cudnnBackendDescriptor_t plan;
            int64_t ws = 0;
            cudnnStatus_t e = dg_plan(sd_dnn, cfg[i], &plan, &ws);
            if (e == CUDNN_STATUS_SUCCESS && ws <= SDPA_WS_CAP) {
                pl->plan = plan;
                pl->ws = ws;
                found = i;
            } else {
                snprintf(last, sizeof last, "engine config %d of %d: %s", i, n,
                         e != CUDNN_STATUS_SUCCESS ? cudnnGetErrorString(e)
                                                   : "workspace above 1 GiB");
                if (plan)
                    cudnnBackendDestroyDescriptor(plan);
            }
        }
        dg_free_configs(cfg, SDPA_CONFIGS);
        if (found >= 0) {
            if (dg_keep(&pl->b, pl->plan)) { /* destroyed there */
                pl->plan = NULL;
                return -1;
            }
            return 0;
        }
    }
    snprintf(pl->b.why, sizeof pl->b.why, "%s", last);
    return -1;
}

static void sd_drop(sdpa_plan *pl)
{
    dg_drop(&pl->b);
    pl->plan = NULL;
}

/* pl's graph (the unified operation, or the composite backward) and plan:
 * 0, or -1 with pl->b.why. */
static int sd_build_graph(sdpa_plan *pl)
{
    cudnnBackendDescriptor_t ops[24], graph;
    int nops = 0;
    if (!pl->composite ? sd_operation(pl, &ops[nops++])
        : pl->fwd      ? sd_composite_fwd(pl, ops, &nops)
                       : sd_composite_bwd(pl, ops, &nops))
        return -1;
    if (dg_graph(&pl->b, sd_dnn, ops, nops, &graph) || sd_plan(pl, graph))
        return -1;
    if (pl->composite && !pl->fwd) { /* softmax_sum and dQ_accum after the plan's workspace */
        pl->ws_plan = (pl->ws + 255) / 256 * 256;
        pl->ws = pl->ws_plan + (pl->B * pl->H * pl->T * 4 + 255) / 256 * 256 +
                 pl->B * pl->H * pl->T * pl->d * 4;
    }
    return 0;
}

/* Build pl: the unified operation; for the backward, when it has no engine,
 * the composite graph. With dropout only composite graphs (the unified
 * operation takes no mask; the forward's two product orders are sd_make's).
 * 0, or -1 with pl->b.why. */
static int sd_build(sdpa_plan *pl)
{
    if (pl->drop) {
        pl->composite = 1;
        if (sd_build_graph(pl) == 0)
            return 0;
        char first[200];
        snprintf(first, sizeof first, "%.180s", pl->b.why);
        snprintf(pl->b.why, sizeof pl->b.why, "composite graph with our dropout mask: %s", first);
        return -1;
    }
    if (sd_build_graph(pl) == 0)
        return 0;
    if (pl->fwd)
        return -1;
    char first[200];
    snprintf(first, sizeof first, "%.180s", pl->b.why);
    sd_drop(pl);
    pl->composite = 1;
    if (sd_build_graph(pl) == 0)
        return 0;
    char second[200];
    snprintf(second, sizeof second, "%.180s", pl->b.why);
    snprintf(pl->b.why, sizeof pl->b.why, "unified SDPA_BWD: %.180s; composite graph: %.180s", first,
                 second);
    return -1;
}

/* Byte offset of the composite backward's dQ_accum (f32, B H T d) in its
 * workspace: after the plan's part and softmax_sum. */
static int64_t sd_dqacc_off(const sdpa_plan *pl)
{
    return pl->ws_plan + (pl->B * pl->H * pl->T * 4 + 255) / 256 * 256;
}

/* Before each run of a composite backward on cuDNN older than 9.6.0: zero
 * its dQ_accum, which those versions accumulate into without clearing it
 * (cudnn-frontend's CompositeSDPABackwardNode memsets it for them; from
 * 9.6.0 the engines write it). In stream order, so also inside a capture. */
static void sd_clear_accum(const sdpa_plan *pl, void *ws)
{
    if (pl->composite && !pl->fwd && cudnnGetVersion() < 90600)
        cudaCheck(cudaMemsetAsync((char *)ws + sd_dqacc_off(pl), 0,
                                  (size_t)(pl->B * pl->H * pl->T * pl->d * 4), cu.s));
}

/* The variant pack's entries beyond the tensors and the scale: a
 * composite backward's scalar 1 (without dropout) and its two workspace
 * tensors; with dropout the keep flags and 1 / (1 - p) (and, backward,
 * 1 - p). Returns the new count. */
static int sd_extra(const sdpa_plan *pl, void *ws, sd_scalars *v, void *keep, int64_t *uid,
                    void **ptr, int n)
{
    if (pl->drop) {
        uid[n] = U_MASK;
        ptr[n++] = keep;
        uid[n] = U_DSCALE;
        ptr[n++] = &v->dscale;
    }
    if (!pl->composite || pl->fwd)
        return n;
    v->one = 1.0f;
    uid[n] = pl->drop ? U_DSCALE_INV : U_ONE;
    ptr[n++] = pl->drop ? &v->dscale_inv : &v->one;
    uid[n] = U_SSUM;
    ptr[n++] = (char *)ws + pl->ws_plan;
    uid[n] = U_DQACC;
    ptr[n++] = (char *)ws + sd_dqacc_off(pl);
    return n;
}

/* The scalars of a problem of head size d and dropout probability p. */
static void sd_scalars_of(sd_scalars *v, int64_t d, float p)
{
    v->scale = 1.0f / sqrtf((float)d);
    v->one = 1.0f;
    v->dscale = 1.0f / (1.0f - p);
    v->dscale_inv = 1.0f - p;
}


/* out[0] = max |a - b|, out[1] = max |b| over n elements of type dt (as
 * float bits: non-negative floats order as integers; NaN orders above inf). */
__global__ void k_sd_cmp(const void *a, const void *b, int dt, size_t n, unsigned *out)
{
    size_t stride = (size_t)gridDim.x * blockDim.x; /* cu_blocks caps the grid: 134M elements */
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float x = cu_ld(a, dt, i), y = cu_ld(b, dt, i), e = fabsf(x - y), r = fabsf(y);
        if (e != e)
            e = __int_as_float(0x7fc00000);
        atomicMax(&out[0], (unsigned)__float_as_int(e));
        atomicMax(&out[1], (unsigned)__float_as_int(r));
    }
}

/* Scratch of the verification: every buffer one allocation. */
#define SD_SCRATCH 24
typedef struct sd_scratch {
    void *p[SD_SCRATCH];
    size_t h[SD_SCRATCH];
    int n;
} sd_scratch;

/* A scratch buffer of the check: NULL only when device memory is short
 * (the check then says "not checked"); more buffers than SD_SCRATCH is a
 * bug, never reported as a shortage (the backward's check takes 20: with
 * 16 it was never run, and every backward plan was used unchecked). */
static void *sd_get(sd_scratch *s, size_t bytes)
{
    void *p = NULL;
    if (s->n == SD_SCRATCH)
        cu_fail(__FILE__, __LINE__, "sd_get", "more scratch buffers than SD_SCRATCH (BUG)");
    if (cu_buffer(&p, &s->h[s->n], bytes ? bytes : 4))
        return NULL;
    s->p[s->n++] = p;
    return p;
}

static void sd_scratch_free(sd_scratch *s)
{
    cudaCheck(cudaStreamSynchronize(cu.s));
    for (int i = 0; i < s->n; i++)
        cu_free(s->p[i], s->h[i]);
    s->n = 0;
}

/* Compare n elements of a (cuDNN) with b (ours): 1 when max|a - b| <= tol
 * max|b| (+ 1e-6), else 0 with what, the error and the scale in why. */
static int sd_same(const void *a, const void *b, int dt, size_t n, float tol, unsigned *dev,
                   const char *what, char *why, size_t wn)
{
    unsigned h[2];
    cudaCheck(cudaMemsetAsync(dev, 0, 2 * sizeof(unsigned), cu.s));
    k_sd_cmp<<<cu_blocks(n, 256), 256, 0, cu.s>>>(a, b, dt, n, dev);
    cu_launched();
    cudaCheck(cudaMemcpyAsync(h, dev, sizeof h, cudaMemcpyDeviceToHost, cu.s));
    cudaCheck(cudaStreamSynchronize(cu.s));
    float e, r;
    memcpy(&e, &h[0], 4);
    memcpy(&r, &h[1], 4);
    if (e <= tol * r + 1e-6f)
        return 1;
    snprintf(why, wn, "%s differs from the engine's kernel: max |err| %g, max |ref| %g", what, e,
             r);
    return 0;
}

/* Run pl once on random inputs and compare with the engine's kernels:
 * forward O and Stats of every batch element, backward dQ, dK, dV (from O
 * and Stats made by our forward) of the first and the last batch element
 * (the reference's scratch holds one; the elements are independent). The
 * workspace starts as NaN bytes (as cu.ws holds what other ops left). With
 * dropout both are given the same keep flags (drawn with the plan's p), so
 * the check also shows that cuDNN applies our mask where we do, in both
 * directions. 1 right; 0 wrong (pl->b.why); -1 not checked (no memory for
 * the check, or a shape beyond our kernels: *note says which). Tolerance:
 * 2e-2 (f16) / 6e-2 (bf16) of the largest reference element: far above
 * rounding (cuDNN rounds P and dS to 16 bits), far below a layout error or
 * a mask applied elsewhere (a tenth of the probabilities moved). Not split
 * (about 100 lines): one check whose buffers and steps are shared by its
 * two directions; it cannot be run where it is maintained (no GPU). */
static int sd_verify(sdpa_plan *pl, const char **note)
{
    size_t B = (size_t)pl->B, H = (size_t)pl->H, T = (size_t)pl->T, C = (size_t)(pl->H * pl->d);
    size_t es = graph_dtype_size(pl->dt), n = B * T * C, n0 = T * C, nl = B * H * T;
    float tol = pl->dt == DT_BF16 ? 6e-2f : 2e-2f;
    sd_scratch s;
    memset(&s, 0, sizeof s);
    void *q = sd_get(&s, n * es), *k = sd_get(&s, n * es), *v = sd_get(&s, n * es);
    void *o = sd_get(&s, n * es), *o0 = sd_get(&s, n * es);
    float *lse = (float *)sd_get(&s, nl * 4), *lse0 = (float *)sd_get(&s, nl * 4);
    void *ws = sd_get(&s, (size_t)pl->ws);
    unsigned *cmp = (unsigned *)sd_get(&s, 2 * sizeof(unsigned));
    void *keep = pl->drop ? sd_get(&s, nl * T * es) : NULL;
    void *dO = NULL, *g[3] = {NULL, NULL, NULL}, *g0[3] = {NULL, NULL, NULL};
    float *pb = NULL, *ds = NULL;
    if (!pl->fwd) {
        dO = sd_get(&s, n * es);
        for (int j = 0; j < 3; j++) {
            g[j] = sd_get(&s, n * es);
            g0[j] = sd_get(&s, n0 * es);
        }
        pb = (float *)sd_get(&s, H * T * T * 4);
        ds = (float *)sd_get(&s, H * T * T * 4);
    }
    if (!q || !k || !v || !o || !o0 || !lse || !lse0 || !ws || !cmp || (pl->drop && !keep) ||
        (!pl->fwd && (!dO || !g[2] || !g0[2] || !pb || !ds))) {
        sd_scratch_free(&s);
        *note = "not checked: no device memory for the check";
        return -1;
    }
    /* the workspace as the runs find cu.ws, whatever other ops left there: a
     * plan that needs part of it cleared (beyond sd_clear_accum) fails */
    cudaCheck(cudaMemsetAsync(ws, 0xff, (size_t)pl->ws, cu.s));
    cu_fill_uniform(q, pl->dt, n, 0x5d1);
    cu_fill_uniform(k, pl->dt, n, 0x5d2);
    cu_fill_uniform(v, pl->dt, n, 0x5d3);
    if (keep)
        cu_attention_draw_keep(keep, pl->dt, nl * T, pl->p, 0x5d5);
    sd_scalars sv;
    sd_scalars_of(&sv, pl->d, pl->drop ? pl->p : 0.0f);
    int rc = 1, ok;
    cudnnBackendDescriptor_t vp = NULL;
    int64_t uid[16];
    void *ptr[16];
    int nu;
    /* ours: the forward of every batch element (the backward reads O, Stats) */
    if (cu_attention_flash_ref(1, q, k, v, pl->dt, o0, lse0, NULL, NULL, NULL, NULL, NULL, NULL,
                               keep, pl->p, B, H, T, C)) {
        sd_scratch_free(&s);
        *note = "not checked: the shape is beyond the engine's kernels";
        return -1;
    }
    if (pl->fwd) {
        int64_t u[6] = {U_Q, U_K, U_V, U_O, U_STATS, U_SCALE};
        void *pp[6] = {q, k, v, o, lse, &sv.scale};
        memcpy(uid, u, sizeof u);
        memcpy(ptr, pp, sizeof pp);
        nu = sd_extra(pl, ws, &sv, keep, uid, ptr, 6);
        cudaCheck(cudaMemsetAsync(o, 0xff, n * es, cu.s)); /* NaN: unwritten fails */
        cudaCheck(cudaMemsetAsync(lse, 0xff, nl * 4, cu.s));
        ok = dg_vpack(uid, ptr, nu, ws, &vp) == CUDNN_STATUS_SUCCESS &&
             cudnnBackendExecute(sd_dnn, pl->plan, vp) == CUDNN_STATUS_SUCCESS;
        if (!ok)
            snprintf(pl->b.why, sizeof pl->b.why, "cudnnBackendExecute failed on the check's inputs");
        else
            rc = sd_same(o, o0, pl->dt, n, tol, cmp, "O", pl->b.why, sizeof pl->b.why) &&
                 sd_same(lse, lse0, DT_F32, nl, tol, cmp, "Stats", pl->b.why, sizeof pl->b.why);
    } else {
        int64_t u[10] = {U_DO, U_Q, U_K, U_V, U_STATS, U_O, U_DQ, U_DK, U_DV, U_SCALE};
        void *pp[10] = {dO, q, k, v, lse0, o0, g[0], g[1], g[2], &sv.scale};
        memcpy(uid, u, sizeof u);
        memcpy(ptr, pp, sizeof pp);
        nu = sd_extra(pl, ws, &sv, keep, uid, ptr, 10);
        cu_fill_uniform(dO, pl->dt, n, 0x5d4);
        for (int j = 0; j < 3; j++)
            cudaCheck(cudaMemsetAsync(g[j], 0xff, n * es, cu.s));
        sd_clear_accum(pl, ws);
        ok = dg_vpack(uid, ptr, nu, ws, &vp) == CUDNN_STATUS_SUCCESS &&
             cudnnBackendExecute(sd_dnn, pl->plan, vp) == CUDNN_STATUS_SUCCESS;
        if (!ok)
            snprintf(pl->b.why, sizeof pl->b.why, "cudnnBackendExecute failed on the check's inputs");
        /* the first and the last batch element: a batch stride cuDNN reads
         * otherwise than we lay it out leaves element 0 right */
        for (size_t e = 0, last = B - 1; ok && rc == 1 && e <= last; e += last ? last : 1) {
            size_t off = e * n0 * es;
            if (cu_attention_flash_ref(0, (char *)q + off, (char *)k + off, (char *)v + off,
                                       pl->dt, NULL, lse0 + e * H * T, (char *)dO + off, g0[0],
                                       g0[1], g0[2], pb, ds,
                                       keep ? (char *)keep + e * H * T * T * es : NULL, pl->p, 1,
                                       H, T, C)) {
                rc = -1; /* the backward's shared memory: beyond our kernels */
                break;
            }
            for (int j = 0; j < 3 && rc == 1; j++) {
                char what[64];
                snprintf(what, sizeof what, "%s of batch element %zu",
                         j == 0 ? "dQ" : j == 1 ? "dK" : "dV", e);
                rc = sd_same((char *)g[j] + off, g0[j], pl->dt, n0, tol, cmp, what, pl->b.why,
                             sizeof pl->b.why);
            }
        }
    }
    if (!ok)
        rc = 0;
    (void)cudaGetLastError();
    sd_scratch_free(&s);
    if (vp)
        cudnnBackendDestroyDescriptor(vp);
    *note = rc < 0 ? "not checked: the shape is beyond the engine's kernels"
            : pl->drop ? "checked against the engine's kernels with the same dropout mask"
                       : "checked against the engine's kernels";
    return rc;
}

/* Build pl and check it (sd_build, sd_verify): 1 right, -1 used unchecked
 * (*note says why), 0 not usable (pl->b.why). The forward with dropout tries
 * the frontend node's order of the two dropout products, then its sample's,
 * each built AND checked: an order whose graph builds but computes something
 * else (the check fails) is dropped and the other one tried. */
static int sd_make(sdpa_plan *pl, const char **note)
{
    if (!pl->drop || !pl->fwd) {
        if (sd_build(pl))
            return 0;
        return sd_verify(pl, note);
    }
    char why[2][200];
    pl->composite = 1;
    for (int ord = 0; ord < 2; ord++) {
        pl->order = ord;
        int v = sd_build_graph(pl) ? 0 : sd_verify(pl, note);
        if (v != 0)
            return v;
        snprintf(why[ord], sizeof why[ord], "%.180s", pl->b.why);
        sd_drop(pl);
    }
    snprintf(pl->b.why, sizeof pl->b.why,
             "composite graph with our dropout mask: scale then mask: %.160s; mask then scale: "
             "%.160s", why[0], why[1]);
    return 0;
}

static void sd_plan_free(sdpa_plan *pl)
{
    dg_drop(&pl->b);
    free(pl);
}

/* The plan of a problem: cached, else built (and logged) now. */
static sdpa_plan *sd_plan_of(int fwd, int dt, int64_t B, int64_t H, int64_t T, int64_t d,
                             int drop, float p, const char *opname)
{
    for (int i = 0; i < nplans; i++) {
        sdpa_plan *c = plans[i];
        if (c->fwd == fwd && c->dt == dt && c->B == B && c->H == H && c->T == T && c->d == d &&
            c->drop == drop)
            return c;
    }
    sdpa_plan *pl = (sdpa_plan *)calloc(1, sizeof *pl);
    sdpa_plan **np = (sdpa_plan **)realloc(plans, (nplans + 1) * sizeof *np);
    if (!pl || !np)
        cu_fail(__FILE__, __LINE__, "calloc", "out of host memory");
    plans = np;
    plans[nplans++] = pl;
    pl->fwd = fwd;
    pl->dt = dt;
    pl->B = B; pl->H = H; pl->T = T; pl->d = d;
    pl->drop = drop;
    pl->p = drop ? p : 0.0f;
    const char *note = "";
    if (sd.mode == 1) /* MATRIX_ENGINE_SDPA=kernel */
        snprintf(pl->b.why, sizeof pl->b.why, "MATRIX_ENGINE_SDPA=kernel");
    else if (!drop && cudnnGetVersion() < 91301) /* dropout: composite graphs only */
        snprintf(pl->b.why, sizeof pl->b.why, "cuDNN %zu has no unified SDPA operation (9.13.1+)",
                 cudnnGetVersion());
    else { /* built, then run against our kernels: used only if it computes what they do */
        int v = sd_make(pl, &note);
        pl->ok = v != 0;
        pl->verified = v > 0;
    }
    if (!pl->ok) /* keep the reason, drop what was made */
        sd_drop(pl);
    fprintf(stderr,
            "matrix-engine: cuda: attention %s '%s' (B %lld, H %lld, T %lld, d %lld, %s%s): %s%s%s\n",
            fwd ? "forward" : "backward", opname, (long long)B, (long long)H, (long long)T,
            (long long)d, dt == DT_BF16 ? "bf16" : "f16", drop ? ", dropout" : "",
            !pl->ok          ? "the engine's own kernel: "
            : pl->composite ? "cuDNN fused SDPA (flash attention), composite graph"
                            : "cuDNN fused SDPA (flash attention)",
            !pl->ok || !drop ? ""
            : pl->order     ? " with the engine's dropout mask (mask, then scale)"
                            : " with the engine's dropout mask (scale, then mask)",
            pl->ok ? "" : pl->b.why);
    if (pl->ok)
        fprintf(stderr, "matrix-engine: cuda: attention %s: cuDNN plan workspace %lld bytes, %s\n",
                fwd ? "forward" : "backward", (long long)pl->ws, note);
    if (pl->ok && drop) /* what the op reads beyond the flash form's: the keep flags */
        fprintf(stderr, "matrix-engine: cuda: attention %s: dropout keep flags as an input, "
                "%lld bytes (B H T T in the io type, drawn by the engine as the CPU draws them; "
                "no probabilities kept)\n", fwd ? "forward" : "backward",
                (long long)(B * H * T * T * (int64_t)graph_dtype_size(dt)));
    return pl;
}

/* The op's variant pack (its tensors, cu.ws): made at its first run. */
static void sd_vpack(graph *g, op *o, sdpa_op *so)
{
    int64_t uid[16];
    void *ptr[16];
    int n = 0, mask = o->type == OP_ATTENTION ? o->out[2] : o->out[3];
#define PUT(u, t) (uid[n] = (u), ptr[n] = CU_PTR(g, (t)), n++)
    if (o->type == OP_ATTENTION) {
        PUT(U_Q, o->in[0]); PUT(U_K, o->in[1]); PUT(U_V, o->in[2]);
        PUT(U_O, o->out[0]); PUT(U_STATS, o->out[1]);
    } else {
        PUT(U_DO, o->in[0]); PUT(U_Q, o->in[1]); PUT(U_K, o->in[2]); PUT(U_V, o->in[3]);
        PUT(U_STATS, o->in[4]); PUT(U_O, o->in[5]);
        PUT(U_DQ, o->out[0]); PUT(U_DK, o->out[1]); PUT(U_DV, o->out[2]);
    }
#undef PUT
    uid[n] = U_SCALE;
    ptr[n++] = &so->v.scale;
    n = sd_extra(so->pl, cu.ws, &so->v, mask >= 0 ? CU_PTR(g, mask) : NULL, uid, ptr, n);
    if (so->pl->ws > (int64_t)cu.ws_bytes)
        cu_fail(__FILE__, __LINE__, "attention", "workspace smaller than prepared");
    cudnnCheck(dg_vpack(uid, ptr, n, cu.ws, &so->vpack));
}

/* 1 when op o of g can be given to cuDNN: flash form, 16-bit tensors of one
 * type (the dropout keep flags too, when there are), and for the backward
 * every gradient written, none accumulated. */
static int sd_eligible(const graph *g, const op *o)
{
    int fwd = o->type == OP_ATTENTION;
    int lse = fwd ? o->out[1] : o->in[4];
    if (lse < 0 || g->t[lse].ndim != 3 || g->t[lse].dtype != DT_F32)
        return 0;
    int dt = CU_DT(g, o->in[fwd ? 0 : 1]);
    if (dt != DT_F16 && dt != DT_BF16)
        return 0;
    int mask = fwd ? o->out[2] : o->out[3];
    if (mask >= 0 && (CU_DT(g, mask) != dt || g->t[mask].ndim != 4 || !(o->p > 0.0f && o->p < 1.0f)))
        return 0;
    if (fwd)
        return CU_DT(g, o->in[1]) == dt && CU_DT(g, o->in[2]) == dt && CU_DT(g, o->out[0]) == dt;
    if (o->acc || o->in[5] < 0)
        return 0;
    for (int k = 0; k < 3; k++)
        if (o->out[k] < 0 || CU_DT(g, o->out[k]) != dt)
            return 0;
    return CU_DT(g, o->in[0]) == dt && CU_DT(g, o->in[2]) == dt && CU_DT(g, o->in[3]) == dt &&
           CU_DT(g, o->in[5]) == dt;
}

#endif /* HAVE_CUDNN */

/* ---- the interface (cuda.h) -------------------------------------------------------------- */

/* The result's sdpa_* keys: where the attention ops ran. */
static void sd_info_write(void)
{
    snprintf(sd.info, sizeof sd.info,
             "sdpa_cudnn_fwd=%d\nsdpa_kernel_fwd=%d\nsdpa_cudnn_bwd=%d\nsdpa_kernel_bwd=%d\n"
             "sdpa_cudnn_bwd_composite=%d\nsdpa_cudnn_fwd_dropout=%d\n"
             "sdpa_cudnn_bwd_dropout=%d\nsdpa_kernel_dropout=%d\nsdpa_unchecked=%d\n"
             "sdpa_cudnn_version=%zu\nsdpa_engine=%s\n",
             sd.fwd_cudnn, sd.fwd_kernel, sd.bwd_cudnn, sd.bwd_kernel, sd.bwd_composite,
             sd.fwd_drop, sd.bwd_drop, sd.kernel_drop, sd.unchecked,
#ifdef HAVE_CUDNN
             cudnnGetVersion(),
#else
             (size_t)0,
#endif
             knob_value(KNOB_SDPA, sd.mode));
}

/* The attention ops cuDNN's SDPA was not asked for, said on stderr (those
 * it was asked for are said shape by shape, sd_plan_of). */
static void sd_say_kernels(int fwd, int bwd)
{
    if (fwd + bwd)
        fprintf(stderr, "matrix-engine: cuda: attention: %d forward and %d backward op(s) on the engine's own "
                "kernels: %s\n", fwd, bwd,
#ifdef HAVE_CUDNN
                "not of a form cuDNN's fused SDPA takes (fp16 or bf16 throughout; fp32 and tf32 points run f32 "
                "attention)"
#else
                "built without cuDNN"
#endif
        );
}

int cu_sdpa_prepare(graph *g, int nrun)
{
    char err[256];
    int inel_fwd = 0, inel_bwd = 0; /* ops cuDNN's SDPA cannot take (f32) */
    memset(&sd, 0, sizeof sd);
    if ((sd.mode = knob_get(KNOB_SDPA, err, sizeof err)) < 0) {
        /* refused by the engine before it ran; said here to a test that prepares */
        fprintf(stderr, "matrix-engine: cuda: %s\n", err);
        return -3;
    }
    for (int i = 0; i < nrun; i++) {
        op *o = &g->ops[i];
        if (o->type != OP_ATTENTION && o->type != OP_ATTENTION_BWD)
            continue;
        int fwd = o->type == OP_ATTENTION;
        sd.prepared = 1;
#ifdef HAVE_CUDNN
        if (!sd_eligible(g, o))
            (fwd ? inel_fwd : inel_bwd)++;
        else {
            if (!sd_dnn && sd.mode != 1) { /* MATRIX_ENGINE_SDPA=kernel: no cuDNN to make */
                cudnnStatus_t st = cudnnCreate(&sd_dnn);
                if (st != CUDNN_STATUS_SUCCESS) {
                    sd_dnn = NULL;
                    fprintf(stderr, "matrix-engine: cuda: cudnnCreate: %s\n",
                            cudnnGetErrorString(st));
                    return -2;
                }
                cudnnCheck(cudnnSetStream(sd_dnn, cu.s));
            }
            const tensor *lt = &g->t[fwd ? o->out[1] : o->in[4]];
            int64_t C = g->t[o->in[fwd ? 0 : 1]].shape[1], H = lt->shape[1];
            int drop = (fwd ? o->out[2] : o->out[3]) >= 0;
            sdpa_plan *pl = sd_plan_of(fwd, CU_DT(g, o->in[fwd ? 0 : 1]), lt->shape[0], H,
                                       lt->shape[2], C / H, drop, o->p, o->name);
            if (pl->ok) {
                sdpa_op *so = (sdpa_op *)calloc(1, sizeof *so);
                if (!so)
                    cu_fail(__FILE__, __LINE__, "calloc", "out of host memory");
                so->pl = pl;
                sd_scalars_of(&so->v, C / H, drop ? o->p : 0.0f);
                cu.priv[i] = so;
                if ((size_t)pl->ws > cu.ws_need)
                    cu.ws_need = (size_t)pl->ws;
                if (fwd)
                    sd.fwd_cudnn++;
                else
                    sd.bwd_cudnn++;
                if (drop)
                    (fwd ? sd.fwd_drop : sd.bwd_drop)++;
                sd.unchecked += !pl->verified;
                sd.bwd_composite += pl->composite;
                continue;
            }
        }
#endif
        if (fwd)
            sd.fwd_kernel++;
        else
            sd.bwd_kernel++;
        sd.kernel_drop += (fwd ? o->out[2] : o->out[3]) >= 0 ||
                          (!fwd && g->t[o->in[4]].ndim == 4 && o->in[5] >= 0);
    }
#ifndef HAVE_CUDNN
    inel_fwd = sd.fwd_kernel;
    inel_bwd = sd.bwd_kernel;
#endif
    sd_say_kernels(inel_fwd, inel_bwd);
    if (sd.prepared)
        sd_info_write();
    return 0;
}

int cu_sdpa_takes(const graph *g, const op *o)
{
    int i = (int)(o - g->ops);
    return (o->type == OP_ATTENTION || o->type == OP_ATTENTION_BWD) && i >= 0 && i < cu.nops &&
           cu.priv && cu.priv[i];
}

int cu_sdpa_run(graph *g, op *o)
{
#ifdef HAVE_CUDNN
    sdpa_op *so = (sdpa_op *)cu.priv[o - g->ops];
    if (!so)
        return 0;
    if (!so->vpack)
        sd_vpack(g, o, so);
    sd_clear_accum(so->pl, cu.ws);
    cudnnCheck(cudnnBackendExecute(sd_dnn, so->pl->plan, so->vpack));
    return 1;
#else
    (void)g;
    (void)o;
    return 0;
#endif
}

void cu_sdpa_release(graph *g)
{
#ifdef HAVE_CUDNN
    for (int i = 0; cu.priv && g && i < cu.nops && i < g->nops; i++) {
        if (g->ops[i].type != OP_ATTENTION && g->ops[i].type != OP_ATTENTION_BWD)
            continue;
        sdpa_op *so = (sdpa_op *)cu.priv[i];
        if (!so)
            continue;
        if (so->vpack)
            cudnnBackendDestroyDescriptor(so->vpack);
        free(so);
        cu.priv[i] = NULL;
    }
    for (int i = 0; i < nplans; i++)
        sd_plan_free(plans[i]);
    free(plans);
    plans = NULL;
    nplans = 0;
    if (sd_dnn)
        cudnnDestroy(sd_dnn);
    sd_dnn = NULL;
#else
    (void)g;
#endif
}

const char *cu_sdpa_info(void) { return sd.prepared ? sd.info : ""; }
