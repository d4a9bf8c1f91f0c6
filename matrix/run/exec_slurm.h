/* exec_slurm.h - the slurm executor: the points still to run become sbatch
 * job arrays (one per kind of point: CPU, or GPU with --gpus-per-task), each
 * task running `matrix run-point DIR INDEX`, which writes the point's row to
 * a file of its own (store_row_write); the front end (cmd_run.c's batch
 * mode) follows the arrays with squeue, merges the rows, asks sacct (or
 * scontrol) what became of a task that left no row, and scancels on an
 * interrupt.
 *
 * Not a struct executor_ops: that interface starts one point in a slot and
 * waits for it, which would be one sbatch per point, no array throttle, and
 * no single job to follow or cancel; here the scheduler holds the slots. */
#ifndef MATRIX_EXEC_SLURM_H
#define MATRIX_EXEC_SLURM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "plan/recipe.h"
#include "util.h"

/* One array: the plan indices of its points and what each task asks for.
 * Its task ids are the plan indices less offset: Slurm refuses task ids of
 * MaxArraySize and above (1001 by default), so a larger study is several
 * arrays, the task script adding the offset back (its one argument). */
struct slurm_array {
	long gpus;                /* --gpus-per-task; 0: a CPU array */
	uint64_t offset;          /* plan index = task id + offset */
	struct strbuf spec;       /* the --array ranges of task ids, "1-3,5" */
	uint64_t last;            /* last index added (ranges are built in order) */
	uint64_t run_start;       /* first index of the open range */
	size_t ntasks;
	char *job;                /* its job id once submitted */
};

/* Add plan index i (ascending, above a->offset) to a's ranges;
 * slurm_array_close ends them. */
void slurm_array_add(struct slurm_array *a, uint64_t i);
void slurm_array_close(struct slurm_array *a);
void slurm_array_free(struct slurm_array *a);

/* Whether this machine can submit: sbatch, squeue and scancel on PATH, the
 * recipe's partitions known to sinfo, and the time limit per task within
 * their MaxTime (else the tasks would pend for ever). Returns 0, or -1
 * after printing why. */
int slurm_check(const struct slurm_spec *sp, const struct recipe *r, FILE *err);
/* The time limit per task, seconds: sp->time_s, or timeout + grace + 60 s. */
long slurm_task_time(const struct slurm_spec *sp, const struct recipe *r);
/* The largest array task id this cluster takes (MaxArraySize - 1, from
 * `scontrol show config`), or its SchedulerParameters' max_array_tasks
 * (tasks in one array) when smaller: the study's arrays are blocks of that
 * many plan indices; 0 when unknown (then no limit is assumed). */
uint64_t slurm_max_task(void);
/* The sbatch command of array a (NULL terminated; slurm_argv_free it): the
 * task script, its output under dir_abs/slurm/, the recipe's options; the
 * time limit per task is sp->time_s, or timeout + grace + 60 s. */
char **slurm_sbatch_argv(const struct slurm_spec *sp, const struct recipe *r, const char *dir_abs,
			 const char *script, const struct slurm_array *a);
void slurm_argv_free(char **argv);
/* The last line of a task's output file path, cleaned for a terminal
 * ("" when it has none); NULL when the file cannot be read. */
char *slurm_output_last_line(const char *path);
/* Ask sbatch --test-only whether Slurm would take array a (a wrapped
 * `true` in place of the task script, nothing submitted): a partition,
 * account or QOS it does not know, GPUs, CPUs or memory no node has, an
 * array it refuses. Returns 0, or -1 after printing sbatch's reason. */
int slurm_test(const struct slurm_spec *sp, const struct recipe *r, const char *dir_abs,
	       const struct slurm_array *a, FILE *err);
/* Submit: runs argv; sets *job to the job id. On refusal prints sbatch's
 * message to err and returns -1. */
int slurm_submit(char *const *argv, char **job, FILE *err);
/* The jobs of a run directory (DIR/slurm/jobs, oldest first), each with
 * the offset of its array's task ids. */
struct slurm_jobs {
	char **id;
	uint64_t *offset;
	size_t n;
};
/* Add job (with its offset) unless it is there already. */
void slurm_jobs_push(struct slurm_jobs *J, const char *job, uint64_t offset);
/* Tasks of the jobs of J still in squeue (pending or running), or -1 when
 * squeue failed; *running of them running. With waiting, *waiting is
 * Slurm's reason why most pending tasks wait (JobArrayTaskLimit,
 * Resources, PartitionDown, QOSMaxWallDurationPerJobLimit, ...; allocated),
 * or NULL. */
long slurm_active(const struct slurm_jobs *J, long *running, char **waiting);
/* One array task as Slurm reports it. Its index is the point's plan index
 * (its task id plus its job's offset). */
struct slurm_task {
	uint64_t index;
	uint64_t task;            /* its array task id */
	char *job;                /* the array's job id */
	char *state;              /* PENDING, RUNNING, COMPLETED, TIMEOUT, OUT_OF_MEMORY, ... */
	char *node;               /* where it ran or runs; NULL when none yet */
	size_t seq;               /* the job's place in the list it was loaded from */
};
/* The tasks of several jobs, sorted by index: for an index in more than one
 * job, the task of the job that comes last (the latest submission). */
struct slurm_tasks {
	struct slurm_task *t;
	size_t n;
};
/* Ask Slurm about every task of jobs (arrays, oldest first): sacct (or, when
 * accounting is off, scontrol) for what ended, squeue for what is in the
 * queue. A job Slurm has forgotten adds nothing. */
void slurm_tasks_load(struct slurm_tasks *T, const struct slurm_jobs *J);
/* The task of plan index i, or NULL when no job knows it. */
const struct slurm_task *slurm_tasks_find(const struct slurm_tasks *T, uint64_t i);
void slurm_tasks_free(struct slurm_tasks *T);
/* Whether a task in state still runs or waits to (not one that ended):
 * PENDING, RUNNING, CONFIGURING, COMPLETING, SUSPENDED, REQUEUED, ... */
int slurm_state_active(const char *state);

/* The jobs a run directory submitted (DIR/slurm/jobs, a line per job: its
 * id, then its offset when not 0; oldest first) into J; slurm_jobs_add
 * appends one. */
void slurm_jobs_read(const char *dir, struct slurm_jobs *J);
int slurm_jobs_add(const char *dir, const char *job, uint64_t offset);
void slurm_jobs_free(struct slurm_jobs *J);
/* The ids of the jobs, joined by sep (allocated). */
char *slurm_jobs_list(const struct slurm_jobs *J, const char *sep);
/* scancel the jobs J->id[from..]; 0 when scancel succeeded. */
int slurm_cancel(const struct slurm_jobs *J, size_t from);

/* SIGINT, SIGTERM and SIGHUP set a flag read by slurm_interrupted. */
void slurm_signals_install(void);
int slurm_interrupted(void);
/* Sleep s seconds or until a signal arrives. */
void slurm_sleep(double s);

#endif
