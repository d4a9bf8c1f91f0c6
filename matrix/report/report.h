/* report.h - turn a run directory into figures, tables, report.md and
 * report.html (`matrix report`), and compare two runs (`matrix compare`).
 * See DESIGN.md, "Report".
 *
 * The work is split by concept:
 *   effects.c        pure computation over a set of cells (points with their
 *                    repeats merged): matched pairs, effects, interactions,
 *                    improvements, best configuration, scaling, statistics
 *   report_load.c    a run directory -> struct run (recipe, cells, failures)
 *   report_table.c   struct rtable: one table, written as CSV, Markdown, HTML
 *   report_tables.c  the report's tables from a struct run
 *   plot.c           gnuplot from C: templates, data files, scripts, jitter
 *   report_figures.c the report's figures
 *   report_html.c    report.md and report.html
 *   report.c         report_write: the whole report of one directory */
#ifndef MATRIX_REPORT_H
#define MATRIX_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "plan/recipe.h"

/* Write DIR/tables/<name>.csv, DIR/plots/<name>.svg and .png, DIR/report.md and
 * DIR/report.html from DIR/recipe.yaml and DIR/results.csv. Messages go to
 * err. Returns 0 when everything was written, 2 when the directory cannot be
 * reported on (no recipe, no results), 1 when the tables and pages were
 * written but some figure could not be drawn (gnuplot missing or failing). */
int report_write(const char *dir, FILE *err);
/* The same with another metric than the recipe's (NULL: the recipe's). */
int report_write_metric(const char *dir, const char *metric, FILE *err);

/* ---- metrics ------------------------------------------------------------- */

struct metric {
	char *name;           /* results.csv column or `extra` key */
	int higher_better;    /* 1: throughput-like, 0: time- or memory-like */
	char *unit;           /* "samples/s", "ms", "MiB", ... ("" when unknown) */
	double scale;         /* multiply stored values by this for display */
	int has_ci;           /* 1 when step_ms_lo/hi give its confidence interval */
};

/* Describe the metric called name; unit_hint is the `unit` column of a row
 * (used for throughput), may be NULL. Free with metric_free. */
void metric_describe(struct metric *m, const char *name, const char *unit_hint);
void metric_free(struct metric *m);
/* "throughput (samples/s)" into a static buffer. */
const char *metric_label(const struct metric *m);

/* ---- cells: one per distinct assignment of levels, repeats merged ---------- */

struct cellset {
	size_t nfactors;
	size_t *nlevels;      /* nfactors entries */
	size_t ncells;
	size_t cap;
	size_t *level;        /* ncells * nfactors level indexes */
	double *value;        /* metric (stored units), > 0 and finite */
	double *u;            /* half-width of the 95% CI of log(value); NaN unknown */
	double *thr;          /* throughput (samples/s) for scaling; NaN when absent */
	size_t *nrep;         /* repeats (fresh processes) merged into the cell */
	double **rep;         /* nrep process-level values each (stored units), or NULL */
	unsigned char *kind;  /* enum ci_kind of u */
	char (*id)[17];       /* id of the cell's first row ("" when none) */
	size_t hcap;          /* open-addressing index: 0 empty, else cell + 1 */
	size_t *slot;
};

void cellset_init(struct cellset *cs, size_t nfactors, const size_t *nlevels);
/* Add a cell (levels copied); returns its index. Existing assignments are not
 * merged here: call cellset_find first. */
size_t cellset_add(struct cellset *cs, const size_t *level, double value, double u, double thr,
		   const char *id);
/* Give cell c its process-level values (copied) and, from them and their
 * within-process half-widths w (NaN unknown; w may be NULL), its value, u
 * and kind by stat_point. */
void cellset_set_repeats(struct cellset *cs, size_t c, const double *v, const double *w, size_t k);
/* Index of the cell with exactly these levels, or -1. */
long cellset_find(const struct cellset *cs, const size_t *level);
/* Put the cells in the order of their level vectors (declared order), so
 * that what is derived from them does not depend on the order rows came in. */
void cellset_sort(struct cellset *cs);
void cellset_free(struct cellset *cs);
#define CELL_LEVEL(cs, c, f) ((cs)->level[(size_t)(c) * (cs)->nfactors + (f)])

/* ---- statistics (stats.c, effects.c) ------------------------------------------ */

/* What a point's interval covers: nothing known, the noise inside one process
 * only (K = 1), or the variation between K >= 2 fresh processes. */
enum ci_kind { CI_NONE, CI_WITHIN, CI_BETWEEN };
const char *ci_kind_name(enum ci_kind k); /* "", "within", "between" */

/* Below this many processes the within-process half-width is added (in
 * quadrature) to the between-process one. */
#define STAT_WIDEN_BELOW 10

