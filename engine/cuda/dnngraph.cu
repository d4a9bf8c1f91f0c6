/* dnngraph.cu - building blocks of cuDNN graph (backend) API plans
 * (dnngraph.h): descriptors owned by a bag, tensors, pointwise nodes, the
 * operation graph, heuristics, execution plans, variant packs, and engine
 * configs read into / rebuilt from their integers (dg_engine.h). Every
 * cuDNN status is checked; a failure is a reason in the bag, never the
 * end of the process. */
#include "dnngraph.h"

#include <stdio.h>
#include <string.h>

#ifdef HAVE_CUDNN

int dg_new(dg_bag *b, cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *out)
{
    *out = NULL;
    if (b->ndesc == DG_MAX_DESC) {
        snprintf(b->why, sizeof b->why, "too many descriptors (BUG)");
        return -1;
    }
    DG(b, cudnnBackendCreateDescriptor(type, out));
    b->desc[b->ndesc++] = *out;
    return 0;
}

int dg_keep(dg_bag *b, cudnnBackendDescriptor_t d)
{
    if (b->ndesc == DG_MAX_DESC) {
        snprintf(b->why, sizeof b->why, "too many descriptors (BUG)");
        cudnnBackendDestroyDescriptor(d);
        return -1;
    }
    b->desc[b->ndesc++] = d;
    return 0;
}

int dg_tensor(dg_bag *b, int64_t uid, cudnnDataType_t dt, const int64_t *dim, const int64_t *str,
              int by_value, int virt, cudnnBackendDescriptor_t *out)
{
    int64_t align = 16;
    bool val = by_value != 0, vir = virt != 0;
    if (dg_new(b, CUDNN_BACKEND_TENSOR_DESCRIPTOR, out))
        return -1;
    DG(b, cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt));
    DG(b, cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dim));
    DG(b, cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, str));
    DG(b, cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid));
    DG(b, cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1,
                                   &align));
    if (by_value)
        DG(b, cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1,
                                       &val));
    if (virt)
        DG(b, cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1,
                                       &vir));
    DG(b, cudnnBackendFinalize(*out));
    return 0;
}

int dg_set_desc(dg_bag *b, cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t a,
                cudnnBackendDescriptor_t v)
{
    DG(b, cudnnBackendSetAttribute(d, a, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v));
    return 0;
}

int dg_op_pw(dg_bag *b, cudnnPointwiseMode_t mode, cudnnBackendDescriptor_t x,
             cudnnBackendDescriptor_t bx, cudnnBackendDescriptor_t y,
             cudnnBackendDescriptor_t *ops, int *nops)
{
    cudnnBackendDescriptor_t pw, op;
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    if (dg_new(b, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &pw))
        return -1;
    DG(b, cudnnBackendSetAttribute(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1,
                                   &mode));
    DG(b, cudnnBackendSetAttribute(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1,
                                   &prec));
    DG(b, cudnnBackendFinalize(pw));
    if (dg_new(b, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, &op) ||
        dg_set_desc(b, op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw) ||
        dg_set_desc(b, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x) ||
        (bx && dg_set_desc(b, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, bx)) ||
        dg_set_desc(b, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y))
        return -1;
    DG(b, cudnnBackendFinalize(op));
    ops[(*nops)++] = op;
    return 0;
}

int dg_graph(dg_bag *b, cudnnHandle_t h, const cudnnBackendDescriptor_t *ops, int n,
             cudnnBackendDescriptor_t *graph)
{
    if (dg_new(b, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, graph))
        return -1;
    DG(b, cudnnBackendSetAttribute(*graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1,
                                   &h));
    DG(b, cudnnBackendSetAttribute(*graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, n, ops));
    DG(b, cudnnBackendFinalize(*graph));
    return 0;
}

void dg_free_configs(cudnnBackendDescriptor_t *cfg, int max)
{
    for (int i = 0; i < max; i++)
        if (cfg[i]) {
            cudnnBackendDestroyDescriptor(cfg[i]);
            cfg[i] = NULL;
        }
}

