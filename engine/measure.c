/* measure.c - see measure.h. */
#include "config.h"
#include "measure.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double measure_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void measure_median_ci(const double *s, int n, double *med, double *lo, double *hi)
{
    if (n <= 0) {
        *med = *lo = *hi = 0.0;
        return;
    }
    *med = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    /* ranks (1-based) n/2 -+ 1.96 sqrt(n)/2, the normal approximation of the
     * binomial(n, 1/2) quantiles; clipped to the sample */
    double h = 1.96 * sqrt((double)n) / 2.0;
    int l = (int)floor(n / 2.0 - h), u = (int)ceil(n / 2.0 + h) + 1;
    if (l < 1)
        l = 1;
    if (u > n)
        u = n;
    *lo = s[l - 1];
    *hi = s[u - 1];
}

/* Warm-up: warmup_steps steps, else steps for warmup_s seconds (the ranks
 * agreeing when to stop). Returns 0, or -1 when a step failed. */
static int measure_warmup(const measure_cfg *cfg, int (*step)(void *ctx), void *ctx,
                          measure_result *r)
{
    double start = measure_now();
    for (int i = 0;; i++) {
        int stop = cfg->warmup_steps >= 0 ? i >= cfg->warmup_steps
                                          : measure_now() - start >= cfg->warmup_s;
        if (cfg->agree)
            stop = cfg->agree(stop);
        if (stop)
            return 0;
        double t0 = measure_now();
        if (step(ctx))
            return -1;
        if (i == 0)
            r->first_step_ms = (measure_now() - t0) * 1e3;
    }
}

/* Sort the n step times t into *sorted (grown to n) and give their median
 * and its 95% interval. */
static void measure_sorted_ci(const double *t, int n, double **sorted, double *med, double *lo, double *hi)
{
    *sorted = realloc(*sorted, n * sizeof **sorted);
    mallocCheck(*sorted);
    memcpy(*sorted, t, n * sizeof *t);
    qsort(*sorted, n, sizeof **sorted, cmp_double);
    measure_median_ci(*sorted, n, med, lo, hi);
}

int measure_run(const measure_cfg *cfg, int (*step)(void *ctx), void *ctx, measure_result *r)
{
    int cap = 1024, n = 0, next_check;
    double *t = malloc(cap * sizeof *t), *sorted = NULL;
    double start, now;
    mallocCheck(t);
    memset(r, 0, sizeof *r);
    if (measure_warmup(cfg, step, ctx, r) < 0)
        goto fail;
    int warmed = r->first_step_ms > 0; /* else the first timed step is the first */
    if (cfg->timed_start)
        cfg->timed_start();
    /* timed steps */
    start = measure_now();
    r->first_step_t = start;
    next_check = cfg->min_samples > MEASURE_CI_MIN_SAMPLES ? cfg->min_samples : MEASURE_CI_MIN_SAMPLES;
    for (;;) {
        double t0 = measure_now();
        if (step(ctx))
            goto fail;
        now = measure_now();
        if (n == 0 && !warmed)
            r->first_step_ms = (now - t0) * 1e3;
        if (n == cap) {
            cap *= 2;
            t = realloc(t, cap * sizeof *t);
            mallocCheck(t);
        }
        t[n++] = (cfg->step_seconds ? cfg->step_seconds() : now - t0) * 1e3;
        double el = now - start;
        int stop = 0;
        if (cfg->steps > 0)
            stop = n >= cfg->steps;
        else if (el >= cfg->max_time && n >= 1)
            stop = 1;
        else if (el >= cfg->min_time && n >= next_check) {
            double med, lo, hi;
            measure_sorted_ci(t, n, &sorted, &med, &lo, &hi);
            if ((hi - lo) / 2.0 <= cfg->rel_ci * med)
                r->ci_met = stop = 1;
            else
                next_check = n + n / 8 + 1; /* sort at geometric intervals */
        }
        if (cfg->agree)
            stop = cfg->agree(stop);
        if (stop)
            break;
    }
    r->total_s = measure_now() - start;
    r->samples = n;
    measure_sorted_ci(t, n, &sorted, &r->median_ms, &r->lo_ms, &r->hi_ms);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += t[i];
    r->mean_ms = sum / n;
    if (!r->ci_met) /* fewer samples: no 95% interval at all, however narrow (one step: zero width) */
        r->ci_met = n >= MEASURE_CI_MIN_SAMPLES && (r->hi_ms - r->lo_ms) / 2.0 <= cfg->rel_ci * r->median_ms;
    free(t);
    free(sorted);
    return 0;
fail:
    free(t);
    free(sorted);
    return -1;
}
