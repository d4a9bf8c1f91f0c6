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
 * Plan-time support check: the operation graph is finalized, engine configs
 * come from the heuristics (mode A, then the fallback list), and the first
 * whose execution plan finalizes (cudnnBackendFinalize) and needs at most
 * SDPA_WS_CAP of workspace is kept. When none does (no engine for the shape
 * or the precision, a cuDNN without the operation, ...) the op runs on
 * ops.cu's own kernels in the same flash form, and the log says why.
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
 * Nothing here has run on a GPU yet (written without one): `make check-gpu`
 * (ops_check's flash cases in fp16 / bf16, model_check's bert_tiny) is what
 * validates it; see engine/NOTES.md. */
#include "cuda.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SDPA_WS_CAP ((int64_t)1 << 30)
#define SDPA_MAX_DESC 24
#define SDPA_CONFIGS 8

enum { U_Q = 1, U_K, U_V, U_O, U_DO, U_DQ, U_DK, U_DV, U_STATS, U_SCALE };

static struct {
    int fwd_cudnn, fwd_kernel, bwd_cudnn, bwd_kernel;
    int prepared;
    char info[384];
} sd;

#ifdef HAVE_CUDNN

/* One finalized plan of one problem. */
typedef struct sdpa_plan {
    int fwd, dt;
    int64_t B, H, T, d;
    int ok;                               /* 1: plan made; 0: cuDNN has none (kernel) */
    cudnnBackendDescriptor_t desc[SDPA_MAX_DESC]; /* every descriptor made, the plan last */
    int ndesc;
    cudnnBackendDescriptor_t plan;
    int64_t ws;
    char why[200];                        /* ok == 0: what refused */
} sdpa_plan;

/* What an op runs: its plan and, from its first run, its variant pack. */
typedef struct sdpa_op {
    sdpa_plan *pl;
    cudnnBackendDescriptor_t vpack;
    float scale;                          /* by value: the variant pack points here */
} sdpa_op;

static cudnnHandle_t sd_dnn;
static sdpa_plan **plans;
static int nplans;

/* A failed cuDNN call while building a plan: the reason, then give up on it. */
#define SD(x)                                                                                     \
    do {                                                                                          \
        cudnnStatus_t e_ = (x);                                                                   \
        if (e_ != CUDNN_STATUS_SUCCESS) {                                                         \
            snprintf(pl->why, sizeof pl->why, "%s: %s", #x, cudnnGetErrorString(e_));             \
            return -1;                                                                            \
        }                                                                                         \
    } while (0)

static int sd_new(sdpa_plan *pl, cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *out)
{
    if (pl->ndesc == SDPA_MAX_DESC) {
        snprintf(pl->why, sizeof pl->why, "too many descriptors (BUG)");
        return -1;
    }
    SD(cudnnBackendCreateDescriptor(type, out));
    pl->desc[pl->ndesc++] = *out;
    return 0;
}

/* A finalized tensor descriptor: dims and strides (4), type, uid. */
static int sd_tensor(sdpa_plan *pl, int64_t uid, cudnnDataType_t dt, const int64_t *dim,
                     const int64_t *str, int by_value, cudnnBackendDescriptor_t *out)
{
    int64_t align = 16;
    bool val = by_value != 0;
    if (sd_new(pl, CUDNN_BACKEND_TENSOR_DESCRIPTOR, out))
        return -1;
    SD(cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt));
    SD(cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dim));
    SD(cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, str));
    SD(cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid));
    SD(cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align));
    if (by_value)
        SD(cudnnBackendSetAttribute(*out, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &val));
    SD(cudnnBackendFinalize(*out));
    return 0;
}

