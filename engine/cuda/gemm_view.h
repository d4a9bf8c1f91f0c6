/* gemm_view.h - the three products of a linear layer, described twice:
 *
 *   1. as the engine defines them on row-major matrices (x (M, K), w (N, K),
 *      y and dy (M, N)), independently of any library:
 *        y  = x w^T     y[i][j]  = sum_k x[i][k]  w[j][k]
 *        dx = dy w      dx[i][k] = sum_j dy[i][j] w[j][k]
 *        dw = dy^T x    dw[j][k] = sum_i dy[i][j] x[i][k]
 *      as a gemm_view: out(r, c) = sum_t P(r, t) Q(t, c), every operand
 *      addressed through its own two strides;
 *   2. as the column-major cuBLASLt call that computes each of them
 *      (gemm_spec: transposes, stored rows / columns, leading dimensions).
 *
 * gemm.cu checks every cuBLASLt algorithm it is about to use against (1) on
 * the device (gemm_view's P is always the call's B, Q its A), and runs its
 * own kernel on (1) when no algorithm computes the product right.
 * tests/unit/test_gemm_view.c checks on the host that (1) is the definition
 * above and that (2), under cuBLASLt's documented semantics, computes (1).
 *
 * Plain C, no CUDA types: included by gemm.cu (nvcc) and by the unit test. */
#ifndef MATRIX_ENGINE_GEMM_VIEW_H
#define MATRIX_ENGINE_GEMM_VIEW_H

#include <stdint.h>

#ifdef __CUDACC__
#define GV_HD __host__ __device__ __forceinline__
#else
#define GV_HD static inline
#endif

enum { GEMM_FWD, GEMM_DX, GEMM_DW };

/* out(r, c) = sum over t < T of P[r * ps_r + t * ps_t] * Q[t * qs_t + c * qs_c],
 * stored at out[r * os_r + c * os_c]; r < R, c < C. */
typedef struct gemm_view {
    int64_t R, C, T;
    int64_t ps_r, ps_t; /* P: the cuBLASLt call's B */
    int64_t qs_t, qs_c; /* Q: the cuBLASLt call's A */
    int64_t os_r, os_c; /* out: the call's D */
} gemm_view;

/* D (m x n, ld ldd) = op(A) op(B), column-major: A stored ar x ac (ld lda),
 * op(A) = A^T when ta; B likewise. m = dr, n = dc, k = the inner size. */
typedef struct gemm_spec {
    int ta, tb;
    int64_t ar, ac, lda;
    int64_t br, bc, ldb;
    int64_t dr, dc, ldd;
} gemm_spec;

GV_HD int64_t gv_p(const gemm_view *v, int64_t r, int64_t t) { return r * v->ps_r + t * v->ps_t; }
GV_HD int64_t gv_q(const gemm_view *v, int64_t t, int64_t c) { return t * v->qs_t + c * v->qs_c; }
GV_HD int64_t gv_out(const gemm_view *v, int64_t r, int64_t c) { return r * v->os_r + c * v->os_c; }

/* The product `which` (GEMM_FWD, GEMM_DX, GEMM_DW) of a linear with x (M, K)
 * and w (N, K), as a view and as the cuBLASLt call. */
GV_HD void gemm_describe(int which, int64_t M, int64_t N, int64_t K, gemm_view *v, gemm_spec *s)
{
    if (which == GEMM_FWD) {
        /* y (M, N) = x w^T: P = x, Q(t = k, c = j) = w[j][k]; out y */
        v->R = M; v->C = N; v->T = K;
        v->ps_r = K; v->ps_t = 1;
        v->qs_t = 1; v->qs_c = K;
        v->os_r = N; v->os_c = 1;
        /* y^T (N x M, ld N) = op(A) B: A = w stored K x N (ld K), op = T;
         * B = x stored K x M (ld K) */
        s->ta = 1; s->tb = 0;
        s->ar = K; s->ac = N; s->lda = K;
        s->br = K; s->bc = M; s->ldb = K;
        s->dr = N; s->dc = M; s->ldd = N;
    } else if (which == GEMM_DX) {
        /* dx (M, K) = dy w: P = dy, Q(t = j, c = k) = w[j][k]; out dx */
        v->R = M; v->C = K; v->T = N;
        v->ps_r = N; v->ps_t = 1;
        v->qs_t = K; v->qs_c = 1;
        v->os_r = K; v->os_c = 1;
        /* dx^T (K x M, ld K) = A B: A = w stored K x N (ld K) = w^T;
         * B = dy stored N x M (ld N) = dy^T */
        s->ta = 0; s->tb = 0;
        s->ar = K; s->ac = N; s->lda = K;
        s->br = N; s->bc = M; s->ldb = N;
        s->dr = K; s->dc = M; s->ldd = K;
    } else {
        /* dw (N, K) = dy^T x: P(r = j, t = i) = dy[i][j], Q(t = i, c = k) = x[i][k] */
        v->R = N; v->C = K; v->T = M;
        v->ps_r = 1; v->ps_t = N;
        v->qs_t = K; v->qs_c = 1;
        v->os_r = K; v->os_c = 1;
        /* dw^T (K x N, ld K) = A op(B): A = x stored K x M (ld K) = x^T;
         * B = dy stored N x M (ld N), op = T gives dy (M x N) */
        s->ta = 0; s->tb = 1;
        s->ar = K; s->ac = M; s->lda = K;
        s->br = N; s->bc = M; s->ldb = N;
        s->dr = K; s->dc = N; s->ldd = K;
    }
}

#undef GV_HD
#endif
