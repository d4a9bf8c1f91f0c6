/* cmd_compare.c - `matrix compare DIR_A DIR_B [--metric NAME] [--threshold
 * PCT] [--run-noise PCT] [--fail-on-regression PCT]`: join the points of two
 * runs by their factor values, print B over A per point with the interval
 * its verdict used, the geometric mean over all matched points, and a
 * verdict per point.
 *
 * The ratio is a gain: B's metric over A's when higher is better, A's over
 * B's when lower is better, so that > 1 always means B is better; the change
 * is 100 * (gain - 1) percent. A point is faster or SLOWER when the
 * difference is significant beyond the run-to-run noise (see decide and
 * settle: a shift of a whole run against another made at another time,
 * bounded by --run-noise) and the change is at least the threshold (2% by
 * default). A point measured in one process on either side is
 * "unreplicated": its change and interval are shown, not decided (one
 * process says nothing of the point's variation between processes, whose
 * tails under load reach tens of percent: tests/stats/NOTES.md). Exit
 * status: 0; 1 when --fail-on-regression PCT is given and some matched
 * point is SLOWER by more than PCT percent, or is unreplicated and slower
 * by more than PCT beyond its interval (a possible regression); 2 on bad
 * input or no matched point. PCT may end with a % sign. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "effects.h"
#include "model.h"
#include "rtable.h"
#include "stats.h"
#include "table.h"
#include "util.h"

/* A value, gain or percentage for the terminal: 3 significant digits
 * (fmt_sig3; a gain of 1e300 is not 300 digits), with sign a '+' before a
 * positive one. buf holds at least 40 bytes. */
static const char *sig3(char *buf, double v, int sign)
{
	char t[32];
	fmt_sig3(t, v);
	snprintf(buf, 40, "%s%s", sign && v > 0 ? "+" : "", isfinite(v) ? t : "nan");
	return buf;
}

/* A gain's 95% interval exp(llo) .. exp(lhi) (ends on the log scale) in lo
 * and hi (40 bytes each): 3 significant digits, more where the ends would
 * read the same or on the wrong side of 1 (fmt_sig_range). */
static void gain_ci(char *lo, char *hi, double llo, double lhi)
{
	fmt_sig_range(lo, hi, exp(llo), exp(lhi), 1.0);
}

struct keyed {
	char *key;            /* "name=level\n" over the joined factors, by name */
	size_t cell;
};

static int cmp_keyed(const void *a, const void *b)
{
	return strcmp(((const struct keyed *)a)->key, ((const struct keyed *)b)->key);
}

static const struct recipe *name_r;
static int cmp_fname(const void *a, const void *b)
{
	return strcmp(name_r->factors[*(const size_t *)a].name, name_r->factors[*(const size_t *)b].name);
}

/* The factors of run a that run b also has, sorted by name; every other
 * factor of either run must have a single level. Returns -1 after printing. */
static int join_factors(const struct run *a, const struct run *b, size_t *fa, size_t *fb, size_t *n)
{
	*n = 0;
	for (size_t f = 0; f < a->recipe.nfactors; f++) {
		long g = recipe_factor_index(&b->recipe, a->recipe.factors[f].name);
		if (g >= 0) {
			fa[(*n)++] = f;
			continue;
		}
		if (a->recipe.factors[f].nlevels > 1) {
			error("factor '%s' is only in '%s' and has several levels: points cannot be matched",
			      a->recipe.factors[f].name, a->dir);
			return -1;
		}
	}
	for (size_t g = 0; g < b->recipe.nfactors; g++)
		if (recipe_factor_index(&a->recipe, b->recipe.factors[g].name) < 0 &&
		    b->recipe.factors[g].nlevels > 1) {
			error("factor '%s' is only in '%s' and has several levels: points cannot be matched",
			      b->recipe.factors[g].name, b->dir);
			return -1;
		}
	name_r = &a->recipe;
	qsort(fa, *n, sizeof(size_t), cmp_fname);
	for (size_t i = 0; i < *n; i++)
		fb[i] = (size_t)recipe_factor_index(&b->recipe, a->recipe.factors[fa[i]].name);
	return 0;
}

static char *cell_key(const struct run *run, size_t c, const size_t *fs, size_t n)
{
	struct strbuf sb = {0};
	for (size_t i = 0; i < n; i++)
		sb_printf(&sb, "%s=%s\n", run->recipe.factors[fs[i]].name,
			  run_level(run, fs[i], CELL_LEVEL(&run->cells, c, fs[i])));
	return sb.buf ? sb.buf : xstrdup("");
}

struct match {
	size_t a, b;          /* cells */
	double gain;          /* > 1: B better */
	double u;             /* half-width of the 95% CI of log(gain) propagated from
			       * the points' intervals, sqrt(ua^2 + ub^2); NaN unknown */
	double base;          /* the interval rule's half-width before the run noise:
			       * ua + ub, for K = 1 at least 1.96 x spread; NaN unknown */
	double lo, hi;        /* the interval of log(gain) the verdict used (run noise
			       * included); NaN unknown */
	double p;             /* Mann-Whitney p, NaN when the interval rule decided */
	int significant;      /* -1 unknown (no interval), 0 no, 1 yes */
	int within;           /* a side has a within-process interval only (K = 1) */
};

static int cmp_match(const void *x, const void *y)
{
	const struct match *p = x, *q = y;
	if (p->gain != q->gain)
		return p->gain < q->gain ? -1 : 1;
	return (p->b > q->b) - (p->b < q->b);
}

