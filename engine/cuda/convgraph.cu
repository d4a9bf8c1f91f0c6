/* convgraph.cu - a forward convolution with its pointwise epilogue as one
 * cuDNN graph (backend) API operation graph (convgraph.h), on dnngraph.h's
 * building blocks (the ones sdpa.cu uses):
 *
 *   CONVOLUTION_FORWARD  x, w -> t0              (t0 virtual f32; y when
 *                                                 there is no epilogue)
 *   POINTWISE ADD        t0 + bias -> t1         (bias (1, K, 1, 1))
 *   POINTWISE ADD        t1 + res -> t2
 *   POINTWISE RELU_FWD   t2 -> y
 *
 *   GEN_STATS            y -> sum, sqsum         (stats: instead of the epilogue;
 *                                                 f32 (1, K, 1, 1), NHWC)
 *
 * each node only when the op has it; the last one writes y (type dt). The
 * GEN_STATS form is cudnn-frontend's conv_fprop -> genstats (its
 * "ConvBNfprop" pattern without the input scale / bias / ReLU): y in
 * memory, the two sums FLOAT, math precision FLOAT.
 * This is the graph cudnn-frontend builds for conv_fprop + bias + add +
 * relu (io HALF, intermediate and compute FLOAT) and that cuDNN's fused
 * conv engines (pre-compiled ConvBiasAct, runtime fusion) take.
 *
 * Engine configs come from the heuristics (conv.cu asks mode A, then B,
 * and makes their plans one at a time, as many as it uses); a config is
 * kept when its plan finalizes, its workspace fits the cap
 * and cuDNN's notes on its engine fit the precision (cg_refusal): no
 * reduced-precision (16-bit) accumulation, nothing non-deterministic, and
 * for fp32 no tensor cores or down-converted inputs, as the legacy path
 * asks for FMA math only; and, when conv.cu says so (auto without the
 * search), no engine that cuDNN compiles at run time. Nothing of this file has run on a GPU (written
 * without one); conv.cu checks every plan numerically before use. */
#include "convgraph.h"

#include <stdio.h>
#include <string.h>

#ifdef HAVE_CUDNN

enum { U_X = 1, U_W, U_B, U_Z, U_Y, U_SUM, U_SQSUM, U_VIRT = 101 };

/* Dims and strides of a (N, C, H, W) tensor in the engine's layout. */
static void cg_dims(int64_t n, int64_t c, int64_t h, int64_t w, int nhwc, int64_t *dim,
                    int64_t *str)
{
    dim[0] = n; dim[1] = c; dim[2] = h; dim[3] = w;
    if (nhwc) {
        str[0] = h * w * c; str[1] = 1; str[2] = w * c; str[3] = c;
    } else {
        str[0] = c * h * w; str[1] = h * w; str[2] = w; str[3] = 1;
    }
}

/* The convolution descriptor and operation x, w -> y. */
static int cg_conv(cg_plan *cp, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t w,
                   cudnnBackendDescriptor_t y, cudnnBackendDescriptor_t *op)
{
    dg_bag *b = &cp->b;
    const conv_view *v = &cp->pb.v;
    cudnnBackendDescriptor_t cd;
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    int64_t dims = 2, dil[2] = {1, 1}, str[2] = {v->stride, v->stride}, pad[2] = {v->pad, v->pad};
    float alpha = 1.0f, beta = 0.0f;
    if (dg_new(b, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &cd))
        return -1;
    DG(b, cudnnBackendSetAttribute(cd, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1,
                                   &comp));
    DG(b, cudnnBackendSetAttribute(cd, CUDNN_ATTR_CONVOLUTION_CONV_MODE,
                                   CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode));
    DG(b, cudnnBackendSetAttribute(cd, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1,
                                   &dims));
    DG(b, cudnnBackendSetAttribute(cd, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil));
    DG(b, cudnnBackendSetAttribute(cd, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2,
                                   str));
    DG(b, cudnnBackendSetAttribute(cd, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2,
                                   pad));
    DG(b, cudnnBackendSetAttribute(cd, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2,
                                   pad));
    DG(b, cudnnBackendFinalize(cd));
    if (dg_new(b, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, op) ||
        dg_set_desc(b, *op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x) ||
        dg_set_desc(b, *op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w) ||
        dg_set_desc(b, *op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y) ||
        dg_set_desc(b, *op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, cd))
        return -1;
    DG(b, cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
                                   CUDNN_TYPE_FLOAT, 1, &alpha));
    DG(b, cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA,
                                   CUDNN_TYPE_FLOAT, 1, &beta));
    DG(b, cudnnBackendFinalize(*op));
    return 0;
}

