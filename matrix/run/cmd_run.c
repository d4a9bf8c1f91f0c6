/* cmd_run.c - `matrix run`: expand a recipe and run every point in a fresh
 * process, one results.csv row per finished point, resumable at any moment. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "exec_slurm.h"
#include "executor.h"
#include "images.h"
#include "noise.h"
#include "plan/argv.h"
#include "plan/catalog.h"
#include "plan/grid.h"
#include "plan/recipe.h"
#include "progress.h"
#include "provenance.h"
#include "report/model.h"
#include "report/quality.h"
#include "report/report.h"
#include "result.h"
#include "store.h"
#include "util.h"

struct run_opts {
	const char *recipe;
	const char *out;
	const char *resume;
	const char *only;
	char **ovr;           /* KEY=VALUE overrides of the recipe (argv's) */
	size_t novr;
	int retry_failed;
	int allow_changed;
	int dry_run;
	int no_report;
	int allow_oversubscribe;
	int detach;               /* slurm: submit and return */
	long jobs;
	const char *executor;     /* "local" | "slurm" | NULL: the recipe's, else local */
};

/* --- a set of point ids (16 hex digits -> 64-bit keys) -------------------- */

struct idset {
	uint64_t *key;  /* 0 = empty slot (an id hashing to 0 is stored as 1) */
	size_t cap, n;
};

static uint64_t id_key(const char *id)
{
	uint64_t k = strtoull(id, NULL, 16);
	return k ? k : 1;
}

static void idset_add(struct idset *s, const char *id)
{
	if ((s->n + 1) * 2 > s->cap) {
		struct idset big = {.cap = s->cap ? s->cap * 2 : 64};
		big.key = xcalloc(big.cap, sizeof(uint64_t));
		for (size_t i = 0; i < s->cap; i++)
			if (s->key[i]) {
				size_t j = s->key[i] & (big.cap - 1);
				while (big.key[j])
					j = (j + 1) & (big.cap - 1);
				big.key[j] = s->key[i];
				big.n++;
			}
		free(s->key);
		*s = big;
	}
	uint64_t k = id_key(id);
	size_t j = k & (s->cap - 1);
	while (s->key[j] && s->key[j] != k)
		j = (j + 1) & (s->cap - 1);
	if (!s->key[j]) {
		s->key[j] = k;
		s->n++;
	}
}

static int idset_has(const struct idset *s, const char *id)
{
	if (!s->cap)
		return 0;
	uint64_t k = id_key(id);
	size_t j = k & (s->cap - 1);
	while (s->key[j]) {
		if (s->key[j] == k)
			return 1;
		j = (j + 1) & (s->cap - 1);
	}
	return 0;
}

/* --- statuses --------------------------------------------------------------------- */

static int status_is_success(const char *st)
{
	return strcmp(st, "ok") == 0 || strcmp(st, "unsupported") == 0;
}

static int status_known(const char *st)
{
	static const char *const known[] = {"ok", "unsupported", "failed", "oom", "timeout", "crashed"};
	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (strcmp(st, known[i]) == 0)
			return 1;
	return 0;
}

