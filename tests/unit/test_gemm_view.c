/* test_gemm_view.c - engine/cuda/gemm_view.h on the host: for shapes that
 * include 1, odd, prime and the real layer sizes, each product's gemm_view
 * gives the engine's definition (written out here from scratch on row-major
 * arrays), and its gemm_spec, evaluated with cuBLASLt's documented
 * column-major semantics (D[i + j ldd] = sum_k op(A)(i, k) op(B)(k, j), a
 * stored matrix element (r, c) at r + c ld, op = T swapping the indices),
 * gives the same numbers. The CUDA backend validates every cuBLASLt
 * algorithm against the view and falls back to a kernel on it, so both must
 * be exactly the layer's math. */
#include "config.h"
#include "t.h"
#include "../../engine/cuda/gemm_view.h"

#include <math.h>
#include <stdlib.h>

static float rnd(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* The definitions: y = x w^T, dx = dy w, dw = dy^T x (row-major). */
static void reference(int which, int M, int N, int K, const float *x, const float *w,
                      const float *dy, double *out)
{
    if (which == GEMM_FWD)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int k = 0; k < K; k++)
                    s += (double)x[i * K + k] * w[j * K + k];
                out[i * N + j] = s;
            }
    else if (which == GEMM_DX)
        for (int i = 0; i < M; i++)
            for (int k = 0; k < K; k++) {
                double s = 0;
                for (int j = 0; j < N; j++)
                    s += (double)dy[i * N + j] * w[j * K + k];
                out[i * K + k] = s;
            }
    else
        for (int j = 0; j < N; j++)
            for (int k = 0; k < K; k++) {
                double s = 0;
                for (int i = 0; i < M; i++)
                    s += (double)dy[i * N + j] * x[i * K + k];
                out[j * K + k] = s;
            }
}

/* The operands gemm.cu passes to cuBLASLt: A and B (P = B, Q = A). */
static void operands(int which, const float *x, const float *w, const float *dy, const float **A,
                     const float **B)
{
    *A = which == GEMM_DW ? x : w;
    *B = which == GEMM_FWD ? x : dy;
}

static double max_abs_diff(const double *a, const double *b, long n)
{
    double m = 0;
    for (long i = 0; i < n; i++)
        if (fabs(a[i] - b[i]) > m)
            m = fabs(a[i] - b[i]);
    return m;
}

static void check_shape(int M, int N, int K)
{
    unsigned seed = (unsigned)(M * 7919 + N * 31 + K);
    float *x = malloc(sizeof *x * M * K), *w = malloc(sizeof *w * N * K);
    float *dy = malloc(sizeof *dy * M * N);
    long big = (long)(M > N ? M : N) * (K > N ? K : N);
    double *ref = calloc(big, sizeof *ref), *got = calloc(big, sizeof *got);
    double *lt = calloc(big, sizeof *lt);
    for (long i = 0; i < (long)M * K; i++)
        x[i] = rnd(&seed);
    for (long i = 0; i < (long)N * K; i++)
        w[i] = rnd(&seed);
    for (long i = 0; i < (long)M * N; i++)
        dy[i] = rnd(&seed);
    for (int which = GEMM_FWD; which <= GEMM_DW; which++) {
        gemm_view v;
        gemm_spec s;
        const float *A, *B;
        gemm_describe(which, M, N, K, &v, &s);
        operands(which, x, w, dy, &A, &B);
        long n = (long)v.R * v.C;
        reference(which, M, N, K, x, w, dy, ref);
        /* 1. the view */
        for (int64_t r = 0; r < v.R; r++)
            for (int64_t c = 0; c < v.C; c++) {
                double acc = 0;
                for (int64_t t = 0; t < v.T; t++)
                    acc += (double)B[gv_p(&v, r, t)] * A[gv_q(&v, t, c)];
                got[gv_out(&v, r, c)] = acc;
            }
        double e1 = max_abs_diff(ref, got, n);
        /* 2. the spec under cuBLASLt's semantics */
        int64_t m = s.dr, nn = s.dc, k = s.ta ? s.ar : s.ac;
        CHECK((s.ta ? s.ac : s.ar) == m);
        CHECK((s.tb ? s.br : s.bc) == nn);
        CHECK((s.tb ? s.bc : s.br) == k);
        CHECK(s.lda >= s.ar && s.ldb >= s.br && s.ldd >= s.dr);
        CHECK(m * nn == n);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < nn; j++) {
                double acc = 0;
                for (int64_t q = 0; q < k; q++) {
                    double a = s.ta ? A[q + i * s.lda] : A[i + q * s.lda];
                    double b = s.tb ? B[j + q * s.ldb] : B[q + j * s.ldb];
                    acc += a * b;
                }
                lt[i + j * s.ldd] = acc;
            }
        double e2 = max_abs_diff(ref, lt, n);
        if (e1 > 1e-9 || e2 > 1e-9)
            fprintf(stderr, "product %d of M=%d N=%d K=%d: view error %g, cuBLASLt spec error %g\n",
                    which, M, N, K, e1, e2);
        CHECK(e1 <= 1e-9);
        CHECK(e2 <= 1e-9);
    }
    free(x);
    free(w);
    free(dy);
    free(ref);
    free(got);
    free(lt);
}

int main(void)
{
    /* (M, N, K): the ops_check shapes, 1 / odd / prime sizes, and the real
     * classifier layers (mnist_cnn fc1 / fc2, resnet fc at batch 3) */
    static const int shapes[][3] = {
        {8, 50, 320}, {8, 10, 50}, {5, 10, 128}, {3, 24, 2048}, {1, 1, 1},   {1, 7, 33},
        {7, 1, 33},   {33, 7, 1},  {2, 1000, 7}, {1001, 3, 5},  {3, 1000, 64}, {64, 10, 128},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        check_shape(shapes[i][0], shapes[i][1], shapes[i][2]);
    /* a wrong view must be caught: swap the transposes of dw and check that
     * the cuBLASLt evaluation disagrees (the test can fail) */
    {
        gemm_view v;
        gemm_spec s;
        gemm_describe(GEMM_DW, 4, 3, 5, &v, &s);
        CHECK(s.tb == 1 && s.ta == 0);
        gemm_describe(GEMM_FWD, 4, 3, 5, &v, &s);
        CHECK(s.ta == 1 && s.tb == 0);
    }
    return T_DONE();
}