/* GEN_STATS y -> sum, sqsum (f32 (1, K, 1, 1)), appended to ops. */
static int cg_genstats(cg_plan *cp, cudnnBackendDescriptor_t y, cudnnBackendDescriptor_t *ops,
                       int *nops)
{
    dg_bag *b = &cp->b;
    int64_t K = cp->pb.v.K, sd[4] = {1, K, 1, 1}, ss[4] = {K, 1, K, K};
    cudnnGenStatsMode_t mode = CUDNN_GENSTATS_SUM_SQSUM;
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t s, q, op;
    if (dg_tensor(b, U_SUM, CUDNN_DATA_FLOAT, sd, ss, 0, 0, &s) ||
        dg_tensor(b, U_SQSUM, CUDNN_DATA_FLOAT, sd, ss, 0, 0, &q) ||
        dg_new(b, CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR, &op))
        return -1;
    DG(b, cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_GENSTATS_MODE,
                                   CUDNN_TYPE_GENSTATS_MODE, 1, &mode));
    DG(b, cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC,
                                   CUDNN_TYPE_DATA_TYPE, 1, &prec));
    if (dg_set_desc(b, op, CUDNN_ATTR_OPERATION_GENSTATS_XDESC, y) ||
        dg_set_desc(b, op, CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, s) ||
        dg_set_desc(b, op, CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, q))
        return -1;
    DG(b, cudnnBackendFinalize(op));
    ops[(*nops)++] = op;
    return 0;
}

int cg_build(cg_plan *cp, cudnnHandle_t h)
{
    dg_bag *b = &cp->b;
    const cg_problem *pb = &cp->pb;
    const conv_view *v = &pb->v;
    cudnnDataType_t io = cu_dnn_type(pb->dt), f32 = CUDNN_DATA_FLOAT;
    int64_t xd[4], xs[4], wd[4], ws[4], yd[4], ys[4], bd[4] = {1, v->K, 1, 1};
    int64_t bs[4] = {v->K, 1, v->nhwc ? v->K : 1, v->nhwc ? v->K : 1}, uid = U_VIRT;
    cudnnBackendDescriptor_t x, w, y, t, ops[4];
    int nops = 0, npw = pb->bias + pb->res + (pb->act == ACT_RELU);
    if (pb->stats && (npw || !v->nhwc)) {
        snprintf(b->why, sizeof b->why, "GEN_STATS needs a convolution without epilogue, NHWC");
        return -1;
    }
    cg_dims(v->N, v->C, v->H, v->W, v->nhwc, xd, xs);
    cg_dims(v->K, v->C, v->R, v->S, v->w_krsc, wd, ws);
    cg_dims(v->N, v->K, v->OH, v->OW, v->nhwc, yd, ys);
    cp->graph = NULL;
    if (dg_tensor(b, U_X, io, xd, xs, 0, 0, &x) ||
        dg_tensor(b, U_W, cu_dnn_type(pb->wdt), wd, ws, 0, 0, &w) ||
        dg_tensor(b, U_Y, io, yd, ys, 0, 0, &y))
        return -1;
    /* the convolution writes y itself, or a virtual f32 tensor the epilogue reads */
    if (npw == 0)
        t = y;
    else if (dg_tensor(b, uid++, f32, yd, ys, 0, 1, &t))
        return -1;
    if (cg_conv(cp, x, w, t, &ops[nops++]))
        return -1;
    if (pb->bias) {
        cudnnBackendDescriptor_t bt, o;
        if (dg_tensor(b, U_B, cu_dnn_type(pb->bdt), bd, bs, 0, 0, &bt) ||
            (--npw ? dg_tensor(b, uid++, f32, yd, ys, 0, 1, &o) : (o = y, 0)) ||
            dg_op_pw(b, CUDNN_POINTWISE_ADD, t, bt, o, ops, &nops))
            return -1;
        t = o;
    }
    if (pb->res) {
        cudnnBackendDescriptor_t z, o;
        if (dg_tensor(b, U_Z, io, yd, ys, 0, 0, &z) ||
            (--npw ? dg_tensor(b, uid++, f32, yd, ys, 0, 1, &o) : (o = y, 0)) ||
            dg_op_pw(b, CUDNN_POINTWISE_ADD, t, z, o, ops, &nops))
            return -1;
        t = o;
    }
    if (pb->act == ACT_RELU && dg_op_pw(b, CUDNN_POINTWISE_RELU_FWD, t, NULL, y, ops, &nops))
        return -1;
    if (pb->stats && cg_genstats(cp, y, ops, &nops))
        return -1;
    return dg_graph(b, h, ops, nops, &cp->graph);
}

