/* cmd_report.c - `matrix report DIR... [--out M] [--metric NAME] [--where
 * FACTOR=LEVEL[,LEVEL...]] [--panels FACTOR[,FACTOR]] [--quiet]`:
 * write the figures, tables, report.md and report.html of a run directory
 * (report.h); several directories are runs made apart (other hosts, other
 * GPUs) merged into M first (`matrix merge`, report_merge.c: default
 * DIR1's parent/merged-YYYYmmdd-HHMMSS) and reported as one study. Exit
 * status: 0, 1 when some figure could not be drawn, 2 when a directory
 * cannot be reported on or the command line is wrong. */
#include "config.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "model.h"
#include "report.h"
#include "util.h"

/* DIR1's parent/merged-YYYYmmdd-HHMMSS (allocated). */
static char *default_out(const char *first)
{
	char *copy = xstrdup(first);
	size_t n = strlen(copy);
	while (n > 1 && copy[n - 1] == '/')
		copy[--n] = '\0';
	char when[32];
	time_t t = time(NULL);
	strftime(when, sizeof(when), "%Y%m%d-%H%M%S", localtime(&t));
	char *out = xasprintf("%s/merged-%s", dirname(copy), when);
	free(copy);
	return out;
}

int cmd_report(int argc, char **argv)
{
	int quiet = 0, ndirs = 0, rc = 0;
	const char *metric = NULL, *out = NULL, *panels = NULL;
	char **dirs = xcalloc((size_t)argc, sizeof(char *));
	char **where = xcalloc((size_t)argc, sizeof(char *));
	size_t nwhere = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
			quiet = 1;
		} else if (strcmp(argv[i], "--metric") == 0 || strcmp(argv[i], "--out") == 0 ||
			   strcmp(argv[i], "--where") == 0 || strcmp(argv[i], "--panels") == 0) {
			if (i + 1 == argc) {
				error("option '%s' needs a value", argv[i]);
				free(dirs);
				free(where);
				return cmd_usage("report");
			}
			const char **opt = argv[i][2] == 'm' ? &metric : argv[i][2] == 'o' ? &out : &panels;
			if (argv[i][2] == 'w')
				where[nwhere++] = argv[++i];
			else
				*opt = argv[++i];
		} else if (strncmp(argv[i], "--metric=", 9) == 0) {
			metric = argv[i] + 9;
		} else if (strncmp(argv[i], "--out=", 6) == 0) {
			out = argv[i] + 6;
		} else if (strncmp(argv[i], "--where=", 8) == 0) {
			where[nwhere++] = argv[i] + 8;
		} else if (strncmp(argv[i], "--panels=", 9) == 0) {
			panels = argv[i] + 9;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cmd_unknown_option("report", argv[i]);
			free(dirs);
			free(where);
			return cmd_usage("report");
		} else {
			dirs[ndirs++] = argv[i];
		}
	}
	if (ndirs == 0 || (out && ndirs == 1)) {
		if (out)
			error("--out names where several runs are merged: give two or more directories");
		else
			error("report: no run directory given");
		free(dirs);
		free(where);
		return cmd_usage("report");
	}
	double t0 = now_monotonic();
	const char *dir = dirs[0];
	char *merged = NULL;
	if (ndirs > 1) {
		dir = merged = out ? xstrdup(out) : default_out(dirs[0]);
		/* the notes are printed once, when the merged run is loaded below */
		if (merge_write(merged, dirs, (size_t)ndirs, stderr, NULL) != 0) {
			free(merged);
			free(dirs);
			free(where);
			return 2;
		}
	}
	struct report_opts o = {metric, where, nwhere, panels, quiet};
	rc = report_write_opts(dir, &o, stderr);
	if (rc != 2 && !quiet)
		printf("%s/report.html%s (%.2f s)\n", dir, rc ? ", some figures missing" : "", now_monotonic() - t0);
	free(merged);
	free(dirs);
	free(where);
	return rc;
}
