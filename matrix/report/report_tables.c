/* report_tables.c - the report's tables from a loaded run: effects,
 * interactions, improvements, best configuration, scaling and failures.
 * Numbers are held with every digit (fmt_full: the shortest text that reads
 * back as the same double), which the CSV files keep; the pages show the
 * measured ones with 3 significant digits (rtable's sig). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tables.h"
#include "plan/vocab.h"
#include "factorial.h"
#include "profiles.h"
#include "stats.h"
#include "util.h"

char *fmt_num(double v)
{
	char b[32];
	return xstrdup(fmt_full(b, v));
}

/* fmt_num into a small ring of static buffers, for building rows. */
static const char *num(double v)
{
	static char ring[16][48];
	static unsigned k;
	return fmt_full(ring[k++ % 16], v);
}

static const char *count(size_t n)
{
	static char ring[8][24];
	static unsigned k;
	char *b = ring[k++ % 8];
	snprintf(b, 24, "%zu", n);
	return b;
}

/* Numeric columns right-aligned; the measured ones (all but counts) shown
 * with 3 significant digits on the pages. */
static void right(struct rtable *t, const char *const *cols)
{
	static const char *const counts[] = {"pairs", "points", "processes", "gpus"};
	for (size_t i = 0; i < t->ncols; i++)
		for (size_t k = 0; cols[k]; k++)
			if (strcmp(t->cols[i], cols[k]) == 0) {
				t->align_right[i] = 1;
				t->sig[i] = 1;
				for (size_t c = 0; c < ARRAY_SIZE(counts); c++)
					if (strcmp(cols[k], counts[c]) == 0)
						t->sig[i] = 0;
			}
}

static const char *const numeric_cols[] = {
	"pairs", "gain", "gain_min", "gain_max", "gain_lo", "gain_hi", "vs_main", "baseline", "new",
	"improvement_pct", "improvement_lo", "improvement_hi", "best", "points", "gpus",
	"throughput", "ideal", "scale_efficiency", "value", "lo", "hi", "processes", "throughput_lo", "throughput_hi",
	"scale_lo", "scale_hi", NULL,
};

/* The levels of a factor with more than one that have no effect row (no
 * matched pair with the reference level), named at the end of t's caption:
 * a factor the rows cannot measure is not left out without a word. */
static void effects_none(const struct run *run, const struct report_tables *rt, struct rtable *t)
{
	const struct cellset *cs = &run->cells;
	struct strbuf sb = {0};
	size_t n = 0;
	for (size_t f = 0; f < cs->nfactors; f++)
		for (size_t to = 0; to < cs->nlevels[f]; to++) {
			size_t i = 0;
			while (i < rt->neffects && !(rt->effects[i].factor == f && rt->effects[i].to == to))
				i++;
			if (to == run->ref[f] || i < rt->neffects)
				continue;
			sb_printf(&sb, "%s%s %s -> %s", n++ ? ", " : "", run->recipe.factors[f].name,
				  run_level(run, f, run->ref[f]), run_level(run, f, to));
		}
	if (n) {
		rtable_caption_add(t, " No matched pair of measured points, so no row: %s.", sb.buf);
	}
	sb_free(&sb);
}

static struct rtable *effects_table(const struct run *run, const struct report_tables *rt)
{
	static const char *const cols[] = {"factor", "from", "to", "pairs", "gain",
					   "gain_min", "gain_max", "gain_lo", "gain_hi"};
	struct rtable *t = rtable_new("effects", "Effects: what each setting buys", ARRAY_SIZE(cols), cols);
	t->caption = xasprintf(
	    "gain: how many times better %s is at `to` than at `from`, geometric mean over every "
	    "matched pair (points equal in every other factor); > 1 means `to` is better (%s is "
	    "%s). gain_lo..gain_hi: 95%% interval of the geometric mean from the points' confidence "
	    "intervals, at least the t interval of the pairs' scatter where a point ran in one "
	    "process (see Uncertainty). Sorted by size.",
	    run->metric.name, run->metric.name, run->metric.higher_better ? "higher is better" : "lower is better");
	right(t, numeric_cols);
	rtable_interval(t, 4, 7, 8, 1.0);
	effects_none(run, rt, t);
	for (size_t i = 0; i < rt->neffects; i++) {
		const struct effect *e = &rt->effects[i];
		const char *row[] = {
		    run->recipe.factors[e->factor].name, run_level(run, e->factor, e->from),
		    run_level(run, e->factor, e->to), count(e->npairs), num(e->geomean), num(e->min),
		    num(e->max), num(e->geomean * exp(-e->u)), num(e->geomean * exp(e->u)),
		};
		rtable_add(t, (char *const *)row);
	}
	return t;
}

struct block {
	size_t effect;
	size_t by;
	double spread;
	size_t first, n;      /* range in effect.inter */
};

