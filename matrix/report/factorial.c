/* factorial.c - effects of a two-level design as contrasts.
 *
 * In +1/-1 coding (a factor's first level -1, its second +1) the effect of
 * a main effect or interaction E is the mean of log(metric) over the runs
 * where the product of E's columns is +1 minus the mean over the runs where
 * it is -1. In a design (a full factorial or a regular fraction, crossed
 * with the other factors) the columns are orthogonal, so each contrast is
 * free of every effect not aliased with it. The fraction's defining
 * relation says what each contrast also carries: E's aliases are E times
 * each defining word. The 95% interval of a contrast comes from the cells'
 * intervals (u, half-widths on the log scale), added in quadrature with
 * weights 1/n+ and 1/n-, as the matched-pair effects do. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "factorial.h"
#include "plan/grid.h"
#include "util.h"

/* The bits (design factor i at its first level) of cell c. */
static uint32_t cell_low(const struct design *d, const struct cellset *cs, size_t c)
{
	uint32_t low = 0;
	for (size_t i = 0; i < d->k; i++)
		if (CELL_LEVEL(cs, c, d->factor[i]) == 0)
			low |= 1u << i;
	return low;
}

static void contrast(const struct design *d, const struct cellset *cs, const unsigned char *use,
		     int higher_better, struct factorial_effect *fe)
{
	double s[2] = {0, 0}, u2[2] = {0, 0};
	size_t n[2] = {0, 0};
	for (size_t c = 0; c < cs->ncells; c++) {
		if (!use[c])
			continue;
		/* the product of the effect's columns: -1 when an odd number are low */
		int side = __builtin_popcount(cell_low(d, cs, c) & fe->effect) & 1; /* 0: +, 1: - */
		s[side] += log(cs->value[c]);
		u2[side] += cs->u[c] * cs->u[c];
		n[side]++;
	}
	fe->nplus = n[0];
	fe->nminus = n[1];
	if (!n[0] || !n[1]) {
		fe->gain = fe->u = NAN;
		return;
	}
	double diff = s[0] / (double)n[0] - s[1] / (double)n[1];
	fe->gain = exp(higher_better ? diff : -diff);
	fe->u = sqrt(u2[0] / ((double)n[0] * (double)n[0]) + u2[1] / ((double)n[1] * (double)n[1]));
}

/* use[c]: cell c is a run of the design (in the fraction, not excluded);
 * returns their number. */
static size_t design_runs(const struct recipe *r, const struct cellset *cs, unsigned char *use)
{
	size_t *level = xcalloc(r->nfactors ? r->nfactors : 1, sizeof(size_t));
	size_t runs = 0;
	for (size_t c = 0; c < cs->ncells; c++) {
		for (size_t f = 0; f < r->nfactors; f++)
			level[f] = CELL_LEVEL(cs, c, f);
		use[c] = design_member(&r->design, level) && !grid_excluded(r, level);
		runs += use[c];
	}
	free(level);
	return runs;
}

static int cmp_abs(const void *a, const void *b)
{
	double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
	return (x > y) - (x < y);
}

static double median_sorted(const double *v, size_t n)
{
	return n % 2 ? fabs(v[n / 2]) : 0.5 * (fabs(v[n / 2 - 1]) + fabs(v[n / 2]));
}

