/* recipe.h - a study recipe, loaded from YAML (libyaml document API) and fully
 * validated before anything runs. See DESIGN.md, "Recipe". */
#ifndef MATRIX_RECIPE_H
#define MATRIX_RECIPE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vocab.h"

/* A position in the recipe file, 1-based, for error messages. */
struct mark {
	unsigned line;
	unsigned col;
};

struct factor {
	char *name;
	const struct vocab_factor *vocab; /* NULL: not governed by the vocabulary (with only the
	                                   * command engine, every factor but container, engine
	                                   * and device is free-form) */
	size_t nlevels;
	char **levels;                    /* canonical spellings ("on", not "true") */
	struct mark *level_marks;         /* where each level was written */
	struct mark mark;                 /* where the factor's key was written */
};

/* One term of an exclusion: factor `factor` has any level whose bit is set. */
struct exclude_term {
	size_t factor;          /* index into recipe.factors */
	unsigned char *match;   /* nlevels bytes, 1 where the level is excluded */
};
struct exclude_rule {
	size_t nterms;
	struct exclude_term *terms;
	struct mark mark;
};

/* A partial assignment of levels, e.g. the baseline: level index per factor,
 * or -1 where the assignment leaves the factor free. */
struct assignment {
	long *level;            /* nfactors entries */
	struct mark mark;
};

enum recipe_engine {
	ENGINE_NATIVE,
	ENGINE_PYTORCH,
	ENGINE_COMMAND,
	ENGINE_FACTOR, /* `engine` is a factor: each point names its own */
};

enum recipe_order {
	ORDER_GIVEN,
	ORDER_SHUFFLED,
};

/* Defaults: warmup 0.2 s, min_time 0.5 s, max_time 5 s, rel_ci 0.02,
 * timeout 300 s, grace 5 s. */
struct measure {
	double warmup_s;        /* seconds of warm-up; < 0 when warmup_iters is used */
	long warmup_iters;      /* iterations of warm-up; 0 when warmup_s is used */
	double min_time_s;      /* seconds */
	double max_time_s;      /* seconds */
	double rel_ci;          /* target half-width of the 95% CI of the median, relative */
	double timeout_s;       /* per point, wall clock, seconds */
	double grace_s;         /* SIGTERM to SIGKILL, seconds */
	int wall_time;          /* metric: wall_time: matrix times the command engine's command
	                         * itself (`matrix time`), which writes no result file */
};

/* report: section. Factor references are indexes into recipe.factors. */

/* A figure's facets: which points it draws (where) and how it splits them
 * (panels). A term of where keeps the points whose factor is at one of the
 * levels whose byte is set; panels draws one panel, on the same axes, per
 * combination of the panel factors' levels. */
#define FACET_MAX_PANELS 2      /* panel factors */
#define FACET_MAX_CELLS 16      /* panels in one figure */
struct where_term {
	size_t factor;          /* index into recipe.factors */
	unsigned char *keep;    /* nlevels bytes, 1 where the level is drawn */
};
struct report_facet {
	size_t nwhere;
	struct where_term *where;
	size_t npanels;
	size_t panels[FACET_MAX_PANELS]; /* factor indexes */
};
struct report_scatter { long x, color; struct report_facet facet; }; /* color: -1 when none */
struct report_bars { long x, group; struct report_facet facet; };    /* group: -1 when none */
struct report_best { struct report_facet facet; };
struct report_improvement {
	long factor;
	long from, to;        /* level indexes */
	size_t nby;
	long *by;             /* factor indexes */
};
struct report_spec {
	char *metric;         /* "throughput" (default) or any numeric result key */
	size_t nscatter;
	struct report_scatter *scatter;
	size_t nbars;
	struct report_bars *bars;
	size_t nnormalised;   /* report.normalised: gain over the group's baseline */
	struct report_scatter *normalised;
	size_t nbest;         /* report.best: baseline vs optimal */
	struct report_best *best;
	int effects_given;    /* report.effects.factors was written */
	unsigned char *effects_shown; /* nfactors bytes: 1 where the effects figure shows the factor */
	size_t nimprovements;
	struct report_improvement *improvements;
};

