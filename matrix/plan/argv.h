/* argv.h - the command line of a point: the native engine's flags from the
 * factor vocabulary, the PyTorch engine's (the same flags), or a command
 * engine's argv template with {factor}, {result}, {recipe_dir} and
 * {run_dir} substituted (under `matrix time` when the recipe's
 * measure.metric is wall_time). */
#ifndef MATRIX_ARGV_H
#define MATRIX_ARGV_H

#include <stdio.h>

#include "grid.h"
#include "recipe.h"

struct point_cmd {
	char **argv;          /* NULL terminated */
	char **env;           /* "K=V", NULL terminated (MATRIX_RESULT, ...) */
	char *line;           /* shell-quoted "[cd DIR && ]K=V argv..." to reproduce by hand */
	char *cwd;            /* the directory to run it in (the command engine: the
	                       * recipe's), or NULL: the runner's */
};

/* Where the engines are inside an image (containers/README.md): a recipe
 * with a `container` factor runs its points there. The PyTorch engine runs
 * under the recipe's `python:`, else the image's python3. */
#define ARGV_IMAGE_ENGINE "matrix-engine"
#define ARGV_IMAGE_TORCH_SCRIPT "/usr/local/share/matrix/pytorch/matrix_torch.py"

/* Build the command of point p of the run in run_dir writing its result to
 * result_path. A command engine's point runs in the recipe's directory
 * (r->dir), so that the paths it is given ({result}, {run_dir},
 * $MATRIX_RESULT) are made absolute. Returns 0, or -1 after printing why to
 * err (no python with torch, a data level that is no directory). */
int argv_build(const struct recipe *r, const struct point *p, const char *run_dir, const char *result_path,
	       struct point_cmd *cmd, FILE *err);
void argv_free(struct point_cmd *cmd);

/* Quote s for a POSIX shell when it needs it; appends to sb. A string with
 * control characters or bytes that are not UTF-8 is quoted as bash's $'...'
 * with \xHH escapes (nothing raw reaches a terminal). */
struct strbuf;
void argv_shell_quote(struct strbuf *sb, const char *s);
/* The same, as a string of its own (to free): for a path in a command a
 * message tells the user to run. */
char *shell_quoted(const char *s);

/* The native engine a point runs (malloc'd): $MATRIX_ENGINE, the build
 * tree's beside matrix/matrix, the installed one beside matrix, else
 * "matrix-engine" (from PATH). */
char *argv_native_engine(void);

/* Before any point: a recipe with PyTorch-engine points on the host has a
 * python that can import torch (the recipe's python:, else MATRIX_PYTHON,
 * else the first python3 that can); only the points that will run count
 * (those --only keeps, only NULL for all, exclusions applied). 0, or -1
 * after saying why on err. */
int argv_check_python(const struct recipe *r, const struct grid_filter *only, FILE *err);

/* The engine of point p: "native", "pytorch" or "command". */
const char *argv_engine(const struct recipe *r, const struct point *p);

#endif
