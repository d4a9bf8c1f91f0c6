/* quality.h - how trustworthy the measurements of a run are (quality.c): CI
 * targets missed, repeats that disagree, oversubscription, throttling, busy
 * machines, read row by row from results.csv. Used by the report's pages and
 * by `matrix run`'s closing line. Above stats.h only. */
#ifndef MATRIX_REPORT_QUALITY_H
#define MATRIX_REPORT_QUALITY_H

#include <stddef.h>

#include "plan/recipe.h"

struct table;
struct quality_note {
	char *id;
	char *label;          /* the point's levels, "model=x batch=1" */
	char *what;           /* why it is listed */
};
struct quality {
	size_t ok_rows;
	size_t ci_known;      /* ok rows that say whether they met the CI target */
	size_t ci_missed;     /* ... and did not */
	size_t disagree;      /* points whose repeats disagree beyond their CIs */
	size_t oversub;       /* rows run with concurrent points x threads > cores */
	size_t throttled;     /* rows whose GPU throttled */
	size_t busy;          /* rows started with a load average above the cores */
	size_t diverged;      /* training rows whose loss is not finite (nan, inf) */
	size_t fell_back;     /* rows of device auto that ran on the cpu beside a GPU */
	double rel_ci_target; /* the recipe's measure.rel_ci (fraction) */
	double load_min, load_max;        /* load average at start; NaN unknown */
	double mhz_min, mhz_max;          /* CPU clock at start and end, MHz */
	double gpu_mhz_min, gpu_mhz_max;  /* GPU SM clock at start and end, MHz */
	double gpu_temp_max;              /* GPU temperature, degrees C */
	size_t nnotes;
	struct quality_note *notes;
	/* node types: each ok row's GPU name (key `gpu`) and CPU name (`cpu`) */
	size_t ntypes;
	char **types;         /* "NVIDIA H100 80GB HBM3 / AMD EPYC 9654", distinct */
	size_t *type_rows;    /* ok rows per type */
	size_t nmixed;
	char **mixed;         /* per factor whose levels ran on different node types:
	                       * "batch: 32 on A; 64 on B" */
};
/* Look at the rows of results.csv t that are the study's: keep[r] set (NULL:
 * every row) and every factor at a level of recipe rc. A row left over from
 * another recipe (--resume --allow-changed with fewer levels) is not a
 * point of the report, and its quality is not the study's. */
void quality_scan(const struct table *t, const struct recipe *rc, const unsigned char *keep,
		  struct quality *q);
/* "measurement quality: 3 of 64 measured rows missed ..." (no newline). */
struct strbuf;
void quality_summary(const struct quality *q, struct strbuf *sb);
void quality_free(struct quality *q);
/* A row's value of key: its column, else the key in its `extra` cell; NULL
 * when absent or empty (allocated). */
char *table_value(const struct table *t, size_t r, const char *key);
/* The same as a finite number: 0, or -1 when absent or not a number. */
int table_number(const struct table *t, size_t r, const char *key, double *out);

#endif
