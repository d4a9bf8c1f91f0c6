/* pool.c - thread pool, see pool.h.
 *
 * A run is split into nthreads parts; every thread, the caller included,
 * claims parts with an atomic counter until none is left. A worker that the
 * OS has not scheduled (a loaded machine) therefore never stalls a run: the
 * caller takes its part. Kernels index per-thread scratch by the part number,
 * which only one thread ever runs. */
#include "config.h"
#include "pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

#define POOL_SPIN 40000 /* pause iterations (~2 ms) before a worker sleeps */

static int pool_n = 1;
static pthread_t pool_tid[POOL_MAX];
static pool_fn pool_job;
static void *pool_ctx;
static atomic_int pool_gen;       /* incremented per run */
static atomic_int pool_next;      /* next part to claim */
static atomic_int pool_left;      /* parts not finished */
static atomic_int pool_active;    /* workers inside the current run */
static atomic_int pool_quit;
static atomic_int pool_sleepers;
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cv = PTHREAD_COND_INITIALIZER;

static void pool_claim(void)
{
    int p;
    while ((p = atomic_fetch_add(&pool_next, 1)) < pool_n) {
        pool_job(pool_ctx, p, pool_n);
        atomic_fetch_sub_explicit(&pool_left, 1, memory_order_release);
    }
}

static void *pool_worker(void *arg)
{
    int seen = 0;
    (void)arg;
    for (;;) {
        int spins = 0, gen;
        while ((gen = atomic_load(&pool_gen)) == seen) {
            if (atomic_load(&pool_quit))
                return NULL;
            if (++spins < POOL_SPIN) {
                cpu_relax();
                continue;
            }
            pthread_mutex_lock(&pool_mu);
            atomic_fetch_add(&pool_sleepers, 1);
            while (atomic_load(&pool_gen) == seen && !atomic_load(&pool_quit))
                pthread_cond_wait(&pool_cv, &pool_mu);
            atomic_fetch_sub(&pool_sleepers, 1);
            pthread_mutex_unlock(&pool_mu);
            spins = 0;
        }
        if (atomic_load(&pool_quit))
            return NULL;
        seen = gen;
        atomic_fetch_add(&pool_active, 1);
        /* the run may already be over (the caller took every part) */
        if (atomic_load(&pool_gen) == gen)
            pool_claim();
        atomic_fetch_sub(&pool_active, 1);
    }
}

int pool_start(int nthreads)
{
    if (nthreads < 1)
        nthreads = 1;
    if (nthreads > POOL_MAX)
        nthreads = POOL_MAX;
    pool_n = nthreads;
    atomic_store(&pool_quit, 0);
    for (int i = 1; i < pool_n; i++)
        if (pthread_create(&pool_tid[i], NULL, pool_worker, (void *)(long)i) != 0) {
            pool_n = i;
            return -1;
        }
    return 0;
}

void pool_stop(void)
{
    pthread_mutex_lock(&pool_mu);
    atomic_store(&pool_quit, 1);
    pthread_cond_broadcast(&pool_cv);
    pthread_mutex_unlock(&pool_mu);
    for (int i = 1; i < pool_n; i++)
        pthread_join(pool_tid[i], NULL);
    pool_n = 1;
}

int pool_threads(void) { return pool_n; }

void pool_run(pool_fn fn, void *ctx)
{
    if (pool_n == 1) {
        fn(ctx, 0, 1);
        return;
    }
    /* no worker may still be claiming from the previous run */
    while (atomic_load(&pool_active) > 0)
        cpu_relax();
    pool_job = fn;
    pool_ctx = ctx;
    atomic_store(&pool_left, pool_n);
    atomic_store(&pool_next, 0);
    atomic_fetch_add(&pool_gen, 1);
    if (atomic_load(&pool_sleepers) > 0) {
        pthread_mutex_lock(&pool_mu);
        pthread_cond_broadcast(&pool_cv);
        pthread_mutex_unlock(&pool_mu);
    }
    pool_claim();
    for (int spins = 0; atomic_load_explicit(&pool_left, memory_order_acquire) > 0; spins++) {
        if (spins < POOL_SPIN)
            cpu_relax();
        else
            sched_yield();
    }
}

void pool_range(long n, int tid, int nthreads, long *lo, long *hi)
{
    long q = n / nthreads, r = n % nthreads;
    *lo = tid * q + (tid < r ? tid : r);
    *hi = *lo + q + (tid < r ? 1 : 0);
}
