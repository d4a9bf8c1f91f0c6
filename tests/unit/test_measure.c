/* test_measure.c - the engine's stopping rule and interval (engine/measure.c)
 * on a step whose times are given: a 95% interval of the median needs at
 * least 6 samples (the widest one, min to max, covers the median with
 * 1 - 2^(1-n): 93.75% for 5), so fewer never meet the CI. With --steps 1
 * the record said ci_met=1 with a zero-width interval, a sure measurement
 * made of one step. */
#include "config.h"
#include "t.h"

#include "../../engine/measure.h"

static double step_ms[64];
static int nstep;

static int step(void *ctx)
{
	(void)ctx;
	nstep++;
	return 0;
}

static double step_s(void) { return step_ms[(nstep - 1) % 64] / 1e3; }

/* measure_run with exactly steps steps of the times in step_ms */
static measure_result run_steps(int steps)
{
	measure_cfg c = {.warmup_steps = 0, .min_time = 0, .max_time = 10, .rel_ci = 0.02, .steps = steps,
			 .min_samples = 1, .step_seconds = step_s};
	measure_result r;
	nstep = 0;
	CHECK_INT(measure_run(&c, step, NULL, &r), 0);
	CHECK_INT(r.samples, steps);
	return r;
}

int main(void)
{
	for (int i = 0; i < 64; i++)
		step_ms[i] = 2.0; /* equal steps: a zero-width interval */
	for (int n = 1; n <= 5; n++) {
		measure_result r = run_steps(n);
		CHECK(r.median_ms == 2.0);
		CHECK_INT(r.ci_met, 0);
	}
	measure_result r = run_steps(6);
	CHECK_INT(r.ci_met, 1);
	CHECK(r.lo_ms == 2.0 && r.hi_ms == 2.0);
	/* the stopping rule too: min_samples 1 and a CI at once, still 6 steps at least */
	measure_cfg c = {.warmup_steps = 0, .min_time = 0, .max_time = 10, .rel_ci = 0.02, .min_samples = 1,
			 .step_seconds = step_s};
	nstep = 0;
	CHECK_INT(measure_run(&c, step, NULL, &r), 0);
	CHECK_INT(r.samples, 6);
	CHECK_INT(r.ci_met, 1);
	/* spread steps: the interval of 20 samples of 1..20 ms is within them, not met at 2% */
	for (int i = 0; i < 20; i++)
		step_ms[i] = 1.0 + i;
	r = run_steps(20);
	CHECK(r.lo_ms >= 1.0 && r.hi_ms <= 20.0 && r.lo_ms < r.median_ms && r.median_ms < r.hi_ms);
	CHECK_INT(r.ci_met, 0);
	return T_DONE();
}
