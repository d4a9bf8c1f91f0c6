/* effects.c - what each setting buys: matched pairs of cells (equal in every
 * factor but one), their gains, two-factor breakdowns, improvement tables,
 * best configuration per group and scaling. Pure computation over a struct
 * cellset: no files, no recipe, so that it can be tested on plain arrays. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "effects.h"
#include "stats.h"
#include "util.h"

/* Geometric mean of exp(log-values) with min, max. */
static void summarise(const double *g, size_t n, double *gm, double *mn, double *mx)
{
	*gm = stat_geomean(g, n);
	*mn = *mx = n ? g[0] : NAN;
	for (size_t i = 1; i < n; i++) {
		if (g[i] < *mn)
			*mn = g[i];
		if (g[i] > *mx)
			*mx = g[i];
	}
}

/* ---- effects --------------------------------------------------------------------- */

static double pair_u(const struct cellset *cs, size_t a, size_t b)
{
	return sqrt(cs->u[a] * cs->u[a] + cs->u[b] * cs->u[b]);
}

/* The pairs behind one geometric mean of gains: its interval's half-width
 * on the log scale. From the points' intervals (sqrt of the sum of the
 * pairs' squares over n); and where a pair's point was measured in one
 * process (ci_kind within), whose interval holds only the noise inside
 * that process, at least a t interval from the scatter of the pairs' log
 * gains (t over n - 1 degrees of freedom), as matrix compare does. Without
 * it, one process a point on a 2-core machine made eval off -> on a
 * "significant" x0.926 [0.92, 0.933] over 32 pairs whose gains ran from
 * 0.35 to 1.28. */
struct gain_acc {
	size_t n;
	double su2, sl, sl2;  /* sum of pair u^2, of log gains and their squares */
	int within;           /* some point has only a within-process interval */
};

static void acc_add(struct gain_acc *a, const struct cellset *cs, size_t base, size_t new)
{
	double u = pair_u(cs, base, new), l = log(cs->value[new]) - log(cs->value[base]);
	a->n++;
	a->su2 += u * u;
	a->sl += l;
	a->sl2 += l * l;
	a->within |= cellset_pair_within(cs, base, new);
}

static double acc_u(const struct gain_acc *a)
{
	if (!a->n)
		return NAN;
	double u = sqrt(a->su2) / (double)a->n; /* NaN when any point lacks a CI */
	if (a->within && a->n >= 2 && !isnan(u)) {
		double n = (double)a->n, var = (a->sl2 - a->sl * a->sl / n) / (n - 1);
		double ge = stat_t975(a->n - 1) * sqrt(var > 0 ? var : 0) / sqrt(n);
		if (ge > u)
			u = ge;
	}
	return u;
}

/* Find every matched pair (from, to) of factor f. */
static void find_pairs(const struct cellset *cs, size_t f, size_t from, size_t to, size_t **base,
		       size_t **new, size_t *n)
{
	size_t *key = xmalloc((cs->nfactors ? cs->nfactors : 1) * sizeof(size_t));
	size_t cap = 0;
	*n = 0;
	*base = *new = NULL;
	for (size_t c = 0; c < cs->ncells; c++) {
		if (CELL_LEVEL(cs, c, f) != to)
			continue;
		memcpy(key, &CELL_LEVEL(cs, c, 0), cs->nfactors * sizeof(size_t));
		key[f] = from;
		long b = cellset_find(cs, key);
		if (b < 0)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			*base = xrealloc(*base, cap * sizeof(size_t));
			*new = xrealloc(*new, cap * sizeof(size_t));
		}
		(*base)[*n] = (size_t)b;
		(*new)[*n] = c;
		(*n)++;
	}
	free(key);
}

static int cmp_effect(const void *a, const void *b)
{
	const struct effect *x = a, *y = b;
	double lx = fabs(log(x->geomean)), ly = fabs(log(y->geomean));
	if (lx != ly)
		return lx < ly ? 1 : -1;
	if (x->factor != y->factor)
		return x->factor < y->factor ? -1 : 1;
	return (x->to > y->to) - (x->to < y->to);
}