const char *cg_refusal(const cg_problem *pb, const dg_engine *e)
{
    if (e->numerical & (1u << CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION))
        return "accumulates in reduced precision";
    if (e->numerical & (1u << CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC))
        return "non-deterministic";
    if (pb->strict && (e->numerical & ((1u << CUDNN_NUMERICAL_NOTE_TENSOR_CORE) |
                                       (1u << CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS))))
        return "tensor cores or down-converted inputs under fp32";
    if (pb->no_rtc && (e->behavior & (1u << CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION)))
        return "compiled at run time, and not timed: its compile time would be start-up for "
               "nothing measured";
    if (e->behavior & ((1u << CUDNN_BEHAVIOR_NOTE_REQUIRES_FILTER_INT8x32_REORDER) |
                       (1u << CUDNN_BEHAVIOR_NOTE_REQUIRES_BIAS_INT8x32_REORDER)))
        return "needs reordered int8 operands";
    return NULL;
}

void cg_cand_free(cg_cand *c)
{
    if (c->plan)
        cudnnBackendDestroyDescriptor(c->plan);
    c->plan = NULL;
}

int cg_try(cg_plan *cp, cudnnHandle_t h, cudnnBackendDescriptor_t cfg, size_t cap,
                  cg_cand *c, char *why, size_t wn)
{
    const char *no;
    memset(c, 0, sizeof *c);
    if (dg_engine_of(&cp->b, cfg, &c->eng)) {
        snprintf(why, wn, "%.300s", cp->b.why);
        return -1;
    }
    if ((no = cg_refusal(&cp->pb, &c->eng))) {
        snprintf(why, wn, "engine %lld: %s", (long long)c->eng.id, no);
        return -1;
    }
    cudnnStatus_t e = dg_plan(h, cfg, &c->plan, &c->ws);
    if (e != CUDNN_STATUS_SUCCESS) {
        snprintf(why, wn, "engine %lld: the plan does not finalize: %s", (long long)c->eng.id,
                 cudnnGetErrorString(e));
        return -1;
    }
    if ((size_t)c->ws > cap) {
        snprintf(why, wn, "engine %lld: workspace %lld bytes above the cap", (long long)c->eng.id,
                 (long long)c->ws);
        cg_cand_free(c);
        return -1;
    }
    return 0;
}

int cg_configs(cg_plan *cp, cudnnBackendHeurMode_t mode, cudnnBackendDescriptor_t *cfg)
{
    int n = dg_heur(&cp->b, cp->graph, mode, cfg, CG_CONFIGS);
    if (n == 0)
        snprintf(cp->b.why, sizeof cp->b.why, "the heuristics returned no engine config");
    return n < 0 ? 0 : n;
}

int cg_plan_of(cg_plan *cp, cudnnHandle_t h, const dg_engine *e, size_t cap, cg_cand *c)
{
    cudnnBackendDescriptor_t cfg;
    char why[400];
    memset(c, 0, sizeof *c);
    if (dg_config_of(&cp->b, cp->graph, e, &cfg))
        return -1;
    if (cg_try(cp, h, cfg, cap, c, why, sizeof why)) {
        snprintf(cp->b.why, sizeof cp->b.why, "%s", why);
        return -1;
    }
    return 0;
}

int cg_keep(cg_plan *cp, cg_cand *c)
{
    cudnnBackendDescriptor_t plan = c->plan;
    c->plan = NULL;
    if (dg_keep(&cp->b, plan)) /* destroyed there */
        return -1;
    cp->use = *c;
    cp->use.plan = plan;
    return 0;
}

cudnnStatus_t cg_vpack(const cg_problem *pb, const conv_bufs *b, void *ws,
                       cudnnBackendDescriptor_t *vp)
{
    int64_t uid[7];
    void *ptr[7];
    int n = 0;
    uid[n] = U_X; ptr[n++] = (void *)b->x;
    uid[n] = U_W; ptr[n++] = (void *)b->w;
    uid[n] = U_Y; ptr[n++] = b->y;
    if (pb->bias) {
        uid[n] = U_B;
        ptr[n++] = (void *)b->bias;
    }
    if (pb->res) {
        uid[n] = U_Z;
        ptr[n++] = (void *)b->res;
    }
    if (pb->stats) {
        uid[n] = U_SUM;
        ptr[n++] = b->sum;
        uid[n] = U_SQSUM;
        ptr[n++] = b->sqsum;
    }
    return dg_vpack(uid, ptr, n, ws, vp);
}

cudnnStatus_t cg_execute(cudnnHandle_t h, const cg_problem *pb, cudnnBackendDescriptor_t plan,
                         const conv_bufs *b, void *ws)
{
    cudnnBackendDescriptor_t vp;
    cudnnStatus_t e = cg_vpack(pb, b, ws, &vp);
    if (e != CUDNN_STATUS_SUCCESS)
        return e;
    e = cudnnBackendExecute(h, plan, vp);
    cudnnBackendDestroyDescriptor(vp);
    return e;
}

void cg_free(cg_plan *cp)
{
    dg_drop(&cp->b);
    cp->graph = NULL;
    cp->use.plan = NULL;
}

#endif /* HAVE_CUDNN */
