/* design.c - two-level fractional factorial designs: the catalogue of
 * minimum-aberration 2^(k-p) generators for k <= 11, defining relations,
 * word-length patterns, aliases, and membership of a point in the fraction.
 *
 * A 2^(k-p) design runs the full factorial of its first k-p factors (the
 * base) and sets each of the other p factors to a product of base columns
 * (its generator), in +1/-1 coding: a factor's first level is -1, its
 * second +1. The defining relation is the group of the p generator words
 * (generator j as the word "gen[j] x factor k-p+j") and their products;
 * the resolution is the length of its shortest word and the word-length
 * pattern (A3, A4, ...) the number of words of each length. Of two designs
 * with the same number of runs, the one whose pattern is smaller in the
 * first place where they differ has minimum aberration (Fries and Hunter
 * 1980): it maximises the resolution, then minimises the words of that
 * length, and so on. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "design.h"

/* Minimum-aberration designs, from the tables of Chen, Sun and Wu (1993) as
 * printed in Wu and Hamada, "Experiments" (2009), appendix 5A, and
 * Montgomery, "Design and Analysis of Experiments", table 8.14; for the
 * sizes those tables leave out (2^(10-2), 2^(11-2), 2^(11-3)) a design with
 * the published minimum pattern. tests/unit/plan/test_design.c recomputes
 * every pattern from the generators and checks by exhaustive search that
 * no design of the same size has a smaller one. */
const struct design_entry design_catalogue[] = {
	{3, 1, {"AB"}, {1}},
	{4, 1, {"ABC"}, {0, 1}},
	{5, 1, {"ABCD"}, {0, 0, 1}},
	{5, 2, {"AB", "AC"}, {2, 1, 0}},
	{6, 1, {"ABCDE"}, {0, 0, 0, 1}},
	{6, 2, {"ABC", "BCD"}, {0, 3, 0, 0}},
	{6, 3, {"AB", "AC", "BC"}, {4, 3, 0, 0}},
	{7, 1, {"ABCDEF"}, {0, 0, 0, 0, 1}},
	{7, 2, {"ABCD", "ABDE"}, {0, 1, 2, 0, 0}},
	{7, 3, {"ABC", "BCD", "ACD"}, {0, 7, 0, 0, 0}},
	{7, 4, {"AB", "AC", "BC", "ABC"}, {7, 7, 0, 0, 1}},
	{8, 1, {"ABCDEFG"}, {0, 0, 0, 0, 0, 1}},
	{8, 2, {"ABCD", "ABEF"}, {0, 0, 2, 1, 0, 0}},
	{8, 3, {"ABC", "ABD", "BCDE"}, {0, 3, 4, 0, 0, 0}},
	{8, 4, {"BCD", "ACD", "ABC", "ABD"}, {0, 14, 0, 0, 0, 1}},
	{9, 1, {"ABCDEFGH"}, {0, 0, 0, 0, 0, 0, 1}},
	{9, 2, {"ACDFG", "BCEFG"}, {0, 0, 0, 3, 0, 0, 0}},
	{9, 3, {"ABCD", "ACEF", "CDEF"}, {0, 1, 4, 2, 0, 0, 0}},
	{9, 4, {"BCDE", "ACDE", "ABDE", "ABCE"}, {0, 6, 8, 0, 0, 1, 0}},
	{9, 5, {"ABC", "BCD", "ACD", "ABD", "ABCD"}, {4, 14, 8, 0, 4, 1, 0}},
	{10, 1, {"ABCDEFGHJ"}, {0, 0, 0, 0, 0, 0, 0, 1}},
	{10, 2, {"ABCDE", "ABCFGH"}, {0, 0, 0, 1, 2, 0, 0, 0}},
	{10, 3, {"ABCG", "BCDE", "ACDF"}, {0, 0, 3, 3, 1, 0, 0, 0}},
	{10, 4, {"BCDF", "ACDF", "ABDE", "ABCE"}, {0, 2, 8, 4, 0, 1, 0, 0}},
	{10, 5, {"ABCD", "ABCE", "ABDE", "ACDE", "BCDE"}, {0, 10, 16, 0, 0, 5, 0, 0}},
	{10, 6, {"ABC", "BCD", "ACD", "ABD", "ABCD", "AB"}, {8, 18, 16, 8, 8, 5, 0, 0}},
	{11, 1, {"ABCDEFGHJK"}, {0, 0, 0, 0, 0, 0, 0, 0, 1}},
	{11, 2, {"ABCDEF", "ABCGHJ"}, {0, 0, 0, 0, 2, 1, 0, 0, 0}},
	{11, 3, {"ABCDE", "ABCFG", "ABDFH"}, {0, 0, 0, 6, 0, 1, 0, 0, 0}},
	{11, 4, {"ABCG", "BCDE", "ACDF", "ABCDEFG"}, {0, 0, 6, 6, 2, 1, 0, 0, 0}},
	{11, 5, {"CDE", "ABCD", "ABF", "BDEF", "ADEF"}, {0, 4, 14, 8, 0, 3, 2, 0, 0}},
	{11, 6, {"ABC", "BCD", "CDE", "ACD", "ADE", "BDE"}, {0, 25, 0, 27, 0, 10, 0, 1, 0}},
	{11, 7, {"ABC", "BCD", "ACD", "ABD", "ABCD", "AB", "AC"}, {12, 26, 28, 24, 20, 13, 4, 0, 0}},
};
const size_t design_catalogue_len = sizeof(design_catalogue) / sizeof(design_catalogue[0]);

