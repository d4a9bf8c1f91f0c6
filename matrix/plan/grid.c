/* grid.c - the factorial cube as a stream of points.
 *
 * A position in [0, space) decodes to (container block, repeat, rest) for
 * shuffled plans and to (repeat, cube index) for given ones; the cube index
 * is a mixed-radix number over the factors in declared order, the first
 * factor outermost. Shuffling permutes each block with a keyed Feistel
 * network (cycle-walking into [0, n)), so the order is a seeded bijection
 * that needs no memory. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "design.h"
#include "grid.h"
#include "util.h"

int grid_cube_size(const struct recipe *r, uint64_t *size)
{
	uint64_t n = 1;
	for (size_t i = 0; i < r->nfactors; i++) {
		uint64_t l = r->factors[i].nlevels;
		if (l && n > UINT64_MAX / l)
			return -1;
		n *= l;
	}
	*size = n;
	return 0;
}

int grid_excluded(const struct recipe *r, const size_t *level)
{
	for (size_t e = 0; e < r->nexcludes; e++) {
		const struct exclude_rule *rule = &r->excludes[e];
		size_t t;
		for (t = 0; t < rule->nterms; t++) {
			const struct exclude_term *term = &rule->terms[t];
			if (!term->match[level[term->factor]])
				break;
		}
		if (rule->nterms && t == rule->nterms)
			return 1;
	}
	return 0;
}

/* --- a keyed permutation of [0, n) ------------------------------------------ */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* Feistel network over 2*half bits; a bijection of [0, 2^(2*half)). */
static uint64_t feistel(uint64_t x, unsigned half, uint64_t key)
{
	uint64_t mask = (half >= 32) ? 0xffffffffULL : ((1ULL << half) - 1);
	uint64_t l = (x >> half) & mask, rr = x & mask;
	for (unsigned round = 0; round < 6; round++) {
		uint64_t f = mix(rr ^ key ^ ((uint64_t)round * 0x9e3779b97f4a7c15ULL)) & mask;
		uint64_t t = l ^ f;
		l = rr;
		rr = t;
	}
	return (l << half) | rr;
}

/* Image of x under a keyed bijection of [0, n): cycle-walk the Feistel
 * network until it lands inside the range. */
static uint64_t permute(uint64_t x, uint64_t n, uint64_t key)
{
	if (n <= 2)
		return n == 2 ? (x ^ (key & 1)) : x;
	unsigned bits = 0;
	while (bits < 64 && (1ULL << bits) < n)
		bits++;
	unsigned half = (bits + 1) / 2;
	do
		x = feistel(x, half, key);
	while (x >= n);
	return x;
}

/* --- exclusion index ---------------------------------------------------------- */

#define XINDEX_MIN_RULES 16

static int rule_matches_levels(const struct exclude_rule *rule, const size_t *level)
{
	for (size_t t = 0; t < rule->nterms; t++)
		if (!rule->terms[t].match[level[rule->terms[t].factor]])
			return 0;
	return rule->nterms > 0;
}

/* Index each rule under the levels of its most selective term (the one that
 * matches the fewest levels): a point a rule excludes has one of those
 * levels, so a point needs checking against the rules under its own levels
 * only. Worth it from XINDEX_MIN_RULES rules. */
static void xindex_build(struct grid *g)
{
	const struct recipe *r = g->r;
	if (r->nexcludes < XINDEX_MIN_RULES || !r->nfactors)
		return;
	for (size_t f = 0; f < r->nfactors; f++)
		if (r->factors[f].nlevels > g->maxlevels)
			g->maxlevels = r->factors[f].nlevels;
	size_t slots = r->nfactors * g->maxlevels;
	g->xrules = xcalloc(slots, sizeof(*g->xrules));
	g->nxrules = xcalloc(slots, sizeof(*g->nxrules));
	for (size_t e = 0; e < r->nexcludes; e++) {
		const struct exclude_rule *rule = &r->excludes[e];
		size_t best = 0, bestn = SIZE_MAX;
		for (size_t t = 0; t < rule->nterms; t++) {
			const struct exclude_term *term = &rule->terms[t];
			size_t n = 0;
			for (size_t l = 0; l < r->factors[term->factor].nlevels; l++)
				n += term->match[l] != 0;
			if (n < bestn) {
				bestn = n;
				best = t;
			}
		}
		if (!rule->nterms)
			continue;
		const struct exclude_term *term = &rule->terms[best];
		for (size_t l = 0; l < r->factors[term->factor].nlevels; l++) {
			if (!term->match[l])
				continue;
			size_t k = term->factor * g->maxlevels + l;
			g->xrules[k] = xrealloc(g->xrules[k], (g->nxrules[k] + 1) * sizeof(size_t));
			g->xrules[k][g->nxrules[k]++] = e;
		}
	}
}

