/* fuzz_store.c - libFuzzer harness for the run's store (run/store.c): a run
 * directory left by a runner that was killed, or received from elsewhere,
 * is resumed. Every input is split at its first line "--": the part before
 * is the directory's results.csv (torn, of an older version, of other
 * columns...), the part after the row file of a point that a slurm task
 * wrote (rows/ID.csv); a results.csv whose last line has no newline is one
 * torn by a runner killed mid-write. store_open (the header checked or upgraded, a torn
 * last line cut) and store_merge_rows (the row file appended) must end in a
 * store or a clear error, never a crash, a hang or a leak; the directory is
 * emptied after each input. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan/recipe.h"
#include "run/store.h"
#include "tests/fuzz/fuzz_run_recipe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ROW_ID "53998fa5c5bb32c2"

static int seen_none(const char *id, void *ctx)
{
	(void)id;
	(void)ctx;
	return 0;
}

static void merged_row(const struct row *row, void *ctx)
{
	(void)row;
	++*(long *)ctx;
}

static void put(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(data, 1, size, f);
		fclose(f);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[64], csv[96], rows[96], row[128], rpath[96];
	static FILE *devnull;
	static struct recipe r;
	static int loaded;
	if (!devnull) {
		devnull = fopen("/dev/null", "w");
		snprintf(dir, sizeof(dir), "/tmp/matrix-fuzz-store.%d", (int)getpid());
		mkdir(dir, 0700);
		snprintf(rpath, sizeof(rpath), "%s/recipe.yaml", dir);
		put(rpath, (const uint8_t *)fuzz_run_recipe, sizeof(fuzz_run_recipe) - 1);
		loaded = recipe_load(rpath, &r, devnull) == 0;
		snprintf(csv, sizeof(csv), "%s/results.csv", dir);
		snprintf(rows, sizeof(rows), "%s/rows", dir);
		snprintf(row, sizeof(row), "%s/" ROW_ID ".csv", rows);
	}
	if (!loaded)
		return 0;
	size_t na = size;
	const uint8_t *b = NULL;
	for (size_t i = 0; i + 4 <= size; i++)
		if (memcmp(data + i, "\n--\n", 4) == 0) {
			na = i; /* the newline before "--" is not the file's: "x\n\n--\n" ends in one */
			b = data + i + 4;
			break;
		}
	put(csv, data, na);
	if (b) {
		mkdir(rows, 0700);
		put(row, b, size - (size_t)(b - data));
	}
	struct store s;
	if (store_open(&s, dir, &r, devnull) == 0) {
		long n = 0;
		(void)store_merge_rows(&s, dir, seen_none, merged_row, &n, devnull);
		store_close(&s);
	}
	unlink(row);
	rmdir(rows);
	unlink(csv);
	return 0;
}
