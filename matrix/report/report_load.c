/* report_load.c - a run directory as the report sees it: the recipe as run,
 * results.csv with repeats merged into cells (median), and every row that
 * cannot be shown (failed, unsupported, no metric) kept with its reason. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "plan/argv.h"
#include "plan/vocab.h"
#include "result.h"
#include "stats.h"
#include "table.h"
#include "util.h"

/* ---- metrics ------------------------------------------------------------------- */

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

void metric_describe(struct metric *m, const char *name, const char *unit_hint)
{
	memset(m, 0, sizeof(*m));
	m->name = xstrdup(name);
	m->higher_better = 1;
	m->scale = 1;
	const char *unit = "";
	if (strcmp(name, "throughput") == 0) {
		unit = unit_hint && *unit_hint ? unit_hint : "samples/s";
		m->has_ci = 1;
	} else if (strcmp(name, "epoch_time") == 0) {
		unit = "s";
		m->higher_better = 0;
		m->has_ci = 1;
	} else if (strcmp(name, "step_ms") == 0) {
		unit = "ms";
		m->higher_better = 0;
		m->has_ci = 1;
	} else if (strcmp(name, "wall_time") == 0) {
		/* `matrix time`'s median run: step_ms_lo/hi are its interval */
		unit = "s";
		m->higher_better = 0;
		m->has_ci = 1;
	} else if (strcmp(name, "tflops") == 0) {
		unit = "TFLOP/s";
		m->has_ci = 1;
	} else if (strcmp(name, "pct_peak") == 0) {
		unit = "% of peak";
		m->has_ci = 1;
	} else if (strcmp(name, "samples") == 0) {
		unit = "samples";
	} else if (strcmp(name, "peak_mem_bytes") == 0 || ends_with(name, "_bytes")) {
		unit = "MiB";
		m->scale = 1.0 / (1024.0 * 1024.0);
		m->higher_better = 0;
	} else if (ends_with(name, "_ms")) {
		unit = "ms";
		m->higher_better = 0;
	} else if (ends_with(name, "_s") || strstr(name, "time") || strstr(name, "latency")) {
		unit = ends_with(name, "_s") ? "s" : "";
		m->higher_better = 0;
	}
	m->unit = xstrdup(unit);
}

void metric_free(struct metric *m)
{
	free(m->name);
	free(m->unit);
	memset(m, 0, sizeof(*m));
}

const char *metric_label(const struct metric *m)
{
	static char buf[256];
	const char *name = m->name;
	if (strcmp(name, "step_ms") == 0)
		name = "step time (median)";
	else if (strcmp(name, "peak_mem_bytes") == 0)
		name = "peak memory";
	else if (strcmp(name, "startup_s") == 0)
		name = "start-up time";
	else if (strcmp(name, "epoch_time") == 0)
		name = "epoch time";
	if (*m->unit)
		snprintf(buf, sizeof(buf), "%s (%s)", name, m->unit);
	else
		snprintf(buf, sizeof(buf), "%s", name);
	return buf;
}

/* ---- loading ----------------------------------------------------------------------- */

const char *run_level(const struct run *run, size_t f, size_t l)
{
	return run->recipe.factors[f].levels[l];
}

void run_factor_header(const struct run *run, char **cell, size_t ncells, size_t first)
{
	size_t nf = run->recipe.nfactors;
	for (size_t f = 0; f < nf; f++) {
		const char *name = run->recipe.factors[f].name;
		int clash = 0;
		for (size_t k = 0; !clash && k < ncells; k++)
			clash = (k < first || k >= first + nf) && cell[k] && !strcmp(name, cell[k]);
		cell[first + f] = clash ? xasprintf("factors.%s", name) : xstrdup(name);
	}
}

int run_cell_ignored(const struct run *run, size_t c, size_t f)
{
	const struct table *t = &run->table;
	long idc = table_column(t, "id"), ic = table_column(t, "ignored");
	const char *name = run->recipe.factors[f].name;
	size_t len = strlen(name);
	for (size_t r = 0; idc >= 0 && ic >= 0 && r < t->nrows; r++) {
		if ((size_t)idc >= t->rows[r].n || (size_t)ic >= t->rows[r].n ||
		    strcmp(t->rows[r].cell[idc], run->cells.id[c]) != 0)
			continue;
		for (const char *p = t->rows[r].cell[ic]; *p; p += strcspn(p, ","), p += *p == ',') {
			if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == '\0'))
				return 1;
		}
		return 0;
	}
	return 0;
}

