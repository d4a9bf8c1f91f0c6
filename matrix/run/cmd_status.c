/* cmd_status.c - `matrix status DIR`: how far a run directory is, without
 * changing it: the points of the study's grid (DIR/recipe.yaml expanded, the
 * whole grid whatever --only the runs kept; plan.csv holds only the last
 * run's points) with a row (results.csv, and the rows slurm tasks left in
 * rows/ that no front end merged yet), those whose slurm task is running or
 * pending (squeue, sacct or scontrol on the jobs in slurm/jobs), and those
 * that nothing runs; which --only subsets the runs kept (subsets.csv) and
 * how far each is; whether a runner holds the directory's lock. The exit
 * status says which of complete, in progress or stopped it is (see main.c's
 * help). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "exec_slurm.h"
#include "plan/argv.h"
#include "plan/grid.h"
#include "report/model.h"
#include "store.h"
#include "result.h"
#include "table.h"
#include "util.h"

/* One point of the plan and what is known of it. */
struct planned {
	char id[17];
	uint64_t index;
	char *status;           /* its row's status, NULL: no row */
	int queued;             /* 0, or 1 pending / 2 running in slurm */
};

static int planned_cmp(const void *a, const void *b)
{
	return strcmp(((const struct planned *)a)->id, ((const struct planned *)b)->id);
}

static struct planned *planned_find(struct planned *P, size_t n, const char *id)
{
	struct planned key = {0};
	if (strlen(id) != sizeof(key.id) - 1)
		return NULL;
	memcpy(key.id, id, sizeof(key.id));
	return bsearch(&key, P, n, sizeof(*P), planned_cmp);
}

/* Give the planned points of t (results.csv or a row file) their status;
 * returns the number of rows of planned points. */
static size_t take_rows(struct planned *P, size_t n, const struct table *t)
{
	long idc = table_column(t, "id"), stc = table_column(t, "status");
	size_t k = 0;
	for (size_t i = 0; idc >= 0 && stc >= 0 && i < t->nrows; i++) {
		struct planned *p = planned_find(P, n, t->rows[i].cell[idc]);
		if (!p)
			continue;
		free(p->status);
		p->status = xstrdup(t->rows[i].cell[stc]);
		k++;
	}
	return k;
}

/* The rows of DIR/rows/ID.csv files of points without a row in results.csv
 * (written by slurm tasks, not merged yet); returns how many. */
static size_t take_row_files(struct planned *P, size_t n, const char *dir)
{
	char *rows = xasprintf("%s/rows", dir);
	DIR *d = opendir(rows);
	free(rows);
	size_t k = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		char id[17];
		if (!result_row_file_id(e->d_name, id))
			continue;
		struct planned *p = planned_find(P, n, id);
		if (!p || p->status)
			continue;
		char *path = result_row_path(dir, id), *why = NULL;
		struct table t;
		if (table_read(path, &t, NULL, &why) == 0) {
			k += take_rows(P, n, &t);
			table_free(&t);
		}
		free(why);
		free(path);
	}
	if (d)
		closedir(d);
	return k;
}


/* Exit statuses: see the command's help in main.c. */
enum { STATUS_DONE = 0, STATUS_FAILED = 1, STATUS_RUNNING = 3, STATUS_STOPPED = 4 };

static const char *const statuses[] = {"ok", "unsupported", "failed", "oom", "timeout", "crashed"};

/* A part of the grid the runs on the directory kept (subsets.csv). */
struct subset {
	char *only;               /* the --only filter as given, "" the whole grid */
	struct grid_filter *f;    /* NULL: "", or no longer parses for recipe.yaml */
	size_t n, done;           /* its points in the grid, those with a row */
};

/* What is known of a run directory. */
struct tally {
	size_t n;                 /* points planned: the grid (or plan.csv's) */
	int from_plan;            /* 1: recipe.yaml did not load, plan.csv's points */
	struct subset *sub;       /* subsets.csv, in the order first run */
	size_t nsub;
	int whole, unknown;       /* some run kept the whole grid; a subset's points unknown */
	size_t outside;           /* missing points that no subset keeps */
	size_t count[ARRAY_SIZE(statuses) + 1]; /* rows per status (the last: any other) */
	size_t done, failed, running, pending, missing;
	size_t unmerged;          /* rows in DIR/rows/ */
	struct slurm_jobs jobs;   /* DIR/slurm/jobs */
	long in_queue, running_all; /* their tasks in squeue (in_queue -1: squeue failed) */
	char *waiting;            /* why most pending tasks wait (squeue's reason), or NULL */
};