static int cmp_block(const void *a, const void *b)
{
	const struct block *x = a, *y = b;
	if (x->spread != y->spread)
		return x->spread < y->spread ? 1 : -1;
	if (x->effect != y->effect)
		return x->effect < y->effect ? -1 : 1;
	return (x->by > y->by) - (x->by < y->by);
}

static struct rtable *interactions_table(const struct run *run, const struct report_tables *rt)
{
	static const char *const cols[] = {"factor", "from", "to", "by", "by_level", "pairs",
					   "gain", "gain_min", "gain_max", "vs_main", "gain_lo", "gain_hi"};
	struct rtable *t = rtable_new("interactions", "Interactions: each effect broken down by every other factor",
				      ARRAY_SIZE(cols), cols);
	t->caption = xstrdup(
	    "gain of `from` -> `to` over the matched pairs where factor `by` is at `by_level`; "
	    "vs_main: that gain over the effect's overall gain; gain_lo..gain_hi: its 95% interval "
	    "from the points' intervals, at least the t interval of the pairs' scatter where a point "
	    "ran in one process. Blocks (one effect, one other "
	    "factor) are sorted by their spread, the largest sub-gain over the smallest: the "
	    "strongest two-factor interactions first.");
	right(t, numeric_cols);
	rtable_interval(t, 6, 10, 11, 1.0);
	size_t nb = 0, cap = 0;
	struct block *b = NULL;
	for (size_t i = 0; i < rt->neffects; i++) {
		const struct effect *e = &rt->effects[i];
		for (size_t k = 0; k < e->ninter;) {
			size_t j = k;
			double lo = INFINITY, hi = 0;
			while (j < e->ninter && e->inter[j].by == e->inter[k].by) {
				if (e->inter[j].geomean < lo)
					lo = e->inter[j].geomean;
				if (e->inter[j].geomean > hi)
					hi = e->inter[j].geomean;
				j++;
			}
			if (nb == cap) {
				cap = cap ? 2 * cap : 32;
				b = xrealloc(b, cap * sizeof(*b));
			}
			b[nb++] = (struct block){i, e->inter[k].by, hi / lo, k, j - k};
			k = j;
		}
	}
	if (nb)
		qsort(b, nb, sizeof(*b), cmp_block);
	for (size_t i = 0; i < nb; i++) {
		const struct effect *e = &rt->effects[b[i].effect];
		for (size_t k = b[i].first; k < b[i].first + b[i].n; k++) {
			const struct interaction *in = &e->inter[k];
			const char *row[] = {
			    run->recipe.factors[e->factor].name, run_level(run, e->factor, e->from),
			    run_level(run, e->factor, e->to), run->recipe.factors[in->by].name,
			    run_level(run, in->by, in->by_level), count(in->npairs), num(in->geomean),
			    num(in->min), num(in->max), num(in->geomean / e->geomean),
			    num(in->geomean * exp(-in->u)), num(in->geomean * exp(in->u)),
			};
			rtable_add(t, (char *const *)row);
		}
	}
	free(b);
	return t;
}

static void add_improvements(const struct run *run, struct rtable *t, size_t f, size_t from,
			     size_t to, const size_t *by, size_t nby)
{
	size_t n;
	struct improvement *rows = improvements_compute(&run->cells, f, from, to, by, nby,
							 run->metric.higher_better, &n);
	struct strbuf g = {0};
	for (size_t i = 0; i < n; i++) {
		sb_reset(&g);
		for (size_t k = 0; k < nby; k++) {
			if (k)
				sb_putc(&g, ' ');
			sb_printf(&g, "%s=%s", run->recipe.factors[by[k]].name,
				  run_level(run, by[k], rows[i].group[k]));
		}
		const char *row[] = {
		    run->recipe.factors[f].name, run_level(run, f, from), run_level(run, f, to),
		    g.buf ? g.buf : "", count(rows[i].npairs), num(rows[i].base * run->metric.scale),
		    num(rows[i].new * run->metric.scale), run->metric.unit, num(rows[i].pct),
		    num(rows[i].pct_lo), num(rows[i].pct_hi),
		};
		rtable_add(t, (char *const *)row);
	}
	sb_free(&g);
	improvements_free(rows, n);
}

/* Why the recipe's improvement im has no row, said in sb: a level of its
 * factor with no measured point, or no two measured points that differ in
 * that factor alone. */