static int sd_set_desc(sdpa_plan *pl, cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t a,
                       cudnnBackendDescriptor_t v)
{
    SD(cudnnBackendSetAttribute(d, a, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v));
    return 0;
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
        if (sd_new(pl, CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR, op) ||
            sd_set_desc(pl, *op, CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, q) ||
            sd_set_desc(pl, *op, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, k) ||
            sd_set_desc(pl, *op, CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, v) ||
            sd_set_desc(pl, *op, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, o) ||
            sd_set_desc(pl, *op, CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, st) ||
            sd_set_desc(pl, *op, CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, sc))
            return -1;
    } else {
        cudnnBackendDescriptor_t dO, dQ, dK, dV;
        if (sd_tensor(pl, U_DO, dt, dim, str, 0, &dO) || sd_tensor(pl, U_DQ, dt, dim, str, 0, &dQ) ||
            sd_tensor(pl, U_DK, dt, dim, str, 0, &dK) || sd_tensor(pl, U_DV, dt, dim, str, 0, &dV))
            return -1;
        if (sd_new(pl, CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR, op) ||
            sd_set_desc(pl, *op, CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC, q) ||
            sd_set_desc(pl, *op, CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC, k) ||
            sd_set_desc(pl, *op, CUDNN_ATTR_OPERATION_SDPA_BWD_VDESC, v) ||
            sd_set_desc(pl, *op, CUDNN_ATTR_OPERATION_SDPA_BWD_ODESC, o) ||
            sd_set_desc(pl, *op, CUDNN_ATTR_OPERATION_SDPA_BWD_STATSDESC, st) ||
            sd_set_desc(pl, *op, CUDNN_ATTR_OPERATION_SDPA_BWD_SCALEDESC, sc) ||
            sd_set_desc(pl, *op, CUDNN_ATTR_OPERATION_SDPA_BWD_DODDESC, dO) ||
            sd_set_desc(pl, *op, CUDNN_ATTR_OPERATION_SDPA_BWD_DQDESC, dQ) ||
            sd_set_desc(pl, *op, CUDNN_ATTR_OPERATION_SDPA_BWD_DKDESC, dK) ||
            sd_set_desc(pl, *op, CUDNN_ATTR_OPERATION_SDPA_BWD_DVDESC, dV))
            return -1;
    }
    SD(cudnnBackendFinalize(*op));
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
        cudnnBackendDescriptor_t heur, cfg[SDPA_CONFIGS];
        int64_t n = 0;
        if (sd_new(pl, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur) ||
            sd_set_desc(pl, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph))
            return -1;
        SD(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1,
                                    &modes[m]));
        if (cudnnBackendFinalize(heur) != CUDNN_STATUS_SUCCESS)
            continue;
        for (int i = 0; i < SDPA_CONFIGS; i++)
            SD(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg[i]));
        cudnnStatus_t st = cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, SDPA_CONFIGS,
                                                    &n, cfg);
        int found = -1;
        for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < n && i < SDPA_CONFIGS && found < 0; i++) {
            cudnnBackendDescriptor_t plan;
            if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan) !=
                CUDNN_STATUS_SUCCESS)
                break;
            int64_t ws = 0, nws = 0;
            cudnnStatus_t e = cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE,
                                                       CUDNN_TYPE_HANDLE, 1, &sd_dnn);
            if (e == CUDNN_STATUS_SUCCESS)
                e = cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg[i]);
            if (e == CUDNN_STATUS_SUCCESS)
                e = cudnnBackendFinalize(plan);
            if (e == CUDNN_STATUS_SUCCESS)
                e = cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                             CUDNN_TYPE_INT64, 1, &nws, &ws);
            if (e == CUDNN_STATUS_SUCCESS && ws <= SDPA_WS_CAP) {
                pl->plan = plan;
                pl->ws = ws;
                found = i;
            } else {
                snprintf(last, sizeof last, "engine config %d of %lld: %s", i, (long long)n,
                         e != CUDNN_STATUS_SUCCESS ? cudnnGetErrorString(e)
                                                   : "workspace above 1 GiB");
                cudnnBackendDestroyDescriptor(plan);
            }
        }
        for (int i = 0; i < SDPA_CONFIGS; i++)
            cudnnBackendDestroyDescriptor(cfg[i]);
        if (found >= 0) {
            pl->desc[pl->ndesc++] = pl->plan; /* room: SDPA_MAX_DESC counts it */
            return 0;
        }
    }
    snprintf(pl->why, sizeof pl->why, "%s", last);
    return -1;
}

/* Build pl's graph and plan: 0, or -1 with pl->why. */
static int sd_build(sdpa_plan *pl)
{
    cudnnBackendDescriptor_t op, graph;
    if (sd_operation(pl, &op) || sd_new(pl, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &graph))
        return -1;
    SD(cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1,
                                &sd_dnn));
    SD(cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
                                CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op));
    SD(cudnnBackendFinalize(graph));
    return sd_plan(pl, graph);
}

static void sd_plan_free(sdpa_plan *pl)
{
    for (int i = pl->ndesc - 1; i >= 0; i--)
        cudnnBackendDestroyDescriptor(pl->desc[i]);
    free(pl);
}

