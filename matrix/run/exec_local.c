/* exec_local.c - the local executor (executor.h): each point is fork/exec'd
 * in a fresh process group under a keeper process (a child subreaper) with
 * stdout and stderr to its log; at a timeout, an interrupt or the runner's
 * death the keeper sends SIGTERM to every descendant of the point (one that
 * called setsid included), then SIGKILL after a grace period, and exits as
 * the engine did; where cgroup v2 is writable, each point also runs in a
 * cgroup of its own, killed as a whole at its end. Signals (SIGCHLD, SIGINT, SIGTERM, SIGHUP) reach the runner
 * through a self-pipe: no busy waiting. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "executor.h"
#include "util.h"

struct exec_child {
	pid_t pid;             /* the keeper's, also its process group id; 0 when free */
	double start;          /* monotonic seconds */
	double deadline;       /* start + timeout */
	double kill_at;        /* SIGKILL due (after SIGTERM), 0 = not yet */
	int timed_out;         /* we sent SIGTERM because of the deadline */
	int done;
	int wstatus;           /* from waitpid once done */
	double wall_s;         /* seconds from fork to exit */
	char *cgroup;          /* the point's cgroup v2 directory, or NULL */
	void *ctx;             /* the caller's */
};

/* The runner's SIGKILL to a keeper comes this long after the keeper's own
 * grace period: the keeper ends the point's tree itself. */
#define KEEPER_SLACK_S 2.0

static int sigpipe_fd[2] = {-1, -1};
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	int e = errno;
	if (sig != SIGCHLD && !interrupted)
		interrupted = sig;
	unsigned char b = (unsigned char)sig;
	ssize_t rc = write(sigpipe_fd[1], &b, 1); /* full pipe: a wake-up is already pending */
	(void)rc;
	errno = e;
}

