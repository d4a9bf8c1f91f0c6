/* report_figures.c - the report's figures: scatter (one per `scatter:` entry,
 * or a default set), normalised scatter, grouped bars, scaling, effects and
 * baseline vs optimal. Each writes plots/<name>.dat and prepares
 * plots/<name>.gp; plot_run_all draws them. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "figures.h"
#include "stats.h"
#include "util.h"

#define FIG_W 960
#define FIG_H 540

static const char *fname(const struct run *run, size_t f)
{
	return run->recipe.factors[f].name;
}

static int write_dat(const char *plotdir, const char *name, const struct strbuf *sb)
{
	char *path = xasprintf("%s/%s.dat", plotdir, name);
	int rc = write_file_atomic(path, sb->buf ? sb->buf : "", sb->len);
	free(path);
	return rc;
}

/* Text in a data file: a tab or a line break would make it two fields or
 * two rows, so control characters are written as spaces. gnuplot only reads
 * a '#' at the start of a line as a comment: text goes in the last column. */
static void dat_text(struct strbuf *sb, const char *s)
{
	for (; *s; s++)
		sb_putc(sb, (unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s);
}

/* ("a" 0, "b" 1, ...) for the levels of factor f. */
static void level_tics(const struct run *run, size_t f, struct strbuf *sb)
{
	for (size_t l = 0; l < run->recipe.factors[f].nlevels; l++) {
		if (l)
			sb_puts(sb, ", ");
		sb_putc(sb, '"');
		plot_quote_tic(sb, run_level(run, f, l));
		sb_printf(sb, "\" %zu", l);
	}
}

static char *quoted(const char *s)
{
	struct strbuf sb = {0};
	plot_quote(&sb, s);
	return sb.buf ? sb.buf : xstrdup("");
}

static const char *point_type(size_t i)
{
	static const char *const pts[] = {"7", "5", "9", "11", "13", "15"};
	return pts[(i / 8) % ARRAY_SIZE(pts)];
}

/* A scatter of cells: x = level of factor x (jittered), y = y[c] (NaN: left
 * out), colour = level of factor color (-1: one colour). */
static void scatter(const struct run *run, const char *plotdir, struct plot_set *ps, const char *name,
		    const char *title, const char *caption, size_t x, long color, const double *y,
		    const char *ylabel, const char *extra)
{
	const struct cellset *cs = &run->cells;
	size_t ncol = color >= 0 ? run->recipe.factors[color].nlevels : 1;
	struct strbuf dat = {0}, plot = {0}, tics = {0};
	size_t blocks = 0;
	for (size_t k = 0; k < ncol; k++) {
		size_t n = 0;
		for (size_t c = 0; c < cs->ncells; c++) {
			if (isnan(y[c]) || (color >= 0 && CELL_LEVEL(cs, c, color) != k))
				continue;
			if (n == 0 && blocks)
				sb_puts(&dat, "\n\n");
			sb_printf(&dat, "%.4f\t%.6g\t%s\n",
				  (double)CELL_LEVEL(cs, c, x) + stat_jitter(cs->id[c], 0.6), y[c], cs->id[c]);
			n++;
		}
		if (n == 0)
			continue;
		if (blocks)
			sb_puts(&plot, ", \\\n     ");
		sb_printf(&plot, "\"%s.dat\" index %zu using 1:2 with points pt %s ps 0.8 lc rgb \"%s\" title \"",
			  name, blocks, point_type(k), plot_color(k));
		plot_quote(&plot, color >= 0 ? run_level(run, (size_t)color, k) : "point");
		sb_puts(&plot, "\"");
		blocks++;
	}
	if (!blocks) {
		sb_free(&dat);
		sb_free(&plot);
		return;
	}
	level_tics(run, x, &tics);
	char xmax[32];
	snprintf(xmax, sizeof(xmax), "%g", (double)run->recipe.factors[x].nlevels - 0.5);
	char *t = quoted(title), *xl = quoted(fname(run, x)), *yl = quoted(ylabel);
	char *kt = quoted(color >= 0 ? fname(run, (size_t)color) : "");
	struct strbuf ex = {0};
	sb_puts(&ex, extra ? extra : "");
	if (run->recipe.factors[x].nlevels > 6)
		sb_puts(&ex, "\nset xtics rotate by -30");
	const char *kv[] = {"TITLE", t, "XLABEL", xl, "YLABEL", yl, "XTICS", tics.buf, "XMAX", xmax,
			    "KEYTITLE", kt, "EXTRA", ex.buf ? ex.buf : "", "PLOT", plot.buf};
	if (write_dat(plotdir, name, &dat) == 0)
		plot_prepare(ps, plotdir, name, title, caption, "scatter", kv, ARRAY_SIZE(kv) / 2, FIG_W, FIG_H);
	free(t);
	free(xl);
	free(yl);
	free(kt);
	sb_free(&ex);
	sb_free(&dat);
	sb_free(&plot);
	sb_free(&tics);
}

/* Colour factors for the default scatters: by size of their largest effect. */
static size_t default_colors(const struct run *run, const struct report_tables *rt, size_t x,
			     size_t *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < rt->neffects && n < max; i++) {
		size_t f = rt->effects[i].factor;
		size_t k;
		for (k = 0; k < n && out[k] != f; k++)
			;
		if (f != x && k == n)
			out[n++] = f;
	}
	return n;
}

