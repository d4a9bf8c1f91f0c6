/* cmd_export.c - `matrix export DIR [--format json|jsonl|csv|markdown]
 * [--metric NAME]`: one entry per point of a run (its factors, the metric's
 * value with its 95% interval and unit, the processes it merges, its status
 * and reason, the command that reproduces it and where it ran), for other
 * tools, in the spirit of hyperfine's --export-json and nvbench's --json.
 * Values are in the metric's display unit (peak_mem_bytes in MiB), with
 * every digit in JSON, JSON Lines and CSV; the Markdown table is for
 * reading (3 significant digits). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "model.h"
#include "rtable.h"
#include "stats.h"
#include "table.h"
#include "tables.h"
#include "util.h"

/* A number for JSON: every digit (fmt_full), or null. */
static void json_num(struct strbuf *sb, double v)
{
	char buf[32];
	sb_puts(sb, isfinite(v) ? fmt_full(buf, v) : "null");
}

/* What each exported point takes from its first row of results.csv: the
 * command that reproduces it and where it ran (provenance, result.h). */
static const char *const env_cols[] = {"device", "engine", "node", "workdir", "git_commit", "git_dirty",
				       "engine_path"};

struct export {
	const struct run *run;
	const struct table *rows; /* the run's rows (run->table) */
	size_t *by_id;        /* row indices sorted by id */
	long machine_col;     /* a merged study: the rows' machine column, else -1 */
	long machine_factor;  /* and the recipe's machine factor */
};

static const struct table *sort_rows;
static int cmp_row_id(const void *a, const void *b)
{
	const struct table *t = sort_rows;
	return strcmp(t->rows[*(const size_t *)a].cell[0], t->rows[*(const size_t *)b].cell[0]);
}

static void export_open(struct export *x, const struct run *run)
{
	memset(x, 0, sizeof(*x));
	x->run = run;
	x->rows = &run->table;
	size_t n = x->rows->nrows;
	x->by_id = xmalloc((n ? n : 1) * sizeof(size_t));
	for (size_t i = 0; i < n; i++)
		x->by_id[i] = i;
	sort_rows = x->rows;
	if (n && x->rows->ncols)
		qsort(x->by_id, n, sizeof(size_t), cmp_row_id);
	x->machine_col = table_column(x->rows, "machine");
	x->machine_factor = recipe_factor_index(&run->recipe, "machine");
	if (x->machine_factor < 0)
		x->machine_col = -1;
}

static void export_close(struct export *x)
{
	free(x->by_id);
}

/* Cell col of the first row (the lowest index) of point id (on machine, in
 * a merged study: one id is a point on every machine), or NULL. */
static const char *row_cell(const struct export *x, const char *id, const char *machine, const char *col)
{
	const struct table *t = x->rows;
	long c = table_column(t, col);
	if (c < 0 || !t->ncols)
		return NULL;
	size_t lo = 0, hi = t->nrows, best = (size_t)-1;
	while (lo < hi) { /* the first sorted entry of id */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(t->rows[x->by_id[mid]].cell[0], id) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < t->nrows && strcmp(t->rows[x->by_id[i]].cell[0], id) == 0; i++)
		if (x->by_id[i] < best &&
		    (x->machine_col < 0 || !machine || strcmp(t->rows[x->by_id[i]].cell[x->machine_col], machine) == 0))
			best = x->by_id[i];
	const char *v = best == (size_t)-1 ? NULL : t->rows[best].cell[c];
	return v && *v ? v : NULL;
}

/* Point k's id and, in a merged study, its machine. */
static const char *point_id(const struct export *x, size_t k, const char **machine)
{
	const struct run *run = x->run;
	const struct cellset *cs = &run->cells;
	const struct failure *fl = k < cs->ncells ? NULL : &run->failures[k - cs->ncells];
	*machine = NULL;
	if (x->machine_col >= 0) {
		size_t f = (size_t)x->machine_factor;
		*machine = fl ? fl->levels[f] : run_level(run, f, CELL_LEVEL(cs, k, f));
	}
	return fl ? fl->id : cs->id[k];
}

/* Point k (a cell, then the failures) as JSON members: id, factors,
 * status, value, ci95, ci_kind, processes, values or reason, command,
 * environment. */
