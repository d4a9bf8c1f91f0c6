/* main.c - `matrix`: run deep-learning performance studies from YAML recipes. */
#include "config.h"

#include <csv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "cmd.h"
#include "plan/argv.h"
#include "plan/vocab.h"
#include "util.h"

/* Shared paragraphs of the commands' help. */
#define HELP_ONLY                                                                        \
	"FILTER (--only): terms separated by commas, each NAME=LEVEL or NAME=L1|L2|...;\n"  \
	"a point is kept when it matches every term: --only 'model=resnet50|resnet18,batch=64'.\n" \
	"id=ID keeps the point with that id (as 'matrix expand' prints it), id=ID1|ID2|...\n" \
	"the points with those. Factors and levels are the recipe's; a filter that keeps\n" \
	"no point is an error.\n"
#define HELP_OVERRIDES                                                                   \
	"KEY=VALUE (overrides, applied to the recipe before anything else): KEY a factor\n" \
	"replaces its levels (batch=32, precision=fp16,bf16), factors.NAME=... adds one;\n" \
	"else KEY is a recipe key (seed=2, repeat=3, measure.min_time=1s). An integer\n"    \
	"level may be a range: START..END (every integer), START..END:+K (step K),\n"       \
	"START..END:xK (times K): batch=1..64:x2 is 1,2,4,8,16,32,64. A range as the\n"   \
	"recipe writes it: factors.batch.range=[2,32] (or 2,32 or 2..32; a list of\n"     \
	"levels becomes that range) and factors.batch.step=x4. Exclusions and the\n"       \
	"baseline drop the levels a factor lost. The run saves the recipe with them\n"     \
	"applied as recipe.yaml, so --resume DIR alone runs the same points.\n"
#define HELP_RECIPE                                                                      \
	"RECIPE: a recipe file, or a name (inference_cube) looked up as NAME.yaml in\n"    \
	"$MATRIX_RECIPES (directories separated by ':'), ./recipes and the installed\n"     \
	"share/matrix/recipes (a matrix built but not installed: the source tree's\n"      \
	"recipes/); 'matrix recipes' lists them.\n"
#define HELP_METRICS                                                                     \
	"METRIC: throughput (samples/s, the default; or the unit the engine writes),\n"     \
	"step_ms (ms), tflops (TFLOP/s), pct_peak (% of peak), samples, startup_s (s),\n"   \
	"wall_time (s: a command timed by matrix, measure.metric: wall_time),\n"         \
	"peak_mem_bytes (shown in MiB), epoch_time (s: the engine's epoch_s with --data,\n" \
	"else the recipe's dataset_size / throughput), or any other numeric key of the\n"   \
	"engines' results (a name ending in _ms, _s or _bytes is a time or a size: lower\n" \
	"is better).\n"

static const char *const expand_options[] = {"--count", "--format", "--only", "--help", NULL};
static const char *const run_options[] = {
	"--out", "--resume", "--retry-failed", "--allow-changed", "--only", "--jobs",
	"--allow-oversubscribe", "--executor", "--detach", "--dry-run", "--no-report", "--help", NULL};
static const char *const run_point_options[] = {"--help", NULL};
static const char *const time_options[] = {"--warmup", "--min-time", "--max-time", "--rel-ci", "--result", "--help", NULL};
static const char *const status_options[] = {"--help", NULL};
static const char *const build_options[] = {"--rebuild", "--help", NULL};
static const char *const report_options[] = {"--metric", "--out", "--where", "--panels", "--quiet", "--help", NULL};
static const char *const merge_options[] = {"--out", "--quiet", "--help", NULL};
static const char *const export_options[] = {"--format", "--metric", "--help", NULL};
static const char *const recipes_options[] = {"--names", "--help", NULL};
static const char *const compare_options[] = {"--metric", "--threshold", "--run-noise", "--fail-on-regression",
						"--format", "--help", NULL};

