/* report_table.c - struct rtable: one table of the report, held as strings,
 * written as CSV (tables/<name>.csv), Markdown (report.md) and HTML. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtable.h"
#include "table.h"
#include "util.h"

struct rtable *rtable_new(const char *name, const char *title, size_t ncols, const char *const *cols)
{
	struct rtable *t = xcalloc(1, sizeof(*t));
	t->name = xstrdup(name);
	t->title = xstrdup(title);
	t->ncols = ncols;
	t->cols = xmalloc(ncols * sizeof(char *));
	for (size_t i = 0; i < ncols; i++)
		t->cols[i] = xstrdup(cols[i]);
	t->align_right = xcalloc(ncols, sizeof(size_t));
	t->sig = xcalloc(ncols ? ncols : 1, 1);
	return t;
}

void rtable_caption_add(struct rtable *t, const char *fmt, ...)
{
	size_t len = t->caption ? strlen(t->caption) : 0;
	struct strbuf sb = {.buf = t->caption, .len = len, .cap = t->caption ? len + 1 : 0};
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(&sb, fmt, ap);
	va_end(ap);
	t->caption = sb.buf;
}

void rtable_add(struct rtable *t, char *const *cells)
{
	if (t->nrows == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->cell = xrealloc(t->cell, t->cap * t->ncols * sizeof(char *));
	}
	for (size_t i = 0; i < t->ncols; i++)
		t->cell[t->nrows * t->ncols + i] = cells[i] ? xstrdup(cells[i]) : NULL;
	t->nrows++;
}

void rtable_interval(struct rtable *t, size_t value, size_t lo, size_t hi, double pivot)
{
	if (value >= t->ncols || lo >= t->ncols || hi >= t->ncols || !t->sig[value] || !t->sig[lo] || !t->sig[hi])
		BUG("rtable_interval: columns %zu, %zu, %zu of %s", value, lo, hi, t->name);
	t->iv = xrealloc(t->iv, (t->niv + 1) * sizeof(*t->iv));
	t->iv[t->niv++] = (struct rtable_interval){value, lo, hi, pivot};
}

/* tables/<name>.csv is opened in spreadsheets: a cell (a factor level, a
 * setting) that would run there as a formula is text (csv_sheet_record). */
int rtable_write_csv(const struct rtable *t, const char *path)
{
	struct strbuf sb = {0};
	csv_sheet_record(&sb, t->cols, t->ncols);
	for (size_t r = 0; r < t->nrows; r++)
		csv_sheet_record(&sb, &t->cell[r * t->ncols], t->ncols);
	int rc = write_file_atomic(path, sb.buf ? sb.buf : "", sb.len);
	sb_free(&sb);
	return rc;
}

static int word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || (c & 0x80);
}

/* Markdown text that renders as itself: control characters and invalid
 * UTF-8 cleaned (text_clean; in a table cell a newline too, else newlines
 * kept), a backslash before every character that could start markup inline
 * (\ ` [ ] < > |; * ~ _ unless between spaces, _ inside a word neither; &
 * before a letter, a digit or #: no link, image, HTML, entity, emphasis, code
 * span or table cell ends early) and, outside a cell, before a line's first
 * character when it could start a block (# - + = > or a number followed by
 * . or )). */
void md_escape(struct strbuf *sb, const char *s, int cell)
{
	if (!s)
		return;
	char *clean = cell ? text_clean(s, strlen(s), 0) : text_clean_lines(s, strlen(s));
	for (const char *c = clean; *c; c++) {
		/* a cell is inline: no block starts in it ("9.51" stays as it is) */
		int line_start = !cell && (c == clean || c[-1] == '\n');
		if (line_start && strchr("#-+=>", *c))
			sb_putc(sb, '\\');
		if (line_start && *c >= '0' && *c <= '9') {
			const char *d = c;
			while (*d >= '0' && *d <= '9')
				d++;
			if (*d == '.' || *d == ')') {
				sb_add(sb, c, (size_t)(d - c));
				sb_putc(sb, '\\');
				c = d;
			}
		}
		int spaced = (c == clean || c[-1] == ' ' || c[-1] == '\n') && (!c[1] || c[1] == ' ' || c[1] == '\n');
		if (strchr("\\`[]<>|", *c) || (strchr("*~", *c) && !spaced) ||
		    (*c == '_' && !spaced && (c == clean || !word_char(c[-1]) || !word_char(c[1]))) ||
		    (*c == '&' && (word_char(c[1]) || c[1] == '#')))
			sb_putc(sb, '\\');
		sb_putc(sb, *c);
	}
	free(clean);
}

/* The ends of cell text "LO .. HI"; 0 when it is not two numbers. */
static int parse_range(const char *c, double *lo, double *hi)
{
	const char *dots = c ? strstr(c, " .. ") : NULL;
	if (!dots)
		return 0;
	char *a = xstrndup(c, (size_t)(dots - c));
	int ok = parse_double(a, lo) == 0 && parse_double(dots + 4, hi) == 0;
	free(a);
	return ok;
}

/* The significant digits row r's cell in column i takes as part of a value
 * and its intervals (rtable_interval): the most that the ends of any
 * interval of that value need; 0 when column i has none, or no interval's
 * ends are numbers in this row. */