static void improvement_none(const struct run *run, const struct report_improvement *im, struct strbuf *sb)
{
	const struct cellset *cs = &run->cells;
	size_t f = (size_t)im->factor, nfrom = 0, nto = 0;
	for (size_t c = 0; c < cs->ncells; c++) {
		nfrom += CELL_LEVEL(cs, c, f) == (size_t)im->from;
		nto += CELL_LEVEL(cs, c, f) == (size_t)im->to;
	}
	const char *name = run->recipe.factors[f].name;
	sb_printf(sb, " No row for %s %s -> %s: ", name, run_level(run, f, (size_t)im->from),
		  run_level(run, f, (size_t)im->to));
	if (!nfrom || !nto)
		sb_printf(sb, "no point at %s=%s has a value of %s (the last table says why).", name,
			  run_level(run, f, (size_t)(nto ? im->from : im->to)), run->metric.name);
	else
		sb_printf(sb, "no two measured points differ in %s alone.", name);
}

/* The form of the compile study (001): one row per level of the first `by`
 * factors, and for each level of the last one its baseline, new value and
 * improvement side by side. */
static struct rtable *improvements_pivot(const struct run *run, const struct report_improvement *im,
					 size_t index)
{
	size_t nby = im->nby, last = (size_t)im->by[nby - 1];
	size_t nl = run->recipe.factors[last].nlevels;
	size_t ncols = nby - 1 + 3 * nl;
	char **cols = xmalloc(ncols * sizeof(char *));
	const char *fn = run->recipe.factors[im->factor].name;
	const char *ln = run->recipe.factors[last].name;
	for (size_t k = 0; k + 1 < nby; k++)
		cols[k] = xstrdup(run->recipe.factors[im->by[k]].name);
	for (size_t l = 0; l < nl; l++) {
		const char *lv = run_level(run, last, l);
		cols[nby - 1 + l] = xasprintf("%s=%s (%s %s)", fn, run_level(run, im->factor, im->from), ln, lv);
		cols[nby - 1 + nl + l] = xasprintf("%s=%s (%s %s)", fn, run_level(run, im->factor, im->to), ln, lv);
		cols[nby - 1 + 2 * nl + l] = xasprintf("improvement %% (%s %s)", ln, lv);
	}
	char *name = xasprintf("improvements_%zu", index + 1);
	char *title = xasprintf("Improvement of %s %s -> %s by %s, side by side", fn,
				run_level(run, im->factor, im->from), run_level(run, im->factor, im->to), ln);
	struct rtable *t = rtable_new(name, title, ncols, (const char *const *)cols);
	for (size_t i = nby - 1; i < ncols; i++)
		t->align_right[i] = t->sig[i] = 1;
	t->caption = xasprintf("the rows of tables/improvements.csv for this entry, one column per level of %s "
			       "(values in %s; the 95%% intervals are in tables/improvements.csv)",
			       ln, *run->metric.unit ? run->metric.unit : run->metric.name);
	size_t *by = xmalloc(nby * sizeof(size_t));
	for (size_t k = 0; k < nby; k++)
		by[k] = (size_t)im->by[k];
	size_t n;
	struct improvement *rows = improvements_compute(&run->cells, (size_t)im->factor, (size_t)im->from,
							 (size_t)im->to, by, nby, run->metric.higher_better, &n);
	if (!n) { /* "(none)" alone said nothing */
		struct strbuf none = {0};
		improvement_none(run, im, &none);
		rtable_caption_add(t, ".%s", none.buf);
		sb_free(&none);
	}
	char **row = xcalloc(ncols, sizeof(char *));
	for (size_t i = 0; i < n;) {
		size_t j = i;
		for (size_t k = 0; k < ncols; k++) {
			free(row[k]);
			row[k] = NULL;
		}
		for (size_t k = 0; k + 1 < nby; k++)
			row[k] = xstrdup(run_level(run, by[k], rows[i].group[k]));
		/* rows are sorted by group: the same leading levels are adjacent */
		while (j < n && memcmp(rows[j].group, rows[i].group, (nby - 1) * sizeof(size_t)) == 0) {
			size_t l = rows[j].group[nby - 1];
			row[nby - 1 + l] = fmt_num(rows[j].base * run->metric.scale);
			row[nby - 1 + nl + l] = fmt_num(rows[j].new * run->metric.scale);
			row[nby - 1 + 2 * nl + l] = fmt_num(rows[j].pct);
			j++;
		}
		rtable_add(t, row);
		i = j;
	}
	for (size_t k = 0; k < ncols; k++) {
		free(row[k]);
		free(cols[k]);
	}
	free(row);
	free(cols);
	free(by);
	free(name);
	free(title);
	improvements_free(rows, n);
	return t;
}