static void effect_breakdown(const struct cellset *cs, struct effect *e)
{
	size_t total = 0;
	for (size_t g = 0; g < cs->nfactors; g++)
		if (g != e->factor)
			total += cs->nlevels[g];
	e->inter = xcalloc(total ? total : 1, sizeof(*e->inter));
	e->spread = 1;
	double *buf = xmalloc((e->npairs ? e->npairs : 1) * sizeof(double));
	for (size_t g = 0; g < cs->nfactors; g++) {
		if (g == e->factor || cs->nlevels[g] < 2)
			continue;
		double lo = INFINITY, hi = 0;
		for (size_t l = 0; l < cs->nlevels[g]; l++) {
			size_t k = 0;
			struct gain_acc acc = {0};
			for (size_t i = 0; i < e->npairs; i++)
				if (CELL_LEVEL(cs, e->new[i], g) == l) {
					buf[k++] = e->gain[i];
					acc_add(&acc, cs, e->base[i], e->new[i]);
				}
			if (k == 0)
				continue;
			struct interaction *in = &e->inter[e->ninter++];
			in->by = g;
			in->by_level = l;
			in->npairs = k;
			summarise(buf, k, &in->geomean, &in->min, &in->max);
			in->u = acc_u(&acc);
			if (in->geomean < lo)
				lo = in->geomean;
			if (in->geomean > hi)
				hi = in->geomean;
		}
		if (hi > 0 && lo < INFINITY && hi / lo > e->spread)
			e->spread = hi / lo;
	}
	free(buf);
}

struct effect *effects_compute(const struct cellset *cs, const size_t *ref, int higher_better,
			       size_t *neffects)
{
	size_t cap = 0, n = 0;
	struct effect *out = NULL;
	for (size_t f = 0; f < cs->nfactors; f++) {
		for (size_t to = 0; to < cs->nlevels[f]; to++) {
			if (to == ref[f])
				continue;
			struct effect e = {.factor = f, .from = ref[f], .to = to};
			find_pairs(cs, f, e.from, to, &e.base, &e.new, &e.npairs);
			if (e.npairs == 0) {
				free(e.base);
				free(e.new);
				continue;
			}
			e.gain = xmalloc(e.npairs * sizeof(double));
			struct gain_acc acc = {0};
			for (size_t i = 0; i < e.npairs; i++) {
				e.gain[i] = effects_gain(cs->value[e.base[i]], cs->value[e.new[i]], higher_better);
				acc_add(&acc, cs, e.base[i], e.new[i]);
			}
			summarise(e.gain, e.npairs, &e.geomean, &e.min, &e.max);
			e.u = acc_u(&acc);
			effect_breakdown(cs, &e);
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				out = xrealloc(out, cap * sizeof(*out));
			}
			out[n++] = e;
		}
	}
	if (n)
		qsort(out, n, sizeof(*out), cmp_effect);
	*neffects = n;
	return out;
}

void effects_free(struct effect *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].base);
		free(e[i].new);
		free(e[i].gain);
		free(e[i].inter);
	}
	free(e);
}

/* ---- improvements -------------------------------------------------------------- */

/* Lexicographic order of group level vectors, for sorting rows. */
static size_t cmp_nby;
static int cmp_improvement(const void *a, const void *b)
{
	const struct improvement *x = a, *y = b;
	for (size_t i = 0; i < cmp_nby; i++)
		if (x->group[i] != y->group[i])
			return x->group[i] < y->group[i] ? -1 : 1;
	return 0;
}

struct improvement *improvements_compute(const struct cellset *cs, size_t factor, size_t from,
					 size_t to, const size_t *by, size_t nby,
					 int higher_better, size_t *nrows)
{
	size_t *base, *new, npairs;
	find_pairs(cs, factor, from, to, &base, &new, &npairs);
	struct improvement *rows = NULL;
	size_t n = 0;
	/* per row accumulators: sum of logs, the gains' interval */
	double *slb = NULL, *sln = NULL;
	struct gain_acc *acc = NULL;
	for (size_t i = 0; i < npairs; i++) {
		size_t r;
		for (r = 0; r < n; r++) {
			size_t k;
			for (k = 0; k < nby; k++)
				if (rows[r].group[k] != CELL_LEVEL(cs, new[i], by[k]))
					break;
			if (k == nby)
				break;
		}
		if (r == n) {
			rows = xrealloc(rows, (n + 1) * sizeof(*rows));
			slb = xrealloc(slb, (n + 1) * sizeof(double));
			sln = xrealloc(sln, (n + 1) * sizeof(double));
			acc = xrealloc(acc, (n + 1) * sizeof(*acc));
			memset(&acc[n], 0, sizeof(acc[n]));
			memset(&rows[n], 0, sizeof(rows[n]));
			rows[n].group = xcalloc(nby ? nby : 1, sizeof(size_t));
			for (size_t k = 0; k < nby; k++)
				rows[n].group[k] = CELL_LEVEL(cs, new[i], by[k]);
			slb[n] = sln[n] = 0;
			n++;
		}
		rows[r].npairs++;
		slb[r] += log(cs->value[base[i]]);
		sln[r] += log(cs->value[new[i]]);
		acc_add(&acc[r], cs, base[i], new[i]);
	}
	for (size_t r = 0; r < n; r++) {
		double m = (double)rows[r].npairs;
		rows[r].base = exp(slb[r] / m);
		rows[r].new = exp(sln[r] / m);
		double u = acc_u(&acc[r]); /* of log(new / base) */
		double lo = rows[r].new * exp(-u), hi = rows[r].new * exp(u);
		rows[r].pct = improvement_pct(rows[r].base, rows[r].new, higher_better);
		double a = improvement_pct(rows[r].base, lo, higher_better);
		double b = improvement_pct(rows[r].base, hi, higher_better);
		rows[r].pct_lo = a < b ? a : b;
		rows[r].pct_hi = a < b ? b : a;
		if (isnan(u))
			rows[r].pct_lo = rows[r].pct_hi = NAN;
	}
	cmp_nby = nby;
	if (n)
		qsort(rows, n, sizeof(*rows), cmp_improvement);
	free(slb);
	free(sln);
	free(acc);
	free(base);
	free(new);
	*nrows = n;
	return rows;
}

