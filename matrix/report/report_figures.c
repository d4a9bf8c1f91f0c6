/* report_figures.c - the report's figures: scatter (one per `scatter:` entry,
 * or a default set), normalised scatter, grouped bars, scaling, effects and
 * baseline vs optimal. Each writes plots/<name>.dat and prepares
 * plots/<name>.gp; plot_run_all draws them. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "facets.h"
#include "figures.h"
#include "plan/vocab.h"
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

/* What every figure needs: the run, its tables, where the figures go, and
 * the command line's facets (matrix report --where / --panels, or NULL). */
struct figs {
	const struct run *run;
	const struct report_tables *rt;
	const char *plotdir;
	struct plot_set *ps;
	const struct report_facet *cli;
};

/* The x axis of a figure over the levels of factor x that some drawn cell
 * has: categorical (positions 0, 1, ... in declared order) or numeric (the
 * levels' values, sorted; log when they span more than 100x). */
struct xaxis {
	size_t f;
	int numeric, log;
	unsigned char *present; /* nlevels: some drawn cell has the level */
	double *pos;            /* nlevels: where the level is on the axis */
	size_t *order;          /* the present levels by position */
	size_t n;
	double jitter;          /* width of the jitter (log axis: of ln x) */
	double lo, hi;          /* the range */
	size_t maxchars;        /* the longest tic label */
};

static const double *sort_key;
static int cmp_by_key(const void *a, const void *b)
{
	double x = sort_key[*(const size_t *)a], y = sort_key[*(const size_t *)b];
	return x < y ? -1 : x > y;
}

/* The axis of factor x over the cells that v draws and y (NULL: every
 * value) has. */
static void xaxis_build(struct xaxis *a, const struct run *run, size_t x, const struct facet_view *v,
			const double *y)
{
	const struct cellset *cs = &run->cells;
	size_t nl = run->recipe.factors[x].nlevels;
	memset(a, 0, sizeof(*a));
	a->f = x;
	a->present = xcalloc(nl, 1);
	a->pos = xcalloc(nl, sizeof(double));
	a->order = xcalloc(nl, sizeof(size_t));
	for (size_t c = 0; c < cs->ncells; c++)
		if (v->panel[c] >= 0 && (!y || !isnan(y[c])))
			a->present[CELL_LEVEL(cs, c, x)] = 1;
	a->numeric = facet_numeric(run, x, a->pos);
	for (size_t l = 0; l < nl; l++)
		if (a->present[l]) {
			a->order[a->n++] = l;
			size_t len = strlen(run_level(run, x, l));
			if (len > a->maxchars)
				a->maxchars = len;
		}
	if (!a->numeric) {
		for (size_t i = 0; i < a->n; i++)
			a->pos[a->order[i]] = (double)i;
		a->jitter = 0.6;
		a->lo = -0.5;
		a->hi = (double)a->n - 0.5;
		return;
	}
	sort_key = a->pos;
	qsort(a->order, a->n, sizeof(size_t), cmp_by_key);
	double *vals = xcalloc(a->n ? a->n : 1, sizeof(double));
	for (size_t i = 0; i < a->n; i++)
		vals[i] = a->pos[a->order[i]];
	a->log = facet_log_axis(vals, a->n);
	double gap = INFINITY;
	for (size_t i = 1; i < a->n; i++) {
		double d = a->log ? log(vals[i] / vals[i - 1]) : vals[i] - vals[i - 1];
		if (d > 0 && d < gap)
			gap = d;
	}
	double lo = a->n ? vals[0] : 0, hi = a->n ? vals[a->n - 1] : 1;
	if (!isfinite(gap))
		gap = a->log ? 1 : (lo != 0 ? fabs(lo) : 1);
	a->jitter = 0.3 * gap;
	if (a->log) {
		a->lo = lo * exp(-0.4 * gap);
		a->hi = hi * exp(0.4 * gap);
	} else {
		a->lo = lo - 0.4 * gap;
		a->hi = hi + 0.4 * gap;
	}
	free(vals);
}

static void xaxis_free(struct xaxis *a)
{
	free(a->present);
	free(a->pos);
	free(a->order);
}

/* Where cell c is drawn on the axis, moved sideways by its jitter. */
static double xaxis_jittered(const struct xaxis *a, const struct cellset *cs, size_t c)
{
	double p = a->pos[CELL_LEVEL(cs, c, a->f)];
	double j = stat_jitter(cs->id[c], a->jitter);
	return a->log ? p * exp(j) : p + j;
}

/* ("a" 0, "b" 1, ...): a tic per present level, at its position. */
static void xaxis_tics(const struct xaxis *a, const struct run *run, struct strbuf *sb)
{
	for (size_t i = 0; i < a->n; i++) {
		if (i)
			sb_puts(sb, ", ");
		sb_putc(sb, '"');
		plot_quote_tic(sb, run_level(run, a->f, a->order[i]));
		sb_printf(sb, "\" %.10g", a->pos[a->order[i]]);
	}
}

/* Turn tic labels of at most maxchars characters, n of them side by side
 * on plot_px pixels, when they would overlap: by 30 degrees, or 90 when
 * even that is too tight. Returns the room they need below the axis. */
static int tics_turn(size_t maxchars, size_t n, int plot_px, struct strbuf *ex)
{
	double slot = n ? (double)plot_px / (double)n : plot_px;
	double need = 8.0 * (double)maxchars + 10;
	if (need <= slot)
		return 0;
	if (slot >= 20 && need * 0.5 <= 3 * slot) {
		sb_puts(ex, "\nset xtics rotate by 30 right");
		return (int)(need * 0.5);
	}
	sb_puts(ex, "\nset xtics rotate by 90 right");
	return (int)need;
}

/* The axis's settings beyond the template's: log scale; and tic labels
 * turned when they would not fit side by side in a panel plot_px wide
 * (about 8 pixels a character). Returns the room the turned labels need
 * below the axis (pixels). */
static int xaxis_extra(const struct xaxis *a, int plot_px, struct strbuf *ex)
{
	if (a->log)
		sb_puts(ex, "\nset logscale x");
	return tics_turn(a->maxchars, a->n, plot_px, ex);
}

/* The widest text of the key of a figure coloured by factor f (-1: none):
 * its name or a level. */
static size_t key_chars(const struct run *run, long f)
{
	if (f < 0)
		return 10;
	size_t n = strlen(fname(run, (size_t)f));
	for (size_t l = 0; l < run->recipe.factors[f].nlevels; l++)
		if (strlen(run_level(run, (size_t)f, l)) > n)
			n = strlen(run_level(run, (size_t)f, l));
	return n;
}

/* Plot width of one panel of a figure w wide with the key on the right. */
static int panel_px(const struct facet_view *v, int w)
{
	size_t n = v->npanels ? v->npanels : 1;
	size_t cols = n <= 3 ? n : (size_t)ceil(sqrt((double)n));
	return (w - 300) / (int)cols;
}

/* Make the file name in name unique among the figures so far: two items
 * with the same axes and facet factors (other levels) get _2, _3, ... */
