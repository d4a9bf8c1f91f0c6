/* fuzz_recipe.c - libFuzzer harness for the recipe loader (plan/recipe.c):
 * every input is written to a file and loaded; a load must end in a recipe or
 * a located error, never a crash, a hang or a leak (ASan + UBSan + LSan).
 *   make fuzz   (clang: ./configure CC=clang), or: tests/fuzz/fuzz_recipe -max_total_time=60 tests/fuzz/corpus/recipe */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "plan/recipe.h"

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
	if (recipe_load(path, &r, devnull) == 0)
		recipe_free(&r);
	return 0;
}
