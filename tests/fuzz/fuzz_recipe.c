/* fuzz_recipe.c - libFuzzer harness for the recipe loader (plan/recipe.c):
 * every input is written to a file and loaded; a load must end in a recipe or
 * a located error, never a crash, a hang or a leak (ASan + UBSan + LSan). A
 * recipe that loads is then planned as `matrix run` plans it: its points
 * counted, the design described, the first points of the plan walked with
 * their ids and, for the native and command engines, their command lines
 * (the PyTorch engine's looks for a python: not here).
 *   make fuzz   (clang: ./configure CC=clang), or: tests/fuzz/fuzz_recipe -max_total_time=60 tests/fuzz/corpus/recipe */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan/argv.h"
#include "plan/design.h"
#include "plan/grid.h"
#include "plan/recipe.h"
#include "util.h"

#define FUZZ_POINTS 64 /* of the plan walked */

static void plan(const struct recipe *r, FILE *devnull)
{
	(void)grid_count(r);
	struct strbuf sb = {0};
	design_describe(r, "  ", &sb);
	sb_free(&sb);
	struct grid g;
	grid_init(&g, r);
	const struct point *p;
	for (int i = 0; i < FUZZ_POINTS && (p = grid_next(&g)); i++) {
		if (strcmp(argv_engine(r, p), "pytorch") == 0)
			continue;
		struct point_cmd cmd;
		if (argv_build(r, p, "/tmp/matrix-fuzz-run", "/tmp/matrix-fuzz-run/logs/x.result", &cmd, devnull) == 0)
			argv_free(&cmd);
	}
	grid_free(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	static FILE *devnull;
	if (!path[0]) {
		snprintf(path, sizeof(path), "/tmp/matrix-fuzz-recipe.%d.yaml", (int)getpid());
		devnull = fopen("/dev/null", "w");
	}
	FILE *f = fopen(path, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	struct recipe r;
	if (recipe_load(path, &r, devnull) == 0) {
		plan(&r, devnull);
		recipe_free(&r);
	}
	return 0;
}