/* "2", "2%" or "2 %" -> 2; -1 when not a percentage >= 0. */
static int parse_pct(const char *s, double *out)
{
	char *t = xstrdup(s);
	size_t n = strlen(t);
	while (n && t[n - 1] == ' ')
		t[--n] = '\0';
	if (n && t[n - 1] == '%')
		t[--n] = '\0';
	while (n && t[n - 1] == ' ')
		t[--n] = '\0';
	int rc = parse_double(t, out) == 0 && *out >= 0 ? 0 : -1;
	free(t);
	return rc;
}

#define COMPARE_ALPHA 0.05
/* Matched points needed to estimate the spread between processes from them */
#define COMPARE_SPREAD_MIN 8
/* The default of --run-noise, percent: the 95% bound of the shift of a whole
 * run against another made at another time, measured with A/A pairs (two
 * runs of one recipe, one after the other) on a 2-core CPU machine: the
 * larger of 1.96 x the SD of 44 single-thread pairs' common shifts (median
 * log gain; 1.51%, under load from builds) and a quiet quick-start pair's
 * shift (+2..3%), rounded up (tests/stats/NOTES.md, "Run-to-run noise"). */
#define COMPARE_RUN_NOISE_DEFAULT 3

/* The Mann-Whitney test of a match, over the logs of the process values
 * oriented as the gain (B's minus A's > 0: B better), with B moved toward A
 * by r (log scale): x->p (1 when the move carries B past A: no change
 * beyond r on the side of the gain), x->significant (p <= COMPARE_ALPHA: the
 * change exceeds r), and the interval of the
 * verdict in x->lo, x->hi: the shifts the test keeps (stat_mw_shift_ci),
 * widened by r at each end. */
static void decide_mw(const double *va, size_t na, const double *vb, size_t nb, int higher_better, double r,
		      struct match *x)
{
	double sgn = higher_better ? 1 : -1, lg = log(x->gain);
	double *la = xmalloc(na * sizeof(double)), *lb = xmalloc(nb * sizeof(double));
	double toward = lg > 0 ? r : lg < 0 ? -r : 0, u;
	for (size_t i = 0; i < na; i++)
		la[i] = sgn * log(va[i]);
	for (size_t j = 0; j < nb; j++)
		lb[j] = sgn * log(vb[j]) - toward;
	x->p = stat_mann_whitney(lb, nb, la, na, &u);
	double mu = (double)na * (double)nb / 2;
	if (lg == 0 || (lg > 0) != (u > mu))
		x->p = 1; /* moved past A: no change beyond r on the side of the gain */
	x->significant = x->p <= COMPARE_ALPHA;
	for (size_t j = 0; j < nb; j++)
		lb[j] += toward;
	stat_mw_shift_ci(la, na, lb, nb, COMPARE_ALPHA, &x->lo, &x->hi);
	x->lo -= r;
	x->hi += r;
	free(la);
	free(lb);
}

/* Decide whether the points of a match differ by more than the run noise r
 * (log scale): the Mann-Whitney U test over their process-level values
 * (decide_mw) when each side has at least 3 and the exact test can reach
 * COMPARE_ALPHA (3 against 5, 4 against 4 or more: at 3 against 3 its
 * smallest p is 0.10); else the intervals, settled by settle() once the
 * spread of all matches is known: x->base = u_a + u_b (the intervals do not
 * overlap: stricter than the combined interval). */
static void decide(const struct cellset *ca, const struct cellset *cb, int higher_better, double r,
		   struct match *x)
{
	size_t na = ca->nrep[x->a], nb = cb->nrep[x->b];
	double ua = ca->u[x->a], ub = cb->u[x->b];
	x->within = ca->kind[x->a] == CI_WITHIN || cb->kind[x->b] == CI_WITHIN;
	x->p = x->base = x->lo = x->hi = NAN;
	if (na >= 3 && nb >= 3 && ca->rep[x->a] && cb->rep[x->b] &&
	    stat_mw_min_p(na, nb) <= COMPARE_ALPHA) {
		decide_mw(ca->rep[x->a], na, cb->rep[x->b], nb, higher_better, r, x);
	} else if (isnan(ua) || isnan(ub)) {
		x->significant = -1;
	} else {
		x->base = ua + ub;
		x->significant = 0;
	}
}

struct compare_opts {
	const char *dirs[2];
	const char *metric;   /* NULL: the recipe's */
	const char *format;   /* table | json | csv | markdown */
	double fail_pct;      /* --fail-on-regression, NaN when not given */
	double threshold;     /* --threshold, percent */
	double noise_pct;     /* --run-noise, percent */
	int noise_given;      /* --run-noise was given */
};

/* Read the command line into o. Returns -1 when it is good, else the exit
 * status to return (after the usage). */
static int compare_args(int argc, char **argv, struct compare_opts *o)
{
	int ndirs = 0;
	*o = (struct compare_opts){{NULL, NULL}, NULL, "table", NAN, 2, COMPARE_RUN_NOISE_DEFAULT, 0};
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *val = NULL;
		static const char *const valued[] = {"--metric", "--fail-on-regression", "--threshold", "--format",
						     "--run-noise"};
		size_t k;
		for (k = 0; k < ARRAY_SIZE(valued); k++) {
			size_t n = strlen(valued[k]);
			if (strcmp(arg, valued[k]) == 0) {
				if (i + 1 == argc) {
					error("option '%s' needs a value", arg);
					return cmd_usage("compare");
				}
				val = argv[++i];
				break;
			}
			if (strncmp(arg, valued[k], n) == 0 && arg[n] == '=') {
				val = arg + n + 1;
				break;
			}
		}
		if (k < ARRAY_SIZE(valued)) {
			arg = valued[k];
		} else if (arg[0] == '-' && arg[1]) {
			cmd_unknown_option("compare", arg);
			return cmd_usage("compare");
		} else {
			if (ndirs == 2) {
				error("compare takes two run directories");
				return cmd_usage("compare");
			}
			o->dirs[ndirs++] = arg;
			continue;
		}
		if (strcmp(arg, "--metric") == 0) {
			o->metric = val;
		} else if (strcmp(arg, "--format") == 0) {
			o->format = val;
			if (strcmp(val, "table") && strcmp(val, "json") && strcmp(val, "csv") && strcmp(val, "markdown")) {
				error("compare: unknown format '%s' (expected table, json, csv or markdown)", val);
				return 2;
			}
		} else if (parse_pct(val, strcmp(arg, "--threshold") == 0  ? &o->threshold
					  : strcmp(arg, "--run-noise") == 0 ? &o->noise_pct
									    : &o->fail_pct) != 0) {
			error("%s wants a percentage >= 0 (like 5%%), not '%s'", arg, val);
			return cmd_usage("compare");
		}
		o->noise_given |= strcmp(arg, "--run-noise") == 0;
	}
	if (ndirs != 2) {
		if (ndirs == 1)
			error("compare takes two run directories: only '%s' given (the run to compare it with goes "
			      "after it)", o->dirs[0]);
		else
			error("compare takes two run directories: none given");
		return cmd_usage("compare");
	}
	return -1;
}