/* DIR/plan.csv read into plan, to check that DIR is a run directory.
 * Returns -1 after saying why. */
static int plan_read(const char *dir, struct table *plan)
{
	char *path = xasprintf("%s/plan.csv", dir), *why = NULL;
	int rc = table_read(path, plan, NULL, &why);
	if (rc < 0 && (errno == ENOENT || errno == ENOTDIR) && !why) {
		char *recipe = xasprintf("%s/recipe.yaml", dir), *problem = NULL;
		if (merge_is_dir(dir))
			error("'%s' is a merged directory (matrix merge): it has no plan; 'matrix report' reads it "
			      "as one study", dir);
		else if (access(recipe, F_OK) != 0 && (problem = rundir_problem(dir)))
			error("%s", problem);
		else if (access(recipe, F_OK) != 0)
			error("'%s' is not a run directory: it has no plan.csv and no recipe.yaml", dir);
		else {
			char *q = shell_quoted(dir);
			error("'%s' has no plan.csv, the list of points a run writes when it starts, which status "
			      "counts against: 'matrix run --resume %s' writes it again and runs what is missing, "
			      "'matrix report %s' reads the results without it", dir, q, q);
			free(q);
		}
		free(problem);
		free(recipe);
	}
	else if (rc < 0)
		error("cannot read '%s': %s", path, why ? why : strerror(errno));
	free(why);
	free(path);
	if (rc < 0)
		return -1;
	if (table_column(plan, "id") < 0 || table_column(plan, "index") < 0) {
		error("'%s/plan.csv' has no id or index column: not a plan matrix wrote", dir);
		table_free(plan);
		return -1;
	}
	return 0;
}

/* The points of plan (the last run's: what --only kept), sorted by id. */
static struct planned *plan_points(const struct table *plan, size_t *n)
{
	long idc = table_column(plan, "id"), ixc = table_column(plan, "index");
	struct planned *P = xcalloc(plan->nrows ? plan->nrows : 1, sizeof(*P));
	*n = 0;
	for (size_t i = 0; i < plan->nrows; i++) {
		const char *id = plan->rows[i].cell[idc];
		if (strlen(id) != sizeof(P->id) - 1)
			continue;
		memcpy(P[*n].id, id, sizeof(P->id));
		P[(*n)++].index = strtoull(plan->rows[i].cell[ixc], NULL, 10);
	}
	qsort(P, *n, sizeof(*P), planned_cmp);
	return P;
}

/* The points of r's grid (the study's plan, whatever --only kept), sorted
 * by id. */
static struct planned *grid_points(const struct recipe *r, size_t *n)
{
	uint64_t total = grid_count(r);
	struct planned *P = xcalloc(total ? total : 1, sizeof(*P));
	*n = 0;
	struct grid g;
	grid_init(&g, r);
	for (const struct point *p; *n < total && (p = grid_next(&g));) {
		memcpy(P[*n].id, p->id, sizeof(P->id));
		P[(*n)++].index = p->index;
	}
	grid_free(&g);
	qsort(P, *n, sizeof(*P), planned_cmp);
	return P;
}

/* The subsets of subsets.csv and, with r, their points and those done;
 * the missing points no subset keeps (c->outside). */
static void subsets_count(const char *dir, const struct recipe *r, struct planned *P, size_t n,
			  struct tally *c)
{
	char **only = store_subsets_read(dir, &c->nsub);
	if (!c->nsub)
		return;
	c->sub = xcalloc(c->nsub, sizeof(*c->sub));
	FILE *quiet = fopen("/dev/null", "w"); /* a filter the recipe no longer has: said below */
	for (size_t k = 0; k < c->nsub; k++) {
		c->sub[k].only = only[k];
		c->whole |= !*only[k];
		if (*only[k] && r && quiet)
			c->sub[k].f = grid_filter_parse(r, only[k], quiet);
		c->unknown |= *only[k] && !c->sub[k].f;
	}
	free(only);
	if (quiet)
		fclose(quiet);
	if (!r)
		return;
	struct grid g;
	grid_init(&g, r);
	for (const struct point *p; (p = grid_next(&g));) {
		struct planned *q = planned_find(P, n, p->id);
		int kept = 0;
		for (size_t k = 0; q && k < c->nsub; k++)
			if (c->sub[k].f && grid_filter_match(c->sub[k].f, p)) {
				c->sub[k].n++;
				c->sub[k].done += q->status != NULL;
				kept = 1;
			}
		c->outside += q && !kept && !q->status && !q->queued;
	}
	grid_free(&g);
}