static const struct cmd_entry commands[] = {
	{"expand", cmd_expand, "expand RECIPE [KEY=VALUE...] [--count] [--format table|csv] [--only FILTER]",
	 "print the points of a recipe's grid without running anything",
	 "  --count                print the number of points only\n"
	 "  --format table|csv     how to print the points (default table; a recipe with a\n"
	 "                         fractional design prints the design above the table:\n"
	 "                         generators, defining relation, aliases)\n"
	 "  --only FILTER          the points that match FILTER only\n"
	 "\n" HELP_RECIPE "\n" HELP_ONLY "\n" HELP_OVERRIDES,
	 expand_options},
	{"run", cmd_run,
	 "run RECIPE [KEY=VALUE...] [--out DIR] [--resume DIR] [--retry-failed] [--allow-changed] [--only FILTER] [--jobs N] [--allow-oversubscribe] [--executor local|slurm] [--detach] [--dry-run] [--no-report]",
	 "run every point of a recipe, each in a fresh process",
	 "  --out DIR              the run directory (default experiments/NAME/YYYYmmdd-HHMMSS);\n"
	 "                         it must be missing or empty\n"
	 "  --resume DIR           go on with the run in DIR, skipping the points it holds\n"
	 "                         (RECIPE is then optional: DIR's own is used)\n"
	 "  --retry-failed         with --resume: run the failed points again\n"
	 "  --allow-changed        with --resume: accept a recipe that changed since\n"
	 "  --only FILTER          run the points that match FILTER only\n"
	 "  -j, --jobs N           run N points at once (1 to 1024, default 1)\n"
	 "  --allow-oversubscribe  accept --jobs whose points' threads exceed the cores\n"
	 "  --executor local|slurm where the points run (default the recipe's executor,\n"
	 "                         else local; a directory submitted to slurm resumes\n"
	 "                         there); slurm: one sbatch --array of the points\n"
	 "  --detach               slurm: submit and return (exit 0) without following the\n"
	 "                         jobs; 'matrix status DIR' shows how far they are, and\n"
	 "                         'matrix run --resume DIR' collects their rows, follows\n"
	 "                         the tasks still queued (never submitted twice), submits\n"
	 "                         what is missing and writes the report\n"
	 "  -n, --dry-run          print the command of every point that would run\n"
	 "  --no-report            do not write the report at the end\n"
	 "\n" HELP_RECIPE "\n" HELP_ONLY "\n" HELP_OVERRIDES "\n"
	 "The report's metric is the recipe's report.metric (default throughput).\n" HELP_METRICS
	 "\nExit status: 0 every point ok or unsupported, 1 some point failed, 2 usage or\n"
	 "recipe error, 130 interrupted.\n",
	 run_options},
	{"run-point", cmd_run_point, "run-point DIR ID|INDEX",
	 "run one point of a run directory and write its row to DIR/rows/ (a slurm task)",
	 "  DIR                    a run directory (its recipe.yaml)\n"
	 "  ID|INDEX               the point's id (16 hex digits) or plan index\n"
	 "\nA point that already has a row is not run again. Exit status: 0 ok or\n"
	 "unsupported, 1 failed, 2 usage, 130 interrupted (no row written).\n",
	 run_point_options},
	{"time", cmd_time,
	 "time [--warmup DUR|N] [--min-time DUR] [--max-time DUR] [--rel-ci X] --result FILE -- COMMAND [ARG...]",
	 "time a command run after run, its median and 95% interval as a result file",
	 "  --warmup DUR|N         warm-up: runs for DUR (0.2s, 150ms), or N runs (default 0.2s)\n"
	 "  --min-time DUR         time runs for at least DUR (default 0.5s)\n"
	 "  --max-time DUR         stop after DUR even when the interval is wide (default 5s)\n"
	 "  --rel-ci X             stop once the 95% interval of the median run is within X\n"
	 "                         of it (default 0.02), checked from the 10th run on\n"
	 "  --result FILE          where the result goes, as key=value lines\n"
	 "\nThe point of a command engine whose recipe says 'measure.metric: wall_time':\n"
	 "each run is timed from fork to exit; the result holds wall_time (s, the\n"
	 "median run), step_ms with step_ms_lo/step_ms_hi (its 95% interval, the order\n"
	 "statistics that bound the median, as the native engine's), samples (timed\n"
	 "runs), mean_ms, warmup_runs, throughput (runs/s) and ci_met, and stderr a line\n"
	 "with the runs, the median and its interval. A run that fails ends it:\n"
	 "status=failed, and matrix exits as the command did (its exit status or signal).\n"
	 "Exit status: 0 timed, 2 usage or a --result that cannot be written (checked\n"
	 "before the first run).\n",
	 time_options},
	{"status", cmd_status, "status DIR",
	 "show how far a run directory is: points done, running, pending, missing",
	 "  DIR                    a run directory\n"
	 "\nCounts the points of the study's whole grid (DIR/recipe.yaml expanded, whatever\n"
	 "--only the runs kept) with a row (results.csv, and rows in DIR/rows that slurm\n"
	 "tasks wrote and no runner merged yet) by status, those whose slurm task is\n"
	 "running or pending (the jobs in DIR/slurm/jobs: squeue, sacct or scontrol), and\n"
	 "the missing ones (no row, not queued); for a study run in parts, each --only\n"
	 "subset the runs kept with its points and those done (DIR/subsets.csv).\n"
	 "Changes nothing.\n"
	 "\nExit status: 0 complete (every point has a row, none failed), 1 complete\n"
	 "with failed points, 2 usage, not a run directory or its results.csv unreadable,\n"
	 "3 in progress (slurm tasks\n"
	 "queued or running, a runner holds the directory, or squeue failed), 4 stopped\n"
	 "(points without a row that nothing runs: 'matrix run --resume DIR' runs them).\n",
	 status_options},
	{"build", cmd_build, "build RECIPE [KEY=VALUE...] [--rebuild]",
	 "build or pull the images of a recipe's container levels that are missing",
	 "  --rebuild              build every 'build:' entry again, present or not\n"
	 "\nA 'build:' entry is built as localhost/matrix-RECIPE-NAME (its output on\n"
	 "stdout), a missing image reference pulled; then a header and one line per\n"
	 "container level, tab-separated: name, runtime, image, image id, digest (the\n"
	 "repository digests that env.txt and each row's image_digest record, or 'no\n"
	 "digest: local build'), built|present|FAILED. 'matrix run' does the same on\n"
	 "first use. KEY=VALUE overrides as for run (container=NAME builds one).\n"
	 "Exit status: 0 every image there, 1 some could not be had, 2 usage, recipe or\n"
	 "runtime error.\n",
	 build_options},
	{"report", cmd_report,
	 "report DIR... [--out DIR] [--metric NAME] [--where FACTOR=LEVEL[,LEVEL...]] [--panels FACTOR[,FACTOR]] [--quiet]",
	 "write the figures, tables, report.md and report.html of a run directory",
	 "  --metric NAME          report NAME instead of the recipe's metric (see below);\n"
	 "                         a name no result has is an error\n"
	 "  --out DIR              with several DIRs: where they are merged (default\n"
	 "                         the first DIR's parent/merged-YYYYmmdd-HHMMSS)\n"
	 "  --where FACTOR=LEVEL[,LEVEL...]\n"
	 "                         draw the scatter, normalised, bars and best figures\n"
	 "                         over the points at those levels only (repeatable: every\n"
	 "                         one must hold), besides each figure's own where:\n"
	 "  --panels FACTOR[,FACTOR]\n"
	 "                         split those figures in panels on the same axes, one per\n"
	 "                         level (pair of levels) of the factors, where a figure has\n"
	 "                         none of its own and does not draw the factor on an axis\n"
	 "  -q, --quiet            print nothing but errors and warnings (of a merged\n"
	 "                         directory's notes, those that say a number may be\n"
	 "                         wrong: 'warning: ...')\n"
	 "\nSeveral DIRs are runs made apart (other hosts, other GPUs): they are merged\n"
	 "as 'matrix merge' does and reported as one study.\n"
	 "\n" HELP_METRICS,
	 report_options},
	{"merge", cmd_merge, "merge DIR... --out DIR [--quiet]",
	 "merge runs made on other hosts or GPUs into one run directory, one study",
	 "  -o, --out DIR          the merged directory (missing or empty)\n"
	 "  -q, --quiet            print nothing but errors\n"
	 "\nThe merged directory holds a copy of each run (runs/N) and merge.txt;\n"
	 "report, export and compare read it as one study in which 'machine' (the node\n"
	 "each row ran on, with its GPU, else its CPU) is a factor. Factors not every\n"
	 "run has are left out (rows at other than their baseline level, else their\n"
	 "first, with them) and said; so are differing baselines and metrics, and\n"
	 "points measured with different engine versions (a warning).\n"
	 "Exit status: 0, 2 when the runs cannot be merged or usage.\n",
	 merge_options},
	{"export", cmd_export, "export DIR [--format json|jsonl|csv|markdown] [--metric NAME]",
	 "print every point of a run with its factors, metric, 95% interval, status, command and environment",
	 "  --format json|jsonl|csv|markdown\n"
	 "                         JSON (the default: recipe, metric with unit, points), JSON\n"
	 "                         Lines (an object per point), CSV (a row per point), all\n"
	 "                         with every digit; or the report's per-point Markdown table\n"
	 "                         (3 significant digits); values in the metric's unit\n"
	 "  --metric NAME          export NAME instead of the recipe's metric (see below)\n"
	 "\n" HELP_METRICS,
	 export_options},
	{"recipes", cmd_recipes, "recipes [--names]",
	 "list the recipes that run by name, with their point counts",
	 "  --names                print the names only, one a line\n"
	 "\n" HELP_RECIPE
	 "A name found in an earlier directory hides the same name in a later one.\n"
	 "Exit status: 0, 1 when some recipe does not load or none is found.\n",
	 recipes_options},
	{"compare", cmd_compare,
	 "compare DIR_A DIR_B [--metric NAME] [--threshold PCT] [--run-noise PCT] [--fail-on-regression PCT] [--format table|json|csv|markdown]",
	 "compare two runs point by point: gains, uncertainty, geometric mean, regressions",
	 "  --metric NAME              compare NAME instead of the recipe's metric (see below)\n"
	 "  --threshold PCT            the least change called faster or SLOWER (default 2%)\n"
	 "  --run-noise PCT            the 95% bound of the shift of a whole run against one\n"
	 "                             made at another time, in every interval and verdict\n"
	 "                             (default 3%, measured on a 2-core CPU machine; 0: none);\n"
	 "                             measure yours by comparing A/A pairs (one recipe run\n"
	 "                             twice): the summary prints their common shift\n"
	 "  --fail-on-regression PCT   exit 1 when a point is SLOWER by more than PCT, or\n"
	 "                             is unreplicated (one process on a side: not decided)\n"
	 "                             and slower by more than PCT beyond its interval\n"
	 "  --format table|json|csv|markdown\n"
	 "                             the table for the terminal (the default) and markdown:\n"
	 "                             3 significant digits; json and csv: every digit, a\n"
	 "                             point per match with both ids (json), then the summary\n"
	 "\n" HELP_METRICS,
	 compare_options},
};