void factorial_lenth(const struct recipe *r, const struct cellset *cs, struct factorial_lenth *lt)
{
	const struct design *d = &r->design;
	memset(lt, 0, sizeof(*lt));
	size_t m = d->k - (d->fractional ? d->p : 0), n = ((size_t)1 << m) - 1;
	if (d->k == 0 || n < 7)
		return;
	unsigned char *use = xcalloc(cs->ncells ? cs->ncells : 1, 1);
	design_runs(r, cs, use);
	/* one contrast per alias class: every product of base factors (in a
	 * fraction each generated factor is one of them) */
	double *c = xmalloc(n * sizeof(double));
	size_t k = 0;
	for (uint32_t w = 1; w <= n; w++) {
		struct factorial_effect fe = {.effect = w};
		contrast(d, cs, use, 1, &fe);
		if (isnan(fe.gain)) {
			free(c);
			free(use);
			return;
		}
		c[k++] = log(fe.gain);
	}
	free(use);
	qsort(c, k, sizeof(double), cmp_abs);
	double s0 = 1.5 * median_sorted(c, k);
	size_t j = 0;
	while (j < k && fabs(c[j]) < 2.5 * s0)
		j++;
	lt->ncontrasts = k;
	lt->pse = j ? 1.5 * median_sorted(c, j) : s0;
	lt->me = stat_t975(k / 3 ? k / 3 : 1) * lt->pse;
	free(c);
}

struct factorial_effect *factorial_compute(const struct recipe *r, const struct cellset *cs, int higher_better,
					   size_t *n, size_t *nmissing)
{
	const struct design *d = &r->design;
	size_t k = d->k, cap = k + k * (k - 1) / 2;
	struct factorial_effect *out = xcalloc(cap ? cap : 1, sizeof(*out));
	unsigned char *use = xcalloc(cs->ncells ? cs->ncells : 1, 1);
	size_t runs = design_runs(r, cs, use);
	uint64_t planned = grid_count(r) / r->repeat;
	*nmissing = planned > runs ? (size_t)(planned - runs) : 0;
	*n = 0;
	for (size_t w = 1; w <= 2; w++)
		for (size_t i = 0; i < k; i++)
			for (size_t j = w == 1 ? i : i + 1; j < (w == 1 ? i + 1 : k); j++) {
				struct factorial_effect *fe = &out[(*n)++];
				fe->effect = 1u << i | 1u << j;
				fe->nalias = d->fractional ? design_aliases(d, fe->effect, 2, fe->alias) : 0;
				fe->estimated = w == 1 || fe->nalias == 0;
				if (fe->estimated)
					contrast(d, cs, use, higher_better, fe);
				else
					fe->gain = fe->u = NAN;
			}
	free(use);
	return out;
}

/* ---- the table and the section ------------------------------------------------ */

/* The caption of the factorial table: what a gain is, the fraction's
 * caveats, Lenth's interval, missing runs. */
static char *factorial_caption(const struct run *run, size_t missing, const struct factorial_lenth *lt)
{
	const struct recipe *r = &run->recipe;
	const struct design *d = &r->design;
	struct strbuf cap = {0};
	sb_printf(&cap,
		  "gain: how many times better %s is on the plus side than on the minus side (%s is %s), "
		  "from the mean of log(%s) over the runs on each side: for a factor, its second level "
		  "against its first; for an interaction A x B, the runs where A and B are at the same "
		  "level against those where they differ (> 1: each helps more with the other at its "
		  "plus level). gain_lo..gain_hi: 95%% interval from the points' intervals.",
		  run->metric.name, run->metric.name, run->metric.higher_better ? "higher is better" : "lower is better",
		  run->metric.name);
	if (d->fractional)
		sb_printf(&cap, " In this 1/%u fraction (resolution %s) each contrast also carries its aliases; "
			  "a main effect is estimated with its aliased interactions assumed negligible, an "
			  "interaction aliased with a main effect or another two-factor interaction is not "
			  "estimated (see Design).", 1u << d->p, design_roman(d->resolution));
	if (lt->ncontrasts)
		sb_printf(&cap, " lenth_lo..lenth_hi: 95%% interval from Lenth's pseudo standard error of the "
			  "design's %zu contrasts (PSE %.3g on the log scale, margin t(0.975, %zu) * PSE = %.3g): "
			  "it holds the noise between runs, which the points' intervals leave out when each point "
			  "ran in one process, on the assumption that most contrasts are noise.",
			  lt->ncontrasts, lt->pse, lt->ncontrasts / 3, lt->me);
	if (missing)
		sb_printf(&cap, " %zu run%s of the design %s no result: the contrasts are no longer orthogonal "
			  "and may carry other effects.", missing, missing == 1 ? "" : "s", missing == 1 ? "has" : "have");
	return cap.buf;
}

