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
 * cuBLASLt's own where it computes the same thing and there is no residual:
 * BIAS, RELU, RELU_BIAS (no pre-activation output), GELU, GELU_BIAS and,
 * when the pre-activation is kept for the backward, GELU_AUX(_BIAS) (its
 * leading dimension N must be a multiple of 8). cuBLASLt's GELU is the tanh
 * approximation, so only ACT_GELU_TANH goes there; BERT's exact (erf) GELU
 * (ACT_GELU) would change the model's function and stays in cu_epilogue
 * (the log says so). The bias vector must have D's type: with an f16 / bf16
 * y the op keeps a shadow of the f32 bias in that type (refilled each run
 * when trained, as PyTorch's autocast casts it). Else cu_epilogue after the
 * product.
 * Backward: db (the column sums of dy) comes out of the dw product with
 * CUBLASLT_EPILOGUE_BGRADB (the reduction of B = dy over k = M, f32 like
 * dw) when db is not accumulated; else cu_channel_sum. (DGELU_BGRAD, which
 * would fold the GELU backward into the next linear's dx product, is not
 * used: it is the tanh form too, and no model has a tanh GELU.)
 *
 * Descriptors and algorithms are made once per op in prepare. Algorithm:
 * up to 16 heuristic results (workspace up to 32 MiB), tried in the
 * heuristics' order, or with cu.autotune in the order of their median time
 * (5 timed runs each after a warm-up, on the real inputs into a scratch
 * output; the heuristics' first choice is kept unless another is more than
 * 2% faster). Every algorithm is verified before it is used: it runs once on
 * random operands and its output is compared with the product computed from
 * the layer's definition (gemm_check.cu, gemm_view.h); one that is wrong is
 * skipped, with a line on stderr. The check runs with beta 0 (into NaN
 * bytes) and, without an epilogue, with beta 1 (accumulating dx / dw). The
 * wrong dw / dx of the H100 run of 2026-11-22 were ours: the backward
 * products were built with an epilogue attribute of 0 (a memset), which is
 * not CUBLASLT_EPILOGUE_DEFAULT (1); the check would have rejected those
 * algorithms. When no algorithm is right, gemm_check.cu's own kernel
 * computes the product.
 * Choices are cached per problem for the process (BERT repeats its shapes
 * per layer), and verified ones in the persistent plan cache (plans.cu) for
 * later runs on the same GPU and libraries: a cached algorithm is used only
 * after cublasLtMatmulAlgoCheck and the verification accept it here
 * (gemm_from_plan), else it is chosen again.
 *
 * MATRIX_ENGINE_GEMM=kernel: no cuBLASLt at all (no handle, no descriptors):
 * every product on gemm_check.cu's own kernel and every epilogue in
 * cu_epilogue / cu_channel_sum, so that the checks run the path cuBLASLt
 * otherwise leaves only to products it gets wrong (and tests/cudasim/ runs
 * the linear layers on the CPU simulator); recorded as gemm_engine=kernel. */
#include "cuda.h"
#include "../knobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEMM_WS_CAP ((size_t)32 << 20)
#define GEMM_CANDIDATES 16
#define GEMM_REPS 5
#define GEMM_KEEP_HEURISTIC 0.02 /* autotune: another algorithm must be this much faster */

enum { ST_A, ST_X, NST }; /* staging: x (fwd) or dy (bwd); bwd x */

/* One product D = alpha op(A) op(B) + beta C, C = D. */
typedef struct lt_mm {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, d;
    cublasLtMatmulAlgo_t algo;
    size_t ws;
    int epi;      /* cuBLASLt applies the epilogue the spec asked for */
    int fallback; /* no cuBLASLt algorithm was right: gemm_check.cu's kernel */
    gemm_view v;  /* the product from its definition (P = B, Q = A) */
    int abt, cdt; /* storage types of A / B and of C = D (DT_*) */
} lt_mm;

typedef struct gemm_priv {
    int64_t M, N, K;
    int ab;          /* storage type of A and B: cu.act_dt */
    lt_mm mm[2];     /* forward: [0] y; backward: [0] dx, [1] dw */
    void *wsh;       /* w in type ab, or NULL: the f32 parameter */
    size_t wsh_bytes;
    int wsh_own, wsh_refill;
    void *bsh;       /* forward, cuBLASLt bias epilogue with a 16-bit y: the bias in y's type */
    size_t bsh_bytes;
    int bsh_refill;
    int lt_db;       /* backward: db comes from the dw product (BGRADB) */
    void *st[NST];
    size_t st_bytes[NST];
    int st_shared;   /* backward: st[ST_X] is the forward's staged x */
} gemm_priv;

/* What prepare needs to build and choose one product. */
typedef struct mm_spec {
    cudaDataType_t ab, cd; /* A / B type; C / D type */
    int abt, cdt;          /* the same as DT_* */
    int ta, tb;            /* 1: op = transpose */
    uint64_t ar, ac, br, bc, dr, dc; /* as stored, column-major */
    int64_t lda, ldb, ldd;
    gemm_view v;           /* the same product from its definition */
    const char *what;      /* "y", "dx" or "dw": for the log */
    const void *A, *B, *D; /* run-time pointers: alignment; A and B are read by the timing */
    cublasLtEpilogue_t epi; /* CUBLASLT_EPILOGUE_DEFAULT: none */
    const float *bias;      /* f32 bias: the verification's reference */
    const void *bias_lt;    /* what cuBLASLt reads: bias, or its shadow in D's type */
    void *aux;              /* GELU_AUX: the pre-activation output, D's type and layout */
    float *bgrad;           /* BGRADB: the bias gradient output (f32, dc elements) */
} mm_spec;

/* Algorithm choice of one problem, cached for the process. */
typedef struct gemm_key {
    int ab, cd, compute, ta, tb, epi, autotune;
    uint32_t align[5]; /* A, B, C = D, bias (or bias gradient), aux */
    uint64_t ar, ac, br, bc, dr, dc;
    int64_t lda, ldb, ldd;
} gemm_key;

typedef struct gemm_choice {
    gemm_key key;
    int ok, fallback;
    cublasLtMatmulAlgo_t algo;
    size_t ws;
} gemm_choice;

static gemm_choice *cache;
static int ncache, capcache;

static struct {
    int prepared;
    int mode; /* MATRIX_ENGINE_GEMM: 0 auto (cuBLASLt, verified), 1 kernel (the own kernel only) */
    int lt_epilogue, kernel_epilogue;
    int gelu_lt, gelu_erf_kernel, bgrad_lt; /* ops: tanh GELU by cuBLASLt, erf GELU by the
                                             * kernel epilogue, db by BGRADB */
    int verified, rejected, refused, fallback; /* distinct problems / algorithms */
    char info[512];
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
    const void *bp = epi == CUBLASLT_EPILOGUE_BGRADB ? (const void *)s->bgrad : s->bias_lt;
    k.align[3] = epi != CUBLASLT_EPILOGUE_DEFAULT && bp ? gemm_align(bp) : 0;
    k.align[4] = epi != CUBLASLT_EPILOGUE_DEFAULT && s->aux ? gemm_align(s->aux) : 0;
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

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Median time in ms of candidate algo (GEMM_REPS runs, each timed alone,
 * after one warm-up) on the real A and B into the scratch d; < 0 when
 * cuBLASLt refuses it. */
static float gemm_time_one(const lt_mm *m, const mm_spec *s,
                           const cublasLtMatmulHeuristicResult_t *r, void *d, void *ws,
                           cudaEvent_t *ev)
{
    const float one = 1.0f, zero = 0.0f;
    float t[GEMM_REPS];
    for (int rep = 0; rep <= GEMM_REPS; rep++) {
        if (rep > 0)
            cudaCheck(cudaEventRecord(ev[2 * (rep - 1)], cu.s));
        cublasStatus_t st = cublasLtMatmul(cu.lt, m->desc, &one, s->A, m->a, s->B, m->b, &zero,
                                           d, m->d, d, m->d, &r->algo, ws, r->workspaceSize, cu.s);
        if (st != CUBLAS_STATUS_SUCCESS) {
            (void)cudaGetLastError(); /* a refused candidate leaves nothing behind */
            cudaCheck(cudaStreamSynchronize(cu.s));
            return -1.0f;
        }
        if (rep > 0)
            cudaCheck(cudaEventRecord(ev[2 * (rep - 1) + 1], cu.s));
    }
    cudaCheck(cudaStreamSynchronize(cu.s));
    for (int rep = 0; rep < GEMM_REPS; rep++)
        cudaCheck(cudaEventElapsedTime(&t[rep], ev[2 * rep], ev[2 * rep + 1]));
    qsort(t, GEMM_REPS, sizeof t[0], cmp_float);
    return t[GEMM_REPS / 2];
}

/* Median time of each usable candidate into ms[i] (< 0: not usable);
 * 0, or -1 when out of memory. */
static int gemm_time(const lt_mm *m, const mm_spec *s, const cublasLtMatmulHeuristicResult_t *r,
                     int n, float *ms)
{
    size_t wsb = 0, dh = 0, wh = 0;
    void *d = NULL, *ws = NULL;
    for (int i = 0; i < n; i++)
        if (r[i].state == CUBLAS_STATUS_SUCCESS && r[i].workspaceSize > wsb)
            wsb = r[i].workspaceSize;
    if (cu_buffer(&d, &dh, (size_t)s->ldd * s->dc * dt_bytes(s->cd)) ||
        cu_buffer(&ws, &wh, wsb)) {
        cu_free(d, dh);
        return -1;
    }
    cudaEvent_t ev[2 * GEMM_REPS];
    for (int k = 0; k < 2 * GEMM_REPS; k++)
        cudaCheck(cudaEventCreate(&ev[k]));
    for (int i = 0; i < n; i++)
        ms[i] = r[i].state == CUBLAS_STATUS_SUCCESS ? gemm_time_one(m, s, &r[i], d, ws, ev) : -1.0f;
    for (int k = 0; k < 2 * GEMM_REPS; k++)
        cudaCheck(cudaEventDestroy(ev[k]));
    cu_free(d, dh);
    cu_free(ws, wh);
    return 0;
}

/* Tolerance of the verification, relative to the sum of |terms|: an error
 * of the algorithm or of the layouts is of the order of that sum. The
 * reference reads the same (rounded) inputs, so what is left is the
 * accumulation order and the rounding of the output. */
static float gemm_rtol(const mm_spec *s)
{
    return cu_verify_rtol(s->cdt, gemm_compute(s->ab) == CUBLAS_COMPUTE_32F_FAST_TF32);
}

/* The epilogue's activation and whether it adds the bias / keeps the
 * pre-activation / writes a bias gradient. */
static int epi_act(cublasLtEpilogue_t e)
{
    return e == CUBLASLT_EPILOGUE_RELU || e == CUBLASLT_EPILOGUE_RELU_BIAS ? ACT_RELU
           : e == CUBLASLT_EPILOGUE_GELU || e == CUBLASLT_EPILOGUE_GELU_BIAS ||
                   e == CUBLASLT_EPILOGUE_GELU_AUX || e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS
               ? ACT_GELU_TANH
               : ACT_NONE;
}
static int epi_bias(cublasLtEpilogue_t e)
{
    return e == CUBLASLT_EPILOGUE_BIAS || e == CUBLASLT_EPILOGUE_RELU_BIAS ||
           e == CUBLASLT_EPILOGUE_GELU_BIAS || e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
}
static int epi_aux(cublasLtEpilogue_t e)
{
    return e == CUBLASLT_EPILOGUE_GELU_AUX || e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
}

/* Point the descriptor's epilogue buffers: bias (or the bias gradient for
 * BGRADB) and the GELU aux (leading dimension ldd). */
static void mm_point(lt_mm *m, const mm_spec *s, cublasLtEpilogue_t epi, const void *bias,
                     void *aux)
{
    if (epi_bias(epi) || epi == CUBLASLT_EPILOGUE_BGRADB)
        cublasCheck(cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                   &bias, sizeof bias));
    if (epi_aux(epi)) {
        int64_t ld = s->ldd;
        cublasCheck(cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER,
                                                   &aux, sizeof aux));
        cublasCheck(cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD,
                                                   &ld, sizeof ld));
    }
}