static struct rtable *improvements_table(const struct run *run, const struct report_tables *rt)
{
	static const char *const cols[] = {"factor", "from", "to", "group", "pairs", "baseline", "new", "unit",
					   "improvement_pct", "improvement_lo", "improvement_hi"};
	struct rtable *t = rtable_new("improvements", "Improvements", ARRAY_SIZE(cols), cols);
	right(t, numeric_cols);
	const struct metric *m = &run->metric;
	t->caption = xasprintf(
	    "%s; here %s is %s. baseline and new: geometric means over the group's matched pairs "
	    "(equal in every other factor). improvement_lo..improvement_hi: 95%% interval from the "
	    "points' intervals, at least the t interval of the pairs' scatter where a point ran in one "
	    "process.",
	    IMPROVEMENT_FORMULA, m->name, m->higher_better ? "throughput-like" : "time-like");
	rtable_interval(t, 8, 9, 10, 0.0);
	const struct report_spec *spec = &run->recipe.report;
	if (spec->nimprovements) {
		struct strbuf none = {0};
		for (size_t i = 0; i < spec->nimprovements; i++) {
			const struct report_improvement *im = &spec->improvements[i];
			size_t *by = xmalloc((im->nby ? im->nby : 1) * sizeof(size_t));
			for (size_t k = 0; k < im->nby; k++)
				by[k] = (size_t)im->by[k];
			size_t before = t->nrows;
			add_improvements(run, t, (size_t)im->factor, (size_t)im->from, (size_t)im->to, by, im->nby);
			if (t->nrows == before)
				improvement_none(run, im, &none);
			free(by);
		}
		if (none.len)
			rtable_caption_add(t, "%s", none.buf);
		sb_free(&none);
		return t;
	}
	/* no improvements in the recipe: the three largest effects of settings
	 * (not of model, task, batch, seq_len: what is measured), by model */
	long model = recipe_factor_index(&run->recipe, "model");
	for (size_t i = 0, k = 0; i < rt->neffects && k < 3; i++) {
		const struct effect *e = &rt->effects[i];
		if (vocab_is_workload(run->recipe.factors[e->factor].name))
			continue;
		size_t by = (size_t)model;
		add_improvements(run, t, e->factor, e->from, e->to, &by, model >= 0 ? 1 : 0);
		k++;
	}
	return t;
}

/* The caption's note on n of total single-pair figures (gains, scale
 * factors) between points measured in one process each: what their
 * intervals (subject) hold and leave out. */
static void caption_within(struct rtable *t, size_t n, size_t total, const char *what, const char *subject,
			   const char *why)
{
	rtable_caption_add(t, " %zu of the %zu %s compare points measured in one process each (ci_kind within): "
			      "%s hold the noise inside each process only, not the variation between fresh "
			      "processes%s; measure with repeat: 3 or more to decide them.",
			   n, total, what, subject, why);
}

static struct rtable *best_table(const struct run *run, const struct report_tables *rt)
{
	static const char *const cols[] = {"group", "points", "baseline", "best", "unit", "gain",
					   "gain_lo", "gain_hi", "best_config", "best_id", "clear_winner"};
	struct rtable *t = rtable_new("best", "Best configuration per group: baseline vs optimal",
				      ARRAY_SIZE(cols), cols);
	right(t, numeric_cols);
	rtable_interval(t, 5, 6, 7, 1.0);
	t->caption = xasprintf(
	    "a group is an assignment of the factors the baseline leaves free; baseline: the "
	    "group's point at the recipe's baseline%s; best: its best measured point; gain: best over "
	    "baseline (> 1 better), gain_lo..gain_hi its 95%% interval; best_config: the settings "
	    "where best differs from the baseline; clear_winner: yes when the best point's interval "
	    "lies beyond the runner-up's, no when the two cannot be told apart.",
	    run->recipe.has_baseline ? "" : " (no baseline in the recipe: " VOCAB_NO_BASELINE ")");
	struct strbuf g = {0}, cfg = {0};
	const struct cellset *cs = &run->cells;
	size_t gains, within = best_within(cs, rt->best, rt->nbest, &gains); /* of one process each */
	/* the groups whose best differs from the baseline in a setting the
	 * engine ignored there: that setting is no reason for its gain */
	struct strbuf ign = {0};
	size_t nign = 0;
	for (size_t i = 0; i < rt->nbest; i++) {
		const struct best *b = &rt->best[i];
		for (size_t f = 0; f < run->recipe.nfactors; f++) {
			size_t l = CELL_LEVEL(cs, b->best, f);
			if (run->base_level[f] < 0 || (size_t)run->base_level[f] == l ||
			    !run_cell_ignored(run, (size_t)b->best, f))
				continue;
			if (nign++ < 6) {
				sb_puts(&ign, nign > 1 ? "; " : "");
				if (run->ngroup) {
					run_cell_label(run, (size_t)b->best, run->group, run->ngroup, " ", &ign);
					sb_puts(&ign, ": ");
				}
				sb_printf(&ign, "%s=%s", run->recipe.factors[f].name, run_level(run, f, l));
			}
		}
	}
	if (nign) {
		rtable_caption_add(t, " Settings of a best configuration that the engine ignored at that point (its "
				      "row's ignored column), so no reason for the gain (%zu): %s%s.",
				   nign, ign.buf, nign > 6 ? "; ..." : "");
	}
	sb_free(&ign);
	if (within)
		caption_within(t, within, gains, "gains", "their intervals, and clear_winner,",
			       " (often the larger part: a knob that changes nothing can show a gain of 10-20%)");
	for (size_t i = 0; i < rt->nbest; i++) {
		const struct best *b = &rt->best[i];
		sb_reset(&g);
		sb_reset(&cfg);
		run_cell_label(run, (size_t)b->best, run->group, run->ngroup, " ", &g);
		for (size_t f = 0; f < run->recipe.nfactors; f++) {
			size_t l = CELL_LEVEL(cs, b->best, f);
			if (run->base_level[f] >= 0 && (size_t)run->base_level[f] != l) {
				if (cfg.len)
					sb_putc(&cfg, ' ');
				sb_printf(&cfg, "%s=%s", run->recipe.factors[f].name, run_level(run, f, l));
			}
		}
		const char *row[] = {
		    g.buf ? g.buf : "all", count(b->ncells),
		    b->baseline >= 0 ? num(cs->value[b->baseline] * run->metric.scale) : "",
		    num(cs->value[b->best] * run->metric.scale), run->metric.unit, num(b->gain),
		    num(b->gain * exp(-b->gain_u)), num(b->gain * exp(b->gain_u)),
		    cfg.len ? cfg.buf : "(the baseline)", cs->id[b->best],
		    b->runner_up < 0 ? "" : b->clear ? "yes" : "no",
		};
		rtable_add(t, (char *const *)row);
	}
	sb_free(&g);
	sb_free(&cfg);
	return t;
}

