/* stats.c - the uncertainty of a point measured in K fresh processes, and the
 * tests `matrix compare` decides with. Pure functions over plain arrays.
 *
 * A point's value (process-level): each process reports its median step and a
 * 95% CI of that median (within-process). Between fresh processes the value
 * moves by more than that CI says (placement, clocks, allocator, other load),
 * so a point's interval is built from the K process values themselves:
 *
 *   x_i = log(v_i), i = 1..K          estimate: v = median(v_i)
 *   h   = t(0.975, K-1) * sd(x) / sqrt(K)        (Student t on log values)
 *   u   = sqrt(h^2 + w^2) + |log(v) - mean(x)|   (95% half-width of log(v))
 *
 * where w is the median within-process half-width, added while K < 10 (with
 * few processes sd(x) is itself uncertain and may come out near zero), and the
 * last term recentres the interval of the mean of logs on the median. With
 * K = 1 the interval is the process's own CI (ci_kind "within"), which does
 * not contain the between-process noise. See README, "Uncertainty". */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "util.h"

/* Two-sided 95% quantiles of Student's t, df = 1..30. */
static const double t975[31] = {
	NAN,    12.7062, 4.30265, 3.18245, 2.77645, 2.57058, 2.44691, 2.36462, 2.306,  2.26216,
	2.22814, 2.20099, 2.17881, 2.16037, 2.14479, 2.13145, 2.11991, 2.10982, 2.10092, 2.09302,
	2.08596, 2.07961, 2.07387, 2.06866, 2.0639,  2.05954, 2.05553, 2.05183, 2.04841, 2.04523,
	2.04227,
};

double stat_t975(size_t df)
{
	if (df == 0)
		return NAN;
	if (df <= 30)
		return t975[df];
	/* Cornish-Fisher expansion around z = 1.959964 (error < 1e-4 for df > 30) */
	double z = 1.959963985, d = (double)df;
	double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;
	return z + (z3 + z) / (4 * d) + (5 * z5 + 16 * z3 + 3 * z) / (96 * d * d) +
	       (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * d * d * d);
}

const char *ci_kind_name(enum ci_kind k)
{
	switch (k) {
	case CI_WITHIN:
		return "within";
	case CI_BETWEEN:
		return "between";
	default:
		return "";
	}
}

void stat_point(const double *v, const double *w, size_t k, struct point_est *pe)
{
	pe->value = pe->u = NAN;
	pe->kind = CI_NONE;
	if (k == 0)
		return;
	if (k == 1) {
		pe->value = v[0];
		pe->u = w ? w[0] : NAN;
		pe->kind = isnan(pe->u) ? CI_NONE : CI_WITHIN;
		return;
	}
	double *tmp = xmalloc(k * sizeof(double));
	double mean = 0, ss = 0;
	for (size_t i = 0; i < k; i++)
		mean += log(v[i]);
	mean /= (double)k;
	for (size_t i = 0; i < k; i++)
		ss += (log(v[i]) - mean) * (log(v[i]) - mean);
	memcpy(tmp, v, k * sizeof(double));
	pe->value = stat_median(tmp, k);
	double h = stat_t975(k - 1) * sqrt(ss / (double)(k - 1)) / sqrt((double)k);
	double wmed = NAN;
	if (w) {
		size_t n = 0;
		for (size_t i = 0; i < k; i++)
			if (!isnan(w[i]))
				tmp[n++] = w[i];
		wmed = n ? stat_median(tmp, n) : NAN;
	}
	double u2 = h * h;
	if (k < STAT_WIDEN_BELOW && !isnan(wmed))
		u2 += wmed * wmed;
	pe->u = sqrt(u2) + fabs(log(pe->value) - mean);
	pe->kind = CI_BETWEEN;
	free(tmp);
}

/* ---- Mann-Whitney U -------------------------------------------------------------- */

/* Number of arrangements of m values of one sample and n of the other with
 * U = u, for every u in 0..m*n, by the recurrence
 * f(m, n, u) = f(m-1, n, u-n) + f(m, n-1, u). Returns a calloc'd array. */
static double *u_counts(size_t m, size_t n)
{
	size_t umax = m * n;
	/* f[j][u] for the current i, j = 0..n */
	double *prev = xcalloc((n + 1) * (umax + 1), sizeof(double));
	double *cur = xcalloc((n + 1) * (umax + 1), sizeof(double));
	for (size_t j = 0; j <= n; j++)
		prev[j * (umax + 1)] = 1; /* m = 0: one arrangement, U = 0 */
	for (size_t i = 1; i <= m; i++) {
		memset(cur, 0, (n + 1) * (umax + 1) * sizeof(double));
		cur[0] = 1; /* n = 0 */
		for (size_t j = 1; j <= n; j++)
			for (size_t u = 0; u <= i * j; u++) {
				double a = u >= j ? prev[j * (umax + 1) + u - j] : 0;
				double b = cur[(j - 1) * (umax + 1) + u];
				cur[j * (umax + 1) + u] = a + b;
			}
		double *t = prev;
		prev = cur;
		cur = t;
	}
	double *out = xmalloc((umax + 1) * sizeof(double));
	memcpy(out, prev + n * (umax + 1), (umax + 1) * sizeof(double));
	free(prev);
	free(cur);
	return out;
}

double stat_mw_min_p(size_t na, size_t nb)
{
	if (na == 0 || nb == 0)
		return 1;
	/* 2 / C(na + nb, na) */
	double c = 1;
	for (size_t i = 1; i <= na; i++)
		c = c * (double)(nb + i) / (double)i;
	double p = 2 / c;
	return p > 1 ? 1 : p;
}