char design_letter(size_t i)
{
	return (char)('A' + i + (i >= 8)); /* A..H, J, K, L */
}

unsigned design_max_p(unsigned k)
{
	unsigned p = 0;
	while (p + 1 < k && (1u << (k - p - 1)) - 1 >= k)
		p++;
	return p;
}

int design_generators(unsigned k, unsigned p, uint32_t *gen)
{
	for (size_t e = 0; e < design_catalogue_len; e++) {
		const struct design_entry *de = &design_catalogue[e];
		if (de->k != k || de->p != p)
			continue;
		for (unsigned j = 0; j < p; j++) {
			gen[j] = 0;
			for (const char *c = de->gen[j]; *c; c++)
				for (unsigned i = 0; i < k - p; i++)
					if (design_letter(i) == *c)
						gen[j] |= 1u << i;
		}
		return 0;
	}
	return -1;
}

size_t design_words(unsigned k, unsigned p, const uint32_t *gen, uint32_t *words)
{
	size_t n = 0;
	for (uint32_t set = 1; set < (1u << p); set++) {
		uint32_t w = 0;
		for (unsigned j = 0; j < p; j++)
			if (set >> j & 1)
				w ^= gen[j] | 1u << (k - p + j);
		words[n++] = w;
	}
	return n;
}

unsigned design_wlp(unsigned k, unsigned p, const uint32_t *gen, unsigned *wlp)
{
	uint32_t words[1u << DESIGN_MAX_K];
	size_t n = design_words(k, p, gen, words);
	memset(wlp, 0, (k + 1) * sizeof(*wlp));
	unsigned res = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned l = (unsigned)__builtin_popcount(words[i]);
		wlp[l]++;
		if (!res || l < res)
			res = l;
	}
	return res;
}

int design_choose(struct design *d, unsigned p)
{
	if (p == 0) {
		d->p = 0;
		d->resolution = 0;
		return 0;
	}
	if (design_generators((unsigned)d->k, p, d->gen) < 0)
		return -1;
	d->p = p;
	unsigned wlp[DESIGN_MAX_K + 1];
	d->resolution = design_wlp((unsigned)d->k, p, d->gen, wlp);
	return 0;
}

int design_member(const struct design *d, const size_t *level)
{
	if (!d->fractional)
		return 1;
	size_t base = d->k - d->p;
	uint32_t low = 0; /* base factors at their first level (-1) */
	for (size_t i = 0; i < base; i++)
		if (level[d->factor[i]] == 0)
			low |= 1u << i;
	for (unsigned j = 0; j < d->p; j++) {
		/* the product of the generator's columns is -1 when an odd number of them are low */
		unsigned want_low = (unsigned)__builtin_popcount(low & d->gen[j]) & 1;
		if ((level[d->factor[base + j]] == 0) != want_low)
			return 0;
	}
	return 1;
}

size_t design_aliases(const struct design *d, uint32_t effect, unsigned maxlen, uint32_t *out)
{
	uint32_t words[1u << DESIGN_MAX_K];
	size_t nw = design_words((unsigned)d->k, d->p, d->gen, words), n = 0;
	for (size_t i = 0; i < nw; i++) {
		uint32_t a = effect ^ words[i];
		if ((unsigned)__builtin_popcount(a) <= maxlen)
			out[n++] = a;
	}
	return n;
}

void design_word_letters(uint32_t word, struct strbuf *sb)
{
	for (size_t i = 0; i < DESIGN_MAX_K; i++)
		if (word >> i & 1)
			sb_putc(sb, design_letter(i));
}

void design_effect_name(const struct recipe *r, const struct design *d, uint32_t effect, struct strbuf *sb)
{
	int first = 1;
	for (size_t i = 0; i < d->k; i++) {
		if (!(effect >> i & 1))
			continue;
		sb_printf(sb, "%s%s", first ? "" : " x ", r->factors[d->factor[i]].name);
		first = 0;
	}
}