static const struct cmd_entry *find_command(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

int cmd_usage(const char *name)
{
	const struct cmd_entry *c = find_command(name);
	if (c)
		fprintf(stderr, "usage: matrix %s\n", c->usage);
	return 2;
}

void cmd_unknown_option(const char *cmd, const char *opt)
{
	const struct cmd_entry *c = find_command(cmd);
	const char *names[32];
	size_t n = 0;
	/* long options compared without their dashes: "dryrun" is near "dry-run" */
	for (const char *const *o = c ? c->options : NULL; o && *o && n < ARRAY_SIZE(names); o++)
		names[n++] = *o + 2;
	const char *near = strncmp(opt, "--", 2) == 0 ? vocab_closest(opt + 2, names, n) : NULL;
	if (near)
		error("%s: unknown option '%s' (did you mean '--%s'?)", cmd, opt, near);
	else
		error("%s: unknown option '%s'", cmd, opt);
}

void cmd_second_recipe(const char *cmd, const char *recipe, int argc, char **argv, int i)
{
	const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
	struct stat st;
	if (stat(a, &st) == 0 || strchr(a, '/')) {
		error("%s: more than one recipe given ('%s' and '%s')", cmd, recipe, a);
		return;
	}
	/* 'batch:32', 'batch: 32' (YAML's colon), 'batch 32' (a space) */
	const char *colon = strchr(a, ':');
	int joins = next && next[0] != '-' && !strchr(next, '=') && (!colon || !colon[1]);
	char *key = xstrndup(a, colon ? (size_t)(colon - a) : strlen(a));
	const char *value = colon && colon[1] ? colon + 1 : joins ? next : NULL;
	if (*key && value)
		error("%s: more than one recipe given ('%s' and '%s'): an override is one argument, KEY=VALUE: "
		      "'%s=%s'", cmd, recipe, a, key, value);
	else
		error("%s: more than one recipe given ('%s' and '%s'): an override is one argument, KEY=VALUE",
		      cmd, recipe, a);
	free(key);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: matrix <command> [<args>]\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\noptions:\n"
		     "  -h, --help     print this help ('matrix help <command>': a command's)\n"
		     "  -V, --version  print the version and the build configuration\n"
		     "\n'matrix <command> --help' shows a command's options.\n");
}

