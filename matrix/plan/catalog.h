/* catalog.h - recipes found by name: `matrix run inference_cube` looks for
 * inference_cube.yaml in $MATRIX_RECIPES (directories separated by ':'),
 * ./recipes and the installed share/matrix/recipes; `matrix recipes` lists
 * what those directories hold. */
#ifndef MATRIX_CATALOG_H
#define MATRIX_CATALOG_H

#include <stddef.h>
#include <stdio.h>

/* The directories searched, in order (duplicates dropped, by name or as
 * the same directory): each of $MATRIX_RECIPES, ./recipes,
 * share/matrix/recipes beside the installed binary
 * (SELF/../share/matrix/recipes), the source tree's recipes when this is the
 * build tree's binary (not installed), and MATRIX_PKGDATADIR/recipes (where
 * make install puts them). Computed once per process; n receives the
 * count. */
const char *const *catalog_dirs(size_t *n);

/* Where recipes are looked for, for messages: "$MATRIX_RECIPES (unset), "
 * when it is, then catalog_dirs() separated by ", ". */
struct strbuf;
void catalog_where(struct strbuf *sb);
/* What to do when those directories hold no recipe. */
#define CATALOG_HINT "point MATRIX_RECIPES at a directory of recipes: MATRIX_RECIPES=DIR[:DIR...]"

/* The recipe file arg names: arg itself when it is a file or has a '/' in it
 * (the loader reports a missing one); else NAME (arg less a .yaml or .yml
 * suffix) looked up as NAME.yaml, then NAME.yml, in catalog_dirs(). NULL
 * after printing to err where it looked (and the closest name found there,
 * if one is close). The result is arg or a string that stays valid until the
 * next call. */
const char *catalog_resolve(const char *arg, FILE *err);

struct catalog_entry {
	char *name; /* file name less .yaml / .yml */
	char *path; /* DIR/FILE */
	const char *dir;
	int shadowed; /* an earlier directory has a recipe of that name */
};

/* Every recipe (*.yaml, *.yml) in catalog_dirs(), directory by directory,
 * sorted by name within each. Returns the count; *out is malloc'd (free with
 * catalog_list_free). */
size_t catalog_list(struct catalog_entry **out);
void catalog_list_free(struct catalog_entry *e, size_t n);

#endif