/* Join the cells of b to those of a over the nf factors fa (of a) and fb
 * (of b): a match per cell of b that a has, with its gain and decision, into
 * m (room for every cell of b), r the run noise (log scale). Returns the
 * number of matches. */
static size_t match_points(const struct run *a, const struct run *b, const size_t *fa,
			   const size_t *fb, size_t nf, double r, struct match *m)
{
	size_t nm = 0;
	struct keyed *ka = xmalloc((a->cells.ncells + 1) * sizeof(*ka));
	for (size_t c = 0; c < a->cells.ncells; c++) {
		ka[c].key = cell_key(a, c, fa, nf);
		ka[c].cell = c;
	}
	qsort(ka, a->cells.ncells, sizeof(*ka), cmp_keyed);
	for (size_t c = 0; c < b->cells.ncells; c++) {
		struct keyed probe = {cell_key(b, c, fb, nf), c};
		struct keyed *hit = bsearch(&probe, ka, a->cells.ncells, sizeof(*ka), cmp_keyed);
		free(probe.key);
		if (!hit)
			continue;
		struct match *x = &m[nm++];
		x->a = hit->cell;
		x->b = c;
		x->gain = effects_gain(a->cells.value[x->a], b->cells.value[x->b], a->metric.higher_better);
		x->u = sqrt(a->cells.u[x->a] * a->cells.u[x->a] + b->cells.u[x->b] * b->cells.u[x->b]);
		decide(&a->cells, &b->cells, a->metric.higher_better, r, x);
	}
	for (size_t c = 0; c < a->cells.ncells; c++)
		free(ka[c].key);
	free(ka);
	return nm;
}

/* The median of the matched log gains: the shift common to every point. */
static double common_shift(const struct match *m, size_t nm)
{
	double *lg = xmalloc((nm ? nm : 1) * sizeof(double));
	for (size_t i = 0; i < nm; i++)
		lg[i] = log(m[i].gain);
	double med = stat_median(lg, nm);
	free(lg);
	return med;
}

/* The spread of all matched points' log gains around their median (1.4826
 * MAD, robust to the points that did change; conservative when many did):
 * the variation between processes, point by point, with the shift common to
 * every point left out. NaN with fewer than COMPARE_SPREAD_MIN matches. */
static double spread_of(const struct match *m, size_t nm)
{
	if (nm < COMPARE_SPREAD_MIN)
		return NAN;
	double med = common_shift(m, nm);
	double *lg = xmalloc(nm * sizeof(double));
	for (size_t i = 0; i < nm; i++)
		lg[i] = fabs(log(m[i].gain) - med);
	double spread = 1.4826 * stat_median(lg, nm);
	free(lg);
	return spread;
}

/* Settle the matches the interval rule decides: one process per side (the
 * intervals miss the variation between processes) widens x->base to 1.96 x
 * spread when that is wider; then the run noise r joins in quadrature, w =
 * sqrt(base^2 + r^2), and the point is significant when |log gain| > w: a
 * shift of the whole run (bounded by r) and the point's own noise are
 * independent, and either may make an unchanged point look changed. */
static void settle(struct match *m, size_t nm, double spread, double r)
{
	for (size_t i = 0; i < nm; i++) {
		struct match *x = &m[i];
		if (isnan(x->base))
			continue;
		double base = x->base;
		if (x->within && !isnan(spread) && 1.959964 * spread > base)
			base = 1.959964 * spread;
		double w = sqrt(base * base + r * r), lg = log(x->gain);
		x->lo = lg - w;
		x->hi = lg + w;
		x->significant = fabs(lg) > w;
	}
}

/* The verdicts counted over the matched points, the sums of the geometric
 * mean, and what the summary says of all the matches. */
struct tally {
	size_t faster, slower, noise, small, unknown, regressed;
	size_t unrep;         /* one process on a side: not decided */
	size_t unrep_out;     /* of those, beyond their interval */
	size_t possible;      /* of those, a possible regression (--fail-on-regression) */
	double slog, su2;
	double gm, gu;        /* geometric mean gain, half-width of its 95% CI (log) */
	int gu_scatter;       /* gu from the scatter alone: some points have no interval */
	double shift;         /* median log gain: the shift common to every point */
	double spread;        /* spread_of(), NaN when unknown */
	double r;             /* the run noise, log scale */
};