/* One run of candidate r into D (= C, beta) on the scratch A and B,
 * checked against the definition (+ beta * C0) and the epilogue (whose
 * aux / bias-gradient outputs the descriptor points at aux / bgrad); 1
 * right, 0 wrong, -2 refused by cuBLASLt, -1 out of memory. */
static int gemm_verify_once(const lt_mm *m, const mm_spec *s,
                            const cublasLtMatmulHeuristicResult_t *r, cublasLtEpilogue_t epi,
                            const void *A, const void *B, void *D, const void *C0, float beta,
                            void *aux, float *bgrad, void *ws, gemm_verdict *vd)
{
    const float one = 1.0f;
    if (cublasLtMatmul(cu.lt, m->desc, &one, A, m->a, B, m->b, &beta, D, m->d, D, m->d, &r->algo,
                       ws, r->workspaceSize, cu.s) != CUBLAS_STATUS_SUCCESS) {
        (void)cudaGetLastError();
        cudaCheck(cudaStreamSynchronize(cu.s));
        vd->refused = 1;
        return -2;
    }
    gemm_epi_ref e;
    e.bias = epi_bias(epi) ? s->bias : NULL;
    e.act = epi_act(epi);
    e.aux = epi_aux(epi) ? aux : NULL;
    e.bgrad = epi == CUBLASLT_EPILOGUE_BGRADB ? bgrad : NULL;
    long bad = cu_gemm_verify(&s->v, B, s->abt, A, s->abt, D, s->cdt, C0, beta, &e, gemm_rtol(s),
                              vd);
    return bad < 0 ? -1 : bad == 0;
}