static void unique_name(const struct figs *F, struct strbuf *name)
{
	char *base = xstrdup(name->buf ? name->buf : "");
	for (unsigned k = 2;; k++) {
		size_t i = 0;
		while (i < F->ps->n && strcmp(F->ps->p[i].name, name->buf))
			i++;
		if (i == F->ps->n)
			break;
		sb_reset(name);
		sb_printf(name, "%s_%u", base, k);
	}
	free(base);
}

/* Note a figure that its where: left without a point. */
static void note_empty(struct figs *F, const struct facet_view *v, const char *name, const char *title)
{
	struct strbuf why = {0};
	sb_puts(&why, "no measured point is left");
	facet_where_text(v, &why);
	plot_note_empty(F->ps, name, title, "Nothing to draw.", why.buf);
	sb_free(&why);
}

/* A scatter of cells: one dot per cell c of the view with y[c] not NaN at
 * the level of factor x (jittered), coloured by the level of factor color
 * (-1: one colour). */
struct scatter_spec {
	const char *name, *title, *caption, *ylabel;
	const char *extra;                /* more settings, or NULL */
	size_t x;
	long color;
	const double *y;
	const double *u;                  /* half-width of y's 95% interval, log scale; NaN none */
	const struct report_facet *facet; /* the recipe item's, or NULL */
	int gain;                         /* y is a gain (> 1 better), not the metric */
};

/* The levels of factor f (-1: one level, 0) in the order of their series
 * and key entries: by value for a numeric factor (batch 1, 8, 64 however
 * declared), else as declared; colours stay by level index. Allocated. */
static size_t *level_order(const struct run *run, long f)
{
	size_t n = f >= 0 ? run->recipe.factors[f].nlevels : 1;
	size_t *ord = xcalloc(n, sizeof(size_t));
	double *val = xcalloc(n, sizeof(double));
	for (size_t l = 0; l < n; l++)
		ord[l] = l;
	if (f >= 0 && facet_numeric(run, (size_t)f, val)) {
		sort_key = val;
		qsort(ord, n, sizeof(size_t), cmp_by_key);
	}
	free(val);
	return ord;
}

/* Panel p's data blocks (dots, then with a numeric axis the line through
 * each level's geometric mean, per colour) into dat, from block *blocks on,
 * and its plot body; colours used in no panel before get a key entry in the
 * first panel (the only one with a key). */
static void scatter_panel(struct figs *F, const struct scatter_spec *sp, const struct facet_view *v,
			  const struct xaxis *ax, size_t p, const char *name, struct strbuf *dat, size_t *blocks,
			  struct strbuf *body, unsigned char *keyed)
{
	const struct run *run = F->run;
	const struct cellset *cs = &run->cells;
	size_t ncol = sp->color >= 0 ? run->recipe.factors[sp->color].nlevels : 1;
	double *buf = xmalloc((cs->ncells ? cs->ncells : 1) * sizeof(double));
	size_t series = 0, *ord = level_order(run, sp->color);
	int earlier = 0; /* an earlier panel had points (and so the key) */
	for (size_t i = 0; i < ncol; i++)
		earlier |= keyed[i];
	for (size_t i = 0; i < ncol; i++) {
		size_t k = ord[i], n = 0;
		for (size_t c = 0; c < cs->ncells; c++) {
			if (v->panel[c] != (long)p || isnan(sp->y[c]) ||
			    (sp->color >= 0 && CELL_LEVEL(cs, c, sp->color) != k))
				continue;
			if (n == 0 && *blocks)
				sb_puts(dat, "\n\n");
			/* x, y, id, then y's 95% interval (both y without one) */
			double u = sp->u && isfinite(sp->u[c]) ? sp->u[c] : 0;
			sb_printf(dat, "%.6g\t%.6g\t%s\t%.6g\t%.6g\n", xaxis_jittered(ax, cs, c), sp->y[c], cs->id[c],
				  sp->y[c] * exp(-u), sp->y[c] * exp(u));
			n++;
		}
		if (n == 0)
			continue;
		const char *lvl = sp->color >= 0 ? run_level(run, (size_t)sp->color, k) : "point";
		sb_printf(body, "%s\"%s.dat\" index %zu using 1:2:4:5 with yerrorbars pt %s ps 0.8 lc rgb \"%s\" title \"",
			  series++ ? ", \\\n     " : "", name, (*blocks)++, point_type(k), plot_color(k));
		plot_quote(body, lvl);
		sb_putc(body, '"');
		keyed[k] = 1;
		if (!ax->numeric)
			continue;
		sb_puts(dat, "\n\n");
		for (size_t j = 0; j < ax->n; j++) {
			size_t l = ax->order[j], m = 0;
			for (size_t c = 0; c < cs->ncells; c++)
				if (v->panel[c] == (long)p && !isnan(sp->y[c]) && CELL_LEVEL(cs, c, sp->x) == l &&
				    (sp->color < 0 || CELL_LEVEL(cs, c, sp->color) == k))
					buf[m++] = sp->y[c];
			if (m)
				sb_printf(dat, "%.10g\t%.6g\n", ax->pos[l], stat_geomean(buf, m));
		}
		sb_printf(body, ", \\\n     \"%s.dat\" index %zu using 1:2 with lines lw 1.5 lc rgb \"%s\" notitle",
			  name, (*blocks)++, plot_color(k));
	}
	free(buf);
	for (size_t i = 0; i < ncol && series && !earlier; i++) {
		size_t k = ord[i];
		if (!keyed[k] && sp->color >= 0) {
			for (size_t c = 0; c < cs->ncells; c++)
				if (v->panel[c] >= 0 && !isnan(sp->y[c]) && CELL_LEVEL(cs, c, sp->color) == k) {
					sb_printf(body, "%skeyentry with points pt %s ps 0.8 lc rgb \"%s\" title \"",
						  series++ ? ", \\\n     " : "", point_type(k), plot_color(k));
					plot_quote(body, run_level(run, (size_t)sp->color, k));
					sb_putc(body, '"');
					keyed[k] = 1;
					break;
				}
		}
	}
	free(ord);
}

/* Labelled tics of a log y axis from lo to hi: gnuplot labels the powers
 * of ten only, which leaves a range of a few decades or less with two
 * labels or fewer; there the tics are 1, 3 (up to 10^4x), 1, 2, 5 (up to
 * 300x) or 1, 1.5, 2, 3, 5, 7 (under 4x) times the powers of ten, written
 * into ex. */
static void log_ytics(double lo, double hi, struct strbuf *ex)
{
	static const double fine[] = {1, 1.5, 2, 3, 5, 7}, mid[] = {1, 2, 5}, coarse[] = {1, 3};
	if (!(lo > 0) || !(hi > lo) || hi > 1e4 * lo)
		return;
	const double *m = hi < 4 * lo ? fine : hi <= 300 * lo ? mid : coarse;
	size_t nm = hi < 4 * lo ? ARRAY_SIZE(fine) : hi <= 300 * lo ? ARRAY_SIZE(mid) : ARRAY_SIZE(coarse), n = 0;
	sb_puts(ex, "\nset ytics (");
	for (int k = (int)floor(log10(lo)) - 1; k <= (int)ceil(log10(hi)); k++)
		for (size_t i = 0; i < nm; i++) {
			double v = m[i] * pow(10, k);
			if (v >= lo && v <= hi)
				sb_printf(ex, "%s\"%g\" %g", n++ ? ", " : "", v, v);
		}
	sb_puts(ex, ")");
}

