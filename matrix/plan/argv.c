/* argv.c - from a point to the argv of its engine. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "argv.h"
#include "util.h"

#ifndef MATRIX_PKGDATADIR
#define MATRIX_PKGDATADIR "/usr/local/share/matrix"
#endif
#ifndef MATRIX_SRCDIR
#define MATRIX_SRCDIR "."
#endif

struct vec {
	char **v;
	size_t n;
};

static void vec_push(struct vec *v, char *s)
{
	v->v = xrealloc(v->v, (v->n + 2) * sizeof(char *));
	v->v[v->n++] = s;
	v->v[v->n] = NULL;
}

static int is_exec(const char *p)
{
	return access(p, X_OK) == 0;
}

static int is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The native engine: $MATRIX_ENGINE, the build tree beside matrix/matrix, the
 * installed bindir beside matrix, else PATH. */
char *argv_native_engine(void)
{
	const char *env = getenv("MATRIX_ENGINE");
	if (env && *env)
		return xstrdup(env);
	const char *dir = self_dir();
	if (dir) {
		char *p = xasprintf("%s/../engine/matrix-engine", dir);
		if (is_exec(p))
			return p;
		free(p);
		p = xasprintf("%s/matrix-engine", dir);
		if (is_exec(p))
			return p;
		free(p);
	}
	return xstrdup("matrix-engine");
}

/* The PyTorch engine's script: $MATRIX_PYTORCH_ENGINE, the source tree, the
 * installed pkgdatadir. */
static char *pytorch_script(void)
{
	const char *env = getenv("MATRIX_PYTORCH_ENGINE");
	if (env && *env)
		return xstrdup(env);
	const char *dir = self_dir();
	if (dir) {
		char *p = xasprintf("%s/../engine/pytorch/matrix_torch.py", dir);
		if (is_file(p))
			return p;
		free(p);
		p = xasprintf("%s/../share/matrix/pytorch/matrix_torch.py", dir);
		if (is_file(p))
			return p;
		free(p);
	}
	char *p = xasprintf("%s/engine/pytorch/matrix_torch.py", MATRIX_SRCDIR);
	if (is_file(p))
		return p;
	free(p);
	return xasprintf("%s/pytorch/matrix_torch.py", MATRIX_PKGDATADIR);
}

/* Whether the python given by the user (the recipe's 'python:', else
 * MATRIX_PYTHON, named by what) can import torch: probed once per process
 * (one answer for every point, before any runs); NULL when it can, else
 * after saying why on err. A python that cannot would fail every point
 * alike, one by one. */
static const char *given_python(const char *py, const char *what, FILE *err)
{
	static char *probed_py;
	static int ok;
	if (probed_py && strcmp(probed_py, py) == 0)
		return ok ? py : NULL;
	free(probed_py);
	probed_py = xstrdup(py);
	char *argv[] = {(char *)py, "-c", "import torch", NULL};
	struct strbuf out = {0};
	struct spawn_io io = {.cap = 4096};
	int rc = spawn_capture(argv, &io, &out);
	ok = rc == 0;
	if (!ok) {
		/* the last line python wrote (ModuleNotFoundError: ...), or why
		 * it did not start */
		size_t n = out.buf ? out.len : 0;
		while (n && (out.buf[n - 1] == '\n' || out.buf[n - 1] == '\r'))
			n--;
		size_t b = n;
		while (b && out.buf[b - 1] != '\n')
			b--;
		char *last = n ? text_clean(out.buf + b, n - b, 0) : xstrdup("no output");
		fprintf(err, "matrix: %s '%s' cannot import torch, which the PyTorch engine needs (%s %d: %s); "
			     "point it at a python with torch, or leave it unset to use the first python3 that has it\n",
			what, py, rc == 127 ? "it did not start, exit status" : "exit status", rc, last);
		free(last);
	}
	sb_free(&out);
	return ok ? py : NULL;
}