void improvements_free(struct improvement *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(rows[i].group);
	free(rows);
}

/* ---- best configuration per group ---------------------------------------------- */

static int cmp_best(const void *a, const void *b)
{
	const struct best *x = a, *y = b;
	for (size_t i = 0; i < cmp_nby; i++)
		if (x->group[i] != y->group[i])
			return x->group[i] < y->group[i] ? -1 : 1;
	return 0;
}

static int better(double a, double b, int higher_better)
{
	return higher_better ? a > b : a < b;
}

/* Cell c is in the group of row b: its levels of the ngroup group factors
 * are b's. */
static int in_group(const struct cellset *cs, size_t c, const size_t *group, size_t ngroup,
		    const struct best *b)
{
	for (size_t k = 0; k < ngroup; k++)
		if (b->group[k] != CELL_LEVEL(cs, c, group[k]))
			return 0;
	return 1;
}

/* The groups, each with its best cell and number of cells, in order of their
 * level vectors: walk the cells, then sort. */
static struct best *best_groups(const struct cellset *cs, const size_t *group, size_t ngroup,
				int higher_better, size_t *nrows)
{
	struct best *rows = NULL;
	size_t n = 0;
	for (size_t c = 0; c < cs->ncells; c++) {
		size_t r;
		for (r = 0; r < n; r++)
			if (in_group(cs, c, group, ngroup, &rows[r]))
				break;
		if (r == n) {
			rows = xrealloc(rows, (n + 1) * sizeof(*rows));
			memset(&rows[n], 0, sizeof(rows[n]));
			rows[n].group = xcalloc(ngroup ? ngroup : 1, sizeof(size_t));
			for (size_t k = 0; k < ngroup; k++)
				rows[n].group[k] = CELL_LEVEL(cs, c, group[k]);
			rows[n].best = -1;
			rows[n].baseline = -1;
			n++;
		}
		rows[r].ncells++;
		if (rows[r].best < 0 || better(cs->value[c], cs->value[rows[r].best], higher_better))
			rows[r].best = (long)c;
	}
	cmp_nby = ngroup;
	if (n)
		qsort(rows, n, sizeof(*rows), cmp_best);
	*nrows = n;
	return rows;
}

/* Row b's baseline cell (the group's levels, base_level elsewhere) and the
 * best's gain over it. key is room for a level per factor. */
static void best_baseline(const struct cellset *cs, const size_t *group, size_t ngroup,
			  const long *base_level, int higher_better, size_t *key, struct best *b)
{
	for (size_t f = 0; f < cs->nfactors; f++)
		key[f] = base_level[f] >= 0 ? (size_t)base_level[f] : 0;
	for (size_t k = 0; k < ngroup; k++)
		key[group[k]] = b->group[k];
	b->baseline = cellset_find(cs, key);
	b->gain = b->baseline >= 0 ? effects_gain(cs->value[b->baseline], cs->value[b->best], higher_better)
				   : NAN;
	b->gain_u = b->baseline >= 0 && b->baseline != b->best
			    ? pair_u(cs, (size_t)b->baseline, (size_t)b->best)
			    : NAN;
	if (b->baseline == b->best)
		b->gain_u = 0;
}

/* The runner-up of row b's group, and whether the best is clearly ahead. */
static void best_runner_up(const struct cellset *cs, const size_t *group, size_t ngroup,
			   int higher_better, struct best *b)
{
	b->runner_up = -1;
	for (size_t c = 0; c < cs->ncells; c++) {
		if ((long)c == b->best || !in_group(cs, c, group, ngroup, b))
			continue;
		if (b->runner_up < 0 || better(cs->value[c], cs->value[b->runner_up], higher_better))
			b->runner_up = (long)c;
	}
	long x = b->best, s = b->runner_up;
	b->clear = s < 0 || fabs(log(cs->value[x]) - log(cs->value[s])) > cs->u[x] + cs->u[s];
}

