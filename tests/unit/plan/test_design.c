/* test_design.c - the catalogue of fractional factorial designs, checked
 * from first principles: every entry's generators give the word-length
 * pattern written beside them, and an exhaustive search over every 2^(k-p)
 * design shows that no design of the same size has a smaller pattern
 * (minimum aberration). Then the fraction's runs (membership), aliases and
 * the grid's count of a fraction. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../t.h"
#include "plan/design.h"
#include "plan/grid.h"
#include "util.h"

/* ---- exhaustive search for the minimum word-length pattern ------------------ */

struct search {
	unsigned k, p, m;           /* m = k - p base factors */
	uint32_t cand[1u << DESIGN_MAX_K];
	size_t ncand;
	uint32_t words[1u << DESIGN_MAX_K];
	unsigned best[DESIGN_MAX_K + 1];
	int have;
};

/* Lexicographic comparison of patterns A3, A4, ... */
static int wlp_cmp(const unsigned *a, const unsigned *b, unsigned k)
{
	for (unsigned l = 3; l <= k; l++)
		if (a[l] != b[l])
			return a[l] < b[l] ? -1 : 1;
	return 0;
}

/* Choose generator i among cand[start..]: the group of words so far has nw
 * members in s->words, their pattern in wlp. Words only accumulate as
 * generators are added, so a partial pattern already larger than the best
 * cannot end smaller: that branch is cut. */
static void search_rec(struct search *s, unsigned i, size_t start, const unsigned *wlp, size_t nw)
{
	if (s->have && wlp_cmp(wlp, s->best, s->k) > 0)
		return;
	if (i == s->p) {
		if (!s->have || wlp_cmp(wlp, s->best, s->k) < 0)
			memcpy(s->best, wlp, sizeof(s->best));
		s->have = 1;
		return;
	}
	for (size_t c = start; c < s->ncand; c++) {
		uint32_t g = s->cand[c] | 1u << (s->m + i);
		unsigned w2[DESIGN_MAX_K + 1];
		memcpy(w2, wlp, sizeof(w2));
		int bad = 0;
		s->words[nw] = g;
		w2[__builtin_popcount(g)]++;
		for (size_t j = 0; j < nw; j++) {
			uint32_t w = s->words[j] ^ g;
			s->words[nw + 1 + j] = w;
			if (__builtin_popcount(w) < 3)
				bad = 1;
			w2[__builtin_popcount(w)]++;
		}
		if (!bad)
			search_rec(s, i + 1, c + 1, w2, 2 * nw + 1);
	}
}

static int search_min_wlp(unsigned k, unsigned p, unsigned *best)
{
	struct search *s = xcalloc(1, sizeof(*s));
	s->k = k;
	s->p = p;
	s->m = k - p;
	for (uint32_t c = 1; c < (1u << s->m); c++)
		if (__builtin_popcount(c) >= 2)
			s->cand[s->ncand++] = c;
	unsigned w0[DESIGN_MAX_K + 1] = {0};
	search_rec(s, 0, 0, w0, 0);
	int have = s->have;
	memcpy(best, s->best, sizeof(s->best));
	free(s);
	return have ? 0 : -1;
}

static void test_catalogue(void)
{
	/* every size there is, for 3 <= k <= 11, is catalogued exactly once */
	for (unsigned k = 3; k <= DESIGN_MAX_K; k++)
		for (unsigned p = 1; p <= design_max_p(k); p++) {
			size_t n = 0;
			for (size_t e = 0; e < design_catalogue_len; e++)
				n += design_catalogue[e].k == k && design_catalogue[e].p == p;
			CHECK_INT(n, 1);
		}
	CHECK_INT(design_max_p(7), 4);
	CHECK_INT(design_max_p(8), 4);
	CHECK_INT(design_max_p(11), 7);
	CHECK_INT(design_max_p(2), 0);
	for (size_t e = 0; e < design_catalogue_len; e++) {
		const struct design_entry *de = &design_catalogue[e];
		unsigned k = de->k, p = de->p;
		uint32_t gen[DESIGN_MAX_K];
		CHECK(design_generators(k, p, gen) == 0);
		/* generators: distinct products of at least two base factors, and
		 * every letter of the entry a base letter */
		for (unsigned j = 0; j < p; j++) {
			CHECK(__builtin_popcount(gen[j]) >= 2);
			CHECK_INT(strlen(de->gen[j]), __builtin_popcount(gen[j]));
			for (unsigned i = 0; i < j; i++)
				CHECK(gen[i] != gen[j]);
		}
		unsigned wlp[DESIGN_MAX_K + 1], best[DESIGN_MAX_K + 1];
		unsigned res = design_wlp(k, p, gen, wlp);
		CHECK(res >= 3);
		unsigned total = 0;
		for (unsigned l = 0; l <= k; l++)
			total += wlp[l];
		CHECK_INT(total, (1u << p) - 1);
		for (unsigned l = 3; l <= k; l++)
			if (wlp[l] != de->wlp[l - 3]) {
				fprintf(stderr, "2^(%u-%u): A%u is %u, the catalogue says %u\n", k, p, l, wlp[l],
					de->wlp[l - 3]);
				CHECK(0);
			}
		CHECK(search_min_wlp(k, p, best) == 0);
		if (wlp_cmp(wlp, best, k) != 0) {
			fprintf(stderr, "2^(%u-%u) is not of minimum aberration:", k, p);
			for (unsigned l = 3; l <= k; l++)
				fprintf(stderr, " A%u %u/%u", l, wlp[l], best[l]);
			fputc('\n', stderr);
			CHECK(0);
		}
	}
	/* resolutions of some designs everyone knows */
	struct design d = {.k = 7};
	CHECK(design_choose(&d, 3) == 0);
	CHECK_INT(d.resolution, 4);
	d.k = 5;
	CHECK(design_choose(&d, 1) == 0);
	CHECK_INT(d.resolution, 5);
	d.k = 7;
	CHECK(design_choose(&d, 4) == 0);
	CHECK_INT(d.resolution, 3);
	CHECK(design_choose(&d, 5) < 0);
	/* a wrong generator is caught: 2^(7-3) with G = AB has resolution III */
	uint32_t bad[3] = {0x7, 0xe, 0x3}, words[8];
	unsigned wlp[DESIGN_MAX_K + 1];
	CHECK_INT(design_wlp(7, 3, bad, wlp), 3);
	CHECK_INT(design_words(7, 3, bad, words), 7);
	CHECK(design_letter(7) == 'H' && design_letter(8) == 'J' && design_letter(10) == 'L');
}