/* The first interpreter that can import torch, probed once per process. */
static const char *torch_python(const struct recipe *r, FILE *err)
{
	static char *found;
	static int probed;
	if (r->python)
		return given_python(r->python, "the recipe's python:", err);
	const char *env = getenv("MATRIX_PYTHON");
	if (env && *env)
		return given_python(env, "MATRIX_PYTHON", err);
	if (probed)
		return found;
	probed = 1;
	const char *candidates[] = {"python3", "/usr/bin/python3", "/usr/local/bin/python3"};
	for (size_t i = 0; i < ARRAY_SIZE(candidates); i++) {
		char *cmd = xasprintf("%s -c 'import torch' >/dev/null 2>&1", candidates[i]);
		int rc = system(cmd);
		free(cmd);
		if (rc == 0) {
			found = xstrdup(candidates[i]);
			return found;
		}
	}
	fprintf(err, "matrix: no python3 that can import torch was found (tried python3, "
		     "/usr/bin/python3, /usr/local/bin/python3): install python3-torch, or set "
		     "'python:' in the recipe or MATRIX_PYTHON\n");
	return NULL;
}

int argv_check_python(const struct recipe *r, const struct grid_filter *only, FILE *err)
{
	if (recipe_factor_index(r, "container") >= 0)
		return 0; /* the images' python, not the host's */
	int uses = r->engine == ENGINE_PYTORCH;
	long fi = r->engine == ENGINE_FACTOR ? recipe_factor_index(r, "engine") : -1;
	for (size_t l = 0; fi >= 0 && l < r->factors[fi].nlevels; l++)
		uses |= strcmp(r->factors[fi].levels[l], "pytorch") == 0;
	if (uses && (only || fi >= 0)) {
		/* only the points that will run: --only's, the exclusions
		 * applied (the walk stops at the first PyTorch point) */
		struct grid g;
		const struct point *p;
		grid_init(&g, r);
		uses = 0;
		while (!uses && (p = grid_next(&g)))
			uses = grid_filter_match(only, p) && strcmp(argv_engine(r, p), "pytorch") == 0;
		grid_free(&g);
	}
	return !uses || torch_python(r, err) ? 0 : -1;
}

const char *argv_engine(const struct recipe *r, const struct point *p)
{
	long cf = recipe_factor_index(r, "container");
	for (size_t i = 0; cf >= 0 && i < r->ncontainers; i++)
		if (r->containers[i].engine && !strcmp(r->containers[i].name, r->factors[cf].levels[p->level[cf]]))
			return r->containers[i].engine;
	switch (r->engine) {
	case ENGINE_NATIVE:
		return "native";
	case ENGINE_PYTORCH:
		return "pytorch";
	case ENGINE_COMMAND:
		return "command";
	case ENGINE_FACTOR: {
		long fi = recipe_factor_index(r, "engine");
		if (fi < 0)
			BUG("engine is a factor but the recipe has none");
		return r->factors[fi].levels[p->level[fi]];
	}
	}
	BUG("unknown engine %d", (int)r->engine);
}

static char *fmt_seconds(double s)
{
	return xasprintf("%gs", s);
}

/* A level of the data factor: synthetic, or a directory, made absolute (a
 * relative one is taken from the directory matrix runs in) and checked
 * here, so that a missing one stops the run before any point; NULL (the
 * error on err) when it is not a directory. */
/* The stopping rule's flags, as the engines and `matrix time` take them. */
static void measure_flags(const struct measure *m, struct vec *v)
{
	vec_push(v, xstrdup("--warmup"));
	vec_push(v, m->warmup_iters > 0 ? xasprintf("%ld", m->warmup_iters) : fmt_seconds(m->warmup_s));
	vec_push(v, xstrdup("--min-time"));
	vec_push(v, fmt_seconds(m->min_time_s));
	vec_push(v, xstrdup("--max-time"));
	vec_push(v, fmt_seconds(m->max_time_s));
	vec_push(v, xstrdup("--rel-ci"));
	vec_push(v, xasprintf("%g", m->rel_ci));
}

static char *data_level(const char *level, FILE *err)
{
	struct stat st;
	if (strcmp(level, "synthetic") == 0)
		return xstrdup(level);
	char *abs = realpath(level, NULL);
	if (abs && stat(abs, &st) == 0 && S_ISDIR(st.st_mode))
		return abs;
	fprintf(err, "matrix: factor data: level '%s' is not a directory (expected synthetic, or a directory "
		     "with MNIST's train-images-idx3-ubyte and train-labels-idx1-ubyte; a relative path is "
		     "taken from the directory matrix runs in)\n", level);
	free(abs);
	return NULL;
}

/* profile: on: DIR/profiles/ID.csv for the result DIR/logs/ID.result, else
 * beside the result file. */
