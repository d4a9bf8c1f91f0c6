/* report_facets.c - a figure's facets: which cells it draws, its panels laid
 * out on one page with the same axes, and numeric axes (facets.h). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "facets.h"
#include "util.h"

static int avoided(size_t f, const size_t *avoid, size_t navoid)
{
	for (size_t i = 0; i < navoid; i++)
		if (avoid[i] == f)
			return 1;
	return 0;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

void facet_view_build(struct facet_view *v, const struct run *run, const struct report_facet *item,
		      const struct report_facet *cli, const size_t *avoid, size_t navoid)
{
	const struct cellset *cs = &run->cells;
	memset(v, 0, sizeof(*v));
	v->run = run;
	size_t nw = (item ? item->nwhere : 0) + (cli ? cli->nwhere : 0);
	v->where = xcalloc(nw ? nw : 1, sizeof(*v->where));
	for (size_t t = 0; item && t < item->nwhere; t++)
		v->where[v->nwhere++] = &item->where[t];
	for (size_t t = 0; cli && t < cli->nwhere; t++)
		v->where[v->nwhere++] = &cli->where[t];
	if (item && item->npanels) {
		v->npf = item->npanels;
		memcpy(v->pf, item->panels, sizeof(v->pf));
	} else if (cli && cli->npanels) {
		int ok = 1;
		for (size_t j = 0; j < cli->npanels; j++)
			ok &= !avoided(cli->panels[j], avoid, navoid);
		if (ok) {
			v->npf = cli->npanels;
			memcpy(v->pf, cli->panels, sizeof(v->pf));
		}
	}
	v->panel = xmalloc((cs->ncells ? cs->ncells : 1) * sizeof(long));
	size_t *keys = xmalloc((cs->ncells ? cs->ncells : 1) * sizeof(size_t));
	size_t nk = 0;
	for (size_t c = 0; c < cs->ncells; c++) {
		const size_t *lv = &CELL_LEVEL(cs, c, 0);
		int keep = 1;
		for (size_t t = 0; t < v->nwhere && keep; t++)
			keep = v->where[t]->keep[lv[v->where[t]->factor]];
		v->panel[c] = -1;
		if (!keep)
			continue;
		size_t key = 0;
		for (size_t j = 0; j < v->npf; j++)
			key = key * cs->nlevels[v->pf[j]] + lv[v->pf[j]];
		keys[nk++] = key;
		v->panel[c] = (long)key; /* a key for now: an index below */
		v->ndrawn++;
	}
	qsort(keys, nk, sizeof(size_t), cmp_size);
	v->key = xmalloc((nk ? nk : 1) * sizeof(size_t));
	for (size_t i = 0; i < nk; i++)
		if (i == 0 || keys[i] != keys[i - 1])
			v->key[v->npanels++] = keys[i];
	free(keys);
	for (size_t c = 0; c < cs->ncells; c++) {
		if (v->panel[c] < 0)
			continue;
		size_t lo = 0, hi = v->npanels;
		while (hi - lo > 1) {
			size_t mid = (lo + hi) / 2;
			if (v->key[mid] <= (size_t)v->panel[c])
				lo = mid;
			else
				hi = mid;
		}
		v->panel[c] = (long)lo;
	}
}

void facet_view_free(struct facet_view *v)
{
	free(v->where);
	free(v->key);
	free(v->panel);
	memset(v, 0, sizeof(*v));
}

void facet_panel_label(const struct facet_view *v, size_t p, struct strbuf *sb)
{
	const struct cellset *cs = &v->run->cells;
	size_t key = v->key[p], lv[FACET_MAX_PANELS];
	for (size_t j = v->npf; j-- > 0;) {
		lv[j] = key % cs->nlevels[v->pf[j]];
		key /= cs->nlevels[v->pf[j]];
	}
	for (size_t j = 0; j < v->npf; j++)
		sb_printf(sb, "%s%s = %s", j ? ", " : "", v->run->recipe.factors[v->pf[j]].name,
			  run_level(v->run, v->pf[j], lv[j]));
}

void facet_where_text(const struct facet_view *v, struct strbuf *sb)
{
	const struct recipe *r = &v->run->recipe;
	for (size_t t = 0; t < v->nwhere; t++) {
		const struct where_term *w = v->where[t];
		sb_printf(sb, "%s%s = ", t ? " and " : " where ", r->factors[w->factor].name);
		size_t k = 0;
		for (size_t l = 0; l < r->factors[w->factor].nlevels; l++)
			if (w->keep[l])
				sb_printf(sb, "%s%s", k++ ? " or " : "", r->factors[w->factor].levels[l]);
	}
}

void facet_panels_text(const struct facet_view *v, struct strbuf *sb)
{
	const struct recipe *r = &v->run->recipe;
	for (size_t j = 0; j < v->npf; j++)
		sb_printf(sb, "%s%s", j ? " and " : ", one panel per ", r->factors[v->pf[j]].name);
}

void facet_name_suffix(const struct facet_view *v, struct strbuf *sb)
{
	const struct recipe *r = &v->run->recipe;
	for (size_t j = 0; j < v->npf; j++)
		sb_printf(sb, "%s%s", j ? "_" : "_by_", r->factors[v->pf[j]].name);
	for (size_t t = 0; t < v->nwhere; t++)
		sb_printf(sb, "%s%s", t ? "_" : "_where_", r->factors[v->where[t]->factor].name);
}

