/* fuzz_results.c - libFuzzer harness for results.csv -> report (the tables,
 * not the figures): every input becomes the results.csv of a run directory
 * with a fixed recipe, loaded with run_load and turned into tables; hostile
 * rows (torn, quoted, huge, NaN, unknown statuses...) must end in a report or
 * a clear error, never a crash, a hang or a leak. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/model.h"
#include "report/tables.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char recipe[] =
	"name: fuzz\n"
	"engine: command\n"
	"command: [true]\n"
	"factors:\n"
	"  model: [a, b]\n"
	"  batch: [1, 2]\n"
	"  gpus: [1, 2]\n"
	"repeat: 2\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[64], csv[96];
	static FILE *devnull;
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/matrix-fuzz-results.%d", (int)getpid());
		mkdir(dir, 0700);
		char p[96];
		snprintf(p, sizeof(p), "%s/recipe.yaml", dir);
		FILE *f = fopen(p, "w");
		if (f) {
			fputs(recipe, f);
			fclose(f);
		}
		snprintf(csv, sizeof(csv), "%s/results.csv", dir);
		devnull = fopen("/dev/null", "w");
	}
	FILE *f = fopen(csv, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	struct run run;
	memset(&run, 0, sizeof(run));
	if (run_load(&run, dir, NULL, devnull) == 0) {
		struct report_tables rt;
		memset(&rt, 0, sizeof(rt));
		report_tables_build(&run, &rt);
		report_tables_free(&rt);
	}
	run_free(&run);
	return 0;
}