static void scatters(const struct run *run, const struct report_tables *rt, const char *plotdir,
		     struct plot_set *ps, long *first_x, long *first_color)
{
	const struct report_spec *spec = &run->recipe.report;
	const struct cellset *cs = &run->cells;
	double *y = xmalloc((cs->ncells ? cs->ncells : 1) * sizeof(double));
	for (size_t c = 0; c < cs->ncells; c++)
		y[c] = cs->value[c] * run->metric.scale;
	char ylabel[300];
	snprintf(ylabel, sizeof(ylabel), "%s, log scale", metric_label(&run->metric));
	*first_x = -1;
	*first_color = -1;
	size_t nspec = spec->nscatter;
	size_t colors[6];
	size_t ndef = 0;
	if (!nspec && rt->scatter_x >= 0)
		ndef = default_colors(run, rt, (size_t)rt->scatter_x, colors, 6);
	size_t total = nspec ? nspec : ndef;
	if (!nspec && rt->scatter_x >= 0 && ndef == 0)
		total = 1; /* one scatter, one colour */
	for (size_t i = 0; i < total; i++) {
		size_t x = nspec ? (size_t)spec->scatter[i].x : (size_t)rt->scatter_x;
		long color = nspec ? spec->scatter[i].color : (ndef ? (long)colors[i] : -1);
		if (i == 0) {
			*first_x = (long)x;
			*first_color = color;
		}
		char *name = color >= 0 ? xasprintf("scatter_%s_%s", fname(run, x), fname(run, (size_t)color))
					: xasprintf("scatter_%s", fname(run, x));
		char *title = color >= 0 ? xasprintf("%s by %s, coloured by %s", run->metric.name,
						     fname(run, x), fname(run, (size_t)color))
					 : xasprintf("%s by %s", run->metric.name, fname(run, x));
		char *cap = xasprintf("One dot per measured point (%zu), jittered sideways; %s.",
				      cs->ncells, run->metric.higher_better ? "higher is better" : "lower is better");
		scatter(run, plotdir, ps, name, title, cap, x, color, y, ylabel, NULL);
		free(name);
		free(title);
		free(cap);
	}
	free(y);
}

static void normalised(const struct run *run, const struct report_tables *rt, const char *plotdir,
		       struct plot_set *ps, long x, long color)
{
	const struct cellset *cs = &run->cells;
	if (x < 0 || !rt->nbest)
		return;
	double *y = xmalloc((cs->ncells ? cs->ncells : 1) * sizeof(double));
	size_t n = 0;
	for (size_t c = 0; c < cs->ncells; c++) {
		long g = rt->cell_group[c];
		long b = g >= 0 ? rt->best[g].baseline : -1;
		y[c] = b >= 0 ? effects_gain(cs->value[b], cs->value[c], run->metric.higher_better) : NAN;
		n += !isnan(y[c]);
	}
	if (n > 0) {
		char *title = xasprintf("gain over the baseline of each point's group, by %s", fname(run, (size_t)x));
		char *cap = xasprintf("Each point's %s relative to its group's baseline (groups: %s); "
				      "> 1 is better than the baseline; dashed: the baseline.",
				      run->metric.name, run->ngroup ? "the factors the baseline leaves free" : "all points");
		const char *extra = "set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.2 lc rgb \"#555555\" back";
		scatter(run, plotdir, ps, "normalised", title, cap, (size_t)x, color, y,
			"gain over the group's baseline (×, log scale)", extra);
		free(title);
		free(cap);
	}
	free(y);
}

