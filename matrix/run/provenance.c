/* provenance.c - what reproduces a point: working directory, the measured
 * project's git commit and dirty flag, the build's compiler and flags, the
 * engine's absolute path (provenance.h). */
#include "config.h"

#include <csv.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml.h>

#include "provenance.h"
#include "result.h"
#include "util.h"

/* Run git -C dir with args (at most 6), stdout into out (at most cap
 * bytes kept, 0: all; every byte counted in *total), stderr discarded.
 * Returns git's exit status, 127 when it could not start, -1. */
static int git_capture(const char *dir, const char *const *args, struct strbuf *out, size_t cap, size_t *total)
{
	char *argv[10] = {"git", "-C", (char *)dir};
	for (size_t i = 0; args[i] && i < 6; i++)
		argv[3 + i] = (char *)args[i];
	/* a status that only reads: no index.lock taken in the project */
	struct spawn_io io = {.err_null = 1, .cap = cap, .total = total, .env = {"GIT_OPTIONAL_LOCKS", "0"}};
	return spawn_capture(argv, &io, out);
}

/* One line of git's output (its newline cut), or NULL when git failed. */
static char *git_line(const char *dir, const char *const *args)
{
	struct strbuf out = {0};
	int rc = git_capture(dir, args, &out, 4096, NULL);
	if (rc != 0 || !out.len) {
		sb_free(&out);
		return NULL;
	}
	out.buf[strcspn(out.buf, "\n")] = '\0';
	return out.buf;
}

/* The project directory a run directory's env.txt recorded, or NULL. */
static char *recorded_project(const char *dir)
{
	char *path = xasprintf("%s/env.txt", dir), *why = NULL;
	char *env = read_file_capped(path, 1 << 20, 1, NULL, &why);
	free(path);
	free(why);
	const char *line = env ? strstr(env, "\nproject_dir: ") : NULL;
	char *found = NULL;
	if (line) {
		line += strlen("\nproject_dir: ");
		found = xstrndup(line, strcspn(line, "\n"));
		if (found[0] != '/') { /* "(unknown ...)": not recorded */
			free(found);
			found = NULL;
		}
	}
	free(env);
	return found;
}

void provenance_gather(struct provenance *pv, const char *recipe_path, const char *dir)
{
	memset(pv, 0, sizeof(*pv));
	pv->git_dirty = -1;
	char cwd[PATH_MAX];
	pv->workdir = xstrdup(getcwd(cwd, sizeof(cwd)) ? cwd : ".");
	if (recipe_path) {
		char *abs = realpath(recipe_path, NULL);
		if (abs) {
			char *slash = strrchr(abs, '/');
			pv->project_dir = slash == abs ? xstrdup("/") : xstrndup(abs, (size_t)(slash - abs));
			pv->project_from = "the recipe's directory";
		}
		free(abs);
	} else if (dir && (pv->project_dir = recorded_project(dir))) {
		pv->project_from = "the recipe's directory, as the run's first env.txt recorded it";
	}
	if (!pv->project_dir) {
		pv->project_dir = xstrdup(pv->workdir);
		pv->project_from = "the working directory (the recipe's was not recorded)";
	}
	static const char *const top[] = {"rev-parse", "--show-toplevel", NULL};
	static const char *const head[] = {"rev-parse", "--verify", "--quiet", "HEAD^{commit}", NULL};
	static const char *const status[] = {"status", "--porcelain", "--untracked-files=no", NULL};
	pv->git_top = git_line(pv->project_dir, top);
	if (!pv->git_top)
		return;
	pv->git_commit = git_line(pv->project_dir, head);
	size_t changed = 0;
	struct strbuf first = {0}; /* one byte kept: the output is counted */
	int st = git_capture(pv->project_dir, status, &first, 1, &changed);
	sb_free(&first);
	if (st == 0)
		pv->git_dirty = changed > 0;
}

/* A path on one line of env.txt (a newline in it would start another). */
static void env_path(struct strbuf *sb, const char *key, const char *path)
{
	char *clean = text_clean(path, strlen(path), 0);
	sb_printf(sb, "%s: %s\n", key, clean);
	free(clean);
}

