/* cublaslt.cc - the part of cuBLASLt that engine/cuda/gemm.cu calls,
 * simulated on the CPU with cuBLASLt's documented meaning, so that the
 * linear layers' default path (descriptors, layouts, epilogues, the
 * heuristics' candidates, the verification of each, the plan cache, the
 * fallbacks) runs without a GPU:
 *
 *   D = act(alpha op(A) op(B) + beta C + bias), C = D here, column-major,
 *   op = transpose with TRANSA / TRANSB = CUBLAS_OP_T; the bias runs over
 *   D's rows (m); GELU_AUX(_BIAS) also stores the activation's input in the
 *   aux matrix (D's type, leading dimension EPILOGUE_AUX_LD: a multiple of 8,
 *   at least m); GELU is the tanh form; BGRADB stores the sums of op(B) over
 *   k, one per column of D (n), in D's type. beta 0 reads no C. Inputs in
 *   f32, f16 or bf16, accumulation in f32 (CUBLAS_COMPUTE_32F_FAST_TF32
 *   rounds the inputs to TF32 first), the bias in D's type (the default of
 *   CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE).
 *
 * What a GPU would do wrong with a bad call is made loud: a layout whose
 * sizes do not make a product, a leading dimension under the rows, an
 * unknown attribute or epilogue is refused (INVALID_VALUE / NOT_SUPPORTED,
 * a line on stderr); an operand that reaches past its cudaMalloc
 * allocation, a pointer less aligned than the algorithm was chosen for (the
 * preferences' MIN_ALIGNMENT, the bias and aux pointers as they were at the
 * heuristic), or a workspace smaller than the algorithm's aborts with the
 * call and the operand named (on a GPU: an illegal or misaligned address).
 *
 * The heuristics offer three algorithms: 0 (no workspace, any alignment,
 * k in order), 1 (1 MiB of workspace, k split in two halves) and 2 (4 MiB,
 * k in blocks of 16); 1 and 2 need 16-byte aligned operands. Their results
 * differ in the last bits, as real algorithms' do. Faults for the engine's
 * checks to catch:
 *   CUDASIM_LT_WRONG=ids|all  those algorithms spoil one element of D (the
 *                             last) by more than its sum of |terms|
 *   CUDASIM_LT_WRONG_EPI=1    only when an epilogue is set
 *   CUDASIM_LT_NOALGO=1       the heuristics find no algorithm */
#include "cudasim.h"

#include <cublasLt.h>

#include "simlib.h"

#include <stdio.h>
#include <stdlib.h>

#include <vector>

