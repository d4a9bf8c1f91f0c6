/* noise.c - what else was going on while a point ran: the load average when
 * it started, the CPU clock at its start and end, how many points ran at once
 * on how many cores; recorded in results.csv beside the engine's numbers. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "noise.h"
#include "plan/argv.h"
#include "plan/grid.h"
#include "util.h"

double noise_loadavg(void)
{
	double v = NAN;
	FILE *f = fopen("/proc/loadavg", "re");
	if (!f)
		return NAN;
	if (fscanf(f, "%lf", &v) != 1)
		v = NAN;
	fclose(f);
	return v;
}

double noise_cpu_mhz(void)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return NAN;
	char line[512];
	double sum = 0, v;
	size_t n = 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "cpu MHz", 7) == 0) {
			char *colon = strchr(line, ':');
			if (colon && sscanf(colon + 1, "%lf", &v) == 1) {
				sum += v;
				n++;
			}
		}
	fclose(f);
	return n ? sum / (double)n : NAN;
}

/* The CPU's model name ("model name" in /proc/cpuinfo), or NULL. */
static char *cpu_model(void)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return NULL;
	char line[512], *model = NULL;
	while (!model && fgets(line, sizeof(line), f))
		if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
			char *v = strchr(line, ':') + 1;
			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			if (*v)
				model = xstrdup(v);
		}
	fclose(f);
	return model;
}

long noise_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? n : 1;
}

/* Threads of point p when it runs on the CPU; 0 when it runs on a GPU
 * (GPU points run alone). */
static long point_threads(const struct recipe *r, const struct point *p, long cores)
{
	long fd = recipe_factor_index(r, "device");
	const char *dev = fd >= 0 ? r->factors[fd].levels[p->level[fd]] : (r->device ? r->device : "auto");
	const char *engine = argv_engine(r, p);
	int command = strcmp(engine, "command") == 0;
	if (strcmp(dev, "cuda") == 0 || (strcmp(dev, "auto") == 0 && !command && access("/dev/nvidia0", F_OK) == 0))
		return 0;
	long ft = recipe_factor_index(r, "threads");
	long t;
	if (ft >= 0 && parse_long(r->factors[ft].levels[p->level[ft]], &t) == 0 && t > 0)
		return t;
	/* the native and PyTorch engines use every online CPU by default; a
	 * command engine is taken to use one */
	return command ? 1 : cores;
}

long noise_max_threads(const struct recipe *r, long cores)
{
	struct grid g;
	long max = 0;
	grid_init(&g, r);
	for (const struct point *p; (p = grid_next(&g));) {
		long t = point_threads(r, p, cores);
		if (t > max)
			max = t;
	}
	grid_free(&g);
	return max;
}

void noise_record(struct result *res, const struct noise_start *ns, long cores, double rel_ci_target)
{
	char buf[64];
	if (!isnan(ns->load)) {
		snprintf(buf, sizeof(buf), "%.2f", ns->load);
		result_set(res, "load_start", buf);
	}
	if (!isnan(ns->mhz)) {
		snprintf(buf, sizeof(buf), "%.0f", ns->mhz);
		result_set(res, "cpu_mhz_start", buf);
	}
	double end = noise_cpu_mhz();
	if (!isnan(end)) {
		snprintf(buf, sizeof(buf), "%.0f", end);
		result_set(res, "cpu_mhz_end", buf);
	}
	snprintf(buf, sizeof(buf), "%zu", ns->concurrent);
	result_set(res, "concurrent", buf);
	snprintf(buf, sizeof(buf), "%ld", cores);
	result_set(res, "cores", buf);
	char *model = result_get(res, "cpu") ? NULL : cpu_model();
	if (model)
		result_set(res, "cpu", model);
	free(model);
	const char *st = result_get(res, "status");
	if (st && strcmp(st, "ok") == 0)
		result_derive(res, rel_ci_target);
}
