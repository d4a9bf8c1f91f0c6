/* vocab.h - the factor vocabulary of DESIGN.md: which factors the runner and the
 * native / PyTorch engines know, their types, levels and engine flags. */
#ifndef MATRIX_VOCAB_H
#define MATRIX_VOCAB_H

#include <stddef.h>

enum vocab_type {
	VOCAB_ENUM,   /* one of levels[] */
	VOCAB_SWITCH, /* off | on (true/false/yes/no are accepted and normalised) */
	VOCAB_INT,    /* positive integer */
	VOCAB_NAME,   /* runner-level name checked elsewhere (container, engine) */
};

struct vocab_factor {
	const char *name;          /* recipe key, e.g. "channels_last" */
	const char *flag;          /* engine flag, e.g. "--channels-last"; NULL: runner only */
	enum vocab_type type;
	const char *const *levels; /* NULL terminated, for VOCAB_ENUM and VOCAB_SWITCH
	                            * ("off", "on"); for VOCAB_NAME the fixed names
	                            * (engine) or NULL (container: from the recipe) */
	const char *expected;      /* what a level must be, for messages:
	                            * "one of: fp32, tf32, fp16, bf16" */
};

/* The factor called name, or NULL when the vocabulary has none. */
const struct vocab_factor *vocab_find(const char *name);
/* The closest known factor name within a small edit distance, or NULL. */
const char *vocab_suggest(const char *name);
/* Check a level of a known factor. On success returns the canonical spelling
 * (a static string, or level itself); on failure returns NULL and sets *why to
 * a static description of what is expected ("one of: fp32, tf32, fp16, bf16").
 * threads: all is the online cores of this machine, as a number. */
const char *vocab_check_level(const struct vocab_factor *f, const char *level, const char **why);
/* The candidate closest to word, for "did you mean" hints: the level word
 * is another name for ('gpu': 'cuda', 'half': 'fp16', 'eager': 'none') when
 * it is a candidate, else the one at the
 * smallest edit distance (a swap of two adjacent characters counts 1) when
 * that is 1, or 2 for words of 6 characters or more; else a candidate that
 * word is a prefix of (word at least 2 characters long); NULL when none is
 * close. Ties go to the earlier candidate. */
const char *vocab_closest(const char *word, const char *const *cands, size_t n);
/* vocab_closest, else, for a metric's name (long names misspelt as they
 * sound: "thruput"), the candidate at the smallest edit distance when at
 * most a third of its letters differ; NULL when none is that close. */
const char *vocab_closest_metric(const char *word, const char *const *cands, size_t n);
/* vocab_closest without the prefix rule: the candidate word is a misspelling
 * of (one or two edits), or NULL. */
const char *vocab_misspelt(const char *word, const char *const *cands, size_t n);
/* Whether factor name says what is measured rather than how (model, task,
 * batch, seq_len): without a baseline in the recipe these group the points
 * (the best configuration is per model, task, ...), the others start at
 * their first level; the effects figure and the improvements the report
 * picks by itself leave them out. */
int vocab_is_workload(const char *name);
/* What the baseline is where the recipe has none, for messages. */
#define VOCAB_NO_BASELINE "the first level of each factor but model, task, batch and seq_len, which group the points"

/* Every factor, NULL-name terminated. */
extern const struct vocab_factor vocab_factors[];

#endif