/* The plan of a problem: cached, else built (and logged) now. */
static sdpa_plan *sd_plan_of(int fwd, int dt, int64_t B, int64_t H, int64_t T, int64_t d,
                             const char *opname)
{
    for (int i = 0; i < nplans; i++) {
        sdpa_plan *p = plans[i];
        if (p->fwd == fwd && p->dt == dt && p->B == B && p->H == H && p->T == T && p->d == d)
            return p;
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
    const char *force = getenv("MATRIX_ENGINE_SDPA");
    if (force && !strcmp(force, "kernel"))
        snprintf(pl->why, sizeof pl->why, "MATRIX_ENGINE_SDPA=kernel");
    else if (cudnnGetVersion() < 91301)
        snprintf(pl->why, sizeof pl->why, "cuDNN %zu has no unified SDPA operation (9.13.1+)",
                 cudnnGetVersion());
    else
        pl->ok = sd_build(pl) == 0;
    if (!pl->ok) { /* keep the reason, drop what was made */
        for (int i = pl->ndesc - 1; i >= 0; i--)
            cudnnBackendDestroyDescriptor(pl->desc[i]);
        pl->ndesc = 0;
        pl->plan = NULL;
    }
    fprintf(stderr,
            "matrix-engine: cuda: attention %s '%s' (B %lld, H %lld, T %lld, d %lld, %s): %s%s\n",
            fwd ? "forward" : "backward", opname, (long long)B, (long long)H, (long long)T,
            (long long)d, dt == DT_BF16 ? "bf16" : "f16",
            pl->ok ? "cuDNN fused SDPA (flash attention)" : "the engine's own kernel: ",
            pl->ok ? "" : pl->why);
    if (pl->ok)
        fprintf(stderr, "matrix-engine: cuda: attention %s: cuDNN plan workspace %lld bytes\n",
                fwd ? "forward" : "backward", (long long)pl->ws);
    return pl;
}

/* The op's variant pack (its tensors, cu.ws): made at its first run. */
static void sd_vpack(graph *g, op *o, sdpa_op *so)
{
    int64_t uid[10];
    void *ptr[10];
    int n = 0;
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
    ptr[n++] = &so->scale;
    void *ws = cu.ws;
    if (so->pl->ws > (int64_t)cu.ws_bytes)
        cu_fail(__FILE__, __LINE__, "attention", "workspace smaller than prepared");
    cudnnCheck(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &so->vpack));
    cudnnCheck(cudnnBackendSetAttribute(so->vpack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                        CUDNN_TYPE_INT64, n, uid));
    cudnnCheck(cudnnBackendSetAttribute(so->vpack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                        CUDNN_TYPE_VOID_PTR, n, ptr));
    cudnnCheck(cudnnBackendSetAttribute(so->vpack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                        CUDNN_TYPE_VOID_PTR, 1, &ws));
    cudnnCheck(cudnnBackendFinalize(so->vpack));
}

/* 1 when op o of g can be given to cuDNN: flash form, 16-bit tensors of one
 * type, and for the backward every gradient written, none accumulated. */
static int sd_eligible(const graph *g, const op *o)
{
    int fwd = o->type == OP_ATTENTION;
    int lse = fwd ? o->out[1] : o->in[4];
    if (lse < 0 || g->t[lse].ndim != 3 || g->t[lse].dtype != DT_F32)
        return 0;
    int dt = CU_DT(g, o->in[fwd ? 0 : 1]);
    if (dt != DT_F16 && dt != DT_BF16)
        return 0;
    if (fwd)
        return o->out[2] < 0 && CU_DT(g, o->in[1]) == dt && CU_DT(g, o->in[2]) == dt &&
               CU_DT(g, o->out[0]) == dt;
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

int cu_sdpa_prepare(graph *g, int nrun)
{
    memset(&sd, 0, sizeof sd);
    for (int i = 0; i < nrun; i++) {
        op *o = &g->ops[i];
        if (o->type != OP_ATTENTION && o->type != OP_ATTENTION_BWD)
            continue;
        int fwd = o->type == OP_ATTENTION;
        sd.prepared = 1;
#ifdef HAVE_CUDNN
        if (sd_eligible(g, o)) {
            if (!sd_dnn) {
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
            sdpa_plan *pl = sd_plan_of(fwd, CU_DT(g, o->in[fwd ? 0 : 1]), lt->shape[0], H,
                                       lt->shape[2], C / H, o->name);
            if (pl->ok) {
                sdpa_op *so = (sdpa_op *)calloc(1, sizeof *so);
                if (!so)
                    cu_fail(__FILE__, __LINE__, "calloc", "out of host memory");
                so->pl = pl;
                so->scale = 1.0f / sqrtf((float)(C / H));
                cu.priv[i] = so;
                if ((size_t)pl->ws > cu.ws_need)
                    cu.ws_need = (size_t)pl->ws;
                if (fwd)
                    sd.fwd_cudnn++;
                else
                    sd.bwd_cudnn++;
                continue;
            }
        }
#endif
        if (fwd)
            sd.fwd_kernel++;
        else
            sd.bwd_kernel++;
    }
    if (sd.prepared)
        snprintf(sd.info, sizeof sd.info,
                 "sdpa_cudnn_fwd=%d\nsdpa_kernel_fwd=%d\nsdpa_cudnn_bwd=%d\nsdpa_kernel_bwd=%d\n"
                 "cudnn_version=%zu\n",
                 sd.fwd_cudnn, sd.fwd_kernel, sd.bwd_cudnn, sd.bwd_kernel,
#ifdef HAVE_CUDNN
                 cudnnGetVersion()
#else
                 (size_t)0
#endif
        );
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
