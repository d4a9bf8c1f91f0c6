/* measure.h - warm-up, timed steps and the stopping rule.
 *
 * Steps are timed one by one with CLOCK_MONOTONIC around step() (a backend
 * with asynchronous work synchronises inside step). After the warm-up
 * (a duration or a number of steps), steps run until min_time has passed, at
 * least min_samples are in, and the 95% confidence interval of the median is
 * within rel_ci of the median; or until max_time; or exactly `steps` steps
 * when steps > 0. The interval is distribution-free: the order statistics
 * whose ranks bound the median with 95% binomial coverage. */
#ifndef MATRIX_ENGINE_MEASURE_H
#define MATRIX_ENGINE_MEASURE_H

/* The fewest samples with a 95% interval of the median: min to max of n
 * covers it with 1 - 2^(1-n), 96.9% for 6, 93.75% for 5. Fewer never meet
 * the CI (ci_met 0), and lo / hi are then the sample's min and max. */
#define MEASURE_CI_MIN_SAMPLES 6

typedef struct measure_cfg {
    double warmup_s;   /* warm-up duration, seconds (when warmup_steps < 0) */
    int warmup_steps;  /* warm-up steps, or -1 to use warmup_s */
    double min_time;   /* seconds */
    double max_time;   /* seconds */
    double rel_ci;     /* target (hi - lo) / 2 / median */
    int steps;         /* > 0: exactly this many timed steps, no CI rule */
    int min_samples;   /* timed steps at least (CI rule) */
    /* When set: the duration of the step just run, seconds, as the device
     * timed it (CUDA events); the host clock still bounds the run. */
    double (*step_seconds)(void);
    /* Data-parallel ranks: every rank must run the same steps. When set,
     * called after each step with this rank's decision to stop (1) or go
     * on (0); returns the decision all ranks follow (rank 0's). */
    int (*agree)(int stop);
    /* When set: called once as the timed steps begin (after the warm-up). */
    void (*timed_start)(void);
} measure_cfg;

typedef struct measure_result {
    int samples;       /* timed steps */
    double median_ms;  /* milliseconds */
    double lo_ms;      /* 95% CI of the median, milliseconds */
    double hi_ms;
    double mean_ms;    /* milliseconds */
    double total_s;    /* timed seconds */
    double first_step_t; /* monotonic seconds at the first timed step */
    double first_step_ms; /* the very first step run (warm-up or timed), host
                           * clock, waited for: lazy loading, graph capture */
    int ci_met;        /* the interval reached rel_ci */
} measure_result;

double measure_now(void); /* CLOCK_MONOTONIC, seconds */
/* Run step(ctx) as the configuration says; 0 on success, -1 when step
 * failed (its return value non-zero). */
int measure_run(const measure_cfg *cfg, int (*step)(void *ctx), void *ctx, measure_result *r);
/* Median and its 95% interval of n sorted samples (ms). */
void measure_median_ci(const double *sorted, int n, double *med, double *lo, double *hi);

#endif
