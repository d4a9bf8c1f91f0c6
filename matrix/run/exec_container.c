/* exec_container.c - the container executor (executor.h): a thin layer over
 * the local executor. A point with an image runs as
 *   RUNTIME run --name matrix-ID-PID-SLOT --network none [--cpus C]
 *       [--memory M --memory-swap M] [GPU] -v RUNDIR:RUNDIR --workdir CWD
 *       [-v CACHE:/matrix-cache -e MATRIX_PLAN_CACHE=... -e TORCHINDUCTOR_CACHE_DIR=...
 *        -e TRITON_CACHE_DIR=...] -e K=V... IMAGE argv...
 * in a slot of the local executor, which keeps its log, timeout and signals
 * as for any point: the client's output is the point's log, the engine writes
 * its result file through the mounted run directory at the path it was given.
 * The host's cache directory (images_cache) keeps the engines' searched
 * plans and compiled kernels from one point's container to the next.
 *
 * Why not --rm: the container's state (its exit code and whether the memory
 * limit killed it) is read with `inspect` after the client returns, then the
 * container is removed here, always (`rm -f`). A point that timed out or was
 * cancelled has its client killed by the local executor; its container is
 * then `kill`ed and removed, so no container outlives its point. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "executor.h"
#include "util.h"

struct container_slot {
	char *name;                 /* the running container's, NULL when none */
	const char *runtime;
	int memory_limit;           /* it ran under --memory */
	char *log_path;             /* the point's log */
};

struct container_exec {
	struct executor *local;
	struct container_slot *slots;
	char *rundir;               /* absolute */
};

/* Run argv (searched in PATH) with stdin from /dev/null and stdout+stderr
 * into *out (when out is not NULL, at most 64 KiB kept) or to log_fd (when
 * >= 0) or discarded. Returns the exit status (-1: could not run it). */
static int run_capture(char *const argv[], char **out, int log_fd)
{
	struct spawn_io io = {.fd = log_fd, .cap = 65536};
	struct strbuf sb = {0};
	int rc = spawn_capture(argv, &io, out ? &sb : NULL);
	if (out)
		*out = sb.buf;
	return rc;
}

/* The last n non-empty lines of text, cleaned, joined by " | ". */
static char *last_lines(const char *text, int n)
{
	const char *end = text + strlen(text), *p = end;
	while (p > text && n > 0) {
		while (p > text && (p[-1] == '\n' || p[-1] == ' '))
			p--;
		while (p > text && p[-1] != '\n')
			p--;
		n--;
	}
	char *flat = xstrndup(p, (size_t)(end - p));
	for (char *c = flat; *c; c++)
		if (*c == '\n')
			*c = '|';
	char *s = text_clean(flat, strlen(flat), 600);
	free(flat);
	size_t len = strlen(s);
	while (len && (s[len - 1] == '|' || s[len - 1] == ' '))
		s[--len] = '\0';
	return s;
}

struct vec {
	char **v;
	size_t n;
};

static void push(struct vec *v, char *s)
{
	v->v = xrealloc(v->v, (v->n + 2) * sizeof(char *));
	v->v[v->n++] = s;
	v->v[v->n] = NULL;
}