/* Columns of a page of n panels: all in a row up to 3, else about square,
 * wider than tall. */
static size_t layout_cols(size_t n)
{
	if (n <= 3)
		return n;
	size_t c = 1;
	while (c * c < n)
		c++;
	return c;
}

/* Design note: the panels share one page and their axes. gnuplot's
 * multiplot with fixed margins and spacing gives every panel the same plot
 * area; the shared ranges go before the first panel; the key is drawn once,
 * in the first panel, placed in the page's right margin; the y label on the
 * first column, the x label on the last row. The PNG pass re-runs the whole
 * script (plot.c), so nothing here relies on replot. */
void facet_layout(const struct facet_view *v, char *const *body, const char *yrange, const char *title,
		  const char *xlabel, const char *ylabel, int rot_bottom, size_t keychars, struct strbuf *extra,
		  struct strbuf *plot, int *w, int *h)
{
	if (yrange)
		sb_printf(extra, "\nset yrange %s", yrange);
	size_t n = v->npanels;
	if (n <= 1) {
		sb_puts(plot, body[0]);
		return;
	}
	size_t cols = layout_cols(n), rows = (n + cols - 1) / cols;
	int keypx = (int)(keychars > 40 ? 40 : keychars) * 9 + 90;
	int W = 130 + (int)cols * 400 + keypx, H = 110 + rot_bottom + (int)rows * (320 + rot_bottom);
	if (W < *w)
		W = *w;
	if (H < *h)
		H = *h;
	*w = W;
	*h = H;
	double l = 120.0 / W, r = 1.0 - (double)keypx / W, b = (75.0 + rot_bottom) / H, t = 1.0 - 80.0 / H;
	double sx = 80.0 / W, sy = (90.0 + rot_bottom) / H;
	sb_printf(extra, "\nset multiplot layout %zu,%zu rowsfirst margins %.4f,%.4f,%.4f,%.4f spacing %.4f,%.4f "
			 "title \"%s\" font \",15\"",
		  rows, cols, l, r, b, t, sx, sy, title);
	sb_printf(extra, "\nset key at screen %.4f,%.4f left top", r + 10.0 / W, t);
	/* a panel without points (body NULL: e.g. no baseline in it) is
	 * skipped, its place said by a note drawn with the first panel that
	 * has points: gnuplot cannot plot an empty data block */
	size_t first = 0, nempty = 0;
	while (first < n && !body[first])
		first++;
	double pw = (r - l - (double)(cols - 1) * sx) / (double)cols, ph = (t - b - (double)(rows - 1) * sy) / (double)rows;
	for (size_t p = 0; p < n; p++) {
		if (body[p])
			continue;
		struct strbuf label = {0};
		facet_panel_label(v, p, &label);
		sb_printf(extra, "\nset label %zu \"", 900 + nempty++);
		plot_quote(extra, label.buf ? label.buf : "");
		sb_printf(extra, ": no points\" at screen %.4f,%.4f center noenhanced", l + (double)(p % cols) * (pw + sx) + pw / 2,
			  t - (double)(p / cols) * (ph + sy) - ph / 2);
		sb_free(&label);
	}
	for (size_t p = 0; p < n; p++) {
		if (!body[p]) {
			sb_puts(p < first ? extra : plot, "\nset multiplot next");
			continue;
		}
		struct strbuf label = {0}, *out = p != first ? plot : extra;
		facet_panel_label(v, p, &label);
		if (p != first) {
			sb_puts(out, "\nunset key");
		}
		sb_puts(out, "\nset title \"");
		plot_quote(out, label.buf ? label.buf : "");
		sb_puts(out, "\" font \",13\"");
		if (p % cols == 0)
			sb_printf(out, "\nset ylabel \"%s\"", ylabel);
		else
			sb_puts(out, "\nunset ylabel");
		/* the x label under the last panel of each column */
		if (p + cols >= n)
			sb_printf(out, "\nset xlabel \"%s\"", xlabel);
		else
			sb_puts(out, "\nunset xlabel");
		if (p != first)
			sb_puts(plot, "\nplot ");
		sb_puts(plot, body[p]);
		for (size_t k = 0; p == first && k < nempty; k++)
			sb_printf(plot, "\nunset label %zu", 900 + k);
		sb_free(&label);
	}
	sb_puts(plot, "\nunset multiplot");
}

int facet_numeric(const struct run *run, size_t f, double *val)
{
	const struct factor *fa = &run->recipe.factors[f];
	if (fa->nlevels < 2)
		return 0;
	for (size_t l = 0; l < fa->nlevels; l++) {
		/* integers only: "2.2" and "2.10" are versions more often than
		 * numbers, and as numbers they would sort (and collide) wrongly */
		const char *s = fa->levels[l];
		const char *d = s + (*s == '-' || *s == '+');
		if (!*d || d[strspn(d, "0123456789")] || strlen(d) > 15)
			return 0;
		val[l] = strtod(s, NULL);
		for (size_t k = 0; k < l; k++)
			if (val[k] == val[l]) /* "8" and "08": not one scale */
				return 0;
	}
	return 1;
}

int facet_log_axis(const double *val, size_t n)
{
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		if (!(val[i] > 0))
			return 0;
		if (val[i] < lo)
			lo = val[i];
		if (val[i] > hi)
			hi = val[i];
	}
	return n > 1 && hi > 100 * lo;
}