struct point_est {
	double value;         /* median of the K process values */
	double u;             /* half-width of the 95% CI of log(value); NaN unknown */
	enum ci_kind kind;
};
/* The estimate of a point from its K process values v (> 0) and their
 * within-process half-widths w (log scale, NaN unknown; w may be NULL):
 * median, and a Student t interval on the log values widened by the median
 * w while K < STAT_WIDEN_BELOW and recentred on the median; K = 1: w[0]. */
void stat_point(const double *v, const double *w, size_t k, struct point_est *pe);
/* The 0.975 quantile of Student's t with df degrees of freedom (NaN for 0). */
double stat_t975(size_t df);
/* Two-sided p of the Mann-Whitney U test of a against b (exact without ties
 * up to 30 values a side, else normal with continuity correction); *u_out,
 * when not NULL, receives U of a (pairs a_i > b_j, ties one half). */
double stat_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *u_out);
/* The smallest two-sided p the exact test can give: 2 / C(na + nb, na). */
double stat_mw_min_p(size_t na, size_t nb);

/* The improvement of new over base, in percent, the one formula of every
 * table: time-like metrics (lower is better) 100 * (base - new) / base, the
 * reduction; throughput-like metrics (higher is better) 100 * (new - base) /
 * base, the gain. IMPROVEMENT_FORMULA says the same in words. */
double improvement_pct(double base, double new, int higher_better);
#define IMPROVEMENT_FORMULA \
	"improvement % = 100 * (base - new) / base on a time-like metric (lower is better: the " \
	"reduction), 100 * (new - base) / base on a throughput-like metric (higher is better: the gain)"

/* Median of n values (the array is sorted in place); NaN when n == 0. */
double stat_median(double *v, size_t n);
/* Geometric mean of n positive values; NaN when n == 0. */
double stat_geomean(const double *v, size_t n);
/* Half-width of the 95% CI of log(value) from a CI [lo, hi]; NaN when unknown. */
double stat_log_halfwidth(double lo, double hi);
/* Deterministic jitter in [-width/2, width/2] from the hash of a point id. */
double stat_jitter(const char *id, double width);

/* ---- effects: what each setting buys --------------------------------------- */

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

/* Scaling against a numeric factor (gpus): for each series (the other
 * factors' levels), throughput at each count and the scale factor
 * thr(n) / ((n / n0) * thr(n0)) against the smallest count n0 measured. */
struct scaling_point {
	long cell;
	double count;         /* n */
	double thr;           /* samples/s */
	double ideal;         /* (n / n0) * thr(n0) */
	double scale;         /* thr / ideal */
};
struct scaling_series {
	long first;           /* a cell of the series (for its other levels) */
	size_t npoints;
	struct scaling_point *pt;   /* by increasing count */
};
struct scaling_series *scaling_compute(const struct cellset *cs, size_t factor,
				       const double *count, size_t *nseries);
void scaling_free(struct scaling_series *s, size_t n);

/* ---- measurement quality (quality.c) ------------------------------------------ */

struct table;
struct quality_note {
	char *id;
	char *label;          /* the point's levels, "model=x batch=1" */
	char *what;           /* why it is listed */
};
struct quality {
	size_t ok_rows;
	size_t ci_known;      /* ok rows that say whether they met the CI target */
	size_t ci_missed;     /* ... and did not */
	size_t disagree;      /* points whose repeats disagree beyond their CIs */
	size_t oversub;       /* rows run with concurrent points x threads > cores */
	size_t throttled;     /* rows whose GPU throttled */
	size_t busy;          /* rows started with a load average above the cores */
	double rel_ci_target; /* the recipe's measure.rel_ci (fraction) */
	double load_min, load_max;        /* load average at start; NaN unknown */
	double mhz_min, mhz_max;          /* CPU clock at start and end, MHz */
	double gpu_mhz_min, gpu_mhz_max;  /* GPU SM clock at start and end, MHz */
	double gpu_temp_max;              /* GPU temperature, degrees C */
	size_t nnotes;
	struct quality_note *notes;
};
/* Look at every row of results.csv t of recipe rc. */
void quality_scan(const struct table *t, const struct recipe *rc, struct quality *q);
/* "measurement quality: 3 of 64 measured rows missed ..." (no newline). */
struct strbuf;
void quality_summary(const struct quality *q, struct strbuf *sb);
void quality_free(struct quality *q);
/* A row's value of key: its column, else the key in its `extra` cell; NULL
 * when absent or empty (allocated). */
char *table_value(const struct table *t, size_t r, const char *key);
/* The same as a finite number: 0, or -1 when absent or not a number. */
int table_number(const struct table *t, size_t r, const char *key, double *out);

/* ---- a loaded run ---------------------------------------------------------- */

