/* stats.h - the numeric statistics of a report (stats.c): a point's estimate
 * and interval from its fresh processes, the tests `matrix compare` decides
 * with, the one improvement formula, medians and geometric means. The lowest
 * level of report/ (matrix/README.md, "Dependencies"): plain arrays in, numbers
 * out; it includes no other report/ header. */
#ifndef MATRIX_REPORT_STATS_H
#define MATRIX_REPORT_STATS_H

#include <stddef.h>

/* What a point's interval covers: nothing known, the noise inside one process
 * only (K = 1), or the variation between K >= 2 fresh processes. */
enum ci_kind { CI_NONE, CI_WITHIN, CI_BETWEEN };
const char *ci_kind_name(enum ci_kind k); /* "", "within", "between" */

/* Below this many processes the within-process half-width is added (in
 * quadrature) to the between-process one. */
#define STAT_WIDEN_BELOW 10

struct point_est {
	double value;         /* median of the K process values */
	double u;             /* half-width of the 95% CI of log(value); NaN unknown */
	enum ci_kind kind;
};
/* The estimate of a point from its K process values v (> 0) and their
 * within-process half-widths w (log scale, NaN unknown; w may be NULL):
 * median, and a Student t interval on the log values widened by the median
 * w while K < STAT_WIDEN_BELOW and recentred on the median; K = 1: w[0]. */
void stat_point(const double *v, const double *w, size_t k, struct point_est *pe);
/* The 0.975 quantile of Student's t with df degrees of freedom (NaN for 0). */
double stat_t975(size_t df);
/* Two-sided p of the Mann-Whitney U test of a against b (exact without ties
 * up to 30 values a side, else normal with continuity correction); *u_out,
 * when not NULL, receives U of a (pairs a_i > b_j, ties one half). */
double stat_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double *u_out);
/* The interval [*lo, *hi] of shifts d (on the scale of x and y: logs for
 * ratios) that the two-sided Mann-Whitney test of y - d against x does not
 * reject at level alpha, the test inverted (Hodges and Lehmann): its ends are
 * differences y_j - x_i; -/+INFINITY where alpha is below the smallest p
 * (stat_mw_min_p); NaN for an empty side. A shift d outside the interval is
 * one the test rejects: d < *lo means y exceeds x + d. */
void stat_mw_shift_ci(const double *x, size_t nx, const double *y, size_t ny, double alpha, double *lo,
		      double *hi);
/* The smallest two-sided p the exact test can give: 2 / C(na + nb, na). */
double stat_mw_min_p(size_t na, size_t nb);

/* The improvement of new over base, in percent, the one formula of every
 * table: time-like metrics (lower is better) 100 * (base - new) / base, the
 * reduction; throughput-like metrics (higher is better) 100 * (new - base) /
 * base, the gain. IMPROVEMENT_FORMULA says the same in words. */
double improvement_pct(double base, double new, int higher_better);
#define IMPROVEMENT_FORMULA \
	"improvement % = 100 * (base - new) / base on a time-like metric (lower is better: the " \
	"reduction), 100 * (new - base) / base on a throughput-like metric (higher is better: the gain)"

/* Median of n values (the array is sorted in place); NaN when n == 0. */
double stat_median(double *v, size_t n);
/* The same with the 95% interval of the median in *lo, *hi: the order
 * statistics whose ranks bound it with 95% binomial coverage (normal
 * approximation), the native engine's interval of its median step; NaN for
 * fewer than 2 values. */
double stat_median_ci(double *v, size_t n, double *lo, double *hi);
/* Geometric mean of n positive values; NaN when n == 0. */
double stat_geomean(const double *v, size_t n);
/* Half-width of the 95% CI of log(value) from a CI [lo, hi]; NaN when unknown. */
double stat_log_halfwidth(double lo, double hi);
/* The same for an interval [lo, hi] around the value v that need not be
 * symmetric (the order statistics around a median): the wider of its two
 * sides on the log scale, so that v * exp(+-u) holds [lo, hi] whole; the
 * half of the width when v is unknown. */
double stat_log_halfwidth_at(double v, double lo, double hi);
/* Deterministic jitter in [-width/2, width/2] from the hash of a point id. */
double stat_jitter(const char *id, double width);

#endif