namespace {

int kind(cudaDataType_t t) { return t == CUDA_R_32F ? simlib::F32 : t == CUDA_R_16F ? simlib::F16 : simlib::BF16; }
float load(const void *p, cudaDataType_t t, size_t i) { return simlib::load(p, kind(t), i); }
void store(void *p, cudaDataType_t t, size_t i, float v) { simlib::store(p, kind(t), i, v); }
using simlib::align_of;
using simlib::operand;
using simlib::tf32;

const uint64_t MAGIC = 0x63756461736c7431ull; /* "cudaslt1" */
const int NALGO = 3;
const size_t ALGO_WS[NALGO] = {0, (size_t)1 << 20, (size_t)4 << 20};

struct sim_desc {
    uint64_t magic;
    cublasComputeType_t compute;
    cudaDataType_t scale;
    int32_t ta, tb;
    uint32_t epi;
    const void *bias;
    void *aux;
    int64_t aux_ld;
};

struct sim_layout {
    uint64_t magic;
    cudaDataType_t type;
    uint64_t rows, cols;
    int64_t ld;
};

struct sim_pref {
    uint64_t magic;
    uint64_t max_ws;
    uint32_t align[4]; /* A, B, C, D */
};

int handle_token;

sim_desc *D_(cublasLtMatmulDesc_t d) { return reinterpret_cast<sim_desc *>(d); }
sim_layout *L_(cublasLtMatrixLayout_t l) { return reinterpret_cast<sim_layout *>(l); }

size_t dt_size(cudaDataType_t t) { return t == CUDA_R_32F ? 4 : 2; }

const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

int algo_wrong(int id, uint32_t epi)
{
    const char *w = env_or("CUDASIM_LT_WRONG", "");
    if (!*w)
        return 0;
    if (env_or("CUDASIM_LT_WRONG_EPI", "0")[0] == '1' && epi == CUBLASLT_EPILOGUE_DEFAULT)
        return 0;
    return simlib::listed(w, id);
}

int epi_known(uint32_t e)
{
    switch (e) {
    case CUBLASLT_EPILOGUE_DEFAULT: case CUBLASLT_EPILOGUE_RELU: case CUBLASLT_EPILOGUE_BIAS:
    case CUBLASLT_EPILOGUE_RELU_BIAS: case CUBLASLT_EPILOGUE_GELU: case CUBLASLT_EPILOGUE_GELU_BIAS:
    case CUBLASLT_EPILOGUE_GELU_AUX: case CUBLASLT_EPILOGUE_GELU_AUX_BIAS: case CUBLASLT_EPILOGUE_BGRADB:
        return 1;
    default:
        return 0;
    }
}
int epi_bias(uint32_t e) { return e != CUBLASLT_EPILOGUE_BGRADB && (e & CUBLASLT_EPILOGUE_BIAS) && e != 1; }
int epi_aux(uint32_t e) { return e == CUBLASLT_EPILOGUE_GELU_AUX || e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS; }
int epi_gelu(uint32_t e) { return e != CUBLASLT_EPILOGUE_BGRADB && (e & CUBLASLT_EPILOGUE_GELU); }
int epi_relu(uint32_t e) { return e == CUBLASLT_EPILOGUE_RELU || e == CUBLASLT_EPILOGUE_RELU_BIAS; }

/* The problem the descriptors make: CUBLAS_STATUS_SUCCESS with m, n, k, or
 * the status and a line on stderr saying why (call: the API function). */
struct problem {
    uint64_t m, n, k;
};

cublasStatus_t refuse(cublasStatus_t st, const char *call, const char *why)
{
    fprintf(stderr, "cudasim: %s: %s\n", call, why);
    return st;
}

cublasStatus_t check_problem(const sim_desc *d, const sim_layout *a, const sim_layout *b,
                             const sim_layout *c, const sim_layout *dd, const char *call, problem *p)
{
    char why[256];
    if (!d || d->magic != MAGIC || !a || a->magic != MAGIC || !b || b->magic != MAGIC || !c ||
        c->magic != MAGIC || !dd || dd->magic != MAGIC)
        return refuse(CUBLAS_STATUS_INVALID_VALUE, call, "a descriptor that no Create made");
    if (d->compute != CUBLAS_COMPUTE_32F && d->compute != CUBLAS_COMPUTE_32F_FAST_TF32)
        return refuse(CUBLAS_STATUS_NOT_SUPPORTED, call, "compute type not simulated (32F, 32F_FAST_TF32 are)");
    if (d->scale != CUDA_R_32F)
        return refuse(CUBLAS_STATUS_NOT_SUPPORTED, call, "scale type other than CUDA_R_32F");
    if (a->type != b->type || (a->type != CUDA_R_32F && a->type != CUDA_R_16F && a->type != CUDA_R_16BF))
        return refuse(CUBLAS_STATUS_NOT_SUPPORTED, call, "A and B must be one type of 32F, 16F, 16BF");
    if (d->compute == CUBLAS_COMPUTE_32F_FAST_TF32 && a->type != CUDA_R_32F)
        return refuse(CUBLAS_STATUS_NOT_SUPPORTED, call, "32F_FAST_TF32 with inputs that are not 32F");
    if (c->type != dd->type || c->rows != dd->rows || c->cols != dd->cols || c->ld != dd->ld)
        return refuse(CUBLAS_STATUS_NOT_SUPPORTED, call, "C's layout differs from D's (not simulated)");
    if (dd->type != a->type && dd->type != CUDA_R_32F)
        return refuse(CUBLAS_STATUS_NOT_SUPPORTED, call, "D's type is neither A's nor 32F");
    uint64_t am = d->ta ? a->cols : a->rows, ak = d->ta ? a->rows : a->cols;
    uint64_t bk = d->tb ? b->cols : b->rows, bn = d->tb ? b->rows : b->cols;
    if (am != dd->rows || bn != dd->cols || ak != bk) {
        snprintf(why, sizeof why,
                 "op(A) is %llu x %llu, op(B) %llu x %llu, D %llu x %llu: not a product",
                 (unsigned long long)am, (unsigned long long)ak, (unsigned long long)bk,
                 (unsigned long long)bn, (unsigned long long)dd->rows, (unsigned long long)dd->cols);
        return refuse(CUBLAS_STATUS_INVALID_VALUE, call, why);
    }
    const sim_layout *ls[3] = {a, b, dd};
    for (int i = 0; i < 3; i++)
        if (ls[i]->ld < (int64_t)ls[i]->rows || ls[i]->rows == 0 || ls[i]->cols == 0) {
            snprintf(why, sizeof why, "%c is %llu x %llu with leading dimension %lld", "ABD"[i],
                     (unsigned long long)ls[i]->rows, (unsigned long long)ls[i]->cols,
                     (long long)ls[i]->ld);
            return refuse(CUBLAS_STATUS_INVALID_VALUE, call, why);
        }
    if (!epi_known(d->epi)) {
        snprintf(why, sizeof why, "epilogue %u not simulated", d->epi);
        return refuse(CUBLAS_STATUS_NOT_SUPPORTED, call, why);
    }
    if (epi_aux(d->epi) && (d->aux_ld % 8 != 0 || d->aux_ld < (int64_t)dd->rows)) {
        snprintf(why, sizeof why, "GELU aux leading dimension %lld: must be a multiple of 8, at least %llu",
                 (long long)d->aux_ld, (unsigned long long)dd->rows);
        return refuse(CUBLAS_STATUS_INVALID_VALUE, call, why);
    }
    p->m = dd->rows;
    p->n = dd->cols;
    p->k = ak;
    return CUBLAS_STATUS_SUCCESS;
}

/* The algorithm's bytes: magic, id, the alignments it was chosen for (A, B,
 * C, D from the preferences; bias and aux from the pointers then). */
void algo_make(cublasLtMatmulAlgo_t *al, int id, const uint32_t a4[4], const sim_desc *d)
{
    memset(al, 0, sizeof *al);
    al->data[0] = MAGIC;
    al->data[1] = (uint64_t)id;
    al->data[2] = a4[0] | (uint64_t)a4[1] << 32;
    al->data[3] = a4[2] | (uint64_t)a4[3] << 32;
    al->data[4] = (d->bias ? align_of(d->bias) : 256) | (uint64_t)(d->aux ? align_of(d->aux) : 256) << 32;
}

/* 1 when algorithm id runs this problem with operands aligned as a4 */
int algo_fits(int id, const uint32_t a4[4], const sim_layout *a, const sim_layout *dd)
{
    for (int i = 0; i < 4; i++)
        if (a4[i] < dt_size(i < 2 ? a->type : dd->type))
            return 0;
    if (id == 0)
        return 1;
    for (int i = 0; i < 4; i++)
        if (a4[i] < 16)
            return 0;
    return 1;
}

size_t extent(const sim_layout *l) { return ((size_t)l->ld * (l->cols - 1) + l->rows) * dt_size(l->type); }

} // namespace

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
    *h = reinterpret_cast<cublasLtHandle_t>(&handle_token);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t) { return CUBLAS_STATUS_SUCCESS; }