/* The y range "[lo:hi]" of a log axis over the view's values and their
 * whiskers y * exp(+-u) (u NULL or NaN: none), shared by every panel, with
 * its tics into ex; NULL when no value is positive. A range over the values
 * alone cut off a wide whisker at the frame. */
static char *log_yrange(const struct facet_view *v, const double *y, const double *u, size_t ncells,
			struct strbuf *ex)
{
	double lo = INFINITY, hi = 0;
	for (size_t c = 0; c < ncells; c++)
		if (v->panel[c] >= 0 && !isnan(y[c]) && y[c] > 0) {
			double w = u && isfinite(u[c]) ? u[c] : 0;
			double ylo = y[c] * exp(-w), yhi = y[c] * exp(w);
			if (!(ylo > 0) || !isfinite(yhi)) /* an absurd interval: no range to 0 or inf */
				ylo = yhi = y[c];
			lo = ylo < lo ? ylo : lo;
			hi = yhi > hi ? yhi : hi;
		}
	if (!(hi > 0))
		return NULL;
	lo /= 1.3;
	hi *= 1.3;
	log_ytics(lo, hi, ex);
	return xasprintf("[%.6g:%.6g]", lo, hi);
}

/* Long (about 90 lines) on purpose: one function lays out what every
 * scatter shares (the view, the axis, the data blocks and bodies of every
 * panel, the template's keys) so that the plain, the normalised and every
 * faceted scatter are drawn alike; the pieces are in scatter_panel, xaxis_*
 * and facet_layout. */
static void scatter(struct figs *F, const struct scatter_spec *sp)
{
	const struct run *run = F->run;
	const struct cellset *cs = &run->cells;
	size_t avoid[2] = {sp->x, sp->color >= 0 ? (size_t)sp->color : sp->x};
	struct facet_view v;
	facet_view_build(&v, run, sp->facet, F->cli, avoid, 2);
	struct strbuf name = {0}, title = {0}, cap = {0};
	sb_puts(&name, sp->name);
	facet_name_suffix(&v, &name);
	unique_name(F, &name);
	sb_puts(&title, sp->title);
	facet_where_text(&v, &title);
	facet_panels_text(&v, &title);
	size_t drawn = 0;
	for (size_t c = 0; c < cs->ncells; c++)
		drawn += v.panel[c] >= 0 && !isnan(sp->y[c]);
	if (!drawn) {
		if (v.nwhere)
			note_empty(F, &v, name.buf, title.buf);
		goto out;
	}
	struct xaxis ax;
	xaxis_build(&ax, run, sp->x, &v, sp->y);
	size_t ncol = sp->color >= 0 ? run->recipe.factors[sp->color].nlevels : 1;
	unsigned char *keyed = xcalloc(ncol, 1);
	char **body = xcalloc(v.npanels, sizeof(char *));
	struct strbuf dat = {0};
	size_t blocks = 0;
	for (size_t p = 0; p < v.npanels; p++) {
		struct strbuf b = {0};
		scatter_panel(F, sp, &v, &ax, p, name.buf, &dat, &blocks, &b, keyed);
		body[p] = b.buf; /* NULL: no points in this panel (facet_layout) */
	}
	struct strbuf tics = {0}, ex = {0}, plot = {0};
	xaxis_tics(&ax, run, &tics);
	int w = FIG_W, h = FIG_H;
	sb_puts(&ex, sp->extra ? sp->extra : "");
	int bottom = xaxis_extra(&ax, panel_px(&v, w), &ex);
	char *xlab = xasprintf("%s%s", fname(run, sp->x), ax.log ? ", log scale" : "");
	char *t = quoted(title.buf), *xl = quoted(xlab), *yl = quoted(sp->ylabel);
	char *kt = quoted(sp->color >= 0 ? fname(run, (size_t)sp->color) : "");
	char *yr = log_yrange(&v, sp->y, sp->u, cs->ncells, &ex);
	facet_layout(&v, body, yr, t, xl, yl, bottom, key_chars(run, sp->color), &ex, &plot, &w, &h);
	char xmin[32], xmax[32];
	snprintf(xmin, sizeof(xmin), "%.10g", ax.lo);
	snprintf(xmax, sizeof(xmax), "%.10g", ax.hi);
	sb_printf(&cap, "%s One dot per measured point (%zu)%s, jittered sideways", sp->caption, drawn,
		  v.nwhere ? " of those the where keeps" : "");
	if (!sp->gain) { /* the metric itself: whiskers are each point's own interval */
		size_t within = 0;
		for (size_t c = 0; c < cs->ncells; c++)
			within += v.panel[c] >= 0 && !isnan(sp->y[c]) && cs->kind[c] == CI_WITHIN;
		sb_printf(&cap, ", whiskers its 95%% interval%s", within ? " (one process a point: the noise inside "
									"that process only, not the variation between "
									"fresh processes)" : "");
	}
	if (ax.numeric)
		sb_printf(&cap, "; %s on a numeric axis%s, lines through the geometric mean at each value",
			  fname(run, sp->x), ax.log ? " (log: its values span more than 100x)" : "");
	if (v.npf)
		sb_printf(&cap, "; %zu panels on the same axes", v.npanels);
	/* a gain is better up whatever the metric's direction (the normalised
	 * scatter of a time said "> 1 is better ...; lower is better") */
	sb_printf(&cap, "; %s.", sp->gain || run->metric.higher_better ? "higher is better" : "lower is better");
	const char *kv[] = {"TITLE", t, "XLABEL", xl, "YLABEL", yl, "XTICS", tics.buf ? tics.buf : "",
			    "XMIN", xmin, "XMAX", xmax, "KEYTITLE", kt, "EXTRA", ex.buf ? ex.buf : "",
			    "PLOT", plot.buf};
	if (write_dat(F->plotdir, name.buf, &dat) == 0)
		plot_prepare(F->ps, F->plotdir, name.buf, title.buf, cap.buf, "scatter", kv, ARRAY_SIZE(kv) / 2, w, h);
	for (size_t p = 0; p < v.npanels; p++)
		free(body[p]);
	free(body);
	free(keyed);
	free(t);
	free(xl);
	free(yl);
	free(kt);
	free(yr);
	free(xlab);
	sb_free(&dat);
	sb_free(&tics);
	sb_free(&ex);
	sb_free(&plot);
	xaxis_free(&ax);
out:
	sb_free(&name);
	sb_free(&title);
	sb_free(&cap);
	facet_view_free(&v);
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
	(void)run;
	return n;
}

/* One scatter of y by x coloured by color: name, title and caption made
 * from the factors; facet the recipe item's (or NULL). */