static char *profile_path(const char *result_path, const char *id)
{
	const char *slash = strrchr(result_path, '/');
	size_t dl = slash ? (size_t)(slash - result_path) : 0;
	if (dl >= 5 && strncmp(result_path + dl - 5, "/logs", 5) == 0)
		return xasprintf("%.*s/profiles/%s.csv", (int)(dl - 5), result_path, id);
	return xasprintf("%s.profile.csv", result_path);
}

/* Flags shared by the native and PyTorch engines; -1 (the error on err)
 * when a data level is no directory. */
static int engine_flags(const struct recipe *r, const struct point *p, const char *result_path,
			struct vec *v, FILE *err)
{
	int device_factor = 0;
	for (size_t i = 0; i < r->nfactors; i++) {
		const struct factor *f = &r->factors[i];
		if (!f->vocab || !f->vocab->flag)
			continue;
		if (strcmp(f->name, "device") == 0)
			device_factor = 1;
		char *level = strcmp(f->name, "data") == 0 ? data_level(f->levels[p->level[i]], err)
							   : xstrdup(f->levels[p->level[i]]);
		if (!level)
			return -1;
		vec_push(v, xstrdup(f->vocab->flag));
		vec_push(v, level);
	}
	if (!device_factor) {
		vec_push(v, xstrdup("--device"));
		vec_push(v, xstrdup(r->device ? r->device : "auto"));
	}
	measure_flags(&r->measure, v);
	if (r->profile) {
		vec_push(v, xstrdup("--profile"));
		vec_push(v, profile_path(result_path, p->id));
	}
	vec_push(v, xstrdup("--result"));
	vec_push(v, xstrdup(result_path));
	return 0;
}

/* The command engine's paths, absolute. */
struct cmd_paths {
	const char *result, *run_dir, *recipe_dir;
};

/* Substitute {name} placeholders (as recipe_placeholder finds them, the
 * ones recipe_load checked) in a template argument: a factor's level, or
 * the runner's {result}, {run_dir} and {recipe_dir}. */
static char *substitute(const struct recipe *r, const struct point *p, const char *tmpl,
			const struct cmd_paths *paths)
{
	struct strbuf sb = {0};
	sb_add(&sb, "", 0);
	const char *s = tmpl, *ph;
	size_t len;
	while ((ph = recipe_placeholder(s, &len))) {
		sb_add(&sb, s, (size_t)(ph - s));
		char *name = xstrndup(ph + 1, len - 2);
		long fi = recipe_factor_index(r, name);
		if (fi >= 0)
			sb_puts(&sb, r->factors[fi].levels[p->level[fi]]);
		else if (strcmp(name, "result") == 0)
			sb_puts(&sb, paths->result);
		else if (strcmp(name, "run_dir") == 0)
			sb_puts(&sb, paths->run_dir);
		else if (strcmp(name, "recipe_dir") == 0)
			sb_puts(&sb, paths->recipe_dir);
		else
			sb_add(&sb, ph, len); /* recipe_load let no other name through */
		free(name);
		s = ph + len;
	}
	sb_puts(&sb, s);
	return sb.buf;
}

void argv_shell_quote(struct strbuf *sb, const char *s)
{
	int plain = *s != '\0';
	for (const char *c = s; *c; c++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%", *c))
			plain = 0;
	if (plain) {
		sb_puts(sb, s);
		return;
	}
	char *clean = text_clean(s, strlen(s), 0);
	int ansi = strcmp(clean, s) != 0;
	free(clean);
	if (ansi) {
		/* control characters or bytes that are not UTF-8: bash's $'...'
		 * with every byte outside printable ASCII as \xHH, so that the
		 * line is the command and shows nothing raw on a terminal */
		sb_puts(sb, "$'");
		for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
			if (*c == '\'' || *c == '\\')
				sb_printf(sb, "\\%c", *c);
			else if (*c < 0x20 || *c >= 0x7f)
				sb_printf(sb, "\\x%02x", *c);
			else
				sb_putc(sb, (char)*c);
		}
		sb_putc(sb, '\'');
		return;
	}
	sb_putc(sb, '\'');
	for (const char *c = s; *c; c++) {
		if (*c == '\'')
			sb_puts(sb, "'\\''");
		else
			sb_putc(sb, *c);
	}
	sb_putc(sb, '\'');
}

char *shell_quoted(const char *s)
{
	struct strbuf sb = {0};
	argv_shell_quote(&sb, s);
	return sb.buf ? sb.buf : xstrdup("");
}

