/* cellset.h - the cells of a run (cellset.c): one per distinct assignment of
 * levels, the repeats of a point merged into its estimate by stat_point. The
 * data model everything above it computes on (effects.h) or draws from;
 * above stats.h only. */
#ifndef MATRIX_REPORT_CELLSET_H
#define MATRIX_REPORT_CELLSET_H

#include <stddef.h>

struct cellset {
	size_t nfactors;
	size_t *nlevels;      /* nfactors entries */
	size_t ncells;
	size_t cap;
	size_t *level;        /* ncells * nfactors level indexes */
	double *value;        /* metric (stored units), > 0 and finite */
	double *u;            /* half-width of the 95% CI of log(value); NaN unknown */
	double *thr;          /* throughput (samples/s) for scaling; NaN when absent */
	double *thr_u;        /* half-width of the 95% CI of log(thr); NaN unknown */
	size_t *nrep;         /* repeats (fresh processes) merged into the cell */
	double **rep;         /* nrep process-level values each (stored units), or NULL */
	unsigned char *kind;  /* enum ci_kind of u */
	char (*id)[17];       /* id of the cell's first row ("" when none) */
	size_t hcap;          /* open-addressing index: 0 empty, else cell + 1 */
	size_t *slot;
};

void cellset_init(struct cellset *cs, size_t nfactors, const size_t *nlevels);
/* Add a cell (levels copied; thr_u NaN); returns its index. Existing assignments are not
 * merged here: call cellset_find first. */
size_t cellset_add(struct cellset *cs, const size_t *level, double value, double u, double thr,
		   const char *id);
/* Give cell c its process-level values (copied) and, from them and their
 * within-process half-widths w (NaN unknown; w may be NULL), its value, u
 * and kind by stat_point. */
void cellset_set_repeats(struct cellset *cs, size_t c, const double *v, const double *w, size_t k);
/* Give cell c its throughput from the k process-level throughputs t (those
 * not > 0 left out) and their log half-widths w (NaN unknown; may be NULL),
 * by stat_point as its value: thr and thr_u; NaN both when none is > 0. */
void cellset_set_thr(struct cellset *cs, size_t c, const double *t, const double *w, size_t k);
/* Index of the cell with exactly these levels, or -1. */
long cellset_find(const struct cellset *cs, const size_t *level);
/* Put the cells in the order of their level vectors (declared order), so
 * that what is derived from them does not depend on the order rows came in. */
void cellset_sort(struct cellset *cs);
void cellset_free(struct cellset *cs);
/* Whether a pair of cells a, b has a point whose interval is its one
 * process's own (ci_kind within): an interval from them leaves out the
 * variation between processes. */
int cellset_pair_within(const struct cellset *cs, size_t a, size_t b);
#define CELL_LEVEL(cs, c, f) ((cs)->level[(size_t)(c) * (cs)->nfactors + (f)])

#endif