static void scatter_of(struct figs *F, const char *stem, const char *what, const char *caption, size_t x,
		       long color, const double *y, const double *u, const char *ylabel, const char *extra,
		       const struct report_facet *facet)
{
	const struct run *run = F->run;
	char *name = color >= 0 ? xasprintf("%s_%s_%s", stem, fname(run, x), fname(run, (size_t)color))
				: xasprintf("%s_%s", stem, fname(run, x));
	if (!strcmp(stem, "normalised") && !facet && (!F->cli || (!F->cli->nwhere && !F->cli->npanels))) {
		free(name);
		name = xstrdup("normalised"); /* the default one keeps its old name */
	}
	char *title = color >= 0 ? xasprintf("%s by %s, coloured by %s", what, fname(run, x), fname(run, (size_t)color))
				 : xasprintf("%s by %s", what, fname(run, x));
	struct scatter_spec sp = {name, title, caption, ylabel, extra, x, color, y, u, facet, !strcmp(stem, "normalised")};
	scatter(F, &sp);
	free(name);
	free(title);
}

static void scatters(struct figs *F, long *first_x, long *first_color)
{
	const struct run *run = F->run;
	const struct report_tables *rt = F->rt;
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
		scatter_of(F, "scatter", run->metric.name, "", x, color, y, cs->u, ylabel, NULL,
			   nspec ? &spec->scatter[i].facet : NULL);
	}
	free(y);
}

/* The normalised scatters: each point's gain over its group's baseline,
 * one per report.normalised item, else one by the first scatter's axes. */
static void normalised(struct figs *F, long x, long color)
{
	const struct run *run = F->run;
	const struct report_tables *rt = F->rt;
	const struct report_spec *spec = &run->recipe.report;
	const struct cellset *cs = &run->cells;
	if (!rt->nbest || (x < 0 && !spec->nnormalised))
		return;
	double *y = xmalloc((cs->ncells ? cs->ncells : 1) * sizeof(double));
	double *u = xmalloc((cs->ncells ? cs->ncells : 1) * sizeof(double));
	size_t n = 0;
	for (size_t c = 0; c < cs->ncells; c++) {
		long g = rt->cell_group[c];
		long b = g >= 0 ? rt->best[g].baseline : -1;
		y[c] = b >= 0 ? effects_gain(cs->value[b], cs->value[c], run->metric.higher_better) : NAN;
		/* the gain's interval from both points' (the baseline's own
		 * gain is 1 by definition: none) */
		u[c] = b >= 0 && b != (long)c ? sqrt(cs->u[b] * cs->u[b] + cs->u[c] * cs->u[c]) : NAN;
		n += !isnan(y[c]);
	}
	size_t within = 0; /* whiskers between points of one process each */
	for (size_t c = 0; c < cs->ncells; c++) {
		long g = rt->cell_group[c];
		long b = g >= 0 ? rt->best[g].baseline : -1;
		within += b >= 0 && b != (long)c && !isnan(u[c]) &&
			  cellset_pair_within(cs, c, (size_t)b);
	}
	char *cap = xasprintf("Each point's %s relative to its group's baseline (groups: %s), with the "
			      "gain's 95%% interval from both points' as whiskers; > 1 is better than the "
			      "baseline; dashed: the baseline.%s",
			      run->metric.name, run->ngroup ? "the factors the baseline leaves free" : "all points",
			      within ? " Points measured in one process each: the whiskers hold the noise inside "
				       "each process only, not the variation between fresh processes (repeat: 3 "
				       "or more shows it)." : "");
	const char *extra = "set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.2 lc rgb \"#555555\" back";
	const char *ylabel = "gain over the group's baseline (×, log scale)";
	const char *what = "gain over the baseline of each point's group";
	if (n > 0 && spec->nnormalised) {
		for (size_t i = 0; i < spec->nnormalised; i++)
			scatter_of(F, "normalised", what, cap, (size_t)spec->normalised[i].x, spec->normalised[i].color,
				   y, u, ylabel, extra, &spec->normalised[i].facet);
	} else if (n > 0) {
		scatter_of(F, "normalised", what, cap, (size_t)x, color, y, u, ylabel, extra, NULL);
	}
	free(cap);
	free(u);
	free(y);
}

/* Cell c's value in display units and its whiskers: the 95% confidence
 * interval (lo, hi), both the value when it has none (or one whose ends
 * are 0 or past the largest double: no figure draws them). */
static double cell_whiskers(const struct run *run, long c, double *lo, double *hi)
{
	const struct cellset *cs = &run->cells;
	double v = cs->value[c] * run->metric.scale;
	*lo = *hi = v;
	if (!isnan(cs->u[c]) && v * exp(-cs->u[c]) > 0 && isfinite(v * exp(cs->u[c]))) {
		*lo = v * exp(-cs->u[c]);
		*hi = v * exp(cs->u[c]);
	}
	return v;
}

/* The geometric mean of the metric over the cells of view v in panel p at
 * level l of x and level g of group (any when group < 0), with its
 * whiskers, appended to row as three columns (NaN when no cell). buf has
 * room for every cell. Returns 1 when some cell was there; *top and *bot
 * follow the largest whisker and the smallest value. */
static int bar_cell(const struct run *run, const struct facet_view *v, size_t p, size_t x, long group, size_t l,
		    size_t g, double *buf, struct strbuf *row, double *top, double *bot)
{
	const struct cellset *cs = &run->cells;
	size_t n = 0;
	long one = -1;
	double lo = INFINITY, hi = 0;
	for (size_t c = 0; c < cs->ncells; c++)
		if (v->panel[c] == (long)p && CELL_LEVEL(cs, c, x) == l &&
		    (group < 0 || CELL_LEVEL(cs, c, group) == g)) {
			double val = cs->value[c] * run->metric.scale;
			buf[n++] = val;
			one = (long)c;
			lo = val < lo ? val : lo;
			hi = val > hi ? val : hi;
		}
	if (!n) {
		sb_puts(row, "\tNaN\tNaN\tNaN");
		return 0;
	}
	double gm = n == 1 ? cell_whiskers(run, one, &lo, &hi) : stat_geomean(buf, n);
	*top = hi > *top ? hi : *top;
	*bot = lo < *bot ? lo : *bot;
	sb_printf(row, "\t%.6g\t%.6g\t%.6g", gm, lo, hi);
	return 1;
}

/* Panel p's data of the bars into dat, a block: a heading, then a row per
 * level of x on the axis (its position first). used[g] = 1 for each group
 * level that has a cell. */
static void bars_data(const struct run *run, const struct facet_view *v, size_t p, const struct xaxis *ax,
		      long group, size_t ng, unsigned char *used, struct strbuf *dat, double *top, double *bot)
{
	const struct cellset *cs = &run->cells;
	double *buf = xmalloc((cs->ncells ? cs->ncells : 1) * sizeof(double));
	if (p)
		sb_puts(dat, "\n\n");
	sb_puts(dat, "# x");
	for (size_t g = 0; g < ng; g++) {
		sb_putc(dat, '\t');
		dat_text(dat, group >= 0 ? run_level(run, (size_t)group, g) : "value");
		sb_puts(dat, "\tlow\thigh");
	}
	sb_puts(dat, "\tlabel\n");
	for (size_t i = 0; i < ax->n; i++) {
		size_t l = ax->order[i];
		sb_printf(dat, "%.10g", ax->pos[l]);
		for (size_t g = 0; g < ng; g++)
			if (bar_cell(run, v, p, ax->f, group, l, g, buf, dat, top, bot))
				used[g] = 1;
		sb_putc(dat, '\t');
		dat_text(dat, run_level(run, ax->f, l));
		sb_putc(dat, '\n');
	}
	free(buf);
}

