/* model.h - a loaded run (report_load.c): the recipe, the metric, the cells
 * and the rows that produced no value, read from a run directory's
 * recipe.yaml and results.csv. Above cellset.h and quality.h; the tables,
 * figures and pages read a run only through this header. */
#ifndef MATRIX_REPORT_MODEL_H
#define MATRIX_REPORT_MODEL_H

#include <stddef.h>
#include <stdio.h>

#include "cellset.h"
#include "plan/recipe.h"
#include "quality.h"
#include "table.h"

/* ---- metrics ------------------------------------------------------------- */

struct metric {
	char *name;           /* results.csv column or `extra` key */
	int higher_better;    /* 1: throughput-like, 0: time- or memory-like */
	char *unit;           /* "samples/s", "ms", "MiB", ... ("" when unknown) */
	double scale;         /* multiply stored values by this for display */
	int has_ci;           /* 1 when step_ms_lo/hi give its confidence interval (throughput,
	                       * step_ms, tflops, pct_peak; wall_time: `matrix time`'s
	                       * median run, whose interval they are too) */
};

/* Describe the metric called name; unit_hint is the `unit` column of a row
 * (used for throughput), may be NULL. Free with metric_free. */
void metric_describe(struct metric *m, const char *name, const char *unit_hint);
void metric_free(struct metric *m);
/* "throughput (samples/s)" into a static buffer. */
const char *metric_label(const struct metric *m);

/* ---- a loaded run ---------------------------------------------------------- */

struct failure {
	char *id;
	char **levels;        /* nfactors level names as written */
	char *status;         /* ok (but no metric) | unsupported | failed | ... */
	char *reason;
};

struct run {
	char *dir;
	struct recipe recipe;
	struct metric metric;
	struct cellset cells;
	size_t rows;          /* rows read from results.csv */
	size_t ok_rows;       /* rows with status ok and a metric */
	size_t nfailures;
	struct failure *failures;
	long torn_offset;     /* >= 0 when the last line was torn (run going) */
	char *command_example;/* the command of the first ok row, or NULL */
	size_t *ref;          /* reference level per factor (baseline, else 0) */
	long *base_level;     /* baseline level per factor, -1 where free */
	size_t *group;        /* factors that define best-per-group groups */
	size_t ngroup;
	struct quality quality;
	size_t max_rep;       /* the most processes any point was measured in */
	size_t epoch_rows[2]; /* metric epoch_time: ok rows from dataset_size /
	                       * throughput [0], from the engine's epoch_s [1] */
	size_t nnotes;        /* runs merged (report_merge.c): what the merge did and */
	char **notes;         /* what differs between the runs, "warning: ..." first */
	struct table table;   /* results.csv as read (this version's columns; a merged
			       * directory's rows with machine and merge_source): each
			       * point's command and environment for export */
};

/* Load DIR (recipe.yaml, results.csv). metric: NULL for the recipe's.
 * Returns 0; 2 after printing why to err. */
int run_load(struct run *run, const char *dir, const char *metric, FILE *err);
/* As run_load, with a merged directory's notes printed to notes instead of
 * err (NULL: kept in run->notes only, for a caller that prints them). */
int run_load_notes(struct run *run, const char *dir, const char *metric, FILE *err, FILE *notes);
void run_free(struct run *run);
/* "model=resnet50 batch=64" for the factors of cell c whose index is listed in
 * fs (all factors when fs is NULL), into sb. */
struct strbuf;
void run_cell_label(const struct run *run, size_t c, const size_t *fs, size_t nf,
		    const char *sep, struct strbuf *sb);
const char *run_level(const struct run *run, size_t f, size_t l);
/* Whether the engine ignored factor f at cell c: its first row's `ignored`
 * (comma-separated knobs) names f whole ("compile:autotune" is a part of
 * compile that was ignored, not compile). The level of such a factor
 * changes nothing that ran at that point. */
int run_cell_ignored(const struct run *run, size_t c, size_t f);
/* The CSV header's cells [first, first + nfactors) of a header of ncells
 * cells (the others set before the call): the factors' names, each
 * allocated (the caller frees them); a factor named as another column of
 * the header is "factors.NAME", its path in the JSON exports, so that no
 * two columns share a name (matrix export, matrix compare). */
void run_factor_header(const struct run *run, char **cell, size_t ncells, size_t first);

/* ---- runs merged (report_merge.c) ------------------------------------------ */

/* A merged directory (matrix merge) holds MERGE_FILE, naming its runs
 * ("run: runs/N FROM", copies of the runs in DIR/runs/N), and is loaded by
 * run_load as one run whose recipe has the factor `machine` added. */
#define MERGE_FILE "merge.txt"
int merge_is_dir(const char *dir);
/* The runs of merged directory dir: their directories and the names they had
 * (allocated; *n of each). Returns 0, or -1 after printing why to err. */
int merge_dir_sources(const char *dir, char ***subdirs, char ***names, size_t *n, FILE *err);
struct table;
/* Load the runs dirs[0..n-1] (called names[i] in messages) as one: into
 * run->recipe the first run's recipe on the factors they share (each with
 * the levels of all of them) plus `machine`; into t their rows with the
 * columns machine and merge_source (the run's number); into run->notes what
 * differs between them, each also printed to notes unless it is NULL.
 * run must be zeroed. Returns 0, or -1 after printing why to err. */
int merge_load(struct run *run, char *const *dirs, char *const *names, size_t n, struct table *t,
	       FILE *err, FILE *notes);
/* Write the merged directory out (missing or empty) of the runs dirs[0..n-1]:
 * merge.txt, env.txt (theirs, one after the other), runs/N (recipe.yaml,
 * results.csv, env.txt, plan.csv, logs/, profiles/). Nothing is written when
 * the runs cannot be merged. notes as for merge_load. Returns 0, or 2 after
 * printing why to err. */
int merge_write(const char *out, char *const *dirs, size_t n, FILE *err, FILE *notes);

#endif