static struct rtable *points_table(const struct run *run)
{
	size_t nf = run->recipe.nfactors;
	static const char *const tail[] = {"processes", "value", "lo", "hi", "unit", "ci_kind"};
	size_t nc = 1 + nf + ARRAY_SIZE(tail);
	const char **cols = xmalloc(nc * sizeof(char *));
	cols[0] = "id";
	for (size_t f = 0; f < nf; f++)
		cols[1 + f] = run->recipe.factors[f].name;
	for (size_t k = 0; k < ARRAY_SIZE(tail); k++)
		cols[1 + nf + k] = tail[k];
	struct rtable *t = rtable_new("points", "Points: estimate and 95% interval", nc, cols);
	right(t, numeric_cols);
	rtable_interval(t, 2 + nf, 3 + nf, 4 + nf, NAN);
	t->caption = xasprintf(
	    "value: the median of the point's process-level values (one per fresh process); "
	    "lo..hi: its 95%% interval (see Uncertainty); ci_kind: between = from the variation "
	    "between the processes (repeat >= 2), within = from one process's own samples only, "
	    "which leaves out the variation between processes.");
	const char **row = xmalloc(nc * sizeof(char *));
	const struct cellset *cs = &run->cells;
	for (size_t c = 0; c < cs->ncells; c++) {
		double v = cs->value[c] * run->metric.scale;
		row[0] = cs->id[c];
		for (size_t f = 0; f < nf; f++)
			row[1 + f] = run_level(run, f, CELL_LEVEL(cs, c, f));
		row[1 + nf] = count(cs->nrep[c]);
		row[2 + nf] = num(v);
		row[3 + nf] = num(v * exp(-cs->u[c]));
		row[4 + nf] = num(v * exp(cs->u[c]));
		row[5 + nf] = run->metric.unit;
		row[6 + nf] = ci_kind_name((enum ci_kind)cs->kind[c]);
		rtable_add(t, (char *const *)row);
	}
	free(row);
	free(cols);
	return t;
}

/* One point of the per-point table: a measured cell or a failure, with its
 * level per factor (a level the recipe lacks sorts last). */
struct pp_entry {
	size_t *lv;
	long cell;            /* the cell, or -1: failure */
	size_t failure;
	const struct failure *fl; /* the failure, or NULL */
};
static size_t pp_nfactors;

/* Two failures of one point (its repeats) with one status: one row. */
static int same_failure(const struct pp_entry *x, const struct pp_entry *y)
{
	if (!x->fl || !y->fl || strcmp(x->fl->status, y->fl->status) != 0)
		return 0;
	for (size_t f = 0; f < pp_nfactors; f++)
		if (strcmp(x->fl->levels[f], y->fl->levels[f]) != 0)
			return 0;
	return 1;
}