/* The plot body of panel p of the bars in name.dat: a series per used
 * group level; with a numeric axis, lines with whiskers at the values. */
static void bars_series(const struct run *run, const char *name, size_t p, const struct xaxis *ax, long group,
			size_t ng, const unsigned char *used, struct strbuf *plot)
{
	size_t k = 0, *ord = level_order(run, group);
	for (size_t i = 0; i < ng; i++) {
		size_t g = ord[i];
		if (!used[g])
			continue;
		if (k)
			sb_puts(plot, ", \\\n     ");
		if (ax->numeric)
			sb_printf(plot, "\"%s.dat\" index %zu using 1:%zu:%zu:%zu with yerrorlines lw 2 pt %s "
					"lc rgb \"%s\" title \"",
				  name, p, 2 + 3 * g, 3 + 3 * g, 4 + 3 * g, point_type(g), plot_color(g));
		else
		{
			sb_printf(plot, "\"%s.dat\" index %zu using %zu:%zu:%zu", name, p, 2 + 3 * g, 3 + 3 * g, 4 + 3 * g);
			if (!k)
				sb_printf(plot, ":xtic(%zu)", 2 + 3 * ng);
			sb_printf(plot, " lc rgb \"%s\" title \"", plot_color(g));
		}
		plot_quote(plot, group >= 0 ? run_level(run, (size_t)group, g) : run->metric.name);
		sb_putc(plot, '"');
		k++;
	}
	free(ord); /* nothing written: no points in this panel (facet_layout) */
}

/* Grouped bars: the geometric mean of the metric at each (x level, group
 * level), in panels when the item says so; a numeric x is drawn as lines on
 * a numeric axis (template lines.gp). The y axis is log when the bars span
 * more than 100x. Long for the same reason as scatter: one place assembles
 * what both kinds of bars share (view, axis, panels, keys). */
static void bars(struct figs *F, size_t x, long group, const struct report_facet *facet)
{
	const struct run *run = F->run;
	size_t ng = group >= 0 ? run->recipe.factors[group].nlevels : 1;
	size_t avoid[2] = {x, group >= 0 ? (size_t)group : x};
	struct facet_view v;
	facet_view_build(&v, run, facet, F->cli, avoid, 2);
	struct strbuf name = {0}, title = {0};
	if (group >= 0) {
		sb_printf(&name, "bars_%s_%s", fname(run, x), fname(run, (size_t)group));
		sb_printf(&title, "%s by %s and %s", run->metric.name, fname(run, x), fname(run, (size_t)group));
	} else {
		sb_printf(&name, "bars_%s", fname(run, x));
		sb_printf(&title, "%s by %s", run->metric.name, fname(run, x));
	}
	facet_name_suffix(&v, &name);
	unique_name(F, &name);
	facet_where_text(&v, &title);
	facet_panels_text(&v, &title);
	if (!v.ndrawn) {
		if (v.nwhere)
			note_empty(F, &v, name.buf, title.buf);
		goto out;
	}
	struct xaxis ax;
	xaxis_build(&ax, run, x, &v, NULL);
	unsigned char *used = xcalloc(ng, 1);
	struct strbuf dat = {0};
	double top = 0, bot = INFINITY;
	for (size_t p = 0; p < v.npanels; p++)
		bars_data(run, &v, p, &ax, group, ng, used, &dat, &top, &bot);
	char **body = xcalloc(v.npanels, sizeof(char *));
	for (size_t p = 0; p < v.npanels; p++) {
		struct strbuf b = {0};
		bars_series(run, name.buf, p, &ax, group, ng, used, &b);
		body[p] = b.buf;
	}
	int logy = bot > 0 && top > 100 * bot;
	struct strbuf ex = {0}, plot = {0}, tics = {0};
	char *yr = NULL;
	if (logy) {
		sb_puts(&ex, "set logscale y\nset format y \"%h\"");
		yr = xasprintf("[%.6g:%.6g]", bot / 1.5, top * 1.5);
		log_ytics(bot / 1.5, top * 1.5, &ex);
	} else {
		yr = xasprintf("[0:%.6g]", top * 1.08);
	}
	int w = FIG_W, h = FIG_H;
	int bottom = ax.numeric ? xaxis_extra(&ax, panel_px(&v, w), &ex)
				: tics_turn(ax.maxchars, ax.n, panel_px(&v, w), &ex);
	char *ylab = xasprintf("%s%s", metric_label(&run->metric), logy ? ", log scale" : "");
	char *xlab = xasprintf("%s%s", fname(run, x), ax.log ? ", log scale" : "");
	char *t = quoted(title.buf), *xl = quoted(xlab), *yl = quoted(ylab);
	char *kt = quoted(group >= 0 ? fname(run, (size_t)group) : "");
	facet_layout(&v, body, yr, t, xl, yl, bottom, key_chars(run, group), &ex, &plot, &w, &h);
	xaxis_tics(&ax, run, &tics);
	char xmin[32], xmax[32];
	snprintf(xmin, sizeof(xmin), "%.10g", ax.lo);
	snprintf(xmax, sizeof(xmax), "%.10g", ax.hi);
	char *cap = xasprintf("Geometric mean of %s over the points%s at each pair of levels; whiskers: "
			      "the 95%% confidence interval for a single point, else the smallest and "
			      "largest point%s%s%s.", run->metric.name, v.nwhere ? " the where keeps" : "",
			      ax.numeric ? "; a line per level of the group on the numeric axis of " : "",
			      ax.numeric ? fname(run, x) : "", v.npf ? "; panels on the same axes" : "");
	const char *kv[] = {"TITLE", t, "XLABEL", xl, "YLABEL", yl, "XTICS", tics.buf ? tics.buf : "",
			    "XMIN", xmin, "XMAX", xmax, "KEYTITLE", kt, "EXTRA", ex.buf ? ex.buf : "",
			    "PLOT", plot.buf};
	if (write_dat(F->plotdir, name.buf, &dat) == 0)
		plot_prepare(F->ps, F->plotdir, name.buf, title.buf, cap, ax.numeric ? "lines" : "bars", kv,
			     ARRAY_SIZE(kv) / 2, w, h);
	for (size_t p = 0; p < v.npanels; p++)
		free(body[p]);
	free(body);
	free(cap);
	free(t);
	free(xl);
	free(yl);
	free(kt);
	free(yr);
	free(ylab);
	free(xlab);
	free(used);
	sb_free(&dat);
	sb_free(&ex);
	sb_free(&plot);
	sb_free(&tics);
	xaxis_free(&ax);
out:
	sb_free(&name);
	sb_free(&title);
	facet_view_free(&v);
}