static void subsets_print(const struct tally *c)
{
	if (!c->nsub || (c->nsub == 1 && c->whole))
		return;
	printf("  subsets ");
	for (size_t k = 0; k < c->nsub; k++) {
		const struct subset *u = &c->sub[k];
		char *t = text_term(u->only, 200);
		if (!*u->only)
			printf("%s the whole grid", k ? ";" : "");
		else if (u->f)
			printf("%s --only %s (%zu point%s, %zu done)", k ? ";" : "", t, u->n, plural_s(u->n), u->done);
		else
			printf("%s --only %s (its points unknown: %s)", k ? ";" : "", t,
			       c->from_plan ? "recipe.yaml does not load" : "recipe.yaml no longer has them");
		free(t);
	}
	printf("\n");
}

static void subsets_free(struct tally *c)
{
	for (size_t k = 0; k < c->nsub; k++) {
		free(c->sub[k].only);
		grid_filter_free(c->sub[k].f);
	}
	free(c->sub);
}

/* Which points without a row have a slurm task queued (1) or running (2). */
static void slurm_queued(const char *dir, struct planned *P, size_t n, struct tally *c)
{
	slurm_jobs_read(dir, &c->jobs);
	c->in_queue = c->jobs.n ? slurm_active(&c->jobs, &c->running_all, &c->waiting) : 0;
	if (c->in_queue <= 0)
		return;
	struct slurm_tasks T;
	slurm_tasks_load(&T, &c->jobs);
	for (size_t i = 0; i < n; i++) {
		const struct slurm_task *t = P[i].status ? NULL : slurm_tasks_find(&T, P[i].index);
		if (t && slurm_state_active(t->state))
			P[i].queued = strcmp(t->state, "RUNNING") == 0 || strcmp(t->state, "COMPLETING") == 0 ? 2 : 1;
	}
	slurm_tasks_free(&T);
}

static void tally_count(const struct planned *P, size_t n, struct tally *c)
{
	c->n = n;
	for (size_t i = 0; i < n; i++) {
		if (P[i].status) {
			size_t s = 0;
			while (s < ARRAY_SIZE(statuses) && strcmp(P[i].status, statuses[s]) != 0)
				s++;
			c->count[s]++;
			c->done++;
			c->failed += s >= 2;
		} else {
			c->running += P[i].queued == 2;
			c->pending += P[i].queued == 1;
		}
	}
	c->missing = n - c->done - c->running - c->pending;
}

static void tally_print(const char *dir, const char *qdir, const struct tally *c)
{
	struct strbuf by = {0};
	for (size_t s = 0; s <= ARRAY_SIZE(statuses); s++)
		if (c->count[s])
			sb_printf(&by, "%s%zu %s", by.len ? ", " : "", c->count[s],
				  s < ARRAY_SIZE(statuses) ? statuses[s] : "other");
	if (c->from_plan)
		printf("%s: %zu point%s planned (plan.csv, the last run's: recipe.yaml does not load)\n", dir, c->n,
		       plural_s(c->n));
	else
		printf("%s: %zu point%s planned (the grid of recipe.yaml)\n", dir, c->n, plural_s(c->n));
	printf("  done     %6zu%s%s%s\n", c->done, by.len ? "  (" : "", by.len ? by.buf : "", by.len ? ")" : "");
	printf("  running  %6zu\n  pending  %6zu", c->running, c->pending);
	if (c->pending && c->waiting) /* a partition down, a QOS limit: what keeps them */
		printf("  (waiting: %s)", c->waiting);
	printf("\n  missing  %6zu  (no row, not queued)\n", c->missing);
	sb_free(&by);
	subsets_print(c);
	if (c->jobs.n) {
		printf("  slurm    job%s", c->jobs.n > 1 ? "s" : "");
		for (size_t i = 0; i < c->jobs.n; i++)
			printf(" %s", c->jobs.id[i]);
		if (c->in_queue < 0)
			printf(": squeue failed, what is queued is unknown\n");
		else
			printf(": %ld tasks in the queue, %ld of them running\n", c->in_queue, c->running_all);
	}
	if (c->unmerged)
		printf("  rows     %6zu  in %s/rows, not in results.csv yet ('matrix run --resume %s' merges %s)\n",
		       c->unmerged, dir, qdir, c->unmerged == 1 ? "it" : "them");
}