static void point_members(const struct export *x, size_t k, struct strbuf *sb)
{
	const struct run *run = x->run;
	const struct recipe *r = &run->recipe;
	const struct metric *m = &run->metric;
	const struct cellset *cs = &run->cells;
	const struct failure *fl = k < cs->ncells ? NULL : &run->failures[k - cs->ncells];
	const char *machine, *id = point_id(x, k, &machine);
	sb_puts(sb, "\"id\": ");
	json_quote(sb, id);
	sb_puts(sb, ", \"factors\": {");
	for (size_t f = 0; f < r->nfactors; f++) {
		sb_puts(sb, f ? ", " : "");
		json_quote(sb, r->factors[f].name);
		sb_puts(sb, ": ");
		json_quote(sb, fl ? fl->levels[f] : run_level(run, f, CELL_LEVEL(cs, k, f)));
	}
	sb_puts(sb, "}, \"status\": ");
	json_quote(sb, fl ? fl->status : "ok");
	if (fl) {
		sb_puts(sb, ", \"reason\": ");
		json_quote(sb, fl->reason);
	} else {
		double v = cs->value[k], u = cs->u[k];
		sb_puts(sb, ", \"value\": ");
		json_num(sb, v * m->scale);
		sb_puts(sb, ", \"ci95\": ");
		if (isfinite(u)) {
			sb_puts(sb, "[");
			json_num(sb, v * exp(-u) * m->scale);
			sb_puts(sb, ", ");
			json_num(sb, v * exp(u) * m->scale);
			sb_puts(sb, "]");
		} else {
			sb_puts(sb, "null");
		}
		sb_puts(sb, ", \"ci_kind\": ");
		json_quote(sb, ci_kind_name((enum ci_kind)cs->kind[k]));
		sb_printf(sb, ", \"processes\": %zu, \"values\": [", cs->nrep[k]);
		for (size_t i = 0; cs->rep && cs->rep[k] && i < cs->nrep[k]; i++) {
			sb_puts(sb, i ? ", " : "");
			json_num(sb, cs->rep[k][i] * m->scale);
		}
		sb_puts(sb, "]");
	}
	const char *cmd = row_cell(x, id, machine, "command");
	sb_puts(sb, ", \"command\": ");
	if (cmd)
		json_quote(sb, cmd);
	else
		sb_puts(sb, "null");
	sb_puts(sb, ", \"environment\": {");
	for (size_t i = 0, n = 0; i < ARRAY_SIZE(env_cols); i++) {
		const char *v = row_cell(x, id, machine, env_cols[i]);
		if (!v)
			continue;
		sb_puts(sb, n++ ? ", " : "");
		json_quote(sb, env_cols[i]);
		sb_puts(sb, ": ");
		json_quote(sb, v);
	}
	sb_puts(sb, "}");
}

/* The recipe and the metric as JSON members. */
static void head_members(const struct run *run, struct strbuf *sb, int flat)
{
	const struct metric *m = &run->metric;
	sb_puts(sb, "\"recipe\": ");
	json_quote(sb, run->recipe.name);
	sb_puts(sb, flat ? ", \"metric\": " : ",\n  \"metric\": {\"name\": ");
	json_quote(sb, m->name);
	sb_puts(sb, flat ? ", \"unit\": " : ", \"unit\": ");
	json_quote(sb, m->unit);
	sb_printf(sb, ", \"higher_is_better\": %s%s", m->higher_better ? "true" : "false", flat ? "" : "}");
}

/* JSON: {"recipe", "metric": {name, unit, higher_is_better}, "points": [...]}. */
static void export_json(const struct export *x, struct strbuf *sb)
{
	const struct run *run = x->run;
	size_t n = run->cells.ncells + run->nfailures;
	sb_puts(sb, "{\n  ");
	head_members(run, sb, 0);
	sb_puts(sb, ",\n  \"points\": [");
	for (size_t k = 0; k < n; k++) {
		sb_puts(sb, k ? ",\n    {" : "\n    {");
		point_members(x, k, sb);
		sb_puts(sb, "}");
	}
	sb_puts(sb, n ? "\n  ]\n}\n" : "]\n}\n");
}

/* JSON Lines: one object per point, each with the recipe and the metric
 * (name, unit, higher_is_better) beside the point's members. */
static void export_jsonl(const struct export *x, struct strbuf *sb)
{
	const struct run *run = x->run;
	size_t n = run->cells.ncells + run->nfailures;
	for (size_t k = 0; k < n; k++) {
		sb_puts(sb, "{");
		head_members(run, sb, 1);
		sb_puts(sb, ", ");
		point_members(x, k, sb);
		sb_puts(sb, "}\n");
	}
}