struct failure {
	char *id;
	char **levels;        /* nfactors level names as written */
	char *status;         /* ok (but no metric) | unsupported | failed | ... */
	char *reason;
};

struct run {
	char *dir;
	struct recipe recipe;
	struct metric metric;
	struct cellset cells;
	size_t rows;          /* rows read from results.csv */
	size_t ok_rows;       /* rows with status ok and a metric */
	size_t nfailures;
	struct failure *failures;
	long torn_offset;     /* >= 0 when the last line was torn (run going) */
	char *command_example;/* the command of the first ok row, or NULL */
	size_t *ref;          /* reference level per factor (baseline, else 0) */
	long *base_level;     /* baseline level per factor, -1 where free */
	size_t *group;        /* factors that define best-per-group groups */
	size_t ngroup;
	struct quality quality;
	size_t max_rep;       /* the most processes any point was measured in */
};

/* Load DIR (recipe.yaml, results.csv). metric: NULL for the recipe's.
 * Returns 0; 2 after printing why to err. */
int run_load(struct run *run, const char *dir, const char *metric, FILE *err);
void run_free(struct run *run);
/* "model=resnet50 batch=64" for the factors of cell c whose index is listed in
 * fs (all factors when fs is NULL), into sb. */
struct strbuf;
void run_cell_label(const struct run *run, size_t c, const size_t *fs, size_t nf,
		    const char *sep, struct strbuf *sb);
const char *run_level(const struct run *run, size_t f, size_t l);

/* ---- tables ---------------------------------------------------------------- */

struct rtable {
	char *name;           /* file name stem: tables/<name>.csv */
	char *title;
	char *caption;        /* may be NULL */
	size_t ncols;
	char **cols;
	size_t nrows, cap;
	char **cell;          /* nrows * ncols, NULL for empty */
	size_t *align_right;  /* ncols flags: numeric columns */
};

struct rtable *rtable_new(const char *name, const char *title, size_t ncols, const char *const *cols);
/* Append a row of ncols cells (copied; NULL for empty). */
void rtable_add(struct rtable *t, char *const *cells);
int rtable_write_csv(const struct rtable *t, const char *path);
/* Markdown / HTML: at most max_rows rows (0: all), with a note of the rest. */
void rtable_markdown(const struct rtable *t, size_t max_rows, struct strbuf *sb);
void rtable_html(const struct rtable *t, size_t max_rows, struct strbuf *sb);
void rtable_free(struct rtable *t);
/* Escape text for HTML content and attribute values. */
void html_escape(struct strbuf *sb, const char *s);

/* The report's tables, in order: effects, interactions, improvements (long
 * form, then one table in the form of the compile study per `improvements:`
 * entry with two or more `by` factors), best, scaling (when the recipe has a
 * gpus factor), failures. */
struct report_tables {
	size_t n;
	struct rtable *t[16];
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
};
void report_tables_build(const struct run *run, struct report_tables *rt);
void report_tables_free(struct report_tables *rt);
/* Format a number for a table: %.6g, or "" for NaN. */
char *fmt_num(double v);

/* ---- figures ---------------------------------------------------------------- */

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
/* Run gnuplot on every prepared figure (a few at a time) to write <name>.svg
 * and <name>.png; marks each figure drawn or records why not. Returns the
 * number of figures not drawn. */
size_t plot_run_all(struct plot_set *ps, const char *plotdir, FILE *err);
/* Escape text for a gnuplot double-quoted string (whitelist: every other
 * byte as an octal escape), shown as it is in enhanced text; _tic for a tic
 * label, which gnuplot also reads as a format. */
void plot_quote(struct strbuf *sb, const char *s);
void plot_quote_tic(struct strbuf *sb, const char *s);

void report_figures_build(const struct run *run, const struct report_tables *rt,
			  const char *plotdir, struct plot_set *ps, FILE *err);
void plot_set_free(struct plot_set *ps);

/* ---- pages ------------------------------------------------------------------- */

/* Text of a section: paragraphs and list items, rendered by each page. */
struct paras {
	size_t n;
	char **text;          /* plain text */
	int *item;            /* 1: a list item, 0: a paragraph */
};
void paras_free(struct paras *ps);
/* "Measurement quality": the summary, interval kinds, points to doubt. */
void report_quality_paras(const struct run *run, struct paras *ps);
/* "Uncertainty": how the intervals are computed, a worked example from
 * this run, how they propagate, the improvement formula, compare's rule. */
void report_method_paras(const struct run *run, struct paras *ps);

int report_markdown_write(const struct run *run, const struct report_tables *rt,
			  const struct plot_set *ps, const char *path);
int report_html_write(const struct run *run, const struct report_tables *rt,
		      const struct plot_set *ps, const char *plotdir, const char *path);

#endif