/* The last line, and the exit status; qdir: dir quoted for a shell, for the
 * commands it suggests. */
static int tally_verdict(const char *dir, const char *qdir, const struct tally *c)
{
	long holder = store_lock_holder(dir);
	if (c->done == c->n && c->failed == 0) {
		printf("complete: every planned point has a row\n");
		return STATUS_DONE;
	}
	if (c->done == c->n) {
		printf("complete: %zu point%s failed (run %s again with 'matrix run --resume %s --retry-failed')\n",
		       c->failed, plural_s(c->failed), c->failed == 1 ? "it" : "them", qdir);
		return STATUS_FAILED;
	}
	if (holder) {
		printf("in progress: a runner (pid %ld) holds '%s'\n", holder, dir);
		return STATUS_RUNNING;
	}
	if (c->running || c->pending || c->in_queue > 0) {
		printf("in progress: %zu point%s queued or running in slurm; 'matrix run --resume %s' follows them "
		       "and collects their rows\n", c->running + c->pending, plural_s(c->running + c->pending), qdir);
		return STATUS_RUNNING;
	}
	if (c->in_queue < 0) {
		printf("unknown: squeue failed, and %zu point%s no row\n", c->n - c->done,
		       c->n - c->done == 1 ? " has" : "s have");
		return STATUS_RUNNING;
	}
	if (c->nsub && !c->whole && !c->unknown && c->outside == c->missing)
		printf("stopped: %zu point%s no row: no run kept %s (--only); 'matrix run --resume %s' "
		       "runs %s\n", c->missing, c->missing == 1 ? " has" : "s have", c->missing == 1 ? "it" : "them",
		       qdir, c->missing == 1 ? "it" : "them");
	else
		printf("stopped: %zu point%s no row and nothing runs %s ('matrix run --resume %s' runs %s)\n",
		       c->missing, c->missing == 1 ? " has" : "s have", c->missing == 1 ? "it" : "them", qdir,
		       c->missing == 1 ? "it" : "them");
	return STATUS_STOPPED;
}

int cmd_status(int argc, char **argv)
{
	const char *dir = NULL;
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1]) {
			cmd_unknown_option("status", argv[i]);
			return cmd_usage("status");
		}
		if (dir) {
			error("status: more than one run directory given ('%s' and '%s')", dir, argv[i]);
			return cmd_usage("status");
		}
		dir = argv[i];
	}
	if (!dir) {
		error("status: no run directory given");
		return cmd_usage("status");
	}
	struct table plan;
	if (plan_read(dir, &plan) < 0)
		return 2;
	struct tally c = {0};
	struct recipe r;
	char *rpath = xasprintf("%s/recipe.yaml", dir);
	int have_r = recipe_load(rpath, &r, stderr) == 0;
	free(rpath);
	size_t n;
	struct planned *P = have_r ? grid_points(&r, &n) : plan_points(&plan, &n);
	c.from_plan = !have_r;
	char *results_path = xasprintf("%s/results.csv", dir), *why = NULL;
	struct table res;
	int unread = 0;
	if (table_read(results_path, &res, NULL, &why) == 0) {
		take_rows(P, n, &res);
		table_free(&res);
	} else if (errno != ENOENT || why) {
		/* no count would be true: "done 0, missing N" is not */
		error("cannot read '%s': %s; which points are done is unknown", results_path,
		      why ? why : strerror(errno));
		unread = 1;
	}
	free(why);
	free(results_path);
	if (unread) {
		if (have_r)
			recipe_free(&r);
		free(P);
		table_free(&plan);
		return 2;
	}
	c.unmerged = take_row_files(P, n, dir);
	slurm_queued(dir, P, n, &c);
	tally_count(P, n, &c);
	subsets_count(dir, have_r ? &r : NULL, P, n, &c);
	struct strbuf qdir = {0};
	argv_shell_quote(&qdir, dir);
	tally_print(dir, qdir.buf, &c);
	int rc = tally_verdict(dir, qdir.buf, &c);
	sb_free(&qdir);
	subsets_free(&c);
	if (have_r)
		recipe_free(&r);
	for (size_t i = 0; i < n; i++)
		free(P[i].status);
	free(P);
	slurm_jobs_free(&c.jobs);
	free(c.waiting);
	table_free(&plan);
	return rc;
}
