/* main.c - `matrix`: run deep-learning performance studies from YAML recipes. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "util.h"

static const struct cmd_entry commands[] = {
	{"expand", cmd_expand, "expand RECIPE [--count] [--format table|csv] [--only FILTER]",
	 "print the points of a recipe's grid without running anything"},
	{"run", cmd_run,
	 "run RECIPE [--out DIR] [--resume DIR] [--retry-failed] [--allow-changed] [--only FILTER] [--jobs N] [--allow-oversubscribe] [--dry-run] [--no-report]",
	 "run every point of a recipe, each in a fresh process"},
	{"report", cmd_report, "report DIR... [--metric NAME] [--quiet]",
	 "write the figures, tables, report.md and report.html of run directories"},
	{"compare", cmd_compare, "compare DIR_A DIR_B [--metric NAME] [--threshold PCT] [--fail-on-regression PCT]",
	 "compare two runs point by point: gains, uncertainty, geometric mean, regressions"},
};

int cmd_usage(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(commands[i].name, name) == 0)
			fprintf(stderr, "usage: matrix %s\n", commands[i].usage);
	return 2;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: matrix <command> [<args>]\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'matrix <command> --help' shows a command's options.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("matrix %s\n", PACKAGE_VERSION);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		if (strcmp(commands[i].name, argv[1]) != 0)
			continue;
		for (int a = 2; a < argc; a++) {
			if (strcmp(argv[a], "--") == 0)
				break;
			if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
				printf("usage: matrix %s\n%s\n", commands[i].usage, commands[i].summary);
				return 0;
			}
		}
		return commands[i].exec(argc - 1, argv + 1);
	}
	error("'%s' is not a matrix command (see 'matrix --help')", argv[1]);
	return 2;
}
