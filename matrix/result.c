/* result.c - parse the key=value result file an engine writes. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result.h"
#include "table.h"
#include "util.h"

const char *const result_columns[] = {
	"throughput", "unit", "step_ms", "step_ms_lo", "step_ms_hi", "samples",
	"startup_s", "peak_mem_bytes", "flops_per_step", "tflops", "pct_peak",
	"device", "engine", "ignored",
	/* measurement quality: the engine's (ci_met, rel_ci; GPU clocks,
	 * temperature and throttling where it can read them) and the runner's
	 * (load average, CPU clock, points at once, cores) */
	"ci_met", "rel_ci", "load_start", "cpu_mhz_start", "cpu_mhz_end", "concurrent", "cores",
	"gpu_sm_mhz_start", "gpu_sm_mhz_end", "gpu_temp_c_start", "gpu_temp_c_end", "gpu_throttle",
	/* where the time outside the timed steps went (the native and the
	 * PyTorch engine: building, warming up, exporting or compiling) */
	"setup_s", "timed_s", "prepare_s",
	/* the outputs against eager fp32 (the PyTorch engine's runtimes and int8) */
	"max_rel_err", "top1_agree",
	/* provenance, the runner's: the node, the points' working directory,
	 * the measured project's commit (the recipe's directory's repository)
	 * and whether its tracked files differ from it, the engine's absolute
	 * path */
	"node", "workdir", "git_commit", "git_dirty", "engine_path",
};
const size_t result_ncolumns = ARRAY_SIZE(result_columns);

long result_column_index(const char *key)
{
	for (size_t i = 0; i < result_ncolumns; i++)
		if (!strcmp(result_columns[i], key))
			return (long)i;
	return -1;
}

#define RESULT_MAX_BYTES (1u << 20)
/* Distinct keys a result may hold: the native engine writes about 60; each
 * key is looked up among the others (result_set), so 100000 keys of a 1 MiB
 * file took the runner 40 s, and their extra cell made results.csv 1 MB a
 * row. */
#define RESULT_MAX_KEYS 1024

