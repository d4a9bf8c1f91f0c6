/* test_grid.c - grid expansion: counts, order, exclusions, shuffles as
 * permutations, stable ids, filters. Recipes are built in memory, so the
 * grid is tested apart from the loader. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../t.h"
#include "plan/grid.h"
#include "util.h"

/* A recipe with factors given as "name:l1,l2,l3" strings. */
static struct recipe make(size_t n, const char *const *specs)
{
	struct recipe r;
	memset(&r, 0, sizeof(r));
	r.name = "t";
	r.repeat = 1;
	r.seed = 1;
	r.nfactors = n;
	r.factors = xcalloc(n, sizeof(struct factor));
	for (size_t i = 0; i < n; i++) {
		char *s = xstrdup(specs[i]), *colon = strchr(s, ':'), *save = NULL;
		*colon = '\0';
		r.factors[i].name = xstrdup(s);
		for (char *l = strtok_r(colon + 1, ",", &save); l; l = strtok_r(NULL, ",", &save)) {
			struct factor *f = &r.factors[i];
			f->levels = xrealloc(f->levels, (f->nlevels + 1) * sizeof(char *));
			f->levels[f->nlevels++] = xstrdup(l);
		}
		free(s);
	}
	return r;
}

static void unmake(struct recipe *r)
{
	for (size_t i = 0; i < r->nfactors; i++) {
		for (size_t l = 0; l < r->factors[i].nlevels; l++)
			free(r->factors[i].levels[l]);
		free(r->factors[i].levels);
		free(r->factors[i].name);
	}
	free(r->factors);
	for (size_t e = 0; e < r->nexcludes; e++) {
		for (size_t t = 0; t < r->excludes[e].nterms; t++)
			free(r->excludes[e].terms[t].match);
		free(r->excludes[e].terms);
	}
	free(r->excludes);
}

/* exclude {factor fa: levels in la (bitmask), factor fb: levels in lb} */
static void exclude2(struct recipe *r, size_t fa, unsigned la, size_t fb, unsigned lb)
{
	r->excludes = xrealloc(r->excludes, (r->nexcludes + 1) * sizeof(struct exclude_rule));
	struct exclude_rule *e = &r->excludes[r->nexcludes++];
	memset(e, 0, sizeof(*e));
	e->nterms = 2;
	e->terms = xcalloc(2, sizeof(struct exclude_term));
	size_t fs[2] = {fa, fb};
	unsigned ls[2] = {la, lb};
	for (int t = 0; t < 2; t++) {
		e->terms[t].factor = fs[t];
		e->terms[t].match = xcalloc(r->factors[fs[t]].nlevels, 1);
		for (size_t l = 0; l < r->factors[fs[t]].nlevels; l++)
			e->terms[t].match[l] = (ls[t] >> l) & 1;
	}
}

static void test_given_order(void)
{
	const char *spec[] = {"a:x,y,z", "b:1,2", "c:p,q,r,s"};
	struct recipe r = make(3, spec);
	CHECK_INT(grid_count(&r), 24);
	struct grid g;
	grid_init(&g, &r);
	const struct point *p = grid_next(&g);
	CHECK(p && p->index == 1 && p->level[0] == 0 && p->level[1] == 0 && p->level[2] == 0);
	p = grid_next(&g);
	CHECK(p && p->index == 2 && p->level[2] == 1); /* last factor fastest */
	size_t n = 2;
	while ((p = grid_next(&g)))
		n++;
	CHECK_INT(n, 24);
	grid_free(&g);
	/* exclusions: a in {y,z} and b = 2 -> 2*1*4 = 8 points out */
	exclude2(&r, 0, 0x6, 1, 0x2);
	CHECK_INT(grid_count(&r), 16);
	grid_init(&g, &r);
	n = 0;
	while ((p = grid_next(&g))) {
		CHECK(!(p->level[0] >= 1 && p->level[1] == 1));
		CHECK_INT(p->index, ++n);
	}
	CHECK_INT(n, 16);
	grid_free(&g);
	r.repeat = 3;
	CHECK_INT(grid_count(&r), 48);
	unmake(&r);
}