static int xindex_excluded(const struct grid *g, const size_t *level)
{
	const struct recipe *r = g->r;
	if (!g->xrules)
		return grid_excluded(r, level);
	for (size_t f = 0; f < r->nfactors; f++) {
		size_t k = f * g->maxlevels + level[f];
		for (size_t i = 0; i < g->nxrules[k]; i++)
			if (rule_matches_levels(&r->excludes[g->xrules[k][i]], level))
				return 1;
	}
	return 0;
}

static void xindex_free(struct grid *g)
{
	if (!g->xrules)
		return;
	for (size_t k = 0; k < g->r->nfactors * g->maxlevels; k++)
		free(g->xrules[k]);
	free(g->xrules);
	free(g->nxrules);
	g->xrules = NULL;
	g->nxrules = NULL;
}

/* --- iteration --------------------------------------------------------------- */

void grid_init(struct grid *g, const struct recipe *r)
{
	memset(g, 0, sizeof(*g));
	g->r = r;
	if (grid_cube_size(r, &g->cube) < 0)
		BUG("grid of recipe '%s' overflows 64 bits (checked at load)", r->name);
	g->space = g->cube * r->repeat;
	g->container = -1;
	if (r->order == ORDER_SHUFFLED) {
		g->container = recipe_factor_index(r, "container");
		g->block = g->container >= 0 ? g->cube / r->factors[g->container].nlevels : g->cube;
	}
	for (int i = 0; i < 4; i++)
		g->key[i] = mix(r->seed * 4 + (uint64_t)i + 0x5eed);
	g->pt.level = xcalloc(r->nfactors ? r->nfactors : 1, sizeof(size_t));
	xindex_build(g);
}

/* Decode idx over the factors (skipping factor `skip`), first factor outermost. */
static void decode(const struct recipe *r, uint64_t idx, long skip, size_t *level)
{
	for (size_t i = r->nfactors; i-- > 0;) {
		if ((long)i == skip)
			continue;
		uint64_t n = r->factors[i].nlevels;
		level[i] = (size_t)(idx % n);
		idx /= n;
	}
}

/* Fill g->pt.level / repeat for position pos of the plan. */
static void position(struct grid *g, uint64_t pos)
{
	const struct recipe *r = g->r;
	if (r->order == ORDER_GIVEN) {
		g->pt.repeat = (unsigned)(pos / g->cube);
		decode(r, pos % g->cube, -1, g->pt.level);
		return;
	}
	/* shuffled: [container level][repeat][permuted rest] */
	uint64_t per_container = g->block * r->repeat;
	uint64_t c = pos / per_container, rest = pos % per_container;
	unsigned rep = (unsigned)(rest / g->block);
	uint64_t key = mix(g->key[0] ^ mix(c * 1000003ULL + rep));
	uint64_t inner = permute(rest % g->block, g->block, key);
	g->pt.repeat = rep;
	decode(r, inner, g->container, g->pt.level);
	if (g->container >= 0)
		g->pt.level[g->container] = (size_t)c;
}

const struct point *grid_next(struct grid *g)
{
	while (g->cursor < g->space) {
		position(g, g->cursor++);
		if (!design_member(&g->r->design, g->pt.level) || xindex_excluded(g, g->pt.level))
			continue;
		g->pt.index = ++g->emitted;
		grid_point_id(g->r, g->pt.level, g->pt.repeat, g->pt.id);
		return &g->pt;
	}
	return NULL;
}

void grid_free(struct grid *g)
{
	free(g->pt.level);
	g->pt.level = NULL;
	xindex_free(g);
}

uint64_t grid_count(const struct recipe *r)
{
	/* Exclusions do not depend on order or repeat: count the cube once,
	 * without walking it where recipe_surviving can, else with an odometer,
	 * and multiply. A fraction keeps 1 in 2^p of every combination of the
	 * other factors, which exclusions never name (recipe.c refuses that). */
	uint64_t cube;
	if (grid_cube_size(r, &cube) < 0)
		BUG("grid overflows 64 bits");
	if (r->nexcludes == 0)
		return (cube >> (r->design.fractional ? r->design.p : 0)) * r->repeat;
	uint64_t alive;
	if (recipe_surviving(r, (uint64_t)1 << 28, &alive) == 0)
		return alive * r->repeat;
	size_t *level = xcalloc(r->nfactors ? r->nfactors : 1, sizeof(size_t));
	uint64_t n = 0;
	for (uint64_t i = 0; i < cube; i++) {
		n += design_member(&r->design, level) && !grid_excluded(r, level);
		for (size_t f = r->nfactors; f-- > 0;) {
			if (++level[f] < r->factors[f].nlevels)
				break;
			level[f] = 0;
		}
	}
	free(level);
	return n * r->repeat;
}

