/* cellset.c - the cells of a run: one per distinct assignment of levels, in
 * an open-addressing index by level vector; a cell's repeats merged into its
 * estimate by stat_point; sorted into declared order so that what is derived
 * from them does not depend on the order the rows came in. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cellset.h"
#include "stats.h"
#include "util.h"

static uint64_t level_hash(const size_t *level, size_t n)
{
	return hash64(level, n * sizeof(*level), HASH64_INIT);
}

void cellset_init(struct cellset *cs, size_t nfactors, const size_t *nlevels)
{
	memset(cs, 0, sizeof(*cs));
	cs->nfactors = nfactors;
	cs->nlevels = xcalloc(nfactors ? nfactors : 1, sizeof(size_t));
	if (nfactors)
		memcpy(cs->nlevels, nlevels, nfactors * sizeof(size_t));
}

static void cellset_index(struct cellset *cs, size_t c)
{
	size_t mask = cs->hcap - 1;
	size_t h = (size_t)level_hash(&CELL_LEVEL(cs, c, 0), cs->nfactors) & mask;
	while (cs->slot[h])
		h = (h + 1) & mask;
	cs->slot[h] = c + 1;
}

size_t cellset_add(struct cellset *cs, const size_t *level, double value, double u, double thr,
		   const char *id)
{
	if (cs->ncells == cs->cap) {
		cs->cap = cs->cap ? 2 * cs->cap : 64;
		cs->level = xrealloc(cs->level, cs->cap * (cs->nfactors ? cs->nfactors : 1) * sizeof(size_t));
		cs->value = xrealloc(cs->value, cs->cap * sizeof(double));
		cs->u = xrealloc(cs->u, cs->cap * sizeof(double));
		cs->thr = xrealloc(cs->thr, cs->cap * sizeof(double));
		cs->thr_u = xrealloc(cs->thr_u, cs->cap * sizeof(double));
		cs->nrep = xrealloc(cs->nrep, cs->cap * sizeof(size_t));
		cs->rep = xrealloc(cs->rep, cs->cap * sizeof(double *));
		cs->kind = xrealloc(cs->kind, cs->cap);
		cs->id = xrealloc(cs->id, cs->cap * sizeof(*cs->id));
	}
	size_t c = cs->ncells++;
	if (cs->nfactors)
		memcpy(&CELL_LEVEL(cs, c, 0), level, cs->nfactors * sizeof(size_t));
	cs->value[c] = value;
	cs->u[c] = u;
	cs->thr[c] = thr;
	cs->thr_u[c] = NAN;
	cs->nrep[c] = 1;
	cs->rep[c] = NULL;
	cs->kind[c] = isnan(u) ? CI_NONE : CI_WITHIN;
	snprintf(cs->id[c], sizeof(cs->id[c]), "%s", id ? id : "");
	if (2 * cs->ncells > cs->hcap) {
		free(cs->slot);
		cs->hcap = cs->hcap ? 2 * cs->hcap : 256;
		cs->slot = xcalloc(cs->hcap, sizeof(size_t));
		for (size_t i = 0; i < cs->ncells; i++)
			cellset_index(cs, i);
	} else {
		cellset_index(cs, c);
	}
	return c;
}

void cellset_set_repeats(struct cellset *cs, size_t c, const double *v, const double *w, size_t k)
{
	struct point_est pe;
	stat_point(v, w, k, &pe);
	free(cs->rep[c]);
	cs->rep[c] = xmalloc((k ? k : 1) * sizeof(double));
	if (k)
		memcpy(cs->rep[c], v, k * sizeof(double));
	cs->nrep[c] = k;
	cs->value[c] = pe.value;
	cs->u[c] = pe.u;
	cs->kind[c] = (unsigned char)pe.kind;
}

void cellset_set_thr(struct cellset *cs, size_t c, const double *t, const double *w, size_t k)
{
	double *tv = xmalloc((k ? k : 1) * sizeof(double)), *tw = xmalloc((k ? k : 1) * sizeof(double));
	size_t n = 0;
	for (size_t i = 0; i < k; i++)
		if (t[i] > 0 && isfinite(t[i])) {
			tv[n] = t[i];
			tw[n++] = w ? w[i] : NAN;
		}
	cs->thr[c] = cs->thr_u[c] = NAN;
	if (n) {
		struct point_est pe;
		stat_point(tv, tw, n, &pe);
		cs->thr[c] = pe.value;
		cs->thr_u[c] = pe.u;
	}
	free(tv);
	free(tw);
}

long cellset_find(const struct cellset *cs, const size_t *level)
{
	if (!cs->hcap)
		return -1;
	size_t mask = cs->hcap - 1;
	size_t h = (size_t)level_hash(level, cs->nfactors) & mask;
	for (; cs->slot[h]; h = (h + 1) & mask) {
		size_t c = cs->slot[h] - 1;
		if (memcmp(&CELL_LEVEL(cs, c, 0), level, cs->nfactors * sizeof(size_t)) == 0)
			return (long)c;
	}
	return -1;
}

void cellset_free(struct cellset *cs)
{
	free(cs->nlevels);
	free(cs->level);
	free(cs->value);
	free(cs->u);
	free(cs->thr);
	free(cs->thr_u);
	free(cs->nrep);
	for (size_t c = 0; cs->rep && c < cs->ncells; c++)
		free(cs->rep[c]);
	free(cs->rep);
	free(cs->kind);
	free(cs->id);
	free(cs->slot);
	memset(cs, 0, sizeof(*cs));
}

static const struct cellset *sort_cs;
static int cmp_cell(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	for (size_t f = 0; f < sort_cs->nfactors; f++) {
		size_t lx = CELL_LEVEL(sort_cs, x, f), ly = CELL_LEVEL(sort_cs, y, f);
		if (lx != ly)
			return lx < ly ? -1 : 1;
	}
	return 0;
}

void cellset_sort(struct cellset *cs)
{
	size_t n = cs->ncells, nf = cs->nfactors ? cs->nfactors : 1;
	if (n < 2)
		return;
	size_t *perm = xmalloc(n * sizeof(size_t));
	for (size_t i = 0; i < n; i++)
		perm[i] = i;
	sort_cs = cs;
	qsort(perm, n, sizeof(size_t), cmp_cell);
	size_t *level = xmalloc(n * nf * sizeof(size_t));
	double *value = xmalloc(n * sizeof(double)), *u = xmalloc(n * sizeof(double));
	double *thr = xmalloc(n * sizeof(double)), *thr_u = xmalloc(n * sizeof(double));
	size_t *nrep = xmalloc(n * sizeof(size_t));
	double **rep = xmalloc(n * sizeof(double *));
	unsigned char *kind = xmalloc(n);
	char (*id)[17] = xmalloc(n * sizeof(*id));
	for (size_t i = 0; i < n; i++) {
		size_t c = perm[i];
		memcpy(&level[i * nf], &cs->level[c * nf], nf * sizeof(size_t));
		value[i] = cs->value[c];
		u[i] = cs->u[c];
		thr[i] = cs->thr[c];
		thr_u[i] = cs->thr_u[c];
		nrep[i] = cs->nrep[c];
		rep[i] = cs->rep[c];
		kind[i] = cs->kind[c];
		memcpy(id[i], cs->id[c], sizeof(id[i]));
	}
	free(cs->level);
	free(cs->value);
	free(cs->u);
	free(cs->thr);
	free(cs->thr_u);
	free(cs->nrep);
	free(cs->rep);
	free(cs->kind);
	free(cs->id);
	cs->level = level;
	cs->value = value;
	cs->u = u;
	cs->thr = thr;
	cs->thr_u = thr_u;
	cs->nrep = nrep;
	cs->rep = rep;
	cs->kind = kind;
	cs->id = id;
	cs->cap = n;
	memset(cs->slot, 0, cs->hcap * sizeof(size_t));
	for (size_t i = 0; i < n; i++)
		cellset_index(cs, i);
	free(perm);
}

int cellset_pair_within(const struct cellset *cs, size_t a, size_t b)
{
	return cs->kind[a] == CI_WITHIN || cs->kind[b] == CI_WITHIN;
}
