/* exec_slurm.c - sbatch job arrays, squeue, sacct and scancel for the slurm
 * executor (see exec_slurm.h). Slurm's commands are run as child processes
 * with their output captured; nothing links against Slurm. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec_slurm.h"

void slurm_array_add(struct slurm_array *a, uint64_t i)
{
	i -= a->offset;
	if (a->ntasks && a->run_start && i == a->last + 1) {
		a->last = i;
		a->ntasks++;
		return;
	}
	slurm_array_close(a);
	a->run_start = a->last = i;
	a->ntasks++;
}

void slurm_array_close(struct slurm_array *a)
{
	if (!a->ntasks || a->run_start == 0)
		return;
	if (a->spec.len)
		sb_putc(&a->spec, ',');
	if (a->run_start == a->last)
		sb_printf(&a->spec, "%" PRIu64, a->last);
	else
		sb_printf(&a->spec, "%" PRIu64 "-%" PRIu64, a->run_start, a->last);
	a->run_start = 0; /* plan indices start at 1: 0 marks no open range */
}

void slurm_array_free(struct slurm_array *a)
{
	sb_free(&a->spec);
	free(a->job);
	a->job = NULL;
}

/* Run argv with stdout and stderr captured together into out (when not
 * NULL); returns its exit status, 127 when it could not start, or -1. The
 * slurm commands do not see an interrupt: the front end decides what one
 * does. */
static int run_capture(char *const *argv, struct strbuf *out)
{
	struct spawn_io io = {.keep_stdin = 1, .ignore_int = 1};
	return spawn_capture(argv, &io, out);
}