/* Run candidate r on random A and B (scratch, never the engine's tensors)
 * and compare its output with the definition: with beta 0 into a D of NaN
 * bytes (an element it fails to write fails), and for the products that
 * accumulate (no epilogue, or BGRADB: dx / dw) also with beta 1 onto a
 * random D. The epilogue's outputs (GELU aux, bias gradient) go to NaN
 * scratch buffers and are checked too; the descriptor points at the real
 * ones again afterwards. 1 right, 0 wrong or refused (vd->refused), -1 out
 * of memory. *vd: what the comparison found (the failing pass, else the
 * beta 0 one). */
static int gemm_verify(lt_mm *m, const mm_spec *s, const cublasLtMatmulHeuristicResult_t *r,
                       cublasLtEpilogue_t epi, gemm_verdict *vd)
{
    size_t na = (size_t)s->lda * s->ac, nb = (size_t)s->ldb * s->bc, nd = (size_t)s->ldd * s->dc;
    void *A = NULL, *B = NULL, *D = NULL, *C0 = NULL, *ws = NULL, *aux = NULL, *bg = NULL;
    size_t ha = 0, hb = 0, hd = 0, hc = 0, hw = 0, hx = 0, hg = 0;
    int rc = -1;
    memset(vd, 0, sizeof *vd);
    if (cu_buffer(&A, &ha, na * dt_bytes(s->ab)) || cu_buffer(&B, &hb, nb * dt_bytes(s->ab)) ||
        cu_buffer(&D, &hd, nd * dt_bytes(s->cd)) || cu_buffer(&ws, &hw, r->workspaceSize) ||
        (epi_aux(epi) && cu_buffer(&aux, &hx, nd * dt_bytes(s->cd))) ||
        (epi == CUBLASLT_EPILOGUE_BGRADB && cu_buffer(&bg, &hg, (size_t)s->dc * sizeof(float))))
        goto out;
    cu_fill_uniform(A, s->abt, na, 0xa11ce);
    cu_fill_uniform(B, s->abt, nb, 0xb0b);
    cudaCheck(cudaMemsetAsync(D, 0xff, nd * dt_bytes(s->cd), cu.s)); /* NaN: unwritten fails */
    if (aux)
        cudaCheck(cudaMemsetAsync(aux, 0xff, hx, cu.s));
    if (bg)
        cudaCheck(cudaMemsetAsync(bg, 0xff, hg, cu.s));
    mm_point(m, s, epi, epi == CUBLASLT_EPILOGUE_BGRADB ? bg : s->bias_lt, aux);
    rc = gemm_verify_once(m, s, r, epi, A, B, D, NULL, 0.0f, aux, (float *)bg, ws, vd);
    if (rc == 1 && (epi == CUBLASLT_EPILOGUE_DEFAULT || epi == CUBLASLT_EPILOGUE_BGRADB)) {
        gemm_verdict v1;
        memset(&v1, 0, sizeof v1);
        if (cu_buffer(&C0, &hc, nd * dt_bytes(s->cd))) {
            rc = -1;
            goto out;
        }
        cu_fill_uniform(D, s->cdt, nd, 0xc0ffee);
        if (bg)
            cudaCheck(cudaMemsetAsync(bg, 0xff, hg, cu.s));
        cudaCheck(cudaMemcpyAsync(C0, D, nd * dt_bytes(s->cd), cudaMemcpyDeviceToDevice, cu.s));
        rc = gemm_verify_once(m, s, r, epi, A, B, D, C0, 1.0f, aux, (float *)bg, ws, &v1);
        if (rc != 1)
            *vd = v1;
    }
    if (rc == -2)
        rc = 0;
out:
    cudaCheck(cudaStreamSynchronize(cu.s));
    mm_point(m, s, epi, epi == CUBLASLT_EPILOGUE_BGRADB ? (const void *)s->bgrad : s->bias_lt,
             s->aux);
    cu_free(A, ha);
    cu_free(B, hb);
    cu_free(D, hd);
    cu_free(C0, hc);
    cu_free(ws, hw);
    cu_free(aux, hx);
    cu_free(bg, hg);
    return rc;
}