static void free_argv(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

int exec_container_probe(const char *runtime, char **why)
{
	char *argv[] = {(char *)runtime, "info", NULL};
	char *out = NULL;
	int rc = run_capture(argv, &out, -1);
	if (rc == 0) {
		free(out);
		*why = NULL;
		return 0;
	}
	*why = rc < 0 ? xasprintf("cannot run '%s': %s", runtime, strerror(errno))
		      : out && *out ? last_lines(out, 2)
				    : xasprintf("'%s info' exited with status %d", runtime, rc);
	free(out);
	return -1;
}

int exec_container_image_id(const char *runtime, const char *ref, char **id, char **why)
{
	char *argv[] = {(char *)runtime, "image", "inspect", "--format", "{{.Id}}", (char *)ref, NULL};
	char *out = NULL;
	int rc = run_capture(argv, &out, -1);
	*id = *why = NULL;
	if (rc == 0 && out && *out) {
		out[strcspn(out, "\r\n")] = '\0';
		*id = out;
		return 0;
	}
	*why = out && *out ? last_lines(out, 1) : xasprintf("'%s image inspect' failed", runtime);
	free(out);
	return -1;
}

char *exec_container_image_digest(const char *runtime, const char *ref)
{
	char *argv[] = {(char *)runtime, "image", "inspect", "--format", "{{.RepoDigests}}", (char *)ref, NULL};
	char *out = NULL;
	if (run_capture(argv, &out, -1) != 0 || !out) {
		free(out);
		return NULL;
	}
	/* "[a b]" (both runtimes print the list so), or "[]" */
	char *s = out + strspn(out, "[ \t");
	size_t n = strcspn(s, "]\r\n");
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	char *digest = n ? xstrndup(s, n) : NULL;
	free(out);
	return digest;
}

char *exec_container_image_user(const char *runtime, const char *ref)
{
	char *argv[] = {(char *)runtime, "image", "inspect", "--format", "{{.Config.User}}", (char *)ref, NULL};
	char *out = NULL;
	if (run_capture(argv, &out, -1) != 0 || !out) {
		free(out);
		return NULL;
	}
	out[strcspn(out, "\r\n")] = '\0';
	if (!*out) {
		free(out);
		return NULL;
	}
	return out;
}

/* The tail of the log at log_path for a failure's reason. */
static char *log_tail_lines(const char *log_path, int n)
{
	size_t len;
	char *log = log_path ? read_file(log_path, &len) : NULL;
	char *tail = log ? last_lines(log, n) : xstrdup("see its output above");
	free(log);
	return tail;
}

static int open_log(const char *log_path, char **why)
{
	if (!log_path)
		return 1; /* stdout */
	int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		*why = xasprintf("cannot write '%s': %s", log_path, strerror(errno));
	return fd;
}

int exec_container_build(const char *runtime, const struct exec_build *b, const char *tag, const char *log_path,
			 char **why)
{
	*why = NULL;
	char *file = xasprintf("%s/Containerfile", b->dir);
	if (access(file, F_OK) != 0) {
		free(file);
		file = xasprintf("%s/Dockerfile", b->dir);
		if (access(file, F_OK) != 0) {
			*why = xasprintf("'%s' has no Containerfile or Dockerfile", b->dir);
			free(file);
			return -1;
		}
	}
	int fd = open_log(log_path, why);
	if (fd < 0) {
		free(file);
		return -1;
	}
	/* the build reaches the package mirror through the host's network: the
	 * test daemons have no bridge */
	struct vec v = {0};
	push(&v, xstrdup(runtime));
	push(&v, xstrdup("build"));
	push(&v, xstrdup("--network=host"));
	push(&v, xstrdup("--force-rm")); /* docker keeps a failed step's container without it */
	push(&v, xasprintf("--tag=%s", tag));
	push(&v, xasprintf("--file=%s", file));
	for (size_t i = 0; i < b->nargs; i++)
		push(&v, xasprintf("--build-arg=%s", b->args[i]));
	push(&v, xstrdup(b->context ? b->context : b->dir));
	if (log_path) { /* the command first: what the log is of */
		struct strbuf sb = {0};
		for (size_t i = 0; i < v.n; i++)
			sb_printf(&sb, "%s%s", i ? " " : "+ ", v.v[i]);
		dprintf(fd, "%s\n", sb.buf);
		sb_free(&sb);
	}
	int rc = run_capture(v.v, NULL, fd);
	free_argv(v.v);
	free(file);
	if (log_path)
		close(fd);
	if (rc == 0)
		return 0;
	char *tail = log_tail_lines(log_path, 3);
	*why = xasprintf("'%s build' of '%s' failed (exit status %d%s%s): %s", runtime, b->dir, rc,
			 log_path ? "; " : "", log_path ? log_path : "", tail);
	free(tail);
	return -1;
}

int exec_container_pull(const char *runtime, const char *ref, const char *log_path, char **why)
{
	*why = NULL;
	int fd = open_log(log_path, why);
	if (fd < 0)
		return -1;
	char *argv[] = {(char *)runtime, "pull", (char *)ref, NULL};
	int rc = run_capture(argv, NULL, fd);
	if (log_path)
		close(fd);
	if (rc == 0)
		return 0;
	char *tail = log_tail_lines(log_path, 2);
	*why = xasprintf("'%s pull %s' failed (exit status %d): %s", runtime, ref, rc, tail);
	free(tail);
	return -1;
}

char *exec_container_run_label(const char *rundir_abs)
{
	uint64_t h = 14695981039346656037ULL; /* FNV-1a */
	for (const unsigned char *c = (const unsigned char *)rundir_abs; *c; c++)
		h = (h ^ *c) * 1099511628211ULL;
	return xasprintf("%016" PRIx64, h);
}

long exec_container_remove_stale(const char *runtime, const char *label)
{
	char *filter = xasprintf("label=matrix.run=%s", label);
	char *ps[] = {(char *)runtime, "ps", "--all", "--quiet", "--filter", filter, NULL};
	char *out = NULL;
	int rc = run_capture(ps, &out, -1);
	free(filter);
	if (rc != 0) {
		free(out);
		return -1;
	}
	long n = 0;
	char *save = NULL;
	for (char *id = strtok_r(out, " \r\n", &save); id; id = strtok_r(NULL, " \r\n", &save)) {
		char *rm[] = {(char *)runtime, "rm", "--force", id, NULL};
		if (run_capture(rm, NULL, -1) == 0)
			n++;
	}
	free(out);
	return n;
}

char *exec_container_user(const char *runtime)
{
	if (getuid() == 0 || strcmp(runtime, "docker") != 0)
		return NULL;
	char *argv[] = {(char *)runtime, "info", "--format", "{{.SecurityOptions}}", NULL};
	char *out = NULL;
	int rc = run_capture(argv, &out, -1);
	int rootless = rc == 0 && out && strstr(out, "rootless");
	free(out);
	return rootless ? NULL : xasprintf("%ld:%ld", (long)getuid(), (long)getgid());
}

char *exec_container_limits(const char *runtime)
{
	int docker = strcmp(runtime, "docker") == 0;
	/* podman: "true v1"; docker: "1 [name=seccomp,... name=rootless]" */
	char *argv[] = {(char *)runtime, "info", "--format",
			docker ? "{{.CgroupVersion}} {{.SecurityOptions}}"
			       : "{{.Host.Security.Rootless}} {{.Host.CgroupsVersion}}",
			NULL};
	char *out = NULL;
	int rc = run_capture(argv, &out, -1);
	int v1_rootless = rc == 0 && out &&
			  (docker ? strncmp(out, "1 ", 2) == 0 && strstr(out, "rootless")
				  : strncmp(out, "true v1", 7) == 0);
	free(out);
	return v1_rootless ? xasprintf("%s runs rootless on cgroups v1 here, where it ignores --cpus and --memory", runtime)
			   : NULL;
}

char **exec_container_argv(const struct exec_point *pt, const char *name, const char *rundir)
{
	const struct exec_image *im = pt->image;
	int docker = strcmp(im->runtime, "docker") == 0;
	struct vec v = {0};
	push(&v, xstrdup(im->runtime));
	push(&v, xstrdup("run"));
	push(&v, xasprintf("--name=%s", name));
	push(&v, xasprintf("--network=%s", im->network ? im->network : "none"));
	if (im->cpus)
		push(&v, xasprintf("--cpus=%s", im->cpus));
	if (im->memory) {
		push(&v, xasprintf("--memory=%s", im->memory));
		push(&v, xasprintf("--memory-swap=%s", im->memory)); /* no swap: over the limit is an OOM kill */
	}
	if (pt->res.gpu)
		push(&v, xstrdup(docker ? "--gpus=all" : "--device=nvidia.com/gpu=all"));
	if (im->user)
		push(&v, xasprintf("--user=%s", im->user));
	push(&v, xasprintf("--volume=%s:%s", rundir, rundir));
	char cwd[PATH_MAX];
	if (getcwd(cwd, sizeof(cwd)))
		push(&v, xasprintf("--workdir=%s", cwd));
	if (im->cache) {
		const char *key = im->cache_key ? im->cache_key : "IMAGE-ID"; /* a dry run's image not here yet */
		push(&v, xasprintf("--volume=%s:%s", im->cache, EXEC_CACHE_MOUNT));
		push(&v, xstrdup("--env=MATRIX_PLAN_CACHE=" EXEC_CACHE_MOUNT "/plan"));
		push(&v, xasprintf("--env=TORCHINDUCTOR_CACHE_DIR=%s/torch/%s/inductor", EXEC_CACHE_MOUNT, key));
		push(&v, xasprintf("--env=TRITON_CACHE_DIR=%s/torch/%s/triton", EXEC_CACHE_MOUNT, key));
	}
	for (char *const *e = pt->env; e && *e; e++)
		push(&v, xasprintf("--env=%s", *e));
	if (im->run_label)
		push(&v, xasprintf("--label=matrix.run=%s", im->run_label));
	push(&v, xasprintf("--label=matrix.point=%s", pt->id ? pt->id : ""));
	push(&v, xstrdup(im->ref));
	for (char *const *a = pt->argv; *a; a++)
		push(&v, xstrdup(*a));
	return v.v;
}

/* The client exited 125: the runtime could not make or start the container
 * (an option refused, no GPU driver, no image), and its last line is a hint
 * such as "Run 'docker run --help'". A line appended to the point's log
 * names the runtime's error (its first line that says "Error", else its
 * first), so that the point's reason (its log's last line) says why. */
static void note_runtime_error(const struct container_slot *s)
{
	size_t len;
	char *log = s->log_path ? read_file(s->log_path, &len) : NULL;
	if (!log)
		return;
	const char *first = NULL, *err = NULL;
	size_t n;
	for (const char *p = log; *p && !err; p += n + (p[n] == '\n')) {
		n = strcspn(p, "\n");
		if (n && !first)
			first = p;
		if (n && (memmem(p, n, "Error", 5) || memmem(p, n, "error", 5)))
			err = p;
	}
	const char *line = err ? err : first;
	FILE *f = line ? fopen(s->log_path, "ae") : NULL;
	if (f) {
		fprintf(f, "matrix: %s could not start the container: %.*s\n", s->runtime, (int)strcspn(line, "\n"),
			line);
		fclose(f);
	}
	free(log);
}

/* Inspect the ended container of slot s into out (exit code, OOM kill), kill
 * it when it may still run, remove it. */
static void container_end(struct container_slot *s, struct exec_exit *out)
{
	if (!s->name)
		return;
	char *rt = (char *)s->runtime;
	int still = !out || out->timed_out || !WIFEXITED(out->wstatus);
	if (still) {
		char *kill_argv[] = {rt, "kill", s->name, NULL};
		run_capture(kill_argv, NULL, -1);
	}
	int ccode = -1; /* the container's own exit code */
	if (out) {
		char *inspect[] = {rt, "inspect", "--format", "{{.State.OOMKilled}} {{.State.ExitCode}}", s->name, NULL};
		char *state = NULL;
		if (run_capture(inspect, &state, -1) == 0 && state) {
			int code = -1;
			char oom[16] = "";
			if (sscanf(state, "%15s %d", oom, &code) == 2) {
				ccode = code;
				/* podman 4 with runc and cgroupfs never says OOMKilled:
				 * a SIGKILL nobody here sent, under a memory limit, is
				 * the kernel's OOM killer in the container's cgroup */
				out->oom_killed = strcmp(oom, "true") == 0 ||
						  (s->memory_limit && !out->timed_out && code == 128 + 9);
				/* the client exits 128+N for a container killed by signal N */
				if (!out->timed_out && code > 128 && code < 128 + 65 && WIFEXITED(out->wstatus) &&
				    WEXITSTATUS(out->wstatus) == code)
					out->wstatus = code - 128;
			}
		}
		free(state);
		/* the client's 125 and not the engine's */
		if (!out->timed_out && WIFEXITED(out->wstatus) && WEXITSTATUS(out->wstatus) == 125 && ccode != 125)
			note_runtime_error(s);
	}
	char *rm_argv[] = {rt, "rm", "-f", s->name, NULL};
	run_capture(rm_argv, NULL, -1);
	free(s->name);
	s->name = NULL;
}

/* The point's first log line on the cache: what is mounted where, and the
 * variables that point the engines at it; or why none is. Makes image
 * im's torch/KEY directory on the host (its owner this user, not the
 * container's). */
static char *cache_head(const struct exec_image *im)
{
	if (!im->cache)
		return xasprintf("matrix: container cache: none mounted (%s)",
				 im->cache_none ? im->cache_none : "no cache directory");
	if (im->cache_key) {
		char *d = xasprintf("%s/torch/%s", im->cache, im->cache_key);
		(void)mkdir(d, 0700); /* else the engines in the container make it */
		free(d);
	}
	const char *key = im->cache_key ? im->cache_key : "IMAGE-ID";
	return xasprintf("matrix: container cache: %s mounted read-write at %s; MATRIX_PLAN_CACHE=%s/plan "
			 "TORCHINDUCTOR_CACHE_DIR=%s/torch/%s/inductor TRITON_CACHE_DIR=%s/torch/%s/triton",
			 im->cache, EXEC_CACHE_MOUNT, EXEC_CACHE_MOUNT, EXEC_CACHE_MOUNT, key, EXEC_CACHE_MOUNT, key);
}

/* The point's first log lines: the cache (cache_head) and, when --user
 * overrides the image's own USER, that and why. */
static char *log_head(const struct exec_image *im)
{
	char *cache = cache_head(im);
	if (!im->image_user)
		return cache;
	char *head = xasprintf("%s\nmatrix: container user: --user=%s, not the image's USER '%s': the container's "
			       "root is the runner on the host, which owns the run directory and the cache the "
			       "engine writes into (as '%s' it could write neither)",
			       cache, im->user, im->image_user, im->image_user);
	free(cache);
	return head;
}

static int container_start(struct executor *ex, size_t slot, const struct exec_point *pt, FILE *err)
{
	struct container_exec *c = ex->state;
	struct container_slot *s = &c->slots[slot];
	if (!pt->image)
		return c->local->ops->start(c->local, slot, pt, err);
	s->name = xasprintf("matrix-%s-%ld-%zu", pt->id ? pt->id : "point", (long)getpid(), slot);
	s->runtime = pt->image->runtime;
	s->memory_limit = pt->image->memory != NULL;
	free(s->log_path);
	s->log_path = pt->log_path ? xstrdup(pt->log_path) : NULL;
	/* a container of that name left by a killed runner of this pid */
	char *rm_argv[] = {(char *)s->runtime, "rm", "-f", s->name, NULL};
	run_capture(rm_argv, NULL, -1);
	char **argv = exec_container_argv(pt, s->name, c->rundir);
	struct exec_point local = *pt;
	local.argv = argv;
	local.env = NULL;
	char *head = log_head(pt->image);
	local.log_head = head;
	int rc = c->local->ops->start(c->local, slot, &local, err);
	free(head);
	free_argv(argv);
	if (rc < 0) {
		free(s->name);
		s->name = NULL;
	}
	return rc;
}

static long container_wait(struct executor *ex, struct exec_exit *out)
{
	struct container_exec *c = ex->state;
	long i = c->local->ops->wait(c->local, out);
	if (i >= 0) {
		out->oom_killed = 0;
		container_end(&c->slots[i], out);
	}
	return i;
}

static int container_interrupted(struct executor *ex)
{
	struct container_exec *c = ex->state;
	return c->local->ops->interrupted(c->local);
}

static void container_cancel_all(struct executor *ex)
{
	struct container_exec *c = ex->state;
	c->local->ops->cancel_all(c->local);
	for (size_t i = 0; i < ex->nslots; i++)
		container_end(&c->slots[i], NULL);
}

static void container_describe(struct executor *ex, struct strbuf *sb)
{
	struct container_exec *c = ex->state;
	c->local->ops->describe(c->local, sb);
}

static void container_free(struct executor *ex)
{
	if (!ex)
		return;
	struct container_exec *c = ex->state;
	for (size_t i = 0; i < ex->nslots; i++) {
		container_end(&c->slots[i], NULL);
		free(c->slots[i].log_path);
	}
	c->local->ops->free(c->local);
	free(c->slots);
	free(c->rundir);
	free(c);
	free(ex);
}

static const struct executor_ops container_ops = {
	.name = "container",
	.start = container_start,
	.wait = container_wait,
	.interrupted = container_interrupted,
	.cancel_all = container_cancel_all,
	.describe = container_describe,
	.free = container_free,
};

char *exec_container_dir_why(const char *abs)
{
	if (!strpbrk(abs, ":,"))
		return NULL;
	return xasprintf("the containers cannot mount the run directory '%s': it holds ':' or ',', which a "
			 "container runtime's --volume cannot carry; choose another --out", abs);
}

struct executor *exec_container_new(size_t nslots, double grace_s, const char *rundir, FILE *err)
{
	char *abs = realpath(rundir, NULL);
	if (!abs) {
		error("cannot resolve '%s': %s", rundir, strerror(errno));
		return NULL;
	}
	char *why = exec_container_dir_why(abs); /* through a link: the path as given was checked before */
	if (why) {
		error("run: %s", why);
		free(why);
		free(abs);
		return NULL;
	}
	struct executor *local = exec_local_new(nslots, grace_s, err);
	if (!local) {
		free(abs);
		return NULL;
	}
	struct container_exec *c = xcalloc(1, sizeof(*c));
	c->local = local;
	c->slots = xcalloc(nslots ? nslots : 1, sizeof(*c->slots));
	c->rundir = abs;
	struct executor *ex = xcalloc(1, sizeof(*ex));
	*ex = (struct executor){.ops = &container_ops, .nslots = nslots, .state = c};
	return ex;
}
