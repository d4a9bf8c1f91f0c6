/* noise.h - the machine's state around a point: load average and CPU clock
 * at its start, CPU clock at its end, points running at once, cores. Read
 * from /proc; NaN where this system does not say. */
#ifndef MATRIX_NOISE_H
#define MATRIX_NOISE_H

#include <stddef.h>

#include "plan/recipe.h"
#include "result.h"

struct noise_start {
	double load;          /* 1-minute load average when the point started */
	double mhz;           /* mean CPU clock over the online CPUs, MHz */
	size_t concurrent;    /* points running at once, this one included */
};

double noise_loadavg(void);
double noise_cpu_mhz(void);
long noise_cores(void);
/* The most CPU threads any point of r uses (the `threads` factor, else every
 * core for the native and PyTorch engines, 1 for a command engine; GPU points
 * count 0: they run alone). */
long noise_max_threads(const struct recipe *r, long cores);
/* Add load_start, cpu_mhz_start, cpu_mhz_end (read now), concurrent,
 * cores and, unless the engine named it, cpu (the CPU's model name) to res, and for an ok result rel_ci and ci_met (result_derive). */
void noise_record(struct result *res, const struct noise_start *ns, long cores, double rel_ci_target);

#endif