static const char *dt_name(int dt) { return dt == DT_F16 ? "f16" : dt == DT_BF16 ? "bf16" : "f32"; }

static const char *epi_name(cublasLtEpilogue_t e)
{
    switch (e) {
    case CUBLASLT_EPILOGUE_BIAS: return ", lt epilogue BIAS";
    case CUBLASLT_EPILOGUE_RELU: return ", lt epilogue RELU";
    case CUBLASLT_EPILOGUE_RELU_BIAS: return ", lt epilogue RELU_BIAS";
    case CUBLASLT_EPILOGUE_GELU: return ", lt epilogue GELU (tanh)";
    case CUBLASLT_EPILOGUE_GELU_BIAS: return ", lt epilogue GELU_BIAS (tanh)";
    case CUBLASLT_EPILOGUE_GELU_AUX: return ", lt epilogue GELU_AUX (tanh)";
    case CUBLASLT_EPILOGUE_GELU_AUX_BIAS: return ", lt epilogue GELU_AUX_BIAS (tanh)";
    case CUBLASLT_EPILOGUE_BGRADB: return ", lt epilogue BGRADB";
    default: return "";
    }
}

/* One line on stderr (the point's log) per distinct product: what runs it. */
static void gemm_log(const mm_spec *s, cublasLtEpilogue_t epi, const char *how)
{
    fprintf(stderr,
            "matrix-engine: cuda: gemm %s (%lld x %lld, inner %lld, %s -> %s%s%s): %s\n",
            s->what, (long long)s->v.R, (long long)s->v.C, (long long)s->v.T, dt_name(s->abt),
            dt_name(s->cdt), gemm_compute(s->ab) == CUBLAS_COMPUTE_32F_FAST_TF32 ? ", tf32" : "",
            epi_name(epi), how);
}

/* ---- the persistent plan cache (plans.cu) --------------------------------------------------- */

/* The plan cache's key of a product: every field of k, readable, the
 * workspace cap, and a digest of k (a field added to gemm_key changes the
 * key). */
static void gemm_plan_key(const gemm_key *k, char *s, size_t n)
{
    snprintf(s, n,
             "gemm1 ab%d cd%d compute%d t%d%d epi%d %s align%u,%u,%u,%u,%u a%llux%llu ld%lld "
             "b%llux%llu ld%lld d%llux%llu ld%lld cap%zuM #%016llx",
             k->ab, k->cd, k->compute, k->ta, k->tb, k->epi, k->autotune ? "timed" : "heuristic",
             k->align[0], k->align[1], k->align[2], k->align[3], k->align[4], (unsigned long long)k->ar,
             (unsigned long long)k->ac, (long long)k->lda, (unsigned long long)k->br,
             (unsigned long long)k->bc, (long long)k->ldb, (unsigned long long)k->dr,
             (unsigned long long)k->dc, (long long)k->ldd, GEMM_WS_CAP >> 20,
             (unsigned long long)cu_digest(k, sizeof *k));
}

