/* cmd_report.c - `matrix report DIR... [--metric NAME] [--quiet]`: write the
 * figures, tables, report.md and report.html of run directories (report.h).
 * Exit status: 0, 1 when some figure could not be drawn, 2 when a directory
 * cannot be reported on or the command line is wrong. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "report.h"
#include "util.h"

int cmd_report(int argc, char **argv)
{
	int quiet = 0, ndirs = 0, rc = 0;
	const char *metric = NULL;
	char **dirs = xcalloc((size_t)argc, sizeof(char *));
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
			quiet = 1;
		} else if (strcmp(argv[i], "--metric") == 0) {
			if (i + 1 == argc) {
				error("option '--metric' needs a value");
				free(dirs);
				return cmd_usage("report");
			}
			metric = argv[++i];
		} else if (strncmp(argv[i], "--metric=", 9) == 0) {
			metric = argv[i] + 9;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cmd_unknown_option("report", argv[i]);
			free(dirs);
			return cmd_usage("report");
		} else {
			dirs[ndirs++] = argv[i];
		}
	}
	if (ndirs == 0) {
		free(dirs);
		return cmd_usage("report");
	}
	for (int i = 0; i < ndirs; i++) {
		double t0 = now_monotonic();
		int r = report_write_metric(dirs[i], metric, stderr);
		if (r != 2 && !quiet)
			printf("%s/report.html%s (%.2f s)\n", dirs[i], r ? ", some figures missing" : "",
			       now_monotonic() - t0);
		if (r > rc)
			rc = r;
	}
	free(dirs);
	return rc;
}