void provenance_env(const struct provenance *pv, struct strbuf *sb)
{
	env_path(sb, "workdir", pv->workdir);
	env_path(sb, "project_dir", pv->project_dir);
	sb_printf(sb, "project_dir_from: %s\n", pv->project_from);
	if (!pv->git_top) {
		sb_puts(sb, "git: none (the project directory is in no git repository, or git is missing)\n");
	} else {
		env_path(sb, "git_top", pv->git_top);
		sb_printf(sb, "git_commit: %s\n", pv->git_commit ? pv->git_commit : "none (no commit yet)");
		sb_printf(sb, "git_dirty: %s\n", pv->git_dirty < 0 ? "unknown (git status failed)"
						 : pv->git_dirty ? "yes (tracked files differ from the commit)"
								 : "no");
	}
	sb_printf(sb, "compiler: %s\n", MATRIX_BUILD_CC);
	sb_printf(sb, "cflags: %s\n", MATRIX_BUILD_CFLAGS);
	sb_printf(sb, "libraries: libyaml %s, libcsv %d.%d.%d\n", yaml_get_version_string(), CSV_MAJOR, CSV_MINOR,
		  CSV_RELEASE);
	/* this tree's native engine, as configure built it (each row holds the
	 * versions its engine reported: blas, torch_version, cuda_version ...) */
	sb_printf(sb, "engine_build: CUDA %s; cuDNN %s; NCCL %s; BLAS %s; MPI %s; CPU kernels %s\n", MATRIX_BUILD_CUDA,
		  MATRIX_BUILD_CUDNN, MATRIX_BUILD_NCCL, MATRIX_BUILD_BLAS, MATRIX_BUILD_MPI, MATRIX_BUILD_ARCH);
}

/* path from directory cwd (NULL: this process's) as an absolute path, or NULL. */
static char *realpath_in(const char *cwd, const char *path)
{
	if (!cwd || path[0] == '/')
		return realpath(path, NULL);
	char *p = xasprintf("%s/%s", cwd, path), *abs = realpath(p, NULL);
	free(p);
	return abs;
}

/* name as an absolute path: itself with a '/' (from cwd), else the first
 * executable of that name on PATH; NULL when neither resolves. */
static char *absolute_program(const char *name, const char *cwd)
{
	if (strchr(name, '/'))
		return realpath_in(cwd, name);
	const char *path = getenv("PATH");
	char *p = xstrdup(path ? path : "/usr/bin:/bin"), *save = NULL, *found = NULL;
	for (char *d = strtok_r(p, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char *f = xasprintf("%s/%s", *d ? d : ".", name);
		if (access(f, X_OK) == 0)
			found = realpath(f, NULL);
		free(f);
	}
	free(p);
	return found;
}

void provenance_row(const struct provenance *pv, char *const *argv, const char *cwd, int in_image,
		    struct result *res)
{
	result_set(res, "workdir", cwd ? cwd : pv->workdir);
	if (pv->git_commit)
		result_set(res, "git_commit", pv->git_commit);
	if (pv->git_top && pv->git_dirty >= 0)
		result_set(res, "git_dirty", pv->git_dirty ? "yes" : "no");
	if (!argv || !argv[0])
		return;
	struct strbuf sb = {0};
	char *prog = in_image ? NULL : absolute_program(argv[0], cwd);
	sb_puts(&sb, prog ? prog : argv[0]);
	free(prog);
	/* an interpreter's script (python3 matrix_torch.py, sh bench.sh) */
	struct stat st;
	char *script = !in_image && argv[1] && argv[1][0] != '-' ? realpath_in(cwd, argv[1]) : NULL;
	if (script && (stat(script, &st) != 0 || !S_ISREG(st.st_mode))) {
		free(script);
		script = NULL;
	}
	size_t n = argv[1] ? strlen(argv[1]) : 0;
	if (!script && in_image && n > 3 && strcmp(argv[1] + n - 3, ".py") == 0)
		script = xstrdup(argv[1]); /* the image's PyTorch engine */
	if (script) {
		sb_putc(&sb, ' ');
		sb_puts(&sb, script);
		free(script);
	}
	result_set(res, "engine_path", sb.buf);
	sb_free(&sb);
}

void provenance_free(struct provenance *pv)
{
	free(pv->workdir);
	free(pv->project_dir);
	free(pv->git_top);
	free(pv->git_commit);
	memset(pv, 0, sizeof(*pv));
}