void run_cell_label(const struct run *run, size_t c, const size_t *fs, size_t nf, const char *sep,
		    struct strbuf *sb)
{
	size_t n = fs ? nf : run->recipe.nfactors;
	for (size_t i = 0; i < n; i++) {
		size_t f = fs ? fs[i] : i;
		if (i)
			sb_puts(sb, sep);
		sb_printf(sb, "%s=%s", run->recipe.factors[f].name,
			  run_level(run, f, CELL_LEVEL(&run->cells, c, f)));
	}
}

static void add_failure(struct run *run, const struct table *t, size_t r, const long *fcol,
			const char *status, const char *reason)
{
	run->failures = xrealloc(run->failures, (run->nfailures + 1) * sizeof(*run->failures));
	struct failure *fl = &run->failures[run->nfailures++];
	const char *id = table_cell(t, r, "id");
	fl->id = xstrdup(id ? id : "");
	fl->levels = xcalloc(run->recipe.nfactors ? run->recipe.nfactors : 1, sizeof(char *));
	for (size_t f = 0; f < run->recipe.nfactors; f++)
		fl->levels[f] = xstrdup(fcol[f] >= 0 ? t->rows[r].cell[fcol[f]] : "");
	fl->status = xstrdup(status);
	fl->reason = xstrdup(reason ? reason : "");
}

/* A row's value of key as a measurement: > 0 and finite in *v and NULL, or
 * why not (allocated); *absent is set when the row has no value at all. */
static char *row_number(const struct table *t, size_t r, const char *key, double *v, int *absent)
{
	char *s = table_value(t, r, key);
	*absent = s == NULL;
	if (!s)
		return xasprintf("no %s value", key);
	char *why = result_bad_value(key, s);
	if (!why)
		parse_double(s, v);
	free(s);
	return why;
}

/* Row r's 95% interval lo..hi of key (keys key_lo and key_hi), or NaN. */
static void row_interval(const struct table *t, size_t r, const char *key, double *lo, double *hi)
{
	char *klo = xasprintf("%s_lo", key), *khi = xasprintf("%s_hi", key);
	if (table_number(t, r, klo, lo) != 0 || table_number(t, r, khi, hi) != 0 || !(*lo > 0) || !(*hi >= *lo))
		*lo = *hi = NAN;
	free(klo);
	free(khi);
}

/* epoch_time of row r, seconds, with its interval: the engine's epoch_s
 * (real data, --data: epoch_steps x the median step) when the row has it,
 * else dataset_size / throughput. Throughput's interval comes from the
 * step's: thr_lo = thr * step_ms / step_ms_hi, thr_hi = thr * step_ms /
 * step_ms_lo; the epoch is its reciprocal, so the bounds swap: lo =
 * dataset_size / thr_hi, hi = dataset_size / thr_lo. */
static char *row_epoch_time(const struct table *t, size_t r, double dataset_size, double *v, double *lo,
			    double *hi, int *absent)
{
	char *why = row_number(t, r, "epoch_s", v, absent);
	if (!*absent) {
		if (!why)
			row_interval(t, r, "epoch_s", lo, hi);
		return why;
	}
	free(why);
	if (!(dataset_size > 0))
		return xstrdup("no epoch_time: the row has no epoch_s (the engine's --data) and the recipe no "
			       "dataset_size");
	double thr;
	why = row_number(t, r, "throughput", &thr, absent);
	if (why)
		return why;
	char *unit = table_value(t, r, "unit");
	if (unit && *unit && strcmp(unit, "samples/s") != 0) {
		why = xasprintf("no epoch_time: throughput is in %s, not samples/s", unit);
		free(unit);
		return why;
	}
	free(unit);
	*v = dataset_size / thr;
	double ms, slo, shi;
	if (table_number(t, r, "step_ms", &ms) == 0 && table_number(t, r, "step_ms_lo", &slo) == 0 &&
	    table_number(t, r, "step_ms_hi", &shi) == 0 && ms > 0 && slo > 0 && shi >= slo) {
		double thr_lo = thr * ms / shi, thr_hi = thr * ms / slo;
		*lo = dataset_size / thr_hi;
		*hi = dataset_size / thr_lo;
	}
	return NULL;
}