static int cmp_pp(const void *a, const void *b)
{
	const struct pp_entry *x = a, *y = b;
	for (size_t f = 0; f < pp_nfactors; f++)
		if (x->lv[f] != y->lv[f])
			return x->lv[f] < y->lv[f] ? -1 : 1;
	if ((x->cell < 0) != (y->cell < 0))
		return (x->cell < 0) - (y->cell < 0);
	if (!x->fl)
		return 0;
	/* a point's failures together, by status, then levels the recipe lacks */
	int c = strcmp(x->fl->status, y->fl->status);
	for (size_t f = 0; !c && f < pp_nfactors; f++)
		c = strcmp(x->fl->levels[f], y->fl->levels[f]);
	return c;
}

/* The per-point table's n entries before sorting: the measured cells, then
 * the failures, each with its level indices (a failure's level text looked
 * up; one the recipe no longer has sorts last). */
static struct pp_entry *pp_entries(const struct run *run, size_t n)
{
	const struct recipe *r = &run->recipe;
	const struct cellset *cs = &run->cells;
	struct pp_entry *e = xcalloc(n ? n : 1, sizeof(*e));
	for (size_t i = 0; i < n; i++) {
		e[i].lv = xcalloc(r->nfactors ? r->nfactors : 1, sizeof(size_t));
		e[i].cell = i < cs->ncells ? (long)i : -1;
		e[i].failure = i < cs->ncells ? 0 : i - cs->ncells;
		e[i].fl = i < cs->ncells ? NULL : &run->failures[e[i].failure];
		for (size_t f = 0; f < r->nfactors; f++) {
			if (e[i].cell >= 0) {
				e[i].lv[f] = CELL_LEVEL(cs, (size_t)e[i].cell, f);
				continue;
			}
			const char *name = run->failures[e[i].failure].levels[f];
			size_t l = 0;
			while (l < r->factors[f].nlevels && strcmp(r->factors[f].levels[l], name) != 0)
				l++;
			e[i].lv[f] = l;
		}
	}
	return e;
}

/* The per-point table that opens report.md and report.html: the factors
 * that vary (all when none does), the metric with its 95% interval, the
 * status; every point of results.csv, measured or not, in the recipe's
 * level order. Written as tables/per_point.csv too, not listed among the
 * tables (the pages show it first). */
struct rtable *report_per_point_table(const struct run *run)
{
	const struct recipe *r = &run->recipe;
	size_t nv = 0, *fs = xmalloc((r->nfactors ? r->nfactors : 1) * sizeof(size_t));
	for (size_t f = 0; f < r->nfactors; f++)
		if (r->factors[f].nlevels > 1)
			fs[nv++] = f;
	if (!nv)
		for (size_t f = 0; f < r->nfactors; f++)
			fs[nv++] = f;
	size_t nc = nv + 3;
	const char **cols = xmalloc(nc * sizeof(char *));
	for (size_t k = 0; k < nv; k++)
		cols[k] = r->factors[fs[k]].name;
	cols[nv] = metric_label(&run->metric);
	cols[nv + 1] = "95% interval";
	cols[nv + 2] = "status";
	struct rtable *t = rtable_new("per_point", "Points", nc, cols);
	t->align_right[nv] = t->sig[nv] = t->sig[nv + 1] = 1;
	rtable_interval(t, nv, nv + 1, nv + 1, NAN);
	t->caption = xasprintf("every point: %s (the median of its processes) with its 95%% interval, "
			       "3 significant digits (tables/per_point.csv holds this table with every digit); "
			       "the last table says why a point has no value.",
			       run->metric.name);
	const struct cellset *cs = &run->cells;
	size_t n = cs->ncells + run->nfailures;
	struct pp_entry *e = pp_entries(run, n);
	pp_nfactors = r->nfactors;
	if (n)
		qsort(e, n, sizeof(*e), cmp_pp);
	const char **row = xmalloc(nc * sizeof(char *));
	char ci[112], st[200];
	for (size_t i = 0; i < n; i++) {
		const struct failure *fl = e[i].fl;
		for (size_t k = 0; k < nv; k++)
			row[k] = fl ? fl->levels[fs[k]] : run_level(run, fs[k], e[i].lv[fs[k]]);
		ci[0] = '\0';
		if (!fl) {
			double v = cs->value[e[i].cell] * run->metric.scale, u = cs->u[e[i].cell];
			row[nv] = num(v);
			if (isfinite(u))
				snprintf(ci, sizeof(ci), "%s .. %s", num(v * exp(-u)), num(v * exp(u)));
		} else {
			row[nv] = "";
		}
		row[nv + 1] = ci;
		row[nv + 2] = fl ? fl->status : "ok";
		/* an ok row left out (a level no longer in the recipe, another
		 * unit): "ok" and no value read as a measured point; say why */
		char lo[200];
		if (fl && !strcmp(fl->status, "ok") && fl->reason && *fl->reason) {
			char *why = text_clean(fl->reason, strlen(fl->reason), 140); /* cut on a character */
			snprintf(lo, sizeof(lo), "left out: %s", why);
			free(why);
			row[nv + 2] = lo;
		}
		/* a point's repeats that failed alike: one row, as its measured
		 * repeats are one (they were a row each, alike) */
		size_t k = 1;
		while (i + k < n && same_failure(&e[i], &e[i + k]))
			k++;
		if (k > 1) {
			snprintf(st, sizeof(st), "%.150s (%zu processes)", row[nv + 2], k);
			row[nv + 2] = st;
		}
		rtable_add(t, (char *const *)row);
		for (size_t j = 0; j < k; j++)
			free(e[i + j].lv);
		i += k - 1;
	}
	free(e);
	free(row);
	free(cols);
	free(fs);
	return t;
}