/* One bar: the geometric mean of the points at level l of x and level g of
 * group (any when group < 0), with its whiskers, appended to row as three
 * columns (NaN when no point). buf has room for every cell. Returns 1 when
 * some point was there. */
static int bar_cell(const struct run *run, size_t x, long group, size_t l, size_t g, double *buf,
		    struct strbuf *row)
{
	const struct cellset *cs = &run->cells;
	size_t n = 0;
	long one = -1;
	double lo = INFINITY, hi = 0;
	for (size_t c = 0; c < cs->ncells; c++)
		if (CELL_LEVEL(cs, c, x) == l && (group < 0 || CELL_LEVEL(cs, c, group) == g)) {
			double v = cs->value[c] * run->metric.scale;
			buf[n++] = v;
			one = (long)c;
			if (v < lo)
				lo = v;
			if (v > hi)
				hi = v;
		}
	if (!n) {
		sb_puts(row, "\tNaN\tNaN\tNaN");
		return 0;
	}
	double gm = stat_geomean(buf, n);
	if (n == 1 && !isnan(cs->u[one])) {
		lo = gm * exp(-cs->u[one]);
		hi = gm * exp(cs->u[one]);
	}
	sb_printf(row, "\t%.6g\t%.6g\t%.6g", gm, lo, hi);
	return 1;
}

/* The data of the bars into dat: a heading, then a row per level of x that
 * has a point; used[g] = 1 for each group level that has one. Returns the
 * number of rows. */
static size_t bars_data(const struct run *run, size_t x, long group, size_t ng, unsigned char *used,
			struct strbuf *dat)
{
	const struct cellset *cs = &run->cells;
	double *buf = xmalloc((cs->ncells ? cs->ncells : 1) * sizeof(double));
	size_t rows = 0;
	sb_puts(dat, "# x");
	for (size_t g = 0; g < ng; g++) {
		sb_putc(dat, '\t');
		dat_text(dat, group >= 0 ? run_level(run, (size_t)group, g) : "value");
		sb_puts(dat, "\tlow\thigh");
	}
	sb_puts(dat, "\tlabel\n");
	for (size_t l = 0; l < run->recipe.factors[x].nlevels; l++) {
		struct strbuf row = {0};
		int any = 0;
		sb_printf(&row, "%zu", l);
		for (size_t g = 0; g < ng; g++)
			if (bar_cell(run, x, group, l, g, buf, &row)) {
				used[g] = 1;
				any = 1;
			}
		if (any) {
			sb_putc(&row, '\t');
			dat_text(&row, run_level(run, x, l));
			sb_puts(dat, row.buf);
			sb_putc(dat, '\n');
			rows++;
		}
		sb_free(&row);
	}
	free(buf);
	return rows;
}

/* The gnuplot plot command of the bars of data file name.dat: a series per
 * used group level. Returns the number of series. */
static size_t bars_series(const struct run *run, const char *name, long group, size_t ng,
			  const unsigned char *used, struct strbuf *plot)
{
	size_t k = 0;
	for (size_t g = 0; g < ng; g++) {
		if (!used[g])
			continue;
		if (k)
			sb_puts(plot, ", \\\n     ");
		sb_printf(plot, "\"%s%s\" using %zu:%zu:%zu", k ? "" : name, k ? "" : ".dat", 2 + 3 * g,
			  3 + 3 * g, 4 + 3 * g);
		if (!k)
			sb_printf(plot, ":xtic(%zu)", 2 + 3 * ng);
		sb_printf(plot, " lc rgb \"%s\" title \"", plot_color(g));
		plot_quote(plot, group >= 0 ? run_level(run, (size_t)group, g) : run->metric.name);
		sb_putc(plot, '"');
		k++;
	}
	return k;
}

