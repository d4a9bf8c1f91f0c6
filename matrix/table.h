/* table.h - the cells of a CSV file such as results.csv (see run/store.h for its
 * columns): read whole with libcsv, written one record at a time. The base of
 * both run (which appends rows) and report (which reads them). */
#ifndef MATRIX_TABLE_H
#define MATRIX_TABLE_H

#include <stddef.h>

struct row {
	size_t n;
	char **cell;          /* n cells */
};

struct table {
	size_t ncols;
	char **header;
	size_t nrows;
	struct row *rows;
};

/* Read a whole CSV file (header + rows) with libcsv. A last line that is not
 * terminated by a newline, or has the wrong number of cells, is "torn": it is
 * dropped and *torn_offset is set to the byte offset where it starts (else -1).
 * Returns 0, or -1 with errno set / a message in *why. */
int table_read(const char *path, struct table *t, long *torn_offset, char **why);
long table_column(const struct table *t, const char *name);
const char *table_cell(const struct table *t, size_t row, const char *col);
void table_free(struct table *t);

/* Write one CSV record (cells may be NULL for empty) to a buffer, newline
 * terminated, quoting as needed. */
struct strbuf;
void csv_record(struct strbuf *sb, char *const *cells, size_t n);
/* The same for a spreadsheet (export and compare --format csv): a cell that
 * is not a number and starts with = + - @, a tab or a carriage return (a
 * formula to Excel, LibreOffice or Google Sheets) gets a leading apostrophe,
 * which they show as text. results.csv is never written so. */
void csv_sheet_record(struct strbuf *sb, char *const *cells, size_t n);

#endif