static struct rtable *scaling_table(const struct run *run, const struct report_tables *rt)
{
	static const char *const cols[] = {"series",        "gpus",          "throughput",   "throughput_lo",
					   "throughput_hi", "ideal",         "scale_efficiency", "scale_lo",
					   "scale_hi"};
	struct rtable *t = rtable_new("scaling", "Scaling with the number of GPUs", ARRAY_SIZE(cols), cols);
	right(t, numeric_cols);
	size_t nobase = 0;
	for (size_t i = 0; i < rt->nscaling; i++)
		nobase += !rt->scaling[i].base_ok;
	t->caption = xstrdup("throughput (samples/s) against GPU count, throughput_lo..throughput_hi its 95% "
			     "interval (empty: none known); ideal: the 1-GPU throughput times the count; "
			     "scale_efficiency (the seeds' scale factor): throughput over ideal, scale_lo..scale_hi "
			     "its 95% interval from both points' (two processes).");
	if (nobase) {
		char *c = xasprintf("%s %zu of the %zu series %s no 1-GPU point with a throughput, so no ideal and no "
				    "scale efficiency (empty).", t->caption, nobase, rt->nscaling,
				    nobase == 1 ? "has" : "have");
		free(t->caption);
		t->caption = c;
	}
	size_t within = 0, npts = 0; /* scale factors from points of one process each */
	for (size_t i = 0; i < rt->nscaling; i++)
		for (size_t k = 1; rt->scaling[i].base_ok && k < rt->scaling[i].npoints; k++) {
			const struct scaling_point *p = &rt->scaling[i].pt[k], *p0 = &rt->scaling[i].pt[0];
			npts++;
			within += p->cell >= 0 && p0->cell >= 0 &&
				  cellset_pair_within(&run->cells, (size_t)p->cell, (size_t)p0->cell);
		}
	if (within)
		caption_within(t, within, npts, "scale factors", "their intervals", "");
	size_t *others = xmalloc(run->recipe.nfactors * sizeof(size_t));
	size_t no = 0;
	for (size_t f = 0; f < run->recipe.nfactors; f++)
		if ((long)f != rt->scaling_factor && run->recipe.factors[f].nlevels > 1)
			others[no++] = f;
	struct strbuf s = {0};
	for (size_t i = 0; i < rt->nscaling; i++) {
		const struct scaling_series *ser = &rt->scaling[i];
		sb_reset(&s);
		run_cell_label(run, (size_t)ser->first, others, no, " ", &s);
		for (size_t k = 0; k < ser->npoints; k++) {
			const struct scaling_point *p = &ser->pt[k];
			const char *row[] = {s.buf ? s.buf : "all", num(p->count),
					     num(p->thr),       num(p->thr * exp(-p->u)),
					     num(p->thr * exp(p->u)),  num(p->ideal),
					     num(p->scale),     num(p->scale * exp(-p->scale_u)),
					     num(p->scale * exp(p->scale_u))};
			rtable_add(t, (char *const *)row);
		}
	}
	sb_free(&s);
	free(others);
	return t;
}

static struct rtable *failures_table(const struct run *run)
{
	size_t nf = run->recipe.nfactors;
	const char **cols = xmalloc((nf + 3) * sizeof(char *));
	cols[0] = "id";
	for (size_t f = 0; f < nf; f++)
		cols[1 + f] = run->recipe.factors[f].name;
	cols[1 + nf] = "status";
	cols[2 + nf] = "reason";
	struct rtable *t = rtable_new("failures", "Points left out of the figures", nf + 3, cols);
	t->caption = xasprintf("failed, unsupported, or without a positive %s value", run->metric.name);
	const char **row = xmalloc((nf + 3) * sizeof(char *));
	for (size_t i = 0; i < run->nfailures; i++) {
		const struct failure *fl = &run->failures[i];
		row[0] = fl->id;
		for (size_t f = 0; f < nf; f++)
			row[1 + f] = fl->levels[f];
		row[1 + nf] = fl->status;
		row[2 + nf] = fl->reason;
		rtable_add(t, (char *const *)row);
	}
	free(row);
	free(cols);
	return t;
}