/* Grouped bars: geometric mean of the metric at each (x level, group level). */
static void bars(const struct run *run, const char *plotdir, struct plot_set *ps, size_t x, long group)
{
	size_t ng = group >= 0 ? run->recipe.factors[group].nlevels : 1;
	struct strbuf dat = {0}, plot = {0};
	unsigned char *used = xcalloc(ng, 1);
	size_t rows = bars_data(run, x, group, ng, used, &dat);
	char *name = group >= 0 ? xasprintf("bars_%s_%s", fname(run, x), fname(run, (size_t)group))
				: xasprintf("bars_%s", fname(run, x));
	size_t k = bars_series(run, name, group, ng, used, &plot);
	if (rows && k) {
		char *title = group >= 0 ? xasprintf("%s by %s and %s", run->metric.name, fname(run, x),
						     fname(run, (size_t)group))
					 : xasprintf("%s by %s", run->metric.name, fname(run, x));
		char *cap = xasprintf("Geometric mean of %s over the points at each pair of levels; whiskers: "
				      "the 95%% confidence interval for a single point, else the smallest and "
				      "largest point.", run->metric.name);
		char *t = quoted(title), *xl = quoted(fname(run, x));
		char *yl = quoted(metric_label(&run->metric));
		char *kt = quoted(group >= 0 ? fname(run, (size_t)group) : "");
		const char *extra = rows > 6 ? "set xtics rotate by -30" : "";
		const char *kv[] = {"TITLE", t, "XLABEL", xl, "YLABEL", yl, "KEYTITLE", kt,
				    "EXTRA", extra, "PLOT", plot.buf};
		if (write_dat(plotdir, name, &dat) == 0)
			plot_prepare(ps, plotdir, name, title, cap, "bars", kv, ARRAY_SIZE(kv) / 2, FIG_W, FIG_H);
		free(t);
		free(xl);
		free(yl);
		free(kt);
		free(title);
		free(cap);
	}
	free(name);
	free(used);
	sb_free(&dat);
	sb_free(&plot);
}

static void scaling(const struct run *run, const struct report_tables *rt, const char *plotdir,
		    struct plot_set *ps)
{
	if (rt->scaling_factor < 0 || !rt->nscaling)
		return;
	size_t f = (size_t)rt->scaling_factor;
	size_t *others = xmalloc(run->recipe.nfactors * sizeof(size_t));
	size_t no = 0;
	for (size_t g = 0; g < run->recipe.nfactors; g++)
		if (g != f && run->recipe.factors[g].nlevels > 1)
			others[no++] = g;
	size_t nser = rt->nscaling > 8 ? 8 : rt->nscaling;
	struct strbuf dat = {0}, plot = {0}, tics = {0}, label = {0};
	double xmin = INFINITY, xmax = 0;
	for (size_t i = 0; i < nser; i++) {
		const struct scaling_series *s = &rt->scaling[i];
		if (i)
			sb_puts(&dat, "\n\n");
		for (size_t k = 0; k < s->npoints; k++) {
			sb_printf(&dat, "%g\t%.6g\t%.6g\t%.4f\n", s->pt[k].count, s->pt[k].thr, s->pt[k].ideal,
				  s->pt[k].scale);
			if (s->pt[k].count < xmin)
				xmin = s->pt[k].count;
			if (s->pt[k].count > xmax)
				xmax = s->pt[k].count;
		}
		sb_reset(&label);
		run_cell_label(run, (size_t)s->first, others, no, " ", &label);
		if (i)
			sb_puts(&plot, ", \\\n     ");
		sb_printf(&plot,
			  "\"scaling.dat\" index %zu using 1:2 with linespoints lw 2 pt 7 lc rgb \"%s\" title \"",
			  i, plot_color(i));
		plot_quote(&plot, label.buf ? label.buf : "all");
		sb_printf(&plot,
			  "\", \\\n     \"scaling.dat\" index %zu using 1:3 with lines dt 2 lw 1.5 lc rgb \"%s\" notitle, \\\n"
			  "     \"scaling.dat\" index %zu every ::1 using 1:2:(sprintf(\"%%.2f\", $4)) with labels offset 0,1 "
			  "font \",11\" tc rgb \"%s\" notitle",
			  i, plot_color(i), i, plot_color(i));
	}
	for (size_t l = 0; l < run->recipe.factors[f].nlevels; l++) {
		if (l)
			sb_puts(&tics, ", ");
		sb_printf(&tics, "\"%g\" %g", rt->scaling_count[l], rt->scaling_count[l]);
	}
	char smin[32], smax[32];
	double pad = (xmax - xmin) * 0.08 + 0.1;
	snprintf(smin, sizeof(smin), "%g", xmin - pad);
	snprintf(smax, sizeof(smax), "%g", xmax + pad);
	char *xl = quoted(fname(run, f));
	const char *kv[] = {"TITLE", "throughput against GPU count",
			    "XLABEL", xl, "YLABEL", "throughput (samples/s)", "XTICS", tics.buf, "XMIN", smin,
			    "XMAX", smax, "EXTRA", "", "PLOT", plot.buf};
	char *cap = xasprintf("Throughput against %s for %zu series%s; dashed: ideal linear scaling from the "
			      "smallest count; numbers: scale factor, throughput over ideal.",
			      fname(run, f), nser,
			      nser < rt->nscaling ? " (the first of them; all are in tables/scaling.csv)" : "");
	if (write_dat(plotdir, "scaling", &dat) == 0)
		plot_prepare(ps, plotdir, "scaling", "Scaling with the number of GPUs", cap, "scaling", kv,
			     ARRAY_SIZE(kv) / 2, FIG_W, FIG_H);
	free(cap);
	free(xl);
	free(others);
	sb_free(&dat);
	sb_free(&plot);
	sb_free(&tics);
	sb_free(&label);
}