/* The verdict of match x ("faster", "~", ...), counted into ty. */
static const char *verdict(const struct match *x, const struct compare_opts *o, struct tally *ty)
{
	double change = 100.0 * (x->gain - 1);
	if (x->significant < 0) {
		ty->unknown++;
		return "(no CI)";
	} else if (x->within) {
		/* one process on a side: nothing tells this point's variation
		 * between processes, whose tails (a process hit by other load)
		 * reach tens of percent; its change is shown, not decided */
		ty->unrep++;
		if (x->significant) {
			ty->unrep_out++;
			if (!isnan(o->fail_pct) && change < 0 && -change > o->fail_pct && fabs(change) >= o->threshold)
				ty->possible++;
		}
		return "unreplicated";
	} else if (!x->significant) {
		ty->noise++;
		return "~";
	} else if (fabs(change) < o->threshold) {
		ty->small++;
		return "~ (small)";
	} else if (change > 0) {
		ty->faster++;
		return "faster";
	}
	ty->slower++;
	if (!isnan(o->fail_pct) && -change > o->fail_pct)
		ty->regressed++;
	return "SLOWER";
}

/* "model=resnet50 batch=64": the levels of match x in the factors of a
 * that vary, into lab (reset first). */
static void match_label(const struct run *a, const struct match *x, struct strbuf *lab)
{
	sb_reset(lab);
	for (size_t f = 0; f < a->recipe.nfactors; f++) {
		if (a->recipe.factors[f].nlevels < 2)
			continue;
		if (lab->len)
			sb_putc(lab, ' ');
		sb_printf(lab, "%s=%s", a->recipe.factors[f].name, run_level(a, f, CELL_LEVEL(&a->cells, x->a, f)));
	}
}

/* How match x was decided: "U p=0.031", "CI", "CI (1 process)", ... */
static const char *match_test(const struct match *x, double spread, char *buf, size_t n)
{
	if (!isnan(x->p))
		snprintf(buf, n, "U p=%.3f", x->p);
	else
		snprintf(buf, n, "%s", !x->within ? "CI" : isnan(spread) ? "CI (1 process)" : "CI+spread (1 p.)");
	return buf;
}

/* The widest the point column of the table grows (terminal columns). */
#define COMPARE_LABEL_MAX 100

/* The numeric columns of the table: their headings and least widths (the
 * cells of ordinary numbers fit them; a wider cell, a 9-digit interval or
 * a value of 1e+300, widens its column for every row). */
enum { C_A, C_B, C_GAIN, C_CI, C_CHANGE, C_PROCS, C_TEST, C_N };
static const char *const compare_heads[C_N] = {"A", "B", "gain", "95% CI", "change", "procs", "test"};
static const int compare_min_width[C_N] = {12, 12, 8, 17, 9, 5, 16};

/* The table: a heading, then a line per matched point, worst first, in
 * columns as wide as their widest cell, the numbers' at least as
 * compare_min_width says. */
static void print_matches(const struct run *a, const struct run *b, const struct match *m, size_t nm,
			  const struct tally *ty, const struct compare_opts *o, const char *const *marks)
{
	const struct metric *mt = &a->metric;
	char *head = xasprintf("%s: %s, %s; gain = B over A (> 1: B better), worst first", mt->name,
			       metric_label(mt), mt->higher_better ? "higher is better" : "lower is better");
	char *head_shown = text_clean(head, strlen(head), 0); /* a unit from any results.csv */
	printf("%s\n", head_shown);
	free(head_shown);
	free(head);
	printf("A: %s\nB: %s\n\n", o->dirs[0], o->dirs[1]);
	/* the point column as wide as its widest label (in terminal columns),
	 * up to COMPARE_LABEL_MAX: a longer one pushes its own row only */
	char **shown = xmalloc((nm ? nm : 1) * sizeof(char *));
	char (*cell)[C_N][96] = xmalloc((nm ? nm : 1) * sizeof(*cell));
	size_t width = 5, cw[C_N];
	for (int k = 0; k < C_N; k++)
		cw[k] = (size_t)compare_min_width[k];
	struct strbuf lab = {0};
	for (size_t i = 0; i < nm; i++) {
		const struct match *x = &m[i];
		match_label(a, x, &lab);
		shown[i] = lab.len ? text_clean(lab.buf, lab.len, 0) : xstrdup("(all)"); /* levels from any results.csv */
		size_t w = text_columns(shown[i], strlen(shown[i]));
		if (w > width)
			width = w < COMPARE_LABEL_MAX ? w : COMPARE_LABEL_MAX;
		char num[40];
		snprintf(cell[i][C_A], 96, "%s", sig3(num, a->cells.value[x->a] * mt->scale, 0));
		snprintf(cell[i][C_B], 96, "%s", sig3(num, b->cells.value[x->b] * mt->scale, 0));
		snprintf(cell[i][C_GAIN], 96, "%s", sig3(num, x->gain, 0));
		cell[i][C_CI][0] = '\0';
		if (!isnan(x->lo)) {
			char lo[40], hi[40];
			gain_ci(lo, hi, x->lo, x->hi);
			snprintf(cell[i][C_CI], 96, "%s..%s", lo, hi);
		}
		snprintf(cell[i][C_CHANGE], 96, "%s%%", sig3(num, 100.0 * (x->gain - 1), 1));
		snprintf(cell[i][C_PROCS], 96, "%zu/%zu", a->cells.nrep[x->a], b->cells.nrep[x->b]);
		match_test(x, ty->spread, cell[i][C_TEST], 96);
		for (int k = 0; k < C_N; k++)
			if (strlen(cell[i][k]) > cw[k])
				cw[k] = strlen(cell[i][k]);
	}
	printf("%-*s", (int)width, "point");
	for (int k = 0; k < C_N; k++)
		printf(k == C_TEST ? "  %-*s" : " %*s", (int)cw[k], compare_heads[k]);
	printf(" verdict\n");
	for (size_t i = 0; i < nm; i++) {
		size_t w = text_columns(shown[i], strlen(shown[i]));
		printf("%s%*s", shown[i], (int)(w < width ? width - w : 0), "");
		for (int k = 0; k < C_N; k++)
			printf(k == C_TEST ? "  %-*s" : " %*s", (int)cw[k], cell[i][k]);
		printf(" %s\n", marks[i]);
		free(shown[i]);
	}
	free(cell);
	free(shown);
	sb_free(&lab);
}