/* --- ids ------------------------------------------------------------------------ */

static const struct recipe *sort_recipe;
static int by_name(const void *a, const void *b)
{
	return strcmp(sort_recipe->factors[*(const size_t *)a].name,
		      sort_recipe->factors[*(const size_t *)b].name);
}

void grid_point_id(const struct recipe *r, const size_t *level, unsigned repeat, char out[17])
{
	size_t order[64], *ord = r->nfactors <= 64 ? order : xmalloc(r->nfactors * sizeof(size_t));
	for (size_t i = 0; i < r->nfactors; i++)
		ord[i] = i;
	sort_recipe = r;
	qsort(ord, r->nfactors, sizeof(size_t), by_name);
	uint64_t h = HASH64_INIT;
	for (size_t k = 0; k < r->nfactors; k++) {
		const struct factor *f = &r->factors[ord[k]];
		const char *v = f->levels[level[ord[k]]];
		/* chain the unmixed FNV state through the pieces */
		for (const char *p = f->name; *p; p++)
			h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
		h = (h ^ '=') * 0x100000001b3ULL;
		for (const char *p = v; *p; p++)
			h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
		h = (h ^ '\n') * 0x100000001b3ULL;
	}
	if (repeat > 0) {
		char rb[32];
		int n = snprintf(rb, sizeof(rb), "repeat=%u\n", repeat);
		for (int i = 0; i < n; i++)
			h = (h ^ (unsigned char)rb[i]) * 0x100000001b3ULL;
	}
	h = hash64("", 0, h); /* avalanche */
	snprintf(out, 17, "%016llx", (unsigned long long)h);
	if (ord != order)
		free(ord);
}

/* --- filters: --only 'model=resnet50|resnet18,batch=64' or 'id=...' ------------- */

struct grid_filter {
	size_t nfactors;
	unsigned char **allow; /* per factor: NULL (any) or nlevels flags */
	char **ids;            /* the ids of the id=ID|ID... terms, one after the other */
	size_t nids;
	size_t *id_term;       /* nids: the term each id came from, 0, 1, ... */
	size_t nid_terms;
};

/* " (did you mean 'X'?)" with X the nearest of the ncands candidates to
 * word, else " (WHAT: a, b, ...)" listing the first nlist of them. */
static void near_or_list(struct strbuf *sb, const char *word, const char *const *cands, size_t ncands, size_t nlist,
			 const char *what)
{
	const char *near = vocab_closest(word, cands, ncands);
	if (near) {
		sb_printf(sb, " (did you mean '%s'?)", near);
		return;
	}
	sb_printf(sb, " (%s:", what);
	for (size_t i = 0; i < nlist; i++)
		sb_printf(sb, "%s %s", i ? "," : "", cands[i]);
	sb_puts(sb, ")");
}

/* --only's error for a term naming no factor of r: the nearest name (the
 * factors and 'id'), else the factors. */
static void filter_no_factor(const struct recipe *r, const char *name, FILE *err)
{
	const char **cands = xcalloc(r->nfactors + 1, sizeof(char *));
	for (size_t i = 0; i < r->nfactors; i++)
		cands[i] = r->factors[i].name;
	cands[r->nfactors] = "id";
	struct strbuf sb = {0};
	near_or_list(&sb, name, cands, r->nfactors + 1, r->nfactors, "factors");
	error_to(err, "--only: the recipe has no factor '%s'%s", name, sb.buf);
	sb_free(&sb);
	free(cands);
}

/* --only's error for a value v that is no level of factor fi (written name in
 * the filter): the nearest level, else the levels, and how to keep a level a
 * filter cannot write. */
static void filter_no_level(const struct recipe *r, size_t fi, const char *name, const char *v, FILE *err)
{
	const struct factor *fa = &r->factors[fi];
	struct strbuf sb = {0};
	near_or_list(&sb, v, (const char *const *)fa->levels, fa->nlevels, fa->nlevels, "levels");
	/* a level with ',' or '|' in it cannot be written in a filter */
	for (size_t l = 0; l < fa->nlevels; l++)
		if (strpbrk(fa->levels[l], ",|")) {
			sb_printf(&sb, "; a level with ',' or '|' in it ('%s') is kept by its "
				       "points' id=ID|ID (matrix expand prints them)", fa->levels[l]);
			break;
		}
	error_to(err, "--only: factor '%s' has no level '%s'%s", name, v, sb.buf);
	sb_free(&sb);
}

