/* cpu.h - internals of the CPU backend (plain C + CBLAS, own thread pool). */
#ifndef MATRIX_ENGINE_CPU_H
#define MATRIX_ENGINE_CPU_H

#include "../graph.h"

#include <math.h>

/* Epilogue applied to a block of a GEMM result C:
 * pre = C + bias + res (when pre is set); C = act(C + bias + res). */
typedef struct cpu_epi {
    const float *bias; /* per column (bias_per_col) or per row, or NULL */
    int bias_per_col;
    const float *res;  /* same shape as C, leading dimension ldres, or NULL */
    int ldres;
    int act;           /* enum act */
    float *pre;        /* pre-activation copy, leading dimension ldpre, or NULL */
    int ldpre;
} cpu_epi;

/* Row-major single-threaded C = alpha op(A) op(B) + beta C. */
void cpu_gemm(int ta, int tb, int M, int N, int K, float alpha,
              const float *A, int lda, const float *B, int ldb, float beta,
              float *C, int ldc);
/* The same split over the pool, then the epilogue e (may be NULL). */
void cpu_par_gemm(int ta, int tb, int M, int N, int K, float alpha,
                  const float *A, int lda, const float *B, int ldb, float beta,
                  float *C, int ldc, const cpu_epi *e);
void cpu_epilogue(const cpu_epi *e, float *C, int ldc, int m0, int m1, int n0,
                  int n1);
static inline float cpu_act(int act, float x)
{
    switch (act) {
    case ACT_RELU: return x > 0.0f ? x : 0.0f;
    case ACT_GELU: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case ACT_TANH: return tanhf(x);
    case ACT_GELU_TANH:
        return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    default: return x;
    }
}

/* y[i] = act(y[i]) for i < n, with a vectorisable loop for ReLU. */
static inline void cpu_act_row(int act, float *y, long n)
{
    if (act == ACT_NONE)
        return;
    if (act == ACT_RELU) {
        for (long i = 0; i < n; i++)
            y[i] = y[i] > 0.0f ? y[i] : 0.0f;
        return;
    }
    for (long i = 0; i < n; i++)
        y[i] = cpu_act(act, y[i]);
}

/* Fill the op table of backend_cpu. */
void cpu_ops_register(void (**table)(graph *, op *));
size_t cpu_op_workspace(const graph *g, const op *o);
size_t cpu_op_saved(const graph *g, const op *fwd);

#endif