static int exec_setup(void)
{
	if (sigpipe_fd[0] >= 0)
		return 0;
	if (pipe2(sigpipe_fd, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	int sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP};
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		if (sigaction(sigs[i], &sa, NULL) < 0)
			return -1;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static int exec_interrupted(void)
{
	return interrupted;
}

/* --- a cgroup v2 per point --------------------------------------------------------
 * Where the runner may create cgroups (a writable cgroup2 mount: root, or a
 * delegated subtree), each point runs in one of its own, below the runner's:
 * the engine joins it before exec, so every descendant is in it whatever it
 * does (setsid, double fork, a keeper killed outright), and the cgroup's
 * cgroup.kill ends them all. Elsewhere the keeper's subreaper and /proc
 * tracking do it alone. */

static char *cg_base; /* the runner's cgroup directory, when writable */
static int cg_probed;
static unsigned long cg_seq;

/* The runner's cgroup v2 directory if a point cgroup can be made below it. */
static const char *cgroup_base(void)
{
	if (cg_probed)
		return cg_base;
	cg_probed = 1;
	char *self = read_file("/proc/self/cgroup", NULL), *mounts = read_file("/proc/self/mountinfo", NULL);
	char *rel = self ? strstr(self, "0::") : NULL;
	if (rel && (rel == self || rel[-1] == '\n')) {
		rel += 3;
		rel[strcspn(rel, "\n")] = '\0';
		/* mountinfo: "id parent major:minor root mountpoint opts... - cgroup2 ..." */
		for (char *line = mounts; line && *line && !cg_base;) {
			char *nl = strchr(line, '\n');
			if (nl)
				*nl = '\0';
			char root[4096], point[4096];
			char *dash = strstr(line, " - cgroup2 ");
			if (dash && sscanf(line, "%*s %*s %*s %4095s %4095s", root, point) == 2 && strcmp(root, "/") == 0) {
				char *dir = xasprintf("%s%s", point, strcmp(rel, "/") == 0 ? "" : rel);
				char *probe = xasprintf("%s/matrix-%ld-probe", dir, (long)getpid());
				if (mkdir(probe, 0755) == 0 && rmdir(probe) == 0)
					cg_base = dir;
				else
					free(dir);
				free(probe);
			}
			line = nl ? nl + 1 : NULL;
		}
	}
	free(self);
	free(mounts);
	return cg_base;
}

static int write_text_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = write_all(fd, text, strlen(text));
	close(fd);
	return rc;
}

/* Kill every process in cgroup dir (cgroup.kill, else each pid of
 * cgroup.procs with SIGKILL) and remove it once empty (a bounded wait). */
static void cgroup_end(const char *dir)
{
	char *kill_path = xasprintf("%s/cgroup.kill", dir), *procs = xasprintf("%s/cgroup.procs", dir);
	for (int tries = 0; tries < 200; tries++) { /* 2 s */
		if (rmdir(dir) == 0 || errno == ENOENT)
			break;
		if (write_text_file(kill_path, "1") < 0) {
			char *pids = read_file(procs, NULL);
			for (char *p = pids; p && *p;) {
				long pid = strtol(p, &p, 10);
				if (pid > 0)
					kill((pid_t)pid, SIGKILL);
				while (*p == '\n')
					p++;
			}
			free(pids);
		}
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	free(kill_path);
	free(procs);
}

/* --- the keeper ----------------------------------------------------------------
 * A point's process group holds only the processes that stay in it, and
 * PR_SET_PDEATHSIG covers only a direct child: a grandchild that calls setsid
 * escapes a kill of the group, and any grandchild outlives a runner killed
 * outright. So each point runs under a keeper, a fork of the runner (no
 * exec) that is a child subreaper: every descendant of the point stays in its
 * tree, however it detaches. The keeper ends the whole tree (SIGTERM, then
 * SIGKILL after the grace period) when it gets SIGTERM (the runner's timeout
 * or interrupt) and when the runner dies (PR_SET_PDEATHSIG), kills what is
 * left when the engine exits, and then exits as the engine did. */

/* The pids of every descendant of process self, from /proc; their number. */
static size_t descendants(pid_t self, pid_t **out)
{
	size_t n = 0, cap = 0;
	pid_t *pid = NULL, *ppid = NULL;
	DIR *d = opendir("/proc");
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		char path[300], buf[512];
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t k = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (k <= 0)
			continue;
		buf[k] = '\0';
		/* "pid (comm) state ppid ...": comm may hold anything, ')' included */
		char *rp = strrchr(buf, ')');
		long pp;
		if (!rp || sscanf(rp + 1, " %*c %ld", &pp) != 1)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			pid = xrealloc(pid, cap * sizeof(pid_t));
			ppid = xrealloc(ppid, cap * sizeof(pid_t));
		}
		pid[n] = (pid_t)atol(e->d_name);
		ppid[n++] = (pid_t)pp;
	}
	if (d)
		closedir(d);
	/* the tree below self: add children of what is in it until it stops growing */
	pid_t *tree = xmalloc((n + 1) * sizeof(pid_t));
	unsigned char *in = xcalloc(n ? n : 1, 1);
	size_t nt = 0;
	for (int grew = 1; grew;) {
		grew = 0;
		for (size_t i = 0; i < n; i++) {
			if (in[i])
				continue;
			int below = ppid[i] == self;
			for (size_t t = 0; !below && t < nt; t++)
				below = ppid[i] == tree[t];
			if (below) {
				in[i] = 1;
				tree[nt++] = pid[i];
				grew = 1;
			}
		}
	}
	free(in);
	free(pid);
	free(ppid);
	*out = tree;
	return nt;
}

/* Send sig to every descendant of self and to the engine's group; how many
 * descendants there were. */
static size_t kill_tree(pid_t self, pid_t engine, int sig)
{
	pid_t *tree;
	size_t n = descendants(self, &tree);
	kill(-engine, sig);
	for (size_t i = 0; i < n; i++)
		kill(tree[i], sig);
	free(tree);
	return n;
}

/* Reap every child that has exited (blocking: wait for all of them); the
 * engine's status into *status. */
static void keeper_reap(pid_t engine, int block, int *status, int *have)
{
	int st;
	pid_t p;
	while ((p = waitpid(-1, &st, block ? 0 : WNOHANG)) > 0 || (p < 0 && errno == EINTR))
		if (p == engine) {
			*status = st;
			*have = 1;
		}
}