/* ---- a recipe in memory ----------------------------------------------------- */

static struct recipe make(size_t n, size_t nlevels)
{
	struct recipe r;
	memset(&r, 0, sizeof(r));
	r.name = "t";
	r.repeat = 1;
	r.seed = 1;
	r.nfactors = n;
	r.factors = xcalloc(n, sizeof(struct factor));
	for (size_t i = 0; i < n; i++) {
		struct factor *f = &r.factors[i];
		f->name = xasprintf("f%zu", i);
		f->nlevels = i == 0 ? nlevels : 2;
		f->levels = xcalloc(f->nlevels, sizeof(char *));
		for (size_t l = 0; l < f->nlevels; l++)
			f->levels[l] = xasprintf("l%zu", l);
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
}

/* The 2^(7-3) fraction crossed with a three-level factor: 3 x 16 runs, each
 * satisfying every defining word, and balanced (every factor's levels, and
 * every pair of factors' level pairs, equally often). */
static void test_fraction(void)
{
	struct recipe r = make(8, 3);
	struct design *d = &r.design;
	d->fractional = 1;
	d->k = 7;
	for (size_t i = 0; i < 7; i++)
		d->factor[i] = i + 1;
	CHECK(design_choose(d, 3) == 0);
	CHECK_INT(grid_count(&r), 48);
	uint32_t words[8];
	size_t nw = design_words(7, 3, d->gen, words);
	struct grid g;
	grid_init(&g, &r);
	const struct point *p;
	size_t n = 0, ones[8] = {0}, pairs[8][8] = {{0}};
	while ((p = grid_next(&g))) {
		n++;
		uint32_t low = 0;
		for (size_t i = 0; i < 7; i++)
			if (p->level[i + 1] == 0)
				low |= 1u << i;
		for (size_t w = 0; w < nw; w++)
			CHECK(__builtin_popcount(words[w] & low) % 2 == 0); /* the word's product is +1 */
		for (size_t i = 1; i < 8; i++) {
			ones[i] += p->level[i];
			for (size_t j = 1; j < 8; j++)
				pairs[i][j] += p->level[i] && p->level[j];
		}
	}
	grid_free(&g);
	CHECK_INT(n, 48);
	for (size_t i = 1; i < 8; i++) {
		CHECK_INT(ones[i], 24);
		for (size_t j = i + 1; j < 8; j++)
			CHECK_INT(pairs[i][j], 12);
	}
	/* exclusions over the crossed factor keep whole copies of the fraction */
	struct exclude_term term = {.factor = 0, .match = (unsigned char[]){1, 0, 0}};
	struct exclude_rule rule = {.nterms = 1, .terms = &term};
	r.excludes = &rule;
	r.nexcludes = 1;
	CHECK_INT(grid_count(&r), 32);
	uint64_t alive = 0;
	CHECK(recipe_surviving(&r, 1000, &alive) == 0);
	CHECK_INT(alive, 32);
	r.nexcludes = 0;

	/* aliases of the 2^(7-3): AB = CE = FG, main effects clear */
	uint32_t al[8];
	size_t na = design_aliases(d, 0x3, 2, al);
	CHECK_INT(na, 2);
	struct strbuf sb = {0};
	for (size_t i = 0; i < na; i++) {
		design_word_letters(al[i], &sb);
		sb_putc(&sb, ' ');
	}
	CHECK_STR(sb.buf, "CE FG ");
	CHECK_INT(design_aliases(d, 0x1, 2, al), 0);
	sb_reset(&sb);
	design_effect_name(&r, d, 0x5, &sb);
	CHECK_STR(sb.buf, "f1 x f3");
	sb_reset(&sb);
	design_describe(&r, "", &sb);
	CHECK(strstr(sb.buf, "generators (minimum aberration): E = ABC, F = BCD, G = ACD\n") != NULL);
	CHECK(strstr(sb.buf, "defining relation: I = ABCE = BCDF = ADEF = ACDG = BDEG = ABFG = CEFG\n") != NULL);
	CHECK(strstr(sb.buf, "  AB = CE = FG\n") != NULL);
	sb_free(&sb);
	unmake(&r);
}

int main(void)
{
	test_catalogue();
	test_fraction();
	return T_DONE();
}
