/* catalog.c - recipes found by name (catalog.h). */
#include "config.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "catalog.h"
#include "util.h"
#include "vocab.h"

#ifndef MATRIX_PKGDATADIR
#define MATRIX_PKGDATADIR "/usr/local/share/matrix"
#endif
#ifndef MATRIX_SRCDIR /* with MATRIX_BUILDDIR: the build tree's binary reads */
#define MATRIX_SRCDIR "" /* the source tree's recipes */
#endif
#ifndef MATRIX_BUILDDIR
#define MATRIX_BUILDDIR ""
#endif

#define CATALOG_MAX_DIRS 64

static char *dirs[CATALOG_MAX_DIRS];
static char *realdirs[CATALOG_MAX_DIRS]; /* realpath of each, NULL when it has none */
static size_t ndirs;

/* Add directory d (len bytes) unless it is there already, by name or as the
 * same directory under another name (./recipes in the source tree). */
static void add_dir(const char *d, size_t len)
{
	if (!len || ndirs == CATALOG_MAX_DIRS)
		return;
	char *name = xstrndup(d, len), *rp = realpath(name, NULL);
	for (size_t i = 0; i < ndirs; i++) {
		if (!strcmp(dirs[i], name) || (rp && realdirs[i] && !strcmp(realdirs[i], rp))) {
			free(name);
			free(rp);
			return;
		}
	}
	dirs[ndirs] = name;
	realdirs[ndirs++] = rp;
}

/* Whether this process is the build tree's matrix (make, not make install):
 * its recipes are then the source tree's, as its plot templates are. */
static int in_build_tree(void)
{
	const char *self = self_dir();
	if (!self || !*MATRIX_BUILDDIR || !*MATRIX_SRCDIR)
		return 0;
	char *rp = realpath(MATRIX_BUILDDIR "/matrix", NULL);
	int yes = rp && !strcmp(rp, self);
	free(rp);
	return yes;
}

const char *const *catalog_dirs(size_t *n)
{
	static int done;
	*n = ndirs;
	if (done)
		return (const char *const *)dirs;
	done = 1;
	const char *env = getenv("MATRIX_RECIPES");
	for (const char *p = env; p && *p;) {
		size_t len = strcspn(p, ":");
		add_dir(p, len);
		p += len + (p[len] == ':');
	}
	add_dir("./recipes", strlen("./recipes"));
	const char *self = self_dir();
	if (self) {
		char *d = xasprintf("%s/../share/matrix/recipes", self);
		char *real = realpath(d, NULL); /* /usr/local/bin/../share -> /usr/local/share */
		if (real) /* a relocated install; the build tree has none */
			add_dir(real, strlen(real));
		free(real);
		free(d);
	}
	if (in_build_tree())
		add_dir(MATRIX_SRCDIR "/recipes", strlen(MATRIX_SRCDIR "/recipes"));
	add_dir(MATRIX_PKGDATADIR "/recipes", strlen(MATRIX_PKGDATADIR "/recipes"));
	*n = ndirs;
	return (const char *const *)dirs;
}

static int is_regular(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* The name of a recipe file: "x.yaml" -> "x"; NULL when it is none. */
static char *recipe_name(const char *file)
{
	size_t len = strlen(file);
	if (file[0] == '.')
		return NULL;
	if (len > 5 && !strcmp(file + len - 5, ".yaml"))
		return xstrndup(file, len - 5);
	if (len > 4 && !strcmp(file + len - 4, ".yml"))
		return xstrndup(file, len - 4);
	return NULL;
}

/* by name, then by path: x.yaml before x.yml, the order of lookup */
static int cmp_entry(const void *a, const void *b)
{
	const struct catalog_entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->path, y->path);
}

size_t catalog_list(struct catalog_entry **out)
{
	size_t nd, n = 0, cap = 16;
	const char *const *d = catalog_dirs(&nd);
	struct catalog_entry *e = xcalloc(cap, sizeof(*e));
	for (size_t i = 0; i < nd; i++) {
		DIR *dir = opendir(d[i]);
		if (!dir)
			continue;
		size_t first = n;
		struct dirent *de;
		while ((de = readdir(dir))) {
			char *name = recipe_name(de->d_name);
			if (!name)
				continue;
			char *path = xasprintf("%s/%s", d[i], de->d_name);
			if (!is_regular(path)) {
				free(name);
				free(path);
				continue;
			}
			if (n == cap)
				e = xrealloc(e, (cap *= 2) * sizeof(*e));
			e[n++] = (struct catalog_entry){.name = name, .path = path, .dir = d[i]};
		}
		closedir(dir);
		qsort(e + first, n - first, sizeof(*e), cmp_entry);
		for (size_t j = first; j < n; j++)
			for (size_t k = 0; k < j && !e[j].shadowed; k++)
				e[j].shadowed = !strcmp(e[k].name, e[j].name);
	}
	*out = e;
	return n;
}

void catalog_list_free(struct catalog_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].name);
		free(e[i].path);
	}
	free(e);
}

void catalog_where(struct strbuf *sb)
{
	size_t nd;
	const char *const *d = catalog_dirs(&nd);
	const char *env = getenv("MATRIX_RECIPES");
	if (!env || !*env)
		sb_puts(sb, "$MATRIX_RECIPES (unset), ");
	for (size_t i = 0; i < nd; i++)
		sb_printf(sb, "%s%s", i ? ", " : "", d[i]);
}

const char *catalog_resolve(const char *arg, FILE *err)
{
	static char *found;
	free(found);
	found = NULL;
	if (is_regular(arg) || strchr(arg, '/'))
		return arg;
	char *name = recipe_name(arg);
	if (!name)
		name = xstrdup(arg);
	size_t nd;
	const char *const *d = catalog_dirs(&nd);
	for (size_t i = 0; i < nd && !found; i++) {
		static const char *const ext[] = {".yaml", ".yml"};
		for (size_t k = 0; k < ARRAY_SIZE(ext) && !found; k++) {
			char *p = xasprintf("%s/%s%s", d[i], name, ext[k]);
			if (is_regular(p))
				found = p;
			else
				free(p);
		}
	}
	if (found) {
		free(name);
		return found;
	}
	struct strbuf sb = {0};
	sb_printf(&sb, "no recipe '%s': no such file, and no %s.yaml in ", arg, name);
	catalog_where(&sb);
	struct catalog_entry *e;
	size_t n = catalog_list(&e);
	const char **names = xcalloc(n ? n : 1, sizeof(*names));
	for (size_t i = 0; i < n; i++)
		names[i] = e[i].name;
	const char *near = vocab_closest(name, names, n);
	if (near)
		sb_printf(&sb, " (did you mean '%s'?)", near);
	else if (n)
		sb_puts(&sb, " ('matrix recipes' lists the recipes there)");
	else
		sb_printf(&sb, " (none holds a recipe: give the recipe's path, or %s)", CATALOG_HINT);
	error_to(err, "%s", sb.buf);
	sb_free(&sb);
	free(names);
	catalog_list_free(e, n);
	free(name);
	return NULL;
}
