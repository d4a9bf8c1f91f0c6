/* provenance.h - what reproduces a point (issue 21, item 8): the points'
 * working directory, the measured project (the recipe's directory) and its
 * git commit and dirty flag when it is in a repository, the compiler and
 * flags of this build, and each point's engine as an absolute path. Written
 * to env.txt once per invocation and to each row's provenance columns
 * (result.h: workdir, git_commit, git_dirty, engine_path). */
#ifndef MATRIX_RUN_PROVENANCE_H
#define MATRIX_RUN_PROVENANCE_H

struct strbuf;
struct result;

struct provenance {
	char *workdir;        /* the points' working directory (the runner's), absolute */
	char *project_dir;    /* the measured project: the recipe's directory, absolute */
	const char *project_from; /* how project_dir was found, for env.txt */
	char *git_top;        /* its repository's top level; NULL outside one */
	char *git_commit;     /* HEAD, 40 hex digits; NULL outside a repository or before a first commit */
	int git_dirty;        /* 1: a tracked file differs from HEAD; 0: none; -1: not known */
};

/* Gather the provenance of a run whose recipe was loaded from recipe_path
 * (a first run), or of a run directory dir being resumed (recipe_path NULL:
 * the project directory its env.txt recorded, else the working directory).
 * git runs as `git -C DIR ...` with its output captured; a missing git or
 * a directory in no repository leaves the git fields NULL / -1. Call it
 * before an executor starts children (it waits for its own). */
void provenance_gather(struct provenance *pv, const char *recipe_path, const char *dir);
/* env.txt's lines: workdir, project_dir (and how it was found), git
 * (top level, commit, dirty; or why there is none), compiler, cflags,
 * libraries (matrix's), engine_build (this tree's native engine). */
void provenance_env(const struct provenance *pv, struct strbuf *sb);
/* The row keys of a point whose argv is argv (NULL terminated) run in
 * directory cwd (NULL: pv->workdir, the runner's): workdir, git_commit,
 * git_dirty (yes|no) when known, and engine_path: argv[0] as an absolute
 * path (found on PATH when it has no '/', else taken from cwd), followed by
 * its script when argv[1] is a file (python3 matrix_torch.py, sh bench.sh);
 * in_image: argv is a container's, its paths are the image's (kept as they
 * are). */
void provenance_row(const struct provenance *pv, char *const *argv, const char *cwd, int in_image,
		    struct result *res);
void provenance_free(struct provenance *pv);

#endif
