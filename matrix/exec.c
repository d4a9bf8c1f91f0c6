/* exec.c - local executor: fork/exec in a fresh process group, timeouts,
 * signals through a self-pipe, no busy waiting. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec.h"
#include "util.h"

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

int exec_setup(void)
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

int exec_interrupted(void)
{
	return interrupted;
}

int exec_start(struct exec_child *c, char *const argv[], char *const env[], const char *log_path,
	       double timeout_s, FILE *err)
{
	memset(c, 0, sizeof(*c));
	int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (log < 0) {
		fprintf(err, "matrix: cannot open '%s': %s\n", log_path, strerror(errno));
		return -1;
	}
	/* a pipe closed by exec tells the parent whether exec worked */
	int ep[2];
	if (pipe2(ep, O_CLOEXEC) < 0) {
		close(log);
		fprintf(err, "matrix: pipe: %s\n", strerror(errno));
		return -1;
	}
	c->start = now_monotonic();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(err, "matrix: fork: %s\n", strerror(errno));
		close(log);
		close(ep[0]);
		close(ep[1]);
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		/* a runner killed outright takes its point with it: no orphan may
		 * write a result file that a resumed run is about to produce */
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
		execvp(argv[0], argv);
		int e = errno;
		dprintf(2, "matrix: cannot run '%s': %s\n", argv[0], strerror(e));
		ssize_t rc = write(ep[1], &e, sizeof(e));
		(void)rc;
		_exit(127);
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
				/* stragglers of the group (grandchildren) go too */
				kill(-pid, SIGKILL);
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

long exec_wait(struct exec_child *children, size_t n, double grace_s)
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
				c->kill_at = now + grace_s;
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
			ms = wait <= 0 ? 0 : (int)(wait * 1000) + 1;
		}
		struct pollfd pfd = {.fd = sigpipe_fd[0], .events = POLLIN};
		if (poll(&pfd, 1, ms) > 0)
			drain();
	}
}

void exec_kill_all(struct exec_child *children, size_t n, double grace_s)
{
	for (size_t i = 0; i < n; i++)
		if (children[i].pid && !children[i].done)
			kill(-children[i].pid, SIGTERM);
	double until = now_monotonic() + grace_s;
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
		}
}
