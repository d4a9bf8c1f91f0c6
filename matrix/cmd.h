/* cmd.h - subcommands of `matrix`, one table in main.c. Each cmd_<name>
 * returns the process exit status: 0 ok, 1 some points failed / regression,
 * 2 usage or recipe error, 130 interrupted. */
#ifndef MATRIX_CMD_H
#define MATRIX_CMD_H

struct cmd_entry {
	const char *name;
	int (*exec)(int argc, char **argv); /* argv[0] is the subcommand name */
	const char *usage;                  /* one line, after "matrix " */
	const char *summary;
	const char *help;                   /* the options and arguments explained,
	                                     * printed after usage and summary */
	const char *const *options;         /* every option, NULL terminated: the
	                                     * candidates of "did you mean" */
};

int cmd_expand(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_run_point(int argc, char **argv);
int cmd_time(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_build(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_recipes(int argc, char **argv);

/* Print "usage: matrix <usage>" for the named command to stderr; returns 2. */
int cmd_usage(const char *name);
/* Print "matrix: <cmd>: unknown option '<opt>'", with " (did you mean
 * '--x'?)" when one of the command's options is close, to stderr. */
void cmd_unknown_option(const char *cmd, const char *opt);
/* Print "matrix: <cmd>: more than one recipe given ('<recipe>' and
 * '<argv[i]>')" to stderr, and when argv[i] is no file, how an override is
 * written: "an override is one argument, KEY=VALUE: 'batch=32'" for
 * 'batch 32', 'batch:32' or 'batch: 32'. */
void cmd_second_recipe(const char *cmd, const char *recipe, int argc, char **argv, int i);

#endif
