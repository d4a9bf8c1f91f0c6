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

int cmd_expand(int argc, char **argv)
{
	const char *path = NULL, *only = NULL, *format = "table";
	int count = 0;
	char *ovr[argc]; /* KEY=VALUE overrides */
	size_t novr = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--count") == 0) {
			count = 1;
		} else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
			format = argv[++i];
		} else if (strncmp(argv[i], "--format=", 9) == 0) {
			format = argv[i] + 9;
		} else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
			only = argv[++i];
		} else if (strncmp(argv[i], "--only=", 7) == 0) {
			only = argv[i] + 7;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cmd_unknown_option("expand", argv[i]);
			return cmd_usage("expand");
		} else if (argv[i][0] != '-' && strchr(argv[i], '=')) {
			ovr[novr++] = argv[i];
		} else if (!path) {
			path = argv[i];
		} else {
			error("expand: more than one recipe given ('%s' and '%s')", path, argv[i]);
			return cmd_usage("expand");
		}
	}
	if (!path) {
		error("expand: no recipe given");
		return cmd_usage("expand");
	}
	if (strcmp(format, "table") != 0 && strcmp(format, "csv") != 0) {
		error("expand: unknown format '%s' (expected table or csv)", format);
		return 2;
	}
	if (!(path = catalog_resolve(path, stderr)))
		return 2;
	struct recipe r;
	if (recipe_load_overrides(path, ovr, novr, &r, stderr) < 0)
		return 2;
	struct grid_filter *filter = NULL;
	if (only && (!(filter = grid_filter_parse(&r, only, stderr)) ||
		     grid_filter_check(&r, only, filter, stderr) < 0)) {
		grid_filter_free(filter);
		recipe_free(&r);
		return 2;
	}
	if (count && !filter) {
		printf("%" PRIu64 "\n", grid_count(&r));
		recipe_free(&r);
		return 0;
	}

	/* column widths from the level names: the table streams, nothing is kept */
	size_t *width = xcalloc(r.nfactors ? r.nfactors : 1, sizeof(size_t));
	char ***shown = xcalloc(r.nfactors ? r.nfactors : 1, sizeof(char **)); /* levels for a terminal */
	for (size_t f = 0; f < r.nfactors; f++) {
		width[f] = strlen(r.factors[f].name);
		shown[f] = xcalloc(r.factors[f].nlevels, sizeof(char *));
		for (size_t l = 0; l < r.factors[f].nlevels; l++) {
			shown[f][l] = text_clean(r.factors[f].levels[l], strlen(r.factors[f].levels[l]), 0);
			if (strlen(shown[f][l]) > width[f])
				width[f] = strlen(shown[f][l]);
		}
	}
	int csv = strcmp(format, "csv") == 0;
	int show_repeat = r.repeat > 1;
	struct strbuf sb = {0};
	size_t ncells = 3 + r.nfactors;
	char **cells = xcalloc(ncells, sizeof(char *));
	if (!count) {
		if (csv) {
			cells[0] = "id";
			cells[1] = "index";
			cells[2] = "repeat";
			for (size_t f = 0; f < r.nfactors; f++)
				cells[3 + f] = r.factors[f].name;
			csv_record(&sb, cells, ncells);
			fputs(sb.buf, stdout);
		} else {
			if (r.design.fractional) { /* the design above its runs */
				sb_reset(&sb);
				design_describe(&r, "", &sb);
				printf("%s\n", sb.buf);
			}
			printf("%6s  %-16s", "index", "id");
			if (show_repeat)
				printf("  %6s", "repeat");
			for (size_t f = 0; f < r.nfactors; f++)
				printf("  %-*s", (int)width[f], r.factors[f].name);
			putchar('\n');
		}
	}
	struct grid g;
	grid_init(&g, &r);
	uint64_t n = 0;
	const struct point *p;
	char num[2][32];
	while ((p = grid_next(&g))) {
		if (!grid_filter_match(filter, p))
			continue;
		n++;
		if (count)
			continue;
		if (csv) {
			sb_reset(&sb);
			snprintf(num[0], sizeof(num[0]), "%" PRIu64, p->index);
			snprintf(num[1], sizeof(num[1]), "%u", p->repeat);
			cells[0] = (char *)p->id;
			cells[1] = num[0];
			cells[2] = num[1];
			for (size_t f = 0; f < r.nfactors; f++)
				cells[3 + f] = r.factors[f].levels[p->level[f]];
			csv_record(&sb, cells, ncells);
			fputs(sb.buf, stdout);
		} else {
			printf("%6" PRIu64 "  %s", p->index, p->id);
			if (show_repeat)
				printf("  %6u", p->repeat);
			for (size_t f = 0; f < r.nfactors; f++)
				printf("  %-*s", (int)width[f], shown[f][p->level[f]]);
			putchar('\n');
		}
	}
	if (count)
		printf("%" PRIu64 "\n", n);
	grid_free(&g);
	free(cells);
	free(width);
	for (size_t f = 0; f < r.nfactors; f++) {
		for (size_t l = 0; l < r.factors[f].nlevels; l++)
			free(shown[f][l]);
		free(shown[f]);
	}
	free(shown);
	sb_free(&sb);
	grid_filter_free(filter);
	recipe_free(&r);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		error("expand: cannot write the plan to stdout");
		return 1;
	}
	return 0;
}
