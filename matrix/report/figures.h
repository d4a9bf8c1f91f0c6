/* figures.h - the report's figures (report_figures.c): scatter, normalised,
 * bars, scaling, effects and best, their data files and gnuplot scripts.
 * Above tables.h and plot.h. */
#ifndef MATRIX_REPORT_FIGURES_H
#define MATRIX_REPORT_FIGURES_H

#include <stdio.h>

#include "model.h"
#include "plot.h"
#include "tables.h"

/* Every figure of the run into plotdir, prepared in ps (drawn by
 * plot_run_all). cli: the command line's facets (matrix report --where,
 * --panels), added to every scatter, normalised scatter, bars and best
 * figure, or NULL. */
void report_figures_build(const struct run *run, const struct report_tables *rt, const char *plotdir,
			  const struct report_facet *cli, struct plot_set *ps, FILE *err);

#endif
