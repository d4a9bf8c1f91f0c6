/* effects.h - what each setting buys (effects.c): matched pairs of cells,
 * effects and two-factor interactions, improvement tables, best configuration
 * per group, scaling. Pure computation over a struct cellset (no files, no
 * recipe); above cellset.h and stats.h. */
#ifndef MATRIX_REPORT_EFFECTS_H
#define MATRIX_REPORT_EFFECTS_H

#include <stddef.h>

#include "cellset.h"

/* Gain of `to` over `from` at one matched pair: > 1 when `to` is better. */
static inline double effects_gain(double v_from, double v_to, int higher_better)
{
	return higher_better ? v_to / v_from : v_from / v_to;
}

struct interaction {
	size_t by;            /* other factor */
	size_t by_level;
	size_t npairs;
	double geomean, min, max;  /* gain over the pairs where factor `by` is at by_level */
	double u;             /* half-width of the 95% CI of log(geomean), NaN unknown */
};

struct effect {
	size_t factor;
	size_t from, to;      /* level indexes; `from` is the reference level */
	size_t npairs;
	size_t *base, *new;   /* npairs cell indexes: the pair differs only in `factor` */
	double *gain;         /* npairs gains, > 1: `to` better */
	double geomean, min, max;
	double u;             /* half-width of the 95% CI of log(geomean), NaN unknown */
	size_t ninter;
	struct interaction *inter;  /* by other factor, then level, declared order */
	double spread;        /* per other factor: max / min of the sub-geomeans (>= 1) */
};

/* The effect of every non-reference level of every factor against the
 * reference level ref[f] (the baseline's level, else 0), over all matched
 * pairs, with two-factor breakdowns. Effects are returned sorted by
 * |log(geomean)|, largest first; effects with no pair are left out. */
struct effect *effects_compute(const struct cellset *cs, const size_t *ref, int higher_better,
			       size_t *neffects);
void effects_free(struct effect *e, size_t n);

/* One row of an improvement table: the points of one group (levels of the
 * `by` factors) measured at `from` and at `to`, everything else equal. */
struct improvement {
	size_t *group;        /* nby level indexes */
	size_t npairs;
	double base, new;     /* geometric means over the pairs, stored units */
	double pct;           /* improvement_pct(base, new) */
	double pct_lo, pct_hi;/* 95% interval from the points' CIs; NaN unknown */
};

struct improvement *improvements_compute(const struct cellset *cs, size_t factor, size_t from,
					 size_t to, const size_t *by, size_t nby,
					 int higher_better, size_t *nrows);
void improvements_free(struct improvement *rows, size_t n);

/* Best configuration per group. A group is an assignment of the `group`
 * factors (those the baseline leaves free); its baseline is the cell at
 * base_level[f] for every other factor. */
struct best {
	size_t *group;        /* ngroup level indexes */
	long best;            /* cell index */
	long baseline;        /* cell index or -1 when the baseline was not measured */
	double gain;          /* best over baseline (> 1 better), NaN without baseline */
	double gain_u;        /* half-width of the 95% CI of log(gain), NaN unknown */
	long runner_up;       /* second best cell, -1 when none */
	int clear;            /* 1 when best's interval lies beyond runner_up's */
	size_t ncells;        /* cells measured in the group */
};
struct best *best_compute(const struct cellset *cs, const size_t *group, size_t ngroup,
			  const long *base_level, int higher_better, size_t *nrows,
			  long **cell_group);
void best_free(struct best *b, size_t n);
/* How many of the n groups' gains (best over a baseline that differs from
 * it, with an interval) compare a point measured in one process (ci_kind
 * within, cellset_pair_within); *gains: how many gains have an interval. */
size_t best_within(const struct cellset *cs, const struct best *b, size_t n, size_t *gains);

/* Scaling against a numeric factor (gpus): for each series (the other
 * factors' levels), throughput at each count and the scale efficiency (the
 * seeds' scale factor) thr(n) / (n * thr(1)), where the series' 1-GPU point
 * has a throughput (base_ok; NaN otherwise). */
struct scaling_point {
	long cell;
	double count;         /* n */
	double thr;           /* samples/s */
	double ideal;         /* (n / n0) * thr(n0) */
	double scale;         /* thr / ideal */
	double u;             /* half-width of the 95% CI of log(thr); NaN unknown */
	double scale_u;       /* the same for log(scale): thr's and thr(n0)'s in
	                       * quadrature (two processes); 0 at n0 itself */
};
struct scaling_series {
	long first;           /* a cell of the series (for its other levels) */
	int base_ok;          /* its 1-GPU point has a throughput; else ideal, scale and
	                       * scale_u are NaN (no scale efficiency without it) */
	size_t npoints;
	struct scaling_point *pt;   /* by increasing count */
};
struct scaling_series *scaling_compute(const struct cellset *cs, size_t factor,
				       const double *count, size_t *nseries);
void scaling_free(struct scaling_series *s, size_t n);

#endif
