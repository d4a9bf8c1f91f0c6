/* store.c - results.csv: read with libcsv, appended one fsync'd row at a time. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "result.h"
#include "store.h"
#include "util.h"

long store_lock_holder(const char *dir)
{
	char *path = xasprintf("%s/.lock", dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return 0;
	long pid = 0;
	struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
	if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK)
		pid = fl.l_pid > 0 ? (long)fl.l_pid : -1;
	close(fd);
	return pid;
}

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

/* Write table t to path whole (atomically), the rows of an older matrix
 * in this version's columns; says so on err. */
static int store_rewrite(const char *path, const struct table *t, FILE *err)
{
	struct strbuf sb = {0};
	csv_record(&sb, t->header, t->ncols);
	for (size_t i = 0; i < t->nrows; i++)
		csv_record(&sb, t->rows[i].cell, t->ncols);
	int rc = write_file_atomic(path, sb.buf, sb.len);
	sb_free(&sb);
	if (rc < 0)
		error_to(err, "cannot rewrite '%s' in this version's columns: %s", path, strerror(errno));
	else
		error_to(err, "'%s' was written by an older matrix: its %zu rows rewritten in this version's "
			      "columns (keys of `extra` that have a column now moved there)", path, t->nrows);
	return rc;
}

long store_column(const struct store *s, const char *name)
{
	for (size_t i = 0; i < s->ncols; i++)
		if (strcmp(s->header[i], name) == 0)
			return (long)i;
	return -1;
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
			error_to(err, "%s", why ? why : strerror(errno));
			free(why);
			goto fail;
		}
		/* rows of an older matrix: this version's columns, then rewritten */
		int upgraded = result_table_upgrade(&t) == 1;
		int same = t.ncols == s->ncols;
		for (size_t i = 0; same && i < t.ncols; i++)
			same = strcmp(t.header[i], s->header[i]) == 0;
		if (same && upgraded && store_rewrite(s->path, &t, err) < 0) {
			table_free(&t);
			goto fail;
		}
		table_free(&t);
		if (!same) {
			error_to(err, "'%s' has other columns than this recipe's results", s->path);
			goto fail;
		}
		if (torn >= 0) { /* a rewrite left it out already */
			if (!upgraded && truncate(s->path, torn) < 0) {
				error_to(err, "cannot cut the torn last row of '%s': %s", s->path,
					strerror(errno));
				goto fail;
			}
			error_to(err, "discarded a torn last row of '%s'", s->path);
		}
		s->fd = open(s->path, O_WRONLY | O_APPEND | O_CLOEXEC);
	} else {
		struct strbuf sb = {0};
		csv_record(&sb, s->header, s->ncols);
		if (write_file_atomic(s->path, sb.buf, sb.len) < 0) {
			error_to(err, "cannot write '%s': %s", s->path, strerror(errno));
			sb_free(&sb);
			goto fail;
		}
		sb_free(&sb);
		s->fd = open(s->path, O_WRONLY | O_APPEND | O_CLOEXEC);
	}
	if (s->fd < 0) {
		error_to(err, "cannot open '%s': %s", s->path, strerror(errno));
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

int store_row_write(struct store *s, const char *dir, const char *id, char *const *cells)
{
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	for (char *c = host; *c; c++)
		if (*c == '/')
			*c = '_';
	char *rows = xasprintf("%s/rows", dir);
	char *path = result_row_path(dir, id);
	char *tmp = xasprintf("%s/.%s.%s.%ld.tmp", rows, id, host, (long)getpid());
	struct strbuf sb = {0};
	csv_record(&sb, s->header, s->ncols);
	csv_record(&sb, cells, s->ncols);
	int rc = -1, fd = -1;
	if (mkdir_p(rows, 0755) < 0)
		goto out;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		goto out;
	if (write_all(fd, sb.buf, sb.len) < 0 || fsync(fd) < 0 || close(fd) < 0) {
		fd = -1;
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) < 0)
		goto out;
	/* the rename itself durable: the directory fsync'd */
	int dfd = open(rows, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	rc = 0;
out:;
	int e = errno;
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		unlink(tmp);
	free(tmp);
	free(path);
	free(rows);
	sb_free(&sb);
	errno = e;
	return rc;
}

long store_merge_rows(struct store *s, const char *dir, int (*seen)(const char *id, void *ctx),
		      void (*merged)(const struct row *row, void *ctx), void *ctx, FILE *err)
{
	char *rows = xasprintf("%s/rows", dir);
	DIR *d = opendir(rows);
	free(rows);
	if (!d)
		return 0;
	long n = 0;
	for (struct dirent *e; n >= 0 && (e = readdir(d));) {
		char id[17];
		if (!result_row_file_id(e->d_name, id))
			continue;
		char *path = result_row_path(dir, id);
		if (seen(id, ctx)) {
			unlink(path);
			free(path);
			continue;
		}
		struct table t;
		long torn;
		char *why = NULL;
		int same = table_read(path, &t, &torn, &why) == 0;
		if (!same) {
			error_to(err, "cannot read '%s': %s", path, why ? why : strerror(errno));
			free(why);
			free(path);
			continue;
		}
		result_table_upgrade(&t); /* a task of an older matrix */
		same = t.ncols == s->ncols && t.nrows == 1 && torn < 0;
		for (size_t i = 0; same && i < t.ncols; i++)
			same = strcmp(t.header[i], s->header[i]) == 0;
		same = same && strcmp(t.rows[0].cell[0], id) == 0;
		if (!same) {
			error_to(err, "'%s' is not one row of this run's results: left as it is", path);
		} else if (store_append(s, t.rows[0].cell) < 0) {
			n = -1;
		} else {
			merged(&t.rows[0], ctx);
			unlink(path);
			n++;
		}
		table_free(&t);
		free(path);
	}
	closedir(d);
	return n;
}

char **store_subsets_read(const char *dir, size_t *n)
{
	char *path = xasprintf("%s/" STORE_SUBSETS, dir), *why = NULL;
	struct table t;
	char **out = NULL;
	*n = 0;
	int rc = table_read(path, &t, NULL, &why);
	free(why);
	free(path);
	if (rc != 0)
		return NULL;
	long c = table_column(&t, "only");
	if (c >= 0 && t.nrows) {
		out = xcalloc(t.nrows, sizeof(char *));
		for (size_t i = 0; i < t.nrows; i++)
			out[(*n)++] = xstrdup(t.rows[i].cell[c]);
	}
	table_free(&t);
	return out;
}

int store_subset_add(const char *dir, const char *only, FILE *err)
{
	if (!only)
		only = "";
	size_t n;
	char **have = store_subsets_read(dir, &n);
	int there = 0;
	for (size_t i = 0; i < n; i++) {
		there |= strcmp(have[i], only) == 0;
		free(have[i]);
	}
	free(have);
	if (there)
		return 0;
	char *path = xasprintf("%s/" STORE_SUBSETS, dir), *why = NULL;
	size_t len = 0;
	char *old = read_file_capped(path, 1 << 24, 1, &len, &why);
	free(why);
	struct strbuf sb = {0};
	if (old && len)
		sb_add(&sb, old, len);
	else
		sb_puts(&sb, "first_run,only\n");
	free(old);
	char when[64];
	time_t now = time(NULL);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S%z", localtime(&now));
	char *cells[2] = {when, (char *)only};
	csv_record(&sb, cells, 2);
	int rc = write_file_atomic(path, sb.buf, sb.len);
	if (rc < 0)
		fprintf(err, "matrix: cannot write '%s': %s\n", path, strerror(errno));
	sb_free(&sb);
	free(path);
	return rc;
}
