/* plot.h - gnuplot from C (plot.c): templates, scripts, quoting, and running
 * gnuplot on a set of figures. Knows nothing of runs: the report's figures
 * (figures.h) fill it. */
#ifndef MATRIX_REPORT_PLOT_H
#define MATRIX_REPORT_PLOT_H

#include <stddef.h>
#include <stdio.h>

struct strbuf;

/* Where the templates are: $MATRIX_PLOTS_DIR, else <bindir>/../share/matrix/plots,
 * else the source tree's plots/. NULL when none has style.gp. */
const char *plot_templates_dir(void);
/* The gnuplot to run: $GNUPLOT when set and not empty, else "gnuplot". */
const char *plot_gnuplot(void);
/* The Okabe-Ito colour of series i ("#0072B2"). */
const char *plot_color(size_t i);

struct plot {
	char *name;           /* file stem: plots/<name>.{dat,gp,svg,png} */
	char *title;
	char *caption;
	int drawn;            /* 1 when the svg exists and is not empty */
	char *why;            /* why it was not drawn, or NULL */
	int empty;            /* not drawn because no point is left to draw (a note, not a failure) */
};

struct plot_set {
	size_t n, cap;
	struct plot *p;
	int failed;           /* some figure could not be drawn */
	char *why;            /* the first reason, for the report */
};

/* Write plotdir/<name>.gp from the templates style.gp and <tmpl>.gp with the
 * @KEY@ substitutions kv[0], kv[1], ... (nkv pairs; @NAME@, @WIDTH@ and
 * @HEIGHT@ are added) and add the figure to ps, to be drawn by plot_run_all.
 * The data, plotdir/<name>.dat, is written by the caller. Returns 0, or -1
 * after recording why in ps. */
int plot_prepare(struct plot_set *ps, const char *plotdir, const char *name, const char *title,
		 const char *caption, const char *tmpl, const char *const *kv, size_t nkv,
		 int width, int height);
/* Add a figure that has nothing to draw (its where: keeps no measured
 * point): the pages say why; it is no failure. */
void plot_note_empty(struct plot_set *ps, const char *name, const char *title, const char *caption,
		     const char *why);
/* Run gnuplot on every prepared figure (a few at a time) to write <name>.svg
 * and <name>.png; marks each figure drawn or records why not. Returns the
 * number of figures not drawn. */
size_t plot_run_all(struct plot_set *ps, const char *plotdir, FILE *err);
/* Escape text for a gnuplot double-quoted string (whitelist: every other
 * byte as an octal escape), shown as it is in enhanced text; _tic for a tic
 * label, which gnuplot also reads as a format. */
void plot_quote(struct strbuf *sb, const char *s);
void plot_quote_tic(struct strbuf *sb, const char *s);
void plot_set_free(struct plot_set *ps);

#endif