/* The geometric mean gain ty->gm of the matches and the half-width ty->gu of its
 * 95% interval on the log scale: from the points' intervals, or from the
 * scatter of the matched log gains (t over nm - 1 degrees of freedom) when
 * that is wider, as it is when the intervals miss between-process noise
 * (one process per point), or alone when a point has no interval (the
 * scatter of the gains holds each point's own noise: it was one interval
 * missing and the geometric mean had none); then the run noise r (log
 * scale) in quadrature: neither holds a shift common to every point. */
static void geomean(const struct match *m, size_t nm, struct tally *ty)
{
	double *gm = &ty->gm, *gu = &ty->gu, r = ty->r;
	*gm = exp(ty->slog / (double)nm);
	*gu = sqrt(ty->su2) / (double)nm;
	if (nm >= 2) {
		double ss = 0, mean = ty->slog / (double)nm;
		for (size_t i = 0; i < nm; i++)
			ss += (log(m[i].gain) - mean) * (log(m[i].gain) - mean);
		double ge = stat_t975(nm - 1) * sqrt(ss / (double)(nm - 1) / (double)nm);
		if (isnan(*gu))
			ty->gu_scatter = 1;
		if (isnan(*gu) || ge > *gu)
			*gu = ge;
	}
	*gu = sqrt(*gu * *gu + r * r);
}

/* The run noise in use and the shift common to every point (the figure an
 * A/A pair measures); where the run noise is the default, how to measure
 * one's own and how to do without it. */
static void print_run_noise(const struct compare_opts *o, const struct tally *ty)
{
	char n[40], g[40], c[40];
	sig3(g, exp(ty->shift), 0);
	sig3(c, 100 * (exp(ty->shift) - 1), 1);
	if (o->noise_pct == 0) {
		printf("run-to-run noise: none (--run-noise 0): a shift of the whole of B against A counts as a "
		       "change of every point; shift common to every point (median gain) %s = %s%%\n", g, c);
		return;
	}
	printf("run-to-run noise: %s%% (--run-noise), in every interval above: the 95%% bound of the shift of a "
	       "whole run against another made at another time; shift common to every point here (median "
	       "gain) %s = %s%%\n", sig3(n, o->noise_pct, 0), g, c);
	if (!o->noise_given)
		printf("note: %s%% is the default, measured with A/A pairs (one recipe run twice, one after the "
		       "other) on a 2-core CPU machine; on yours, compare a few such pairs and give --run-noise "
		       "1.96 x the SD of their shifts. Settings compared within one run (a factor's levels, "
		       "order: shuffled) are free of this term: see matrix report's effects\n", n);
}

/* A side whose rows started on a busy machine (load average above the cores)
 * or ran oversubscribed: a note, as whole-run shifts there go far beyond any
 * run noise (tests/stats/NOTES.md: -31% to +69% on a loaded 2-core machine). */
static void busy_note(const struct run *a, const struct run *b, struct strbuf *sb)
{
	const struct run *side[2] = {a, b};
	int any = 0;
	for (int i = 0; i < 2; i++) {
		const struct quality *q = &side[i]->quality;
		if (!q->busy && !q->oversub)
			continue;
		sb_printf(sb, "%s%s: %zu of %zu rows started with more load than cores", any ? "; " : "note: ",
			  i ? "B" : "A", q->busy, q->ok_rows);
		if (!isnan(q->load_max))
			sb_printf(sb, " (load average up to %.2f)", q->load_max);
		if (q->oversub)
			sb_printf(sb, ", %zu ran oversubscribed", q->oversub);
		any = 1;
	}
	if (any)
		sb_puts(sb, ": on a busy machine whole runs shift far beyond the run noise (from -31% to +69% between "
			    "runs of one recipe on a loaded 2-core machine), so the geometric mean's interval may not "
			    "hold; measure on a quiet machine\n");
}

/* --fail-on-regression's lines, into sb: the exit status, 1 when one was
 * found (every format says them: the CSV and JSON in their counts). */
static int regression_lines(const struct compare_opts *o, const struct tally *ty, struct strbuf *sb)
{
	if (isnan(o->fail_pct))
		return 0;
	if (ty->regressed)
		sb_printf(sb, "regression: %zu matched points significantly slower by more than %g%%\n", ty->regressed,
			  o->fail_pct);
	if (ty->possible)
		sb_printf(sb, "possible regression: %zu unreplicated points slower by more than %g%% beyond their "
			      "interval (one process on a side: confirm with repeat: 3)\n", ty->possible, o->fail_pct);
	return ty->regressed || ty->possible;
}

/* The summary under the table: the geometric mean gain with its interval,
 * the verdicts counted, the run noise with the common shift, a note on
 * single-process points, the regression line. Returns the exit status: 1
 * when --fail-on-regression found one. */