static int valid_key(const char *k, size_t n)
{
	if (n == 0 || n > 64)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = k[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

int result_read(const char *path, struct result *res, char **why)
{
	memset(res, 0, sizeof(*res));
	*why = NULL;
	size_t len;
	char *what = NULL;
	/* the point may have made it anything: a FIFO, a link to /dev/zero */
	char *text = read_file_capped(path, RESULT_MAX_BYTES, 1, &len, &what);
	if (!text && !what)
		return -1;
	if (!text) {
		*why = xasprintf("result file %s", what);
		free(what);
		return -2;
	}
	if (memchr(text, '\0', len)) {
		*why = xstrdup("result file holds a NUL byte");
		free(text);
		return -2;
	}
	unsigned lineno = 0;
	for (char *line = text, *next; line && *line; line = next) {
		lineno++;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		size_t n = strlen(line);
		if (n && line[n - 1] == '\r')
			line[--n] = '\0';
		if (n == 0 || line[0] == '#')
			continue;
		char *eq = strchr(line, '=');
		if (!eq) {
			*why = xasprintf("result file line %u has no '='", lineno);
			goto garbled;
		}
		if (!valid_key(line, (size_t)(eq - line))) {
			*why = xasprintf("result file line %u has an invalid key", lineno);
			goto garbled;
		}
		*eq = '\0';
		/* a value's surrounding blanks are not part of it ("throughput= 12 "
		 * is 12, as the runner and the report then read it alike) */
		char *v = eq + 1, *ve = line + n;
		while (*v == ' ' || *v == '\t')
			v++;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			*--ve = '\0';
		if (result_set(res, line, v)) {
			/* which of two throughputs is the point's? neither: garbled */
			*why = xasprintf("result file line %u repeats the key '%.64s'", lineno, line);
			goto garbled;
		}
		if (res->n > RESULT_MAX_KEYS) {
			*why = xasprintf("result file has more than %u keys (line %u)", RESULT_MAX_KEYS, lineno);
			goto garbled;
		}
	}
	free(text);
	return 0;
garbled:
	free(text);
	result_free(res);
	return -2;
}

const char *result_get(const struct result *res, const char *key)
{
	for (size_t i = 0; i < res->n; i++)
		if (strcmp(res->kv[i].key, key) == 0)
			return res->kv[i].value;
	return NULL;
}

int result_set(struct result *res, const char *key, const char *value)
{
	for (size_t i = 0; i < res->n; i++)
		if (strcmp(res->kv[i].key, key) == 0) {
			free(res->kv[i].value);
			res->kv[i].value = xstrdup(value);
			return 1;
		}
	res->kv = xrealloc(res->kv, (res->n + 1) * sizeof(*res->kv));
	res->kv[res->n].key = xstrdup(key);
	res->kv[res->n].value = xstrdup(value);
	res->n++;
	return 0;
}

/* The step time and its interval, 0 when the result has all three as
 * numbers; else -1. */
static int step_interval(const struct result *res, double *m, double *lo, double *hi)
{
	const char *sm = result_get(res, "step_ms"), *sl = result_get(res, "step_ms_lo");
	const char *sh = result_get(res, "step_ms_hi");
	return sm && sl && sh && parse_double(sm, m) == 0 && parse_double(sl, lo) == 0 && parse_double(sh, hi) == 0
		       ? 0
		       : -1;
}

void result_free(struct result *res)
{
	for (size_t i = 0; i < res->n; i++) {
		free(res->kv[i].key);
		free(res->kv[i].value);
	}
	free(res->kv);
	memset(res, 0, sizeof(*res));
}

char *result_bad_value(const char *name, const char *text)
{
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	/* a decimal number only: strtod also reads hexadecimal ("0x10" = 16),
	 * which no engine writes for a measurement */
	int hex = strpbrk(text, "xXpP") != NULL && !isnan(v) && !isinf(v);
	if (!*text || *end || hex)
		return xasprintf("%s '%.40s' is not a number", name, text);
	if (isnan(v))
		return xasprintf("%s is NaN", name);
	if (isinf(v))
		return xasprintf("%s is infinite", name);
	if (v < 0)
		return xasprintf("%s is negative (%g)", name, v);
	if (v == 0)
		return xasprintf("%s is zero", name);
	return NULL;
}

char *result_check(const struct result *res)
{
	static const char *const keys[] = {"throughput", "step_ms", "step_ms_lo", "step_ms_hi"};
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		const char *v = result_get(res, keys[i]);
		char *why = v ? result_bad_value(keys[i], v) : NULL;
		if (why)
			return why;
	}
	/* the step time's interval holds the step time (up to the rounding of
	 * printing them: 1e-6 of it) */
	double vm, vl, vh;
	if (step_interval(res, &vm, &vl, &vh) == 0 && (vl > vm * (1 + 1e-6) || vh < vm * (1 - 1e-6)))
		return xasprintf("step_ms %g is outside its own interval [step_ms_lo %g, step_ms_hi %g]", vm, vl, vh);
	return NULL;
}

void result_derive(struct result *res, double rel_ci_target)
{
	char buf[64];
	double vm, vl, vh;
	if (!result_get(res, "rel_ci") && step_interval(res, &vm, &vl, &vh) == 0 && vm > 0 && vh >= vl) {
		snprintf(buf, sizeof(buf), "%.4g", (vh - vl) / 2 / vm);
		result_set(res, "rel_ci", buf);
	}
	const char *rel = result_get(res, "rel_ci");
	double vr;
	if (!result_get(res, "ci_met") && rel && rel_ci_target > 0 && parse_double(rel, &vr) == 0)
		result_set(res, "ci_met", vr <= rel_ci_target ? "1" : "0");
}

void result_extra_add(struct strbuf *sb, const char *key, const char *value)
{
	sb_printf(sb, "%s%s=", sb->len ? "; " : "", key);
	size_t n = strlen(value);
	for (size_t i = 0; i < n; i++) {
		char c = value[i];
		if (c == '%' || c == ';' || (c == ' ' && (i == 0 || i + 1 == n)))
			sb_printf(sb, "%%%02X", (unsigned char)c);
		else
			sb_putc(sb, c);
	}
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

char *result_extra_get(const char *extra, const char *key)
{
	size_t k = strlen(key);
	const char *p = extra;
	while (p && *p) {
		while (*p == ' ' || *p == ';')
			p++;
		const char *end = strchr(p, ';');
		if (!end)
			end = p + strlen(p);
		if ((size_t)(end - p) > k && strncmp(p, key, k) == 0 && p[k] == '=') {
			const char *v = p + k + 1, *e = end;
			while (e > v && e[-1] == ' ')
				e--;
			struct strbuf sb = {0};
			sb_add(&sb, "", 0);
			for (; v < e; v++) {
				int hi, lo;
				if (*v == '%' && e - v >= 3 && (hi = hex_digit(v[1])) >= 0 && (lo = hex_digit(v[2])) >= 0) {
					sb_putc(&sb, (char)(hi << 4 | lo));
					v += 2;
				} else {
					sb_putc(&sb, *v);
				}
			}
			return sb.buf;
		}
		p = end;
	}
	return NULL;
}

int result_extra_parse(const char *extra, struct result *res)
{
	memset(res, 0, sizeof(*res));
	for (const char *p = extra; p && *p;) {
		while (*p == ' ' || *p == ';')
			p++;
		const char *end = strchr(p, ';'), *eq;
		if (!end)
			end = p + strlen(p);
		if (p == end)
			break;
		eq = memchr(p, '=', (size_t)(end - p));
		if (!eq || !valid_key(p, (size_t)(eq - p))) {
			result_free(res);
			return -1;
		}
		char *key = xstrndup(p, (size_t)(eq - p));
		char *value = result_extra_get(p, key); /* the first pair from p: this one */
		result_set(res, key, value);
		free(key);
		free(value);
		p = end;
	}
	return 0;
}

/* Whether name is one of the columns that follow `reason` in this
 * version's results.csv. */
static int tail_column(const char *name)
{
	static const char *const last[] = {"wall_s", "extra", "command"};
	for (size_t i = 0; i < result_ncolumns; i++)
		if (strcmp(name, result_columns[i]) == 0)
			return 1;
	for (size_t i = 0; i < ARRAY_SIZE(last); i++)
		if (strcmp(name, last[i]) == 0)
			return 1;
	return 0;
}

/* The cells of one row in the new layout: old columns by name, a new one
 * from the row's extra cell (then removed from it). */
static char **upgrade_row(const struct table *t, const struct row *row, char **header, size_t ncols,
			  long extra_col)
{
	char **cell = xcalloc(ncols, sizeof(char *));
	struct result ex = {0};
	int parsed = extra_col >= 0 && result_extra_parse(row->cell[extra_col], &ex) == 0;
	struct strbuf rest = {0};
	for (size_t i = 0; i < ncols; i++) {
		long c = table_column(t, header[i]);
		const char *v = c >= 0 ? row->cell[c] : parsed ? result_get(&ex, header[i]) : NULL;
		cell[i] = xstrdup(v ? v : "");
	}
	if (parsed) { /* the keys that moved to columns leave extra */
		for (size_t k = 0; k < ex.n; k++)
			if (table_column(t, ex.kv[k].key) >= 0 || !tail_column(ex.kv[k].key))
				result_extra_add(&rest, ex.kv[k].key, ex.kv[k].value);
		for (size_t i = 0; i < ncols; i++)
			if (strcmp(header[i], "extra") == 0) {
				free(cell[i]);
				cell[i] = rest.buf ? rest.buf : xstrdup("");
			}
		result_free(&ex);
	}
	return cell;
}

int result_table_upgrade(struct table *t)
{
	long status = table_column(t, "status");
	if (t->ncols < 6 || status < 3 || strcmp(t->header[0], "id") != 0 || strcmp(t->header[2], "repeat") != 0 ||
	    (size_t)status + 1 >= t->ncols || strcmp(t->header[status + 1], "reason") != 0)
		return -1;
	size_t nfactors = (size_t)status - 3, ncols = 3 + nfactors + 2 + result_ncolumns + 3;
	for (size_t i = (size_t)status + 2; i < t->ncols; i++)
		if (!tail_column(t->header[i]))
			return -1; /* a column this version does not know: a newer one's */
	char **header = xcalloc(ncols, sizeof(char *));
	size_t k = 0;
	for (; k < 3 + nfactors + 2; k++)
		header[k] = xstrdup(t->header[k]);
	for (size_t i = 0; i < result_ncolumns; i++)
		header[k++] = xstrdup(result_columns[i]);
	header[k++] = xstrdup("wall_s");
	header[k++] = xstrdup("extra");
	header[k++] = xstrdup("command");
	int same = ncols == t->ncols;
	for (size_t i = 0; same && i < ncols; i++)
		same = strcmp(header[i], t->header[i]) == 0;
	if (same) {
		for (size_t i = 0; i < ncols; i++)
			free(header[i]);
		free(header);
		return 0;
	}
	long extra_col = table_column(t, "extra");
	struct row *rows = xcalloc(t->nrows ? t->nrows : 1, sizeof(struct row));
	for (size_t r = 0; r < t->nrows; r++)
		rows[r] = (struct row){ncols, upgrade_row(t, &t->rows[r], header, ncols, extra_col)};
	size_t nrows = t->nrows;
	table_free(t);
	*t = (struct table){.ncols = ncols, .header = header, .nrows = nrows, .rows = rows};
	return 1;
}

char *result_row_path(const char *dir, const char *id)
{
	return xasprintf("%s/rows/%s.csv", dir, id);
}

int result_row_file_id(const char *name, char id[17])
{
	if (strlen(name) != 16 + 4 || strspn(name, "0123456789abcdef") != 16 || strcmp(name + 16, ".csv") != 0)
		return 0;
	memcpy(id, name, 16);
	id[16] = '\0';
	return 1;
}