static void command_help(const struct cmd_entry *c)
{
	printf("usage: matrix %s\n%s\n\n%s", c->usage, c->summary, c->help);
}

static void unknown_command(const char *name)
{
	const char *names[ARRAY_SIZE(commands) + 1];
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		names[i] = commands[i].name;
	names[ARRAY_SIZE(commands)] = "help";
	const char *near = vocab_closest(name, names, ARRAY_SIZE(names));
	if (near)
		error("'%s' is not a matrix command (did you mean '%s'?)", name, near);
	else
		error("'%s' is not a matrix command (see 'matrix --help')", name);
}

/* -V: the version, the libraries, the engine a native point runs, and the
 * build configuration of this tree (the engine's is 'matrix-engine --version'). */
static void print_version(void)
{
	char *engine = argv_native_engine();
	printf("matrix %s\n"
	       "  libyaml       %s\n"
	       "  libcsv        %d.%d.%d\n"
	       "  gnuplot       %s (at configure time)\n"
	       "  native engine %s%s\n"
	       "build configuration (of this tree's engine):\n"
	       "  CUDA backend  %s\n"
	       "  cuDNN         %s\n"
	       "  NCCL          %s\n"
	       "  BLAS          %s\n"
	       "  MPI           %s\n"
	       "  CPU kernels   %s\n"
	       "  compiler      %s\n"
	       "  CFLAGS        %s\n",
	       PACKAGE_VERSION, yaml_get_version_string(), CSV_MAJOR, CSV_MINOR, CSV_RELEASE, GNUPLOT_PATH, engine,
	       getenv("MATRIX_ENGINE") && *getenv("MATRIX_ENGINE") ? " ($MATRIX_ENGINE)" : "", MATRIX_BUILD_CUDA,
	       MATRIX_BUILD_CUDNN, MATRIX_BUILD_NCCL, MATRIX_BUILD_BLAS, MATRIX_BUILD_MPI, MATRIX_BUILD_ARCH,
	       MATRIX_BUILD_CC, MATRIX_BUILD_CFLAGS);
	free(engine);
}

