/* cmd_export.c - `matrix export DIR [--format json|csv] [--metric NAME]`:
 * one entry per point of a run (its factors, the metric's value with its 95%
 * interval and unit, the processes it merges, its status and reason), for
 * other tools, in the spirit of hyperfine's --export-json and nvbench's
 * --json. Values are in the metric's display unit (peak_mem_bytes in MiB). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "model.h"
#include "stats.h"
#include "table.h"
#include "util.h"

/* A JSON string: control characters and DEL as \u00XX, a byte that is not
 * part of valid UTF-8 (a results.csv from elsewhere) as U+FFFD, so that the
 * output is always valid JSON. */
static void json_str(struct strbuf *sb, const char *s)
{
	sb_putc(sb, '"');
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		size_t len = utf8_len(p + i, n - i);
		if (!len) {
			sb_puts(sb, "\\ufffd");
			i++;
		} else if (p[i] == '"' || p[i] == '\\') {
			sb_printf(sb, "\\%c", p[i]);
			i++;
		} else if (p[i] < 0x20 || p[i] == 0x7f) {
			sb_printf(sb, "\\u%04x", p[i]);
			i++;
		} else {
			sb_add(sb, (const char *)p + i, len);
			i += len;
		}
	}
	sb_putc(sb, '"');
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

/* csv_record of n cells, each through sheet_cell. */
static void sheet_record(struct strbuf *sb, char **cell, size_t n)
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

/* A number for JSON: finite with 6 significant digits, else null. */
static void json_num(struct strbuf *sb, double v)
{
	if (isfinite(v))
		sb_printf(sb, "%.6g", v);
	else
		sb_puts(sb, "null");
}

static void export_json(const struct run *run, struct strbuf *sb)
{
	const struct recipe *r = &run->recipe;
	const struct metric *m = &run->metric;
	const struct cellset *cs = &run->cells;
	sb_puts(sb, "{\n  \"recipe\": ");
	json_str(sb, r->name);
	sb_puts(sb, ",\n  \"metric\": {\"name\": ");
	json_str(sb, m->name);
	sb_puts(sb, ", \"unit\": ");
	json_str(sb, m->unit);
	sb_printf(sb, ", \"higher_is_better\": %s},\n  \"points\": [", m->higher_better ? "true" : "false");
	size_t n = 0;
	for (size_t c = 0; c < cs->ncells; c++, n++) {
		sb_puts(sb, n ? ",\n    {\"id\": " : "\n    {\"id\": ");
		json_str(sb, cs->id[c]);
		sb_puts(sb, ", \"factors\": {");
		for (size_t f = 0; f < r->nfactors; f++) {
			sb_puts(sb, f ? ", " : "");
			json_str(sb, r->factors[f].name);
			sb_puts(sb, ": ");
			json_str(sb, run_level(run, f, CELL_LEVEL(cs, c, f)));
		}
		double v = cs->value[c], u = cs->u[c];
		sb_puts(sb, "}, \"status\": \"ok\", \"value\": ");
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
		json_str(sb, ci_kind_name((enum ci_kind)cs->kind[c]));
		sb_printf(sb, ", \"processes\": %zu, \"values\": [", cs->nrep[c]);
		for (size_t k = 0; cs->rep && cs->rep[c] && k < cs->nrep[c]; k++) {
			sb_puts(sb, k ? ", " : "");
			json_num(sb, cs->rep[c][k] * m->scale);
		}
		sb_puts(sb, "]}");
	}
	for (size_t i = 0; i < run->nfailures; i++, n++) {
		const struct failure *fl = &run->failures[i];
		sb_puts(sb, n ? ",\n    {\"id\": " : "\n    {\"id\": ");
		json_str(sb, fl->id);
		sb_puts(sb, ", \"factors\": {");
		for (size_t f = 0; f < r->nfactors; f++) {
			sb_puts(sb, f ? ", " : "");
			json_str(sb, r->factors[f].name);
			sb_puts(sb, ": ");
			json_str(sb, fl->levels[f]);
		}
		sb_puts(sb, "}, \"status\": ");
		json_str(sb, fl->status);
		sb_puts(sb, ", \"reason\": ");
		json_str(sb, fl->reason);
		sb_puts(sb, "}");
	}
	sb_puts(sb, n ? "\n  ]\n}\n" : "]\n}\n");
}

