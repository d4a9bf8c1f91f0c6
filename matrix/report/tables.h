/* tables.h - the report's tables from a loaded run (report_tables.c):
 * effects, interactions, improvements, best configuration, scaling,
 * failures. Above model.h, effects.h and rtable.h; the figures and pages
 * draw on what it computed. */
#ifndef MATRIX_REPORT_TABLES_H
#define MATRIX_REPORT_TABLES_H

#include <stddef.h>

#include "effects.h"
#include "model.h"
#include "rtable.h"

/* The report's tables, in order: factorial effects (with a design: key,
 * factorial.h), effects, interactions, improvements (long
 * form, then one table in the form of the compile study per `improvements:`
 * entry with two or more `by` factors), best, scaling (when the recipe has a
 * gpus factor), points, the per-op profiles (profile: on, profiles.h),
 * failures. */
struct report_tables {
	size_t n;
	struct rtable *t[18];
	struct effect *effects;
	size_t neffects;
	struct best *best;
	size_t nbest;
	long *cell_group;     /* cell -> index in best[], -1 */
	struct scaling_series *scaling;
	size_t nscaling;
	long scaling_factor;  /* -1 when none */
	double *scaling_count;
	long scatter_x;       /* default x of figures: model, else the factor with most levels */
	struct rtable *per_point; /* the table that opens the pages: every point, the
				   * factors that vary, value, interval, status */
};
void report_tables_build(const struct run *run, struct report_tables *rt);
/* The per-point table alone (rt->per_point; `matrix export --format
 * markdown`): the factors that vary, the metric with its 95% interval
 * ("LO .. HI"), the status, every point in the recipe's level order. */
struct rtable *report_per_point_table(const struct run *run);
void report_tables_free(struct report_tables *rt);
/* Format a number for a table: every digit (fmt_full), or "" for NaN and
 * the infinities (the pages show 3 significant digits of the columns that
 * rtable marks sig; the CSV files keep every digit). */
char *fmt_num(double v);

#endif
