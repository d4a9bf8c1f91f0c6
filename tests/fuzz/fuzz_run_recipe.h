/* fuzz_run_recipe.h - the recipe of the run directories that fuzz_results
 * and fuzz_store make: the factors their seed corpora's rows name. */
#ifndef MATRIX_FUZZ_RUN_RECIPE_H
#define MATRIX_FUZZ_RUN_RECIPE_H

static const char fuzz_run_recipe[] =
	"name: fuzz\n"
	"engine: command\n"
	"command: [true]\n"
	"factors:\n"
	"  model: [a, b]\n"
	"  batch: [1, 2]\n"
	"  gpus: [1, 2]\n"
	"repeat: 2\n";

#endif
