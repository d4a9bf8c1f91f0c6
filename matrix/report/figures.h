/* figures.h - the report's figures (report_figures.c): scatter, normalised,
 * bars, scaling, effects and best, their data files and gnuplot scripts.
 * Above tables.h and plot.h. */
#ifndef MATRIX_REPORT_FIGURES_H
#define MATRIX_REPORT_FIGURES_H

#include <stdio.h>

#include "model.h"
#include "plot.h"
#include "tables.h"

void report_figures_build(const struct run *run, const struct report_tables *rt,
			  const char *plotdir, struct plot_set *ps, FILE *err);

#endif