/* design: the points to run. The full factorial by default; a two-level
 * fractional factorial 2^(k-p) over k factors (design.h): the factors are
 * letters A, B, ... in declared order, the first k-p form a full 2^(k-p)
 * (the base) and generated factor k-p+j takes the level of the product of
 * the base factors in gen[j] (level 0 = -1, level 1 = +1). Only the
 * principal fraction (every generator word = +I) is run. */
#define DESIGN_MAX_K 11
struct design {
	int fractional;          /* 0: every combination (type: full, or no design:) */
	int given;               /* the recipe has a design: key */
	size_t k;                /* factors in the design (two levels each) */
	size_t factor[DESIGN_MAX_K]; /* their indexes into recipe.factors, declared order */
	unsigned p;              /* 2^(k-p) of the 2^k combinations are run */
	uint32_t gen[DESIGN_MAX_K]; /* p generators: bit i = base factor i (letter 'A' + i) */
	unsigned resolution;     /* length of the shortest defining word; 0 when p == 0 */
	struct mark mark;        /* where design: was written */
};

/* A level of the `container` factor: an image to run its points in. */
struct container {
	char *name;
	char *image;          /* an image reference, or NULL when built */
	char *build;          /* the directory of a Containerfile or Dockerfile (containers/<dir>), or NULL */
	char *context;        /* the build context (default: build) */
	char **args;          /* "NAME=VALUE" --build-arg strings (nargs of them) */
	size_t nargs;
	char *runtime;        /* "podman" | "docker" | NULL (auto: the first that works) */
	char *network;        /* --network: "none" unless the recipe says otherwise */
	char *cpus;           /* --cpus, or NULL: no limit */
	char *memory;         /* --memory (bytes, k/m/g suffix), or NULL: no limit */
	const char *engine;   /* "native" | "pytorch": its points' engine, or NULL: the recipe's */
	struct mark engine_mark;
	struct mark mark;     /* where its name was written */
};

/* executor: {slurm: {...}}: how `matrix run --executor slurm` submits the
 * points (sbatch options); fields not given are 0 / NULL. */
struct slurm_spec {
	int given;            /* the recipe names the slurm executor */
	char *partition, *account, *qos;   /* sbatch's, NULL: the cluster's default */
	double time_s;        /* limit per task, seconds; 0: measure.timeout + a margin */
	long cpus;            /* --cpus-per-task; 0: not asked */
	char *mem;            /* --mem as sbatch reads it (4G, 500M), or NULL */
	long gpus;            /* --gpus-per-task of a point that uses the GPU; 0: 1 */
	long throttle;        /* most tasks of the array at once (%N); 0: no limit */
	size_t nextra;
	char **extra;         /* more sbatch arguments, each one argument */
};

struct recipe {
	char *path;           /* as given on the command line */
	char *text;           /* the file's bytes, NUL terminated */
	size_t text_len;
	uint64_t text_hash;   /* hash64 of the bytes: detects a changed recipe on resume */

	char *name;
	char *description;    /* may be NULL */
	enum recipe_engine engine;
	size_t ncommand;      /* command engine: argv template with {factor}, {result},
	                       * {recipe_dir}, {run_dir} */
	char **command;
	char *dir;            /* the recipe file's directory, absolute: the command engine's
	                       * working directory and {recipe_dir} (a run directory's
	                       * recipe.yaml: the caller sets the directory the run began from) */
	char *python;         /* pytorch engine: interpreter, NULL = first python3 that imports torch */
	char *device;         /* auto | cuda | cpu; NULL when `device` is a factor */
	struct measure measure;

	size_t nfactors;      /* in declared order */
	struct factor *factors;
	size_t nexcludes;
	struct exclude_rule *excludes;