static void effects_figure(const struct run *run, const struct report_tables *rt, const char *plotdir,
			   struct plot_set *ps)
{
	size_t n = rt->neffects > 24 ? 24 : rt->neffects;
	if (!n)
		return;
	struct strbuf dat = {0}, tics = {0};
	const struct cellset *cs = &run->cells;
	/* block 0: every pair; block 1: geometric means */
	for (size_t i = 0; i < n; i++) {
		const struct effect *e = &rt->effects[i];
		for (size_t k = 0; k < e->npairs; k++)
			sb_printf(&dat, "%.4f\t%.6g\n", (double)i + stat_jitter(cs->id[e->new[k]], 0.5), e->gain[k]);
	}
	sb_puts(&dat, "\n\n");
	for (size_t i = 0; i < n; i++) {
		const struct effect *e = &rt->effects[i];
		sb_printf(&dat, "%zu\t%.6g\n", i, e->geomean);
		if (i)
			sb_puts(&tics, ", ");
		char *lab = xasprintf("%s: %s → %s", fname(run, e->factor), run_level(run, e->factor, e->from),
				      run_level(run, e->factor, e->to));
		sb_putc(&tics, '"');
		plot_quote_tic(&tics, lab);
		sb_printf(&tics, "\" %zu", i);
		free(lab);
	}
	char ymax[32];
	snprintf(ymax, sizeof(ymax), "%g", (double)n - 0.4);
	char *xl = xasprintf("gain over matched pairs (×; > 1: better, i.e. %s %s)",
			     run->metric.higher_better ? "higher" : "lower", run->metric.name);
	char *xq = quoted(xl);
	free(xl);
	xl = xq;
	const char *plot =
	    "\"effects.dat\" index 0 using 2:1 with points pt 7 ps 0.6 lc rgb \"#0072B2\" title \"one matched pair\", \\\n"
	    "     \"effects.dat\" index 1 using 2:1 with points pt 13 ps 2 lc rgb \"#000000\" title \"geometric mean\"";
	const char *kv[] = {"TITLE", "what each setting buys", "XLABEL", xl, "YTICS", tics.buf,
			    "YMAX", ymax, "EXTRA", "set lmargin 34", "PLOT", plot};
	char *cap = xasprintf("For each factor and level, the gain of %s over every matched pair of points "
			      "(equal in every other factor) against the reference level; %zu largest "
			      "effects, all in tables/effects.csv.", run->metric.name, n);
	if (write_dat(plotdir, "effects", &dat) == 0)
		plot_prepare(ps, plotdir, "effects", "Effects", cap, "effects", kv, ARRAY_SIZE(kv) / 2, FIG_W,
			     (int)(140 + 34 * n));
	free(cap);
	free(xl);
	sb_free(&dat);
	sb_free(&tics);
}