/* Row r's value of the run's metric in *v (> 0, finite) with its 95%
 * interval in *lo, *hi where the row gives one of its own (NaN otherwise:
 * the step's interval applies to a metric with has_ci), and NULL; or why
 * not (allocated), *absent set when the row has no value at all. */
static char *row_metric(struct run *run, const struct table *t, size_t r, double *v, double *lo,
			double *hi, int *absent)
{
	*lo = *hi = NAN;
	if (strcmp(run->metric.name, "epoch_time") != 0)
		return row_number(t, r, run->metric.name, v, absent);
	char *why = row_epoch_time(t, r, run->recipe.dataset_size, v, lo, hi, absent);
	double e;
	if (!why)
		run->epoch_rows[table_number(t, r, "epoch_s", &e) == 0]++;
	return why;
}

/* Add name to the list names[0..*n-1] unless it is there. */
static void add_name(char ***names, size_t *n, const char *name, size_t len)
{
	for (size_t i = 0; i < *n; i++)
		if (strlen((*names)[i]) == len && strncmp((*names)[i], name, len) == 0)
			return;
	*names = xrealloc(*names, (*n + 1) * sizeof(char *));
	(*names)[(*n)++] = xstrndup(name, len);
}

/* A metric given on the command line must be in some row: else print the
 * metrics the rows have (numeric columns, numeric keys of `extra`), the
 * closest first when one is close, and return -1. */
static int check_metric(const struct table *t, const char *dir, const char *metric, double dataset_size,
			FILE *err)
{
	/* epoch_time: from epoch_s, or dataset_size / throughput */
	int epoch = 0;
	double v;
	for (size_t i = 0; i < t->nrows && !epoch; i++)
		epoch = table_number(t, i, "epoch_s", &v) == 0 ||
			(dataset_size > 0 && table_number(t, i, "throughput", &v) == 0);
	if (epoch && strcmp(metric, "epoch_time") == 0)
		return 0;
	for (size_t i = 0; i < t->nrows; i++) {
		char *s = table_value(t, i, metric);
		free(s);
		if (s)
			return 0;
	}
	/* no row ran ok: no metric is missing, every point failed */
	long sc = table_column(t, "status");
	size_t nok = 0;
	for (size_t i = 0; sc >= 0 && i < t->nrows; i++)
		nok += (size_t)sc < t->rows[i].n && t->rows[i].cell[sc] && !strcmp(t->rows[i].cell[sc], "ok");
	if (sc >= 0 && nok == 0) {
		char *q = shell_quoted(dir);
		error_to(err, "no point of '%s' ran ok (%zu row%s, none with status ok): no '%s' to use; "
			 "'matrix status %s' lists why", dir, t->nrows, t->nrows == 1 ? "" : "s", metric, q);
		free(q);
		return -1;
	}
	static const char *const columns[] = {"throughput", "step_ms", "samples", "startup_s",
					      "peak_mem_bytes", "flops_per_step", "tflops", "pct_peak",
					      "setup_s", "timed_s", "prepare_s", "max_rel_err", "top1_agree"};
	char **names = NULL;
	size_t n = 0;
	if (epoch)
		add_name(&names, &n, "epoch_time", 10);
	long x = table_column(t, "extra");
	for (size_t i = 0; i < t->nrows; i++) {
		for (size_t c = 0; c < ARRAY_SIZE(columns); c++)
			if (table_number(t, i, columns[c], &v) == 0)
				add_name(&names, &n, columns[c], strlen(columns[c]));
		/* extra: "key=value; key=value" */
		for (const char *p = x >= 0 ? t->rows[i].cell[x] : ""; *p;) {
			while (*p == ' ' || *p == ';')
				p++;
			const char *end = p + strcspn(p, ";"), *eq = memchr(p, '=', (size_t)(end - p));
			if (eq && eq > p) {
				char *key = xstrndup(p, (size_t)(eq - p));
				/* extra repeats the point's settings (batch=8, gpus=1):
				 * numbers, but factors, not metrics */
				if (!vocab_find(key) && table_number(t, i, key, &v) == 0)
					add_name(&names, &n, key, strlen(key));
				free(key);
			}
			p = end;
		}
	}
	const char *near = vocab_closest_metric(metric, (const char *const *)names, n);
	error_to(err, "no result in '%s' has a metric '%s'%s%s%s", dir, metric, near ? " (did you mean '" : "",
		 near ? near : "", near ? "'?)" : "");
	struct strbuf sb = {0};
	for (size_t i = 0; i < n; i++)
		sb_printf(&sb, "%s %s", i ? "," : "", names[i]);
	if (strcmp(metric, "epoch_time") == 0 && !epoch)
		error_to(err, "epoch_time needs the recipe's dataset_size (epoch_time = dataset_size / throughput) "
			 "or rows with epoch_s (the engine's --data)");
	error_to(err, "its metrics:%s", n ? sb.buf : " none");
	sb_free(&sb);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return -1;
}

