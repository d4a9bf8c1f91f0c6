/* design.h - two-level fractional factorial designs 2^(k-p): the catalogue
 * of minimum-aberration generators, the defining relation, the alias
 * structure, and which points of the cube belong to the fraction.
 *
 * An effect (a main effect or an interaction) is a k-bit mask over the
 * design's factors (bit i: letter i, the i-th factor of struct design); a
 * defining word is such a mask whose product of columns is +1 on every run. */
#ifndef MATRIX_DESIGN_H
#define MATRIX_DESIGN_H

#include <stddef.h>
#include <stdint.h>

#include "recipe.h"
#include "util.h"

/* One catalogued design: generators written as words over the base letters
 * (A, B, ..., H, J, K, L: I is skipped, as in the literature) and its
 * word-length pattern A3..A11 as published. */
struct design_entry {
	unsigned k, p;
	const char *gen[DESIGN_MAX_K];
	unsigned wlp[DESIGN_MAX_K - 2]; /* A3, A4, ..., A11: defining words of each length */
};
extern const struct design_entry design_catalogue[];
extern const size_t design_catalogue_len;

/* The letter of factor i of a design (0 -> 'A', 8 -> 'J': I is skipped). */
char design_letter(size_t i);
/* Largest p for which a 2^(k-p) design of resolution >= 3 exists
 * (2^(k-p) - 1 >= k), 0 when k < 3. */
unsigned design_max_p(unsigned k);
/* The catalogue's generators of the 2^(k-p) design into gen[0..p-1] (bit
 * masks over the k-p base factors): 0, or -1 when it has none. */
int design_generators(unsigned k, unsigned p, uint32_t *gen);
/* The 2^p - 1 defining words of the design into words (k-bit masks, in the
 * order of the subsets of generators); returns their number. */
size_t design_words(unsigned k, unsigned p, const uint32_t *gen, uint32_t *words);
/* Word-length pattern: wlp[l] = number of defining words of length l
 * (wlp has k + 1 entries); returns the resolution (0 when p == 0). */
unsigned design_wlp(unsigned k, unsigned p, const uint32_t *gen, unsigned *wlp);
/* Fill d's p, gen and resolution from the catalogue's 2^(k-p) design. */
int design_choose(struct design *d, unsigned p);
/* 1 when the assignment (a level index per recipe factor) is a run of the
 * fraction (every point when d is not fractional). */
int design_member(const struct design *d, const size_t *level);
/* The effects aliased with effect (effect times each defining word) that
 * involve at most maxlen factors, into out (at most 2^p - 1); their number. */
size_t design_aliases(const struct design *d, uint32_t effect, unsigned maxlen, uint32_t *out);
/* "A", "AB", ... */
void design_word_letters(uint32_t word, struct strbuf *sb);
/* An effect by its factors' names: "channels_last", "channels_last x eval". */
void design_effect_name(const struct recipe *r, const struct design *d, uint32_t effect, struct strbuf *sb);
/* Roman numeral of a resolution ("IV"). */
const char *design_roman(unsigned resolution);
/* The design as text, each line starting with indent: its size, the
 * letters, generators, defining relation, word-length pattern, and the
 * aliases of main effects and two-factor interactions (longer ones left
 * out). Nothing for a full factorial. */
void design_describe(const struct recipe *r, const char *indent, struct strbuf *sb);

#endif