struct best *best_compute(const struct cellset *cs, const size_t *group, size_t ngroup,
			  const long *base_level, int higher_better, size_t *nrows,
			  long **cell_group)
{
	size_t n;
	struct best *rows = best_groups(cs, group, ngroup, higher_better, &n);
	size_t *key = xmalloc((cs->nfactors ? cs->nfactors : 1) * sizeof(size_t));
	for (size_t r = 0; r < n; r++)
		best_baseline(cs, group, ngroup, base_level, higher_better, key, &rows[r]);
	free(key);
	for (size_t r = 0; r < n; r++)
		best_runner_up(cs, group, ngroup, higher_better, &rows[r]);
	long *cg = xmalloc((cs->ncells ? cs->ncells : 1) * sizeof(long));
	for (size_t c = 0; c < cs->ncells; c++) {
		cg[c] = -1;
		for (size_t r = 0; r < n; r++)
			if (in_group(cs, c, group, ngroup, &rows[r])) {
				cg[c] = (long)r;
				break;
			}
	}
	if (cell_group)
		*cell_group = cg;
	else
		free(cg);
	*nrows = n;
	return rows;
}

size_t best_within(const struct cellset *cs, const struct best *b, size_t n, size_t *gains)
{
	size_t within = 0;
	*gains = 0;
	for (size_t i = 0; i < n; i++) {
		if (b[i].baseline < 0 || b[i].baseline == b[i].best || !isfinite(b[i].gain_u))
			continue;
		(*gains)++;
		within += cellset_pair_within(cs, (size_t)b[i].best, (size_t)b[i].baseline);
	}
	return within;
}

void best_free(struct best *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(b[i].group);
	free(b);
}

/* ---- scaling ---------------------------------------------------------------------- */

struct scaling_series *scaling_compute(const struct cellset *cs, size_t factor,
				       const double *count, size_t *nseries)
{
	struct scaling_series *s = NULL;
	size_t n = 0;
	size_t *key = xmalloc((cs->nfactors ? cs->nfactors : 1) * sizeof(size_t));
	unsigned char *seen = xcalloc(cs->ncells ? cs->ncells : 1, 1);
	size_t nl = cs->nlevels[factor];
	/* levels by increasing count */
	size_t *order = xmalloc(nl * sizeof(size_t));
	for (size_t l = 0; l < nl; l++)
		order[l] = l;
	for (size_t i = 1; i < nl; i++)
		for (size_t j = i; j > 0 && count[order[j]] < count[order[j - 1]]; j--) {
			size_t t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (size_t c = 0; c < cs->ncells; c++) {
		if (seen[c])
			continue;
		struct scaling_series ser = {.first = (long)c};
		ser.pt = xcalloc(nl, sizeof(*ser.pt));
		memcpy(key, &CELL_LEVEL(cs, c, 0), cs->nfactors * sizeof(size_t));
		double n0 = NAN, t0 = NAN, u0 = NAN;
		for (size_t i = 0; i < nl; i++) {
			key[factor] = order[i];
			long d = cellset_find(cs, key);
			if (d < 0)
				continue;
			seen[d] = 1;
			if (!(cs->thr[d] > 0))
				continue;
			if (isnan(n0)) {
				n0 = count[order[i]];
				t0 = cs->thr[d];
				u0 = cs->thr_u[d];
			}
			struct scaling_point *p = &ser.pt[ser.npoints++];
			p->cell = d;
			p->count = count[order[i]];
			p->thr = cs->thr[d];
			p->ideal = p->count / n0 * t0;
			p->scale = p->thr / p->ideal;
			p->u = cs->thr_u[d];
			p->scale_u = ser.npoints == 1 ? 0 : sqrt(p->u * p->u + u0 * u0);
		}
		if (ser.npoints < 2) {
			free(ser.pt);
			continue;
		}
		/* scale efficiency is throughput(N) / (N x throughput(1)): a
		 * series whose 1-GPU point is missing or failed has none (from
		 * its smallest count it would be another quantity, under the
		 * same name) */
		ser.base_ok = ser.pt[0].count == 1;
		if (!ser.base_ok)
			for (size_t k = 0; k < ser.npoints; k++)
				ser.pt[k].ideal = ser.pt[k].scale = ser.pt[k].scale_u = NAN;
		ser.first = ser.pt[0].cell;
		s = xrealloc(s, (n + 1) * sizeof(*s));
		s[n++] = ser;
	}
	free(order);
	free(seen);
	free(key);
	*nseries = n;
	return s;
}

void scaling_free(struct scaling_series *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i].pt);
	free(s);
}
