/* report.h - turn a run directory into figures, tables, report.md and
 * report.html (`matrix report`; report.c). The top of report/: each level
 * includes only the ones before it (matrix/README.md, "Dependencies"):
 *   stats.h     numeric statistics: a point's interval, tests, medians
 *   quality.h   measurement quality of the rows of results.csv
 *   cellset.h   cells: one per distinct assignment of levels, repeats merged
 *   model.h     a loaded run: recipe, metric, cells, failures (report_load.c)
 *   effects.h   effects, interactions, improvements, best, scaling
 *   rtable.h    one table as CSV, Markdown, HTML (report_table.c)
 *   tables.h    the report's tables (report_tables.c)
 *   plot.h      gnuplot from C: templates, scripts, quoting, running
 *   facets.h    a figure's where, panels and numeric axes (report_facets.c)
 *   figures.h   the report's figures (report_figures.c)
 *   pages.h     report.md and report.html (report_html.c, report_quality.c)
 *   report.h    report_write: the whole report of one directory
 * and the commands (cmd_report.c, cmd_compare.c, cmd_export.c) above all. */
#ifndef MATRIX_REPORT_H
#define MATRIX_REPORT_H

#include <stdio.h>

/* Write DIR/tables/<name>.csv, DIR/plots/<name>.svg and .png, DIR/report.md and
 * DIR/report.html from DIR/recipe.yaml and DIR/results.csv. Messages go to
 * err. Returns 0 when everything was written, 2 when the directory cannot be
 * reported on (no recipe, no results), 1 when the tables and pages were
 * written but some figure could not be drawn (gnuplot missing or failing). */
int report_write(const char *dir, FILE *err);
/* The same with another metric than the recipe's (NULL: the recipe's). */
int report_write_metric(const char *dir, const char *metric, FILE *err);
/* What `matrix report` may change: the metric (NULL: the recipe's), and
 * facets added to every scatter, normalised scatter, bars and best figure:
 * where[0..nwhere-1] as FACTOR=LEVEL[,LEVEL...], panels as
 * FACTOR[,FACTOR] (NULL: none). A facet that names an unknown factor or
 * level is an error (2) before anything is written. */
struct report_opts {
	const char *metric;
	char *const *where;
	size_t nwhere;
	const char *panels;
	int quiet;            /* a merged directory's notes: only the warnings */
};
int report_write_opts(const char *dir, const struct report_opts *o, FILE *err);

#endif
