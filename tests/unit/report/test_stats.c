/* test_stats.c - the statistics of matrix/report/stats.c: Student t quantiles, the
 * exact Mann-Whitney p against values R gives, the README's worked example,
 * the improvement formula, and the coverage of a point's interval on
 * simulated processes with a known between-process spread (lognormal): the
 * between-process interval must hold at least its 95% (and not be vacuous),
 * while the within-process one alone covers far less, as documented. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "../t.h"
#include "report/effects.h"
#include "report/stats.h"

#define NEAR(a, b, tol) CHECK(fabs((a) - (b)) <= (tol))

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}
static double normal(void)
{
	return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

/* Simulate trials points of k processes each: process value = truth *
 * exp(sigma * z), within-process half-width w (log scale). Returns the
 * fraction of intervals that hold the truth; *mean_u gets the mean half-width. */
static double coverage(size_t k, double sigma, double w, size_t trials, double *mean_u)
{
	double v[64], wv[64], truth = 1000;
	size_t hit = 0;
	double su = 0;
	for (size_t t = 0; t < trials; t++) {
		for (size_t i = 0; i < k; i++) {
			v[i] = truth * exp(sigma * normal());
			wv[i] = w;
		}
		struct point_est pe;
		stat_point(v, wv, k, &pe);
		hit += fabs(log(pe.value) - log(truth)) <= pe.u;
		su += pe.u;
	}
	*mean_u = su / (double)trials;
	return (double)hit / (double)trials;
}