static int print_summary(const struct run *a, const struct run *b, size_t nm, const struct compare_opts *o,
			 const struct tally *ty)
{
	double gm = ty->gm, gu = ty->gu, spread = ty->spread;
	char g1[40], g2[40], g3[40];
	printf("\n%zu matched points (%zu only in A, %zu only in B); geometric mean gain %s",
	       nm, a->cells.ncells - nm, b->cells.ncells - nm, sig3(g1, gm, 0));
	if (!isnan(gu))
	{
		gain_ci(g2, g3, log(gm) - gu, log(gm) + gu);
		printf(" (95%% CI %s..%s", g2, g3);
		if (ty->gu_scatter)
			printf(", from the scatter of the %zu gains: %zu point%s no interval of %s own", nm, ty->unknown,
			       ty->unknown == 1 ? " has" : "s have", ty->unknown == 1 ? "its" : "their");
		printf(")");
	}
	printf(" = %s%%\n", sig3(g1, 100.0 * (gm - 1), 1));
	printf("significant and at least %g%% apart: %zu faster, %zu slower; %zu within noise", o->threshold,
	       ty->faster, ty->slower, ty->noise);
	if (ty->small)
		printf(", %zu significant but smaller than %g%%", ty->small, o->threshold);
	if (ty->unknown)
		printf(", %zu without a CI", ty->unknown);
	printf("\n");
	print_run_noise(o, ty);
	struct strbuf note = {0};
	busy_note(a, b, &note);
	if (note.len)
		fputs(note.buf, stdout);
	if (ty->unrep) {
		printf("unreplicated: %zu points measured in one process on a side (%zu of them beyond their "
		       "interval): their changes are shown but not decided: one process per point says nothing of "
		       "that point's variation between fresh processes, whose tails (a process hit by other load) "
		       "reach tens of percent; measure with repeat: 3 or more to decide them",
		       ty->unrep, ty->unrep_out);
		if (!isnan(spread))
			printf(" (their interval: at least 1.96 x the spread of all matched points' log gains "
			       "around their median, %.2f %%, 1.4826 MAD, with the run noise)", 100 * spread);
		printf("\n");
	}
	sb_reset(&note);
	int rc = regression_lines(o, ty, &note);
	if (note.len)
		fputs(note.buf, stdout);
	sb_free(&note);
	return rc;
}

/* A number for JSON: every digit, or null. */
static void json_num(struct strbuf *sb, double v)
{
	char buf[32];
	sb_puts(sb, isfinite(v) ? fmt_full(buf, v) : "null");
}

/* --format json: the metric, the directories, a point per match (its
 * factors, both values, gain with its 95% interval, change, processes,
 * test, verdict) and the summary; every digit. Long (about 85 lines)
 * because it writes the document in one pass in the order a reader meets it,
 * each key next to the value it holds (the CSV and markdown forms read the
 * same way). */
static void compare_json(const struct run *a, const struct run *b, const struct match *m, size_t nm,
			 const struct compare_opts *o, const char *const *marks, const struct tally *ty,
			 struct strbuf *sb)
{
	const struct metric *mt = &a->metric;
	sb_puts(sb, "{\n  \"metric\": {\"name\": ");
	json_quote(sb, mt->name);
	sb_puts(sb, ", \"unit\": ");
	json_quote(sb, mt->unit);
	sb_printf(sb, ", \"higher_is_better\": %s},\n  \"a\": ", mt->higher_better ? "true" : "false");
	json_quote(sb, o->dirs[0]);
	sb_puts(sb, ", \"b\": ");
	json_quote(sb, o->dirs[1]);
	sb_puts(sb, ", \"threshold_pct\": ");
	json_num(sb, o->threshold);
	sb_puts(sb, ",\n  \"points\": [");
	char test[32];
	for (size_t i = 0; i < nm; i++) {
		const struct match *x = &m[i];
		sb_puts(sb, i ? ",\n    {\"id_a\": " : "\n    {\"id_a\": ");
		json_quote(sb, a->cells.id[x->a]);
		sb_puts(sb, ", \"id_b\": ");
		json_quote(sb, b->cells.id[x->b]);
		sb_puts(sb, ", \"factors\": {");
		for (size_t f = 0; f < a->recipe.nfactors; f++) {
			sb_puts(sb, f ? ", " : "");
			json_quote(sb, a->recipe.factors[f].name);
			sb_puts(sb, ": ");
			json_quote(sb, run_level(a, f, CELL_LEVEL(&a->cells, x->a, f)));
		}
		sb_puts(sb, "}, \"value_a\": ");
		json_num(sb, a->cells.value[x->a] * mt->scale);
		sb_puts(sb, ", \"value_b\": ");
		json_num(sb, b->cells.value[x->b] * mt->scale);
		sb_puts(sb, ", \"gain\": ");
		json_num(sb, x->gain);
		sb_puts(sb, ", \"gain_ci95\": ");
		if (isnan(x->lo)) {
			sb_puts(sb, "null");
		} else {
			sb_puts(sb, "[");
			json_num(sb, exp(x->lo));
			sb_puts(sb, ", ");
			json_num(sb, exp(x->hi));
			sb_puts(sb, "]");
		}
		sb_puts(sb, ", \"change_pct\": ");
		json_num(sb, 100.0 * (x->gain - 1));
		sb_printf(sb, ", \"processes\": [%zu, %zu], \"test\": ", a->cells.nrep[x->a], b->cells.nrep[x->b]);
		json_quote(sb, match_test(x, ty->spread, test, sizeof(test)));
		sb_puts(sb, ", \"p\": ");
		json_num(sb, x->p);
		sb_puts(sb, ", \"verdict\": ");
		json_quote(sb, marks[i]);
		sb_puts(sb, "}");
	}
	double gm = ty->gm, gu = ty->gu;
	sb_printf(sb, "%s],\n  \"summary\": {\"matched\": %zu, \"only_a\": %zu, \"only_b\": %zu, \"geomean_gain\": ",
		  nm ? "\n  " : "", nm, a->cells.ncells - nm, b->cells.ncells - nm);
	json_num(sb, gm);
	sb_puts(sb, ", \"geomean_ci95\": ");
	if (isnan(gu)) {
		sb_puts(sb, "null");
	} else {
		sb_puts(sb, "[");
		json_num(sb, gm * exp(-gu));
		sb_puts(sb, ", ");
		json_num(sb, gm * exp(gu));
		sb_puts(sb, "]");
	}
	sb_puts(sb, ", \"run_noise_pct\": ");
	json_num(sb, o->noise_pct);
	sb_puts(sb, ", \"common_shift_gain\": ");
	json_num(sb, exp(ty->shift));
	sb_puts(sb, ", \"spread_pct\": ");
	json_num(sb, 100 * ty->spread);
	sb_printf(sb, ", \"busy_rows_a\": %zu, \"busy_rows_b\": %zu, \"oversubscribed_rows_a\": %zu, "
		      "\"oversubscribed_rows_b\": %zu",
		  a->quality.busy, b->quality.busy, a->quality.oversub, b->quality.oversub);
	sb_printf(sb, ", \"faster\": %zu, \"slower\": %zu, \"within_noise\": %zu, \"small\": %zu, "
		      "\"no_ci\": %zu, \"unreplicated\": %zu, \"unreplicated_beyond_ci\": %zu, \"regressed\": %zu, "
		      "\"possible_regressions\": %zu}\n}\n",
		  ty->faster, ty->slower, ty->noise, ty->small, ty->unknown, ty->unrep, ty->unrep_out, ty->regressed,
		  ty->possible);
}

