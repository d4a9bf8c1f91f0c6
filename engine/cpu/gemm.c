/* gemm.c - row-major GEMM for the CPU backend: CBLAS when configure found it,
 * a plain C loop otherwise, and a pool-parallel version that splits C into
 * blocks and applies the epilogue (bias, residual, activation) to each block
 * while it is still in cache. */
#include "config.h"
#include "cpu.h"
#include "pool.h"

#include <math.h>
#include <string.h>
#ifdef HAVE_CBLAS
#include <cblas.h>
#endif

void cpu_gemm(int ta, int tb, int M, int N, int K, float alpha,
              const float *A, int lda, const float *B, int ldb, float beta,
              float *C, int ldc)
{
    if (M <= 0 || N <= 0)
        return;
#ifdef HAVE_CBLAS
    if (K <= 0) {
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++)
                C[(long)i * ldc + j] *= beta;
        return;
    }
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
                tb ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B, ldb,
                beta, C, ldc);
#else
    for (int i = 0; i < M; i++) {
        float *c = C + (long)i * ldc;
        for (int j = 0; j < N; j++)
            c[j] = beta == 0.0f ? 0.0f : c[j] * beta;
        for (int k = 0; k < K; k++) {
            float a = alpha * (ta ? A[(long)k * lda + i] : A[(long)i * lda + k]);
            if (tb)
                for (int j = 0; j < N; j++)
                    c[j] += a * B[(long)j * ldb + k];
            else {
                const float *b = B + (long)k * ldb;
                for (int j = 0; j < N; j++)
                    c[j] += a * b[j];
            }
        }
    }
#endif
}

void cpu_epilogue(const cpu_epi *e, float *C, int ldc, int m0, int m1, int n0,
                  int n1)
{
    if (!e || (!e->bias && !e->res && e->act == ACT_NONE && !e->pre))
        return;
    for (int i = m0; i < m1; i++) {
        float *c = C + (long)i * ldc;
        const float *r = e->res ? e->res + (long)i * e->ldres : NULL;
        float brow = e->bias && !e->bias_per_col ? e->bias[i] : 0.0f;
        if (e->bias && e->bias_per_col)
            for (int j = n0; j < n1; j++)
                c[j] += e->bias[j];
        else if (brow != 0.0f)
            for (int j = n0; j < n1; j++)
                c[j] += brow;
        if (r)
            for (int j = n0; j < n1; j++)
                c[j] += r[j];
        if (e->pre)
            memcpy(e->pre + (long)i * e->ldpre + n0, c + n0, (n1 - n0) * sizeof(float));
        cpu_act_row(e->act, c + n0, n1 - n0);
    }
}

struct par_gemm_ctx {
    int ta, tb, M, N, K;
    float alpha, beta;
    const float *A, *B;
    float *C;
    int lda, ldb, ldc;
    const cpu_epi *e;
};

static void par_gemm_run(void *p, int tid, int nt)
{
    struct par_gemm_ctx *c = p;
    long lo, hi;
    if (c->M >= c->N || c->N < 64 * nt) {
        pool_range(c->M, tid, nt, &lo, &hi);
        if (lo >= hi)
            return;
        const float *A = c->ta ? c->A + lo : c->A + lo * c->lda;
        cpu_gemm(c->ta, c->tb, hi - lo, c->N, c->K, c->alpha, A, c->lda, c->B,
                 c->ldb, c->beta, c->C + lo * c->ldc, c->ldc);
        cpu_epilogue(c->e, c->C, c->ldc, lo, hi, 0, c->N);
    } else {
        long blocks = (c->N + 15) / 16;
        pool_range(blocks, tid, nt, &lo, &hi);
        lo *= 16;
        hi *= 16;
        if (hi > c->N)
            hi = c->N;
        if (lo >= hi)
            return;
        const float *B = c->tb ? c->B + lo * c->ldb : c->B + lo;
        cpu_gemm(c->ta, c->tb, c->M, hi - lo, c->K, c->alpha, c->A, c->lda, B,
                 c->ldb, c->beta, c->C + lo, c->ldc);
        cpu_epilogue(c->e, c->C, c->ldc, 0, c->M, lo, hi);
    }
}

void cpu_par_gemm(int ta, int tb, int M, int N, int K, float alpha,
                  const float *A, int lda, const float *B, int ldb, float beta,
                  float *C, int ldc, const cpu_epi *e)
{
    struct par_gemm_ctx c = {ta, tb, M, N, K, alpha, beta, A, B, C,
                             lda, ldb, ldc, e};
    double work = (double)M * N * K;
    if (pool_threads() == 1 || work < 32768.0) {
        par_gemm_run(&c, 0, 1);
        return;
    }
    pool_run(par_gemm_run, &c);
}