struct grid_filter *grid_filter_parse(const struct recipe *r, const char *spec, FILE *err)
{
	struct grid_filter *f = xcalloc(1, sizeof(*f));
	f->nfactors = r->nfactors;
	f->allow = xcalloc(r->nfactors ? r->nfactors : 1, sizeof(*f->allow));
	char *copy = xstrdup(spec), *save = NULL;
	for (char *term = strtok_r(copy, ",", &save); term; term = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(term, '=');
		if (!eq || eq == term || !eq[1]) {
			error_to(err, "--only: '%s' is not name=value (e.g. 'model=resnet50,batch=64')", term);
			goto fail;
		}
		*eq = '\0';
		const char *name = str_trim(term), *values = eq + 1; /* 'model = resnet18, batch=1' */
		if (strcmp(name, "id") == 0) {
			/* id=A|B as NAME=L1|L2: either id (it kept none: 'A|B' was one id) */
			char *icopy = xstrdup(values), *isave = NULL;
			for (char *v = strtok_r(icopy, "|", &isave); v; v = strtok_r(NULL, "|", &isave)) {
				f->ids = xrealloc(f->ids, (f->nids + 1) * sizeof(char *));
				f->id_term = xrealloc(f->id_term, (f->nids + 1) * sizeof(size_t));
				f->id_term[f->nids] = f->nid_terms;
				f->ids[f->nids++] = xstrdup(str_trim(v));
			}
			free(icopy);
			f->nid_terms++;
			continue;
		}
		long fi = recipe_factor_index(r, name);
		if (fi < 0) {
			filter_no_factor(r, name, err);
			goto fail;
		}
		unsigned char *term_allow = xcalloc(r->factors[fi].nlevels, 1);
		char *vcopy = xstrdup(values), *vsave = NULL;
		for (char *v = strtok_r(vcopy, "|", &vsave); v; v = strtok_r(NULL, "|", &vsave)) {
			v = str_trim(v);
			long li = recipe_level_index(r, (size_t)fi, v);
			if (li < 0) {
				filter_no_level(r, (size_t)fi, name, v, err);
				free(vcopy);
				free(term_allow);
				goto fail;
			}
			term_allow[li] = 1;
		}
		free(vcopy);
		/* a point matches every term: a factor named twice keeps the
		 * levels both terms allow ('batch=8,batch=1' keeps none) */
		if (!f->allow[fi]) {
			f->allow[fi] = term_allow;
		} else {
			for (size_t l = 0; l < r->factors[fi].nlevels; l++)
				f->allow[fi][l] &= term_allow[l];
			free(term_allow);
		}
	}
	free(copy);
	return f;
fail:
	free(copy);
	grid_filter_free(f);
	return NULL;
}

int grid_filter_match(const struct grid_filter *f, const struct point *p)
{
	if (!f)
		return 1;
	for (size_t i = 0; i < f->nfactors; i++)
		if (f->allow[i] && !f->allow[i][p->level[i]])
			return 0;
	/* every id term holds the point's id, as every factor term its level */
	for (size_t t = 0; t < f->nid_terms; t++) {
		size_t i = 0;
		while (i < f->nids && !(f->id_term[i] == t && strcmp(f->ids[i], p->id) == 0))
			i++;
		if (i == f->nids)
			return 0;
	}
	return 1;
}

void grid_filter_free(struct grid_filter *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nfactors; i++)
		free(f->allow[i]);
	for (size_t i = 0; i < f->nids; i++)
		free(f->ids[i]);
	free(f->ids);
	free(f->id_term);
	free(f->allow);
	free(f);
}

/* Whether some point of the plan matches f (up to the first that does). */
static int filter_matches_some(const struct recipe *r, const struct grid_filter *f)
{
	struct grid g;
	grid_init(&g, r);
	const struct point *p;
	while ((p = grid_next(&g)) && !grid_filter_match(f, p))
		;
	grid_free(&g);
	return p != NULL;
}

int grid_filter_check(const struct recipe *r, const char *spec, const struct grid_filter *f, FILE *err)
{
	if (!f || filter_matches_some(r, f))
		return 0;
	char *copy = xstrdup(spec), *save = NULL;
	int found = 0;
	for (char *term = strtok_r(copy, ",", &save); term && !found; term = strtok_r(NULL, ",", &save)) {
		struct grid_filter *one = grid_filter_parse(r, term, err);
		if (!one)
			BUG("--only term '%s' parsed with the filter but not alone", term);
		if (!filter_matches_some(r, one)) {
			error_to(err, "--only: no point of the plan matches '%s'", term);
			found = 1;
		}
		grid_filter_free(one);
	}
	if (!found)
		error_to(err, "--only: no point of the plan matches every term of '%s'", spec);
	free(copy);
	return -1;
}
