/* cmd_time.c - `matrix time`: the point of a command engine whose recipe
 * says measure.metric: wall_time (plan/argv.c puts the command under it).
 * The command writes no result file: this process runs it again and again,
 * times each run with the monotonic clock from fork to exit, and writes the
 * engine contract's result itself. The runs follow the recipe's measure
 * settings as the native engine's steps do (engine/measure.c): a warm-up (a
 * duration or a number of runs), then timed runs until min_time has passed,
 * at least TIME_MIN_RUNS are in and the 95% interval of the median run is
 * within rel_ci of it, or until max_time. The interval is the engine's, the
 * order statistics that bound the median (stat_median_ci). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "report/stats.h"
#include "util.h"

/* Timed runs before the interval is first checked (the engine's min_samples). */
#define TIME_MIN_RUNS 10

struct time_opts {
	double warmup_s;          /* seconds of warm-up runs (warmup_runs < 0) */
	long warmup_runs;         /* runs of warm-up, or -1: by time */
	double min_time_s, max_time_s, rel_ci;
	const char *result;
	char **argv;              /* the command, NULL terminated */
};

static int parse_time_opts(int argc, char **argv, struct time_opts *o)
{
	*o = (struct time_opts){.warmup_s = 0.2, .warmup_runs = -1, .min_time_s = 0.5, .max_time_s = 5,
				.rel_ci = 0.02};
	int i, min_given = 0;
	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int ok = v != NULL;
		if (strcmp(a, "--warmup") == 0 && v) {
			long n;
			if (parse_long(v, &n) == 0 && n >= 0)
				o->warmup_runs = n;
			else
				ok = parse_duration(v, &o->warmup_s) == 0;
		} else if (strcmp(a, "--min-time") == 0 && v) {
			ok = parse_duration(v, &o->min_time_s) == 0;
			min_given = 1;
		} else if (strcmp(a, "--max-time") == 0 && v) {
			ok = parse_duration(v, &o->max_time_s) == 0 && o->max_time_s > 0;
		} else if (strcmp(a, "--rel-ci") == 0 && v) {
			ok = parse_double(v, &o->rel_ci) == 0 && o->rel_ci > 0 && o->rel_ci < 1;
		} else if (strcmp(a, "--result") == 0 && v) {
			o->result = v;
		} else if (a[0] == '-' && v) {
			cmd_unknown_option("time", a);
			return -1;
		} else {
			error("time: option '%s' needs a value", a);
			return -1;
		}
		if (!ok) {
			/* what this option takes, not every option's */
			const char *want = !strcmp(a, "--warmup") ? "a number of warm-up runs or a duration such as 0.5s"
					   : !strcmp(a, "--rel-ci")   ? "a number between 0 and 1, exclusive, such as 0.02"
					   : !strcmp(a, "--max-time") ? "a duration above 0, such as 5s"
								      : "a duration such as 0.5s";
			error("time: %s '%s' is not valid (want %s)", a, v, want);
			return -1;
		}
		i++;
	}
	if (!o->result) {
		error("time: no --result FILE given");
		return -1;
	}
	if (i + 1 >= argc) {
		error("time: no command given (after '--')");
		return -1;
	}
	if (o->min_time_s > o->max_time_s) {
		error("time: --min-time (%gs%s) must not exceed --max-time (%gs)", o->min_time_s,
		      min_given ? "" : ", the default", o->max_time_s);
		return -1;
	}
	o->argv = argv + i + 1;
	return 0;
}

/* Run argv once: fork, exec without MATRIX_RESULT (matrix writes the
 * result), wait. Returns the wait status; *secs the seconds from fork to
 * exit; *exec_errno the reason exec failed, else 0. */
static int run_once(char **argv, double *secs, int *exec_errno)
{
	int ep[2];
	*exec_errno = 0;
	if (pipe2(ep, O_CLOEXEC) < 0) {
		*exec_errno = errno;
		return 127 << 8;
	}
	double t0 = now_monotonic();
	pid_t pid = fork();
	if (pid == 0) {
		close(ep[0]);
		unsetenv("MATRIX_RESULT");
		execvp(argv[0], argv);
		int e = errno;
		ssize_t w = write(ep[1], &e, sizeof(e));
		(void)w;
		_exit(127);
	}
	close(ep[1]);
	int st = 127 << 8;
	if (pid < 0) {
		*exec_errno = errno;
	} else {
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	*secs = now_monotonic() - t0;
	int e = 0;
	if (read(ep[0], &e, sizeof(e)) == (ssize_t)sizeof(e))
		*exec_errno = e;
	close(ep[0]);
	return st;
}

/* Whether the result can be written where --result says, tried as
 * write_file_atomic will write it (a file beside it, renamed over it), before
 * any run: a path that cannot be written was found only after every timed
 * run. Returns -1 after saying why. */
static int result_writable(const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		error("time: cannot write '%s': it is a directory", path);
		return -1;
	}
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		error("time: cannot write '%s': %s", path, strerror(errno));
	else {
		close(fd);
		unlink(tmp);
	}
	free(tmp);
	return fd < 0 ? -1 : 0;
}

static int write_result(const char *path, const struct strbuf *sb)
{
	int rc = write_file_atomic(path, sb->buf, sb->len);
	if (rc < 0)
		error("time: cannot write '%s': %s", path, strerror(errno));
	return rc;
}

/* The command failed on run `run` of `phase` (wait status st): its result
 * says so, and this process ends as the command did (its exit status, or
 * its signal) for the runner's classification. */