int dg_heur(dg_bag *b, cudnnBackendDescriptor_t graph, cudnnBackendHeurMode_t mode,
            cudnnBackendDescriptor_t *cfg, int max)
{
    cudnnBackendDescriptor_t heur;
    int64_t n = 0;
    for (int i = 0; i < max; i++)
        cfg[i] = NULL;
    if (dg_new(b, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur) ||
        dg_set_desc(b, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph))
        return -1;
    DG(b, cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1,
                                   &mode));
    DG(b, cudnnBackendFinalize(heur));
    for (int i = 0; i < max; i++) {
        cudnnStatus_t e = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg[i]);
        if (e != CUDNN_STATUS_SUCCESS) {
            cfg[i] = NULL;
            dg_free_configs(cfg, max);
            snprintf(b->why, sizeof b->why, "cudnnBackendCreateDescriptor(ENGINECFG): %s",
                     cudnnGetErrorString(e));
            return -1;
        }
    }
    cudnnStatus_t e = cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                               CUDNN_TYPE_BACKEND_DESCRIPTOR, max, &n, cfg);
    if (e != CUDNN_STATUS_SUCCESS) {
        dg_free_configs(cfg, max);
        snprintf(b->why, sizeof b->why, "cudnnBackendGetAttribute(ENGINEHEUR_RESULTS): %s",
                 cudnnGetErrorString(e));
        return -1;
    }
    return n < 0 ? 0 : n > max ? max : (int)n;
}

cudnnStatus_t dg_plan(cudnnHandle_t h, cudnnBackendDescriptor_t cfg, cudnnBackendDescriptor_t *plan,
                      int64_t *ws)
{
    int64_t nws = 0;
    *ws = 0;
    cudnnStatus_t e = cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, plan);
    if (e != CUDNN_STATUS_SUCCESS) {
        *plan = NULL;
        return e;
    }
    e = cudnnBackendSetAttribute(*plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    if (e == CUDNN_STATUS_SUCCESS)
        e = cudnnBackendSetAttribute(*plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
    if (e == CUDNN_STATUS_SUCCESS)
        e = cudnnBackendFinalize(*plan);
    if (e == CUDNN_STATUS_SUCCESS)
        e = cudnnBackendGetAttribute(*plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                     CUDNN_TYPE_INT64, 1, &nws, ws);
    if (e == CUDNN_STATUS_SUCCESS && *ws < 0)
        e = CUDNN_STATUS_BAD_PARAM;
    if (e != CUDNN_STATUS_SUCCESS) {
        cudnnBackendDestroyDescriptor(*plan);
        *plan = NULL;
    }
    return e;
}

cudnnStatus_t dg_vpack(const int64_t *uid, void *const *ptr, int n, void *ws,
                       cudnnBackendDescriptor_t *vp)
{
    cudnnStatus_t e = cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, vp);
    if (e != CUDNN_STATUS_SUCCESS) {
        *vp = NULL;
        return e;
    }
    if ((e = cudnnBackendSetAttribute(*vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n,
                                      uid)) != CUDNN_STATUS_SUCCESS ||
        (e = cudnnBackendSetAttribute(*vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                      CUDNN_TYPE_VOID_PTR, n, ptr)) != CUDNN_STATUS_SUCCESS ||
        (e = cudnnBackendSetAttribute(*vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR,
                                      1, &ws)) != CUDNN_STATUS_SUCCESS ||
        (e = cudnnBackendFinalize(*vp)) != CUDNN_STATUS_SUCCESS) {
        cudnnBackendDestroyDescriptor(*vp);
        *vp = NULL;
    }
    return e;
}

void dg_drop(dg_bag *b)
{
    for (int i = b->ndesc - 1; i >= 0; i--)
        cudnnBackendDestroyDescriptor(b->desc[i]);
    b->ndesc = 0;
}

/* Engine, knobs and notes of cfg (cudnn-frontend reads a plan's tag and
 * notes the same way); every helper descriptor destroyed on every path. */
#define DG_READ(what_, x)                                                                         \
    do {                                                                                          \
        if (s == CUDNN_STATUS_SUCCESS) {                                                          \
            what = (what_);                                                                       \
            s = (x);                                                                              \
        }                                                                                         \
    } while (0)