struct rtable *factorial_table(const struct run *run)
{
	static const char *const cols[] = {"effect", "letters", "minus", "plus", "runs_minus", "runs_plus",
					   "gain", "gain_lo", "gain_hi", "lenth_lo", "lenth_hi", "aliases"};
	const struct recipe *r = &run->recipe;
	const struct design *d = &r->design;
	if (!d->given || d->k < 2)
		return NULL;
	size_t n, missing;
	struct factorial_effect *fe = factorial_compute(r, &run->cells, run->metric.higher_better, &n, &missing);
	struct rtable *t = rtable_new("factorial", d->fractional ? "Factorial effects of the fraction"
								: "Factorial effects",
				      ARRAY_SIZE(cols), cols);
	struct factorial_lenth lt;
	factorial_lenth(r, &run->cells, &lt);
	t->caption = factorial_caption(run, missing, &lt);
	for (size_t i = 0; i < t->ncols; i++) {
		t->align_right[i] = i >= 4 && i <= 10;
		t->sig[i] = i >= 6 && i <= 10; /* the gains, not the run counts */
	}
	rtable_interval(t, 6, 7, 8, 1.0);
	rtable_interval(t, 6, 9, 10, 1.0);
	for (size_t e = 0; e < n; e++) {
		struct strbuf name = {0}, letters = {0}, al = {0};
		char b[7][48];
		design_effect_name(r, d, fe[e].effect, &name);
		design_word_letters(fe[e].effect, &letters);
		for (size_t a = 0; a < fe[e].nalias; a++) {
			if (a)
				sb_puts(&al, " = ");
			design_effect_name(r, d, fe[e].alias[a], &al);
		}
		const char *minus = "", *plus = "";
		if (__builtin_popcount(fe[e].effect) == 1) {
			const struct factor *f = &r->factors[d->factor[__builtin_ctz(fe[e].effect)]];
			minus = f->levels[0];
			plus = f->levels[1];
		} else {
			minus = "differ";
			plus = "same";
		}
		snprintf(b[0], sizeof(b[0]), "%zu", fe[e].nminus);
		snprintf(b[1], sizeof(b[1]), "%zu", fe[e].nplus);
		const char *row[] = {
		    name.buf, letters.buf, minus, plus,
		    fe[e].estimated ? b[0] : "", fe[e].estimated ? b[1] : "",
		    fe[e].estimated ? fmt_full(b[2], fe[e].gain) : "aliased",
		    fmt_full(b[3], fe[e].gain * exp(-fe[e].u)),
		    fmt_full(b[4], fe[e].gain * exp(fe[e].u)),
		    fmt_full(b[5], lt.ncontrasts ? fe[e].gain * exp(-lt.me) : NAN),
		    fmt_full(b[6], lt.ncontrasts ? fe[e].gain * exp(lt.me) : NAN),
		    al.buf ? al.buf : "",
		};
		rtable_add(t, (char *const *)row);
		sb_free(&name);
		sb_free(&letters);
		sb_free(&al);
	}
	free(fe);
	return t;
}

void factorial_section(const struct run *run, struct strbuf *sb, int html)
{
	const struct recipe *r = &run->recipe;
	if (!r->design.fractional)
		return;
	struct strbuf text = {0};
	design_describe(r, "", &text);
	if (html) {
		sb_puts(sb, "<h2 id=\"design\">Design</h2>\n<pre class=\"design\">");
		html_escape(sb, text.buf);
		sb_puts(sb, "</pre>\n");
	} else {
		sb_puts(sb, "## Design\n\n```\n");
		sb_puts(sb, text.buf);
		sb_puts(sb, "```\n\n");
	}
	sb_free(&text);
}