/* Whether c's help lists opt (len bytes, "--jobs") with an argument, in an
 * option line "  --jobs N" or "  -j, --jobs N": the lines the completions
 * read too (contrib/). */
static int option_takes_value(const struct cmd_entry *c, const char *opt, size_t len)
{
	for (const char *l = c->help; l && *l;) {
		const char *o = l + 2, *nl = strchr(l, '\n');
		if (strncmp(l, "  -", 3) == 0) {
			if (o[1] != '-' && o[1] && o[2] == ',' && o[3] == ' ')
				o += 4; /* "-j, " */
			if (strncmp(o, opt, len) == 0 && o[len] == ' ' && o[len + 1] && o[len + 1] != ' ' &&
			    o[len + 1] != '\n')
				return 1;
		}
		l = nl ? nl + 1 : NULL;
	}
	return 0;
}

/* main's argv (argv[1] the command c, then its arguments) with each
 * --NAME=VALUE of an option that takes a value split in two, --NAME VALUE,
 * as getopt_long would read it: up to a "--", never the value of such an
 * option (--only --x=1 keeps its value whole). *split gets the new array
 * (NULL terminated; the commands read argv[-1], the program, too) and
 * *names the --NAME strings it made (*n of them), or NULL when nothing was
 * split; the caller frees them. */