static int on_path(const char *name)
{
	const char *path = getenv("PATH");
	if (!path)
		return 0;
	char *p = xstrdup(path), *save = NULL;
	int found = 0;
	for (char *d = strtok_r(p, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char *f = xasprintf("%s/%s", *d ? d : ".", name);
		found = access(f, X_OK) == 0;
		free(f);
	}
	free(p);
	return found;
}

/* The last non-empty line of out, cleaned for a terminal (the reason a
 * slurm command gives last: "sbatch: fatal: ..."), or "" (allocated). */
static char *last_line(const struct strbuf *out)
{
	const char *s = out->buf ? out->buf : "", *end = s + out->len;
	while (end > s && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		end--;
	const char *start = end;
	while (start > s && start[-1] != '\n')
		start--;
	return text_clean(start, (size_t)(end - start), 500);
}

/* A partition's MaxTime as sinfo prints it ("infinite", "2:00",
 * "1:30:00", "1-00:00:00") in seconds; -1 for none or unread. */
static long part_time(const char *s)
{
	long days = 0, f[3] = {0}, n = 0;
	const char *dash = strchr(s, '-');
	if (dash) {
		days = strtol(s, NULL, 10);
		s = dash + 1;
	}
	for (char *end; n < 3; s = end + 1) {
		if (*s < '0' || *s > '9')
			return -1; /* infinite, UNLIMITED, n/a */
		f[n++] = strtol(s, &end, 10);
		if (*end != ':')
			break;
	}
	/* mm:ss, hh:mm:ss; days-hh[:mm[:ss]] */
	long secs = n == 3 || dash ? f[0] * 3600 + f[1] * 60 + f[2] : n == 2 ? f[0] * 60 + f[1] : f[0] * 60;
	return days * 86400 + secs;
}

/* Whether the recipe's extra sbatch arguments choose opt themselves
 * ("--time=1:00", "-t", "-t1:00"): then what sbatch gets is theirs. */
static int extra_sets(const struct slurm_spec *sp, const char *lng, const char *shrt)
{
	size_t n = strlen(lng);
	for (size_t i = 0; i < sp->nextra; i++)
		if ((strncmp(sp->extra[i], lng, n) == 0 && (!sp->extra[i][n] || sp->extra[i][n] == '=')) ||
		    strncmp(sp->extra[i], shrt, 2) == 0)
			return 1;
	return 0;
}

long slurm_task_time(const struct slurm_spec *sp, const struct recipe *r)
{
	double t = sp->time_s > 0 ? sp->time_s : r->measure.timeout_s + r->measure.grace_s + 60;
	return (long)t + ((double)(long)t < t);
}

static void hms(char buf[32], long secs)
{
	snprintf(buf, 32, "%ld:%02ld:%02ld", secs / 3600, secs / 60 % 60, secs % 60);
}

/* Check sinfo's partitions (lines "NAME[*]|MAXTIME") against the recipe's
 * (a comma list, or the default one marked '*'): each exists, and the task
 * time limit is within the MaxTime of one of them (Slurm would keep the
 * tasks pending for ever, PartitionTimeLimit). Returns 0 or -1 after
 * printing why. */
static int check_partitions(const struct slurm_spec *sp, const struct recipe *r, char *sinfo, FILE *err)
{
	char *want = sp->partition ? xstrdup(sp->partition) : NULL;
	long best = -2; /* the largest MaxTime of the partitions asked for (-1: none) */
	char *name = sp->partition ? xstrdup(sp->partition) : NULL; /* or the default's */
	int rc = 0;
	for (char *ws = NULL, *w = want ? strtok_r(want, ",", &ws) : NULL; rc == 0 && (w || (!want && best == -2));
	     w = want ? strtok_r(NULL, ",", &ws) : NULL) {
		int found = 0;
		char *copy = xstrdup(sinfo ? sinfo : "");
		for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			char *bar = strchr(l, '|');
			if (!bar)
				continue;
			*bar = '\0';
			size_t len = strlen(l);
			int dflt = len && l[len - 1] == '*';
			if (dflt)
				l[--len] = '\0';
			if (w ? strcmp(l, w) != 0 : !dflt)
				continue;
			found = 1;
			if (!name)
				name = xstrdup(l);
			long t = part_time(bar + 1);
			if (best == -2 || t < 0 || (best >= 0 && t > best))
				best = t < 0 ? -1 : t;
		}
		free(copy);
		if (w && !found) {
			error_to(err, "run: slurm has no partition '%s' (see 'sinfo')", w);
			rc = -1;
		}
		if (!w)
			break; /* the default partition, or none */
	}
	free(want);
	long need = slurm_task_time(sp, r);
	if (rc == 0 && best >= 0 && need > best && !extra_sets(sp, "--time", "-t") &&
	    !extra_sets(sp, "--partition", "-p")) {
		char a[32], b[32];
		hms(a, need);
		hms(b, best);
		if (sp->time_s > 0)
			error_to(err, "run: the time limit per task, executor.slurm.time %s, is over the MaxTime of "
				      "partition '%s' (%s): Slurm would keep the tasks pending for ever; lower it, or choose "
				      "another partition",
				 a, name, b);
		else
			error_to(err, "run: the time limit per task, %s (measure.timeout %g s + grace %g s + 60 s), is "
				      "over the MaxTime of partition '%s' (%s): Slurm would keep the tasks pending for "
				      "ever; lower measure.timeout, set executor.slurm.time, or choose another partition",
				 a, r->measure.timeout_s, r->measure.grace_s,
				 name, b);
		rc = -1;
	}
	free(name);
	return rc;
}

int slurm_check(const struct slurm_spec *sp, const struct recipe *r, FILE *err)
{
	static const char *const tools[] = {"sbatch", "squeue", "scancel"};
	for (size_t i = 0; i < ARRAY_SIZE(tools); i++)
		if (!on_path(tools[i])) {
			fprintf(err, "matrix: run: the slurm executor needs '%s' on PATH: run on a slurm "
				     "login node, or use the local executor\n", tools[i]);
			return -1;
		}
	/* a slurm that does not answer (no controller, no configuration) is
	 * found here, before the run directory is made, not by sbatch after */
	struct strbuf out = {0};
	char *argv[] = {"sinfo", "-h", "-o", "%P|%l", NULL};
	int rc = on_path("sinfo") ? run_capture(argv, &out) : -2;
	if (rc != 0 && rc != -2) {
		char *last = last_line(&out);
		error_to(err, "run: slurm does not answer: 'sinfo' failed (exit status %d): %s", rc, last);
		free(last);
		sb_free(&out);
		return -1;
	}
	rc = rc == 0 ? check_partitions(sp, r, out.buf, err) : 0;
	sb_free(&out);
	return rc;
}

uint64_t slurm_max_task(void)
{
	struct strbuf out = {0};
	char *argv[] = {"scontrol", "show", "config", NULL};
	uint64_t max = 0;
	uint64_t tasks = 0; /* SchedulerParameters' max_array_tasks: tasks in one array */
	if (run_capture(argv, &out) == 0)
		for (char *save = NULL, *l = strtok_r(out.buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			unsigned long long v;
			const char *m = strstr(l, "max_array_tasks=");
			if (sscanf(l, "MaxArraySize = %llu", &v) == 1 && v > 1)
				max = v - 1;
			else if (strncmp(l, "SchedulerParameters", 19) == 0 && m &&
				 sscanf(m + 16, "%llu", &v) == 1 && v > 0)
				tasks = v;
		}
	sb_free(&out);
	/* blocks of at most that many indices hold at most that many tasks */
	return tasks && (!max || tasks < max) ? tasks : max;
}

char *slurm_output_last_line(const char *path)
{
	size_t len;
	char *why = NULL;
	char *text = read_file_capped(path, (size_t)4 << 20, 0, &len, &why);
	free(why);
	if (!text)
		return NULL;
	struct strbuf sb = {text, len, len + 1};
	char *last = last_line(&sb);
	free(text);
	return last;
}

static void push(char ***v, size_t *n, char *s)
{
	*v = xrealloc(*v, (*n + 2) * sizeof(char *));
	(*v)[(*n)++] = s;
	(*v)[*n] = NULL;
}

char **slurm_sbatch_argv(const struct slurm_spec *sp, const struct recipe *r, const char *dir_abs,
			 const char *script, const struct slurm_array *a)
{
	char **v = NULL;
	size_t n = 0;
	push(&v, &n, xstrdup("sbatch"));
	push(&v, &n, xstrdup("--parsable"));
	push(&v, &n, xasprintf("--job-name=matrix-%s", r->name));
	if (sp->throttle)
		push(&v, &n, xasprintf("--array=%s%%%ld", a->spec.buf, sp->throttle));
	else
		push(&v, &n, xasprintf("--array=%s", a->spec.buf));
	/* a pattern: a '%' of the directory's is "%%" ("50%a" would be 50 and the task id) */
	struct strbuf out = {0};
	sb_puts(&out, "--output=");
	for (const char *c = dir_abs; *c; c++)
		sb_puts(&out, *c == '%' ? "%%" : (char[]){*c, '\0'});
	sb_puts(&out, "/slurm/%A_%a.out");
	push(&v, &n, out.buf);
	push(&v, &n, xstrdup("--ntasks=1"));
	if (sp->partition)
		push(&v, &n, xasprintf("--partition=%s", sp->partition));
	if (sp->account)
		push(&v, &n, xasprintf("--account=%s", sp->account));
	if (sp->qos)
		push(&v, &n, xasprintf("--qos=%s", sp->qos));
	char t[32];
	hms(t, slurm_task_time(sp, r));
	push(&v, &n, xasprintf("--time=%s", t));
	if (sp->cpus)
		push(&v, &n, xasprintf("--cpus-per-task=%ld", sp->cpus));
	if (sp->mem)
		push(&v, &n, xasprintf("--mem=%s", sp->mem));
	if (a->gpus)
		push(&v, &n, xasprintf("--gpus-per-task=%ld", a->gpus));
	for (size_t i = 0; i < sp->nextra; i++)
		push(&v, &n, xstrdup(sp->extra[i]));
	push(&v, &n, xstrdup(script));
	if (a->offset)
		push(&v, &n, xasprintf("%" PRIu64, a->offset));
	return v;
}

void slurm_argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

int slurm_submit(char *const *argv, char **job, FILE *err)
{
	struct strbuf out = {0};
	int rc = run_capture(argv, &out);
	/* its reason, before strtok_r below cuts the lines with NULs (shown as \x00) */
	char *last = last_line(&out);
	/* --parsable: the last line is "JOBID" or "JOBID;CLUSTER" */
	char *line = NULL;
	for (char *save = NULL, *l = strtok_r(out.buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		line = l;
	size_t digits = line ? strspn(line, "0123456789") : 0;
	if (rc != 0 || !digits || (line[digits] && line[digits] != ';')) {
		error_to(err, "run: sbatch refused the study (exit status %d): %s", rc, last);
		free(last);
		sb_free(&out);
		return -1;
	}
	free(last);
	*job = xstrndup(line, digits);
	sb_free(&out);
	return 0;
}

int slurm_test(const struct slurm_spec *sp, const struct recipe *r, const char *dir_abs,
	       const struct slurm_array *a, FILE *err)
{
	struct slurm_array copy = *a;
	copy.offset = 0; /* no script, so no argument for it */
	char **argv = slurm_sbatch_argv(sp, r, dir_abs, "--wrap=true", &copy);
	size_t n = 0;
	while (argv[n])
		n++;
	argv = xrealloc(argv, (n + 2) * sizeof(char *));
	memmove(argv + 2, argv + 1, n * sizeof(char *)); /* the NULL too */
	argv[1] = xstrdup("--test-only");
	struct strbuf out = {0};
	int rc = run_capture(argv, &out);
	slurm_argv_free(argv);
	if (rc != 0) {
		char *last = last_line(&out);
		error_to(err, "run: sbatch --test-only refuses the study (exit status %d): %s: nothing was written or "
			      "submitted; change the recipe's executor.slurm settings (partition, account, qos, gpus, cpus, "
			      "mem, extra)", rc, last);
		free(last);
	}
	sb_free(&out);
	return rc == 0 ? 0 : -1;
}

char *slurm_jobs_list(const struct slurm_jobs *J, const char *sep)
{
	struct strbuf sb = {0};
	for (size_t i = 0; i < J->n; i++)
		sb_printf(&sb, "%s%s", i ? sep : "", J->id[i]);
	return sb.buf ? sb.buf : xstrdup("");
}

long slurm_active(const struct slurm_jobs *J, long *running, char **waiting)
{
	char *list = slurm_jobs_list(J, ",");
	char *argv[] = {"squeue", "-h", "-r", "-o", "%t|%r", "-j", list, NULL};
	struct strbuf out = {0};
	int rc = run_capture(argv, &out);
	free(list);
	long n = 0;
	*running = 0;
	if (waiting)
		*waiting = NULL;
	if (rc != 0) {
		/* squeue refuses job ids it no longer knows: then none is left */
		n = out.buf && strstr(out.buf, "Invalid job id") ? 0 : -1;
		sb_free(&out);
		return n;
	}
	/* the reasons of the pending tasks, counted: the most common wins */
	char **why = NULL;
	size_t *count = NULL, nwhy = 0, top = 0;
	for (char *save = NULL, *l = strtok_r(out.buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *bar = strchr(l, '|');
		if (bar)
			*bar++ = '\0';
		n++;
		*running += strcmp(l, "R") == 0 || strcmp(l, "CG") == 0;
		if (strcmp(l, "PD") != 0 || !bar || !*bar || strcmp(bar, "None") == 0)
			continue;
		size_t k = 0;
		while (k < nwhy && strcmp(why[k], bar) != 0)
			k++;
		if (k == nwhy) {
			why = xrealloc(why, (nwhy + 1) * sizeof(*why));
			count = xrealloc(count, (nwhy + 1) * sizeof(*count));
			why[nwhy] = bar;
			count[nwhy++] = 0;
		}
		if (++count[k] > count[top])
			top = k;
	}
	if (waiting && nwhy)
		*waiting = text_clean(why[top], strlen(why[top]), 100);
	free(why);
	free(count);
	sb_free(&out);
	return n;
}

int slurm_state_active(const char *state)
{
	static const char *const ended[] = {"COMPLETED", "FAILED", "TIMEOUT", "OUT_OF_MEMORY", "CANCELLED",
					    "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "REVOKED"};
	for (size_t i = 0; i < ARRAY_SIZE(ended); i++)
		if (strcmp(state, ended[i]) == 0)
			return 0;
	return 1;
}

/* Add one task (or, for a record of tasks not started yet, every task id
 * of its ranges: "5-8%2", "[5-8,10:2]") of job, whose task ids are plan
 * indices less offset, to T. */
static void tasks_add(struct slurm_tasks *T, const char *job, uint64_t offset, size_t seq, const char *indexes,
		      const char *state, const char *node)
{
	char *spec = xstrdup(indexes);
	spec[strcspn(spec, "%]")] = '\0';
	char *list = spec + (spec[0] == '[');
	size_t state_len = strcspn(state, " \t\n"); /* sacct: "CANCELLED by 0" */
	for (char *save = NULL, *r = strtok_r(list, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
		char *end;
		errno = 0;
		uint64_t a = strtoull(r, &end, 10), b = a, step = 1;
		if (errno || end == r)
			continue;
		if (*end == '-') {
			char *e2;
			b = strtoull(end + 1, &e2, 10);
			end = e2;
		}
		if (*end == ':')
			step = strtoull(end + 1, NULL, 10);
		if (!step || b < a || b - a > 1000000)
			continue;
		for (uint64_t i = a; i <= b; i += step) {
			T->t = xrealloc(T->t, (T->n + 1) * sizeof(*T->t));
			T->t[T->n++] = (struct slurm_task){
				.index = i + offset, .task = i, .job = xstrdup(job), .state = xstrndup(state, state_len),
				.node = node && *node && strcmp(node, "None assigned") && strcmp(node, "(null)")
						? xstrdup(node) : NULL,
				.seq = seq};
			if (b - i < step)
				break;
		}
	}
	free(spec);
}

/* The value of " KEY=" in a line of `scontrol -o show job` (up to the next
 * space), copied; NULL when absent. */
static char *field(const char *line, const char *key)
{
	size_t k = strlen(key);
	for (const char *p = line; (p = strstr(p, key)); p += k)
		if ((p == line || p[-1] == ' ') && p[k] == '=')
			return xstrndup(p + k + 1, strcspn(p + k + 1, " \n"));
	return NULL;
}

/* The tasks of one job that ended (and those in the queue, as Slurm's
 * accounting saw them), from sacct, else from scontrol. */
static void tasks_ended(struct slurm_tasks *T, const char *job, uint64_t offset, size_t seq)
{
	struct strbuf out = {0};
	char *sacct[] = {"sacct", "-n", "-X", "-P", "-o", "JobID,State,NodeList", "-j", (char *)job, NULL};
	int any = 0;
	if (on_path("sacct") && run_capture(sacct, &out) == 0) {
		size_t jl = strlen(job);
		for (char *save = NULL, *l = strtok_r(out.buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			char *st = strchr(l, '|'), *node = st ? strchr(st + 1, '|') : NULL;
			if (!node || strncmp(l, job, jl) != 0 || l[jl] != '_')
				continue;
			*st++ = '\0';
			*node++ = '\0';
			tasks_add(T, job, offset, seq, l + jl + 1, st, node);
			any = 1;
		}
	}
	sb_free(&out);
	if (any)
		return;
	char *scontrol[] = {"scontrol", "-o", "show", "job", (char *)job, NULL};
	if (run_capture(scontrol, &out) == 0)
		for (char *save = NULL, *l = strtok_r(out.buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			char *aj = field(l, "ArrayJobId"), *at = field(l, "ArrayTaskId"), *st = field(l, "JobState");
			char *node = field(l, "BatchHost");
			if (!node)
				node = field(l, "NodeList");
			if (aj && at && st && strcmp(aj, job) == 0)
				tasks_add(T, job, offset, seq, at, st, node);
			free(aj);
			free(at);
			free(st);
			free(node);
		}
	sb_free(&out);
}

static int task_cmp(const void *a, const void *b)
{
	const struct slurm_task *x = a, *y = b;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void task_free(struct slurm_task *t)
{
	free(t->job);
	free(t->state);
	free(t->node);
}

void slurm_tasks_load(struct slurm_tasks *T, const struct slurm_jobs *J)
{
	memset(T, 0, sizeof(*T));
	for (size_t j = 0; j < J->n; j++) {
		tasks_ended(T, J->id[j], J->offset[j], 2 * j);
		/* squeue's word on what is in the queue comes after (seq 2j+1):
		 * accounting may lag behind */
		struct strbuf out = {0};
		char *argv[] = {"squeue", "-h", "-r", "-o", "%K|%T|%N", "-j", J->id[j], NULL};
		if (run_capture(argv, &out) == 0)
			for (char *save = NULL, *l = strtok_r(out.buf, "\n", &save); l;
			     l = strtok_r(NULL, "\n", &save)) {
				char *st = strchr(l, '|'), *node = st ? strchr(st + 1, '|') : NULL;
				if (!node)
					continue;
				*st++ = '\0';
				*node++ = '\0';
				tasks_add(T, J->id[j], J->offset[j], 2 * j + 1, l, st, node);
			}
		sb_free(&out);
	}
	if (T->n)
		qsort(T->t, T->n, sizeof(*T->t), task_cmp);
	/* keep the last word on each index */
	size_t k = 0;
	for (size_t i = 0; i < T->n; i++) {
		if (i + 1 < T->n && T->t[i + 1].index == T->t[i].index) {
			task_free(&T->t[i]);
			continue;
		}
		T->t[k++] = T->t[i];
	}
	T->n = k;
}

const struct slurm_task *slurm_tasks_find(const struct slurm_tasks *T, uint64_t i)
{
	size_t lo = 0, hi = T->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (T->t[mid].index < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < T->n && T->t[lo].index == i ? &T->t[lo] : NULL;
}

void slurm_tasks_free(struct slurm_tasks *T)
{
	for (size_t i = 0; i < T->n; i++)
		task_free(&T->t[i]);
	free(T->t);
	memset(T, 0, sizeof(*T));
}

void slurm_jobs_push(struct slurm_jobs *J, const char *job, uint64_t offset)
{
	for (size_t i = 0; i < J->n; i++)
		if (strcmp(J->id[i], job) == 0)
			return;
	J->id = xrealloc(J->id, (J->n + 1) * sizeof(*J->id));
	J->offset = xrealloc(J->offset, (J->n + 1) * sizeof(*J->offset));
	J->id[J->n] = xstrdup(job);
	J->offset[J->n++] = offset;
}

void slurm_jobs_read(const char *dir, struct slurm_jobs *J)
{
	char *path = xasprintf("%s/slurm/jobs", dir);
	size_t len;
	char *text = read_file(path, &len);
	free(path);
	memset(J, 0, sizeof(*J));
	for (char *save = NULL, *l = text ? strtok_r(text, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
		size_t d = strspn(l, "0123456789");
		if (!d || (l[d] && l[d] != ' '))
			continue; /* not written by matrix */
		uint64_t offset = l[d] ? strtoull(l + d + 1, NULL, 10) : 0;
		l[d] = '\0';
		slurm_jobs_push(J, l, offset);
	}
	free(text);
}

int slurm_jobs_add(const char *dir, const char *job, uint64_t offset)
{
	char *path = xasprintf("%s/slurm/jobs", dir);
	FILE *f = fopen(path, "a");
	free(path);
	if (!f)
		return -1;
	if (offset)
		fprintf(f, "%s %" PRIu64 "\n", job, offset);
	else
		fprintf(f, "%s\n", job);
	return fclose(f) == 0 ? 0 : -1;
}

void slurm_jobs_free(struct slurm_jobs *J)
{
	for (size_t i = 0; i < J->n; i++)
		free(J->id[i]);
	free(J->id);
	free(J->offset);
	memset(J, 0, sizeof(*J));
}

int slurm_cancel(const struct slurm_jobs *J, size_t from)
{
	if (from >= J->n)
		return 0;
	char **argv = xcalloc(J->n - from + 2, sizeof(char *));
	argv[0] = "scancel";
	for (size_t i = from; i < J->n; i++)
		argv[i - from + 1] = J->id[i];
	int rc = run_capture(argv, NULL);
	free(argv);
	return rc == 0 ? 0 : -1;
}

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	if (!got_signal)
		got_signal = sig;
}

void slurm_signals_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int slurm_interrupted(void)
{
	return got_signal;
}

void slurm_sleep(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	if (!got_signal)
		nanosleep(&ts, NULL); /* a signal ends it early (EINTR) */
}
