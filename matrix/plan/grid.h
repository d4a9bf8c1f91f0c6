/* grid.h - expansion of a recipe's factorial cube into points, streamed in
 * plan order (given or seeded shuffle), exclusions applied, only the runs of
 * a fractional design kept (design.h), repeats counted.
 * Memory does not grow with the grid: a point is a cursor, not a list. */
#ifndef MATRIX_GRID_H
#define MATRIX_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "recipe.h"

struct point {
	size_t *level;        /* level index per factor (recipe.nfactors entries) */
	unsigned repeat;      /* 0 .. recipe.repeat-1 */
	uint64_t index;       /* 1-based position in the plan, exclusions skipped */
	char id[17];          /* stable id: 16 hex digits, see grid_point_id */
};

struct grid {
	const struct recipe *r;
	uint64_t cube;        /* product of level counts (no repeats, no exclusions) */
	uint64_t space;       /* cube * repeat */
	uint64_t cursor;      /* next position in the permuted space */
	uint64_t emitted;
	struct point pt;
	/* ordering state */
	long container;       /* factor index of `container`, or -1 */
	uint64_t block;       /* size of one permuted block */
	uint64_t key[4];      /* permutation keys derived from the seed */
	/* exclusion index (many rules): per factor and level, the rules whose
	 * most selective term is on that factor and matches that level */
	size_t **xrules;      /* [factor * maxlevels + level] -> rule numbers, or NULL */
	size_t *nxrules;
	size_t maxlevels;
};

/* Number of points in the full product, before exclusions and repeats;
 * returns -1 (and sets *overflow) when the product does not fit in 64 bits. */
int grid_cube_size(const struct recipe *r, uint64_t *size);
void grid_init(struct grid *g, const struct recipe *r);
/* The next point in plan order, or NULL at the end. The returned point is
 * owned by the grid and valid until the next call. */
const struct point *grid_next(struct grid *g);
void grid_free(struct grid *g);
/* Number of points of the design (the full cube or its fraction) after
 * exclusions, repeats included. */
uint64_t grid_count(const struct recipe *r);

/* 1 when the assignment is excluded by some rule. */
int grid_excluded(const struct recipe *r, const size_t *level);
/* Whether the point matches a filter (see grid_filter_parse); 1 = keep. */
struct grid_filter;
struct grid_filter *grid_filter_parse(const struct recipe *r, const char *spec, FILE *err);
int grid_filter_match(const struct grid_filter *f, const struct point *p);
void grid_filter_free(struct grid_filter *f);
/* 0 when some point of the plan matches f, the filter parsed from spec (or f
 * is NULL); else -1 after printing to err the first term of spec that no
 * point matches ("matrix: --only: no point of the plan matches 'id=1234'"),
 * or that no point matches every term. Walks the plan up to the first match. */
int grid_filter_check(const struct recipe *r, const char *spec, const struct grid_filter *f, FILE *err);

/* The stable id of an assignment: hash of "name=value\n" lines sorted by
 * factor name, plus "repeat=N\n" when N > 0. Independent of the order of keys
 * and factors in the file. out receives 16 hex digits and a NUL. */
void grid_point_id(const struct recipe *r, const size_t *level, unsigned repeat, char out[17]);

#endif