_Noreturn static void engine_child(char *const argv[], char *const env[], const char *cwd, int log, int ep,
				   const char *cgroup)
{
	setpgid(0, 0);
	if (cgroup) {
		char *procs = xasprintf("%s/cgroup.procs", cgroup);
		if (write_text_file(procs, "0") < 0)
			dprintf(log, "matrix: cannot join the point's cgroup '%s': %s\n", cgroup, strerror(errno));
		free(procs);
	}
	/* a keeper killed outright takes the engine with it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	int sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGPIPE};
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	int devnull = open("/dev/null", O_RDONLY);
	if (devnull >= 0)
		dup2(devnull, 0);
	dup2(log, 1);
	dup2(log, 2);
	for (size_t i = 0; env && env[i]; i++)
		putenv(env[i]);
	int e;
	if (cwd && chdir(cwd) < 0) {
		e = errno;
		dprintf(2, "matrix: cannot run '%s' in '%s': %s\n", argv[0], cwd, strerror(e));
		ssize_t rc = write(ep, &e, sizeof(e));
		(void)rc;
		_exit(127);
	}
	execvp(argv[0], argv);
	e = errno;
	dprintf(2, "matrix: cannot run '%s': %s\n", argv[0], strerror(e));
	ssize_t rc = write(ep, &e, sizeof(e));
	(void)rc;
	_exit(127);
}

/* Close every descriptor but 0-2 and keep: the keeper does not exec, and must
 * not hold the runner's lock, results.csv or self-pipe open. */
static void close_others(int keep1, int keep2)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return;
	int self = dirfd(d);
	for (struct dirent *e; (e = readdir(d));) {
		int fd = atoi(e->d_name);
		if (fd > 2 && fd != keep1 && fd != keep2 && fd != self)
			close(fd);
	}
	closedir(d);
}

_Noreturn static void keeper(pid_t runner, char *const argv[], char *const env[], const char *cwd, int log, int ep,
			     double grace_s, const char *cgroup)
{
	pid_t self = getpid();
	setpgid(0, 0);
	close_others(log, ep);
	sigset_t set;
	sigemptyset(&set);
	int sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP};
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaddset(&set, sigs[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	int ending = getppid() != runner; /* the runner died before prctl */
	pid_t engine = fork();
	if (engine == 0)
		engine_child(argv, env, cwd, log, ep, cgroup);
	if (engine < 0) {
		dprintf(log, "matrix: fork: %s\n", strerror(errno));
		_exit(127);
	}
	setpgid(engine, engine);
	close(log);
	close(ep);
	int status = 0, have = 0;
	while (!have && !ending) {
		int sig = sigwaitinfo(&set, NULL);
		if (sig == SIGCHLD)
			keeper_reap(engine, 0, &status, &have);
		else if (sig > 0)
			ending = 1;
	}
	if (ending) {
		kill_tree(self, engine, SIGTERM);
		struct timespec t0;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		sigset_t chld;
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		for (;;) {
			keeper_reap(engine, 0, &status, &have);
			pid_t *tree;
			size_t left = descendants(self, &tree);
			free(tree);
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			double waited = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) * 1e-9;
			if (!left || waited >= grace_s)
				break;
			/* wake at the next exit, or every 50 ms for grandchildren */
			double wait = grace_s - waited < 0.05 ? grace_s - waited : 0.05;
			struct timespec ts = {0, (long)(wait * 1e9)};
			sigtimedwait(&chld, NULL, &ts);
		}
	}
	/* what is left (stragglers of an engine that exited, or everything that
	 * outlived the grace period) is killed; orphans come back to us */
	while (kill_tree(self, engine, SIGKILL))
		keeper_reap(engine, 1, &status, &have);
	keeper_reap(engine, 1, &status, &have);
	if (cgroup)
		cgroup_end(cgroup); /* what left our tree but not the cgroup */
	if (!have || WIFEXITED(status))
		_exit(have ? WEXITSTATUS(status) : 127);
	/* die of the engine's signal, without a core dump of our own */
	int sig = WTERMSIG(status);
	struct rlimit none = {0, 0};
	setrlimit(RLIMIT_CORE, &none);
	signal(sig, SIG_DFL);
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_UNBLOCK, &all, NULL);
	raise(sig);
	_exit(128 + sig);
}