/* --format csv: a row per match, the factors of A, both values, the gain
 * with its interval and the run noise in it, change, processes, test, p and
 * verdict; every digit. */
static void compare_csv(const struct run *a, const struct run *b, const struct match *m, size_t nm,
			const struct compare_opts *o, const char *const *marks, const struct tally *ty,
			struct strbuf *sb)
{
	const struct metric *mt = &a->metric;
	static const char *const tail[] = {"metric", "unit", "value_a", "value_b", "gain", "gain_lo", "gain_hi",
					   "run_noise_pct", "change_pct", "processes_a", "processes_b", "test", "p", "verdict"};
	size_t nf = a->recipe.nfactors, nt = ARRAY_SIZE(tail), nc = nf + nt;
	char **cell = xcalloc(nc, sizeof(char *));
	for (size_t k = 0; k < nt; k++)
		cell[nf + k] = (char *)tail[k];
	/* a factor named as another column (gain, p, test: a command engine's
	 * factors may be called anything) is factors.NAME */
	run_factor_header(a, cell, nc, 0);
	csv_sheet_record(sb, cell, nc);
	for (size_t f = 0; f < nf; f++)
		free(cell[f]);
	char num[10][32], test[32];
	for (size_t i = 0; i < nm; i++) {
		const struct match *x = &m[i];
		for (size_t f = 0; f < nf; f++)
			cell[f] = (char *)run_level(a, f, CELL_LEVEL(&a->cells, x->a, f));
		fmt_full(num[0], a->cells.value[x->a] * mt->scale);
		fmt_full(num[1], b->cells.value[x->b] * mt->scale);
		fmt_full(num[2], x->gain);
		fmt_full(num[3], exp(x->lo));
		fmt_full(num[4], exp(x->hi));
		fmt_full(num[5], o->noise_pct);
		fmt_full(num[6], 100.0 * (x->gain - 1));
		snprintf(num[7], sizeof(num[7]), "%zu", a->cells.nrep[x->a]);
		snprintf(num[8], sizeof(num[8]), "%zu", b->cells.nrep[x->b]);
		fmt_full(num[9], x->p);
		char *row[] = {mt->name, mt->unit, num[0], num[1], num[2], num[3], num[4], num[5], num[6], num[7],
			       num[8], (char *)match_test(x, ty->spread, test, sizeof(test)), num[9], (char *)marks[i]};
		memcpy(cell + nf, row, sizeof(row));
		csv_sheet_record(sb, cell, nc); /* a level '=HYPERLINK(...)' is text there */
	}
	free(cell);
}

/* --format markdown: the table a person reads (3 significant digits), then
 * the geometric mean and the counts. */
static void compare_markdown(const struct run *a, const struct run *b, const struct match *m, size_t nm,
			     const struct compare_opts *o, const char *const *marks, const struct tally *ty,
			     struct strbuf *sb)
{
	const struct metric *mt = &a->metric;
	struct strbuf lab = {0};
	char va[40], vb[40], g[40], lo[40], hi[40], c[40];
	sb_puts(sb, "| point | A | B | gain | 95% CI | change | verdict |\n| --- | ---: | ---: | ---: | ---: | ---: | --- |\n");
	for (size_t i = 0; i < nm; i++) {
		const struct match *x = &m[i];
		match_label(a, x, &lab);
		sb_puts(sb, "| ");
		md_escape(sb, lab.len ? lab.buf : "(all)", 1);
		sb_printf(sb, " | %s | %s | %s | ", sig3(va, a->cells.value[x->a] * mt->scale, 0),
			  sig3(vb, b->cells.value[x->b] * mt->scale, 0), sig3(g, x->gain, 0));
		if (!isnan(x->lo))
		{
			gain_ci(lo, hi, x->lo, x->hi);
			sb_printf(sb, "%s .. %s", lo, hi);
		}
		sb_printf(sb, " | %s%% | ", sig3(c, 100.0 * (x->gain - 1), 1));
		md_escape(sb, marks[i], 1);
		sb_puts(sb, " |\n");
	}
	sb_free(&lab);
	double gm = ty->gm, gu = ty->gu;
	sb_printf(sb, "\n%zu matched points (%zu only in A, %zu only in B); geometric mean gain %s", nm,
		  a->cells.ncells - nm, b->cells.ncells - nm, sig3(g, gm, 0));
	if (!isnan(gu))
	{
		gain_ci(lo, hi, log(gm) - gu, log(gm) + gu);
		sb_printf(sb, " (95%% CI %s .. %s", lo, hi);
		if (ty->gu_scatter)
			sb_printf(sb, ", from the scatter of the %zu gains: %zu point%s no interval of %s own", nm,
				  ty->unknown, ty->unknown == 1 ? " has" : "s have", ty->unknown == 1 ? "its" : "their");
		sb_puts(sb, ")");
	}
	sb_printf(sb, "; %zu faster, %zu slower, %zu within noise", ty->faster, ty->slower, ty->noise);
	if (ty->unrep)
		sb_printf(sb, ", %zu unreplicated (one process on a side: change shown, not decided)", ty->unrep);
	sb_puts(sb, ".\n");
	sb_printf(sb, "Run-to-run noise %s%% (`--run-noise`) in every interval; the shift common to every "
		  "point (median gain) is %s.\n", sig3(c, o->noise_pct, 0), sig3(g, exp(ty->shift), 0));
	/* what the table's summary also says: a busy side, the regressions (a
	 * pull request's comment must not hide them behind the exit status) */
	struct strbuf note = {0};
	busy_note(a, b, &note);
	regression_lines(o, ty, &note);
	for (char *line = note.buf, *nl; line && *line; line = nl + 1) {
		nl = strchr(line, '\n');
		*nl = '\0';
		sb_puts(sb, "\n**");
		size_t k = strcspn(line, ":");
		sb_add(sb, line, k); /* 'note', 'regression', 'possible regression' in bold */
		sb_puts(sb, "**");
		md_escape(sb, line + k, 1);
		sb_puts(sb, "\n");
	}
	sb_free(&note);
}