int dg_engine_of(dg_bag *b, cudnnBackendDescriptor_t cfg, dg_engine *e)
{
    enum { NK = (int)CUDNN_KNOB_TYPE_COUNTS < DG_MAX_KNOBS ? (int)CUDNN_KNOB_TYPE_COUNTS : DG_MAX_KNOBS };
    cudnnBackendDescriptor_t eng = NULL, knob[NK];
    cudnnBackendNumericalNote_t nn[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    cudnnBackendBehaviorNote_t bn[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
    int64_t cnt = 0, nkn = 0, k = 0, kb = 0;
    int made = 0;
    const char *what = "cudnnBackendCreateDescriptor";
    memset(e, 0, sizeof *e);
    cudnnStatus_t s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng);
    if (s != CUDNN_STATUS_SUCCESS)
        eng = NULL;
    while (s == CUDNN_STATUS_SUCCESS && made < NK) {
        s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &knob[made]);
        if (s == CUDNN_STATUS_SUCCESS)
            made++;
    }
    DG_READ("ENGINECFG_ENGINE", cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE,
                                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cnt,
                                                         &eng));
    DG_READ("ENGINE_GLOBAL_INDEX", cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
                                                            CUDNN_TYPE_INT64, 1, &cnt, &e->id));
    DG_READ("ENGINECFG_KNOB_CHOICES",
            cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, NK, &nkn, knob));
    e->nknobs = s != CUDNN_STATUS_SUCCESS || nkn < 0 ? 0 : nkn > NK ? NK : (int)nkn;
    for (int i = 0; i < e->nknobs; i++) {
        cudnnBackendKnobType_t t = CUDNN_KNOB_TYPE_COUNTS;
        DG_READ("KNOB_CHOICE_KNOB_TYPE",
                cudnnBackendGetAttribute(knob[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                         CUDNN_TYPE_KNOB_TYPE, 1, &cnt, &t));
        DG_READ("KNOB_CHOICE_KNOB_VALUE",
                cudnnBackendGetAttribute(knob[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                                         CUDNN_TYPE_INT64, 1, &cnt, &e->knob_value[i]));
        e->knob_type[i] = (int64_t)t;
    }
    DG_READ("ENGINE_NUMERICAL_NOTE",
            cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                     CUDNN_TYPE_NUMERICAL_NOTE, CUDNN_NUMERICAL_NOTE_TYPE_COUNT,
                                     &k, nn));
    DG_READ("ENGINE_BEHAVIOR_NOTE",
            cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE,
                                     CUDNN_TYPE_BEHAVIOR_NOTE, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT,
                                     &kb, bn));
    if (s == CUDNN_STATUS_SUCCESS) {
        for (int64_t i = 0; i < k && i < CUDNN_NUMERICAL_NOTE_TYPE_COUNT; i++)
            e->numerical |= (unsigned)nn[i] < 32 ? 1u << nn[i] : 0u;
        for (int64_t i = 0; i < kb && i < CUDNN_BEHAVIOR_NOTE_TYPE_COUNT; i++)
            e->behavior |= (unsigned)bn[i] < 32 ? 1u << bn[i] : 0u;
    } else
        snprintf(b->why, sizeof b->why, "reading the engine config (%s): %s", what,
                 cudnnGetErrorString(s));
    for (int i = 0; i < made; i++)
        cudnnBackendDestroyDescriptor(knob[i]);
    if (eng)
        cudnnBackendDestroyDescriptor(eng);
    return s == CUDNN_STATUS_SUCCESS ? 0 : -1;
}

int dg_config_of(dg_bag *b, cudnnBackendDescriptor_t graph, const dg_engine *e,
                 cudnnBackendDescriptor_t *cfg)
{
    cudnnBackendDescriptor_t eng, knob[DG_MAX_KNOBS];
    if (e->nknobs < 0 || e->nknobs > DG_MAX_KNOBS) {
        snprintf(b->why, sizeof b->why, "engine config with %d knobs", e->nknobs);
        return -1;
    }
    if (dg_new(b, CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng) ||
        dg_set_desc(b, eng, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, graph))
        return -1;
    DG(b, cudnnBackendSetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1,
                                   &e->id));
    DG(b, cudnnBackendFinalize(eng));
    for (int i = 0; i < e->nknobs; i++) {
        cudnnBackendKnobType_t t = (cudnnBackendKnobType_t)e->knob_type[i];
        if (dg_new(b, CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &knob[i]))
            return -1;
        DG(b, cudnnBackendSetAttribute(knob[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                       CUDNN_TYPE_KNOB_TYPE, 1, &t));
        DG(b, cudnnBackendSetAttribute(knob[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                                       CUDNN_TYPE_INT64, 1, &e->knob_value[i]));
        DG(b, cudnnBackendFinalize(knob[i]));
    }
    if (dg_new(b, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, cfg) ||
        dg_set_desc(b, *cfg, CUDNN_ATTR_ENGINECFG_ENGINE, eng))
        return -1;
    if (e->nknobs)
        DG(b, cudnnBackendSetAttribute(*cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, e->nknobs, knob));
    DG(b, cudnnBackendFinalize(*cfg));
    return 0;
}

#endif /* HAVE_CUDNN */