static int exec_start(struct exec_child *c, char *const argv[], char *const env[], const char *cwd,
		      const char *log_path, const char *log_head, double timeout_s, double grace_s, FILE *err)
{
	memset(c, 0, sizeof(*c));
	int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (log < 0) {
		error_to(err, "cannot open '%s': %s", log_path, strerror(errno));
		return -1;
	}
	if (log_head)
		dprintf(log, "%s\n", log_head);
	/* a pipe closed by exec tells the parent whether exec worked */
	int ep[2];
	if (pipe2(ep, O_CLOEXEC) < 0) {
		close(log);
		error_to(err, "pipe: %s", strerror(errno));
		return -1;
	}
	c->start = now_monotonic();
	pid_t runner = getpid();
	if (cgroup_base()) {
		c->cgroup = xasprintf("%s/matrix-%ld-%lu", cg_base, (long)runner, cg_seq++);
		if (mkdir(c->cgroup, 0755) < 0) {
			free(c->cgroup);
			c->cgroup = NULL;
		}
	}
	pid_t pid = fork();
	if (pid < 0) {
		error_to(err, "fork: %s", strerror(errno));
		if (c->cgroup) {
			rmdir(c->cgroup);
			free(c->cgroup);
			c->cgroup = NULL;
		}
		close(log);
		close(ep[0]);
		close(ep[1]);
		return -1;
	}
	if (pid == 0) {
		close(ep[0]);
		keeper(runner, argv, env, cwd, log, ep[1], grace_s, c->cgroup);
	}
	setpgid(pid, pid);
	close(log);
	close(ep[1]);
	int e = 0;
	ssize_t n;
	while ((n = read(ep[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(ep[0]);
	c->pid = pid;
	c->deadline = timeout_s > 0 ? c->start + timeout_s : 0;
	(void)n; /* a failed exec shows as exit 127 with the reason in the log */
	return 0;
}

/* After a keeper is reaped: its point's cgroup ended (a keeper killed
 * outright left its tree to it) and removed. */
static void child_cgroup_end(struct exec_child *c)
{
	if (!c->cgroup)
		return;
	cgroup_end(c->cgroup);
	free(c->cgroup);
	c->cgroup = NULL;
}

static void reap(struct exec_child *children, size_t n)
{
	for (;;) {
		int st;
		pid_t pid = waitpid(-1, &st, WNOHANG);
		if (pid <= 0)
			return;
		for (size_t i = 0; i < n; i++) {
			struct exec_child *c = &children[i];
			if (c->pid == pid && !c->done) {
				c->done = 1;
				c->wstatus = st;
				c->wall_s = now_monotonic() - c->start;
				child_cgroup_end(c);
			}
		}
	}
}

static void drain(void)
{
	unsigned char buf[64];
	while (read(sigpipe_fd[0], buf, sizeof(buf)) > 0)
		;
}

static long exec_wait(struct exec_child *children, size_t n, double grace_s)
{
	for (;;) {
		reap(children, n);
		int running = 0;
		double next = 0, now = now_monotonic();
		for (size_t i = 0; i < n; i++) {
			struct exec_child *c = &children[i];
			if (!c->pid)
				continue;
			if (c->done)
				return (long)i;
			running = 1;
			if (c->kill_at && now >= c->kill_at) {
				kill(-c->pid, SIGKILL);
				c->kill_at = 0;
			} else if (!c->timed_out && c->deadline && now >= c->deadline) {
				c->timed_out = 1;
				kill(-c->pid, SIGTERM);
				c->kill_at = now + grace_s + KEEPER_SLACK_S;
			}
			double due = c->kill_at ? c->kill_at : (!c->timed_out ? c->deadline : 0);
			if (due && (!next || due < next))
				next = due;
		}
		if (!running)
			return -1;
		if (interrupted)
			return -2;
		int ms = -1;
		if (next) {
			double wait = next - now_monotonic();
			/* poll at most every hour: a timeout of weeks must not overflow the int */
			ms = wait <= 0 ? 0 : wait > 3600 ? 3600 * 1000 : (int)(wait * 1000) + 1;
		}
		struct pollfd pfd = {.fd = sigpipe_fd[0], .events = POLLIN};
		if (poll(&pfd, 1, ms) > 0)
			drain();
	}
}

static void exec_kill_all(struct exec_child *children, size_t n, double grace_s)
{
	for (size_t i = 0; i < n; i++)
		if (children[i].pid && !children[i].done)
			kill(-children[i].pid, SIGTERM);
	double until = now_monotonic() + grace_s + KEEPER_SLACK_S;
	for (;;) {
		reap(children, n);
		int left = 0;
		for (size_t i = 0; i < n; i++)
			left |= children[i].pid && !children[i].done;
		if (!left)
			return;
		if (now_monotonic() >= until)
			break;
		struct pollfd pfd = {.fd = sigpipe_fd[0], .events = POLLIN};
		if (poll(&pfd, 1, 50) > 0)
			drain();
	}
	for (size_t i = 0; i < n; i++)
		if (children[i].pid && !children[i].done) {
			kill(-children[i].pid, SIGKILL);
			int st;
			if (waitpid(children[i].pid, &st, 0) == children[i].pid) {
				children[i].done = 1;
				children[i].wstatus = st;
				children[i].wall_s = now_monotonic() - children[i].start;
			}
			child_cgroup_end(&children[i]);
		}
}

/* --- the executor.h interface ------------------------------------------------------ */

struct local {
	struct exec_child *children; /* one per slot; pid 0 when free */
	double grace_s;
};

static int local_start(struct executor *ex, size_t slot, const struct exec_point *pt, FILE *err)
{
	struct local *l = ex->state;
	return exec_start(&l->children[slot], pt->argv, pt->env, pt->cwd, pt->log_path, pt->log_head, pt->res.timeout_s,
			  pt->res.grace_s, err);
}

static long local_wait(struct executor *ex, struct exec_exit *out)
{
	struct local *l = ex->state;
	long i = exec_wait(l->children, ex->nslots, l->grace_s);
	if (i >= 0) {
		struct exec_child *c = &l->children[i];
		*out = (struct exec_exit){.wstatus = c->wstatus, .timed_out = c->timed_out, .wall_s = c->wall_s};
		c->pid = 0;
	}
	return i;
}

static int local_interrupted(struct executor *ex)
{
	return exec_interrupted();
}

static void local_cancel_all(struct executor *ex)
{
	struct local *l = ex->state;
	exec_kill_all(l->children, ex->nslots, l->grace_s);
	for (size_t i = 0; i < ex->nslots; i++)
		l->children[i].pid = 0;
}

/* The output of the shell command cmd, under title, when it succeeds. */
static void describe_cmd(struct strbuf *sb, const char *title, const char *cmd)
{
	FILE *p = popen(cmd, "r");
	if (!p)
		return;
	char buf[4096];
	size_t n, total = 0;
	struct strbuf out = {0};
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0 && total < 65536) {
		sb_add(&out, buf, n);
		total += n;
	}
	if (pclose(p) == 0 && out.len) {
		sb_printf(sb, "%s:\n%s", title, out.buf);
		if (out.buf[out.len - 1] != '\n')
			sb_putc(sb, '\n');
	}
	sb_free(&out);
}

static void local_describe(struct executor *ex, struct strbuf *sb)
{
	if (cgroup_base())
		sb_printf(sb, "containment: a cgroup v2 per point below %s, and a subreaper keeper\n", cg_base);
	else
		sb_puts(sb, "containment: a subreaper keeper per point (no writable cgroup v2 here)\n");
	describe_cmd(sb, "cpu", "grep -m1 '^model name' /proc/cpuinfo 2>/dev/null | sed 's/^model name[[:space:]]*:[[:space:]]*//'");
	describe_cmd(sb, "gpus", "timeout 10 nvidia-smi --query-gpu=name,driver_version,memory.total "
				 "--format=csv,noheader 2>/dev/null");
	describe_cmd(sb, "gpu topology", "timeout 10 nvidia-smi topo -m 2>/dev/null");
}

static void local_free(struct executor *ex)
{
	if (!ex)
		return;
	struct local *l = ex->state;
	free(l->children);
	free(l);
	free(ex);
}

static const struct executor_ops local_ops = {
	.name = "local",
	.start = local_start,
	.wait = local_wait,
	.interrupted = local_interrupted,
	.cancel_all = local_cancel_all,
	.describe = local_describe,
	.free = local_free,
};

struct executor *exec_local_new(size_t nslots, double grace_s, FILE *err)
{
	if (exec_setup() < 0) {
		error("cannot set up signal handling: %s", strerror(errno));
		return NULL;
	}
	struct local *l = xcalloc(1, sizeof(*l));
	l->children = xcalloc(nslots ? nslots : 1, sizeof(*l->children));
	l->grace_s = grace_s;
	struct executor *ex = xcalloc(1, sizeof(*ex));
	*ex = (struct executor){.ops = &local_ops, .nslots = nslots, .state = l};
	return ex;
}
