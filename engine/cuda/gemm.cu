/* gemm.cu - OP_LINEAR and OP_LINEAR_BWD on cuBLASLt.
 *
 * The engine's matrices are row-major: x (M, K), w (N, K) as PyTorch stores
 * it, y and dy (M, N). cuBLASLt is column-major, and a row-major (R, C)
 * matrix with leading dimension C is the same bytes as a column-major
 * (C x R) matrix, its transpose. So each product is computed transposed:
 *
 *   y = x w^T     as  y^T (N x M, ld N) = op(A) B  with A = w stored K x N
 *                 (ld K) and TRANSA = T (op(A) = w, N x K), B = x stored
 *                 K x M (ld K) = x^T, TRANSB = N; m = N, n = M, k = K.
 *   dx = dy w     as  dx^T (K x M, ld K) = A B  with A = w stored K x N
 *                 (ld K) = w^T, TRANSA = N, B = dy stored N x M (ld N) =
 *                 dy^T, TRANSB = N; m = K, n = M, k = N.
 *   dw = dy^T x   as  dw^T (K x N, ld K) = A op(B)  with A = x stored K x M
 *                 (ld K) = x^T, TRANSA = N, B = dy stored N x M (ld N),
 *                 TRANSB = T (op(B) = dy, M x N); m = K, n = N, k = M.
 *
 * Types: A and B in the activation type cu.act_dt (x, dy and a shadow of w
 * cast from the f32 master weights; an operand stored in another type is
 * cast into a private staging buffer), C = D in the output's own type: y and
 * dx in theirs, dw always f32 (16F / 16BF inputs with 32F output and
 * CUBLAS_COMPUTE_32F is one of cuBLASLt's supported combinations). Compute
 * CUBLAS_COMPUTE_32F (fp32: no TF32; fp16 / bf16), CUBLAS_COMPUTE_32F_FAST_TF32
 * for tf32; scale type 32F. dx and dw accumulate with beta = 1 when the op's
 * acc bit asks for it; db is the column sums of dy (cu_channel_sum).
 *
 * Epilogue (v = y + bias + res; pre = v; y = act(v), as engine/cpu):
 * cuBLASLt's own BIAS / RELU_BIAS / RELU when y is f32 (its bias vector must
 * have D's type and ours is f32), there is no residual and no pre-activation
 * output; else cu_epilogue after the product.
 *
 * Descriptors and algorithms are made once per op in prepare. Algorithm:
 * the first heuristic result (workspace up to 32 MiB), or with cu.autotune
 * up to 16 candidates timed on the real inputs into a scratch output (beta 0,
 * no accumulation target touched), the fastest kept. Choices are cached per
 * problem for the process (BERT repeats its shapes per layer). */
#include "cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEMM_WS_CAP ((size_t)32 << 20)
#define GEMM_CANDIDATES 16
#define GEMM_REPS 5

enum { ST_A, ST_X, NST }; /* staging: x (fwd) or dy (bwd); bwd x */

/* One product D = alpha op(A) op(B) + beta C, C = D. */
typedef struct lt_mm {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, d;
    cublasLtMatmulAlgo_t algo;
    size_t ws;
    int epi; /* cuBLASLt applies the bias / ReLU */
} lt_mm;

typedef struct gemm_priv {
    int64_t M, N, K;
    int ab;          /* storage type of A and B: cu.act_dt */
    lt_mm mm[2];     /* forward: [0] y; backward: [0] dx, [1] dw */
    void *wsh;       /* w in type ab, or NULL: the f32 parameter */
    size_t wsh_bytes;
    int wsh_own, wsh_refill;
    void *st[NST];
    size_t st_bytes[NST];
    int st_shared;   /* backward: st[ST_X] is the forward's staged x */
} gemm_priv;

/* What prepare needs to build and choose one product. */
typedef struct mm_spec {
    cudaDataType_t ab, cd; /* A / B type; C / D type */
    int ta, tb;            /* 1: op = transpose */
    uint64_t ar, ac, br, bc, dr, dc; /* as stored, column-major */
    int64_t lda, ldb, ldd;
    const void *A, *B, *D; /* run-time pointers: alignment; A and B are read by the timing */
    cublasLtEpilogue_t epi; /* CUBLASLT_EPILOGUE_DEFAULT: none */
    const float *bias;
} mm_spec;