/* Series i of the scaling figure: its rows into dat (count, throughput,
 * ideal, scale efficiency, the throughput's interval), its curves into plot;
 * the x range and the whisker counts updated. */
struct scaling_acc {
	double xmin, xmax;
	size_t nwhisk, npts;
};

static void scaling_series_plot(const struct run *run, const struct scaling_series *s, size_t i,
				const size_t *others, size_t no, struct strbuf *dat_, struct strbuf *plot_,
				struct scaling_acc *acc)
{
	struct strbuf label = {0};
	if (i)
		sb_puts(dat_, "\n\n");
	for (size_t k = 0; k < s->npoints; k++) {
		/* whiskers: the throughput's 95% interval, none when unknown */
		double u = isnan(s->pt[k].u) ? 0 : s->pt[k].u;
		acc->nwhisk += u > 0;
		sb_printf(dat_, "%g\t%.6g\t%.6g\t%.4f\t%.6g\t%.6g\n", s->pt[k].count, s->pt[k].thr,
			  s->pt[k].ideal, s->pt[k].scale, s->pt[k].thr * exp(-u), s->pt[k].thr * exp(u));
		acc->npts++;
		if (s->pt[k].count < acc->xmin)
			acc->xmin = s->pt[k].count;
		if (s->pt[k].count > acc->xmax)
			acc->xmax = s->pt[k].count;
	}
	sb_reset(&label);
	run_cell_label(run, (size_t)s->first, others, no, " ", &label);
	if (i)
		sb_puts(plot_, ", \\\n     ");
	sb_printf(plot_,
		  "\"scaling.dat\" index %zu using 1:2 with linespoints lw 2 pt 7 lc rgb \"%s\" title \"",
		  i, plot_color(i));
	plot_quote(plot_, label.buf ? label.buf : "all");
	sb_printf(plot_,
		  "\", \\\n     \"scaling.dat\" index %zu using 1:2:5:6 with yerrorbars pt 7 lc rgb \"%s\" notitle",
		  i, plot_color(i));
	if (s->base_ok) /* the ideal line and the scale efficiencies need the 1-GPU point */
		sb_printf(plot_,
			  ", \\\n     \"scaling.dat\" index %zu using 1:3 with lines dt 2 lw 1.5 lc rgb \"%s\" notitle, \\\n"
			  "     \"scaling.dat\" index %zu every ::1 using 1:2:(sprintf(\"%%.2f\", $4)) with labels offset 0,1 "
			  "font \",11\" tc rgb \"%s\" notitle",
			  i, plot_color(i), i, plot_color(i));
	sb_free(&label);
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
	struct strbuf dat = {0}, plot = {0}, tics = {0};
	struct scaling_acc acc = {INFINITY, 0, 0, 0};
	for (size_t i = 0; i < nser; i++)
		scaling_series_plot(run, &rt->scaling[i], i, others, no, &dat, &plot, &acc);
	double xmin = acc.xmin, xmax = acc.xmax;
	size_t nwhisk = acc.nwhisk, npts = acc.npts;
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
	/* say what the whiskers are, and where there are none */
	const char *wh = nwhisk == npts ? "whiskers: the throughput's 95% interval"
			 : nwhisk ? "whiskers: the throughput's 95% interval where the engine gave one (points "
				    "without whiskers have no interval)"
				  : "no whiskers: the rows give no interval of the throughput";
	size_t nobase = 0;
	for (size_t i = 0; i < nser; i++)
		nobase += !rt->scaling[i].base_ok;
	char nb[160] = "";
	if (nobase)
		snprintf(nb, sizeof nb, " %zu of the series %s no 1-GPU point with a throughput: no ideal line, no "
			 "numbers.", nobase, nobase == 1 ? "has" : "have");
	char *cap = xasprintf("Throughput against %s for %zu series%s; %s; dashed: ideal linear scaling from one "
			      "GPU; numbers: scale efficiency (the seeds' scale factor), throughput over ideal (its "
			      "95%% interval in tables/scaling.csv).%s",
			      fname(run, f), nser,
			      nser < rt->nscaling ? " (the first of them; all are in tables/scaling.csv)" : "", wh, nb);
	if (write_dat(plotdir, "scaling", &dat) == 0)
		plot_prepare(ps, plotdir, "scaling", "Scaling with the number of GPUs", cap, "scaling", kv,
			     ARRAY_SIZE(kv) / 2, FIG_W, FIG_H);
	free(cap);
	free(xl);
	free(others);
	sb_free(&dat);
	sb_free(&plot);
	sb_free(&tics);
}

/* Whether the effects figure shows factor f: the recipe's
 * report.effects.factors, else every factor but those that say what is
 * measured rather than how (model, task, batch, seq_len). */
static int effect_shown(const struct run *run, size_t f)
{
	if (run->recipe.report.effects_given)
		return run->recipe.report.effects_shown[f];
	return !vocab_is_workload(fname(run, f));
}

/* The factors with effects that the figure leaves out, "model, batch", into sb. */
static void effects_hidden(const struct run *run, const struct report_tables *rt, struct strbuf *sb)
{
	unsigned char *seen = xcalloc(run->recipe.nfactors ? run->recipe.nfactors : 1, 1);
	for (size_t i = 0; i < rt->neffects; i++) {
		size_t f = rt->effects[i].factor;
		if (!effect_shown(run, f) && !seen[f]) {
			sb_printf(sb, "%s%s", sb->len ? ", " : "", fname(run, f));
			seen[f] = 1;
		}
	}
	free(seen);
}

/* The effects figure's block 1, rows 0..n-1: each shown effect's geometric
 * mean and its 95% interval (tables/effects.csv's gain_lo..gain_hi); without
 * one, both ends are the mean (no whisker). Appends the row's tic to tics and
 * keeps the longest label's length in *maxchars; returns how many rows have
 * no interval (the caption counts them). */
static size_t effects_means(struct figs *F, const size_t *shown, size_t n, struct strbuf *dat, struct strbuf *tics,
			    size_t *maxchars)
{
	const struct run *run = F->run;
	size_t noci = 0;
	for (size_t i = 0; i < n; i++) {
		const struct effect *e = &F->rt->effects[shown[i]];
		double lo = e->geomean, hi = e->geomean;
		if (isfinite(e->u)) {
			lo = e->geomean * exp(-e->u);
			hi = e->geomean * exp(e->u);
		} else {
			noci++;
		}
		sb_printf(dat, "%zu\t%.6g\t%.6g\t%.6g\n", i, e->geomean, lo, hi);
		if (i)
			sb_puts(tics, ", ");
		char *lab = xasprintf("%s: %s → %s", fname(run, e->factor), run_level(run, e->factor, e->from),
				      run_level(run, e->factor, e->to));
		size_t len = strlen(lab);
		*maxchars = len > *maxchars ? len : *maxchars;
		sb_putc(tics, '"');
		plot_quote_tic(tics, lab);
		sb_printf(tics, "\" %zu", i);
		free(lab);
	}
	return noci;
}