static void split_option_values(const struct cmd_entry *c, int argc, char **argv, char ***split, char ***names,
				size_t *n)
{
	char **v = NULL;
	size_t k = 0;
	*names = NULL;
	*n = 0;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '=');
		int opt = strncmp(a, "--", 2) == 0 && a[2];
		if (strcmp(a, "--") == 0) { /* the rest as it is */
			for (; v && i < argc; i++)
				v[k++] = argv[i];
			break;
		}
		if (opt && !eq && i + 1 < argc && option_takes_value(c, a, strlen(a))) {
			if (v) /* the option and its value, whatever it looks like */
				v[k++] = argv[i], v[k++] = argv[i + 1];
			i++;
		} else if (opt && eq && option_takes_value(c, a, (size_t)(eq - a))) {
			if (!v) {
				v = xcalloc(2 * (size_t)argc + 1, sizeof(char *));
				*names = xcalloc((size_t)argc, sizeof(char *));
				for (int j = 0; j < i; j++)
					v[k++] = argv[j];
			}
			(*names)[*n] = xstrndup(a, (size_t)(eq - a));
			v[k++] = (*names)[(*n)++];
			v[k++] = (char *)eq + 1;
		} else if (v) {
			v[k++] = argv[i];
		}
	}
	*split = v;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *a1 = argv[1];
	if (strcmp(a1, "--help") == 0 || strcmp(a1, "-h") == 0 || strcmp(a1, "help") == 0) {
		if (argc == 2 || strcmp(a1, "help") != 0) {
			usage(stdout);
			return 0;
		}
		const struct cmd_entry *c = find_command(argv[2]);
		if (!c) {
			unknown_command(argv[2]);
			return 2;
		}
		command_help(c);
		return 0;
	}
	if (strcmp(a1, "--version") == 0 || strcmp(a1, "-V") == 0 || strcmp(a1, "version") == 0) {
		print_version();
		return 0;
	}
	const struct cmd_entry *c = find_command(a1);
	if (!c) {
		if (a1[0] == '-' && a1[1]) {
			const char *const top[] = {"help", "version"};
			const char *near = strncmp(a1, "--", 2) == 0 ? vocab_closest(a1 + 2, top, 2) : NULL;
			if (near)
				error("unknown option '%s' (did you mean '--%s'?)", a1, near);
			else
				error("unknown option '%s' (see 'matrix --help')", a1);
		} else {
			unknown_command(a1);
		}
		return 2;
	}
	for (int a = 2; a < argc; a++) {
		if (strcmp(argv[a], "--") == 0)
			break;
		if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
			command_help(c);
			return 0;
		}
	}
	char **split, **names;
	size_t nnames;
	split_option_values(c, argc, argv, &split, &names, &nnames);
	int rc = c->exec((int)(argc - 1 + nnames), (split ? split : argv) + 1);
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	free(split);
	return rc;
}