/* Algorithm choice of one problem, cached for the process. */
typedef struct gemm_key {
    int ab, cd, compute, ta, tb, epi, autotune;
    uint32_t align[5]; /* A, B, C = D, bias, (unused) */
    uint64_t ar, ac, br, bc, dr, dc;
    int64_t lda, ldb, ldd;
} gemm_key;

typedef struct gemm_choice {
    gemm_key key;
    int ok;
    cublasLtMatmulAlgo_t algo;
    size_t ws;
} gemm_choice;

static gemm_choice *cache;
static int ncache, capcache;

static struct {
    int prepared;
    int lt_epilogue, kernel_epilogue;
    char info[256];
} gm;

/* ---- helpers -------------------------------------------------------------------- */

static int gemm_err(const op *o, const char *why)
{
    fprintf(stderr, "matrix-engine: cuda: linear '%s': %s\n", o->name, why);
    return -2;
}


/* Largest power of two up to 256 dividing the address. */
static uint32_t gemm_align(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    uint32_t al = 256;
    while (al > 1 && (a & (al - 1)))
        al >>= 1;
    return al;
}

static int same_as(const graph *g, int a, int b)
{
    const tensor *x = &g->t[a], *y = &g->t[b];
    return graph_numel(x) == graph_numel(y) && x->dtype == y->dtype;
}

/* Staging buffer in slot k for tensor t when its storage type is not ab. */
static int gemm_stage(graph *g, gemm_priv *p, int k, int t)
{
    if (CU_DT(g, t) == p->ab)
        return 0;
    return cu_buffer(&p->st[k], &p->st_bytes[k], cu_numel(g, t) * graph_dtype_size(p->ab));
}

/* Tensor t in type ab: itself, or cast into the staging buffer. */
static const void *gemm_in(graph *g, int t, const gemm_priv *p, int k)
{
    if (!p->st[k])
        return CU_PTR(g, t);
    cu_cast(CU_PTR(g, t), CU_DT(g, t), p->st[k], p->ab, cu_numel(g, t), 0);
    return p->st[k];
}

static const void *gemm_weights(graph *g, int w, gemm_priv *p)
{
    if (!p->wsh)
        return CU_PTR(g, w);
    if (p->wsh_refill)
        cu_cast(CU_PTR(g, w), DT_F32, p->wsh, p->ab, (size_t)(p->N * p->K), 0);
    return p->wsh;
}

/* Own shadow of w in type ab, filled now; refilled per run when trained. */
static int gemm_own_shadow(graph *g, int w, gemm_priv *p, int trains)
{
    size_t n = (size_t)(p->N * p->K);
    if (cu_buffer(&p->wsh, &p->wsh_bytes, n * graph_dtype_size(p->ab)))
        return -1;
    p->wsh_own = 1;
    p->wsh_refill = trains && g->t[w].kind != TK_CONST;
    cu_cast(CU_PTR(g, w), DT_F32, p->wsh, p->ab, n, 0);
    return 0;
}

/* ---- one product: descriptors and algorithm ---------------------------------------- */

static cublasComputeType_t gemm_compute(cudaDataType_t ab)
{
    return ab == CUDA_R_32F && cu.pt.precision == PREC_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                            : CUBLAS_COMPUTE_32F;
}

static size_t dt_bytes(cudaDataType_t t) { return t == CUDA_R_32F ? 4 : 2; }

static gemm_key gemm_make_key(const mm_spec *s, cublasLtEpilogue_t epi)
{
    gemm_key k;
    memset(&k, 0, sizeof k);
    k.ab = (int)s->ab; k.cd = (int)s->cd; k.compute = (int)gemm_compute(s->ab);
    k.ta = s->ta; k.tb = s->tb; k.epi = (int)epi; k.autotune = cu.autotune;
    k.align[0] = gemm_align(s->A); k.align[1] = gemm_align(s->B); k.align[2] = gemm_align(s->D);
    k.align[3] = epi != CUBLASLT_EPILOGUE_DEFAULT && s->bias ? gemm_align(s->bias) : 0;
    k.ar = s->ar; k.ac = s->ac; k.br = s->br; k.bc = s->bc; k.dr = s->dr; k.dc = s->dc;
    k.lda = s->lda; k.ldb = s->ldb; k.ldd = s->ldd;
    return k;
}