size_t cublasLtGetVersion(void) { return CUBLAS_VERSION; }

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute,
                                        cudaDataType_t scale)
{
    sim_desc *s = (sim_desc *)calloc(1, sizeof *s);
    if (!s)
        return CUBLAS_STATUS_ALLOC_FAILED;
    s->magic = MAGIC;
    s->compute = compute;
    s->scale = scale;
    s->epi = CUBLASLT_EPILOGUE_DEFAULT;
    *d = reinterpret_cast<cublasLtMatmulDesc_t>(s);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d)
{
    if (d)
        D_(d)->magic = 0;
    free(d);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr,
                                              const void *buf, size_t n)
{
    sim_desc *s = D_(d);
    const char *call = "cublasLtMatmulDescSetAttribute";
    if (!s || s->magic != MAGIC)
        return refuse(CUBLAS_STATUS_INVALID_VALUE, call, "a descriptor that no Create made");
    switch (attr) {
    case CUBLASLT_MATMUL_DESC_TRANSA:
    case CUBLASLT_MATMUL_DESC_TRANSB: {
        int32_t v;
        if (n != sizeof v)
            return refuse(CUBLAS_STATUS_INVALID_VALUE, call, "TRANSA / TRANSB take an int32_t");
        memcpy(&v, buf, n);
        if (v != CUBLAS_OP_N && v != CUBLAS_OP_T)
            return refuse(CUBLAS_STATUS_NOT_SUPPORTED, call, "op other than N or T");
        (attr == CUBLASLT_MATMUL_DESC_TRANSA ? s->ta : s->tb) = v == CUBLAS_OP_T;
        return CUBLAS_STATUS_SUCCESS;
    }
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
        if (n != sizeof s->epi)
            return refuse(CUBLAS_STATUS_INVALID_VALUE, call, "EPILOGUE takes a uint32_t");
        memcpy(&s->epi, buf, n);
        return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
        if (n != sizeof s->bias)
            return refuse(CUBLAS_STATUS_INVALID_VALUE, call, "BIAS_POINTER takes a pointer");
        memcpy(&s->bias, buf, n);
        return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER:
        if (n != sizeof s->aux)
            return refuse(CUBLAS_STATUS_INVALID_VALUE, call, "EPILOGUE_AUX_POINTER takes a pointer");
        memcpy(&s->aux, buf, n);
        return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD:
        if (n != sizeof s->aux_ld)
            return refuse(CUBLAS_STATUS_INVALID_VALUE, call, "EPILOGUE_AUX_LD takes an int64_t");
        memcpy(&s->aux_ld, buf, n);
        return CUBLAS_STATUS_SUCCESS;
    default: {
        char why[64];
        snprintf(why, sizeof why, "attribute %d not simulated", (int)attr);
        return refuse(CUBLAS_STATUS_NOT_SUPPORTED, call, why);
    }
    }
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld)
{
    sim_layout *s = (sim_layout *)calloc(1, sizeof *s);
    if (!s)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *s = sim_layout{MAGIC, type, rows, cols, ld};
    *l = reinterpret_cast<cublasLtMatrixLayout_t>(s);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l)
{
    if (l)
        L_(l)->magic = 0;
    free(l);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p)
{
    sim_pref *s = (sim_pref *)calloc(1, sizeof *s);
    if (!s)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *s = sim_pref{MAGIC, 0, {256, 256, 256, 256}}; /* cuBLASLt's defaults */
    *p = reinterpret_cast<cublasLtMatmulPreference_t>(s);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p)
{
    free(p);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void *buf, size_t n)
{
    sim_pref *s = reinterpret_cast<sim_pref *>(p);
    const char *call = "cublasLtMatmulPreferenceSetAttribute";
    int k = attr == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES   ? 0
            : attr == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES ? 1
            : attr == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES ? 2
            : attr == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES ? 3
                                                                 : -1;
    if (attr == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES) {
        if (n != sizeof s->max_ws)
            return refuse(CUBLAS_STATUS_INVALID_VALUE, call, "MAX_WORKSPACE_BYTES takes a uint64_t");
        memcpy(&s->max_ws, buf, n);
        return CUBLAS_STATUS_SUCCESS;
    }
    if (k < 0)
        return refuse(CUBLAS_STATUS_NOT_SUPPORTED, call, "attribute not simulated");
    if (n != sizeof s->align[k])
        return refuse(CUBLAS_STATUS_INVALID_VALUE, call, "MIN_ALIGNMENT_*_BYTES takes a uint32_t");
    memcpy(&s->align[k], buf, n);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t d,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t dd,
                                              cublasLtMatmulPreference_t pref, int want,
                                              cublasLtMatmulHeuristicResult_t r[], int *got)
{
    const char *call = "cublasLtMatmulAlgoGetHeuristic";
    problem p;
    *got = 0;
    cublasStatus_t st = check_problem(D_(d), L_(a), L_(b), L_(c), L_(dd), call, &p);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    const sim_pref *pf = reinterpret_cast<const sim_pref *>(pref);
    if (!pf || pf->magic != MAGIC)
        return refuse(CUBLAS_STATUS_INVALID_VALUE, call, "a preference that no Create made");
    if (env_or("CUDASIM_LT_NOALGO", "0")[0] == '1')
        return CUBLAS_STATUS_NOT_SUPPORTED;
    for (int id = 0; id < NALGO && *got < want; id++) {
        if (ALGO_WS[id] > pf->max_ws || !algo_fits(id, pf->align, L_(a), L_(dd)))
            continue;
        cublasLtMatmulHeuristicResult_t *x = &r[*got];
        memset(x, 0, sizeof *x);
        algo_make(&x->algo, id, pf->align, D_(d));
        x->workspaceSize = ALGO_WS[id];
        x->state = CUBLAS_STATUS_SUCCESS;
        x->wavesCount = 1.0f;
        ++*got;
    }
    return *got ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}

