/* cmd_merge.c - `matrix merge DIR... --out M [--quiet]`: write M, a run
 * directory holding copies of the runs (made on other hosts or GPUs) that
 * report, export and compare read as one study with the factor `machine`
 * (report_merge.c). What differs between the runs is printed. Exit status:
 * 0, 2 when the runs cannot be merged or the command line is wrong. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "model.h"
#include "plan/argv.h"
#include "util.h"

int cmd_merge(int argc, char **argv)
{
	int quiet = 0;
	size_t ndirs = 0;
	const char *out = NULL;
	char **dirs = xcalloc((size_t)argc, sizeof(char *));
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
			quiet = 1;
		} else if (strcmp(argv[i], "--out") == 0 || strcmp(argv[i], "-o") == 0) {
			if (i + 1 == argc) {
				error("option '%s' needs a value", argv[i]);
				free(dirs);
				return cmd_usage("merge");
			}
			out = argv[++i];
		} else if (strncmp(argv[i], "--out=", 6) == 0) {
			out = argv[i] + 6;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cmd_unknown_option("merge", argv[i]);
			free(dirs);
			return cmd_usage("merge");
		} else {
			dirs[ndirs++] = argv[i];
		}
	}
	if (ndirs < 2 || !out || !*out) {
		error(ndirs < 2 ? "merge needs two or more run directories" : "merge needs --out DIR (a new directory)");
		free(dirs);
		return cmd_usage("merge");
	}
	int rc = merge_write(out, dirs, ndirs, stderr, quiet ? NULL : stderr);
	if (rc == 0 && !quiet) {
		char *q = shell_quoted(out);
		printf("%s (%zu runs; 'matrix report %s' reports them as one study)\n", out, ndirs, q);
		free(q);
	}
	free(dirs);
	return rc;
}
