/* fuzz_results.c - libFuzzer harness for results.csv -> report (the tables,
 * not the figures): every input becomes the results.csv of a run directory
 * with a fixed recipe, loaded with run_load and turned into tables; hostile
 * rows (torn, quoted, huge, NaN, unknown statuses...) must end in a report or
 * a clear error, never a crash, a hang or a leak. The same run is then
 * exported (JSON and CSV) and compared, `matrix compare`, with a second run
 * whose results.csv is the input's part after a line "--" (the whole input
 * when it has none): matching, gains, verdicts and the geometric mean on
 * hostile rows. Their output goes to /dev/null. Last the two runs are
 * merged (`matrix merge`, a third directory, removed after) and the merged
 * study loaded and turned into tables, as `matrix report` does. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <ftw.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "report/model.h"
#include "report/tables.h"
#include "tests/fuzz/fuzz_run_recipe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* matrix/main.c's, which this harness does not link (it has main) */
int cmd_usage(const char *name)
{
	fprintf(stderr, "usage: matrix %s\n", name);
	return 2;
}

void cmd_unknown_option(const char *cmd, const char *opt)
{
	fprintf(stderr, "matrix: %s: unknown option '%s'\n", cmd, opt);
}

/* A run directory dir (made once, with the recipe) whose results.csv is
 * data[0..size). Returns -1 when it cannot be written. */
static int run_dir(char *dir, size_t dirsize, const char *name, const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		snprintf(dir, dirsize, "/tmp/matrix-fuzz-results.%d%s", (int)getpid(), name);
		mkdir(dir, 0700);
		char p[96];
		snprintf(p, sizeof(p), "%s/recipe.yaml", dir);
		FILE *f = fopen(p, "w");
		if (f) {
			fputs(fuzz_run_recipe, f);
			fclose(f);
		}
	}
	char csv[96];
	snprintf(csv, sizeof(csv), "%s/results.csv", dir);
	FILE *f = fopen(csv, "wb");
	if (!f)
		return -1;
	fwrite(data, 1, size, f);
	fclose(f);
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* The tables of the run (or merged study) in dir, as matrix report builds them. */
static void tables(const char *dir, FILE *devnull)
{
	struct run run;
	memset(&run, 0, sizeof(run));
	if (run_load(&run, dir, NULL, devnull) == 0) {
		struct report_tables rt;
		memset(&rt, 0, sizeof(rt));
		report_tables_build(&run, &rt);
		report_tables_free(&rt);
	}
	run_free(&run);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[64], dir_b[64];
	static FILE *devnull;
	if (!devnull) {
		devnull = fopen("/dev/null", "w");
		if (!freopen("/dev/null", "w", stdout)) /* compare's and export's output */
			return 0;
	}
	if (run_dir(dir, sizeof(dir), "", data, size) < 0)
		return 0;
	const uint8_t *b = data;
	size_t nb = size;
	for (size_t i = 0; i + 4 <= size; i++)
		if (memcmp(data + i, "\n--\n", 4) == 0) {
			b = data + i + 4;
			nb = size - i - 4;
			break;
		}
	if (run_dir(dir_b, sizeof(dir_b), "b", b, nb) < 0)
		return 0;
	tables(dir, devnull);
	/* their messages to /dev/null too (glibc's stderr is a variable; the
	 * sanitizers' reports go to file descriptor 2, not through it) */
	char *exp_json[] = {"export", dir, NULL}, *exp_csv[] = {"export", dir, "--format", "csv", NULL};
	char *cmp[] = {"compare", dir, dir_b, NULL};
	FILE *err = stderr;
	stderr = devnull;
	(void)cmd_export(2, exp_json);
	(void)cmd_export(4, exp_csv);
	(void)cmd_compare(3, cmp);
	fflush(stdout);
	fflush(stderr);
	stderr = err;
	char merged[80];
	snprintf(merged, sizeof(merged), "%sm", dir);
	char *dirs[] = {dir, dir_b};
	if (merge_write(merged, dirs, 2, devnull, NULL) == 0)
		tables(merged, devnull);
	nftw(merged, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}
