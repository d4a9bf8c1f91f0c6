/* cmd_build.c - `matrix build RECIPE [KEY=VALUE...] [--rebuild]`: the images
 * of a recipe's container levels, built (a `build:` entry) or pulled (an
 * image reference) where missing, as `matrix run` would on first use, the
 * output on stdout; then a header line and one line per level, tab-separated:
 * its name, runtime, image reference, image id, repository digests (the
 * values env.txt and the rows record) and whether it was built (or pulled),
 * present already or FAILED. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "images.h"
#include "plan/catalog.h"
#include "plan/recipe.h"
#include "util.h"

/* The digest column of level j: its repository digests as env.txt's
 * digest= and the rows' image_digest= hold them, else why it has none. */
static const char *build_digest(const struct images *I, size_t j)
{
	if (I->digest[j])
		return I->digest[j];
	if (!I->id[j])
		return "-";
	return I->entry[j]->build ? "no digest: local build" : "no digest: local image, not from a registry";
}

int cmd_build(int argc, char **argv)
{
	const char *path = NULL;
	int rebuild = 0;
	char **ovr = xcalloc((size_t)argc, sizeof(char *));
	size_t novr = 0;
	int rc = 2;
	struct recipe r;
	int have_recipe = 0;
	struct images I = {0};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--rebuild") == 0) {
			rebuild = 1;
		} else if (a[0] == '-' && a[1]) {
			cmd_unknown_option("build", a);
			goto out;
		} else if (strchr(a, '=')) {
			ovr[novr++] = argv[i];
		} else if (!path) {
			path = a;
		} else {
			cmd_second_recipe("build", path, argc, argv, i);
			goto out;
		}
	}
	if (!path) {
		error("build: no recipe given");
		rc = cmd_usage("build");
		goto out;
	}
	/* a recipe by name, as run and expand take it ('unable to read NAME') */
	if (!(path = catalog_resolve(path, stderr)) || recipe_load_overrides(path, ovr, novr, &r, stderr) < 0)
		goto out;
	have_recipe = 1;
	long cf = recipe_factor_index(&r, "container");
	if (cf < 0) {
		error("build: '%s' has no 'container' factor: nothing to build", path);
		goto out;
	}
	if (images_resolve(&I, &r, cf, 0) < 0)
		goto out;
	size_t nfailed = images_ensure(&I, NULL, NULL, rebuild, stdout);
	printf("container\truntime\timage\tid\tdigest\tstatus\n");
	for (size_t j = 0; j < I.n; j++)
		printf("%s\t%s\t%s\t%s\t%s\t%s\n", I.entry[j]->name, I.im[j].runtime, I.im[j].ref,
		       I.id[j] ? I.id[j] : "-", build_digest(&I, j),
		       I.failed[j] ? "FAILED" : I.built[j] ? "built" : "present");
	if (nfailed)
		error("build: %zu of %zu images could not be had (see above)", nfailed, I.n);
	rc = nfailed ? 1 : 0;
out:
	images_free(&I);
	if (have_recipe)
		recipe_free(&r);
	free(ovr);
	return rc;
}
