/* rtable.h - one table of a report (report_table.c), written as CSV,
 * Markdown or HTML. Knows nothing of runs or statistics: it holds text
 * cells. */
#ifndef MATRIX_REPORT_RTABLE_H
#define MATRIX_REPORT_RTABLE_H

#include <stddef.h>

struct strbuf;

struct rtable {
	char *name;           /* file name stem: tables/<name>.csv */
	char *title;
	char *caption;        /* may be NULL */
	size_t ncols;
	char **cols;
	size_t nrows, cap;
	char **cell;          /* nrows * ncols, NULL for empty */
	size_t *align_right;  /* ncols flags: numeric columns */
	unsigned char *sig;   /* ncols flags: measured numbers (or intervals "LO .. HI"),
			       * shown with 3 significant digits in Markdown and HTML
			       * (fmt_sig3); CSV keeps the cell */
	struct rtable_interval *iv; /* niv measured values with their 95% intervals */
	size_t niv;
};

/* Column value holds a measured number whose 95% interval's ends are in
 * columns lo and hi (lo == hi: one cell "LO .. HI"); the pages show the
 * three with the digits the ends need to read apart and on their side of
 * pivot (fmt_sig_range; NAN: none), so that the value never reads as
 * outside its interval. A value with two intervals takes the wider need. */
struct rtable_interval {
	size_t value, lo, hi;
	double pivot;
};

struct rtable *rtable_new(const char *name, const char *title, size_t ncols, const char *const *cols);
/* Append a row of ncols cells (copied; NULL for empty). */
void rtable_add(struct rtable *t, char *const *cells);
/* Append printf-formatted text to t's caption (none: the text alone). */
void rtable_caption_add(struct rtable *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Tie the value column to its interval's columns (struct rtable_interval);
 * the three must be sig columns. */
void rtable_interval(struct rtable *t, size_t value, size_t lo, size_t hi, double pivot);
int rtable_write_csv(const struct rtable *t, const char *path);
/* Markdown / HTML: at most max_rows rows (0: all), with a note of the rest;
 * a number in a `sig` column rounded to 3 significant digits. */
void rtable_markdown(const struct rtable *t, size_t max_rows, struct strbuf *sb);
void rtable_html(const struct rtable *t, size_t max_rows, struct strbuf *sb);
void rtable_free(struct rtable *t);
/* Escape text for HTML content and attribute values. */
void html_escape(struct strbuf *sb, const char *s);
/* Markdown text that renders as itself (cell: one table cell, on one line). */
void md_escape(struct strbuf *sb, const char *s, int cell);

#endif