static void gemm_plan_put(const char *key, const gemm_choice *ch)
{
    char v[2 * sizeof ch->algo + 64];
    cu_hex_put(&ch->algo, sizeof ch->algo, v + 5);
    memcpy(v, "algo=", 5);
    snprintf(v + 5 + 2 * sizeof ch->algo, sizeof v - 5 - 2 * sizeof ch->algo, " ws=%zu", ch->ws);
    (void)plancache_put(cu.plans, key, v);
}

/* The choice of key from the plan cache, checked before it is used: its
 * algorithm's bytes parse, cublasLtMatmulAlgoCheck accepts them for this
 * product's descriptors within the workspace cap, and it passes the same
 * numerical verification as a searched one (gemm_verify). 1 used (into m
 * and *ch, remembered, logged); 0 none, or rejected (searched again); -1
 * out of device memory. */
static int gemm_from_plan(lt_mm *m, const mm_spec *s, cublasLtEpilogue_t epi, const char *key,
                          gemm_choice *ch)
{
    const char *v = plancache_get(cu.plans, key);
    if (!v)
        return 0;
    cublasLtMatmulHeuristicResult_t r;
    cublasLtMatmulAlgo_t algo;
    gemm_verdict vd;
    size_t ws = 0, hex = 2 * sizeof algo;
    int used = 0;
    const char *why = NULL;
    memset(&r, 0, sizeof r);
    memset(&vd, 0, sizeof vd);
    if (strncmp(v, "algo=", 5) != 0 || strlen(v) < 5 + hex || cu_hex_get(v + 5, &algo, sizeof algo) ||
        sscanf(v + 5 + hex, " ws=%zu%n", &ws, &used) != 1 || v[5 + hex + used])
        why = "malformed";
    else if (cublasLtMatmulAlgoCheck(cu.lt, m->desc, m->a, m->b, m->d, m->d, &algo, &r) !=
             CUBLAS_STATUS_SUCCESS)
        why = "cublasLtMatmulAlgoCheck: not valid for this product";
    else if (r.workspaceSize > GEMM_WS_CAP || ws > GEMM_WS_CAP)
        why = "its workspace exceeds the cap";
    else {
        r.algo = algo;
        r.state = CUBLAS_STATUS_SUCCESS;
        if (ws > r.workspaceSize)
            r.workspaceSize = ws;
        int ok = gemm_verify(m, s, &r, epi, &vd);
        if (ok < 0)
            return -1;
        if (!ok)
            why = vd.refused ? "cuBLASLt refuses the call" : "WRONG in the verification";
    }
    if (why) {
        plancache_reject(cu.plans, key, why);
        return 0;
    }
    ch->ok = 1;
    ch->fallback = 0;
    ch->algo = algo;
    ch->ws = r.workspaceSize;
    m->algo = algo;
    m->ws = ch->ws;
    m->fallback = 0;
    gm.verified++;
    gemm_remember(ch);
    char how[200];
    snprintf(how, sizeof how,
             "cuBLASLt algorithm from the plan cache, verified on %ld elements (worst error %.3g "
             "of the tolerance)",
             vd.checked, vd.worst);
    gemm_log(s, epi, how);
    return 1;
}

/* Algorithm of m for its current epilogue: 1 found (a verified cuBLASLt
 * algorithm, or with fallback the own kernel when none is right), 0 none,
 * -1 out of memory. Not split (about 130 lines): one decision in order (caches, cuBLASLt
 * heuristics, autotune order by median time, verify each candidate against
 * the reference, keep the heuristics' first unless clearly slower, record
 * and log), whose steps share the candidate arrays r, ms and order and the
 * verdicts; this CUDA code cannot be run on the machines it is maintained
 * on (no GPU), so it is kept as verified on one. */