int main(void)
{
	/* Student t, two-sided 95% */
	NEAR(stat_t975(1), 12.7062, 1e-4);
	NEAR(stat_t975(2), 4.30265, 1e-5);
	NEAR(stat_t975(4), 2.77645, 1e-5);
	NEAR(stat_t975(40), 2.021075, 2e-4);
	NEAR(stat_t975(100), 1.983972, 1e-4);
	NEAR(stat_t975(1000), 1.962339, 1e-4);
	CHECK(isnan(stat_t975(0)));

	/* Mann-Whitney U, exact two-sided p (R: wilcox.test(a, b)$p.value) */
	double a3[] = {1, 2, 3}, b3[] = {4, 5, 6};
	double u;
	NEAR(stat_mann_whitney(a3, 3, b3, 3, &u), 0.1, 1e-12);
	NEAR(u, 0, 0);
	NEAR(stat_mann_whitney(b3, 3, a3, 3, &u), 0.1, 1e-12);
	NEAR(u, 9, 0);
	double a4[] = {1.1, 2.2, 3.3, 4.4}, b5[] = {3.9, 5.5, 6.6, 7.7, 8.8};
	NEAR(stat_mann_whitney(a4, 4, b5, 5, &u), 4.0 / 126, 1e-12); /* R: 0.03175 */
	NEAR(u, 1, 0);
	double a5[] = {1, 2, 3, 4, 5}, b5b[] = {6, 7, 8, 9, 10};
	NEAR(stat_mann_whitney(a5, 5, b5b, 5, NULL), 2.0 / 252, 1e-12);
	double mixa[] = {1, 3, 5, 7}, mixb[] = {2, 4, 6, 8};
	NEAR(stat_mann_whitney(mixa, 4, mixb, 4, &u), 0.6857142857, 1e-9); /* R: 0.6857 */
	NEAR(stat_mw_min_p(3, 3), 0.1, 1e-12);
	NEAR(stat_mw_min_p(4, 4), 2.0 / 70, 1e-12);
	NEAR(stat_mw_min_p(3, 5), 2.0 / 56, 1e-12);
	/* large samples: normal approximation, a clear shift is significant */
	double la[40], lb[40];
	for (int i = 0; i < 40; i++) {
		la[i] = 100 + i;
		lb[i] = 120 + i;
	}
	CHECK(stat_mann_whitney(la, 40, lb, 40, NULL) < 0.01);

	/* the U test inverted: the shifts it does not reject. 5 against 5: P(U <= 2)
	 * two-sided is 8/252 = 0.032, P(U <= 3) 14/252 = 0.056, so at 5% U = 3..22
	 * is kept, and the ends are the 3rd smallest and 3rd largest of the 25
	 * differences y_j - x_i; for y = x + 10 those are 7 and 13 */
	double sx[] = {1, 2, 3, 4, 5}, sy[] = {11, 12, 13, 14, 15}, slo, shi;
	stat_mw_shift_ci(sx, 5, sy, 5, 0.05, &slo, &shi);
	NEAR(slo, 7, 0);
	NEAR(shi, 13, 0);
	/* consistent with the test: a shift just outside is rejected, inside kept */
	double sy2[5];
	for (int i = 0; i < 5; i++)
		sy2[i] = sy[i] - 6.9;
	CHECK(stat_mann_whitney(sy2, 5, sx, 5, NULL) <= 0.05);
	for (int i = 0; i < 5; i++)
		sy2[i] = sy[i] - 7.1;
	CHECK(stat_mann_whitney(sy2, 5, sx, 5, NULL) > 0.05);
	/* below the smallest p (3 against 3: 0.1) nothing is rejected */
	stat_mw_shift_ci(a3, 3, b3, 3, 0.05, &slo, &shi);
	CHECK(isinf(slo) && slo < 0 && isinf(shi) && shi > 0);
	/* large samples: the normal approximation, the interval holds the shift */
	stat_mw_shift_ci(la, 40, lb, 40, 0.05, &slo, &shi);
	CHECK(slo > 10 && slo < 20 && shi > 20 && shi < 30);
	/* tied differences: every process of a point gave one value (a command
	 * engine's exact answer), so every difference is 10; the shift 10 itself
	 * is kept (U = 12.5 = mu, p = 1), the interval is [10, 10]: it was NaN
	 * (only shifts between two differences were tried), so compare showed
	 * a SLOWER point with no interval */
	double tx[] = {5, 5, 5, 5, 5}, ty[] = {15, 15, 15, 15, 15};
	stat_mw_shift_ci(tx, 5, ty, 5, 0.05, &slo, &shi);
	NEAR(slo, 10, 0);
	NEAR(shi, 10, 0);
	/* some tied: x = 1, 2, 3, 4, 5 against y = x + 10 with 15 twice: the
	 * shifts kept still run from the 3rd smallest to the 3rd largest of the
	 * differences, 7 .. 13, the tied values among them */
	double ty2[] = {11, 12, 13, 15, 15};
	stat_mw_shift_ci(sx, 5, ty2, 5, 0.05, &slo, &shi);
	NEAR(slo, 7, 0);
	NEAR(shi, 13, 0);

	/* the README's worked example: 1000, 1040, 980 samples/s, within 1% */
	double ex[] = {1000, 1040, 980}, exw[] = {0.01, 0.01, 0.01};
	struct point_est pe;
	stat_point(ex, exw, 3, &pe);
	NEAR(pe.value, 1000, 0);
	NEAR(pe.u, 0.08206, 5e-5);
	NEAR(pe.value * exp(-pe.u), 921.2, 0.05);
	NEAR(pe.value * exp(pe.u), 1085.5, 0.05);
	CHECK_INT(pe.kind, CI_BETWEEN);
	stat_point(ex, exw, 1, &pe);
	NEAR(pe.u, 0.01, 0);
	CHECK_INT(pe.kind, CI_WITHIN);
	stat_point(ex, NULL, 1, &pe);
	CHECK_INT(pe.kind, CI_NONE);
	CHECK_STR(ci_kind_name(CI_WITHIN), "within");
	CHECK_STR(ci_kind_name(CI_BETWEEN), "between");

	/* propagation: a factor with two levels, each point measured in 3
	 * processes; the effect's interval is sqrt(u_a^2 + u_b^2) on the log
	 * scale, the improvement's the same around new / base */
	{
		size_t nl[1] = {2}, l0[1] = {0}, l1[1] = {1}, ref[1] = {0};
		struct cellset cs;
		cellset_init(&cs, 1, nl);
		double va[] = {100, 104, 98}, vb[] = {150, 140, 160}, w[] = {0.01, 0.01, 0.01};
		size_t ca = cellset_add(&cs, l0, 0, NAN, NAN, "a");
		size_t cb = cellset_add(&cs, l1, 0, NAN, NAN, "b");
		cellset_set_repeats(&cs, ca, va, w, 3);
		cellset_set_repeats(&cs, cb, vb, w, 3);
		struct point_est pa, pb;
		stat_point(va, w, 3, &pa);
		stat_point(vb, w, 3, &pb);
		NEAR(cs.value[ca], 100, 0);
		NEAR(cs.value[cb], 150, 0);
		CHECK_INT(cs.nrep[cb], 3);
		CHECK_INT(cs.kind[ca], CI_BETWEEN);
		size_t ne;
		struct effect *e = effects_compute(&cs, ref, 1, &ne);
		CHECK_INT(ne, 1);
		NEAR(e[0].geomean, 1.5, 1e-12);
		NEAR(e[0].u, sqrt(pa.u * pa.u + pb.u * pb.u), 1e-12);
		effects_free(e, ne);
		size_t by[1] = {0}, nr;
		struct improvement *im = improvements_compute(&cs, 0, 0, 1, by, 0, 1, &nr);
		CHECK_INT(nr, 1);
		NEAR(im[0].pct, 50, 1e-9);
		double uu = sqrt(pa.u * pa.u + pb.u * pb.u);
		NEAR(im[0].pct_lo, 100 * (1.5 * exp(-uu) - 1), 1e-9);
		NEAR(im[0].pct_hi, 100 * (1.5 * exp(uu) - 1), 1e-9);
		improvements_free(im, nr);
		cellset_free(&cs);
	}

	/* the improvement formula: time-like reduction, throughput-like gain */
	NEAR(improvement_pct(10, 8, 0), 20, 1e-12);
	NEAR(improvement_pct(10, 12, 0), -20, 1e-12);
	NEAR(improvement_pct(100, 150, 1), 50, 1e-12);
	NEAR(improvement_pct(100, 80, 1), -20, 1e-12);

	/* coverage on simulated processes: between-process sigma 5%, a
	 * within-process interval of +-0.5% that knows nothing of it */
	static const size_t ks[] = {2, 3, 5, 10, 20};
	for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		double mu;
		double cov = coverage(ks[i], 0.05, 0.005, 4000, &mu);
		printf("coverage K=%zu: %.4f (nominal 0.95), mean half-width %.4f (log scale)\n", ks[i], cov,
		       mu);
		CHECK(cov >= 0.94);   /* at least the nominal level, less Monte Carlo error */
		CHECK(cov <= 0.995);  /* not vacuously wide */
	}
	double mu1, cov1 = coverage(1, 0.05, 0.005, 4000, &mu1);
	printf("coverage K=1 (within-process only): %.4f\n", cov1);
	CHECK(cov1 < 0.2); /* what ci_kind=within warns about */

	/* the median's order-statistic interval (the engine's and `matrix
	 * time`'s): n = 20 sorted 1..20: ranks floor(10 - 4.38) = 5 and
	 * ceil(10 + 4.38) + 1 = 16; fewer than 2 values: no interval */
	double ord[20], lo, hi;
	for (int i = 0; i < 20; i++)
		ord[i] = 20 - i;
	NEAR(stat_median_ci(ord, 20, &lo, &hi), 10.5, 1e-12);
	NEAR(lo, 5, 0);
	NEAR(hi, 16, 0);
	double one[1] = {3};
	NEAR(stat_median_ci(one, 1, &lo, &hi), 3, 0);
	CHECK(isnan(lo) && isnan(hi));
	/* its coverage on a skewed distribution: at least about 95% */
	size_t hit = 0;
	for (int t = 0; t < 4000; t++) {
		double x[30];
		for (int i = 0; i < 30; i++)
			x[i] = exp(normal()); /* lognormal: the true median is 1 */
		stat_median_ci(x, 30, &lo, &hi);
		hit += lo <= 1 && 1 <= hi;
	}
	printf("coverage of the median's order-statistic interval, n=30: %.4f\n", hit / 4000.0);
	CHECK(hit >= (size_t)(0.94 * 4000));
	return T_DONE();
}