/* CSV: a row per point, every digit; then the command and where it ran. */
static void export_csv(const struct export *x, struct strbuf *sb)
{
	const struct run *run = x->run;
	const struct recipe *r = &run->recipe;
	const struct metric *m = &run->metric;
	const struct cellset *cs = &run->cells;
	static const char *const tail[] = {"status", "metric", "unit", "value", "ci95_lo", "ci95_hi", "processes",
					   "reason", "command"};
	size_t nf = r->nfactors, nt = ARRAY_SIZE(tail), ncells = 1 + nf + nt + ARRAY_SIZE(env_cols);
	char **cell = xcalloc(ncells, sizeof(char *));
	char **fname = xcalloc(nf ? nf : 1, sizeof(char *));
	char num[4][32];
	cell[0] = "id";
	for (size_t k = 0; k < nt; k++)
		cell[1 + nf + k] = (char *)tail[k];
	for (size_t k = 0; k < ARRAY_SIZE(env_cols); k++)
		cell[1 + nf + nt + k] = (char *)env_cols[k];
	/* a factor named as another column (device, engine: the vocabulary's)
	 * is written factors.NAME; the other columns keep theirs */
	run_factor_header(run, cell, ncells, 1);
	memcpy(fname, cell + 1, nf * sizeof(char *));
	csv_sheet_record(sb, cell, ncells);
	for (size_t k = 0; k < cs->ncells + run->nfailures; k++) {
		const struct failure *fl = k < cs->ncells ? NULL : &run->failures[k - cs->ncells];
		const char *machine, *id = point_id(x, k, &machine);
		cell[0] = (char *)id;
		for (size_t f = 0; f < nf; f++)
			cell[1 + f] = fl ? fl->levels[f] : (char *)run_level(run, f, CELL_LEVEL(cs, k, f));
		for (size_t i = 0; i < 4; i++)
			num[i][0] = '\0';
		if (!fl) {
			double v = cs->value[k], u = cs->u[k];
			fmt_full(num[0], v * m->scale);
			if (isfinite(u)) {
				fmt_full(num[1], v * exp(-u) * m->scale);
				fmt_full(num[2], v * exp(u) * m->scale);
			}
			snprintf(num[3], sizeof(num[3]), "%zu", cs->nrep[k]);
		}
		const char *row[] = {fl ? fl->status : "ok", m->name, m->unit, num[0], num[1], num[2], num[3],
				     fl ? fl->reason : "", row_cell(x, id, machine, "command")};
		memcpy(cell + 1 + nf, row, sizeof(row));
		for (size_t i = 0; i < ARRAY_SIZE(env_cols); i++)
			cell[1 + nf + nt + i] = (char *)row_cell(x, id, machine, env_cols[i]);
		csv_sheet_record(sb, cell, ncells);
	}
	for (size_t f = 0; f < nf; f++)
		free(fname[f]);
	free(fname);
	free(cell);
}

/* Markdown: the per-point table that opens report.md (the factors that
 * vary, the metric, its 95% interval, the status), every point, numbers
 * with 3 significant digits. */
static void export_markdown(const struct export *x, struct strbuf *sb)
{
	struct rtable *t = report_per_point_table(x->run);
	rtable_markdown(t, 0, sb);
	rtable_free(t);
}

int cmd_export(int argc, char **argv)
{
	const char *dir = NULL, *format = "json", *metric = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if ((strcmp(a, "--format") == 0 || strcmp(a, "--metric") == 0) && i + 1 < argc) {
			*(a[2] == 'f' ? &format : &metric) = argv[++i];
		} else if (a[0] == '-' && a[1]) {
			cmd_unknown_option("export", a);
			return cmd_usage("export");
		} else if (!dir) {
			dir = a;
		} else {
			error("export: more than one run directory given ('%s' and '%s')", dir, a);
			return cmd_usage("export");
		}
	}
	if (!dir) {
		error("export: no run directory given");
		return cmd_usage("export");
	}
	static const char *const formats[] = {"json", "jsonl", "csv", "markdown"};
	void (*const writers[])(const struct export *, struct strbuf *) = {export_json, export_jsonl, export_csv,
									  export_markdown};
	size_t fi = 0;
	while (fi < ARRAY_SIZE(formats) && strcmp(format, formats[fi]) != 0)
		fi++;
	if (fi == ARRAY_SIZE(formats)) {
		error("export: unknown format '%s' (expected json, jsonl, csv or markdown)", format);
		return 2;
	}
	struct run run;
	if (run_load(&run, dir, metric, stderr) != 0)
		return 2;
	struct export x;
	export_open(&x, &run);
	struct strbuf sb = {0};
	sb_add(&sb, "", 0);
	writers[fi](&x, &sb);
	export_close(&x);
	run_free(&run);
	if (!strcmp(format, "csv") && isatty(1)) {
		/* CSV keeps a cell's bytes for the program that reads it; on a
		 * terminal an escape sequence in a level would act, so control
		 * characters are shown escaped there (JSON and Markdown escape
		 * them anyway) */
		char *clean = text_clean_lines(sb.buf, sb.len);
		sb.len = 0;
		sb_puts(&sb, clean);
		free(clean);
	}
	int ok = fwrite(sb.buf, 1, sb.len, stdout) == sb.len && fflush(stdout) == 0;
	sb_free(&sb);
	if (!ok) {
		error("export: cannot write to stdout");
		return 1;
	}
	return 0;
}