/* Two-sided p of U = u for na against nb values: exact from the counts f
 * (u_counts(na, nb)) when f is not NULL, else normal with continuity
 * correction (ties: no correction of the variance, which makes the test
 * slightly conservative). */
static int cmp_double(const void *a, const void *b);

static double mw_p(const double *f, size_t na, size_t nb, double u)
{
	double mn = (double)na * (double)nb, mu = mn / 2;
	double d = fabs(u - mu);
	if (f) {
		/* exact: P(|U - mu| >= d) under the null, from the counts */
		double tot = 0, tail = 0;
		for (size_t k = 0; k <= na * nb; k++) {
			tot += f[k];
			if (fabs((double)k - mu) >= d - 1e-9)
				tail += f[k];
		}
		return tail / tot;
	}
	double sd = sqrt(mn * (double)(na + nb + 1) / 12);
	double z = (d - 0.5) / sd;
	if (z < 0)
		z = 0;
	double p = erfc(z / sqrt(2));
	return p > 1 ? 1 : p;
}

double stat_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *u_out)
{
	if (na == 0 || nb == 0) {
		if (u_out)
			*u_out = NAN;
		return NAN;
	}
	/* U of a: pairs (a_i, b_j) with a_i > b_j, ties counted one half */
	double u = 0;
	int ties = 0;
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++) {
			if (a[i] > b[j])
				u += 1;
			else if (a[i] == b[j]) {
				u += 0.5;
				ties = 1;
			}
		}
	if (u_out)
		*u_out = u;
	double *f = na <= 30 && nb <= 30 && !ties ? u_counts(na, nb) : NULL;
	double p = mw_p(f, na, nb, u);
	free(f);
	return p;
}

void stat_mw_shift_ci(const double *x, size_t nx, const double *y, size_t ny, double alpha, double *lo,
		      double *hi)
{
	*lo = *hi = NAN;
	if (nx == 0 || ny == 0)
		return;
	/* for d between two neighbouring differences D[k-1] < d < D[k] (sorted),
	 * U of y - d against x counts the differences above d: n - k; for d
	 * equal to t differences D[k] = ... = D[k+t-1], those count one half:
	 * n - k - t/2 (every difference alike, as when each side's processes
	 * gave one value, leaves no d between two, and the shift itself is
	 * kept). The accepted d form one interval, as p falls with |U - mu|. */
	size_t n = nx * ny;
	double *dv = xmalloc(n * sizeof(double));
	for (size_t i = 0; i < nx; i++)
		for (size_t j = 0; j < ny; j++)
			dv[i * ny + j] = y[j] - x[i];
	qsort(dv, n, sizeof(double), cmp_double);
	double *f = nx <= 30 && ny <= 30 ? u_counts(ny, nx) : NULL;
	for (size_t k = 0;; ) {
		/* the d between D[k-1] and D[k] (below D[0], above D[n-1]) */
		if (mw_p(f, ny, nx, (double)(n - k)) > alpha) {
			if (isnan(*lo))
				*lo = k ? dv[k - 1] : -INFINITY;
			*hi = k < n ? dv[k] : INFINITY;
		}
		if (k == n)
			break;
		/* d = D[k], with its t equal differences */
		size_t t = 1;
		while (k + t < n && !(dv[k] < dv[k + t]))
			t++;
		if (mw_p(f, ny, nx, (double)(n - k) - (double)t / 2) > alpha) {
			if (isnan(*lo))
				*lo = dv[k];
			*hi = dv[k];
		}
		k += t;
	}
	free(f);
	free(dv);
}

/* ---- the improvement formula ---------------------------------------------------- */

double improvement_pct(double base, double new, int higher_better)
{
	return higher_better ? 100.0 * (new - base) / base : 100.0 * (base - new) / base;
}

/* ---- medians, means, widths ---------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double stat_median(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double stat_median_ci(double *v, size_t n, double *lo, double *hi)
{
	double med = stat_median(v, n);
	*lo = *hi = NAN;
	if (n < 2)
		return med;
	/* ranks (1-based) n/2 -+ 1.96 sqrt(n)/2: the normal approximation of
	 * the binomial(n, 1/2) quantiles, clipped to the sample (the engine's
	 * measure_median_ci, engine/measure.c) */
	double h = 1.96 * sqrt((double)n) / 2.0;
	long l = (long)floor((double)n / 2.0 - h), u = (long)ceil((double)n / 2.0 + h) + 1;
	if (l < 1)
		l = 1;
	if (u > (long)n)
		u = (long)n;
	*lo = v[l - 1];
	*hi = v[u - 1];
	return med;
}

double stat_geomean(const double *v, size_t n)
{
	if (n == 0)
		return NAN;
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += log(v[i]);
	return exp(s / (double)n);
}

double stat_log_halfwidth(double lo, double hi)
{
	if (!(lo > 0) || !(hi >= lo) || !isfinite(hi))
		return NAN;
	return 0.5 * (log(hi) - log(lo));
}

double stat_log_halfwidth_at(double v, double lo, double hi)
{
	if (!(v > 0) || !isfinite(v) || isnan(stat_log_halfwidth(lo, hi)))
		return stat_log_halfwidth(lo, hi);
	double below = fabs(log(v) - log(lo)), above = fabs(log(hi) - log(v));
	return below > above ? below : above;
}

double stat_jitter(const char *id, double width)
{
	uint64_t h = hash64(id, strlen(id), HASH64_INIT);
	double x = (double)(h >> 11) / (double)(1ULL << 53); /* [0, 1) */
	return (x - 0.5) * width;
}