static void test_shuffle_is_permutation(void)
{
	/* sizes around powers of two and odd sizes */
	for (unsigned la = 1; la <= 17; la += 2) {
		for (unsigned lb = 1; lb <= 9; lb++) {
			char sa[128] = "a:", sb[128] = "b:";
			for (unsigned i = 0; i < la; i++)
				sprintf(sa + strlen(sa), "%s%u", i ? "," : "", i);
			for (unsigned i = 0; i < lb; i++)
				sprintf(sb + strlen(sb), "%s%u", i ? "," : "", i);
			const char *spec[] = {sa, sb};
			struct recipe r = make(2, spec);
			r.order = ORDER_SHUFFLED;
			r.seed = la * 31 + lb;
			unsigned char *seen = xcalloc(la * lb, 1);
			struct grid g;
			grid_init(&g, &r);
			const struct point *p;
			size_t n = 0, moved = 0;
			while ((p = grid_next(&g))) {
				size_t k = p->level[0] * lb + p->level[1];
				CHECK(!seen[k]);
				seen[k] = 1;
				moved += k != n;
				n++;
			}
			CHECK_INT(n, la * lb);
			if (la * lb >= 8)
				CHECK(moved > 0);
			grid_free(&g);
			free(seen);
			unmake(&r);
		}
	}
}

static char *order_of(struct recipe *r)
{
	struct strbuf sb = {0};
	struct grid g;
	grid_init(&g, r);
	for (const struct point *p; (p = grid_next(&g));)
		sb_puts(&sb, p->id);
	grid_free(&g);
	return sb.buf;
}

static void test_seeds_and_ids(void)
{
	const char *s1[] = {"model:resnet18,resnet50,bert_base", "batch:1,8,64", "precision:fp32,fp16"};
	const char *s2[] = {"precision:fp16,fp32", "model:bert_base,resnet50,resnet18", "batch:64,1,8"};
	struct recipe a = make(3, s1), b = make(3, s2);
	/* the same assignment has the same id whatever the declared order */
	size_t la[3] = {1, 2, 1}; /* resnet50, 64, fp16 */
	size_t lb[3] = {0, 1, 0}; /* fp16, resnet50, 64 */
	char ia[17], ib[17], ic[17];
	grid_point_id(&a, la, 0, ia);
	grid_point_id(&b, lb, 0, ib);
	CHECK_STR(ia, ib);
	grid_point_id(&a, la, 1, ic);
	CHECK(strcmp(ia, ic) != 0); /* repeats differ */
	CHECK_INT(strlen(ia), 16);
	/* a known value: ids are stable across versions and machines */
	size_t l0[3] = {0, 0, 0};
	grid_point_id(&a, l0, 0, ic);
	CHECK_STR(ic, "7d0eb90a0556a844"); /* hash64("batch=1\nmodel=resnet18\nprecision=fp32\n") */
	/* seeds */
	a.order = ORDER_SHUFFLED;
	a.seed = 5;
	char *o5 = order_of(&a), *o5b = order_of(&a);
	a.seed = 6;
	char *o6 = order_of(&a);
	CHECK_STR(o5, o5b);
	CHECK(strcmp(o5, o6) != 0);
	free(o5);
	free(o5b);
	free(o6);
	unmake(&a);
	unmake(&b);
}

static void test_container_grouped(void)
{
	const char *spec[] = {"batch:1,2,4,8", "container:old,new,newest", "precision:fp32,tf32,fp16"};
	struct recipe r = make(3, spec);
	r.order = ORDER_SHUFFLED;
	r.repeat = 2;
	struct grid g;
	grid_init(&g, &r);
	size_t changes = 0, last = (size_t)-1, n = 0;
	for (const struct point *p; (p = grid_next(&g)); n++) {
		if (p->level[1] != last)
			changes++;
		last = p->level[1];
	}
	CHECK_INT(n, 72);
	CHECK_INT(changes, 3);
	grid_free(&g);
	unmake(&r);
}