static const char *signal_name(int sig)
{
	static const struct {
		int sig;
		const char *name;
	} names[] = {
		{SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
		{SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
		{SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
		{SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"},
		{SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].sig == sig)
			return names[i].name;
	static char buf[32];
	snprintf(buf, sizeof(buf), "signal %d", sig);
	return buf;
}

/* The last non-empty line of buf[0..*end): its trailing blanks and
 * newlines cut off (*end moves back over them, writing NULs), its start
 * returned (== *end: none). */
static char *last_line(char *buf, char **end)
{
	char *e = *end;
	while (e > buf && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' '))
		*--e = '\0';
	char *start = e;
	while (start > buf && start[-1] != '\n')
		start--;
	*end = e;
	return start;
}

/* The last non-empty line of the log (at most 200 bytes), or NULL; and
 * whether its tail mentions running out of memory. */
static char *log_tail(const char *path, int *oom)
{
	*oom = 0;
	/* the point may have replaced its log: by a FIFO (no blocking open), by
	 * a link (not followed), by anything but a regular file (not read) */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	char buf[65537];
	off_t size = lseek(fd, 0, SEEK_END);
	off_t from = size > 65536 ? size - 65536 : 0;
	ssize_t n = pread(fd, buf, 65536, from);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	static const char *const patterns[] = {
		"out of memory", "Out of memory", "OutOfMemoryError", "CUDA_ERROR_OUT_OF_MEMORY",
		"cudaErrorMemoryAllocation", "CUBLAS_STATUS_ALLOC_FAILED", "CUDNN_STATUS_ALLOC_FAILED",
		"std::bad_alloc", "MemoryError", "Cannot allocate memory",
	};
	for (size_t i = 0; i < ARRAY_SIZE(patterns); i++)
		if (strstr(buf, patterns[i]))
			*oom = 1;
	char *end = buf + n, *start = last_line(buf, &end);
	if (start == end)
		return NULL;
	/* a usage line after the error ("matrix-engine: --batch: ... / usage:
	 * matrix-engine [flags] ..."): the error is the reason */
	if (strncasecmp(start, "usage:", 6) == 0) {
		char *pend = start, *pstart = last_line(buf, &pend);
		if (pstart < pend) {
			start = pstart;
			end = pend;
		}
	}
	/* cut at a character boundary, invalid bytes and control characters
	 * made harmless: the line goes to results.csv and to the terminal */
	return text_clean(start, (size_t)(end - start), 200);
}

struct outcome {
	const char *status;
	char *reason;
	struct result res;
};

/* The largest plan a run takes: its points (each a process and a row), and
 * the combinations of its factors it walks (--only selects from them). */
#define RUN_MAX_POINTS 1000000ULL
#define RUN_MAX_CUBE 100000000ULL

/* A failure's reason is cut (at a character boundary) to this many bytes. */
#define REASON_MAX_BYTES 1000

/* Classify a finished point: exit status, result file, log. */
static void classify(const struct exec_exit *c, const char *result_path, const char *log_path,
		     double timeout_s, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	char *why = NULL;
	int rc = result_read(result_path, &o->res, &why);
	const char *file_status = rc == 0 ? result_get(&o->res, "status") : NULL;
	const char *file_reason = rc == 0 ? result_get(&o->res, "reason") : NULL;
	int oom;
	char *tail = log_tail(log_path, &oom);

	if (c->timed_out) {
		o->status = "timeout";
		o->reason = xasprintf("no result within the timeout of %g s", timeout_s);
	} else if (c->oom_killed) {
		o->status = "oom";
		o->reason = xasprintf("killed by the container's memory limit%s%s", tail ? ": " : "", tail ? tail : "");
	} else if (WIFSIGNALED(c->wstatus)) {
		int sig = WTERMSIG(c->wstatus);
		o->status = "crashed";
		o->reason = xasprintf("killed by %s%s%s", signal_name(sig), tail ? ": " : "", tail ? tail : "");
	} else {
		int code = WEXITSTATUS(c->wstatus);
		if (code == 0) {
			if (rc == -1) {
				o->status = "failed";
				o->reason = xstrdup("exit status 0 but no result file was written");
			} else if (rc == -2) {
				o->status = "failed";
				o->reason = xasprintf("garbled result: %s", why);
			} else if (!file_status) {
				o->status = "failed";
				o->reason = xstrdup("garbled result: no 'status' key");
			} else if (strcmp(file_status, "ok") != 0) {
				o->status = "failed";
				o->reason = xasprintf("garbled result: exit status 0 with status '%s'", file_status);
			} else {
				/* NaN, infinite or negative: a failed measurement (result_check) */
				char *bad = result_check(&o->res);
				o->status = bad ? "failed" : "ok";
				if (bad)
					o->reason = xasprintf("%s: %s", strstr(bad, "not a number") ? "garbled result"
												: "failed measurement", bad);
				free(bad);
			}
		} else if (code == 3 && !(file_status && strcmp(file_status, "failed") == 0)) {
			/* (a command that `matrix time` timed exits 3 with status=failed) */
			o->status = "unsupported";
			o->reason = xstrdup(file_reason ? file_reason : "exit status 3 without a reason");
		} else if ((file_status && strcmp(file_status, "oom") == 0) || oom) {
			o->status = "oom";
			o->reason = xstrdup(file_reason ? file_reason : tail ? tail : "out of memory");
		} else {
			o->status = "failed";
			const char *detail = file_reason ? file_reason : tail;
			o->reason = xasprintf("exit status %d%s%s", code, detail ? ": " : "", detail ? detail : "");
		}
	}
	free(tail);
	free(why);
	/* what the engine wrote goes to results.csv and to the terminal */
	char *clean;
	if (o->reason) {
		clean = text_clean(o->reason, strlen(o->reason), REASON_MAX_BYTES);
		free(o->reason);
		o->reason = clean;
	}
	for (size_t i = 0; i < o->res.n; i++) {
		clean = text_clean(o->res.kv[i].value, strlen(o->res.kv[i].value), 0);
		free(o->res.kv[i].value);
		o->res.kv[i].value = clean;
	}
}

/* --- the run directory ------------------------------------------------------------ */

/* Whether dir is missing or holds nothing. */
static int dir_is_empty(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT;
	int empty = 1;
	for (struct dirent *e; empty && (e = readdir(d));)
		empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
	closedir(d);
	return empty;
}

static char *default_dir(const struct recipe *r)
{
	char stamp[32];
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	char *dir = xasprintf("experiments/%s/%s", r->name, stamp);
	struct stat st;
	for (int k = 2; stat(dir, &st) == 0; k++) {
		free(dir);
		dir = xasprintf("experiments/%s/%s-%d", r->name, stamp, k);
	}
	return dir;
}

static int lock_dir(const char *dir)
{
	char *path = xasprintf("%s/.lock", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		error("cannot open '%s': %s", path, strerror(errno));
		free(path);
		return -1;
	}
	/* A POSIX record lock, not flock(): it belongs to this process, so a
	 * child forked but not yet exec'd (a keeper before it closes its
	 * descriptors) does not keep it after this runner dies. */
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
	if (fcntl(fd, F_SETLK, &fl) < 0) {
		char pid[32] = "";
		ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		error("'%s' is locked by another runner%s%s%s", dir, *pid ? " (pid " : "", pid, *pid ? ")" : "");
		close(fd);
		free(path);
		return -1;
	}
	if (ftruncate(fd, 0) == 0)
		dprintf(fd, "%ld\n", (long)getpid());
	free(path);
	return fd;
}

/* env.txt: this runner, the command line, and the executor's description of
 * where the points run. */
static int write_env(const char *dir, int argc, char **argv, struct executor *ex, const struct images *img,
		     uint64_t recipe_hash, const struct provenance *pv)
{
	struct strbuf sb = {0};
	struct utsname u;
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	time_t t = time(NULL);
	char when[64];
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S%z", localtime(&t));
	sb_printf(&sb, "matrix: %s\n", PACKAGE_VERSION);
	sb_printf(&sb, "date: %s\n", when);
	sb_printf(&sb, "host: %s\n", host);
	if (uname(&u) == 0)
		sb_printf(&sb, "kernel: %s %s %s\n", u.sysname, u.release, u.machine);
	sb_printf(&sb, "cpus_online: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	if (pages > 0 && psize > 0)
		sb_printf(&sb, "memory_bytes: %lld\n", (long long)pages * psize);
	sb_puts(&sb, "command:"); /* argv[0]: matrix as it was called */
	for (int i = 0; i < argc; i++) {
		sb_putc(&sb, ' ');
		argv_shell_quote(&sb, argv[i]);
	}
	sb_putc(&sb, '\n');
	/* what recipe.yaml holds: a resume checks that it was not edited since */
	sb_printf(&sb, "recipe_hash: %016" PRIx64 "\n", recipe_hash);
	/* what reproduces the points: where, which commit, which build */
	provenance_env(pv, &sb);
	if (ex)
		ex->ops->describe(ex, &sb);
	else /* the slurm executor: the nodes are the scheduler's choice, each row names its node */
		sb_puts(&sb, "executor: slurm\n");
	if (img)
		images_describe(img, &sb);
	char *path = xasprintf("%s/env.txt", dir);
	int rc = write_file_atomic(path, sb.buf, sb.len);
	if (rc < 0)
		error("cannot write '%s': %s", path, strerror(errno));
	free(path);
	sb_free(&sb);
	return rc;
}

/* A recipe loaded from run directory dir's recipe.yaml: its directory is
 * the one the run began from, env.txt's project_dir (provenance.h), not
 * dir; a directory from before it was recorded ran its command points in
 * the runner's directory, which they keep. */
static void recipe_dir_from_env(struct recipe *r, const char *dir)
{
	char *env_path = xasprintf("%s/env.txt", dir), *why = NULL;
	char *env = read_file_capped(env_path, 1 << 20, 1, NULL, &why);
	free(env_path);
	free(why);
	const char *line = env ? strstr(env, "\nproject_dir: ") : NULL;
	char *rd = line ? xstrndup(line + 14, strcspn(line + 14, "\n")) : NULL;
	free(env);
	if (!rd || rd[0] != '/') { /* not recorded */
		char cwd[4096];
		free(rd);
		rd = xstrdup(getcwd(cwd, sizeof(cwd)) ? cwd : ".");
	}
	free(r->dir);
	r->dir = rd;
}

/* plan.csv: every point of the plan (with --only, those that match), with
 * its command, streamed to a file. (Which --only subsets the runs on the
 * directory kept is in subsets.csv, store_subset_add.) */
static int write_plan(const char *dir, const struct recipe *r, const struct grid_filter *filter)
{
	char *path = xasprintf("%s/plan.csv", dir);
	char *tmp = xasprintf("%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	int rc = -1;
	if (!f) {
		error("cannot write '%s': %s", tmp, strerror(errno));
		goto out;
	}
	size_t ncells = 4 + r->nfactors;
	char **cells = xcalloc(ncells, sizeof(char *));
	struct strbuf sb = {0};
	cells[0] = "id";
	cells[1] = "index";
	cells[2] = "repeat";
	for (size_t i = 0; i < r->nfactors; i++)
		cells[3 + i] = r->factors[i].name;
	cells[ncells - 1] = "command";
	csv_record(&sb, cells, ncells);
	fputs(sb.buf, f);
	struct grid g;
	grid_init(&g, r);
	const struct point *p;
	rc = 0;
	while ((p = grid_next(&g))) {
		if (!grid_filter_match(filter, p))
			continue;
		char idx[32], rep[16];
		snprintf(idx, sizeof(idx), "%" PRIu64, p->index);
		snprintf(rep, sizeof(rep), "%u", p->repeat);
		char *result = xasprintf("%s/logs/%s.result", dir, p->id);
		struct point_cmd cmd;
		if (argv_build(r, p, dir, result, &cmd, stderr) < 0) {
			free(result);
			rc = -1;
			break;
		}
		cells[0] = (char *)p->id;
		cells[1] = idx;
		cells[2] = rep;
		for (size_t i = 0; i < r->nfactors; i++)
			cells[3 + i] = r->factors[i].levels[p->level[i]];
		cells[ncells - 1] = cmd.line;
		sb_reset(&sb);
		csv_record(&sb, cells, ncells);
		fputs(sb.buf, f);
		argv_free(&cmd);
		free(result);
	}
	grid_free(&g);
	sb_free(&sb);
	free(cells);
	if (fflush(f) != 0 || fsync(fileno(f)) != 0)
		rc = -1;
	if (fclose(f) != 0)
		rc = -1;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -1;
	if (rc < 0)
		unlink(tmp);
out:
	free(tmp);
	free(path);
	return rc;
}

/* --- progress (progress.h) ---------------------------------------------------------- */

static void fmt_hms(char *buf, size_t n, double s)
{
	long t = (long)(s + 0.5);
	snprintf(buf, n, "%02ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

/* The level of every factor of point p (an array of nfactors strings
 * borrowed from r; free the array only). */
static const char **point_levels(const struct recipe *r, const struct point *p)
{
	const char **v = xcalloc(r->nfactors ? r->nfactors : 1, sizeof(char *));
	for (size_t i = 0; i < r->nfactors; i++)
		v[i] = r->factors[i].levels[p->level[i]];
	return v;
}

/* "name=level ..." of p's factors that vary in the run, for the progress line. */
static void point_label(struct strbuf *sb, const struct progress *pg, const struct recipe *r, const struct point *p)
{
	const char **levels = point_levels(r, p);
	char rep[16];
	snprintf(rep, sizeof(rep), "%u", p->repeat);
	progress_label(pg, r, levels, rep, 0, sb);
	free(levels);
}

/* --- running ----------------------------------------------------------------------------- */

/* A point in flight: slot i of the executor is slots[i]. */
struct slot {
	struct exec_exit exit;    /* once it is done */
	struct point pt;          /* a copy: the grid reuses its point */
	size_t *level;
	struct point_cmd cmd;
	char *result_path, *log_path;
	struct noise_start noise;
	int gpu;                  /* GPUs it holds (0: a CPU point) */
	char **env;               /* cmd.env + CUDA_VISIBLE_DEVICES (GPU points) */
	int busy;
	const char *image_id;     /* the container's image id, or NULL */
	const char *image_digest; /* its repository digests, or NULL */
	const char *image_ref;    /* the container's image reference, or NULL */
	const char *unstarted;    /* why the point failed without running (its image), or NULL */
};

/* The GPUs points are given, one CUDA_VISIBLE_DEVICES token each: the
 * runner's own CUDA_VISIBLE_DEVICES when set, else one per
 * /proc/driver/nvidia/gpus entry; none found: one anonymous GPU ("") so that
 * CUDA points still run one at a time, as before. */
struct gpus {
	size_t n;
	char **id;
	long *owner;              /* slot holding it, -1: free */
};

static void gpus_init(struct gpus *G)
{
	const char *vis = getenv("CUDA_VISIBLE_DEVICES");
	memset(G, 0, sizeof(*G));
	if (vis && *vis) {
		char *copy = xstrdup(vis), *save = NULL;
		for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			G->id = xrealloc(G->id, (G->n + 1) * sizeof(*G->id));
			G->id[G->n++] = xstrdup(t);
		}
		free(copy);
	} else {
		DIR *d = opendir("/proc/driver/nvidia/gpus");
		struct dirent *e;
		size_t k = 0;
		while (d && (e = readdir(d)))
			if (e->d_name[0] != '.')
				k++;
		if (d)
			closedir(d);
		for (size_t i = 0; i < k; i++) {
			G->id = xrealloc(G->id, (G->n + 1) * sizeof(*G->id));
			G->id[G->n++] = xasprintf("%zu", i);
		}
	}
	if (!G->n) {
		G->id = xcalloc(1, sizeof(*G->id));
		G->id[G->n++] = xstrdup("");
	}
	G->owner = xcalloc(G->n, sizeof(*G->owner));
	for (size_t i = 0; i < G->n; i++)
		G->owner[i] = -1;
}

static size_t gpus_free(const struct gpus *G)
{
	size_t k = 0;
	for (size_t i = 0; i < G->n; i++)
		k += G->owner[i] < 0;
	return k;
}

static void gpus_release(struct gpus *G, long slot)
{
	for (size_t i = 0; G->owner && i < G->n; i++)
		if (G->owner[i] == slot)
			G->owner[i] = -1;
}

static void gpus_free_all(struct gpus *G)
{
	for (size_t i = 0; i < G->n; i++)
		free(G->id[i]);
	free(G->id);
	free(G->owner);
	memset(G, 0, sizeof(*G));
}

/* A result path of its own for each attempt at a point, logs/ID.NONCE.result:
 * whatever is left of an earlier attempt (a killed runner's) can never be
 * taken for this one's result. */
static char *attempt_result_path(const char *dir, const char *id)
{
	static uint64_t seq;
	uint64_t nonce;
	if (getrandom(&nonce, sizeof(nonce), GRND_NONBLOCK) != (ssize_t)sizeof(nonce))
		nonce = ((uint64_t)time(NULL) << 32) ^ ((uint64_t)getpid() << 16) ^ (uint64_t)now_monotonic();
	nonce += seq++;
	for (;;) {
		char *p = xasprintf("%s/logs/%s.%016" PRIx64 ".result", dir, id, nonce);
		struct stat st;
		if (lstat(p, &st) != 0)
			return p;
		free(p);
		nonce++;
	}
}

/* GPUs point p asks for: its `gpus` level (data-parallel ranks), else 1;
 * 0 for a CPU point. */
static int point_gpus(const struct recipe *r, const struct point *p, int uses_gpu)
{
	if (!uses_gpu)
		return 0;
	long fi = recipe_factor_index(r, "gpus");
	long n = fi >= 0 ? strtol(r->factors[fi].levels[p->level[fi]], NULL, 10) : 1;
	return n < 1 ? 1 : n > 4096 ? 4096 : (int)n;
}

static int point_uses_gpu(const struct recipe *r, const struct point *p)
{
	long fi = recipe_factor_index(r, "device");
	const char *dev = fi >= 0 ? r->factors[fi].levels[p->level[fi]] : (r->device ? r->device : "auto");
	if (strcmp(dev, "cuda") == 0)
		return 1;
	if (strcmp(dev, "auto") == 0 && strcmp(argv_engine(r, p), "command") != 0)
		return access("/dev/nvidia0", F_OK) == 0;
	return 0;
}

static int keep_success(const struct row *row, void *ctx)
{
	long col = *(long *)ctx;
	return status_is_success(row->cell[col]);
}

/* The results.csv row of a classified point (cells borrowed from s, o and
 * extra; the caller frees the array only). */
static char **point_row(const struct recipe *r, const struct store *st, const struct slot *s,
			const struct outcome *o, struct strbuf *extra, char bufs[3][32])
{
	size_t k = 0;
	char **cells = xcalloc(st->ncols, sizeof(char *));
	snprintf(bufs[0], 32, "%" PRIu64, s->pt.index);
	snprintf(bufs[1], 32, "%u", s->pt.repeat);
	snprintf(bufs[2], 32, "%.3f", s->exit.wall_s);
	cells[k++] = (char *)s->pt.id;
	cells[k++] = bufs[0];
	cells[k++] = bufs[1];
	for (size_t i = 0; i < r->nfactors; i++)
		cells[k++] = r->factors[i].levels[s->pt.level[i]];
	cells[k++] = (char *)o->status;
	cells[k++] = o->reason;
	for (size_t i = 0; i < result_ncolumns; i++)
		cells[k++] = (char *)result_get(&o->res, result_columns[i]);
	cells[k++] = bufs[2];
	for (size_t i = 0; i < o->res.n; i++) {
		const char *key = o->res.kv[i].key;
		int column = strcmp(key, "status") == 0 || strcmp(key, "reason") == 0;
		for (size_t c = 0; !column && c < result_ncolumns; c++)
			column = strcmp(key, result_columns[c]) == 0;
		if (column)
			continue;
		result_extra_add(extra, key, o->res.kv[i].value);
	}
	cells[k++] = extra->buf;
	cells[k++] = s->cmd.line;
	return cells;
}

/* The first ok point whose result has no key named report.metric: said at
 * once, with the key it most likely meant, instead of after the whole study,
 * when the report finds no metric ('thruput' for throughput). epoch_time is
 * the report's (dataset_size / throughput), never a point's key. */
static void metric_missing(const struct recipe *r, const struct slot *s, const struct outcome *o,
			   struct progress *pg)
{
	const char *m = r->report.metric;
	if (pg->metric_warned || !m || strcmp(o->status, "ok") != 0 || result_get(&o->res, m) ||
	    strcmp(m, "epoch_time") == 0)
		return;
	pg->metric_warned = 1;
	const char **keys = xcalloc(o->res.n + 1, sizeof(*keys));
	for (size_t i = 0; i < o->res.n; i++)
		keys[i] = o->res.kv[i].key;
	const char *near = vocab_closest_metric(m, keys, o->res.n);
	progress_clear(pg);
	/* the recipe's text and the engine's keys: nothing raw to a terminal */
	char *tm = text_term(m, 200), *tn = near ? text_term(near, 200) : NULL;
	fprintf(stderr, "matrix: warning: point %s is ok but its result has no '%s', the recipe's report.metric%s%s%s: "
			"the report will have no metric to show; stop the run (Ctrl-C) and fix report.metric, or "
			"report with 'matrix report DIR --metric NAME' afterwards\n",
		s->pt.id, tm, tn ? " (did you mean '" : "", tn ? tn : "", tn ? "'?)" : "");
	free(tm);
	free(tn);
	free(keys);
}

/* Count a finished point and print its line (progress_point). */
static void point_report(const struct recipe *r, const struct slot *s, const struct outcome *o,
			 struct progress *pg, uint64_t *nfailed)
{
	if (!status_is_success(o->status))
		(*nfailed)++;
	const char **levels = point_levels(r, &s->pt);
	char rep[16];
	snprintf(rep, sizeof(rep), "%u", s->pt.repeat);
	struct progress_point pp = {
		.status = o->status, .wall_s = s->exit.wall_s, .id = s->pt.id, .levels = levels, .repeat = rep,
		.throughput = result_get(&o->res, "throughput"), .unit = result_get(&o->res, "unit"),
		.metric_value = r->report.metric ? result_get(&o->res, r->report.metric) : NULL,
		.reason = o->reason,
	};
	progress_point(pg, r, &pp);
	free(levels);
	metric_missing(r, s, o, pg);
}

/* The program a point measures, for its engine_path: its argv, or the
 * command after `matrix time ... --` when matrix times it. */
static char *const *point_program(const struct recipe *r, const struct point_cmd *cmd)
{
	if (r->measure.wall_time && cmd->argv[0] && cmd->argv[1] && strcmp(cmd->argv[1], "time") == 0)
		for (char *const *a = cmd->argv; *a; a++)
			if (strcmp(*a, "--") == 0 && a[1])
				return a + 1;
	return cmd->argv;
}

/* The node a point ran on: Slurm's name for it in a task, else the host's. */
static void set_node(struct result *res)
{
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	const char *node = getenv("SLURMD_NODENAME");
	result_set(res, "node", node && *node ? node : host);
}

/* Classify the finished point of slot s, append its row, report it.
 * Returns -1 when the row could not be stored (the run must stop). */
static int finish_point(const struct recipe *r, struct store *st, struct slot *s, struct progress *pg,
			uint64_t *nfailed, const struct provenance *pv)
{
	struct outcome o;
	if (s->unstarted) {
		memset(&o, 0, sizeof(o));
		o.status = "failed";
		o.reason = text_clean(s->unstarted, strlen(s->unstarted), REASON_MAX_BYTES);
	} else {
		classify(&s->exit, s->result_path, s->log_path, r->measure.timeout_s, &o);
		noise_record(&o.res, &s->noise, noise_cores(), r->measure.rel_ci);
	}
	if (s->image_ref)
		result_set(&o.res, "image", s->image_ref);
	if (s->image_id)
		result_set(&o.res, "image_id", s->image_id);
	if (s->image_digest)
		result_set(&o.res, "image_digest", s->image_digest);
	set_node(&o.res);
	provenance_row(pv, point_program(r, &s->cmd), s->cmd.cwd, s->image_ref != NULL, &o.res);
	struct strbuf extra = {0};
	char bufs[3][32];
	char **cells = point_row(r, st, s, &o, &extra, bufs);
	int stored = store_append(st, cells);
	free(cells);
	sb_free(&extra);
	if (stored < 0) {
		error("cannot append to '%s': %s", st->path, strerror(errno));
		free(o.reason);
		result_free(&o.res);
		return -1;
	}
	point_report(r, s, &o, pg, nfailed);
	free(o.reason);
	result_free(&o.res);
	return 0;
}

static void slot_clear(struct slot *s)
{
	free(s->env ? s->env[0] : NULL); /* the CUDA_VISIBLE_DEVICES string; the rest are cmd's */
	free(s->env);
	s->env = NULL;
	argv_free(&s->cmd);
	free(s->result_path);
	free(s->log_path);
	s->result_path = s->log_path = NULL;
	s->busy = 0;
}

/* The options of `matrix run` read as a whole: a recipe or --resume, a known
 * executor, no two names for the run directory, and the resume-only options
 * only with --resume (the error says the command that would apply them).
 * Returns 0, or -1 after the error. */
static int run_opts_check(const struct run_opts *o)
{
	if (!o->recipe && !o->resume) {
		error("run: no recipe given");
		return -1;
	}
	if (o->executor && strcmp(o->executor, "local") != 0 && strcmp(o->executor, "slurm") != 0) {
		error("run: --executor must be 'local' or 'slurm', not '%s'", o->executor);
		return -1;
	}
	if (!o->recipe && o->novr) {
		error("run: '%s' overrides a recipe: name the recipe (the one in '%s' is %s/recipe.yaml)",
		      o->ovr[0], o->resume, o->resume);
		return -1;
	}
	if (o->out && o->resume) {
		error("run: --out and --resume both name the run directory: give one");
		return -1;
	}
	/* both change how a directory is resumed; without --resume they did nothing */
	if (!o->resume && (o->retry_failed || o->allow_changed)) {
		const char *opt = o->retry_failed ? "--retry-failed" : "--allow-changed";
		struct strbuf cmd = {0};
		if (o->recipe) {
			argv_shell_quote(&cmd, o->recipe);
			sb_putc(&cmd, ' ');
		}
		sb_puts(&cmd, "--resume ");
		if (o->out) /* a run already in --out DIR is resumed with --resume DIR */
			argv_shell_quote(&cmd, o->out);
		else
			sb_puts(&cmd, "DIR");
		error("run: %s applies to a resumed run: matrix run %s %s", opt, cmd.buf, opt);
		sb_free(&cmd);
		return -1;
	}
	return 0;
}


static int parse_run_opts(int argc, char **argv, struct run_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->jobs = 1;
	o->ovr = xcalloc((size_t)argc, sizeof(char *));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char **target = NULL;
		if (strcmp(a, "--out") == 0)
			target = &o->out;
		else if (strcmp(a, "--resume") == 0)
			target = &o->resume;
		else if (strcmp(a, "--only") == 0)
			target = &o->only;
		else if (strcmp(a, "--executor") == 0)
			target = &o->executor;
		if (target) {
			if (i + 1 >= argc) {
				error("run: option '%s' needs a value", a);
				return -1;
			}
			*target = argv[++i];
		} else if (strcmp(a, "--jobs") == 0 || strcmp(a, "-j") == 0) {
			if (i + 1 >= argc || parse_long(argv[i + 1], &o->jobs) < 0 || o->jobs < 1 || o->jobs > 1024) {
				error("run: --jobs needs a number of points to run at once, 1 to 1024");
				return -1;
			}
			i++;
		} else if (strcmp(a, "--retry-failed") == 0) {
			o->retry_failed = 1;
		} else if (strcmp(a, "--allow-changed") == 0) {
			o->allow_changed = 1;
		} else if (strcmp(a, "--allow-oversubscribe") == 0) {
			o->allow_oversubscribe = 1;
		} else if (strcmp(a, "--no-report") == 0) {
			o->no_report = 1;
		} else if (strcmp(a, "--detach") == 0) {
			o->detach = 1;
		} else if (strcmp(a, "--dry-run") == 0 || strcmp(a, "-n") == 0) {
			o->dry_run = 1;
		} else if (a[0] == '-' && a[1]) {
			cmd_unknown_option("run", a);
			return -1;
		} else if (strchr(a, '=')) {
			o->ovr[o->novr++] = argv[i];
		} else if (!o->recipe) {
			o->recipe = a;
		} else {
			cmd_second_recipe("run", o->recipe, argc, argv, i);
			return -1;
		}
	}
	return run_opts_check(o);
}

/* --- the study: cmd_run's steps -------------------------------------------------------------- */

/* Everything one `matrix run` holds. Each step returns 0 to go on, or -1
 * after printing why (the run's exit status is then 2 unless a step set
 * another). */
/* The slurm executor's arrays of one run. */
struct slurm_plan {
	struct slurm_array *a;    /* one per number of GPUs per task */
	size_t na;
	char *dir_abs, *script;
};

struct study {
	struct run_opts o;
	int argc;                 /* the command line, for env.txt */
	char **argv;
	char *dir, *saved_path;   /* the run directory, its recipe.yaml */
	struct recipe r;
	int have_recipe, have_store;
	struct store st;
	struct grid_filter *filter;
	struct idset done;        /* points not to run again */
	struct progress pg;
	int pg_ready;             /* pg is initialised */
	struct idset plan;        /* the ids of the plan's points (those --only keeps) */
	int lock;
	struct executor *ex;
	struct slot *slots;       /* ex->nslots */
	struct gpus gpus;         /* what CUDA points are given */
	long cf;                  /* the container factor, or -1 */
	struct images img;        /* per container level: runtime, image, id */
	uint64_t nfailed;
	int interrupted;          /* > 0: the signal; -1: stopped by an error */
	struct strbuf quality;
	int slurm;                /* the slurm executor: points run as job arrays */
	int merging_quiet;        /* merged rows are counted, not printed */
	struct slurm_plan splan;  /* the arrays submitted */
	struct provenance prov;   /* env.txt's and each row's (provenance.h) */
	struct idset inflight;    /* points whose task of an earlier job is queued or running */
	int detached;             /* --detach: submitted, not followed */
};

/* Whether a resumed directory's recipe.yaml (loaded into S->r) is still what
 * the run recorded in env.txt (recipe_hash; a directory from before it was
 * recorded is not checked). An edited one is refused (-1) unless
 * --allow-changed, which says that it resumes with the edit. */
static int saved_recipe_edited(struct study *S)
{
	char *env_path = xasprintf("%s/env.txt", S->dir);
	char *why = NULL;
	char *env = read_file_capped(env_path, 1 << 20, 1, NULL, &why);
	free(env_path);
	free(why);
	const char *line = env ? strstr(env, "\nrecipe_hash: ") : NULL;
	unsigned long long recorded;
	int rc = 0;
	if (line && sscanf(line + 14, "%16llx", &recorded) == 1 && recorded != S->r.text_hash) {
		if (!S->o.allow_changed) {
			char *qdir = shell_quoted(S->dir);
			error("'%s' was edited since the run recorded it (hash %016" PRIx64 ", recorded %016llx "
			      "in env.txt): restore it (recipe.prev.yaml holds an earlier one after --allow-changed), "
			      "or resume with the edit: matrix run --resume %s --allow-changed",
			      S->saved_path, S->r.text_hash, recorded, qdir);
			free(qdir);
			rc = -1;
		} else {
			error("'%s' was edited since the run recorded it: resuming with the edit (--allow-changed)",
			      S->saved_path);
		}
	}
	free(env);
	return rc;
}

/* "'DIR' is not a run directory: it has no recipe.yaml", or what else is
 * wrong with DIR (rundir_problem: missing, a file, a folder of runs). */
static void rundir_error(const char *dir)
{
	char *problem = rundir_problem(dir);
	if (problem)
		error("%s", problem);
	else
		error("'%s' is not a run directory: it has no recipe.yaml", dir);
	free(problem);
}

/* The recipe: the one given, or the one a resumed directory was run with; a
 * resumed directory's recipe must be the same unless --allow-changed. */
static int study_load_recipe(struct study *S)
{
	if (S->o.resume) {
		S->dir = xstrdup(S->o.resume);
		S->saved_path = xasprintf("%s/recipe.yaml", S->dir);
		struct stat sb;
		if (stat(S->saved_path, &sb) < 0) {
			if (merge_is_dir(S->dir))
				error("'%s' is a merged directory (matrix merge): it is reported, not resumed; "
				      "resume the runs it copied", S->dir);
			else
				rundir_error(S->dir);
			return -1;
		}
	}
	if (S->o.recipe && !(S->o.recipe = catalog_resolve(S->o.recipe, stderr)))
		return -1; /* a recipe by name: $MATRIX_RECIPES, ./recipes, share/matrix/recipes */
	if (recipe_load_overrides(S->o.recipe ? S->o.recipe : S->saved_path, S->o.ovr, S->o.novr, &S->r, stderr) < 0)
		return -1;
	S->have_recipe = 1;
	if (S->o.resume && !S->o.recipe && saved_recipe_edited(S) < 0)
		return -1;
	if (S->o.resume && !S->o.recipe)
		recipe_dir_from_env(&S->r, S->dir);
	if (S->o.resume && S->o.recipe) {
		size_t len;
		char *old = read_file(S->saved_path, &len);
		int same = old && len == S->r.text_len && memcmp(old, S->r.text, len) == 0;
		if (!same && !S->o.allow_changed) {
			/* its first line names the recipe and overrides it was run with */
			static const char as_run[] = "# the recipe as run: ";
			size_t n = old && !strncmp(old, as_run, sizeof(as_run) - 1) ? strcspn(old, "\n") : 0;
			char *how = n ? xasprintf(" (%.*s)", (int)(n - (sizeof(as_run) - 1)), old + sizeof(as_run) - 1)
				      : xstrdup("");
			char *qdir = shell_quoted(S->dir);
			error("'%s' differs from the recipe '%s' was run with (%s): resume with 'matrix run "
			      "--resume %s' alone, which runs that one%s, or pass --allow-changed",
			      S->o.recipe, S->dir, S->saved_path, qdir, how);
			free(qdir);
			free(how);
			free(old);
			return -1;
		}
		free(old);
	}
	return 0;
}

/* Whether the tasks of jobs (a resumed directory's slurm jobs) are still
 * queued or running: then a local resume would run their points twice.
 * Returns -1 after saying so, else 0. */
static int slurm_in_queue(const struct study *S, const struct slurm_jobs *J)
{
	struct slurm_tasks T;
	slurm_tasks_load(&T, J);
	size_t active = 0;
	for (size_t i = 0; i < T.n; i++)
		active += slurm_state_active(T.t[i].state);
	slurm_tasks_free(&T);
	if (!active)
		return 0;
	char *list = slurm_jobs_list(J, " ");
	struct strbuf q = {0};
	argv_shell_quote(&q, S->dir);
	error("'%s' has %zu slurm task%s still queued or running (jobs %s): resume it through slurm "
	      "(drop --executor local), or wait for %s ('matrix status %s') or scancel %s first",
	      S->dir, active, plural_s(active), list, active == 1 ? "it" : "them", q.buf, active == 1 ? "it" : "them");
	sb_free(&q);
	free(list);
	return -1;
}

/* The run directory as the tasks and the containers name it: absolute (allocated). */
static char *run_dir_abs(const char *dir)
{
	char cwd[4096];
	if (dir[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return xstrdup(dir);
	return xasprintf("%s/%s", cwd, dir);
}

/* The run directory with its links resolved, as the container executor
 * mounts it (realpath), also before it exists (its parent resolved):
 * allocated. */
static char *run_dir_real(const char *dir)
{
	char *real = realpath(dir, NULL);
	if (real)
		return real;
	char *abs = run_dir_abs(dir), *slash = strrchr(abs, '/');
	if (slash && slash > abs) {
		*slash = '\0';
		char *parent = realpath(abs, NULL);
		*slash = '/';
		if (parent) {
			real = xasprintf("%s%s", parent, slash);
			free(parent);
			free(abs);
			return real;
		}
	}
	return abs;
}

/* What this machine and executor can run: container runtimes, --only, and
 * --jobs within the cores. Chooses the run directory. */
/* A run walks its whole cube (ids, resume, --only) and keeps a row per
 * point: a plan of 10^18 points went silent, its memory growing. 0, or -1
 * after saying the plan is too large. */
static int plan_size_check(const struct study *S)
{
	const struct recipe *r = &S->r;
	uint64_t cube = 0, npoints = 0;
	if (grid_cube_size(r, &cube) == 0 && cube <= RUN_MAX_CUBE && !S->o.only)
		npoints = grid_count(r); /* with --only, the walk selects: not counted */
	if (cube <= RUN_MAX_CUBE && (S->o.only || npoints <= RUN_MAX_POINTS))
		return 0;
	if (cube > RUN_MAX_CUBE)
		error("run: the recipe's %zu factors make %" PRIu64 " combinations; a run walks every one "
		      "(at most %llu): use fewer levels or fewer factors",
		      r->nfactors, cube, (unsigned long long)RUN_MAX_CUBE);
	else
		error("run: the plan has %" PRIu64 " points; a run starts a process and keeps a row for each "
		      "(at most %llu): use fewer levels, excludes, a fractional design, or --only",
		      npoints, (unsigned long long)RUN_MAX_POINTS);
	return -1;
}

static int study_check(struct study *S)
{
	struct recipe *r = &S->r;
	struct slurm_jobs old = {0};
	if (S->o.resume)
		slurm_jobs_read(S->dir, &old);
	/* a directory submitted to Slurm resumes there unless told otherwise */
	S->slurm = S->o.executor ? strcmp(S->o.executor, "slurm") == 0 : r->slurm.given || old.n;
	int busy = !S->slurm && old.n ? slurm_in_queue(S, &old) : 0;
	slurm_jobs_free(&old);
	if (busy < 0)
		return -1;
	if (S->o.detach && !S->slurm) {
		error("run: --detach submits to Slurm: use it with --executor slurm (or a recipe's executor: slurm)");
		return -1;
	}
	if ((S->cf = recipe_factor_index(r, "container")) >= 0 && S->slurm) {
		/* its tasks would run the points on the nodes, not in the images */
		recipe_error_at(r, r->factors[S->cf].mark, stderr,
				"the slurm executor cannot run container points yet: run this recipe "
				"with the local executor, or without the 'container' factor");
		return -1;
	}
	if (S->cf >= 0 && (images_resolve(&S->img, r, S->cf, S->o.dry_run) < 0 ||
			   images_cache(&S->img, r, S->o.dry_run) < 0))
		return -1;
	if (plan_size_check(S) < 0)
		return -1;
	if (S->o.only && (!(S->filter = grid_filter_parse(r, S->o.only, stderr)) ||
			  grid_filter_check(r, S->o.only, S->filter, stderr) < 0))
		return -1;
	if (S->slurm && !S->o.dry_run && slurm_check(&r->slurm, r, stderr) < 0)
		return -1;
	/* a python without torch would fail every PyTorch point alike, one by
	 * one, after the run directory was made */
	if (argv_check_python(r, S->filter, stderr) < 0)
		return -1;
	long jobs = S->o.jobs, cores = noise_cores(), threads = jobs > 1 ? noise_max_threads(r, cores) : 0;
	if (!S->slurm && jobs > 1 && !S->o.allow_oversubscribe && jobs * threads > cores) {
		error("run: --jobs %ld x %ld threads per point = %ld threads > %ld cores: the points would "
		      "slow each other down; lower --jobs, or pass --allow-oversubscribe",
		      jobs, threads, jobs * threads, cores);
		return -1;
	}
	if (!S->dir)
		S->dir = S->o.out ? xstrdup(S->o.out) : default_dir(r);
	if (S->slurm) {
		/* sbatch reads --output as a pattern: a backslash anywhere turns
		 * its %A_%a off, and every task would write one file */
		char *abs = run_dir_abs(S->dir);
		int bad = strchr(abs, '\\') != NULL;
		if (bad)
			error("run: the slurm executor cannot name its task outputs under '%s': sbatch reads a "
			      "backslash in --output as 'no %%A_%%a' (every task would write one file); choose "
			      "another --out", abs);
		free(abs);
		if (bad)
			return -1;
	}
	if (S->cf >= 0) {
		/* the run directory is mounted as SRC:DST: a ':' or ',' in it
		 * made every point fail at its start ("invalid volume
		 * specification"), after the run directory was made */
		char *abs = run_dir_real(S->dir), *why = exec_container_dir_why(abs);
		if (why)
			error("%s%s%s", S->o.dry_run ? "dry run: " : "run: ", why,
			      S->o.dry_run ? ": the run would stop with this error" : "");
		int bad = why && !S->o.dry_run;
		free(why);
		free(abs);
		if (bad)
			return -1;
	}
	return 0;
}

/* The ids of a resumed directory's results.csv (with --retry-failed, the
 * successful ones only), after checking its columns against the recipe. */
static int read_done(struct study *S, const char *results_path)
{
	struct table t;
	char *why;
	if (table_read(results_path, &t, NULL, &why) < 0) {
		error("%s", why ? why : strerror(errno));
		free(why);
		return -1;
	}
	/* checked before anything is written (store_open checks again, and
	 * rewrites the rows of an older matrix in this version's columns) */
	result_table_upgrade(&t);
	size_t ncols;
	char **header = store_header(&S->r, &ncols);
	int same = t.ncols == ncols;
	for (size_t i = 0; same && i < ncols; i++)
		same = strcmp(t.header[i], header[i]) == 0;
	for (size_t i = 0; i < ncols; i++)
		free(header[i]);
	free(header);
	if (!same) {
		error("'%s' has other columns than this recipe's results", results_path);
		table_free(&t);
		return -1;
	}
	long idc = table_column(&t, "id"), stc = table_column(&t, "status");
	for (size_t i = 0; idc >= 0 && stc >= 0 && i < t.nrows; i++) {
		if (!status_known(t.rows[i].cell[stc])) { /* a hand-edited row: not taken for done */
			error("'%s' row %zu has an unknown status '%s' (expected ok, unsupported, failed, "
			      "oom, timeout or crashed)", results_path, i + 2, t.rows[i].cell[stc]);
			table_free(&t);
			return -1;
		}
		if (!S->o.retry_failed || status_is_success(t.rows[i].cell[stc]))
			idset_add(&S->done, t.rows[i].cell[idc]);
	}
	table_free(&t);
	return 0;
}

/* Resume: what is already done, and how many points there are to run. A new
 * run needs a directory that is missing or empty. */
static int study_resume(struct study *S)
{
	char *results_path = xasprintf("%s/results.csv", S->dir);
	struct stat sbuf;
	int have_results = stat(results_path, &sbuf) == 0, rc = 0;
	if (have_results && !S->o.resume) {
		char *q = shell_quoted(S->dir);
		error("'%s' already holds a run: resume it with 'matrix run --resume %s', or choose another --out",
		      S->dir, q);
		free(q);
		rc = -1;
	} else if (!have_results && !S->o.resume && !dir_is_empty(S->dir)) {
		struct stat ds;
		if (stat(S->dir, &ds) == 0 && !S_ISDIR(ds.st_mode))
			error("'%s' is a file, not a directory: choose another --out", S->dir);
		else
			error("'%s' is not empty and holds no matrix run: choose another --out", S->dir);
		rc = -1;
	} else if (have_results) {
		rc = read_done(S, results_path);
	}
	free(results_path);
	if (rc < 0)
		return -1;

	progress_init(&S->pg, S->r.nfactors);
	S->pg_ready = 1;
	struct grid g;
	grid_init(&g, &S->r);
	for (const struct point *p; (p = grid_next(&g));)
		if (grid_filter_match(S->filter, p)) {
			progress_count(&S->pg, p->level, p->repeat);
			idset_add(&S->plan, p->id);
			if (idset_has(&S->done, p->id))
				S->pg.done++;
		}
	grid_free(&g);
	S->pg.todo_at_start = S->pg.total - S->pg.done;
	return 0;
}

/* --- the slurm executor: the study as job arrays (batch mode) -------------------------- */

/* store_merge_rows' callbacks: a point already in results.csv; a row just
 * merged (counted, and printed as a local run prints a finished point). */
static int row_seen(const char *id, void *ctx)
{
	return idset_has(&((struct study *)ctx)->done, id);
}

static void row_merged(const struct row *row, void *ctx)
{
	struct study *S = ctx;
	const struct recipe *r = &S->r;
	size_t stc = 3 + r->nfactors;
	const char *st = row->cell[stc], *reason = row->cell[stc + 1];
	idset_add(&S->done, row->cell[0]);
	if (S->merging_quiet) { /* counted as done before this run started */
		S->pg.done++;
		if (S->pg.todo_at_start)
			S->pg.todo_at_start--;
		return;
	}
	if (!status_is_success(st))
		S->nfailed++;
	const char **levels = xcalloc(r->nfactors ? r->nfactors : 1, sizeof(char *));
	for (size_t i = 0; i < r->nfactors; i++)
		levels[i] = row->cell[3 + i];
	double wall = 0;
	long wallc = store_column(&S->st, "wall_s"), tpc = store_column(&S->st, "throughput"),
	     unitc = store_column(&S->st, "unit"),
	     mc = r->report.metric ? store_column(&S->st, r->report.metric) : -1, xc = store_column(&S->st, "extra");
	/* the recipe's metric: its own column, else a key of extra (wall_time) */
	char *mv = mc < 0 && xc >= 0 && r->report.metric ? result_extra_get(row->cell[xc], r->report.metric) : NULL;
	if (wallc >= 0)
		parse_double(row->cell[wallc], &wall);
	struct progress_point pp = {
		.status = st, .wall_s = wall, .id = row->cell[0], .levels = levels, .repeat = row->cell[2],
		.throughput = tpc >= 0 ? row->cell[tpc] : NULL, .unit = unitc >= 0 ? row->cell[unitc] : NULL,
		.metric_value = mc >= 0 ? row->cell[mc] : mv, .reason = reason,
	};
	progress_point(&S->pg, r, &pp);
	free(mv);
	free(levels);
}

/* What one point asks of a node: GPUs per task (0: none). A point uses the
 * GPU when its device is cuda or its `gpus` level is above 0; it asks for
 * its `gpus` level, else executor.slurm.gpus, else 1. */
static long slurm_point_gpus(const struct recipe *r, const struct point *p)
{
	long df = recipe_factor_index(r, "device"), gf = recipe_factor_index(r, "gpus"), n = 0;
	const char *dev = df >= 0 ? r->factors[df].levels[p->level[df]] : r->device ? r->device : "auto";
	if (gf >= 0 && parse_long(r->factors[gf].levels[p->level[gf]], &n) == 0 && n > 0)
		return n;
	if (strcmp(dev, "cuda") != 0)
		return 0;
	return r->slurm.gpus ? r->slurm.gpus : 1;
}

static void slurm_plan_free(struct slurm_plan *P)
{
	for (size_t i = 0; i < P->na; i++)
		slurm_array_free(&P->a[i]);
	free(P->a);
	free(P->dir_abs);
	free(P->script);
}

/* The arrays of the points still to run (plan indices, grouped by GPUs per
 * task, and by blocks of the cluster's largest task id: plan index 2500
 * under MaxArraySize=1001 is task 500 of an array of offset 2000); with
 * print, their sbatch commands on stdout (--dry-run). */
static void slurm_plan(struct study *S, int print)
{
	struct slurm_plan P = {0};
	uint64_t max = slurm_max_task();
	P.dir_abs = run_dir_abs(S->dir);
	P.script = xasprintf("%s/slurm/task.sh", P.dir_abs);
	struct grid g;
	grid_init(&g, &S->r);
	for (const struct point *p; (p = grid_next(&g));) {
		if (!grid_filter_match(S->filter, p) || idset_has(&S->done, p->id) || idset_has(&S->inflight, p->id))
			continue;
		long gpus = slurm_point_gpus(&S->r, p);
		uint64_t offset = max ? (p->index - 1) / max * max : 0;
		size_t k = 0;
		while (k < P.na && (P.a[k].gpus != gpus || P.a[k].offset != offset))
			k++;
		if (k == P.na) {
			P.a = xrealloc(P.a, ++P.na * sizeof(*P.a));
			memset(&P.a[k], 0, sizeof(P.a[k]));
			P.a[k].gpus = gpus;
			P.a[k].offset = offset;
		}
		slurm_array_add(&P.a[k], p->index);
	}
	grid_free(&g);
	for (size_t k = 0; k < P.na; k++)
		slurm_array_close(&P.a[k]);
	if (print) {
		for (size_t k = 0; k < P.na; k++) {
			char **argv = slurm_sbatch_argv(&S->r.slurm, &S->r, P.dir_abs, P.script, &P.a[k]);
			struct strbuf line = {0};
			for (size_t i = 0; argv[i]; i++) {
				if (i)
					sb_putc(&line, ' ');
				argv_shell_quote(&line, argv[i]);
			}
			printf("%s\n", line.buf);
			sb_free(&line);
			slurm_argv_free(argv);
		}
		slurm_plan_free(&P);
		return;
	}
	S->splan = P;
}

/* Before the run directory is written: whether Slurm would take the arrays
 * of the points still to run (sbatch --test-only). Returns 0 or -1. */
static int slurm_precheck(struct study *S)
{
	slurm_plan(S, 0);
	int rc = 0;
	for (size_t k = 0; rc == 0 && k < S->splan.na; k++)
		rc = slurm_test(&S->r.slurm, &S->r, S->splan.dir_abs, &S->splan.a[k], stderr);
	slurm_plan_free(&S->splan);
	memset(&S->splan, 0, sizeof(S->splan));
	return rc;
}

static char *self_exe(void)
{
	char buf[4096];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		return xstrdup("matrix");
	buf[n] = '\0';
	return xstrdup(buf);
}

/* The script every task runs: this matrix, `run-point DIR INDEX`. */
static int slurm_write_script(struct study *S)
{
	char *sdir = xasprintf("%s/slurm", S->dir);
	int rc = mkdir_p(sdir, 0755);
	free(sdir);
	struct strbuf sb = {0};
	char *exe = self_exe();
	sb_puts(&sb, "#!/bin/sh\n# one task of `matrix run --executor slurm`: one point of this run directory\nexec ");
	argv_shell_quote(&sb, exe);
	sb_puts(&sb, " run-point ");
	argv_shell_quote(&sb, S->splan.dir_abs);
	/* the plan index: the task id plus the array's offset (its argument) */
	sb_puts(&sb, " \"$((SLURM_ARRAY_TASK_ID + ${1:-0}))\"\n");
	free(exe);
	if (rc == 0)
		rc = write_file_atomic(S->splan.script, sb.buf, sb.len);
	if (rc == 0)
		rc = chmod(S->splan.script, 0755);
	if (rc < 0)
		error("cannot write '%s': %s", S->splan.script, strerror(errno));
	sb_free(&sb);
	return rc;
}

/* Why a task that failed (FAILED) left no row: the last line of its
 * output, or, when it left none, what a task that cannot even open its
 * output means (allocated). */
static char *slurm_failed_reason(const struct study *S, const struct slurm_task *t)
{
	char *out = xasprintf("%s/slurm/%s_%" PRIu64 ".out", S->dir, t->job, t->task);
	char *last = slurm_output_last_line(out), *reason;
	if (!last)
		reason = xasprintf("slurm: %s: the task ended without writing a row or its output '%s': can the "
				   "node see the run directory? it must be on a filesystem that every node mounts, "
				   "matrix too", t->state, out);
	else if (*last)
		reason = xasprintf("slurm: %s: the task ended without writing a row (%s: %s)", t->state, out, last);
	else
		reason = xasprintf("slurm: %s: the task ended without writing a row (%s is empty)", t->state, out);
	free(last);
	free(out);
	return reason;
}

/* A row for a task that ended without writing one in a state that is the
 * point's doing (slurm_state_rows): what Slurm says of it. */
static int slurm_lost_row(struct study *S, const struct point *p, const struct slurm_task *t)
{
	const char *state = t->state, *st = "crashed";
	char *reason;
	if (strcmp(state, "TIMEOUT") == 0) {
		st = "timeout";
		reason = xstrdup("slurm: TIMEOUT: killed at the task's time limit");
	} else if (strcmp(state, "OUT_OF_MEMORY") == 0) {
		st = "oom";
		reason = xstrdup("slurm: OUT_OF_MEMORY: killed at the task's memory limit");
	} else {
		reason = slurm_failed_reason(S, t);
	}
	char *result = xasprintf("%s/logs/%s.result", S->dir, p->id);
	struct point_cmd cmd;
	int rc = argv_build(&S->r, p, S->dir, result, &cmd, stderr);
	free(result);
	if (rc < 0) {
		free(reason);
		return -1;
	}
	char **cells = xcalloc(S->st.ncols, sizeof(char *));
	char idx[32], rep[16];
	snprintf(idx, sizeof(idx), "%" PRIu64, p->index);
	snprintf(rep, sizeof(rep), "%u", p->repeat);
	size_t k = 0;
	cells[k++] = (char *)p->id;
	cells[k++] = idx;
	cells[k++] = rep;
	for (size_t i = 0; i < S->r.nfactors; i++)
		cells[k++] = S->r.factors[i].levels[p->level[i]];
	cells[k++] = (char *)st;
	cells[k++] = reason;
	struct strbuf extra = {0};
	char task[32];
	snprintf(task, sizeof(task), "%" PRIu64, t->task);
	long node = store_column(&S->st, "node");
	if (t->node && node >= 0)
		cells[node] = t->node;
	result_extra_add(&extra, "slurm_job", t->job);
	result_extra_add(&extra, "slurm_task", task);
	result_extra_add(&extra, "slurm_state", state);
	cells[S->st.ncols - 2] = extra.buf;
	cells[S->st.ncols - 1] = cmd.line;
	rc = store_append(&S->st, cells);
	if (rc < 0) {
		error("cannot append to '%s': %s", S->st.path, strerror(errno));
	} else {
		struct row row = {S->st.ncols, cells};
		cells[S->st.ncols - 3] = "";
		for (size_t i = 0; i < S->st.ncols; i++)
			if (!cells[i])
				cells[i] = "";
		row_merged(&row, S);
	}
	free(cells);
	sb_free(&extra);
	free(reason);
	argv_free(&cmd);
	return rc;
}

/* Whether a task that ended in state without a row gets a row saying so
 * (its time limit, its memory limit, a failure: the point's own doing), or
 * leaves its point to run again (cancelled, preempted, lost with its node:
 * Slurm's doing, not the point's). */
static int slurm_state_rows(const char *state)
{
	return strcmp(state, "TIMEOUT") == 0 || strcmp(state, "OUT_OF_MEMORY") == 0 || strcmp(state, "FAILED") == 0;
}

/* Resuming: what became of the tasks of the jobs the directory submitted
 * before (old, oldest first) whose points have no row. A task still queued
 * or running is followed, not submitted again (its job goes to jobs); one
 * that ended at its time limit, out of memory or failing gets its row now
 * (unless --retry-failed); one cancelled, preempted, lost with its node or
 * forgotten by Slurm is submitted again. Returns -1 when a row could not be
 * stored. */
static int slurm_collect(struct study *S, const struct slurm_jobs *old, struct slurm_jobs *jobs)
{
	struct slurm_tasks T;
	slurm_tasks_load(&T, old);
	size_t inflight = 0, collected = 0;
	int rc = 0;
	struct grid g;
	grid_init(&g, &S->r);
	for (const struct point *p; rc == 0 && (p = grid_next(&g));) {
		if (!grid_filter_match(S->filter, p) || idset_has(&S->done, p->id))
			continue;
		const struct slurm_task *t = slurm_tasks_find(&T, p->index);
		if (!t)
			continue;
		if (slurm_state_active(t->state)) {
			idset_add(&S->inflight, p->id);
			for (size_t j = 0; j < old->n; j++)
				if (strcmp(old->id[j], t->job) == 0)
					slurm_jobs_push(jobs, t->job, old->offset[j]);
			inflight++;
		} else if (!S->o.retry_failed && slurm_state_rows(t->state)) {
			rc = slurm_lost_row(S, p, t);
			collected++;
		}
	}
	grid_free(&g);
	slurm_tasks_free(&T);
	if (inflight) {
		char *list = slurm_jobs_list(jobs, ", ");
		printf("matrix: %zu point%s of '%s' %s still queued or running in slurm job %s: followed, not "
		       "submitted again\n", inflight, plural_s(inflight), S->dir, inflight == 1 ? "is" : "are", list);
		free(list);
	}
	if (collected)
		printf("matrix: %zu tasks of earlier slurm jobs ended without a row: their rows say what Slurm "
		       "saw\n", collected);
	fflush(stdout);
	return rc;
}

/* Submit the arrays of S->splan, adding each job to jobs and to
 * DIR/slurm/jobs. When sbatch refuses one, the arrays submitted here are
 * cancelled and -1 returned. */
static int slurm_submit_all(struct study *S, struct slurm_jobs *jobs)
{
	struct slurm_plan *P = &S->splan;
	size_t first = jobs->n; /* earlier jobs: not ours to cancel */
	if (P->na && slurm_write_script(S) < 0)
		return -1;
	for (size_t k = 0; k < P->na; k++) {
		char **argv = slurm_sbatch_argv(&S->r.slurm, &S->r, P->dir_abs, P->script, &P->a[k]);
		int rc = slurm_submit(argv, &P->a[k].job, stderr);
		slurm_argv_free(argv);
		if (rc < 0) {
			slurm_cancel(jobs, first);
			return -1;
		}
		slurm_jobs_push(jobs, P->a[k].job, P->a[k].offset);
		if (slurm_jobs_add(S->dir, P->a[k].job, P->a[k].offset) < 0)
			error("cannot append to '%s/slurm/jobs': %s", S->dir, strerror(errno));
		char offset[64] = "";
		if (P->a[k].offset) /* past MaxArraySize: the task ids are not the plan indices */
			snprintf(offset, sizeof(offset), ", task id + %" PRIu64 " = plan index", P->a[k].offset);
		printf("matrix: submitted %zu point%s of '%s' in '%s' as slurm job %s (array %s%s, %ld GPUs per task)\n",
		       P->a[k].ntasks, plural_s(P->a[k].ntasks), S->r.name, S->dir, P->a[k].job, P->a[k].spec.buf, offset, P->a[k].gpus);
		fflush(stdout);
	}
	return 0;
}

/* Follow jobs with squeue (polling with back-off: 0.5 s up to 5 s) until
 * none has a task in the queue, merging rows as they appear. On a signal,
 * scancel them and wait for them to leave the queue. Returns 0 when they
 * all left it, -1 when stopped (S->interrupted set). */
static int slurm_follow(struct study *S, const struct slurm_jobs *jobs)
{
	double delay = 0.5;
	int squeue_failures = 0;
	for (;;) {
		long merged = store_merge_rows(&S->st, S->dir, row_seen, row_merged, S, stderr);
		if (merged < 0) {
			error("cannot append to '%s': %s", S->st.path, strerror(errno));
			slurm_cancel(jobs, 0);
			S->interrupted = -1;
			return -1;
		}
		if (slurm_interrupted()) {
			S->interrupted = slurm_interrupted();
			slurm_cancel(jobs, 0);
			long running;
			double until = now_monotonic() + 30;
			while (slurm_active(jobs, &running, NULL) > 0 && now_monotonic() < until) {
				struct timespec ts = {0, 200000000};
				nanosleep(&ts, NULL);
			}
			store_merge_rows(&S->st, S->dir, row_seen, row_merged, S, stderr);
			return -1;
		}
		char *waiting;
		long running, active = slurm_active(jobs, &running, &waiting);
		if (active < 0 && ++squeue_failures < 10) {
			slurm_sleep(5);
			continue;
		}
		if (active < 0) {
			error("squeue keeps failing: stopped following slurm jobs (they go on; resume later)");
			S->interrupted = -1;
			return -1;
		}
		squeue_failures = 0;
		if (active == 0)
			return 0;
		char label[160];
		/* why the pending tasks wait: a partition down, a QOS limit */
		snprintf(label, sizeof(label), "slurm: %ld running, %ld pending%s%s%s", running, active - running,
			 waiting ? " (" : "", waiting ? waiting : "", waiting ? ")" : "");
		free(waiting);
		progress_line(&S->pg, label);
		delay = merged > 0 ? 0.5 : delay * 1.5 > 5 ? 5 : delay * 1.5;
		slurm_sleep(delay);
	}
}

/* Every task of jobs has left the queue: a row missing now may still be on
 * its way through a shared filesystem's caches; wait a little, then give
 * each point still without a row Slurm's verdict on its task when it was
 * the point's doing (slurm_state_rows); the others stay without a row, as
 * a resume leaves them (it submits them again), and the run ends stopped
 * saying so. */
static void slurm_verdicts(struct study *S, const struct slurm_jobs *jobs)
{
	for (int tries = 0; tries < 10; tries++) {
		if (store_merge_rows(&S->st, S->dir, row_seen, row_merged, S, stderr) < 0)
			break;
		if (S->pg.done >= S->pg.total)
			break;
		slurm_sleep(0.5);
	}
	struct slurm_tasks T;
	slurm_tasks_load(&T, jobs);
	struct grid g;
	grid_init(&g, &S->r);
	struct strbuf states = {0}; /* "CANCELLED 2, NODE_FAIL 1" */
	size_t left = 0;
	for (const struct point *p; (p = grid_next(&g));) {
		if (!grid_filter_match(S->filter, p) || idset_has(&S->done, p->id))
			continue;
		const struct slurm_task *t = slurm_tasks_find(&T, p->index);
		if (t && slurm_state_rows(t->state)) {
			if (slurm_lost_row(S, p, t) < 0) {
				S->interrupted = -1;
				break;
			}
			continue;
		}
		const char *st = t ? t->state : "unknown to Slurm";
		if (!strstr(states.buf ? states.buf : "", st))
			sb_printf(&states, "%s%s", states.len ? ", " : "", st);
		left++;
	}
	grid_free(&g);
	slurm_tasks_free(&T);
	if (left && !S->interrupted) {
		progress_clear(&S->pg);
		error("%zu slurm task%s ended %s without a row: not %s point%s failure, so no row says %s "
		      "failed; a resume submits %s again (their output: %s/slurm/)", left, plural_s(left), states.buf,
		      left == 1 ? "its" : "their", left == 1 ? "'s" : "s'", left == 1 ? "it" : "they",
		      left == 1 ? "it" : "them", S->dir);
		S->interrupted = -1;
	}
	sb_free(&states);
}

/* Batch mode: collect what earlier jobs of the directory left (resume),
 * submit the points still to run as arrays, follow them and the earlier
 * jobs still queued, merge each finished point's row as it appears, give
 * the tasks that left no row Slurm's verdict; on SIGINT/SIGTERM/SIGHUP
 * scancel the jobs (the directory stays resumable). With --detach, return
 * once submitted. */
static void study_slurm(struct study *S)
{
	slurm_signals_install();
	S->pg.start = now_monotonic();
	struct slurm_jobs jobs = {0}, old;
	slurm_jobs_read(S->dir, &old);
	int rc = old.n ? slurm_collect(S, &old, &jobs) : 0;
	slurm_jobs_free(&old);
	if (rc == 0) {
		slurm_plan(S, 0);
		rc = slurm_submit_all(S, &jobs);
	}
	if (rc < 0) {
		S->interrupted = -1;
	} else if (S->o.detach && jobs.n) {
		char *list = slurm_jobs_list(&jobs, " "), *q = shell_quoted(S->dir);
		uint64_t queued = S->pg.total - S->pg.done;
		printf("matrix: detached: %" PRIu64 " of %" PRIu64 " point%s %s queued in slurm job %s; follow "
		       "%s with 'matrix status %s', collect %s row%s and the report with 'matrix run "
		       "--resume %s' (cancel: scancel %s)\n",
		       queued, S->pg.total, plural_s(S->pg.total), queued == 1 ? "is" : "are", list,
		       queued == 1 ? "it" : "them", q, queued == 1 ? "its" : "their", plural_s(queued), q, list);
		free(q);
		free(list);
		S->detached = 1;
	} else if (jobs.n && slurm_follow(S, &jobs) == 0) {
		slurm_verdicts(S, &jobs);
	}
	progress_clear(&S->pg);
	slurm_jobs_free(&jobs);
}

static void slot_give_gpus(struct study *S, struct slot *s, size_t slot, int n);

/* --dry-run: print the command of every point that would run, as the run
 * starts it: a GPU point with the CUDA_VISIBLE_DEVICES it gets when it runs
 * alone (its first GPUs), a container point with the whole container command
 * (the runtime and --user probed as the run probes them). What only the run
 * can know: the runner's pid and slot that end the container's name, and
 * the nonce in the result file's name of each attempt. */
/* The dry run's line for point p in a container: the full container command,
 * as the executor runs it. */
static void dry_run_container_line(struct study *S, const struct point *p, const struct slot *tmp, int uses_gpu,
				   struct strbuf *sb)
{
	char *abs = run_dir_real(S->dir); /* as exec_container_new names it */
	if (!S->img.im[0].run_label)
		images_claim_run(&S->img, abs, 1, stdout);
	struct exec_point ep = {.id = p->id, .argv = tmp->cmd.argv, .env = tmp->env ? tmp->env : tmp->cmd.env,
				.cwd = tmp->cmd.cwd, .image = &S->img.im[p->level[S->cf]],
				.res = {.gpu = uses_gpu}};
	char *name = xasprintf("matrix-%s", p->id);
	char **argv = exec_container_argv(&ep, name, abs);
	for (char **a = argv; *a; a++) {
		if (a != argv)
			sb_putc(sb, ' ');
		argv_shell_quote(sb, *a);
		free(*a);
	}
	free(argv);
	free(name);
	free(abs);
}

/* The dry run's line for a point run here: its command line, with the
 * slot's CUDA_VISIBLE_DEVICES=... in front (after a command engine's
 * "cd DIR && "). */
static void dry_run_line(const struct slot *tmp, struct strbuf *sb)
{
	size_t skip = 0; /* "cd DIR && " of a command engine: the variable goes after it */
	if (tmp->cmd.cwd) {
		struct strbuf cd = {0};
		sb_puts(&cd, "cd ");
		argv_shell_quote(&cd, tmp->cmd.cwd);
		sb_puts(&cd, " && ");
		if (strncmp(tmp->cmd.line, cd.buf, cd.len) == 0)
			skip = cd.len;
		sb_free(&cd);
	}
	sb_add(sb, tmp->cmd.line, skip);
	if (tmp->env) { /* CUDA_VISIBLE_DEVICES=... */
		const char *eq = strchr(tmp->env[0], '=');
		sb_printf(sb, "%.*s", (int)(eq - tmp->env[0] + 1), tmp->env[0]);
		argv_shell_quote(sb, eq + 1);
		sb_putc(sb, ' ');
	}
	sb_puts(sb, tmp->cmd.line + skip);
}

static int study_dry_run(struct study *S)
{
	struct grid g;
	int rc = 0;
	grid_init(&g, &S->r);
	gpus_init(&S->gpus);
	for (const struct point *p; (p = grid_next(&g));) {
		if (!grid_filter_match(S->filter, p) || idset_has(&S->done, p->id))
			continue;
		char *result = xasprintf("%s/logs/%s.result", S->dir, p->id);
		struct slot tmp = {0};
		int built = argv_build(&S->r, p, S->dir, result, &tmp.cmd, stderr);
		free(result);
		if (built < 0) {
			rc = -1;
			break;
		}
		int uses_gpu = point_uses_gpu(&S->r, p), ngpu = point_gpus(&S->r, p, uses_gpu);
		if (ngpu && !S->slurm) /* a slurm task's GPUs are the scheduler's */
			slot_give_gpus(S, &tmp, 0, ngpu);
		struct strbuf sb = {0};
		if (S->cf >= 0)
			dry_run_container_line(S, p, &tmp, uses_gpu, &sb);
		else
			dry_run_line(&tmp, &sb);
		printf("%s\n", sb.buf);
		sb_free(&sb);
		gpus_release(&S->gpus, 0);
		if (tmp.env)
			free(tmp.env[0]);
		free(tmp.env);
		argv_free(&tmp.cmd);
	}
	grid_free(&g);
	gpus_free_all(&S->gpus);
	if (rc < 0)
		return -1;
	if (S->slurm)
		slurm_plan(S, 1);
	struct stat st;
	if (stat(S->dir, &st) == 0) /* --resume DIR, or --out DIR that exists */
		fprintf(stderr, "matrix: dry run: %" PRIu64 " of %" PRIu64 " point%s would run in '%s'\n",
			S->pg.todo_at_start, S->pg.total, plural_s(S->pg.total), S->dir);
	else /* not created: a dry run writes nothing */
		fprintf(stderr,
			"matrix: dry run: %" PRIu64 " of %" PRIu64 " point%s would run in a new directory '%s' "
			"(not created by a dry run%s)\n",
			S->pg.todo_at_start, S->pg.total, plural_s(S->pg.total), S->dir,
			S->o.out ? "" : "; the run names it by the time it starts, --out DIR fixes the name");
	return 0;
}

/* The image of every container level with points to run, built or pulled
 * when missing (logs/build-NAME.log); one that cannot be had fails its
 * points (fill_slots), the others run. Containers an earlier runner of the
 * directory left are removed first. */
static int study_images(struct study *S)
{
	char *abs = realpath(S->dir, NULL);
	if (!abs) {
		error("cannot resolve '%s': %s", S->dir, strerror(errno));
		return -1;
	}
	images_claim_run(&S->img, abs, 0, stdout);
	free(abs);
	unsigned char *used = xcalloc(S->img.n, 1);
	struct grid g;
	grid_init(&g, &S->r);
	for (const struct point *p; (p = grid_next(&g));)
		if (grid_filter_match(S->filter, p) && !idset_has(&S->done, p->id))
			used[p->level[S->cf]] = 1;
	grid_free(&g);
	char *logs = xasprintf("%s/logs", S->dir);
	images_ensure(&S->img, used, logs, 0, stdout);
	free(logs);
	free(used);
	return 0;
}

/* The run directory: logs/, the lock, the executor, recipe.yaml (the one
 * given; with --allow-changed the earlier one kept as recipe.prev.yaml),
 * env.txt, plan.csv, subsets.csv, results.csv open for appending. */
static int study_prepare(struct study *S)
{
	/* before any child of an executor: git runs and is waited for here */
	provenance_gather(&S->prov, S->o.recipe, S->dir);
	char *logs = xasprintf("%s/logs", S->dir);
	int made = mkdir_p(logs, 0755);
	if (made < 0)
		error("cannot create '%s': %s", logs, strerror(errno));
	free(logs);
	if (made < 0 || (S->lock = lock_dir(S->dir)) < 0)
		return -1;
	if (!S->slurm && S->cf >= 0 && study_images(S) < 0)
		return -1;
	if (!S->slurm)
		S->ex = S->cf >= 0 ? exec_container_new((size_t)S->o.jobs, S->r.measure.grace_s, S->dir, stderr)
				   : exec_local_new((size_t)S->o.jobs, S->r.measure.grace_s, stderr);
	if (!S->slurm && !S->ex)
		return -1;
	if (!S->saved_path)
		S->saved_path = xasprintf("%s/recipe.yaml", S->dir);
	if (!S->o.resume || S->o.recipe) {
		if (S->o.resume) { /* --allow-changed: keep what it was run with before */
			char *prev = xasprintf("%s/recipe.prev.yaml", S->dir);
			rename(S->saved_path, prev);
			free(prev);
		}
		if (write_file_atomic(S->saved_path, S->r.text, S->r.text_len) < 0) {
			error("cannot write '%s': %s", S->saved_path, strerror(errno));
			return -1;
		}
	}
	if (write_env(S->dir, S->argc, S->argv, S->ex, S->cf >= 0 ? &S->img : NULL, S->r.text_hash, &S->prov) < 0 ||
	    write_plan(S->dir, &S->r, S->filter) < 0 || store_subset_add(S->dir, S->o.only, stderr) < 0)
		return -1;
	if (store_open(&S->st, S->dir, &S->r, stderr) < 0)
		return -1;
	S->have_store = 1;
	if (S->o.retry_failed) {
		long stc = 3 + (long)S->r.nfactors; /* the status column */
		if (store_filter(&S->st, keep_success, &stc) < 0) {
			error("cannot rewrite '%s' without its failed rows: %s", S->st.path, strerror(errno));
			return -1;
		}
	}
	/* rows that slurm tasks wrote after their front end stopped */
	S->merging_quiet = 1;
	long merged = store_merge_rows(&S->st, S->dir, row_seen, row_merged, S, stderr);
	S->merging_quiet = 0;
	if (merged < 0) {
		error("cannot append to '%s': %s", S->st.path, strerror(errno));
		return -1;
	}
	if (merged > 0)
		error("merged %ld row%s that slurm tasks left in '%s/rows'", merged, plural_s((uint64_t)merged), S->dir);
	return 0;
}

/* The next point of g to run (not filtered out, not done), or NULL. */
static const struct point *next_point(struct study *S, struct grid *g)
{
	const struct point *p;
	while ((p = grid_next(g)) && (!grid_filter_match(S->filter, p) || idset_has(&S->done, p->id)))
		;
	return p;
}

/* CUDA_VISIBLE_DEVICES for a GPU point in slot: the first n free GPUs (all
 * of them when it asks for more than there are: the engine then says how
 * many it needed), put before the command's own environment. */
static void slot_give_gpus(struct study *S, struct slot *s, size_t slot, int n)
{
	struct gpus *G = &S->gpus;
	struct strbuf v = {0};
	sb_printf(&v, "CUDA_VISIBLE_DEVICES=");
	int all = (size_t)n > G->n, k = 0;
	for (size_t i = 0; i < G->n && (all || k < n); i++)
		if (all || G->owner[i] < 0) {
			G->owner[i] = (long)slot;
			sb_printf(&v, "%s%s", k++ ? "," : "", G->id[i]);
		}
	if (G->n == 1 && !G->id[0][0]) { /* no GPU found: the variable stays as it is */
		sb_free(&v);
		return;
	}
	size_t ne = 0;
	while (s->cmd.env && s->cmd.env[ne])
		ne++;
	s->env = xcalloc(ne + 2, sizeof(*s->env));
	s->env[0] = v.buf; /* freed by slot_clear; the others are cmd's */
	for (size_t i = 0; i < ne; i++)
		s->env[i + 1] = s->cmd.env[i];
}

/* Start points in free slots while the schedule allows: up to --jobs points
 * at once; CPU points together, GPU points together but never with a CPU
 * point, each GPU point on GPUs of its own (its `gpus` level, else 1) named
 * by CUDA_VISIBLE_DEVICES. *next is the point waiting for a slot (taken from
 * g when NULL); *exhausted is set once g has no more. Returns -1 when a
 * point could not be started (the run must stop). */
static int fill_slots(struct study *S, struct grid *g, const struct point **next, int *exhausted)
{
	size_t nslots = S->ex->nslots;
	while (!*exhausted) {
		if (!*next && !(*next = next_point(S, g))) {
			*exhausted = 1;
			break;
		}
		size_t busy = 0, free_slot = nslots, gpu_points = 0;
		for (size_t i = 0; i < nslots; i++) {
			if (S->slots[i].busy) {
				busy++;
				gpu_points += S->slots[i].gpu > 0;
			} else if (free_slot == nslots) {
				free_slot = i;
			}
		}
		int gpu = point_gpus(&S->r, *next, point_uses_gpu(&S->r, *next));
		if (free_slot == nslots)
			break;
		if (gpu) { /* GPU points share the host only with GPU points, on free GPUs */
			size_t want = (size_t)gpu > S->gpus.n ? S->gpus.n : (size_t)gpu;
			if (busy > gpu_points || gpus_free(&S->gpus) < want)
				break;
		} else if (gpu_points)
			break;
		struct slot *s = &S->slots[free_slot];
		memcpy(s->level, (*next)->level, S->r.nfactors * sizeof(size_t));
		s->pt = **next;
		s->pt.level = s->level;
		s->gpu = gpu;
		s->result_path = attempt_result_path(S->dir, (*next)->id);
		s->log_path = xasprintf("%s/logs/%s.log", S->dir, (*next)->id);
		*next = NULL;
		s->noise = (struct noise_start){noise_loadavg(), noise_cpu_mhz(), busy + 1};
		if (argv_build(&S->r, &s->pt, S->dir, s->result_path, &s->cmd, stderr) < 0) {
			slot_clear(s);
			return -1;
		}
		if (gpu)
			slot_give_gpus(S, s, free_slot, gpu);
		s->image_id = S->cf >= 0 ? S->img.id[s->pt.level[S->cf]] : NULL;
		s->image_digest = S->cf >= 0 ? S->img.digest[s->pt.level[S->cf]] : NULL;
		s->image_ref = S->cf >= 0 ? S->img.im[s->pt.level[S->cf]].ref : NULL;
		s->unstarted = S->cf >= 0 ? S->img.failed[s->pt.level[S->cf]] : NULL;
		if (s->unstarted) { /* its image could not be had: a failed point, not run */
			s->exit = (struct exec_exit){0};
			int stored = finish_point(&S->r, &S->st, s, &S->pg, &S->nfailed, &S->prov);
			gpus_release(&S->gpus, (long)free_slot);
			slot_clear(s);
			if (stored < 0)
				return -1;
			continue;
		}
		struct exec_point ep = {
			.id = s->pt.id, .image = S->cf >= 0 ? &S->img.im[s->pt.level[S->cf]] : NULL,
			.argv = s->cmd.argv, .env = s->env ? s->env : s->cmd.env,
			.log_path = s->log_path, .result_path = s->result_path, .cwd = s->cmd.cwd,
			.res = {.timeout_s = S->r.measure.timeout_s, .grace_s = S->r.measure.grace_s, .gpu = gpu},
		};
		if (S->ex->ops->start(S->ex, free_slot, &ep, stderr) < 0) {
			gpus_release(&S->gpus, (long)free_slot);
			slot_clear(s);
			return -1;
		}
		s->busy = 1;
		struct strbuf label = {0};
		point_label(&label, &S->pg, &S->r, &s->pt);
		progress_line(&S->pg, label.buf);
		sb_free(&label);
	}
	return 0;
}

/* End every running point and free its slot. */
static void cancel_all(struct study *S)
{
	S->ex->ops->cancel_all(S->ex);
	for (size_t k = 0; k < S->ex->nslots; k++)
		if (S->slots[k].busy) {
			gpus_release(&S->gpus, (long)k);
			slot_clear(&S->slots[k]);
		}
}

/* The loop: keep the slots busy, store each finished point, until the grid
 * is done, an interrupt arrives (S->interrupted = the signal) or a point
 * cannot be started or stored (S->interrupted = -1). */
static void study_loop(struct study *S)
{
	size_t nslots = S->ex->nslots;
	S->slots = xcalloc(nslots, sizeof(*S->slots));
	for (size_t i = 0; i < nslots; i++)
		S->slots[i].level = xcalloc(S->r.nfactors ? S->r.nfactors : 1, sizeof(size_t));
	char *head = xasprintf("matrix: running %" PRIu64 " of %" PRIu64 " point%s of '%s' in '%s'",
			       S->pg.todo_at_start, S->pg.total, plural_s(S->pg.total), S->r.name, S->dir);
	progress_print(&S->pg, head);
	free(head);
	fflush(stdout);
	S->pg.start = now_monotonic();
	struct grid g;
	grid_init(&g, &S->r);
	gpus_init(&S->gpus);
	const struct point *next = NULL;
	int exhausted = 0;
	for (;;) {
		if (!S->interrupted && fill_slots(S, &g, &next, &exhausted) < 0)
			S->interrupted = -1;
		struct exec_exit x;
		long i = S->ex->ops->wait(S->ex, &x);
		if (i == -1)
			break; /* nothing running */
		if (i == -2) {
			S->interrupted = S->ex->ops->interrupted(S->ex);
			cancel_all(S);
			break;
		}
		S->slots[i].exit = x;
		int stored = finish_point(&S->r, &S->st, &S->slots[i], &S->pg, &S->nfailed, &S->prov);
		gpus_release(&S->gpus, i);
		slot_clear(&S->slots[i]);
		if (stored < 0) {
			cancel_all(S);
			S->interrupted = -1;
			break;
		}
		progress_line(&S->pg, NULL);
		if (S->ex->ops->interrupted(S->ex))
			S->interrupted = S->ex->ops->interrupted(S->ex);
	}
	grid_free(&g);
	gpus_free_all(&S->gpus);
	progress_clear(&S->pg);
}

/* This invocation's counts (a fresh run), or this invocation's and the
 * directory's (a resume), each saying which it is, into sb. */
static void verdict_counts(const struct study *S, const uint64_t dir_rows[3], const char *elapsed,
			   struct strbuf *sb)
{
	const struct progress *pg = &S->pg;
	sb_printf(sb, "%s%" PRIu64 " point%s ran in %s: %" PRIu64 " ok, %" PRIu64 " unsupported, %" PRIu64 " failed",
		  S->o.resume ? "this invocation: " : "", pg->done_now, pg->done_now == 1 ? "" : "s", elapsed, pg->ok,
		  pg->unsupported, pg->failed);
	if (S->o.resume)
		/* with --only, the counts are of the points it selects, not of
		 * the whole directory: said so */
		sb_printf(sb, "; %s: %" PRIu64 " of %" PRIu64 " point%s ha%s a row: %" PRIu64 " ok, %" PRIu64
			      " unsupported, %" PRIu64 " failed",
			  S->o.only ? "the points --only selects" : "directory", dir_rows[0] + dir_rows[1] + dir_rows[2], pg->total, plural_s(pg->total),
			  dir_rows[0] + dir_rows[1] + dir_rows[2] == 1 ? "s" : "ve", dir_rows[0], dir_rows[1], dir_rows[2]);
}

/* The verdict over every row of the directory, not just this invocation,
 * the counts, the summary and the report. Returns the exit status. */
static int study_verdict(struct study *S)
{
	uint64_t failed_rows = 0, dir_rows[3] = {0}; /* the plan's rows: ok, unsupported, failed */
	struct table t;
	char *why = NULL;
	if (table_read(S->st.path, &t, NULL, &why) == 0) {
		long stc = table_column(&t, "status"), idc = table_column(&t, "id");
		for (size_t k = 0; stc >= 0 && k < t.nrows; k++) {
			const char *st = t.rows[k].cell[stc];
			failed_rows += !status_is_success(st) && status_known(st);
			if (idc >= 0 && idset_has(&S->plan, t.rows[k].cell[idc]))
				dir_rows[strcmp(st, "ok") == 0 ? 0 : strcmp(st, "unsupported") == 0 ? 1 : 2]++;
		}
		struct quality q;
		quality_scan(&t, &S->r, NULL, &q);
		quality_summary(&q, &S->quality);
		quality_free(&q);
		table_free(&t);
	}
	free(why);
	char el[48];
	fmt_hms(el, sizeof(el), now_monotonic() - S->pg.start);
	if (S->interrupted) {
		/* the command that runs the rest of these points: with --only, the
		 * same filter (--resume DIR alone runs the whole grid) */
		struct strbuf again = {0};
		sb_puts(&again, "matrix run --resume ");
		argv_shell_quote(&again, S->dir);
		if (S->o.only) {
			sb_puts(&again, " --only ");
			argv_shell_quote(&again, S->o.only);
		}
		if (S->interrupted > 0)
			fprintf(stderr, "matrix: interrupted by %s: this invocation ran %" PRIu64 " point%s; the directory has "
					"%" PRIu64 " of %" PRIu64 " points; resume with: %s\n",
				signal_name(S->interrupted), S->pg.done_now, plural_s(S->pg.done_now), S->pg.done, S->pg.total, again.buf);
		else
			error("stopped: this invocation ran %" PRIu64 " point%s; the directory has %" PRIu64 " of %" PRIu64
			      " points; resume with: %s",
			      S->pg.done_now, plural_s(S->pg.done_now), S->pg.done, S->pg.total, again.buf);
		sb_free(&again);
		return S->interrupted > 0 ? 130 : 1;
	}
	struct strbuf sb = {0};
	sb_puts(&sb, "matrix: ");
	verdict_counts(S, dir_rows, el, &sb);
	if (failed_rows) {
		sb_puts(&sb, " (see the logs; re-run them with: matrix run --resume ");
		argv_shell_quote(&sb, S->dir);
		sb_puts(&sb, " --retry-failed)");
	}
	sb_printf(&sb, "; results in %s/results.csv", S->dir);
	progress_print(&S->pg, sb.buf);
	if (S->quality.len) {
		sb_reset(&sb);
		sb_printf(&sb, "matrix: %s", S->quality.buf);
		progress_print(&S->pg, sb.buf);
	}
	sb_free(&sb);
	progress_summary(&S->pg, S->dir, 12);
	fflush(stdout);
	/* the report is a view of the directory: its trouble does not change
	 * the run's verdict, and `matrix report DIR` redoes it at any time */
	if (!S->o.no_report && report_write(S->dir, stderr) != 0)
		error("the report of '%s' is incomplete (see above); the results are all stored", S->dir);
	else if (!S->o.no_report) {
		char *line = xasprintf("matrix: report in %s/report.html", S->dir);
		progress_print(&S->pg, line);
		free(line);
	}
	return failed_rows ? 1 : 0;
}

static void study_free(struct study *S)
{
	if (S->slots) {
		for (size_t i = 0; i < S->ex->nslots; i++)
			free(S->slots[i].level);
		free(S->slots);
	}
	if (S->ex)
		S->ex->ops->free(S->ex);
	slurm_plan_free(&S->splan);
	images_free(&S->img);
	free(S->done.key);
	free(S->inflight.key);
	free(S->plan.key);
	if (S->pg_ready)
		progress_free(&S->pg);
	grid_filter_free(S->filter);
	sb_free(&S->quality);
	if (S->have_store)
		store_close(&S->st);
	if (S->have_recipe)
		recipe_free(&S->r);
	if (S->lock >= 0)
		close(S->lock);
	free(S->saved_path);
	provenance_free(&S->prov);
	free(S->dir);
	free(S->o.ovr);
}

int cmd_run(int argc, char **argv)
{
	struct study S = {.argc = argc + 1, .argv = argv - 1, .lock = -1};
	if (parse_run_opts(argc, argv, &S.o) < 0) {
		free(S.o.ovr);
		return cmd_usage("run");
	}
	int rc = 2;
	if (study_load_recipe(&S) < 0 || study_check(&S) < 0 || study_resume(&S) < 0)
		goto out;
	if (S.o.dry_run) {
		/* the run would stop at the lock: the dry run says so, as it does */
		long holder = S.o.resume ? store_lock_holder(S.dir) : 0;
		if (holder) {
			char pid[32] = "";
			if (holder > 0)
				snprintf(pid, sizeof(pid), " (pid %ld)", holder);
			error("'%s' is locked by another runner%s: the run would stop here", S.dir, pid);
			goto out;
		}
		rc = study_dry_run(&S) < 0 ? 2 : 0;
		goto out;
	}
	if ((S.slurm && slurm_precheck(&S) < 0) || study_prepare(&S) < 0)
		goto out;
	if (S.slurm)
		study_slurm(&S);
	else
		study_loop(&S);
	rc = S.detached ? 0 : study_verdict(&S);
out:
	study_free(&S);
	return rc;
}

/* --- `matrix run-point DIR ID|INDEX`: one point, its row to DIR/rows/ -------------------- */

/* Whether results.csv of dir holds a row for id. */
static int results_have(const char *dir, const char *id)
{
	char *path = xasprintf("%s/results.csv", dir);
	struct table t;
	char *why = NULL;
	int have = 0;
	if (table_read(path, &t, NULL, &why) == 0) {
		long idc = table_column(&t, "id");
		for (size_t i = 0; idc >= 0 && !have && i < t.nrows; i++)
			have = strcmp(t.rows[i].cell[idc], id) == 0;
		table_free(&t);
	}
	free(why);
	free(path);
	return have;
}

/* run-point's WHICH: a point id (16 hex digits: *by_id = 1) or a plan index
 * >= 1 (*index). Returns 0, or -1 after an error. */
static int run_point_which(const char *which, int *by_id, uint64_t *index)
{
	*by_id = strlen(which) == 16 && strspn(which, "0123456789abcdef") == 16;
	*index = 0;
	char *end = NULL;
	if (!*by_id && *which >= '1' && *which <= '9' && strspn(which, "0123456789") == strlen(which)) {
		errno = 0;
		*index = strtoull(which, &end, 10);
		if (errno)
			*index = 0;
	}
	if (!*by_id && *index == 0) {
		error("run-point: '%s' is neither a point id (16 hex digits) nor a plan index", which);
		return -1;
	}
	return 0;
}

/* The point of r with id which (by_id) or plan index index into slot s
 * (s->level has room for a level per factor). Returns 1 when found. */
static int run_point_find(const struct recipe *r, int by_id, const char *which, uint64_t index,
			  struct slot *s)
{
	struct grid g;
	grid_init(&g, r);
	int found = 0;
	for (const struct point *p; !found && (p = grid_next(&g));)
		if (by_id ? strcmp(p->id, which) == 0 : p->index == index) {
			memcpy(s->level, p->level, r->nfactors * sizeof(size_t));
			s->pt = *p;
			s->pt.level = s->level;
			found = 1;
		}
	grid_free(&g);
	return found;
}

/* Run the point of slot s (its command built) under ex and wait for it.
 * Returns 0 when it ended by itself, 130 when this runner was interrupted
 * (the point is ended), 2 when it could not start. */
static int run_point_exec(struct executor *ex, const struct recipe *r, struct slot *s)
{
	struct exec_point ep = {
		.argv = s->cmd.argv, .env = s->cmd.env, .log_path = s->log_path, .result_path = s->result_path,
		.cwd = s->cmd.cwd, .res = {.timeout_s = r->measure.timeout_s, .grace_s = r->measure.grace_s, .gpu = s->gpu},
	};
	if (ex->ops->start(ex, 0, &ep, stderr) < 0)
		return 2;
	long w = ex->ops->wait(ex, &s->exit);
	/* scancel and a time limit signal every process of the task, one after
	 * the other: a point killed by SIGTERM or SIGKILL under Slurm may have
	 * been signalled just before this runner; wait 2 s for our own signal
	 * before calling it the point's crash */
	if (w >= 0 && !s->exit.timed_out && WIFSIGNALED(s->exit.wstatus) && getenv("SLURM_JOB_ID") &&
	    (WTERMSIG(s->exit.wstatus) == SIGTERM || WTERMSIG(s->exit.wstatus) == SIGKILL))
		for (int i = 0; i < 20 && !ex->ops->interrupted(ex); i++) {
			struct timespec ts = {0, 100000000};
			nanosleep(&ts, NULL);
		}
	if (w < 0 || ex->ops->interrupted(ex)) {
		int sig = ex->ops->interrupted(ex);
		ex->ops->cancel_all(ex);
		error("run-point: interrupted by %s: point %s ended, no row written", signal_name(sig ? sig : SIGTERM),
		      s->pt.id);
		return 130;
	}
	return 0;
}

/* Classify the ended point of slot s, note where it ran (node, slurm job
 * and task) and write its row to row_path (DIR/rows/ID.csv). Returns 0
 * when the point succeeded, 1 when it failed, 2 when the row could not be
 * written. */
static int run_point_store(const struct recipe *r, struct store *rs, const char *dir, const char *row_path,
			   struct slot *s, const struct provenance *pv)
{
	int rc = 2;
	struct outcome o;
	classify(&s->exit, s->result_path, s->log_path, r->measure.timeout_s, &o);
	noise_record(&o.res, &s->noise, noise_cores(), r->measure.rel_ci);
	/* where it ran: the node, and the slurm job and task when it is one */
	set_node(&o.res);
	const char *job = getenv("SLURM_ARRAY_JOB_ID") ? getenv("SLURM_ARRAY_JOB_ID") : getenv("SLURM_JOB_ID");
	if (job && *job)
		result_set(&o.res, "slurm_job", job);
	if (getenv("SLURM_ARRAY_TASK_ID"))
		result_set(&o.res, "slurm_task", getenv("SLURM_ARRAY_TASK_ID"));
	provenance_row(pv, point_program(r, &s->cmd), s->cmd.cwd, 0, &o.res);
	struct strbuf extra = {0};
	char bufs[3][32];
	char **cells = point_row(r, rs, s, &o, &extra, bufs);
	int stored = store_row_write(rs, dir, s->pt.id, cells);
	free(cells);
	sb_free(&extra);
	if (stored < 0) {
		error("cannot write '%s': %s", row_path, strerror(errno));
	} else {
		struct progress pg;
		progress_init(&pg, r->nfactors);
		memset(pg.varies, 1, r->nfactors); /* one point: its every factor */
		pg.total = 1;
		uint64_t nfailed = 0;
		point_report(r, s, &o, &pg, &nfailed);
		progress_free(&pg);
		rc = status_is_success(o.status) ? 0 : 1;
	}
	free(o.reason);
	result_free(&o.res);
	return rc;
}

/* Run one point of a run directory the way `matrix run` runs it (a fresh
 * process under the local executor, its timeout, the same classification),
 * then write its row to DIR/rows/ID.csv (store_row_write). The point is
 * named by its id (16 hex digits) or its plan index (a slurm array task's
 * SLURM_ARRAY_TASK_ID). A point that already has a row is not run again.
 * Interrupted (scancel, a time limit), it ends the point and writes no row:
 * the front end asks Slurm what happened. */
int cmd_run_point(int argc, char **argv)
{
	if (argc != 3) {
		if (argc < 3)
			error("run-point: %s", argc == 1 ? "no run directory given" : "no point given (its id or plan index)");
		else
			error("run-point: one point at a time ('%s' and '%s' given)", argv[2], argv[3]);
		return cmd_usage("run-point");
	}
	const char *dir = argv[1], *which = argv[2];
	int by_id;
	uint64_t index;
	if (run_point_which(which, &by_id, &index) < 0)
		return 2;
	char *recipe_path = xasprintf("%s/recipe.yaml", dir);
	struct recipe r;
	struct stat sbuf;
	if (stat(recipe_path, &sbuf) < 0) {
		rundir_error(dir);
		free(recipe_path);
		return 2;
	}
	int rc = recipe_load(recipe_path, &r, stderr);
	free(recipe_path);
	if (rc < 0)
		return 2;
	recipe_dir_from_env(&r, dir);
	rc = 2;
	struct slot s = {0};
	s.level = xcalloc(r.nfactors ? r.nfactors : 1, sizeof(size_t));
	int found = run_point_find(&r, by_id, which, index, &s);
	struct store rs = {.fd = -1};
	rs.header = store_header(&r, &rs.ncols);
	struct executor *ex = NULL;
	char *row_path = NULL;
	struct provenance pv = {0};
	if (!found) {
		error("run-point: '%s' has no point %s", dir, which);
		goto out;
	}
	row_path = result_row_path(dir, s.pt.id);
	if (access(row_path, F_OK) == 0 || results_have(dir, s.pt.id)) {
		printf("matrix: point %s of '%s' already has a row: not run again\n", s.pt.id, dir);
		rc = 0;
		goto out;
	}
	char *logs = xasprintf("%s/logs", dir);
	int made = mkdir_p(logs, 0755);
	if (made < 0)
		error("cannot create '%s': %s", logs, strerror(errno));
	free(logs);
	/* the project the run's env.txt recorded (before the executor's children) */
	provenance_gather(&pv, NULL, dir);
	if (made < 0 || !(ex = exec_local_new(1, r.measure.grace_s, stderr)))
		goto out;
	s.gpu = point_uses_gpu(&r, &s.pt);
	s.result_path = attempt_result_path(dir, s.pt.id);
	s.log_path = xasprintf("%s/logs/%s.log", dir, s.pt.id);
	s.noise = (struct noise_start){noise_loadavg(), noise_cpu_mhz(), 1};
	if (argv_build(&r, &s.pt, dir, s.result_path, &s.cmd, stderr) < 0)
		goto out;
	rc = run_point_exec(ex, &r, &s);
	if (rc == 0)
		rc = run_point_store(&r, &rs, dir, row_path, &s, &pv);
out:
	provenance_free(&pv);
	if (ex)
		ex->ops->free(ex);
	slot_clear(&s);
	free(s.level);
	free(row_path);
	store_close(&rs);
	recipe_free(&r);
	return rc;
}
