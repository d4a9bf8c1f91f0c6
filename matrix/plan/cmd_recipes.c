/* cmd_recipes.c - `matrix recipes`: the recipes that can be run by name, with
 * their point counts (catalog.h). */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cmd.h"
#include "grid.h"
#include "recipe.h"
#include "util.h"

/* The first line of what the loader said about a recipe that does not load. */
static char *first_error(const char *buf, size_t len)
{
	size_t n = 0;
	while (n < len && buf[n] != '\n')
		n++;
	const char *s = buf;
	if (n > 8 && !strncmp(s, "matrix: ", 8)) {
		s += 8;
		n -= 8;
	}
	return text_clean(s, n, 200);
}

/* One line: NAME, points (or why there are none), description. Returns 1
 * when the recipe does not load. */
static int list_one(const struct catalog_entry *e, int names_only)
{
	if (names_only) {
		if (!e->shadowed)
			printf("%s\n", e->name);
		return 0;
	}
	char *name = text_term(e->name, 200);
	if (e->shadowed) {
		printf("  %-28s (hidden by the one of that name above)\n", name);
		free(name);
		return 0;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *err = open_memstream(&buf, &len);
	struct recipe r;
	int bad = !err || recipe_load(e->path, &r, err) < 0;
	if (err)
		fclose(err);
	if (bad) {
		char *why = buf ? first_error(buf, len) : xstrdup("unreadable");
		printf("  %-28s invalid: %s\n", name, why);
		free(why);
	} else {
		char *desc = r.description ? text_term(r.description, TEXT_TERM_MAX) : xstrdup("");
		size_t cut = strcspn(desc, "\\"); /* the first line: text_term wrote a newline as \x0a */
		if (strlen(desc) > 72 || cut < strlen(desc))
			strcpy(desc + (cut < 69 ? cut : 69), "...");
		uint64_t n = grid_count(&r);
		printf("  %-28s %8" PRIu64 " %-7s %s\n", name, n, n == 1 ? "point" : "points", desc);
		free(desc);
		recipe_free(&r);
	}
	free(buf);
	free(name);
	return bad;
}

int cmd_recipes(int argc, char **argv)
{
	int names_only = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--names")) {
			names_only = 1;
		} else if (argv[i][0] == '-') {
			cmd_unknown_option("recipes", argv[i]);
			return cmd_usage("recipes");
		} else {
			error("recipes: unexpected argument '%s'", argv[i]);
			return cmd_usage("recipes");
		}
	}
	struct catalog_entry *e;
	size_t n = catalog_list(&e);
	if (!n) {
		struct strbuf sb = {0};
		catalog_where(&sb);
		error("no recipes (*.yaml) in %s; %s", sb.buf, CATALOG_HINT);
		sb_free(&sb);
		catalog_list_free(e, n);
		return 1;
	}
	int bad = 0;
	for (size_t i = 0; i < n; i++) {
		if (!names_only && (i == 0 || strcmp(e[i].dir, e[i - 1].dir))) {
			char *dir = text_term(e[i].dir, TEXT_TERM_MAX);
			printf("%s%s:\n", i ? "\n" : "", dir);
			free(dir);
		}
		bad |= list_one(&e[i], names_only);
	}
	catalog_list_free(e, n);
	return bad;
}