static int gemm_choose(lt_mm *m, const mm_spec *s, cublasLtEpilogue_t epi, int fallback)
{
    gemm_choice ch;
    memset(&ch, 0, sizeof ch);
    ch.key = gemm_make_key(s, epi);
    gemm_choice *e = gemm_cached(&ch.key);
    if (e) {
        m->algo = e->algo;
        m->ws = e->ws;
        m->fallback = e->fallback;
        return e->ok;
    }
    char pkey[384]; /* then the plan cache: checked against this product */
    gemm_plan_key(&ch.key, pkey, sizeof pkey);
    int pr = gemm_from_plan(m, s, epi, pkey, &ch);
    if (pr)
        return pr;
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
    int n = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(cu.lt, m->desc, m->a, m->b, m->d, m->d, pref,
                                                       GEMM_CANDIDATES, r, &n);
    cublasCheck(cublasLtMatmulPreferenceDestroy(pref));
    if (st != CUBLAS_STATUS_SUCCESS) /* NOT_SUPPORTED: no algorithm for this configuration */
        n = 0;
    /* the order to try them in: the heuristics', or by median time */
    int order[GEMM_CANDIDATES], no = 0;
    float ms[GEMM_CANDIDATES];
    for (int i = 0; i < GEMM_CANDIDATES; i++)
        ms[i] = -1.0f;
    for (int i = 0; i < n; i++)
        if (r[i].state == CUBLAS_STATUS_SUCCESS && r[i].workspaceSize <= cap)
            order[no++] = i;
    if (cu.autotune && no > 1) {
        if (gemm_time(m, s, r, n, ms))
            return -1;
        int k = 0;
        for (int i = 0; i < no; i++) /* refused by the timing: dropped */
            if (ms[order[i]] >= 0.0f)
                order[k++] = order[i];
        no = k;
        for (int i = 1; i < no; i++) /* by time, stable */
            for (int j = i; j > 0 && ms[order[j]] < ms[order[j - 1]]; j--) {
                int t = order[j];
                order[j] = order[j - 1];
                order[j - 1] = t;
            }
    }
    int pick = -1, first_ok = -1;
    gemm_verdict vd, keep;
    memset(&keep, 0, sizeof keep);
    for (int i = 0; i < no && pick < 0; i++) {
        int v = gemm_verify(m, s, &r[order[i]], epi, &vd);
        if (v < 0)
            return -1;
        if (v) {
            pick = order[i];
            keep = vd;
            break;
        }
        char why[256];
        if (vd.refused) {
            gm.refused++;
            snprintf(why, sizeof why, "cuBLASLt algorithm %d of %d refused the call: skipped",
                     order[i], n);
        } else {
            gm.rejected++;
            snprintf(why, sizeof why,
                     "cuBLASLt algorithm %d of %d is WRONG (%ld of %ld elements off; worst %g, "
                     "expected %g): skipped",
                     order[i], n, vd.bad, vd.checked, vd.worst_dev, vd.worst_ref);
        }
        gemm_log(s, epi, why);
    }
    /* autotune: the heuristics' first choice stays unless clearly slower */
    if (pick > 0 && cu.autotune && r[0].state == CUBLAS_STATUS_SUCCESS && ms[0] >= 0.0f &&
        ms[0] <= ms[pick] * (1.0f + GEMM_KEEP_HEURISTIC)) {
        int v = gemm_verify(m, s, &r[0], epi, &vd);
        if (v < 0)
            return -1;
        if (v) {
            first_ok = 0;
            keep = vd;
        }
    }
    if (first_ok == 0)
        pick = 0;
    char how[256];
    if (pick >= 0) {
        ch.ok = 1;
        ch.algo = r[pick].algo;
        ch.ws = r[pick].workspaceSize;
        m->algo = ch.algo;
        m->ws = ch.ws;
        m->fallback = 0;
        gm.verified++;
        if (cu.autotune && ms[pick] >= 0.0f)
            snprintf(how, sizeof how,
                     "cuBLASLt algorithm %d of %d, %.4f ms median (heuristics' first: %.4f ms), "
                     "verified on %ld elements (worst error %.3g of the tolerance)",
                     pick, n, ms[pick], ms[0], keep.checked, keep.worst);
        else
            snprintf(how, sizeof how,
                     "cuBLASLt algorithm %d of %d (heuristics), verified on %ld elements (worst "
                     "error %.3g of the tolerance)",
                     pick, n, keep.checked, keep.worst);
        gemm_log(s, epi, how);
    } else if (fallback) {
        ch.ok = 1;
        ch.fallback = 1;
        m->fallback = 1;
        m->ws = 0;
        gm.fallback++;
        gemm_log(s, epi, n ? "no cuBLASLt algorithm is right: the engine's own kernel"
                           : "cuBLASLt has no algorithm: the engine's own kernel");
    }
    ch.fallback = m->fallback && ch.ok;
    gemm_remember(&ch);
    if (ch.ok && !ch.fallback) /* the own kernel is chosen afresh: not kept */
        gemm_plan_put(pkey, &ch);
    return ch.ok;
}

/* The epilogue of m's descriptor and its buffers (s's real ones); DEFAULT
 * clears the buffer pointers. */
static void mm_set_epilogue(lt_mm *m, const mm_spec *s, cublasLtEpilogue_t epi)
{
    uint32_t e = (uint32_t)epi;
    cublasCheck(cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e));
    if (epi == CUBLASLT_EPILOGUE_DEFAULT) {
        const void *none = NULL;
        cublasCheck(cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                   &none, sizeof none));
        cublasCheck(cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER,
                                                   &none, sizeof none));
        return;
    }
    mm_point(m, s, epi, epi == CUBLASLT_EPILOGUE_BGRADB ? (const void *)s->bgrad : s->bias_lt,
             s->aux);
}

/* 1 when gemm.cu knows how to check epilogue e (cu_gemm_verify). */
static int epi_known(cublasLtEpilogue_t e)
{
    return e == CUBLASLT_EPILOGUE_DEFAULT || e == CUBLASLT_EPILOGUE_BGRADB || epi_bias(e) ||
           epi_act(e) != ACT_NONE;
}

/* Descriptors and algorithm of product s into m: 0, -1 out of memory. The
 * cuBLASLt epilogue is dropped when no verified algorithm has it; without
 * any verified algorithm the product runs on the engine's own kernel. */