	enum recipe_order order;
	uint64_t seed;
	unsigned repeat;      /* >= 1 */
	int has_baseline;
	struct assignment baseline;
	struct report_spec report;
	size_t ncontainers;
	char *container_cache; /* containers.cache: an absolute directory, "off", or NULL:
	                        * the plan cache's own default (images.c) */
	struct container *containers;
	struct slurm_spec slurm;
	struct design design;
	int profile;          /* profile: on: each native / pytorch point writes profiles/ID.csv */
	double dataset_size;  /* samples in one epoch (metric epoch_time); 0 when not given */
};

/* Load and validate the recipe at path. On success returns 0. On failure
 * returns -1 after printing every error to err (normally stderr) as
 *   FILE:LINE:COL: message
 *     the source line
 *     ^ (under the column)
 * The caller exits with status 2. For a recipe already run (a run
 * directory's recipe.yaml, read by report, status, run-point): the checks
 * of settings that would make a new run fail, which recipe_load_overrides
 * makes (a measure.timeout no longer than the warm-up and max_time), are
 * not made, so that a directory run before them still reads. */
int recipe_load(const char *path, struct recipe *r, FILE *err);
void recipe_free(struct recipe *r);
/* The same to plan a run (expand, run, build: with those checks) with the
 * command line's overrides ovr[0..novr-1], each
 * "KEY=VALUE": KEY a factor (its levels replaced: VALUE is levels separated
 * by commas, each a level or an integer range START..END, START..END:+K or
 * START..END:xK, as in batch=1..64:x2) or a recipe key (seed=2,
 * measure.min_time=1s; dots go into mappings, created where missing). An
 * error in an override is reported as "FILE: override 'KEY=VALUE': message".
 * On success r->text is the recipe as run (a comment naming the overrides,
 * then the recipe with them applied), which is what a run saves. */
int recipe_load_overrides(const char *path, char *const *ovr, size_t novr, struct recipe *r, FILE *err);

/* Index of the factor called name, or -1. */
long recipe_factor_index(const struct recipe *r, const char *name);
/* Level combinations of the design (every one, or the fraction's) that no
 * exclude rule matches (repeat not counted), without
 * walking the cube: the sub-cube of the factors the rules name times the
 * rest, when that costs at most budget rule checks, else inclusion-exclusion
 * over at most 16 rules. 0, or -1 when neither applies (or 2^64 overflows). */
int recipe_surviving(const struct recipe *r, uint64_t budget, uint64_t *out);
/* Index of a level of factor fi (canonical spelling accepted), or -1. */
long recipe_level_index(const struct recipe *r, size_t fi, const char *level);

/* Add to f what a command-line facet says: for a where, arg is
 * FACTOR=LEVEL[,LEVEL...] (a term of f.where; a second term for the same
 * factor narrows it); for panels, FACTOR[,FACTOR] (replacing f.panels).
 * Returns 0, or -1 with *why a message (allocated) naming what is wrong and
 * what would be right. */
int recipe_facet_arg(const struct recipe *r, const char *arg, int panels, struct report_facet *f, char **why);
/* Whether cell levels lv (nfactors level indexes) pass f's where terms. */
int recipe_facet_keeps(const struct report_facet *f, const size_t *lv);
void recipe_facet_free(struct report_facet *f);

/* Find the first {name} placeholder in s: returns a pointer to its '{' and
 * sets *len to the length of the whole placeholder, braces included, or
 * returns NULL when s has none. A placeholder is '{', one or more of
 * [A-Za-z0-9_.-], '}'; any other brace is literal text ("{}", "{\"a\": 1}").
 * recipe_load accepts only factor names and "result" as placeholder names. */
const char *recipe_placeholder(const char *s, size_t *len);

/* Print a located error in the format above (for other modules' checks). */
void recipe_error_at(const struct recipe *r, struct mark m, FILE *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
