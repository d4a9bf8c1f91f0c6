/* progress.h - what `matrix run` shows while and after it runs (progress.c):
 * the progress line on a terminal, fitted to its width and naming only the
 * factors that vary; a line per finished point; the closing counts, which say
 * whether they count this invocation or the run directory; and the summary in
 * hyperfine's spirit: the best point of each group and its gain over the
 * baseline with the 95% interval, from the report's own statistics
 * (report/effects.h's best_compute over the loaded run). */
#ifndef MATRIX_RUN_PROGRESS_H
#define MATRIX_RUN_PROGRESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "plan/recipe.h"

struct strbuf;

struct progress {
	int tty;                  /* stderr is a terminal: the progress line is drawn there */
	int out_tty;              /* stdout is a terminal: its lines are fitted to its width */
	uint64_t total;           /* points of the plan (those --only keeps) */
	uint64_t done;            /* of them, with a row in the directory */
	uint64_t todo_at_start;   /* total - done when this invocation began */
	uint64_t done_now;        /* points this invocation finished ... */
	uint64_t ok, unsupported, failed; /* ... by status */
	double start;             /* monotonic seconds */
	size_t nfactors;
	size_t *first;            /* per factor: the level of the first point counted */
	unsigned char *varies;    /* per factor: 1 when the points have more than one level */
	int repeats;              /* the plan has repeats: their number is shown */
	int metric_warned;        /* an ok point without report.metric was said */
};

/* An empty progress for a recipe of nfactors factors; whether stdout and
 * stderr are terminals. */
void progress_init(struct progress *pg, size_t nfactors);
void progress_free(struct progress *pg);
/* Count a point of the plan (level: its level per factor; repeat: its
 * repeat): which factors vary among the points counted. */
void progress_count(struct progress *pg, const size_t *level, unsigned repeat);

/* The width of the terminal on fd in columns: TIOCGWINSZ, else $COLUMNS,
 * else 80. */
size_t term_columns(int fd);
/* text made fit for a terminal line of cols columns (allocated): control
 * characters escaped (text_clean), tabs as spaces, and cut on a character
 * boundary to at most cols - 1 columns (a column per character), the cut
 * marked by "..." at its end. */
char *term_fit(const char *text, size_t cols);

/* text made fit for a terminal of cols columns (allocated): escaped as by
 * term_fit and wrapped at spaces into lines of at most cols - 1 columns
 * (a word longer than that cut), each continued line indented. */
char *term_wrap(const char *text, size_t cols);
/* Print text as a line to stdout, wrapped to its width when it is a
 * terminal (term_wrap), else whole (control characters escaped). */
void progress_print(const struct progress *pg, const char *text);

/* "name=level name=level" of the factors that vary (all factors when all is
 * set), levels[f] the level of factor f, " repeat=N" after when repeat is
 * neither NULL nor "0". */
void progress_label(const struct progress *pg, const struct recipe *r, const char *const *levels,
		    const char *repeat, int all, struct strbuf *sb);

/* The progress line (on a terminal only): points done of the total, this
 * invocation's ok and failed, elapsed and ETA, and current (what just
 * started, or NULL), fitted to stderr's width. */
void progress_line(const struct progress *pg, const char *current);
/* Erase the progress line (on a terminal only). */
void progress_clear(const struct progress *pg);

/* A finished point, as the line printed for it. */
struct progress_point {
	const char *status;
	double wall_s;            /* seconds the process ran */
	const char *id;
	const char *const *levels; /* its level per factor */
	const char *repeat;       /* "0", "1", ... */
	const char *throughput, *unit; /* NULL when not measured */
	const char *metric_value; /* the recipe's report.metric when it is not
				   * throughput: its value as the result wrote it,
				   * NULL when it has none (epoch_time: derived) */
	const char *reason;       /* NULL when none */
};
/* Count a point this invocation finished and print its line to stdout:
 * "[3/8] ok           0.512 s  ID  FACTORS  throughput=... (reason)" with
 * every factor when stdout is no terminal; on a terminal "[3/8] ok  0.512 s
 * FACTORS  throughput=...  (reason)  ID" with the factors that vary, wrapped
 * to its width. The value shown is the recipe's metric (wall_time=0.0116 s,
 * peak_mem_bytes=24.5 MiB) where the result holds it, else throughput. A failure is also shown on stderr when only stderr is a
 * terminal. */
void progress_point(struct progress *pg, const struct recipe *r, const struct progress_point *pp);

/* The closing summary of run directory dir on stdout: the recipe's metric,
 * and for each group (report.md's "best configuration per group") its best
 * point, its value with the 95% interval and its gain over the baseline
 * with the 95% interval; at most max_groups groups, then how many more.
 * Nothing when no point has a value. */
void progress_summary(const struct progress *pg, const char *dir, size_t max_groups);

#endif