static void export_csv(const struct run *run, struct strbuf *sb)
{
	const struct recipe *r = &run->recipe;
	const struct metric *m = &run->metric;
	const struct cellset *cs = &run->cells;
	size_t nf = r->nfactors, ncells = nf + 9;
	char **cell = xcalloc(ncells, sizeof(char *));
	char num[5][32];
	cell[0] = "id";
	for (size_t f = 0; f < nf; f++)
		cell[1 + f] = r->factors[f].name;
	const char *const tail[] = {"status", "metric", "unit", "value", "ci95_lo", "ci95_hi", "processes", "reason"};
	for (size_t k = 0; k < ARRAY_SIZE(tail); k++)
		cell[1 + nf + k] = (char *)tail[k];
	sheet_record(sb, cell, nf + 9);
	for (size_t c = 0; c < cs->ncells; c++) {
		double v = cs->value[c], u = cs->u[c];
		cell[0] = cs->id[c];
		for (size_t f = 0; f < nf; f++)
			cell[1 + f] = (char *)run_level(run, f, CELL_LEVEL(cs, c, f));
		snprintf(num[0], sizeof(num[0]), "%.6g", v * m->scale);
		snprintf(num[1], sizeof(num[1]), isfinite(u) ? "%.6g" : "", v * exp(-u) * m->scale);
		snprintf(num[2], sizeof(num[2]), isfinite(u) ? "%.6g" : "", v * exp(u) * m->scale);
		snprintf(num[3], sizeof(num[3]), "%zu", cs->nrep[c]);
		char *row[] = {"ok", m->name, m->unit, num[0], num[1], num[2], num[3], ""};
		memcpy(cell + 1 + nf, row, sizeof(row));
		sheet_record(sb, cell, nf + 9);
	}
	for (size_t i = 0; i < run->nfailures; i++) {
		const struct failure *fl = &run->failures[i];
		cell[0] = fl->id;
		for (size_t f = 0; f < nf; f++)
			cell[1 + f] = fl->levels[f];
		char *row[] = {fl->status, m->name, m->unit, "", "", "", "", fl->reason};
		memcpy(cell + 1 + nf, row, sizeof(row));
		sheet_record(sb, cell, nf + 9);
	}
	free(cell);
}

int cmd_export(int argc, char **argv)
{
	const char *dir = NULL, *format = "json", *metric = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if ((strcmp(a, "--format") == 0 || strcmp(a, "--metric") == 0) && i + 1 < argc) {
			*(a[2] == 'f' ? &format : &metric) = argv[++i];
		} else if (strncmp(a, "--format=", 9) == 0) {
			format = a + 9;
		} else if (strncmp(a, "--metric=", 9) == 0) {
			metric = a + 9;
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
	if (strcmp(format, "json") != 0 && strcmp(format, "csv") != 0) {
		error("export: unknown format '%s' (expected json or csv)", format);
		return 2;
	}
	struct run run;
	if (run_load(&run, dir, metric, stderr) != 0)
		return 2;
	struct strbuf sb = {0};
	if (format[0] == 'j')
		export_json(&run, &sb);
	else
		export_csv(&run, &sb);
	run_free(&run);
	int ok = fwrite(sb.buf, 1, sb.len, stdout) == sb.len && fflush(stdout) == 0;
	sb_free(&sb);
	if (!ok) {
		error("export: cannot write to stdout");
		return 1;
	}
	return 0;
}