/* path made absolute from the runner's directory (allocated). */
static char *absolute(const char *path)
{
	if (path[0] == '/')
		return xstrdup(path);
	char cwd[4096];
	if (!getcwd(cwd, sizeof(cwd)))
		return xstrdup(path);
	return xasprintf("%s/%s", cwd, path);
}

/* The command engine's argv into v: the recipe's template, under `matrix
 * time` (this matrix) with the recipe's measure settings when matrix times
 * it (measure.metric: wall_time). */
static void command_argv(const struct recipe *r, const struct point *p, const struct cmd_paths *paths,
			 struct vec *v)
{
	if (r->measure.wall_time) {
		const char *dir = self_dir();
		vec_push(v, dir ? xasprintf("%s/matrix", dir) : xstrdup("matrix"));
		vec_push(v, xstrdup("time"));
		measure_flags(&r->measure, v);
		vec_push(v, xstrdup("--result"));
		vec_push(v, xstrdup(paths->result));
		vec_push(v, xstrdup("--"));
	}
	for (size_t i = 0; i < r->ncommand; i++)
		vec_push(v, substitute(r, p, r->command[i], paths));
}

int argv_build(const struct recipe *r, const struct point *p, const char *run_dir, const char *result_path,
	       struct point_cmd *cmd, FILE *err)
{
	memset(cmd, 0, sizeof(*cmd));
	struct vec v = {0}, env = {0};
	const char *engine = argv_engine(r, p);
	/* a point of a recipe with a container factor runs inside its image:
	 * the engines at their paths there (containers/README.md), not the
	 * host's, and no host python probed */
	int in_image = recipe_factor_index(r, "container") >= 0;
	/* a command on the host runs in the recipe's directory: the paths it
	 * gets are absolute */
	int command = strcmp(engine, "command") == 0, here = command && !in_image;
	char *result_abs = here ? absolute(result_path) : xstrdup(result_path);
	vec_push(&env, xasprintf("MATRIX_RESULT=%s", result_abs));
	vec_push(&env, xasprintf("MATRIX_POINT_ID=%s", p->id));
	int bad = 0;
	if (strcmp(engine, "native") == 0) {
		vec_push(&v, in_image ? xstrdup(ARGV_IMAGE_ENGINE) : argv_native_engine());
		bad = engine_flags(r, p, result_path, &v, err);
	} else if (strcmp(engine, "pytorch") == 0) {
		const char *py = in_image ? (r->python ? r->python : "python3") : torch_python(r, err);
		if (py) {
			vec_push(&v, xstrdup(py));
			vec_push(&v, in_image ? xstrdup(ARGV_IMAGE_TORCH_SCRIPT) : pytorch_script());
		}
		bad = !py || engine_flags(r, p, result_path, &v, err);
	} else {
		char *run_abs = absolute(run_dir);
		struct cmd_paths paths = {.result = result_abs, .run_dir = run_abs, .recipe_dir = r->dir ? r->dir : "."};
		command_argv(r, p, &paths, &v);
		if (here)
			cmd->cwd = xstrdup(paths.recipe_dir);
		free(run_abs);
	}
	free(result_abs);
	if (bad) {
		for (size_t i = 0; i < v.n; i++)
			free(v.v[i]);
		free(v.v);
		free(env.v[0]);
		free(env.v[1]);
		free(env.v);
		return -1;
	}
	struct strbuf sb = {0};
	if (command) {
		if (cmd->cwd) {
			sb_puts(&sb, "cd ");
			argv_shell_quote(&sb, cmd->cwd);
			sb_puts(&sb, " && ");
		}
		argv_shell_quote(&sb, env.v[0]);
		sb_putc(&sb, ' ');
	}
	for (size_t i = 0; i < v.n; i++) {
		if (i)
			sb_putc(&sb, ' ');
		argv_shell_quote(&sb, v.v[i]);
	}
	cmd->argv = v.v;
	cmd->env = env.v;
	cmd->line = sb.buf;
	return 0;
}

void argv_free(struct point_cmd *cmd)
{
	for (size_t i = 0; cmd->argv && cmd->argv[i]; i++)
		free(cmd->argv[i]);
	for (size_t i = 0; cmd->env && cmd->env[i]; i++)
		free(cmd->env[i]);
	free(cmd->argv);
	free(cmd->env);
	free(cmd->line);
	free(cmd->cwd);
	memset(cmd, 0, sizeof(*cmd));
}