static gemm_choice *gemm_cached(const gemm_key *k)
{
    for (int i = 0; i < ncache; i++)
        if (!memcmp(&cache[i].key, k, sizeof *k))
            return &cache[i];
    return NULL;
}

static void gemm_remember(const gemm_choice *ch)
{
    if (gemm_cached(&ch->key))
        return;
    if (ncache == capcache) {
        int cap = capcache ? 2 * capcache : 64;
        gemm_choice *n = (gemm_choice *)realloc(cache, cap * sizeof *n);
        if (!n)
            return; /* not cached: chosen again next time */
        cache = n;
        capcache = cap;
    }
    cache[ncache++] = *ch;
}

/* Time each usable candidate on the real A and B into a scratch D (beta 0);
 * the index of the fastest, -1 when none ran; -2 when out of memory. */
static int gemm_time(const lt_mm *m, const mm_spec *s, const cublasLtMatmulHeuristicResult_t *r,
                     int n)
{
    const float one = 1.0f, zero = 0.0f;
    size_t wsb = 0, dh = 0, wh = 0;
    void *d = NULL, *ws = NULL;
    for (int i = 0; i < n; i++)
        if (r[i].state == CUBLAS_STATUS_SUCCESS && r[i].workspaceSize > wsb)
            wsb = r[i].workspaceSize;
    if (cu_buffer(&d, &dh, (size_t)s->ldd * s->dc * dt_bytes(s->cd)) ||
        cu_buffer(&ws, &wh, wsb)) {
        cu_free(d, dh);
        return -2;
    }
    cudaEvent_t e0, e1;
    cudaCheck(cudaEventCreate(&e0));
    cudaCheck(cudaEventCreate(&e1));
    int best = -1;
    float best_ms = 0.0f;
    for (int i = 0; i < n; i++) {
        if (r[i].state != CUBLAS_STATUS_SUCCESS)
            continue;
        cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
        for (int rep = 0; rep <= GEMM_REPS && st == CUBLAS_STATUS_SUCCESS; rep++) {
            if (rep == 1) /* rep 0 warms up */
                cudaCheck(cudaEventRecord(e0, cu.s));
            st = cublasLtMatmul(cu.lt, m->desc, &one, s->A, m->a, s->B, m->b, &zero, d, m->d, d,
                                m->d, &r[i].algo, ws, r[i].workspaceSize, cu.s);
        }
        cudaCheck(cudaEventRecord(e1, cu.s));
        cudaCheck(cudaEventSynchronize(e1));
        float ms = 0.0f;
        if (st != CUBLAS_STATUS_SUCCESS) {
            (void)cudaGetLastError(); /* a refused candidate leaves nothing behind */
            continue;
        }
        cudaCheck(cudaEventElapsedTime(&ms, e0, e1));
        if (best < 0 || ms < best_ms) {
            best = i;
            best_ms = ms;
        }
    }
    cudaCheck(cudaEventDestroy(e0));
    cudaCheck(cudaEventDestroy(e1));
    cu_free(d, dh);
    cu_free(ws, wh);
    return best;
}

/* Algorithm of m for its current epilogue: 1 found, 0 none, -1 out of memory. */
static int gemm_choose(lt_mm *m, const mm_spec *s, cublasLtEpilogue_t epi)
{
    gemm_choice ch;
    memset(&ch, 0, sizeof ch);
    ch.key = gemm_make_key(s, epi);
    gemm_choice *e = gemm_cached(&ch.key);
    if (e) {
        m->algo = e->algo;
        m->ws = e->ws;
        return e->ok;
    }
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulHeuristicResult_t r[GEMM_CANDIDATES];
    uint64_t cap = GEMM_WS_CAP;
    uint32_t al[4] = {ch.key.align[0], ch.key.align[1], ch.key.align[2], ch.key.align[2]};
    static const cublasLtMatmulPreferenceAttributes_t al_attr[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    cublasCheck(cublasLtMatmulPreferenceCreate(&pref));
    cublasCheck(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                     &cap, sizeof cap));
    for (int k = 0; k < 4; k++)
        cublasCheck(cublasLtMatmulPreferenceSetAttribute(pref, al_attr[k], &al[k], sizeof al[k]));
    int n = 0, want = cu.autotune ? GEMM_CANDIDATES : 1;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(cu.lt, m->desc, m->a, m->b, m->d, m->d, pref,
                                                       want, r, &n);
    cublasCheck(cublasLtMatmulPreferenceDestroy(pref));
    if (st != CUBLAS_STATUS_SUCCESS) /* NOT_SUPPORTED: no algorithm for this configuration */
        n = 0;
    int pick = -1;
    if (cu.autotune && n > 0) {
        pick = gemm_time(m, s, r, n);
        if (pick == -2)
            return -1;
    } else
        for (int i = 0; i < n && pick < 0; i++)
            if (r[i].state == CUBLAS_STATUS_SUCCESS && r[i].workspaceSize <= cap)
                pick = i;
    if (pick >= 0) {
        ch.ok = 1;
        ch.algo = r[pick].algo;
        ch.ws = r[pick].workspaceSize;
        m->algo = ch.algo;
        m->ws = ch.ws;
    }
    gemm_remember(&ch);
    return ch.ok;
}

