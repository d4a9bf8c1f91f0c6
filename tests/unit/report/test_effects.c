/* test_effects.c - effects, interactions, improvements, best configuration
 * and scaling computed on a hand-made cell set with known answers:
 *   throughput = 100 x 1.5 when A=on, x 2 more when A=on and B=on,
 *                x 0.25 for model=big, C has no effect;
 *   every point's 95% CI of log(value) is +-0.02.
 * Prints one line per check and a verdict; exit 1 on any failure. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/effects.h"
#include "report/stats.h"
#include "util.h"

static int failures;

static void check(int ok, const char *what, double got, double want)
{
	printf("%s %s: got %.12g, expected %.12g\n", ok ? "ok  " : "FAIL", what, got, want);
	if (!ok)
		failures++;
}

static void near(const char *what, double got, double want)
{
	check(fabs(got - want) <= 1e-12 * fabs(want) + 1e-15, what, got, want);
}

static void eq(const char *what, size_t got, size_t want)
{
	check(got == want, what, (double)got, (double)want);
}

enum { MODEL, A, B, C, NF };

static double truth(const size_t *l)
{
	double t = 100;
	if (l[MODEL] == 1)
		t *= 0.25;
	if (l[A] == 1)
		t *= 1.5;
	if (l[A] == 1 && l[B] == 1)
		t *= 2;
	return t;
}

static const struct effect *find(const struct effect *e, size_t n, size_t f, size_t to)
{
	for (size_t i = 0; i < n; i++)
		if (e[i].factor == f && e[i].to == to)
			return &e[i];
	return NULL;
}

int main(void)
{
	size_t nlevels[NF] = {2, 2, 2, 3};
	struct cellset cs;
	cellset_init(&cs, NF, nlevels);
	size_t l[NF];
	/* the full cube, but the point (big, on, on, C=2) is missing */
	for (l[MODEL] = 0; l[MODEL] < 2; l[MODEL]++)
		for (l[A] = 0; l[A] < 2; l[A]++)
			for (l[B] = 0; l[B] < 2; l[B]++)
				for (l[C] = 0; l[C] < 3; l[C]++) {
					if (l[MODEL] == 1 && l[A] == 1 && l[B] == 1 && l[C] == 2)
						continue;
					char id[17];
					snprintf(id, sizeof(id), "%zu%zu%zu%zu", l[0], l[1], l[2], l[3]);
					cellset_add(&cs, l, truth(l), 0.02, truth(l), id);
				}
	eq("cells", cs.ncells, 23);
	size_t probe[NF] = {1, 1, 1, 1};
	check(cellset_find(&cs, probe) >= 0, "find present cell", 1, 1);
	probe[C] = 2;
	check(cellset_find(&cs, probe) == -1, "find missing cell", 0, 0);

	size_t ref[NF] = {0, 0, 0, 0};
	size_t ne;
	struct effect *e = effects_compute(&cs, ref, 1, &ne);
	/* effects: model big, A on, B on, C 1, C 2 */
	eq("effects", ne, 5);
	const struct effect *ea = find(e, ne, A, 1);
	eq("A pairs", ea->npairs, 11);
	/* 6 pairs at B=off (gain 1.5), 5 at B=on (gain 3) */
	near("A geomean", ea->geomean, exp((6 * log(1.5) + 5 * log(3.0)) / 11));
	near("A min", ea->min, 1.5);
	near("A max", ea->max, 3.0);
	/* one process a point (ci_kind within, as cellset_add marks a cell):
	 * at least the t interval of the 11 pairs' log gains, whose scatter
	 * (here the A x B interaction) would hold the variation between
	 * processes that the within intervals leave out */
	double lm = (6 * log(1.5) + 5 * log(3.0)) / 11, ss = 6 * pow(log(1.5) - lm, 2) + 5 * pow(log(3.0) - lm, 2);
	near("A CI half-width (log), within", ea->u, stat_t975(10) * sqrt(ss / 10) / sqrt(11));
	/* points measured in several processes (between): propagated only */
	for (size_t c = 0; c < cs.ncells; c++)
		cs.kind[c] = CI_BETWEEN;
	size_t nbw;
	struct effect *ebw = effects_compute(&cs, ref, 1, &nbw);
	near("A CI half-width (log), between", find(ebw, nbw, A, 1)->u, sqrt(11 * 2 * 0.02 * 0.02) / 11);
	effects_free(ebw, nbw);
	for (size_t c = 0; c < cs.ncells; c++)
		cs.kind[c] = CI_WITHIN;
	const struct interaction *ib0 = NULL, *ib1 = NULL;
	for (size_t i = 0; i < ea->ninter; i++)
		if (ea->inter[i].by == B)
			*(ea->inter[i].by_level ? &ib1 : &ib0) = &ea->inter[i];
	near("A given B=off", ib0->geomean, 1.5);
	near("A given B=on", ib1->geomean, 3.0);
	eq("A given B=on pairs", ib1->npairs, 5);
	near("A spread", ea->spread, 2.0);
	const struct effect *eb = find(e, ne, B, 1);
	near("B geomean", eb->geomean, exp((6 * log(1.0) + 5 * log(2.0)) / 11));
	const struct effect *em = find(e, ne, MODEL, 1);
	near("model geomean", em->geomean, 0.25);
	near("model spread (no interaction)", em->spread, 1.0);
	near("C=1 geomean", find(e, ne, C, 1)->geomean, 1.0);
	eq("sorted: largest first", e[0].factor, MODEL);
	eq("sorted: then A", e[1].factor, A);

	/* lower is better: the gain is inverted, the size order is the same */
	size_t nel;
	struct effect *el = effects_compute(&cs, ref, 0, &nel);
	near("A geomean, lower is better", find(el, nel, A, 1)->geomean,
	     1 / exp((6 * log(1.5) + 5 * log(3.0)) / 11));
	effects_free(el, nel);

	/* improvements of A by (model, B): 100 * (new - base) / base */
	size_t by[2] = {MODEL, B}, nr;
	struct improvement *im = improvements_compute(&cs, A, 0, 1, by, 2, 1, &nr);
	eq("improvement rows", nr, 4);
	near("small B=off base", im[0].base, 100);
	near("small B=off new", im[0].new, 150);
	near("small B=off improvement %", im[0].pct, 50);
	near("small B=on improvement %", im[1].pct, 200);
	eq("big B=on pairs", im[3].npairs, 2);
	double u = sqrt(2 * 0.02 * 0.02 * 3) / 3; /* three pairs of +-0.02 */
	near("small B=off improvement lo", im[0].pct_lo, 100 * (1.5 * exp(-u) - 1));
	near("small B=off improvement hi", im[0].pct_hi, 100 * (1.5 * exp(u) - 1));
	improvements_free(im, nr);
	/* as times (lower is better): 100 * (base - new) / base */
	im = improvements_compute(&cs, A, 0, 1, by, 2, 0, &nr);
	near("throughputs read as times: a loss", im[0].pct, -50); /* 100 * (100 - 150) / 100 */
	improvements_free(im, nr);
	struct cellset ts;
	cellset_init(&ts, NF, nlevels);
	for (size_t c = 0; c < cs.ncells; c++)
		cellset_add(&ts, &CELL_LEVEL(&cs, c, 0), 1000.0 / cs.value[c], 0.02, NAN, cs.id[c]);
	im = improvements_compute(&ts, A, 0, 1, by, 2, 0, &nr);
	near("step time improvement B=off", im[0].pct, 100.0 / 3);
	near("step time improvement B=on", im[1].pct, 200.0 / 3);
	improvements_free(im, nr);
	cellset_free(&ts);

	/* best per model, baseline everything at level 0 */
	size_t group[1] = {MODEL};
	long base[NF] = {-1, 0, 0, 0};
	long *cg;
	struct best *b = best_compute(&cs, group, 1, base, 1, &nr, &cg);
	eq("best groups", nr, 2);
	near("small best value", cs.value[b[0].best], 300);
	near("small gain", b[0].gain, 3);
	near("big gain", b[1].gain, 3);
	eq("cell 0 group", (size_t)cg[0], 0);
	best_free(b, nr);
	free(cg);

	/* scaling: C read as a count 1, 2, 4 with throughput x n x 0.9^log2(n) */
	struct cellset sc;
	size_t nl2[2] = {2, 3};
	cellset_init(&sc, 2, nl2);
	double count[3] = {1, 2, 4}, eff[3] = {1, 0.9, 0.81};
	for (size_t m = 0; m < 2; m++)
		for (size_t k = 0; k < 3; k++) {
			size_t lv[2] = {m, k};
			double t = (m ? 50 : 100) * count[k] * eff[k];
			cellset_add(&sc, lv, t, NAN, t, "s");
		}
	size_t ns;
	struct scaling_series *s = scaling_compute(&sc, 1, count, &ns);
	eq("scaling series", ns, 2);
	near("scale factor at 4", s[0].pt[2].scale, 0.81);
	near("ideal at 4", s[1].pt[2].ideal, 200);
	check(isnan(s[0].pt[2].u) && isnan(s[0].pt[2].scale_u), "no interval: none for the scale", s[0].pt[2].u, NAN);
	scaling_free(s, ns);
	/* with intervals: thr's from its processes (stat_point, the ones not > 0
	 * left out), the scale factor's from both points' in quadrature, none at
	 * the first count */
	double t1[1] = {100}, w1[1] = {0.03}, t4[4] = {291.6, 0, 291.6, NAN}, w4[4] = {0.04, 0.5, 0.04, 0.5};
	cellset_set_thr(&sc, (size_t)cellset_find(&sc, (size_t[]){0, 0}), t1, w1, 1);
	cellset_set_thr(&sc, (size_t)cellset_find(&sc, (size_t[]){0, 2}), t4, w4, 4);
	s = scaling_compute(&sc, 1, count, &ns);
	near("thr from its processes", s[0].pt[2].thr, 291.6);
	near("scale at 4 from them", s[0].pt[2].scale, 0.729);
	near("u at 1", s[0].pt[0].u, 0.03);
	eq("no scale interval at n0", (size_t)(s[0].pt[0].scale_u == 0), 1);
	check(s[0].pt[2].u >= 0.04, "two equal processes: at least their own half-width", s[0].pt[2].u, 0.04);
	near("scale u in quadrature", s[0].pt[2].scale_u, sqrt(s[0].pt[2].u * s[0].pt[2].u + 0.03 * 0.03));
	double tz[2] = {0, -1};
	cellset_set_thr(&sc, (size_t)cellset_find(&sc, (size_t[]){1, 0}), tz, NULL, 2);
	check(isnan(sc.thr[cellset_find(&sc, (size_t[]){1, 0})]), "no throughput > 0: NaN", 0, 0);
	scaling_free(s, ns);
	/* a series whose 1-GPU point has no throughput: no scale efficiency (its
	 * smallest count, 2, is not the base the seeds' scale factor means) */
	double t0[1] = {0}, w0[1] = {0.03};
	cellset_set_thr(&sc, (size_t)cellset_find(&sc, (size_t[]){1, 0}), t0, w0, 1);
	s = scaling_compute(&sc, 1, count, &ns);
	eq("scaling series without a 1-GPU point", ns, 2);
	eq("the first has its base", (size_t)s[0].base_ok, 1);
	eq("the second has not", (size_t)s[1].base_ok, 0);
	eq("its points from 2 GPUs", s[1].npoints, 2);
	check(isnan(s[1].pt[0].scale) && isnan(s[1].pt[1].scale) && isnan(s[1].pt[1].ideal),
	      "no scale efficiency without the 1-GPU point", s[1].pt[1].scale, NAN);
	near("its throughput still there", s[1].pt[1].thr, 50 * 4 * 0.81);
	scaling_free(s, ns);
	cellset_free(&sc);

	/* statistics */
	double v[4] = {4, 1, 3, 2};
	near("median of 4", stat_median(v, 4), 2.5);
	near("geomean", stat_geomean((double[]){2, 8}, 2), 4);
	near("log half-width", stat_log_halfwidth(1 / 1.02, 1.02), log(1.02));
	check(stat_jitter("abc", 0.6) == stat_jitter("abc", 0.6), "jitter deterministic", 0, 0);
	check(fabs(stat_jitter("abc", 0.6)) <= 0.3, "jitter in range", stat_jitter("abc", 0.6), 0.3);

	effects_free(e, ne);
	cellset_free(&cs);
	printf("%s: %d failures\n", failures ? "FAIL" : "EFFECTS OK", failures);
	return failures ? 1 : 0;
}