cublasStatus_t cublasLtMatmulAlgoCheck(cublasLtHandle_t, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t a,
                                       cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
                                       cublasLtMatrixLayout_t dd, const cublasLtMatmulAlgo_t *algo,
                                       cublasLtMatmulHeuristicResult_t *r)
{
    problem p;
    cublasStatus_t st = check_problem(D_(d), L_(a), L_(b), L_(c), L_(dd), "cublasLtMatmulAlgoCheck", &p);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    uint32_t a4[4] = {(uint32_t)algo->data[2], (uint32_t)(algo->data[2] >> 32), (uint32_t)algo->data[3],
                      (uint32_t)(algo->data[3] >> 32)};
    if (algo->data[0] != MAGIC || algo->data[1] >= (uint64_t)NALGO ||
        !algo_fits((int)algo->data[1], a4, L_(a), L_(dd)))
        return CUBLAS_STATUS_INVALID_VALUE;
    cublasLtMatmulAlgo_t copy = *algo;
    memset(r, 0, sizeof *r);
    r->algo = copy;
    r->workspaceSize = ALGO_WS[algo->data[1]];
    r->state = CUBLAS_STATUS_SUCCESS;
    r->wavesCount = 1.0f;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t desc, const void *alpha, const void *A,
                              cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc,
                              const void *beta, const void *C, cublasLtMatrixLayout_t Cdesc, void *Dp,
                              cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo, void *ws,
                              size_t ws_bytes, cudaStream_t stream)
{
    const char *call = "cublasLtMatmul";
    problem p;
    cublasStatus_t st = check_problem(D_(desc), L_(Adesc), L_(Bdesc), L_(Cdesc), L_(Ddesc), call, &p);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    if (!algo || algo->data[0] != MAGIC || algo->data[1] >= (uint64_t)NALGO)
        return refuse(CUBLAS_STATUS_INVALID_VALUE, call, "an algorithm no heuristic gave");
    const sim_desc d = *D_(desc); /* as it is now: a captured call keeps it */
    const sim_layout la = *L_(Adesc), lb = *L_(Bdesc), ld = *L_(Ddesc);
    int id = (int)algo->data[1];
    if (ws_bytes < ALGO_WS[id]) {
        fprintf(stderr, "cudasim: cublasLtMatmul: algorithm %d needs %zu bytes of workspace, given %zu\n", id,
                ALGO_WS[id], ws_bytes);
        abort();
    }
    uint32_t need[6];
    for (int i = 0; i < 6; i++) {
        uint32_t a = (uint32_t)(algo->data[2 + i / 2] >> (32 * (i % 2)));
        need[i] = id == 0 ? (uint32_t)dt_size(i == 0 || i == 1 ? la.type : ld.type) : (a < 16 ? a : 16);
    }
    operand(call, "A", A, extent(&la), need[0]);
    operand(call, "B", B, extent(&lb), need[1]);
    operand(call, "C", C, extent(&ld), need[2]);
    operand(call, "D", Dp, extent(&ld), need[3]);
    if (C != Dp)
        return refuse(CUBLAS_STATUS_NOT_SUPPORTED, call, "C and D at different addresses (not simulated)");
    if (epi_bias(d.epi))
        operand(call, "the bias", d.bias, p.m * dt_size(ld.type), need[4]);
    if (d.epi == CUBLASLT_EPILOGUE_BGRADB)
        operand(call, "the bias gradient", d.bias, p.n * dt_size(ld.type), need[4]);
    if (epi_aux(d.epi))
        operand(call, "the GELU aux", d.aux, ((size_t)d.aux_ld * (p.n - 1) + p.m) * dt_size(ld.type), need[5]);
    if (ALGO_WS[id])
        operand(call, "the workspace", ws, ALGO_WS[id], 16);
    const float al = *(const float *)alpha, be = *(const float *)beta;
    const int wrong = algo_wrong(id, d.epi);
    cudasim::enqueue(stream, [=] {
        if (ALGO_WS[id])
            memset(ws, 0xff, ALGO_WS[id]); /* the algorithm's scratch: what was there is gone */
        const int t32 = d.compute == CUBLAS_COMPUTE_32F_FAST_TF32;
        const uint64_t m = p.m, n = p.n, k = p.k;
        /* op(A) as m rows of k, op(B) as n rows of k, in f32 (TF32-rounded) */
        std::vector<float> af((size_t)m * k), bf((size_t)n * k);
        /* op(X) as rows of k in f32 (TF32-rounded): element (r, kk) at
         * kk + ld r when kmajor, else r + ld kk; read in memory order (a
         * strided walk of a 30522-row table missed the cache each element) */
        auto unpack = [&](const void *X, const sim_layout &l, int kmajor, uint64_t nr, std::vector<float> &out) {
            for (uint64_t o = 0; o < (kmajor ? nr : k); o++)
                for (uint64_t q = 0; q < (kmajor ? k : nr); q++) {
                    uint64_t r = kmajor ? o : q, kk = kmajor ? q : o;
                    float v = load(X, l.type, kmajor ? kk + (size_t)l.ld * r : r + (size_t)l.ld * kk);
                    out[(size_t)r * k + kk] = t32 ? tf32(v) : v;
                }
        };
        unpack(A, la, d.ta, m, af);
        unpack(B, lb, !d.tb, n, bf);
        /* each output's sum in the algorithm's order (one run over k; two
         * halves, then their sum; blocks of 16 added in turn), NB outputs
         * of a row at once: op(B)'s rows interleaved by NB, so the NB
         * independent sums run side by side, NV vectors of 8 (a lane's
         * arithmetic is the scalar's: each sum's order, and so every bit,
         * as one at a time; NV chains of additions hide their latency,
         * which bounded one vector of 4) */
        std::vector<uint64_t> seg; /* segment bounds over k */
        if (id == 1)
            seg = {0, k / 2, k};
        else if (id == 2)
            for (uint64_t k0 = 0; k0 <= k; k0 += 16)
                seg.push_back(k0 < k ? k0 : k);
        else
            seg = {0, k};
        if (seg.back() != k)
            seg.push_back(k);
        typedef float v8 __attribute__((vector_size(32)));
        const int NV = n > 16 ? 4 : n > 8 ? 2 : 1, NB = 8 * NV;
        std::vector<v8> bN((size_t)k * NV);
        for (uint64_t j0 = 0; j0 < n; j0 += NB) {
            const uint64_t nj = n - j0 < (uint64_t)NB ? n - j0 : NB;
            for (uint64_t kk = 0; kk < k; kk++)
                for (int jj = 0; jj < NB; jj++)
                    bN[(size_t)kk * NV + jj / 8][jj % 8] = (uint64_t)jj < nj ? bf[(size_t)(j0 + jj) * k + kk] : 0.0f;
            for (uint64_t i = 0; i < m; i++) {
                const float *ar = &af[(size_t)i * k];
                v8 a4[4] = {}; /* the sums; lane jj % 8 of vector jj / 8 is output j0 + jj */
                for (size_t s = 0; s + 1 < seg.size(); s++) {
                    v8 p0 = {}, p1 = {}, p2 = {}, p3 = {};
                    const v8 *b = &bN[(size_t)seg[s] * NV];
                    if (NV == 4)
                        for (uint64_t kk = seg[s]; kk < seg[s + 1]; kk++, b += 4) {
                            const float a = ar[kk];
                            p0 += a * b[0];
                            p1 += a * b[1];
                            p2 += a * b[2];
                            p3 += a * b[3];
                        }
                    else if (NV == 2)
                        for (uint64_t kk = seg[s]; kk < seg[s + 1]; kk++, b += 2) {
                            const float a = ar[kk];
                            p0 += a * b[0];
                            p1 += a * b[1];
                        }
                    else
                        for (uint64_t kk = seg[s]; kk < seg[s + 1]; kk++, b++)
                            p0 += ar[kk] * b[0];
                    a4[0] += p0;
                    a4[1] += p1;
                    a4[2] += p2;
                    a4[3] += p3;
                }
                float acc[32];
                memcpy(acc, a4, sizeof acc);
                for (uint64_t jj = 0; jj < nj; jj++) {
                    const uint64_t j = j0 + jj;
                    size_t o = i + (size_t)ld.ld * j;
                    float v = al * acc[jj];
                    if (be != 0.0f)
                        v += be * load(C, ld.type, o);
                    if (epi_bias(d.epi))
                        v += load(d.bias, ld.type, i);
                    if (epi_aux(d.epi))
                        store(d.aux, ld.type, i + (size_t)d.aux_ld * j, v);
                    if (epi_relu(d.epi))
                        v = v > 0.0f ? v : 0.0f;
                    else if (epi_gelu(d.epi))
                        v = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
                    if (wrong && i == m - 1 && j == n - 1) {
                        const float *br = &bf[(size_t)j * k];
                        float abs_sum = 0.0f;
                        for (uint64_t kk = 0; kk < k; kk++)
                            abs_sum += fabsf(ar[kk] * br[kk]);
                        v += 1.0f + fabsf(v) + abs_sum;
                    }
                    store(Dp, ld.type, o, v);
                }
            }
        }
        if (d.epi == CUBLASLT_EPILOGUE_BGRADB)
            for (uint64_t j = 0; j < n; j++) {
                float s = 0.0f;
                for (uint64_t kk = 0; kk < k; kk++)
                    s += bf[(size_t)j * k + kk];
                store((void *)d.bias, ld.type, j, s);
            }
    });
    return CUBLAS_STATUS_SUCCESS;
}

} // extern "C"