static void effects_figure(struct figs *F)
{
	const struct run *run = F->run;
	const struct report_tables *rt = F->rt;
	const struct cellset *cs = &run->cells;
	size_t *shown = xmalloc((rt->neffects ? rt->neffects : 1) * sizeof(size_t));
	size_t n = 0, maxchars = 0;
	for (size_t i = 0; i < rt->neffects && n < 24; i++)
		if (effect_shown(run, rt->effects[i].factor))
			shown[n++] = i;
	struct strbuf hidden = {0};
	effects_hidden(run, rt, &hidden);
	char *left = hidden.len ? xasprintf(" Left out: the effects of %s (%s; report.effects.factors shows them).",
					    hidden.buf, run->recipe.report.effects_given
							    ? "not in report.effects.factors"
							    : "what is measured rather than how")
				: xstrdup("");
	if (!n) {
		if (hidden.len)
			plot_note_empty(F->ps, "effects", "Effects", left, "every effect is of a factor left out");
		free(left);
		free(shown);
		sb_free(&hidden);
		return;
	}
	struct strbuf dat = {0}, tics = {0};
	/* block 0: every pair; block 1: geometric means */
	for (size_t i = 0; i < n; i++) {
		const struct effect *e = &rt->effects[shown[i]];
		for (size_t k = 0; k < e->npairs; k++)
			sb_printf(&dat, "%.4f\t%.6g\n", (double)i + stat_jitter(cs->id[e->new[k]], 0.5), e->gain[k]);
	}
	sb_puts(&dat, "\n\n");
	size_t noci = effects_means(F, shown, n, &dat, &tics, &maxchars);
	char ymax[32];
	snprintf(ymax, sizeof(ymax), "%g", (double)n - 0.4);
	char *xl = xasprintf("gain over matched pairs (×; > 1: better, i.e. %s %s)",
			     run->metric.higher_better ? "higher" : "lower", run->metric.name);
	char *xq = quoted(xl);
	free(xl);
	xl = xq;
	char extra[64];
	snprintf(extra, sizeof(extra), "set lmargin %zu", maxchars + 3 > 60 ? (size_t)60 : maxchars + 3);
	const char *plot =
	    "\"effects.dat\" index 0 using 2:1 with points pt 7 ps 0.6 lc rgb \"#0072B2\" title \"one matched pair\", \\\n"
	    "     \"effects.dat\" index 1 using 2:1:3:4 with xerrorbars pt 13 ps 2 lw 1.5 lc rgb \"#000000\" "
	    "title \"geometric mean, 95% interval\"";
	const char *kv[] = {"TITLE", "what each setting buys", "XLABEL", xl, "YTICS", tics.buf,
			    "YMAX", ymax, "EXTRA", extra, "PLOT", plot};
	char *noci_s = noci ? xasprintf(" %zu geometric mean%s without an interval (no interval on %s points) "
					"%s drawn without whiskers.", noci, noci > 1 ? "s" : "",
					noci > 1 ? "their" : "its", noci > 1 ? "are" : "is")
			    : xstrdup("");
	char *cap = xasprintf("For each factor and level, the gain of %s over every matched pair of points "
			      "(equal in every other factor) against the reference level, the geometric mean "
			      "with its 95%% interval as whiskers; %zu largest effects, all in "
			      "tables/effects.csv.%s%s", run->metric.name, n, noci_s, left);
	free(noci_s);
	if (write_dat(F->plotdir, "effects", &dat) == 0)
		plot_prepare(F->ps, F->plotdir, "effects", "Effects", cap, "effects", kv, ARRAY_SIZE(kv) / 2, FIG_W,
			     (int)(180 + 34 * n));
	free(cap);
	free(xl);
	free(left);
	free(shown);
	sb_free(&hidden);
	sb_free(&dat);
	sb_free(&tics);
}

/* The best drawn cell of group g in panel p of view v, or -1: the group's
 * own best when the view keeps every cell in one panel. */
static long best_in(const struct run *run, const struct report_tables *rt, const struct facet_view *v, size_t g,
		    size_t p)
{
	const struct cellset *cs = &run->cells;
	if (!v->nwhere && !v->npf)
		return rt->best[g].best;
	long b = -1;
	for (size_t c = 0; c < cs->ncells; c++)
		if (rt->cell_group[c] == (long)g && v->panel[c] == (long)p &&
		    (b < 0 || effects_gain(cs->value[b], cs->value[c], run->metric.higher_better) > 1))
			b = (long)c;
	return b;
}

/* The columns of best.dat, 1-based as gnuplot's using counts them. */
enum {
	BEST_BASE = 2, /* baseline value, then its whiskers lo and hi */
	BEST_OPT = 5,  /* best value, lo, hi */
	BEST_TOP = 8,  /* the higher whisker of the two: where the labels sit */
	BEST_GAIN,     /* "×1.23" */
	BEST_CI,       /* "1.10..1.37", the gain's 95% interval; "-" when unknown */
	BEST_LABEL,    /* the group's levels */
};

/* The gain of best over base as the figure prints it: "×1.23" into g and
 * its 95% interval "1.10..1.37" into ci (3 significant digits, more where
 * the ends would print alike or on the wrong side of 1), "-" when the
 * points have no interval, "" when best is the baseline. */
static void best_gain_text(const struct run *run, long base, long best, char g[40], char ci[80])
{
	const struct cellset *cs = &run->cells;
	double gain = effects_gain(cs->value[base], cs->value[best], run->metric.higher_better);
	double u = sqrt(cs->u[base] * cs->u[base] + cs->u[best] * cs->u[best]);
	char num[32], lo[32], hi[32];
	snprintf(g, 40, "×%s", fmt_sig3(num, gain));
	if (base == best)
		ci[0] = '\0';
	else if (isnan(u))
		snprintf(ci, 80, "-");
	else {
		fmt_sig_range(lo, hi, gain * exp(-u), gain * exp(u), 1.0);
		snprintf(ci, 80, "%s..%s", lo, hi);
	}
}

/* Panel p's rows of the best figure into dat (a block): for each group
 * with a measured baseline, the baseline and the best drawn point with
 * their whiskers (95% confidence intervals), the gain with its interval,
 * labelled by the group's levels (columns BEST_*). Returns the rows;
 * *maxchars, *top and *bot follow the labels and whiskers. */
static size_t best_rows(const struct run *run, const struct report_tables *rt, const struct facet_view *v,
			size_t p, struct strbuf *dat, size_t *maxchars, double *top, double *bot)
{
	size_t rows = 0;
	for (size_t i = 0; i < rt->nbest && rows < 40; i++) {
		const struct best *b = &rt->best[i];
		long best = best_in(run, rt, v, i, p);
		if (b->baseline < 0 || best < 0)
			continue;
		struct strbuf lv = {0};
		for (size_t k = 0; k < run->ngroup; k++) {
			if (k)
				sb_putc(&lv, ' ');
			sb_puts(&lv, run_level(run, run->group[k], b->group[k]));
		}
		double blo, bhi, olo, ohi;
		double base = cell_whiskers(run, b->baseline, &blo, &bhi), opt = cell_whiskers(run, best, &olo, &ohi);
		double hi = bhi > ohi ? bhi : ohi, lo = blo < olo ? blo : olo;
		char g[40], ci[80];
		best_gain_text(run, b->baseline, best, g, ci);
		if (!rows && dat->len)
			sb_puts(dat, "\n\n"); /* a block per panel with rows */
		sb_printf(dat, "%zu\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%s\t%s\t", rows, base, blo, bhi, opt,
			  olo, ohi, hi, g, ci[0] ? ci : " ");
		dat_text(dat, lv.buf ? lv.buf : "all");
		sb_putc(dat, '\n');
		*maxchars = lv.len > *maxchars ? lv.len : *maxchars;
		*top = hi > *top ? hi : *top;
		*bot = lo < *bot ? lo : *bot;
		sb_free(&lv);
		rows++;
	}
	return rows;
}

