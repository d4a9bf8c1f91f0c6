/* pool.h - a small thread pool for the CPU backend.
 *
 * pool_run(fn, ctx) runs fn(ctx, tid, nthreads) on every thread, the caller
 * being thread 0, and returns when all have finished. Workers spin briefly
 * between runs (ops follow each other within microseconds during a step), then
 * sleep on a condition variable, so an idle engine does not burn a core. */
#ifndef MATRIX_ENGINE_POOL_H
#define MATRIX_ENGINE_POOL_H

/* The most threads the pool runs (--threads above it is refused). */
#define POOL_MAX 256

typedef void (*pool_fn)(void *ctx, int tid, int nthreads);

/* Start nthreads - 1 workers; 0 on success. */
int pool_start(int nthreads);
void pool_stop(void);
int pool_threads(void);
void pool_run(pool_fn fn, void *ctx);
/* Split [0, n) evenly into nthreads parts; part tid is [*lo, *hi). */
void pool_range(long n, int tid, int nthreads, long *lo, long *hi);

#endif