struct rowkey {
	char *id;             /* id + "/" + repeat */
	size_t row;
};

static int cmp_rowkey(const void *a, const void *b)
{
	const struct rowkey *x = a, *y = b;
	int c = strcmp(x->id, y->id);
	if (c)
		return c;
	return (x->row > y->row) - (x->row < y->row);
}

/* The columns of results.csv a run is read from; -1 where absent. */
struct cols {
	long id, repeat, status, reason, unit, ms, lo, hi, thr, cmd;
	long source;          /* merged runs: the run's number (report_merge.c) */
	long *factor;         /* per factor of the recipe, all present */
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Say so when slurm tasks wrote rows to DIR/rows/ID.csv (16 hex digits)
 * of points that results.csv (t, NULL when it has none) lacks: no `matrix
 * run --resume DIR` merged them yet (a detached run), and a report leaves
 * them out. */
static void warn_unmerged(const char *dir, const struct table *t, FILE *err)
{
	char *path = xasprintf("%s/rows", dir);
	DIR *d = opendir(path);
	free(path);
	size_t n = 0, nids = 0;
	char **ids = NULL; /* results.csv's ids, sorted: a study of many points, as many files */
	long c = t && d ? table_column(t, "id") : -1;
	if (c >= 0) {
		ids = xcalloc(t->nrows ? t->nrows : 1, sizeof(*ids));
		for (size_t i = 0; i < t->nrows; i++)
			ids[nids++] = t->rows[i].cell[c];
		qsort(ids, nids, sizeof(*ids), cmp_str);
	}
	for (struct dirent *e; d && (e = readdir(d));) {
		char id[17], *key = id;
		if (result_row_file_id(e->d_name, id))
			n += !nids || !bsearch(&key, ids, nids, sizeof(*ids), cmp_str);
	}
	free(ids);
	if (d)
		closedir(d);
	if (n) {
		struct strbuf q = {0};
		argv_shell_quote(&q, dir);
		fprintf(err, "matrix: warning: %zu row%s that slurm tasks wrote wait%s in '%s/rows', not in results.csv: "
			     "'matrix run --resume %s' merges %s (this report leaves %s out)\n", n, plural_s(n),
			n == 1 ? "s" : "", dir, q.buf, n == 1 ? "it" : "them", n == 1 ? "it" : "them");
		sb_free(&q);
	}
}

/* Read DIR/recipe.yaml into run->recipe (*have_recipe = 1 once it loaded)
 * and DIR/results.csv into t. Returns 0, or -1 after printing why to err. */
static int load_files(struct run *run, const char *dir, const char *rpath, const char *cpath,
		      struct table *t, int *have_recipe, FILE *err)
{
	if (access(rpath, R_OK) != 0) {
		char *why = rundir_problem(dir);
		if (why)
			error_to(err, "%s", why);
		else
			fprintf(err, "matrix: '%s' is not a run directory (no recipe.yaml)\n", dir);
		free(why);
		return -1;
	}
	if (recipe_load(rpath, &run->recipe, err) != 0) {
		fprintf(err, "matrix: cannot report on '%s': its recipe.yaml does not load\n", dir);
		return -1;
	}
	*have_recipe = 1;
	char *why = NULL;
	if (table_read(cpath, t, &run->torn_offset, &why) != 0) {
		int e = errno;
		if (!why && e == ENOENT)
			warn_unmerged(dir, NULL, err);
		errno = e;
		if (why)
			fprintf(err, "matrix: %s\n", why);
		else if (errno == ENOENT)
			fprintf(err, "matrix: no results in '%s' yet (results.csv is missing)\n", dir);
		else
			fprintf(err, "matrix: unable to read '%s': %s\n", cpath, strerror(errno));
		free(why);
		return -1;
	}
	/* rows of an older matrix read as this version's (not rewritten: a
	 * report only reads them) */
	result_table_upgrade(t);
	/* a detached slurm run's finished points wait there for a front end */
	warn_unmerged(dir, t, err);
	if (t->nrows == 0) {
		fprintf(err, "matrix: no results in '%s' yet (results.csv has no rows)\n", dir);
		return -1;
	}
	return 0;
}

/* A merged directory (report_merge.c): its runs as one, their notes printed
 * to notes (NULL: kept in run->notes only). Returns 0, or -1 after printing
 * why to err. */
static int load_merged(struct run *run, const char *dir, struct table *t, int *have_recipe, FILE *err,
		       FILE *notes)
{
	char **subs, **names;
	size_t n;
	if (merge_dir_sources(dir, &subs, &names, &n, err) != 0)
		return -1;
	int rc = merge_load(run, subs, names, n, t, err, notes);
	*have_recipe = rc == 0;
	for (size_t i = 0; i < n; i++) {
		free(subs[i]);
		free(names[i]);
	}
	free(subs);
	free(names);
	return rc;
}

/* The throughput's unit: the first ok row's that names one (the engines
 * write samples/s; matrix time runs/s), NULL when none does. */
static const char *throughput_unit(const struct table *t, const struct cols *c)
{
	for (size_t r = 0; c->unit >= 0 && r < t->nrows; r++)
		if (!strcmp(t->rows[r].cell[c->status], "ok") && *t->rows[r].cell[c->unit])
			return t->rows[r].cell[c->unit];
	return NULL;
}

/* Find the columns of t, and check the metric when one was asked for.
 * Returns 0, or -1 after printing why to err. */
static int find_columns(const struct table *t, const struct recipe *r, const char *dir,
			const char *cpath, const char *metric, struct cols *c, FILE *err)
{
	c->id = table_column(t, "id");
	c->repeat = table_column(t, "repeat");
	c->status = table_column(t, "status");
	c->reason = table_column(t, "reason");
	c->unit = table_column(t, "unit");
	c->ms = table_column(t, "step_ms");
	c->lo = table_column(t, "step_ms_lo");
	c->hi = table_column(t, "step_ms_hi");
	c->thr = table_column(t, "throughput");
	c->cmd = table_column(t, "command");
	c->source = table_column(t, "merge_source");
	c->factor = NULL;
	if (c->id < 0 || c->status < 0) {
		fprintf(err, "matrix: '%s' lacks the id or status column\n", cpath);
		return -1;
	}
	if (metric && check_metric(t, dir, metric, r->dataset_size, err) < 0)
		return -1;
	/* the recipe's report.metric: checked once a row was measured (a run
	 * whose points all failed still gets its report of the failures); a
	 * misspelt one made an empty report over the last one, exit 0 */
	int measured = 0;
	for (size_t i = 0; i < t->nrows && !metric && !measured; i++)
		measured = strcmp(t->rows[i].cell[c->status], "ok") == 0;
	if (measured && r->report.metric && check_metric(t, dir, r->report.metric, r->dataset_size, err) < 0) {
		error_to(err, "'%s' is the recipe's report.metric (%s/recipe.yaml): --metric NAME picks another",
			 r->report.metric, dir);
		return -1;
	}
	c->factor = xmalloc((r->nfactors ? r->nfactors : 1) * sizeof(long));
	for (size_t f = 0; f < r->nfactors; f++) {
		c->factor[f] = table_column(t, r->factors[f].name);
		if (c->factor[f] < 0) {
			error_to(err, "'%s' has no column for factor '%s'", cpath,
				r->factors[f].name);
			return -1;
		}
	}
	return 0;
}

/* keep[i] = 1 for the rows that count: the last row of each (id, repeat)
 * wins, as a retried point supersedes (in its own run, when runs are merged). */
static unsigned char *latest_rows(const struct table *t, const struct cols *c)
{
	struct rowkey *keys = xmalloc((t->nrows ? t->nrows : 1) * sizeof(*keys));
	for (size_t i = 0; i < t->nrows; i++) {
		keys[i].id = xasprintf("%s/%s/%s", c->source >= 0 ? t->rows[i].cell[c->source] : "",
				       t->rows[i].cell[c->id], c->repeat >= 0 ? t->rows[i].cell[c->repeat] : "0");
		keys[i].row = i;
	}
	qsort(keys, t->nrows, sizeof(*keys), cmp_rowkey);
	unsigned char *keep = xcalloc(t->nrows ? t->nrows : 1, 1);
	for (size_t i = 0; i < t->nrows; i++)
		if (i + 1 == t->nrows || strcmp(keys[i].id, keys[i + 1].id) != 0)
			keep[keys[i].row] = 1;
	for (size_t i = 0; i < t->nrows; i++)
		free(keys[i].id);
	free(keys);
	return keep;
}

/* Per cell: the values of its repeats (one per process), merged at the end. */
struct reps {
	size_t cap;
	struct { size_t n, cap; double *v, *u, *thr, *tu; } *cell;
};

/* Add value v, its half-width u, throughput thr and its half-width tu to the
 * repeats of cell c. */
static void reps_add(struct reps *rp, size_t c, double v, double u, double thr, double tu)
{
	if (c >= rp->cap) {
		size_t ncap = rp->cap ? 2 * rp->cap : 64;
		while (ncap <= c)
			ncap *= 2;
		rp->cell = xrealloc(rp->cell, ncap * sizeof(*rp->cell));
		memset(rp->cell + rp->cap, 0, (ncap - rp->cap) * sizeof(*rp->cell));
		rp->cap = ncap;
	}
	if (rp->cell[c].n == rp->cell[c].cap) {
		rp->cell[c].cap = rp->cell[c].cap ? 2 * rp->cell[c].cap : 2;
		rp->cell[c].v = xrealloc(rp->cell[c].v, rp->cell[c].cap * sizeof(double));
		rp->cell[c].u = xrealloc(rp->cell[c].u, rp->cell[c].cap * sizeof(double));
		rp->cell[c].thr = xrealloc(rp->cell[c].thr, rp->cell[c].cap * sizeof(double));
		rp->cell[c].tu = xrealloc(rp->cell[c].tu, rp->cell[c].cap * sizeof(double));
	}
	rp->cell[c].v[rp->cell[c].n] = v;
	rp->cell[c].u[rp->cell[c].n] = u;
	rp->cell[c].thr[rp->cell[c].n] = thr;
	rp->cell[c].tu[rp->cell[c].n] = tu;
	rp->cell[c].n++;
}

/* Read row i of t (the run's metric): a failure, or a value added to its cell's
 * repeats. level is scratch room for a level per factor. */
static void load_row(struct run *run, const struct table *t, size_t i, const struct cols *cl,
		     size_t *level, struct reps *rp)
{
	const struct recipe *r = &run->recipe;
	run->rows++;
	const char *status = t->rows[i].cell[cl->status];
	const char *reason = cl->reason >= 0 ? t->rows[i].cell[cl->reason] : "";
	size_t f;
	for (f = 0; f < r->nfactors; f++) {
		long l = recipe_level_index(r, f, t->rows[i].cell[cl->factor[f]]);
		if (l < 0)
			break;
		level[f] = (size_t)l;
	}
	if (f < r->nfactors) {
		char *why2 = xasprintf("level '%s' of factor '%s' is not in the recipe",
				       t->rows[i].cell[cl->factor[f]], r->factors[f].name);
		add_failure(run, t, i, cl->factor, status, why2);
		free(why2);
		return;
	}
	if (strcmp(status, "ok") != 0) {
		add_failure(run, t, i, cl->factor, status, reason);
		return;
	}
	double v = NAN, vlo, vhi;
	int absent;
	char *bad = row_metric(run, t, i, &v, &vlo, &vhi, &absent);
	if (bad) {
		/* a NaN, infinite or negative value is a failed measurement */
		add_failure(run, t, i, cl->factor, absent ? "ok" : "failed", bad);
		free(bad);
		return;
	}
	/* a throughput in another unit (tokens/s, runs/s beside samples/s) is not
	 * the same quantity: compared, it made gains between units */
	const char *unit = cl->unit >= 0 ? t->rows[i].cell[cl->unit] : "";
	if (!strcmp(run->metric.name, "throughput") && *unit && strcmp(unit, run->metric.unit) != 0) {
		char *why2 = xasprintf("throughput in %s, not %s as the other rows: not compared with them", unit,
				       run->metric.unit);
		add_failure(run, t, i, cl->factor, status, why2);
		free(why2);
		return;
	}
	run->ok_rows++;
	/* the step's interval is the order statistics around the median step,
	 * seldom symmetric: the point's (symmetric, log scale) interval takes
	 * its wider side, so that it holds the engine's whole interval */
	double u = NAN, lo, hi, ms;
	if (!isnan(vlo))
		u = stat_log_halfwidth_at(v, vlo, vhi);
	else if (run->metric.has_ci && cl->lo >= 0 && cl->hi >= 0 &&
	    parse_double(t->rows[i].cell[cl->lo], &lo) == 0 &&
	    parse_double(t->rows[i].cell[cl->hi], &hi) == 0)
		u = cl->ms >= 0 && parse_double(t->rows[i].cell[cl->ms], &ms) == 0 ? stat_log_halfwidth_at(ms, lo, hi)
										   : stat_log_halfwidth(lo, hi);
	/* the throughput (scaling) with its own interval: the row's
	 * throughput_lo..hi, else the step's (throughput is samples over the
	 * step time: the same relative interval, its sides swapped) */
	double thr = NAN, tu = NAN, tlo, thi;
	if (cl->thr >= 0 && parse_double(t->rows[i].cell[cl->thr], &thr) != 0)
		thr = NAN;
	row_interval(t, i, "throughput", &tlo, &thi);
	if (!isnan(tlo))
		tu = stat_log_halfwidth_at(thr, tlo, thi);
	else if (cl->ms >= 0 && cl->lo >= 0 && cl->hi >= 0 && parse_double(t->rows[i].cell[cl->ms], &ms) == 0 &&
		 parse_double(t->rows[i].cell[cl->lo], &lo) == 0 && parse_double(t->rows[i].cell[cl->hi], &hi) == 0 &&
		 ms > 0 && lo > 0 && hi >= lo)
		tu = stat_log_halfwidth_at(ms, lo, hi);
	if (!run->command_example && cl->cmd >= 0 && *t->rows[i].cell[cl->cmd])
		run->command_example = xstrdup(t->rows[i].cell[cl->cmd]);
	long c = cellset_find(&run->cells, level);
	if (c < 0)
		c = (long)cellset_add(&run->cells, level, v, u, thr, t->rows[i].cell[cl->id]);
	reps_add(rp, (size_t)c, v, u, thr, tu);
}

/* A point's value and interval from its process-level values (stats.c);
 * frees the repeats. */
static void merge_repeats(struct run *run, struct reps *rp)
{
	for (size_t c = 0; c < run->cells.ncells; c++) {
		cellset_set_repeats(&run->cells, c, rp->cell[c].v, rp->cell[c].u, rp->cell[c].n);
		if (rp->cell[c].n > run->max_rep)
			run->max_rep = rp->cell[c].n;
		cellset_set_thr(&run->cells, c, rp->cell[c].thr, rp->cell[c].tu, rp->cell[c].n);
		free(rp->cell[c].v);
		free(rp->cell[c].u);
		free(rp->cell[c].thr);
		free(rp->cell[c].tu);
	}
	free(rp->cell);
	rp->cell = NULL;
	rp->cap = 0;
}

/* Reference levels, baseline, groups for the best configuration. */
static void set_references(struct run *run)
{
	const struct recipe *r = &run->recipe;
	run->ref = xcalloc(r->nfactors ? r->nfactors : 1, sizeof(size_t));
	run->base_level = xcalloc(r->nfactors ? r->nfactors : 1, sizeof(long));
	run->group = xcalloc(r->nfactors ? r->nfactors : 1, sizeof(size_t));
	for (size_t f = 0; f < r->nfactors; f++) {
		long b = r->has_baseline ? r->baseline.level[f] : vocab_is_workload(r->factors[f].name) ? -1 : 0;
		run->base_level[f] = b;
		run->ref[f] = b >= 0 ? (size_t)b : 0;
		if (b < 0 && r->factors[f].nlevels > 1)
			run->group[run->ngroup++] = f;
		if (b < 0 && r->factors[f].nlevels <= 1)
			run->base_level[f] = 0;
	}
}

int run_load(struct run *run, const char *dir, const char *metric, FILE *err)
{
	return run_load_notes(run, dir, metric, err, err);
}

int run_load_notes(struct run *run, const char *dir, const char *metric, FILE *err, FILE *notes)
{
	memset(run, 0, sizeof(*run));
	run->dir = xstrdup(dir);
	run->torn_offset = -1;
	char *rpath = xasprintf("%s/recipe.yaml", dir);
	char *cpath = xasprintf("%s/results.csv", dir);
	struct table t = {0};
	struct cols cl = {0};
	int rc = 2;
	int have_recipe = 0;
	size_t *level = NULL;
	struct recipe *r = &run->recipe;

	if (merge_is_dir(dir) ? load_merged(run, dir, &t, &have_recipe, err, notes) != 0
			       : load_files(run, dir, rpath, cpath, &t, &have_recipe, err) != 0)
		goto out;
	if (find_columns(&t, r, dir, cpath, metric, &cl, err) != 0)
		goto out;
	const char *mname = metric ? metric : (r->report.metric ? r->report.metric : "throughput");
	metric_describe(&run->metric, mname, throughput_unit(&t, &cl));
	unsigned char *keep = latest_rows(&t, &cl);
	level = xmalloc((r->nfactors ? r->nfactors : 1) * sizeof(size_t));
	for (size_t f = 0; f < r->nfactors; f++)
		level[f] = r->factors[f].nlevels;
	cellset_init(&run->cells, r->nfactors, level);
	struct reps rp = {0};
	quality_scan(&t, r, keep, &run->quality);
	for (size_t i = 0; i < t.nrows; i++)
		if (keep[i])
			load_row(run, &t, i, &cl, level, &rp);
	merge_repeats(run, &rp);
	cellset_sort(&run->cells);
	free(keep);
	set_references(run);
	run->table = t; /* kept for export */
	memset(&t, 0, sizeof(t));
	rc = 0;
out:
	free(cl.factor);
	free(level);
	table_free(&t);
	free(rpath);
	free(cpath);
	if (rc != 0) {
		if (!have_recipe)
			memset(&run->recipe, 0, sizeof(run->recipe));
		run_free(run);
	}
	return rc;
}

void run_free(struct run *run)
{
	for (size_t i = 0; i < run->nfailures; i++) {
		free(run->failures[i].id);
		for (size_t f = 0; f < run->recipe.nfactors; f++)
			free(run->failures[i].levels[f]);
		free(run->failures[i].levels);
		free(run->failures[i].status);
		free(run->failures[i].reason);
	}
	free(run->failures);
	for (size_t i = 0; i < run->nnotes; i++)
		free(run->notes[i]);
	free(run->notes);
	table_free(&run->table);
	quality_free(&run->quality);
	if (run->recipe.path || run->recipe.nfactors)
		recipe_free(&run->recipe);
	metric_free(&run->metric);
	cellset_free(&run->cells);
	free(run->dir);
	free(run->command_example);
	free(run->ref);
	free(run->base_level);
	free(run->group);
	memset(run, 0, sizeof(*run));
}