static void test_big_count(void)
{
	/* 2^20 points: counted without storing them */
	const char *spec[20];
	for (int i = 0; i < 20; i++)
		spec[i] = xasprintf("f%02d:off,on", i);
	struct recipe r = make(20, spec);
	CHECK_INT(grid_count(&r), 1 << 20);
	exclude2(&r, 0, 0x2, 1, 0x2); /* a quarter out */
	CHECK_INT(grid_count(&r), 3 << 18);
	unmake(&r);
	for (int i = 0; i < 20; i++)
		free((char *)spec[i]);
}

/* recipe_surviving (sub-cube and inclusion-exclusion) against walking the
 * whole cube, on random recipes: 3-5 factors of 1-4 levels, 1-6 rules of
 * 1-3 terms with random level sets. */
static void test_surviving(void)
{
	unsigned seed = 12345;
#define RND(n) ((seed = seed * 1103515245u + 12345u) >> 16) % (n)
	static const char *const specs[5] = {"a:0,1,2,3", "b:0,1,2", "c:0,1", "d:0", "e:0,1,2,3"};
	int agree_sub = 0, agree_ie = 0, trials = 300;
	for (int trial = 0; trial < trials; trial++) {
		size_t nf = 3 + RND(3);
		struct recipe r = make(nf, specs);
		/* a third of the recipes with 16-40 rules: the grid's exclusion index */
		size_t nr = trial % 3 == 2 ? 16 + RND(25) : 1 + RND(6);
		for (size_t k = 0; k < nr; k++) {
			r.excludes = xrealloc(r.excludes, (r.nexcludes + 1) * sizeof(struct exclude_rule));
			struct exclude_rule *e = &r.excludes[r.nexcludes++];
			memset(e, 0, sizeof(*e));
			size_t nt = 1 + RND(3);
			unsigned used = 0;
			for (size_t t = 0; t < nt; t++) {
				size_t f = RND(nf);
				if (used >> f & 1)
					continue;
				used |= 1u << f;
				e->terms = xrealloc(e->terms, (e->nterms + 1) * sizeof(*e->terms));
				struct exclude_term *term = &e->terms[e->nterms++];
				term->factor = f;
				term->match = xcalloc(r.factors[f].nlevels, 1);
				for (size_t l = 0; l < r.factors[f].nlevels; l++)
					term->match[l] = RND(2);
			}
		}
		/* the truth: walk the cube */
		uint64_t cube, walk = 0;
		CHECK(grid_cube_size(&r, &cube) == 0);
		size_t level[5] = {0};
		for (uint64_t i = 0; i < cube; i++) {
			walk += !grid_excluded(&r, level);
			for (size_t f = nf; f-- > 0;) {
				if (++level[f] < r.factors[f].nlevels)
					break;
				level[f] = 0;
			}
		}
		uint64_t sub = 0, ie = 0;
		CHECK(recipe_surviving(&r, UINT64_MAX, &sub) == 0); /* the sub-cube */
		agree_sub += sub == walk;
		if (r.nexcludes <= 16) {
			CHECK(recipe_surviving(&r, 0, &ie) == 0);   /* inclusion-exclusion */
			agree_ie += ie == walk;
		} else {
			CHECK(recipe_surviving(&r, 0, &ie) < 0);
			agree_ie++;
		}
		/* the stream (indexed exclusions from 16 rules) emits exactly the survivors */
		struct grid g;
		grid_init(&g, &r);
		const struct point *p;
		uint64_t emitted = 0, wrong = 0;
		while ((p = grid_next(&g))) {
			emitted++;
			wrong += grid_excluded(&r, p->level) != 0;
		}
		grid_free(&g);
		CHECK_INT(emitted, walk);
		CHECK_INT(wrong, 0);
		unmake(&r);
	}
	CHECK_INT(agree_sub, trials);
	CHECK_INT(agree_ie, trials);
#undef RND
}

int main(void)
{
	test_surviving();
	test_given_order();
	test_shuffle_is_permutation();
	test_seeds_and_ids();
	test_container_grouped();
	test_big_count();
	return T_DONE();
}