/* Series at the baseline (in every factor the baseline fixes) first, then
 * in cell order, for the figure that shows only the first few. */
static const struct run *scaling_run;
static long scaling_f;
static int at_baseline(const struct scaling_series *s)
{
	const struct run *run = scaling_run;
	for (size_t f = 0; f < run->recipe.nfactors; f++)
		if ((long)f != scaling_f && run->base_level[f] >= 0 &&
		    CELL_LEVEL(&run->cells, s->first, f) != (size_t)run->base_level[f])
			return 0;
	return 1;
}
static int cmp_series(const void *a, const void *b)
{
	const struct scaling_series *x = a, *y = b;
	int bx = at_baseline(x), by = at_baseline(y);
	if (bx != by)
		return by - bx;
	return (x->first > y->first) - (x->first < y->first);
}

void report_tables_build(const struct run *run, struct report_tables *rt)
{
	memset(rt, 0, sizeof(*rt));
	const struct recipe *r = &run->recipe;
	rt->effects = effects_compute(&run->cells, run->ref, run->metric.higher_better, &rt->neffects);
	rt->best = best_compute(&run->cells, run->group, run->ngroup, run->base_level,
				run->metric.higher_better, &rt->nbest, &rt->cell_group);
	rt->scaling_factor = recipe_factor_index(r, "gpus");
	if (rt->scaling_factor >= 0 && r->factors[rt->scaling_factor].nlevels > 1) {
		size_t f = (size_t)rt->scaling_factor;
		rt->scaling_count = xmalloc(r->factors[f].nlevels * sizeof(double));
		int numeric = 1;
		for (size_t l = 0; l < r->factors[f].nlevels; l++)
			if (parse_double(r->factors[f].levels[l], &rt->scaling_count[l]) != 0)
				numeric = 0;
		if (numeric)
			rt->scaling = scaling_compute(&run->cells, f, rt->scaling_count, &rt->nscaling);
		scaling_run = run;
		scaling_f = (long)f;
		if (rt->nscaling)
			qsort(rt->scaling, rt->nscaling, sizeof(*rt->scaling), cmp_series);
	} else {
		rt->scaling_factor = -1;
	}
	rt->scatter_x = recipe_factor_index(r, "model");
	if (rt->scatter_x < 0 || r->factors[rt->scatter_x].nlevels < 2) {
		rt->scatter_x = -1;
		for (size_t f = 0; f < r->nfactors; f++)
			if (r->factors[f].nlevels > 1 &&
			    (rt->scatter_x < 0 || r->factors[f].nlevels > r->factors[rt->scatter_x].nlevels))
				rt->scatter_x = (long)f;
	}
	struct rtable *ft = factorial_table(run); /* with a design: key */
	if (ft)
		rt->t[rt->n++] = ft;
	rt->t[rt->n++] = effects_table(run, rt);
	rt->t[rt->n++] = interactions_table(run, rt);
	rt->t[rt->n++] = improvements_table(run, rt);
	/* a fraction has no matched pairs: say why the pair tables are empty
	 * and where the effects are (they printed "(none)" under a caption) */
	for (size_t i = rt->n - 3; ft && r->design.fractional && i < rt->n; i++)
		if (rt->t[i]->nrows == 0)
			rtable_caption_add(rt->t[i], " No row: in this fractional design no two measured points differ "
						     "in one factor alone, so no pair matches; the factorial effects table "
						     "above estimates every factor from the whole design.");
	for (size_t i = 0; i < r->report.nimprovements && rt->n < 10; i++)
		if (r->report.improvements[i].nby >= 2)
			rt->t[rt->n++] = improvements_pivot(run, &r->report.improvements[i], i);
	rt->t[rt->n++] = best_table(run, rt);
	if (rt->scaling_factor >= 0)
		rt->t[rt->n++] = scaling_table(run, rt);
	rt->t[rt->n++] = points_table(run);
	struct rtable *top, *side; /* with profile: on (profiles.h) */
	profiles_tables(run, &top, &side);
	if (top)
		rt->t[rt->n++] = top;
	if (side)
		rt->t[rt->n++] = side;
	rt->t[rt->n++] = failures_table(run);
	rt->per_point = report_per_point_table(run);
}

void report_tables_free(struct report_tables *rt)
{
	for (size_t i = 0; i < rt->n; i++)
		rtable_free(rt->t[i]);
	rtable_free(rt->per_point);
	effects_free(rt->effects, rt->neffects);
	best_free(rt->best, rt->nbest);
	free(rt->cell_group);
	scaling_free(rt->scaling, rt->nscaling);
	free(rt->scaling_count);
	memset(rt, 0, sizeof(*rt));
}
