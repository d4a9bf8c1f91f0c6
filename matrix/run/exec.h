/* exec.h - the local executor: each point is fork/exec'd under a keeper
 * process (a child subreaper) with stdout and stderr to its log; at a timeout,
 * an interrupt or the runner's death the keeper sends SIGTERM to every
 * descendant of the point (one that called setsid included), then SIGKILL
 * after a grace period, and exits as the engine did. Signals (SIGCHLD,
 * SIGINT, SIGTERM, SIGHUP) reach the runner through a self-pipe. */
#ifndef MATRIX_EXEC_H
#define MATRIX_EXEC_H

#include <stdio.h>
#include <sys/types.h>

struct exec_child {
	pid_t pid;             /* the keeper's, also its process group id; 0 when free */
	double start;          /* monotonic seconds */
	double deadline;       /* start + timeout */
	double kill_at;        /* SIGKILL due (after SIGTERM), 0 = not yet */
	int timed_out;         /* we sent SIGTERM because of the deadline */
	int done;
	int wstatus;           /* from waitpid once done */
	double wall_s;         /* seconds from fork to exit */
	void *ctx;             /* the caller's */
};

/* Install the signal handlers and the self-pipe; call once. */
int exec_setup(void);
/* Start argv[0] (PATH searched) with extra environment "K=V" strings
 * (NULL-terminated, may be NULL), output to log_path, under a keeper that
 * gives the point grace_s seconds between SIGTERM and SIGKILL. Returns 0, or
 * -1 after printing why to err (the child is then not started). */
int exec_start(struct exec_child *c, char *const argv[], char *const env[], const char *log_path,
	       double timeout_s, double grace_s, FILE *err);
/* Wait until a child of children[0..n) is done (returns its index), or until
 * an interrupt arrived (returns -2), or, with n == 0 or no running child,
 * returns -1 at once. Deals with deadlines: SIGTERM then SIGKILL after grace. */
long exec_wait(struct exec_child *children, size_t n, double grace_s);
/* The interrupting signal received so far (SIGINT, SIGTERM, SIGHUP), or 0. */
int exec_interrupted(void);
/* End every running point: SIGTERM to its keeper, wait up to grace_s (and a
 * little more: the keeper kills what is left), then SIGKILL, reap. */
void exec_kill_all(struct exec_child *children, size_t n, double grace_s);

#endif
