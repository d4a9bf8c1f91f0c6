/* table.c - results.csv's cells: read a whole CSV file with libcsv (a torn last
 * line dropped), write one record. Shared by run (store.c appends rows) and
 * report (which reads them back), so that report needs nothing from run. */
#include "config.h"

#include <csv.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"
#include "util.h"

/* --- reading ------------------------------------------------------------------- */

struct reader {
	struct table *t;
	struct row cur;
	int header_done;
	size_t rows_seen;   /* rows completed, header included */
	size_t bad_row;     /* 1-based record number of the first row with a wrong cell count */
	size_t bad_cells;
};

static void on_cell(void *s, size_t n, void *data)
{
	struct reader *rd = data;
	rd->cur.cell = xrealloc(rd->cur.cell, (rd->cur.n + 1) * sizeof(char *));
	rd->cur.cell[rd->cur.n++] = xstrndup(s ? s : "", s ? n : 0);
}

static void free_row(struct row *row)
{
	for (size_t i = 0; i < row->n; i++)
		free(row->cell[i]);
	free(row->cell);
	row->cell = NULL;
	row->n = 0;
}

static void on_row(int c, void *data)
{
	struct reader *rd = data;
	struct table *t = rd->t;
	rd->rows_seen++;
	if (!rd->header_done) {
		t->header = rd->cur.cell;
		t->ncols = rd->cur.n;
		rd->header_done = 1;
	} else if (rd->cur.n != t->ncols) {
		if (!rd->bad_row) {
			rd->bad_row = rd->rows_seen;
			rd->bad_cells = rd->cur.n;
		}
		free_row(&rd->cur);
	} else {
		t->rows = xrealloc(t->rows, (t->nrows + 1) * sizeof(struct row));
		t->rows[t->nrows++] = rd->cur;
	}
	rd->cur.cell = NULL;
	rd->cur.n = 0;
}

int table_read(const char *path, struct table *t, long *torn_offset, char **why)
{
	memset(t, 0, sizeof(*t));
	*why = NULL;
	if (torn_offset)
		*torn_offset = -1;
	size_t len;
	char *bad = NULL;
	/* a results.csv received from elsewhere may be a FIFO or a device: opened
	 * without blocking, refused unless a regular file (16 GiB at most) */
	char *text = read_file_capped(path, (size_t)1 << 34, 0, &len, &bad);
	if (!text) {
		if (bad) {
			*why = xasprintf("'%s' %s", path, bad);
			free(bad);
		}
		return -1;
	}
	/* Cells never hold newlines (store_append replaces them), so a row is
	 * complete exactly when its newline was written: whatever follows the
	 * last newline is a torn row from a runner killed mid-write. */
	size_t complete = len;
	while (complete > 0 && text[complete - 1] != '\n')
		complete--;
	if (complete < len && torn_offset)
		*torn_offset = (long)complete;

	struct csv_parser p;
	if (csv_init(&p, CSV_APPEND_NULL) != 0) {
		free(text);
		*why = xstrdup("cannot initialise the CSV parser");
		return -1;
	}
	struct reader rd = {.t = t};
	int rc = 0;
	if (csv_parse(&p, text, complete, on_cell, on_row, &rd) != complete ||
	    csv_fini(&p, on_cell, on_row, &rd) != 0) {
		*why = xasprintf("'%s' is not valid CSV: %s", path, csv_strerror(csv_error(&p)));
		rc = -1;
	} else if (!rd.header_done) {
		*why = xasprintf("'%s' has no header row", path);
		rc = -1;
	} else if (rd.bad_row) {
		*why = xasprintf("'%s' row %zu has %zu cells, the header has %zu", path, rd.bad_row,
				 rd.bad_cells, t->ncols);
		rc = -1;
	}
	free_row(&rd.cur);
	csv_free(&p);
	free(text);
	if (rc < 0)
		table_free(t);
	return rc;
}

long table_column(const struct table *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (strcmp(t->header[i], name) == 0)
			return (long)i;
	return -1;
}

const char *table_cell(const struct table *t, size_t row, const char *col)
{
	long c = table_column(t, col);
	return c < 0 || row >= t->nrows ? NULL : t->rows[row].cell[c];
}

void table_free(struct table *t)
{
	for (size_t r = 0; r < t->nrows; r++)
		free_row(&t->rows[r]);
	free(t->rows);
	for (size_t i = 0; i < t->ncols; i++)
		free(t->header[i]);
	free(t->header);
	memset(t, 0, sizeof(*t));
}

/* --- writing ------------------------------------------------------------------- */

static int needs_quotes(const char *s)
{
	if (!*s)
		return 0;
	if (s[0] == ' ' || s[strlen(s) - 1] == ' ')
		return 1;
	return strpbrk(s, ",\"\r\n") != NULL;
}

void csv_record(struct strbuf *sb, char *const *cells, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			sb_putc(sb, ',');
		const char *c = cells[i] ? cells[i] : "";
		char *clean = NULL;
		if (strpbrk(c, "\r\n")) { /* one row is one line: see table_read */
			clean = xstrdup(c);
			for (char *p = clean; *p; p++)
				if (*p == '\r' || *p == '\n')
					*p = ' ';
			c = clean;
		}
		size_t len = strlen(c);
		if (needs_quotes(c)) {
			size_t need = csv_write(NULL, 0, c, len);
			char *q = xmalloc(need);
			csv_write(q, need, c, len);
			sb_add(sb, q, need);
			free(q);
		} else {
			sb_add(sb, c, len);
		}
		free(clean);
	}
	sb_putc(sb, '\n');
}

/* A cell for a spreadsheet: text that starts with = + - @ (or a tab or a
 * carriage return) would be read as a formula by Excel, LibreOffice or
 * Google Sheets, so it gets a leading apostrophe, which they show as text;
 * a number ("-1.5") is left as it is. Returns s or an allocated copy in
 * *copy. */
static char *sheet_cell(const char *s, char **copy)
{
	double v;
	*copy = NULL;
	if (!s || !strchr("=+-@\t\r", *s) || !*s || parse_double(s, &v) == 0)
		return (char *)s;
	*copy = xasprintf("'%s", s);
	return *copy;
}

void csv_sheet_record(struct strbuf *sb, char *const *cell, size_t n)
{
	char **copies = xcalloc(n, sizeof(char *)), **safe = xcalloc(n, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		safe[i] = sheet_cell(cell[i], &copies[i]);
	csv_record(sb, safe, n);
	for (size_t i = 0; i < n; i++)
		free(copies[i]);
	free(copies);
	free(safe);
}