static int failed_run(const struct time_opts *o, int st, int exec_errno, const char *phase, long run)
{
	struct strbuf sb = {0};
	size_t at = strlen("status=failed\nengine=command\nreason=");
	sb_puts(&sb, "status=failed\nengine=command\nreason=");
	if (exec_errno)
		sb_printf(&sb, "cannot run '%s': %s", o->argv[0], strerror(exec_errno));
	else if (WIFSIGNALED(st))
		sb_printf(&sb, "the command was killed by signal %d on its %s run %ld", WTERMSIG(st), phase, run);
	else
		sb_printf(&sb, "the command failed on its %s run %ld", phase, run);
	sb_putc(&sb, '\n');
	/* a reason on one line: the command's name may hold anything */
	for (size_t i = at; i + 1 < sb.len; i++)
		if (sb.buf[i] == '\n' || sb.buf[i] == '\r')
			sb.buf[i] = ' ';
	write_result(o->result, &sb);
	/* the result's reason: "cannot run 'x': ..." was "failed on its warm-up run 1" here */
	fprintf(stderr, "matrix: time: %s", sb.buf + at);
	sb_free(&sb);
	if (WIFSIGNALED(st)) {
		int sig = WTERMSIG(st);
		struct rlimit none = {0, 0};
		setrlimit(RLIMIT_CORE, &none);
		signal(sig, SIG_DFL);
		raise(sig);
		return 128 + sig;
	}
	return exec_errno ? 127 : WEXITSTATUS(st) ? WEXITSTATUS(st) : 1;
}

/* The runs' result: median, its interval, runs, throughput in runs/s. */
static int ok_result(const struct time_opts *o, double *ms, size_t n, long warmup, double total_s, int ci_met)
{
	double sum = 0, lo, hi;
	for (size_t i = 0; i < n; i++)
		sum += ms[i];
	double med = stat_median_ci(ms, n, &lo, &hi);
	struct strbuf sb = {0};
	sb_printf(&sb, "status=ok\nengine=command\nwall_time=%.9g\nstep_ms=%.9g\n", med / 1e3, med);
	if (!isnan(lo))
		sb_printf(&sb, "step_ms_lo=%.9g\nstep_ms_hi=%.9g\nrel_ci=%.6g\n", lo, hi, (hi - lo) / 2 / med);
	sb_printf(&sb, "mean_ms=%.9g\nsamples=%zu\nwarmup_runs=%ld\ntimed_s=%.6g\nthroughput=%.9g\nunit=runs/s\n"
		       "ci_met=%d\n",
		  sum / (double)n, n, warmup, total_s, 1e3 / med, ci_met);
	int rc = write_result(o->result, &sb);
	sb_free(&sb);
	/* for the point's log, and for a person who runs it by hand */
	if (isnan(lo))
		fprintf(stderr, "matrix: time: %zu run after %ld warm-up runs: %.4g ms (no interval from one run)\n", n,
			warmup, med);
	else
		fprintf(stderr, "matrix: time: %zu runs after %ld warm-up runs: median %.4g ms, 95%% interval "
				"[%.4g, %.4g] ms%s\n",
			n, warmup, med, lo, hi, ci_met ? "" : " (wider than --rel-ci)");
	return rc < 0 ? 1 : 0;
}

/* Time the command as the options say; see the file's comment. Exit
 * status: 0 (result written), the command's own exit status or signal
 * when one of its runs failed, 2 on a usage error. */
int cmd_time(int argc, char **argv)
{
	struct time_opts o;
	if (parse_time_opts(argc, argv, &o) < 0)
		return cmd_usage("time");
	if (result_writable(o.result) < 0)
		return 2;
	signal(SIGPIPE, SIG_DFL);
	double secs;
	int e, st;
	long warmup = 0;
	double start = now_monotonic();
	while (o.warmup_runs >= 0 ? warmup < o.warmup_runs : now_monotonic() - start < o.warmup_s) {
		st = run_once(o.argv, &secs, &e);
		warmup++;
		if (e || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return failed_run(&o, st, e, "warm-up", warmup);
	}
	size_t n = 0, cap = 64, next_check = TIME_MIN_RUNS;
	double *ms = xmalloc(cap * sizeof(double)), *sorted = xmalloc(cap * sizeof(double));
	int ci_met = 0;
	start = now_monotonic();
	for (;;) {
		st = run_once(o.argv, &secs, &e);
		if (e || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			free(ms);
			free(sorted);
			return failed_run(&o, st, e, "timed", (long)n + 1);
		}
		if (n == cap) {
			cap *= 2;
			ms = xrealloc(ms, cap * sizeof(double));
			sorted = xrealloc(sorted, cap * sizeof(double));
		}
		ms[n++] = secs * 1e3;
		double el = now_monotonic() - start;
		if (el >= o.max_time_s)
			break;
		if (el >= o.min_time_s && n >= next_check) {
			double lo, hi, med;
			memcpy(sorted, ms, n * sizeof(double));
			med = stat_median_ci(sorted, n, &lo, &hi);
			if ((hi - lo) / 2 <= o.rel_ci * med) {
				ci_met = 1;
				break;
			}
			next_check = n + n / 8 + 1; /* sorted at geometric intervals */
		}
	}
	double total = now_monotonic() - start;
	/* fewer than 6 runs have no 95% interval of the median ([min, max] of 5
	 * holds it with 93.75%): never met, as in the engines */
	if (!ci_met && n >= 6) {
		double lo, hi, med;
		memcpy(sorted, ms, n * sizeof(double));
		med = stat_median_ci(sorted, n, &lo, &hi);
		ci_met = (hi - lo) / 2 <= o.rel_ci * med;
	}
	int rc = ok_result(&o, ms, n, warmup, total, ci_met);
	free(ms);
	free(sorted);
	return rc;
}
