/* result.h - the engine contract's result record: key=value lines written by
 * an engine (any engine, any language) to the file named by --result / {result}
 * / $MATRIX_RESULT. See DESIGN.md, "Engine contract". */
#ifndef MATRIX_RESULT_H
#define MATRIX_RESULT_H

#include <stddef.h>

struct strbuf;

struct kv {
	char *key;
	char *value;
};

struct result {
	size_t n;
	struct kv *kv;
};

/* Parse a result file. Returns 0 on success; -1 when the file is missing
 * (errno set); -2 when it is garbled, with *why set to a static or allocated
 * description ("line 3 has no '='") that the caller frees with free(). */
int result_read(const char *path, struct result *res, char **why);
/* The value of key, or NULL. */
const char *result_get(const struct result *res, const char *key);
/* Set key to value: 1 when it replaced a value key had, else 0. */
int result_set(struct result *res, const char *key, const char *value);
void result_free(struct result *res);

/* Why the text of metric `name` is not a usable measurement: NULL when it is
 * a positive finite number, else "throughput is NaN", "... is infinite",
 * "... is negative (-3)", "... is zero", "... 'x' is not a number"
 * (allocated). A NaN, infinite or negative value makes a failed measurement:
 * it is never averaged in. */
char *result_bad_value(const char *name, const char *text);
/* Check the numbers of an ok result (throughput, step_ms and its CI): NULL,
 * or the first reason as result_bad_value gives it. */
char *result_check(const struct result *res);
/* Fill in what can be derived: rel_ci (the 95% CI half-width of the median
 * step over the median, as a fraction) from step_ms and step_ms_lo/hi, and
 * ci_met (1 when rel_ci <= target) when the engine did not write them. */
void result_derive(struct result *res, double rel_ci_target);

/* results.csv's `extra` cell: "key=value; key=value" of the keys that have
 * no column. A value is written with '%' as %25, ';' as %3B and a space at
 * its start or end as %20, so that it reads back exactly whatever it holds
 * (keys are result_read's: letters, digits, '_', '.', '-'). */
void result_extra_add(struct strbuf *sb, const char *key, const char *value);
/* The value of key in an `extra` cell, decoded (allocated), or NULL. */
char *result_extra_get(const char *extra, const char *key);

/* Decode a whole `extra` cell into res (its keys in order). Returns 0, or
 * -1 when a pair has no '=' or an invalid key (res then empty). */
int result_extra_parse(const char *extra, struct result *res);

/* The metric columns of results.csv, in order (see store.h): the engine
 * contract's keys (every engine writes the first ones; the native engine
 * adds flops and the peak), measurement quality, the phases outside the
 * timed steps, the accuracy of the PyTorch engine's runtimes, and the
 * runner's provenance of each row. The keys of an engine that have no
 * column go to `extra`. */
extern const char *const result_columns[];
extern const size_t result_ncolumns;
/* The index of key in result_columns, or -1. */
long result_column_index(const char *key);

/* A results.csv (or rows/ID.csv) read whole by table_read, written by an
 * older matrix: rewritten in memory to this version's columns. Every column
 * it lacks is filled from the key of that name in the row's `extra` cell,
 * which then no longer holds it (older versions kept every key without a
 * column there), else left empty; its own columns keep their cells.
 * Returns 1 when it changed t, 0 when t already has this version's columns,
 * -1 when t is not a results table this version can read (unknown columns,
 * say of a newer version), t unchanged. */
struct table;
int result_table_upgrade(struct table *t);

/* Rows written apart, one file per finished point (the slurm executor's
 * tasks, `matrix run-point`): DIR/rows/ID.csv (run/store.h writes and merges
 * them; status and report read which are there). The path of point id's: */
char *result_row_path(const char *dir, const char *id);
/* Whether name, an entry of DIR/rows/, is a point's row file ID.csv (16
 * lower-case hex digits, ".csv"); then its id in id. */
int result_row_file_id(const char *name, char id[17]);

#endif