static int mm_init(lt_mm *m, const mm_spec *s)
{
    int32_t ta = s->ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = s->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    m->v = s->v;
    m->abt = s->abt;
    m->cdt = s->cdt;
    if (gm.mode == 1) { /* MATRIX_ENGINE_GEMM=kernel: no descriptors, no epilogue */
        m->fallback = 1;
        m->epi = 0;
        m->ws = 0;
        gm.fallback++;
        gemm_log(s, CUBLASLT_EPILOGUE_DEFAULT, "the engine's own kernel (MATRIX_ENGINE_GEMM=kernel)");
        return 0;
    }
    cublasCheck(cublasLtMatmulDescCreate(&m->desc, gemm_compute(s->ab), CUDA_R_32F));
    cublasCheck(cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    cublasCheck(cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    cublasCheck(cublasLtMatrixLayoutCreate(&m->a, s->ab, s->ar, s->ac, s->lda));
    cublasCheck(cublasLtMatrixLayoutCreate(&m->b, s->ab, s->br, s->bc, s->ldb));
    cublasCheck(cublasLtMatrixLayoutCreate(&m->d, s->cd, s->dr, s->dc, s->ldd));
    int r;
    if (!epi_known(s->epi) || (epi_bias(s->epi) && (!s->bias || !s->bias_lt)) ||
        (epi_aux(s->epi) && !s->aux) || (s->epi == CUBLASLT_EPILOGUE_BGRADB && !s->bgrad))
        cu_fail(__FILE__, __LINE__, "mm_init", "a cuBLASLt epilogue gemm.cu does not use (BUG)");
    if (s->epi != CUBLASLT_EPILOGUE_DEFAULT) {
        mm_set_epilogue(m, s, s->epi);
        if ((r = gemm_choose(m, s, s->epi, 0)) != 0) {
            m->epi = r > 0;
            return r > 0 ? 0 : -1;
        }
        mm_set_epilogue(m, s, CUBLASLT_EPILOGUE_DEFAULT);
    }
    r = gemm_choose(m, s, CUBLASLT_EPILOGUE_DEFAULT, 1);
    return r > 0 ? 0 : -1;
}

static void mm_run(const lt_mm *m, const void *A, const void *B, float beta, void *D)
{
    const float one = 1.0f;
    if (m->fallback) { /* P = B, Q = A (gemm_view.h) */
        cu_gemm_fallback(&m->v, B, m->abt, A, m->abt, D, m->cdt, beta);
        return;
    }
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

/* The spec of product `which` of p with A / B / C = D types, from gemm_view.h. */
static void gemm_spec_of(mm_spec *s, int which, const gemm_priv *p, int cdt)
{
    static const char *const what[] = {"y", "dx", "dw"};
    gemm_spec g;
    memset(s, 0, sizeof *s);
    gemm_describe(which, p->M, p->N, p->K, &s->v, &g);
    /* no epilogue: CUBLASLT_EPILOGUE_DEFAULT is 1, not the 0 the memset
     * leaves (an epilogue of 0 made dw / dx wrong on the H100, 2026-11-22) */
    s->epi = CUBLASLT_EPILOGUE_DEFAULT;
    s->abt = p->ab;
    s->cdt = cdt;
    s->ab = cu_blas_type(p->ab);
    s->cd = cu_blas_type(cdt);
    s->ta = g.ta; s->tb = g.tb;
    s->ar = (uint64_t)g.ar; s->ac = (uint64_t)g.ac; s->lda = g.lda;
    s->br = (uint64_t)g.br; s->bc = (uint64_t)g.bc; s->ldb = g.ldb;
    s->dr = (uint64_t)g.dr; s->dc = (uint64_t)g.dc; s->ldd = g.ldd;
    s->what = what[which];
}

/* ---- forward --------------------------------------------------------------------------- */

static void gemm_fwd(graph *g, op *o)
{
    gemm_priv *p = (gemm_priv *)cu.priv[o - g->ops];
    const void *x = gemm_in(g, o->in[0], p, ST_A);
    const void *w = gemm_weights(g, o->in[1], p);
    int y = o->out[0];
    if (p->bsh && p->bsh_refill) /* the bias in y's type for cuBLASLt's epilogue */
        cu_cast(CU_PTR(g, o->in[2]), DT_F32, p->bsh, CU_DT(g, y), (size_t)p->N, 0);
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

/* The cuBLASLt epilogue that computes this op's own epilogue, or
 * CUBLASLT_EPILOGUE_DEFAULT (then cu_epilogue runs after the product). */
static cublasLtEpilogue_t gemm_lt_epilogue(const graph *g, const op *o, const gemm_priv *p)
{
    int bias = o->in[2] >= 0, pre = o->out[1] >= 0;
    if (o->in[3] >= 0) /* a residual: no cuBLASLt epilogue adds a matrix */
        return CUBLASLT_EPILOGUE_DEFAULT;
    (void)g;
    switch (o->act) {
    case ACT_NONE:
        return !pre && bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    case ACT_RELU: /* RELU_AUX keeps a bit mask, not the pre-activation */
        return pre ? CUBLASLT_EPILOGUE_DEFAULT
                   : bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case ACT_GELU_TANH: /* cuBLASLt's GELU is this form */
        if (!pre)
            return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
        if (p->N % 8) /* the aux leading dimension must be a multiple of 8 */
            return CUBLASLT_EPILOGUE_DEFAULT;
        return bias ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX;
    default: /* ACT_GELU (erf) and ACT_TANH: not what cuBLASLt computes */
        return CUBLASLT_EPILOGUE_DEFAULT;
    }
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
    gemm_spec_of(&s, GEMM_FWD, p, CU_DT(g, y)); /* y^T = op(w^T stored) x^T */
    s.A = p->wsh ? p->wsh : CU_PTR(g, w);
    s.B = p->st[ST_A] ? p->st[ST_A] : CU_PTR(g, x);
    s.D = CU_PTR(g, y);
    s.epi = gemm_lt_epilogue(g, o, p);
    s.bias = b >= 0 ? (const float *)CU_PTR(g, b) : NULL;
    s.bias_lt = s.bias;
    s.aux = epi_aux(s.epi) ? CU_PTR(g, pre) : NULL;
    if (epi_bias(s.epi) && CU_DT(g, y) != DT_F32) { /* bias in D's type: a shadow */
        if (cu_buffer(&p->bsh, &p->bsh_bytes, (size_t)p->N * graph_dtype_size(CU_DT(g, y))))
            return -1;
        p->bsh_refill = trains && g->t[b].kind != TK_CONST;
        cu_cast(CU_PTR(g, b), DT_F32, p->bsh, CU_DT(g, y), (size_t)p->N, 0);
        s.bias_lt = p->bsh;
    }
    if ((r = mm_init(&p->mm[0], &s)))
        return r;
    if (p->bsh && !p->mm[0].epi) { /* no verified algorithm with the epilogue */
        cu_free(p->bsh, p->bsh_bytes);
        p->bsh = NULL;
        p->bsh_bytes = 0;
        p->bsh_refill = 0;
    }
    if (p->mm[0].epi)
        gm.lt_epilogue++;
    else if (b >= 0 || res >= 0 || pre >= 0 || o->act != ACT_NONE)
        gm.kernel_epilogue++;
    if (o->act == ACT_GELU_TANH && p->mm[0].epi)
        gm.gelu_lt++;
    if (o->act == ACT_GELU) {
        if (!gm.gelu_erf_kernel)
            fprintf(stderr, "matrix-engine: cuda: linear '%s' (and every linear+gelu like it): "
                    "exact (erf) GELU in the engine's epilogue kernel; cuBLASLt's GELU epilogue "
                    "is the tanh approximation, a different function\n", o->name);
        gm.gelu_erf_kernel++;
    }
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
    if (dwt >= 0) /* dw^T = x^T dy (and db with BGRADB) */
        mm_run(&p->mm[1], x, dy, CU_ACC(o, 1) ? 1.0f : 0.0f, CU_PTR(g, dwt));
    if (dbt >= 0 && !p->lt_db)
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
        gemm_spec_of(&s, GEMM_DX, p, CU_DT(g, dxt)); /* dx^T = w^T dy^T */
        s.A = p->wsh ? p->wsh : CU_PTR(g, w);
        s.B = dyp;
        s.D = CU_PTR(g, dxt);
        if ((r = mm_init(&p->mm[0], &s)))
            return r;
    }
    if (dwt >= 0) {
        gemm_spec_of(&s, GEMM_DW, p, DT_F32); /* dw^T = x^T op(dy^T stored) */
        s.A = p->st[ST_X] ? p->st[ST_X] : CU_PTR(g, x);
        s.B = dyp;
        s.D = CU_PTR(g, dwt);
        if (dbt >= 0 && !CU_ACC(o, 2)) { /* db = the sums of B over k: BGRADB writes it */
            s.epi = CUBLASLT_EPILOGUE_BGRADB;
            s.bgrad = (float *)CU_PTR(g, dbt);
        }
        if ((r = mm_init(&p->mm[1], &s)))
            return r;
        p->lt_db = s.epi == CUBLASLT_EPILOGUE_BGRADB && p->mm[1].epi;
        gm.bgrad_lt += p->lt_db;
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
    char err[256];
    memset(&gm, 0, sizeof gm);
    for (int i = 0; i < nrun; i++)
        any |= g->ops[i].type == OP_LINEAR || g->ops[i].type == OP_LINEAR_BWD;
    if (!any)
        return 0;
    if ((gm.mode = knob_get(KNOB_GEMM, err, sizeof err)) < 0) {
        /* refused by the engine before it ran; said here to a test that prepares */
        fprintf(stderr, "matrix-engine: cuda: %s\n", err);
        return -3;
    }
    cublasStatus_t st = gm.mode == 1 ? CUBLAS_STATUS_SUCCESS : cublasLtCreate(&cu.lt);
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
             "gemm_engine=%s\ngemm_algo_search=%s\ngemm_lt_epilogue=%d\ngemm_kernel_epilogue=%d\n"
             "gemm_gelu_tanh_lt=%d\ngemm_gelu_erf_kernel=%d\ngemm_bgrad_lt=%d\n"
             "gemm_verified=%d\ngemm_rejected=%d\ngemm_refused=%d\ngemm_fallback=%d\n"
             "gemm_cublaslt_version=%zu\n",
             knob_value(KNOB_GEMM, gm.mode), cu.autotune ? "timed" : "heuristic", gm.lt_epilogue,
             gm.kernel_epilogue,
             gm.gelu_lt, gm.gelu_erf_kernel, gm.bgrad_lt,
             gm.verified, gm.rejected, gm.refused, gm.fallback, cublasLtGetVersion());
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
        cu_free(p->bsh, p->bsh_bytes);
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