/* Print run's notes (a merged directory's: what the merge did and what
 * differs) to stderr, but those also in seen (NULL: none) or earlier in run:
 * `compare M M`, or two merged directories of the same runs, say each once. */
static void print_notes(const struct run *run, const struct run *seen)
{
	for (size_t i = 0; i < run->nnotes; i++) {
		int dup = 0;
		for (size_t j = 0; j < i && !dup; j++)
			dup = strcmp(run->notes[i], run->notes[j]) == 0;
		for (size_t j = 0; seen && j < seen->nnotes && !dup; j++)
			dup = strcmp(run->notes[i], seen->notes[j]) == 0;
		if (!dup)
			fprintf(stderr, "matrix: %s\n", run->notes[i]);
	}
}

int cmd_compare(int argc, char **argv)
{
	struct compare_opts o;
	int rc = compare_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	struct run a, b;
	if (run_load_notes(&a, o.dirs[0], o.metric, stderr, NULL) != 0)
		return 2;
	print_notes(&a, NULL);
	if (run_load_notes(&b, o.dirs[1], o.metric ? o.metric : a.metric.name, stderr, NULL) != 0) {
		run_free(&a);
		return 2;
	}
	print_notes(&b, &a);
	rc = 2;
	size_t nf, nm = 0;
	size_t *fa = xmalloc((a.recipe.nfactors + 1) * sizeof(size_t));
	size_t *fb = xmalloc((a.recipe.nfactors + 1) * sizeof(size_t));
	struct match *m = xmalloc((b.cells.ncells + 1) * sizeof(*m));
	const char **marks = NULL;
	if (strcmp(a.metric.unit, b.metric.unit) != 0) {
		/* a throughput in runs/s (matrix time) or tokens/s beside samples/s:
		 * not the same quantity, as within one run (report_load.c) */
		char *ua = text_clean(a.metric.unit, strlen(a.metric.unit), 64);
		char *ub = text_clean(b.metric.unit, strlen(b.metric.unit), 64);
		error("compare: the %s of '%s' is in %s, that of '%s' in %s: not the same quantity, no gain "
		      "between them", a.metric.name, o.dirs[0], ua, o.dirs[1], ub);
		free(ua);
		free(ub);
		goto out;
	}
	if (join_factors(&a, &b, fa, fb, &nf) != 0)
		goto out;
	double r = log1p(o.noise_pct / 100);
	nm = match_points(&a, &b, fa, fb, nf, r, m);
	if (nm == 0) {
		error("no point of '%s' has the settings of a point of '%s'", o.dirs[1], o.dirs[0]);
		goto out;
	}
	qsort(m, nm, sizeof(*m), cmp_match);
	struct tally ty = {0};
	ty.spread = spread_of(m, nm);
	ty.shift = common_shift(m, nm);
	ty.r = r;
	settle(m, nm, ty.spread, r);
	marks = xmalloc(nm * sizeof(char *));
	for (size_t i = 0; i < nm; i++) {
		marks[i] = verdict(&m[i], &o, &ty);
		ty.slog += log(m[i].gain);
		ty.su2 += m[i].u * m[i].u;
	}
	geomean(m, nm, &ty);
	if (strcmp(o.format, "table") == 0) {
		print_matches(&a, &b, m, nm, &ty, &o, marks);
		rc = print_summary(&a, &b, nm, &o, &ty);
	} else {
		struct strbuf sb = {0};
		sb_add(&sb, "", 0);
		if (o.format[0] == 'j')
			compare_json(&a, &b, m, nm, &o, marks, &ty, &sb);
		else if (o.format[0] == 'c')
			compare_csv(&a, &b, m, nm, &o, marks, &ty, &sb);
		else
			compare_markdown(&a, &b, m, nm, &o, marks, &ty, &sb);
		fwrite(sb.buf, 1, sb.len, stdout);
		sb_free(&sb);
		rc = !isnan(o.fail_pct) && (ty.regressed || ty.possible) ? 1 : 0;
	}
out:
	free(marks);
	free(m);
	free(fa);
	free(fb);
	run_free(&a);
	run_free(&b);
	return rc;
}