const char *design_roman(unsigned resolution)
{
	static const char *const roman[] = {"-", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI"};
	return resolution < sizeof(roman) / sizeof(roman[0]) ? roman[resolution] : "?";
}

/* The alias chains of main effects and two-factor interactions: each chain
 * once, from its first member in the order A, B, ..., AB, AC, ... */
static void describe_aliases(const struct design *d, const char *indent, struct strbuf *sb)
{
	size_t k = d->k;
	uint32_t effects[DESIGN_MAX_K + DESIGN_MAX_K * (DESIGN_MAX_K - 1) / 2];
	size_t ne = 0;
	for (size_t i = 0; i < k; i++)
		effects[ne++] = 1u << i;
	for (size_t i = 0; i < k; i++)
		for (size_t j = i + 1; j < k; j++)
			effects[ne++] = 1u << i | 1u << j;
	unsigned char done[sizeof(effects) / sizeof(effects[0])] = {0};
	uint32_t al[1u << DESIGN_MAX_K];
	struct strbuf clear = {0};
	sb_printf(sb, "%saliases of main effects and two-factor interactions (longer interactions left out):\n",
		  indent);
	for (size_t e = 0; e < ne; e++) {
		if (done[e])
			continue;
		size_t na = design_aliases(d, effects[e], 2, al);
		if (!na) {
			sb_putc(&clear, ' ');
			design_word_letters(effects[e], &clear);
			continue;
		}
		sb_printf(sb, "%s  ", indent);
		design_word_letters(effects[e], sb);
		for (size_t a = 0; a < na; a++) {
			sb_puts(sb, " = ");
			design_word_letters(al[a], sb);
			for (size_t f = e + 1; f < ne; f++)
				if (effects[f] == al[a])
					done[f] = 1;
		}
		sb_putc(sb, '\n');
	}
	if (clear.buf)
		sb_printf(sb, "%s  clear of every other main effect and two-factor interaction:%s\n", indent, clear.buf);
	sb_free(&clear);
}

void design_describe(const struct recipe *r, const char *indent, struct strbuf *sb)
{
	const struct design *d = &r->design;
	if (!d->fractional)
		return;
	unsigned k = (unsigned)d->k, p = d->p;
	sb_printf(sb, "%sdesign: 2^(%u-%u) fractional factorial, resolution %s: %u of the %u combinations (1/%u fraction)",
		  indent, k, p, design_roman(d->resolution), 1u << (k - p), 1u << k, 1u << p);
	uint64_t crossed = 1; /* combinations of the other factors (no overflow: the cube fits 64 bits) */
	for (size_t f = 0; f < r->nfactors; f++) {
		size_t i;
		for (i = 0; i < k && d->factor[i] != f; i++)
			;
		if (i == k)
			crossed *= r->factors[f].nlevels;
	}
	if (crossed > 1)
		sb_printf(sb, ", crossed with each of the %llu combinations of the other factors%s",
			  (unsigned long long)crossed, r->nexcludes ? " (before exclusions)" : "");
	sb_putc(sb, '\n');
	sb_printf(sb, "%sfactors:", indent);
	for (size_t i = 0; i < k; i++) {
		const struct factor *f = &r->factors[d->factor[i]];
		/* levels for a terminal: control characters escaped */
		char *lo = text_clean(f->levels[0], strlen(f->levels[0]), 0);
		char *hi = text_clean(f->levels[1], strlen(f->levels[1]), 0);
		sb_printf(sb, "%s %c = %s (%s -, %s +)", i ? "," : "", design_letter(i), f->name, lo, hi);
		free(lo);
		free(hi);
	}
	sb_putc(sb, '\n');
	sb_printf(sb, "%sgenerators (minimum aberration):", indent);
	for (unsigned j = 0; j < p; j++) {
		sb_printf(sb, "%s %c = ", j ? "," : "", design_letter(k - p + j));
		design_word_letters(d->gen[j], sb);
	}
	sb_putc(sb, '\n');
	uint32_t words[1u << DESIGN_MAX_K];
	size_t nw = design_words(k, p, d->gen, words);
	sb_printf(sb, "%sdefining relation: I", indent);
	for (size_t i = 0; i < nw; i++) {
		sb_puts(sb, " = ");
		design_word_letters(words[i], sb);
	}
	sb_putc(sb, '\n');
	unsigned wlp[DESIGN_MAX_K + 1];
	design_wlp(k, p, d->gen, wlp);
	sb_printf(sb, "%sword-length pattern:", indent);
	int first = 1;
	for (unsigned l = 3; l <= k; l++) {
		if (!wlp[l])
			continue;
		sb_printf(sb, "%s A%u = %u", first ? "" : ",", l, wlp[l]);
		first = 0;
	}
	sb_putc(sb, '\n');
	describe_aliases(d, indent, sb);
}