/* Baseline vs optimal per group (the factors the baseline leaves free):
 * the optimal among the points the view keeps, in its panels. The figure
 * widens with the rows and turns the group labels when they would overlap. */
/* The baseline-vs-optimal figure's caption; as the best table says, the
 * gains printed over the bars between points of one process each leave out
 * the variation between processes, and the caption counts them. */
static char *best_caption(struct figs *F, const struct facet_view *v)
{
	size_t gains, within = best_within(&F->run->cells, F->rt->best, F->rt->nbest, &gains);
	char *note = within ? xasprintf(" %zu of the %zu gains in tables/best.csv compare points measured in one "
					"process each: their intervals hold the noise inside each process only, not "
					"the variation between fresh processes (repeat: 3 or more shows it).",
					within, gains)
			    : xstrdup("");
	char *cap = xasprintf("For each group, the point at the recipe's baseline and the best measured "
			      "point%s; whiskers: each point's 95%% confidence interval. Above them the gain "
			      "(×, > 1 better) and under it its 95%% interval ('-': the points have none). "
			      "Configurations in tables/best.csv.%s",
			      v->nwhere ? " of those the where keeps" : "", note);
	free(note);
	return cap;
}

static void best_figure(struct figs *F, const struct report_facet *facet)
{
	const struct run *run = F->run;
	const struct report_tables *rt = F->rt;
	struct facet_view v;
	facet_view_build(&v, run, facet, F->cli, NULL, 0);
	struct strbuf name = {0}, title = {0}, dat = {0};
	sb_puts(&name, "best");
	facet_name_suffix(&v, &name);
	unique_name(F, &name);
	sb_puts(&title, "baseline vs optimal");
	facet_where_text(&v, &title);
	facet_panels_text(&v, &title);
	size_t maxchars = 0, most = 0, *nrows = xcalloc(v.npanels ? v.npanels : 1, sizeof(size_t));
	double top = 0, bot = INFINITY;
	for (size_t p = 0; p < v.npanels; p++) {
		size_t rows = nrows[p] = best_rows(run, rt, &v, p, &dat, &maxchars, &top, &bot);
		most = rows > most ? rows : most;
	}
	if (!most) {
		if (v.nwhere)
			note_empty(F, &v, name.buf, title.buf);
		goto out;
	}
	struct strbuf groups = {0}, plot = {0}, ex = {0};
	for (size_t k = 0; k < run->ngroup; k++)
		sb_printf(&groups, "%s%s", k ? " " : "", fname(run, run->group[k]));
	char **body = xcalloc(v.npanels, sizeof(char *));
	for (size_t p = 0, blk = 0; p < v.npanels; p++) {
		if (!nrows[p])
			continue; /* no baseline in this panel: NULL (facet_layout) */
		body[p] = xasprintf("\"%s.dat\" index %zu using %d:%d:%d:xtic(%d) lc rgb \"%s\" title \"baseline\", \\\n"
				    "     \"\" index %zu using %d:%d:%d lc rgb \"%s\" title \"optimal\", \\\n"
				    "     \"\" index %zu using 0:%d:%d with labels offset 0,1.9 font \",11\" notitle, \\\n"
				    "     \"\" index %zu using 0:%d:%d with labels offset 0,0.8 font \",9\" notitle",
				    name.buf, blk, BEST_BASE, BEST_BASE + 1, BEST_BASE + 2, BEST_LABEL, plot_color(5),
				    blk, BEST_OPT, BEST_OPT + 1, BEST_OPT + 2, plot_color(0), blk, BEST_TOP, BEST_GAIN,
				    blk, BEST_TOP, BEST_CI);
		blk++;
	}
	int w = v.npanels > 1 ? FIG_W : (int)(260 + 64 * most) > FIG_W ? (int)(260 + 64 * most) : FIG_W, h = FIG_H;
	int bottom = tics_turn(maxchars, most, panel_px(&v, w), &ex);
	char *yr = xasprintf("[%.6g:%.6g]", bot / 1.5, top * 2);
	log_ytics(bot / 1.5, top * 2, &ex);
	char *yl = xasprintf("%s, log scale", metric_label(&run->metric));
	char *yq = quoted(yl), *xl = quoted(groups.buf ? groups.buf : ""), *t = quoted(title.buf);
	facet_layout(&v, body, yr, t, xl, yq, bottom, 10, &ex, &plot, &w, &h);
	if (v.npanels <= 1 && bottom)
		h += bottom;
	const char *kv[] = {"TITLE", t, "XLABEL", xl, "YLABEL", yq, "EXTRA", ex.buf ? ex.buf : "",
			    "PLOT", plot.buf};
	char *cap = best_caption(F, &v);
	if (write_dat(F->plotdir, name.buf, &dat) == 0)
		plot_prepare(F->ps, F->plotdir, name.buf, title.buf, cap, "best", kv, ARRAY_SIZE(kv) / 2, w, h);
	for (size_t p = 0; p < v.npanels; p++)
		free(body[p]);
	free(body);
	free(cap);
	free(yr);
	free(yl);
	free(yq);
	free(xl);
	free(t);
	sb_free(&groups);
	sb_free(&plot);
	sb_free(&ex);
out:
	free(nrows);
	sb_free(&dat);
	sb_free(&name);
	sb_free(&title);
	facet_view_free(&v);
}

void report_figures_build(const struct run *run, const struct report_tables *rt, const char *plotdir,
			  const struct report_facet *cli, struct plot_set *ps, FILE *err)
{
	if (run->cells.ncells == 0)
		return;
	struct figs F = {run, rt, plotdir, ps, cli};
	long x, color;
	scatters(&F, &x, &color);
	normalised(&F, x, color);
	const struct report_spec *spec = &run->recipe.report;
	if (spec->nbars) {
		for (size_t i = 0; i < spec->nbars; i++)
			bars(&F, (size_t)spec->bars[i].x, spec->bars[i].group, &spec->bars[i].facet);
	} else if (rt->scatter_x >= 0) {
		size_t g;
		size_t n = default_colors(run, rt, (size_t)rt->scatter_x, &g, 1);
		bars(&F, (size_t)rt->scatter_x, n ? (long)g : -1, NULL);
	}
	scaling(run, rt, plotdir, ps);
	effects_figure(&F);
	if (spec->nbest)
		for (size_t i = 0; i < spec->nbest; i++)
			best_figure(&F, &spec->best[i].facet);
	else
		best_figure(&F, NULL);
	(void)err;
}