static void mm_set_epilogue(lt_mm *m, cublasLtEpilogue_t epi, const float *bias)
{
    uint32_t e = (uint32_t)epi;
    cublasCheck(cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e));
    if (epi == CUBLASLT_EPILOGUE_BIAS || epi == CUBLASLT_EPILOGUE_RELU_BIAS)
        cublasCheck(cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                   &bias, sizeof bias));
}

/* Descriptors and algorithm of product s into m: 0, -1 out of memory, -2
 * no algorithm. The cuBLASLt epilogue is dropped when no algorithm has it. */
static int mm_init(const op *o, lt_mm *m, const mm_spec *s)
{
    int32_t ta = s->ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = s->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasCheck(cublasLtMatmulDescCreate(&m->desc, gemm_compute(s->ab), CUDA_R_32F));
    cublasCheck(cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    cublasCheck(cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    cublasCheck(cublasLtMatrixLayoutCreate(&m->a, s->ab, s->ar, s->ac, s->lda));
    cublasCheck(cublasLtMatrixLayoutCreate(&m->b, s->ab, s->br, s->bc, s->ldb));
    cublasCheck(cublasLtMatrixLayoutCreate(&m->d, s->cd, s->dr, s->dc, s->ldd));
    int r;
    if (s->epi != CUBLASLT_EPILOGUE_DEFAULT) {
        mm_set_epilogue(m, s->epi, s->bias);
        if ((r = gemm_choose(m, s, s->epi)) != 0) {
            m->epi = r > 0;
            return r > 0 ? 0 : -1;
        }
        mm_set_epilogue(m, CUBLASLT_EPILOGUE_DEFAULT, NULL);
    }
    if ((r = gemm_choose(m, s, CUBLASLT_EPILOGUE_DEFAULT)) > 0)
        return 0;
    return r < 0 ? -1 : gemm_err(o, "cuBLASLt has no algorithm for this product");
}

static void mm_run(const lt_mm *m, const void *A, const void *B, float beta, void *D)
{
    const float one = 1.0f;
    if (m->ws > cu.ws_bytes)
        cu_fail(__FILE__, __LINE__, "linear", "workspace smaller than prepared");
    cublasCheck(cublasLtMatmul(cu.lt, m->desc, &one, A, m->a, B, m->b, &beta, D, m->d, D, m->d,
                               &m->algo, cu.ws, m->ws, cu.s));
}

static void mm_release(lt_mm *m)
{
    if (m->a)
        cublasCheck(cublasLtMatrixLayoutDestroy(m->a));
    if (m->b)
        cublasCheck(cublasLtMatrixLayoutDestroy(m->b));
    if (m->d)
        cublasCheck(cublasLtMatrixLayoutDestroy(m->d));
    if (m->desc)
        cublasCheck(cublasLtMatmulDescDestroy(m->desc));
    memset(m, 0, sizeof *m);
}

/* ---- forward --------------------------------------------------------------------------- */

static void gemm_fwd(graph *g, op *o)
{
    gemm_priv *p = (gemm_priv *)cu.priv[o - g->ops];
    const void *x = gemm_in(g, o->in[0], p, ST_A);
    const void *w = gemm_weights(g, o->in[1], p);
    int y = o->out[0];
    /* y^T = w x^T, see the header */
    mm_run(&p->mm[0], w, x, 0.0f, CU_PTR(g, y));
    if (p->mm[0].epi)
        return;
    if (o->in[2] >= 0 || o->in[3] >= 0 || o->act != ACT_NONE || o->out[1] >= 0)
        cu_epilogue(CU_PTR(g, y), CU_DT(g, y),
                    o->in[2] >= 0 ? (const float *)CU_PTR(g, o->in[2]) : NULL,
                    o->in[3] >= 0 ? CU_PTR(g, o->in[3]) : NULL, o->act,
                    o->out[1] >= 0 ? CU_PTR(g, o->out[1]) : NULL, (size_t)p->M, (size_t)p->N, 1,
                    1);
}

/* The cuBLASLt epilogue for this op, or CUBLASLT_EPILOGUE_DEFAULT. */
static cublasLtEpilogue_t gemm_lt_epilogue(const graph *g, const op *o)
{
    if (CU_DT(g, o->out[0]) != DT_F32 || o->in[3] >= 0 || o->out[1] >= 0)
        return CUBLASLT_EPILOGUE_DEFAULT;
    if (o->act == ACT_RELU)
        return o->in[2] >= 0 ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    if (o->act == ACT_NONE && o->in[2] >= 0)
        return CUBLASLT_EPILOGUE_BIAS;
    return CUBLASLT_EPILOGUE_DEFAULT;
}

static int gemm_prepare_fwd(graph *g, op *o, gemm_priv *p, int trains)
{
    int x = o->in[0], w = o->in[1], b = o->in[2], res = o->in[3], y = o->out[0], pre = o->out[1];
    const tensor *wt = &g->t[w];
    if (wt->ndim != 2 || wt->dtype != DT_F32 || wt->shape[0] < 1 || wt->shape[1] < 1)
        return gemm_err(o, "expects an f32 (N, K) weight");
    p->N = wt->shape[0];
    p->K = wt->shape[1];
    p->M = graph_numel(&g->t[x]) / p->K;
    if (p->M < 1 || p->M * p->K != graph_numel(&g->t[x]) || graph_numel(&g->t[y]) != p->M * p->N)
        return gemm_err(o, "x, w and y do not make a product");
    if (!cu_float_type(CU_DT(g, x)) || (CU_DT(g, y) != p->ab && CU_DT(g, y) != DT_F32))
        return gemm_err(o, "unsupported storage types");
    if ((b >= 0 && (CU_DT(g, b) != DT_F32 || (int64_t)cu_numel(g, b) != p->N)) ||
        (res >= 0 && !same_as(g, res, y)) || (pre >= 0 && !same_as(g, pre, y)))
        return gemm_err(o, "bias, residual or pre-activation do not match y");
    int r;
    if ((r = gemm_stage(g, p, ST_A, x)) ||
        (p->ab != DT_F32 && (r = gemm_own_shadow(g, w, p, trains))))
        return r;
    mm_spec s;
    memset(&s, 0, sizeof s);
    s.ab = cu_blas_type(p->ab);
    s.cd = cu_blas_type(CU_DT(g, y));
    s.ta = 1; s.tb = 0;                        /* y^T = op(w^T stored) x^T */
    s.ar = p->K; s.ac = p->N; s.lda = p->K;    /* w: K x N col-major */
    s.br = p->K; s.bc = p->M; s.ldb = p->K;    /* x: K x M col-major */
    s.dr = p->N; s.dc = p->M; s.ldd = p->N;    /* y: N x M col-major */
    s.A = p->wsh ? p->wsh : CU_PTR(g, w);
    s.B = p->st[ST_A] ? p->st[ST_A] : CU_PTR(g, x);
    s.D = CU_PTR(g, y);
    s.epi = gemm_lt_epilogue(g, o);
    s.bias = b >= 0 ? (const float *)CU_PTR(g, b) : NULL;
    if ((r = mm_init(o, &p->mm[0], &s)))
        return r;
    if (p->mm[0].epi)
        gm.lt_epilogue++;
    else if (b >= 0 || res >= 0 || pre >= 0 || o->act != ACT_NONE)
        gm.kernel_epilogue++;
    return 0;
}

/* ---- backward --------------------------------------------------------------------------- */

static void gemm_bwd(graph *g, op *o)
{
    gemm_priv *p = (gemm_priv *)cu.priv[o - g->ops];
    int dxt = o->out[0], dwt = o->out[1], dbt = o->out[2];
    const void *dy = gemm_in(g, o->in[0], p, ST_A);
    const void *x = p->st_shared ? p->st[ST_X] : gemm_in(g, o->in[1], p, ST_X);
    const void *w = dxt >= 0 ? gemm_weights(g, o->in[2], p) : NULL;
    if (dxt >= 0) /* dx^T = w^T dy^T */
        mm_run(&p->mm[0], w, dy, CU_ACC(o, 0) ? 1.0f : 0.0f, CU_PTR(g, dxt));
    if (dwt >= 0) /* dw^T = x^T dy */
        mm_run(&p->mm[1], x, dy, CU_ACC(o, 1) ? 1.0f : 0.0f, CU_PTR(g, dwt));
    if (dbt >= 0)
        cu_channel_sum(CU_PTR(g, o->in[0]), CU_DT(g, o->in[0]), (float *)CU_PTR(g, dbt),
                       CU_ACC(o, 2), (size_t)p->M, (size_t)p->N, 1, 1);
}

/* The forward op of backward o when it is a prepared linear of the same
 * weights, input and types, else NULL. */
static gemm_priv *gemm_forward_of(graph *g, const op *o, const gemm_priv *p)
{
    int f = o->fwd, i = (int)(o - g->ops);
    if (f < 0 || f >= i || g->ops[f].type != OP_LINEAR || g->ops[f].in[1] != o->in[2] ||
        g->ops[f].in[0] != o->in[1] || !cu.priv[f])
        return NULL;
    gemm_priv *fp = (gemm_priv *)cu.priv[f];
    if (fp->ab != p->ab || fp->M != p->M || fp->N != p->N || fp->K != p->K)
        return NULL;
    return fp;
}

static int gemm_prepare_bwd(graph *g, op *o, gemm_priv *p, int trains)
{
    int dy = o->in[0], x = o->in[1], w = o->in[2], dxt = o->out[0], dwt = o->out[1], dbt = o->out[2];
    const tensor *wt = &g->t[w];
    if (wt->ndim != 2 || wt->dtype != DT_F32 || wt->shape[0] < 1 || wt->shape[1] < 1)
        return gemm_err(o, "expects an f32 (N, K) weight");
    p->N = wt->shape[0];
    p->K = wt->shape[1];
    p->M = graph_numel(&g->t[dy]) / p->N;
    if (p->M < 1 || p->M * p->N != graph_numel(&g->t[dy]) || graph_numel(&g->t[x]) != p->M * p->K)
        return gemm_err(o, "dy, x and w do not make a product");
    if (!cu_float_type(CU_DT(g, dy)) || !cu_float_type(CU_DT(g, x)) ||
        (dxt >= 0 && ((CU_DT(g, dxt) != p->ab && CU_DT(g, dxt) != DT_F32) ||
                      cu_numel(g, dxt) != cu_numel(g, x))) ||
        (dwt >= 0 && (CU_DT(g, dwt) != DT_F32 || cu_numel(g, dwt) != cu_numel(g, w))) ||
        (dbt >= 0 && (CU_DT(g, dbt) != DT_F32 || (int64_t)cu_numel(g, dbt) != p->N)))
        return gemm_err(o, "unsupported gradient storage types or shapes");
    gemm_priv *fp = gemm_forward_of(g, o, p);
    int r;
    if ((r = gemm_stage(g, p, ST_A, dy)))
        return r;
    if (dwt >= 0) {
        if (fp && fp->st[ST_A]) {
            p->st[ST_X] = fp->st[ST_A]; /* the forward's staged x, still valid */
            p->st_shared = 1;
        } else if ((r = gemm_stage(g, p, ST_X, x)))
            return r;
    }
    if (dxt >= 0 && p->ab != DT_F32) {
        if (fp && fp->wsh) {
            p->wsh = fp->wsh; /* refilled by the forward of the same step */
            p->wsh_bytes = fp->wsh_bytes;
        } else if ((r = gemm_own_shadow(g, w, p, trains)))
            return r;
    }
    const void *dyp = p->st[ST_A] ? p->st[ST_A] : CU_PTR(g, dy);
    mm_spec s;
    if (dxt >= 0) {
        memset(&s, 0, sizeof s);
        s.ab = cu_blas_type(p->ab);
        s.cd = cu_blas_type(CU_DT(g, dxt));
        s.ta = 0; s.tb = 0;                       /* dx^T = w^T dy^T */
        s.ar = p->K; s.ac = p->N; s.lda = p->K;   /* w: K x N col-major = w^T */
        s.br = p->N; s.bc = p->M; s.ldb = p->N;   /* dy: N x M col-major = dy^T */
        s.dr = p->K; s.dc = p->M; s.ldd = p->K;   /* dx: K x M col-major */
        s.A = p->wsh ? p->wsh : CU_PTR(g, w);
        s.B = dyp;
        s.D = CU_PTR(g, dxt);
        if ((r = mm_init(o, &p->mm[0], &s)))
            return r;
    }
    if (dwt >= 0) {
        memset(&s, 0, sizeof s);
        s.ab = cu_blas_type(p->ab);
        s.cd = CUDA_R_32F;
        s.ta = 0; s.tb = 1;                       /* dw^T = x^T op(dy^T stored) */
        s.ar = p->K; s.ac = p->M; s.lda = p->K;   /* x: K x M col-major = x^T */
        s.br = p->N; s.bc = p->M; s.ldb = p->N;   /* dy: N x M col-major, op = T */
        s.dr = p->K; s.dc = p->N; s.ldd = p->K;   /* dw: K x N col-major */
        s.A = p->st[ST_X] ? p->st[ST_X] : CU_PTR(g, x);
        s.B = dyp;
        s.D = CU_PTR(g, dwt);
        if ((r = mm_init(o, &p->mm[1], &s)))
            return r;
    }
    return 0;
}

/* ---- the file's interface ---------------------------------------------------------------- */

void cu_gemm_register(backend_op_fn *t)
{
    t[OP_LINEAR] = gemm_fwd;
    t[OP_LINEAR_BWD] = gemm_bwd;
}

int cu_gemm_prepare(graph *g, int nrun)
{
    int any = 0, r;
    memset(&gm, 0, sizeof gm);
    for (int i = 0; i < nrun; i++)
        any |= g->ops[i].type == OP_LINEAR || g->ops[i].type == OP_LINEAR_BWD;
    if (!any)
        return 0;
    cublasStatus_t st = cublasLtCreate(&cu.lt);
    if (st != CUBLAS_STATUS_SUCCESS) {
        cu.lt = NULL;
        fprintf(stderr, "matrix-engine: cuda: cublasLtCreate: %s\n", cu_cublas_status(st));
        return -2;
    }
    gm.prepared = 1;
    int trains = cu_plan_trains(g, nrun);
    for (int i = 0; i < nrun; i++) {
        op *o = &g->ops[i];
        if (o->type != OP_LINEAR && o->type != OP_LINEAR_BWD)
            continue;
        gemm_priv *p = (gemm_priv *)calloc(1, sizeof *p);
        if (!p)
            cu_fail(__FILE__, __LINE__, "calloc", "out of host memory");
        cu.priv[i] = p;
        p->ab = cu.act_dt;
        r = o->type == OP_LINEAR ? gemm_prepare_fwd(g, o, p, trains)
                                 : gemm_prepare_bwd(g, o, p, trains);
        if (r)
            return r;
        for (int k = 0; k < 2; k++)
            if (p->mm[k].ws > cu.ws_need)
                cu.ws_need = p->mm[k].ws;
    }
    snprintf(gm.info, sizeof gm.info,
             "gemm_algo_search=%s\ngemm_lt_epilogue=%d\ngemm_kernel_epilogue=%d\n"
             "gemm_cublaslt_version=%zu\n",
             cu.autotune ? "timed" : "heuristic", gm.lt_epilogue, gm.kernel_epilogue,
             cublasLtGetVersion());
    return 0;
}

void cu_gemm_release(graph *g)
{
    for (int i = 0; cu.priv && g && i < cu.nops && i < g->nops; i++) {
        if (g->ops[i].type != OP_LINEAR && g->ops[i].type != OP_LINEAR_BWD)
            continue;
        gemm_priv *p = (gemm_priv *)cu.priv[i];
        if (!p)
            continue;
        mm_release(&p->mm[0]);
        mm_release(&p->mm[1]);
        if (p->wsh_own)
            cu_free(p->wsh, p->wsh_bytes);
        for (int k = 0; k < NST; k++)
            if (!(k == ST_X && p->st_shared))
                cu_free(p->st[k], p->st_bytes[k]);
        free(p);
        cu.priv[i] = NULL;
    }
    if (cu.lt)
        cublasCheck(cublasLtDestroy(cu.lt));
    cu.lt = NULL;
}

const char *cu_gemm_info(void) { return gm.prepared ? gm.info : ""; }