static int interval_digits(const struct rtable *t, size_t r, size_t i)
{
	const char *const *row = (const char *const *)&t->cell[r * t->ncols];
	int p = 0;
	for (size_t k = 0; k < t->niv; k++) {
		const struct rtable_interval *a = &t->iv[k];
		if (a->value != i && a->lo != i && a->hi != i)
			continue;
		for (size_t j = 0; j < t->niv; j++) {
			const struct rtable_interval *b = &t->iv[j];
			double lo, hi;
			if (b->value != a->value)
				continue;
			int ok = b->lo == b->hi ? parse_range(row[b->lo], &lo, &hi)
						: row[b->lo] && row[b->hi] && parse_double(row[b->lo], &lo) == 0 &&
						      parse_double(row[b->hi], &hi) == 0;
			int d = ok ? fmt_sig_range_digits(lo, hi, b->pivot) : 0;
			if (d > p)
				p = d;
		}
	}
	return p;
}

/* Cell r, i as a page shows it: a number of a sig column, or both ends of
 * an interval "LO .. HI" there, with 3 significant digits (more where the
 * ends would read the same or as at 1: fmt_sig_range; a value and its
 * interval's ends with the same digits: rtable_interval); anything else
 * as it is. buf holds at least 80 bytes. */
static const char *shown(const struct rtable *t, size_t r, size_t i, char *buf)
{
	const char *c = t->cell[r * t->ncols + i];
	double v, w;
	if (!c || !t->sig[i])
		return c;
	int p = interval_digits(t, r, i);
	if (parse_double(c, &v) == 0)
		return p ? fmt_sig_digits(buf, v, p) : fmt_sig3(buf, v);
	if (parse_range(c, &v, &w)) {
		char a[32], b[32];
		if (p) {
			fmt_sig_digits(a, v, p);
			fmt_sig_digits(b, w, p);
		} else {
			/* pivot 1: a gain's interval never reads as touching 1 when it does not */
			fmt_sig_range(a, b, v, w, 1.0);
		}
		snprintf(buf, 80, "%s .. %s", a, b);
		c = buf;
	}
	return c;
}

void rtable_markdown(const struct rtable *t, size_t max_rows, struct strbuf *sb)
{
	char buf[80];
	size_t n = max_rows && t->nrows > max_rows ? max_rows : t->nrows;
	sb_puts(sb, "|");
	for (size_t i = 0; i < t->ncols; i++) {
		sb_putc(sb, ' ');
		md_escape(sb, t->cols[i], 1);
		sb_puts(sb, " |");
	}
	sb_puts(sb, "\n|");
	for (size_t i = 0; i < t->ncols; i++)
		sb_puts(sb, t->align_right[i] ? " ---: |" : " --- |");
	sb_putc(sb, '\n');
	for (size_t r = 0; r < n; r++) {
		sb_puts(sb, "|");
		for (size_t i = 0; i < t->ncols; i++) {
			sb_putc(sb, ' ');
			md_escape(sb, shown(t, r, i, buf), 1);
			sb_puts(sb, " |");
		}
		sb_putc(sb, '\n');
	}
	if (n < t->nrows)
		sb_printf(sb, "\n%zu more rows in [tables/%s.csv](tables/%s.csv).\n", t->nrows - n,
			  t->name, t->name);
}

/* Escape text for HTML element content and attribute values; control
 * characters and invalid UTF-8 cleaned first (text_clean, newlines kept). */
void html_escape(struct strbuf *sb, const char *s)
{
	if (!s)
		return;
	char *clean = text_clean_lines(s, strlen(s));
	for (s = clean; *s; s++) {
		switch (*s) {
		case '&': sb_puts(sb, "&amp;"); break;
		case '<': sb_puts(sb, "&lt;"); break;
		case '>': sb_puts(sb, "&gt;"); break;
		case '"': sb_puts(sb, "&quot;"); break;
		default: sb_putc(sb, *s);
		}
	}
	free(clean);
}

void rtable_html(const struct rtable *t, size_t max_rows, struct strbuf *sb)
{
	char buf[80];
	size_t n = max_rows && t->nrows > max_rows ? max_rows : t->nrows;
	sb_printf(sb, "<table id=\"table-%s\">\n<thead><tr>", t->name);
	for (size_t i = 0; i < t->ncols; i++) {
		sb_puts(sb, t->align_right[i] ? "<th class=\"num\">" : "<th>");
		html_escape(sb, t->cols[i]);
		sb_puts(sb, "</th>");
	}
	sb_puts(sb, "</tr></thead>\n<tbody>\n");
	for (size_t r = 0; r < n; r++) {
		sb_puts(sb, "<tr>");
		for (size_t i = 0; i < t->ncols; i++) {
			sb_puts(sb, t->align_right[i] ? "<td class=\"num\">" : "<td>");
			html_escape(sb, shown(t, r, i, buf));
			sb_puts(sb, "</td>");
		}
		sb_puts(sb, "</tr>\n");
	}
	sb_puts(sb, "</tbody>\n</table>\n");
	if (n < t->nrows)
		sb_printf(sb, "<p class=\"more\">%zu more rows in <a href=\"tables/%s.csv\">tables/%s.csv</a>.</p>\n",
			  t->nrows - n, t->name, t->name);
}

void rtable_free(struct rtable *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cell[i]);
	for (size_t i = 0; i < t->ncols; i++)
		free(t->cols[i]);
	free(t->cell);
	free(t->cols);
	free(t->align_right);
	free(t->sig);
	free(t->iv);
	free(t->name);
	free(t->title);
	free(t->caption);
	free(t);
}