static void best_figure(const struct run *run, const struct report_tables *rt, const char *plotdir,
			struct plot_set *ps)
{
	const struct cellset *cs = &run->cells;
	struct strbuf dat = {0}, label = {0};
	size_t rows = 0;
	for (size_t i = 0; i < rt->nbest && rows < 40; i++) {
		const struct best *b = &rt->best[i];
		if (b->baseline < 0)
			continue;
		sb_reset(&label);
		run_cell_label(run, (size_t)b->best, run->group, run->ngroup, " ", &label);
		/* labels: levels only, shorter */
		struct strbuf lv = {0};
		for (size_t k = 0; k < run->ngroup; k++) {
			if (k)
				sb_putc(&lv, ' ');
			sb_puts(&lv, run_level(run, run->group[k], b->group[k]));
		}
		sb_printf(&dat, "%zu\t%.6g\t%.6g\t%.4g\t", rows, cs->value[b->baseline] * run->metric.scale,
			  cs->value[b->best] * run->metric.scale, b->gain);
		dat_text(&dat, lv.buf ? lv.buf : "all");
		sb_putc(&dat, '\n');
		sb_free(&lv);
		rows++;
	}
	if (!rows) {
		sb_free(&dat);
		sb_free(&label);
		return;
	}
	char *yl = xasprintf("%s, log scale", metric_label(&run->metric));
	char *yq = quoted(yl);
	struct strbuf groups = {0};
	for (size_t k = 0; k < run->ngroup; k++) {
		if (k)
			sb_putc(&groups, ' ');
		sb_puts(&groups, fname(run, run->group[k]));
	}
	char *xl = quoted(groups.buf ? groups.buf : "");
	struct strbuf plot = {0};
	sb_printf(&plot,
		  "\"best.dat\" using 2:xtic(5) lc rgb \"%s\" title \"baseline\", \\\n"
		  "     \"\" using 3 lc rgb \"%s\" title \"optimal\", \\\n"
		  "     \"\" using 0:(%s):(sprintf(\"×%%.2f\", $4)) with labels offset 0,0.8 font \",12\" notitle",
		  plot_color(5), plot_color(0),
		  run->metric.higher_better ? "($2 > $3 ? $2 : $3)" : "($2 > $3 ? $2 : $3)");
	const char *extra = rows > 6 ? "set xtics rotate by -30" : "";
	const char *kv[] = {"TITLE", "baseline vs optimal", "XLABEL", xl, "YLABEL", yq, "EXTRA", extra,
			    "PLOT", plot.buf};
	char *cap = xasprintf("For each group, the point at the recipe's baseline and the best measured "
			      "point; the number is the gain (×, > 1 better). Configurations in tables/best.csv.");
	if (write_dat(plotdir, "best", &dat) == 0)
		plot_prepare(ps, plotdir, "best", "Baseline vs optimal", cap, "best", kv, ARRAY_SIZE(kv) / 2,
			     FIG_W, FIG_H);
	free(cap);
	free(yl);
	free(yq);
	free(xl);
	sb_free(&groups);
	sb_free(&plot);
	sb_free(&dat);
	sb_free(&label);
}

void report_figures_build(const struct run *run, const struct report_tables *rt, const char *plotdir,
			  struct plot_set *ps, FILE *err)
{
	if (run->cells.ncells == 0)
		return;
	long x, color;
	scatters(run, rt, plotdir, ps, &x, &color);
	normalised(run, rt, plotdir, ps, x, color);
	const struct report_spec *spec = &run->recipe.report;
	if (spec->nbars) {
		for (size_t i = 0; i < spec->nbars; i++)
			bars(run, plotdir, ps, (size_t)spec->bars[i].x, spec->bars[i].group);
	} else if (rt->scatter_x >= 0) {
		size_t g;
		size_t n = default_colors(run, rt, (size_t)rt->scatter_x, &g, 1);
		bars(run, plotdir, ps, (size_t)rt->scatter_x, n ? (long)g : -1);
	}
	scaling(run, rt, plotdir, ps);
	effects_figure(run, rt, plotdir, ps);
	best_figure(run, rt, plotdir, ps);
	(void)err;
}
