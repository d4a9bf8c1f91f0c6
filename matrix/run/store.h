/* store.h - results.csv: one row per finished point, appended with a single
 * write(2) and fsync'd, so that a runner killed at any moment leaves at most a
 * torn last line, which store_open discards.
 *
 * Columns, in order (header row first):
 *   id, index, repeat, <one column per factor, declared order>,
 *   status, reason, <result_columns...>, wall_s, extra, command
 *   (result.h lists result_columns: the engine's measurement, its quality,
 *   the phases outside the timed steps, accuracy, provenance)
 * status: ok | unsupported | failed | oom | timeout | crashed
 * extra:  every other key=value the engine wrote, as "key=value" joined by "; "
 *         (result_extra_add); keys that have a column are never there
 * command: the exact command line, shell-quoted, to reproduce the point by hand.
 * Empty cells are absent values. Written and read with libcsv through
 * ../table.h, the same way report reads them. */
#ifndef MATRIX_STORE_H
#define MATRIX_STORE_H

#include <stddef.h>
#include <stdio.h>

#include "table.h"
#include "plan/recipe.h"

struct store {
	int fd;
	char *path;
	size_t ncols;
	char **header;
};

/* Open DIR/results.csv for appending, creating it with the header for recipe
 * r when missing. An existing file must have the same header, or be one an
 * older matrix wrote for the same factors: that one is rewritten first in
 * this version's columns (result_table_upgrade), saying so on err. A torn
 * last line is truncated away. Returns 0, or -1 after printing why to err. */
int store_open(struct store *s, const char *dir, const struct recipe *r, FILE *err);
/* The index of column name, or -1. */
long store_column(const struct store *s, const char *name);
/* Append one row (ncols cells, NULL for empty) with one write and fsync. */
int store_append(struct store *s, char *const *cells);
/* Rewrite the file keeping only the rows for which keep(row, ctx) is true
 * (atomically: temporary file, fsync, rename). */
int store_filter(struct store *s, int (*keep)(const struct row *, void *), void *ctx);
void store_close(struct store *s);

/* Rows written apart, one file per finished point (the slurm executor's
 * tasks, `matrix run-point`): DIR/rows/ID.csv holds the header and the
 * point's one row, written to a temporary name of its own (host and pid)
 * and renamed into place, so that a reader on any machine of a shared
 * filesystem sees the whole file or none; a point run twice replaces its
 * file. The front end merges them into results.csv (store_merge_rows).
 * Their names: result_row_path, result_row_file_id (result.h). */
/* Write DIR/rows/ID.csv (cells as for store_append). Returns 0 or -1 (errno). */
int store_row_write(struct store *s, const char *dir, const char *id, char *const *cells);
/* Append the row of every DIR/rows/ID.csv not seen yet (seen(id, ctx) false)
 * to results.csv, call merged(row, ctx) for it, then remove the file; a file
 * of a point already seen is removed unread. A file that cannot be read whole
 * or has other columns is left and named on err. Returns the number of rows
 * merged, or -1 when results.csv could not be appended to. */
long store_merge_rows(struct store *s, const char *dir, int (*seen)(const char *id, void *ctx),
		      void (*merged)(const struct row *row, void *ctx), void *ctx, FILE *err);

/* DIR/subsets.csv: which parts of the grid the runs on a directory kept,
 * one row per distinct --only filter (columns first_run, the local time of
 * the first run with it, and only, the filter as given; empty: the whole
 * grid), in the order they were first used. plan.csv holds the last run's
 * points only; `matrix status` counts the whole grid and names these. */
#define STORE_SUBSETS "subsets.csv"
/* Add only (NULL: the whole grid) to DIR/subsets.csv unless it is there
 * (rewritten atomically). Returns 0, or -1 after printing why to err. */
int store_subset_add(const char *dir, const char *only, FILE *err);
/* The filters of DIR/subsets.csv ("" for the whole grid; caller frees each
 * and the array); NULL and *n = 0 when the file is missing or unreadable
 * (a directory of an older matrix). */
char **store_subsets_read(const char *dir, size_t *n);

/* The header for recipe r (caller frees each cell and the array). */
char **store_header(const struct recipe *r, size_t *ncols);

/* The pid of a runner holding DIR/.lock (a POSIX record lock: cmd_run.c's
 * lock_dir), 0 when none does, -1 when one does whose pid is unknown
 * (another host). Takes nothing, creates nothing. */
long store_lock_holder(const char *dir);

#endif
