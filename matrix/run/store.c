/* store.c - results.csv: read with libcsv, appended one fsync'd row at a time. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "result.h"
#include "store.h"
#include "util.h"

char **store_header(const struct recipe *r, size_t *ncols)
{
	size_t n = 3 + r->nfactors + 2 + result_ncolumns + 3, k = 0;
	char **h = xcalloc(n, sizeof(char *));
	h[k++] = xstrdup("id");
	h[k++] = xstrdup("index");
	h[k++] = xstrdup("repeat");
	for (size_t i = 0; i < r->nfactors; i++)
		h[k++] = xstrdup(r->factors[i].name);
	h[k++] = xstrdup("status");
	h[k++] = xstrdup("reason");
	for (size_t i = 0; i < result_ncolumns; i++)
		h[k++] = xstrdup(result_columns[i]);
	h[k++] = xstrdup("wall_s");
	h[k++] = xstrdup("extra");
	h[k++] = xstrdup("command");
	*ncols = k;
	return h;
}

static void free_cells(char **c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i]);
	free(c);
}

int store_open(struct store *s, const char *dir, const struct recipe *r, FILE *err)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->path = xasprintf("%s/results.csv", dir);
	s->header = store_header(r, &s->ncols);
	struct stat st;
	if (stat(s->path, &st) == 0 && st.st_size > 0) {
		struct table t;
		long torn;
		char *why;
		if (table_read(s->path, &t, &torn, &why) < 0) {
			fprintf(err, "matrix: %s\n", why ? why : strerror(errno));
			free(why);
			goto fail;
		}
		int same = t.ncols == s->ncols;
		for (size_t i = 0; same && i < t.ncols; i++)
			same = strcmp(t.header[i], s->header[i]) == 0;
		table_free(&t);
		if (!same) {
			fprintf(err, "matrix: '%s' has other columns than this recipe's results\n", s->path);
			goto fail;
		}
		if (torn >= 0) {
			if (truncate(s->path, torn) < 0) {
				fprintf(err, "matrix: cannot cut the torn last row of '%s': %s\n", s->path,
					strerror(errno));
				goto fail;
			}
			fprintf(err, "matrix: discarded a torn last row of '%s'\n", s->path);
		}
		s->fd = open(s->path, O_WRONLY | O_APPEND | O_CLOEXEC);
	} else {
		struct strbuf sb = {0};
		csv_record(&sb, s->header, s->ncols);
		if (write_file_atomic(s->path, sb.buf, sb.len) < 0) {
			fprintf(err, "matrix: cannot write '%s': %s\n", s->path, strerror(errno));
			sb_free(&sb);
			goto fail;
		}
		sb_free(&sb);
		s->fd = open(s->path, O_WRONLY | O_APPEND | O_CLOEXEC);
	}
	if (s->fd < 0) {
		fprintf(err, "matrix: cannot open '%s': %s\n", s->path, strerror(errno));
		goto fail;
	}
	return 0;
fail:
	store_close(s);
	return -1;
}

int store_append(struct store *s, char *const *cells)
{
	struct strbuf sb = {0};
	csv_record(&sb, cells, s->ncols);
	/* one write: a kill leaves the row whole or torn at the end, never interleaved */
	int rc = write_all(s->fd, sb.buf, sb.len);
	if (rc == 0)
		rc = fsync(s->fd);
	sb_free(&sb);
	return rc;
}

int store_filter(struct store *s, int (*keep)(const struct row *, void *), void *ctx)
{
	struct table t;
	char *why;
	if (table_read(s->path, &t, NULL, &why) < 0) {
		free(why);
		return -1;
	}
	struct strbuf sb = {0};
	csv_record(&sb, t.header, t.ncols);
	for (size_t i = 0; i < t.nrows; i++)
		if (keep(&t.rows[i], ctx))
			csv_record(&sb, t.rows[i].cell, t.ncols);
	table_free(&t);
	int rc = write_file_atomic(s->path, sb.buf, sb.len);
	sb_free(&sb);
	if (rc == 0) {
		close(s->fd);
		s->fd = open(s->path, O_WRONLY | O_APPEND | O_CLOEXEC);
		rc = s->fd < 0 ? -1 : 0;
	}
	return rc;
}

void store_close(struct store *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->path);
	s->path = NULL;
	if (s->header)
		free_cells(s->header, s->ncols);
	s->header = NULL;
}
