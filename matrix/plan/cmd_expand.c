/* cmd_expand.c - `matrix expand RECIPE`: print the plan without running it. */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cmd.h"
#include "table.h"
#include "design.h"
#include "grid.h"
#include "recipe.h"
#include "util.h"

struct expand_opts {
	const char *path, *only, *format;
	int count;
	char **ovr;           /* KEY=VALUE overrides (room for argc) */
	size_t novr;
};

/* Read the command line into o. Returns -1 when it is good, else the exit
 * status to return (after the usage or an error). */
static int expand_args(int argc, char **argv, struct expand_opts *o)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--count") == 0) {
			o->count = 1;
		} else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
			o->format = argv[++i];
		} else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
			o->only = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cmd_unknown_option("expand", argv[i]);
			return cmd_usage("expand");
		} else if (argv[i][0] != '-' && strchr(argv[i], '=')) {
			o->ovr[o->novr++] = argv[i];
		} else if (!o->path) {
			o->path = argv[i];
		} else {
			cmd_second_recipe("expand", o->path, argc, argv, i);
			return cmd_usage("expand");
		}
	}
	if (!o->path) {
		error("expand: no recipe given");
		return cmd_usage("expand");
	}
	if (strcmp(o->format, "table") != 0 && strcmp(o->format, "csv") != 0) {
		error("expand: unknown format '%s' (expected table or csv)", o->format);
		return 2;
	}
	return -1;
}

/* How the points are printed: a table for the terminal, or CSV. */
struct listing {
	const struct recipe *r;
	int csv;
	int show_repeat;      /* table: a repeat column when repeat > 1 */
	size_t *width;        /* table: per factor */
	char ***shown;        /* table: the levels cleaned for a terminal */
	size_t ncells;
	char **cells;         /* csv: one record */
	struct strbuf sb;
};

/* Column widths from the level names: the table streams, nothing is kept. */
static void listing_init(struct listing *ls, const struct recipe *r, int csv)
{
	memset(ls, 0, sizeof(*ls));
	ls->r = r;
	ls->csv = csv;
	ls->show_repeat = r->repeat > 1;
	ls->width = xcalloc(r->nfactors ? r->nfactors : 1, sizeof(size_t));
	ls->shown = xcalloc(r->nfactors ? r->nfactors : 1, sizeof(char **));
	for (size_t f = 0; f < r->nfactors; f++) {
		ls->width[f] = text_columns(r->factors[f].name, strlen(r->factors[f].name));
		ls->shown[f] = xcalloc(r->factors[f].nlevels, sizeof(char *));
		for (size_t l = 0; l < r->factors[f].nlevels; l++) {
			ls->shown[f][l] = text_clean(r->factors[f].levels[l], strlen(r->factors[f].levels[l]), 0);
			size_t w = text_columns(ls->shown[f][l], strlen(ls->shown[f][l]));
			if (w > ls->width[f])
				ls->width[f] = w;
		}
	}
	ls->ncells = 3 + r->nfactors;
	ls->cells = xcalloc(ls->ncells, sizeof(char *));
}

/* "  TEXT" padded to width columns (characters, not bytes: 'héllo' is 5) */
static void print_cell(const char *text, size_t width)
{
	size_t w = text_columns(text, strlen(text));
	printf("  %s%*s", text, (int)(width > w ? width - w : 0), "");
}

/* The CSV header, or the table's (after the fractional design, if any). */
static void listing_head(struct listing *ls)
{
	const struct recipe *r = ls->r;
	if (ls->csv) {
		ls->cells[0] = "id";
		ls->cells[1] = "index";
		ls->cells[2] = "repeat";
		for (size_t f = 0; f < r->nfactors; f++)
			ls->cells[3 + f] = r->factors[f].name;
		csv_record(&ls->sb, ls->cells, ls->ncells);
		fputs(ls->sb.buf, stdout);
		return;
	}
	if (r->design.fractional) { /* the design above its runs */
		sb_reset(&ls->sb);
		design_describe(r, "", &ls->sb);
		printf("%s\n", ls->sb.buf);
	}
	printf("%6s  %-16s", "index", "id");
	if (ls->show_repeat)
		printf("  %6s", "repeat");
	for (size_t f = 0; f < r->nfactors; f++)
		print_cell(r->factors[f].name, ls->width[f]);
	putchar('\n');
}

/* One point: a CSV record or a line of the table. */
static void listing_point(struct listing *ls, const struct point *p)
{
	const struct recipe *r = ls->r;
	if (ls->csv) {
		char num[2][32];
		sb_reset(&ls->sb);
		snprintf(num[0], sizeof(num[0]), "%" PRIu64, p->index);
		snprintf(num[1], sizeof(num[1]), "%u", p->repeat);
		ls->cells[0] = (char *)p->id;
		ls->cells[1] = num[0];
		ls->cells[2] = num[1];
		for (size_t f = 0; f < r->nfactors; f++)
			ls->cells[3 + f] = r->factors[f].levels[p->level[f]];
		csv_record(&ls->sb, ls->cells, ls->ncells);
		fputs(ls->sb.buf, stdout);
		return;
	}
	printf("%6" PRIu64 "  %s", p->index, p->id);
	if (ls->show_repeat)
		printf("  %6u", p->repeat);
	for (size_t f = 0; f < r->nfactors; f++)
		print_cell(ls->shown[f][p->level[f]], ls->width[f]);
	putchar('\n');
}

static void listing_free(struct listing *ls)
{
	free(ls->cells);
	free(ls->width);
	for (size_t f = 0; f < ls->r->nfactors; f++) {
		for (size_t l = 0; l < ls->r->factors[f].nlevels; l++)
			free(ls->shown[f][l]);
		free(ls->shown[f]);
	}
	free(ls->shown);
	sb_free(&ls->sb);
}

int cmd_expand(int argc, char **argv)
{
	char *ovr[argc];
	struct expand_opts o = {NULL, NULL, "table", 0, ovr, 0};
	int rc = expand_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (!(o.path = catalog_resolve(o.path, stderr)))
		return 2;
	struct recipe r;
	if (recipe_load_overrides(o.path, o.ovr, o.novr, &r, stderr) < 0)
		return 2;
	struct grid_filter *filter = NULL;
	if (o.only && (!(filter = grid_filter_parse(&r, o.only, stderr)) ||
		       grid_filter_check(&r, o.only, filter, stderr) < 0)) {
		grid_filter_free(filter);
		recipe_free(&r);
		return 2;
	}
	if (o.count && !filter) {
		printf("%" PRIu64 "\n", grid_count(&r));
		recipe_free(&r);
		return 0;
	}
	struct listing ls;
	listing_init(&ls, &r, strcmp(o.format, "csv") == 0);
	if (!o.count)
		listing_head(&ls);
	struct grid g;
	grid_init(&g, &r);
	uint64_t n = 0;
	const struct point *p;
	while ((p = grid_next(&g))) {
		if (!grid_filter_match(filter, p))
			continue;
		n++;
		if (!o.count)
			listing_point(&ls, p);
	}
	if (o.count)
		printf("%" PRIu64 "\n", n);
	grid_free(&g);
	listing_free(&ls);
	grid_filter_free(filter);
	recipe_free(&r);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		error("expand: cannot write the plan to stdout");
		return 1;
	}
	return 0;
}
