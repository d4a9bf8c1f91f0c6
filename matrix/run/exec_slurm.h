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

/* One array: the plan indices of its points and what each task asks for. */
struct slurm_array {
	long gpus;                /* --gpus-per-task; 0: a CPU array */
	struct strbuf spec;       /* the --array ranges, "1-3,5" */
	uint64_t last;            /* last index added (ranges are built in order) */
	uint64_t run_start;       /* first index of the open range */
	size_t ntasks;
	char *job;                /* its job id once submitted */
};

/* Add plan index i (ascending) to a's ranges; slurm_array_close ends them. */
void slurm_array_add(struct slurm_array *a, uint64_t i);
void slurm_array_close(struct slurm_array *a);
void slurm_array_free(struct slurm_array *a);

/* Whether this machine can submit: sbatch, squeue and scancel on PATH, and
 * the recipe's partition known to sinfo. Returns 0, or -1 after printing why. */
int slurm_check(const struct slurm_spec *sp, FILE *err);
/* The sbatch command of array a (NULL terminated; slurm_argv_free it): the
 * task script, its output under dir_abs/slurm/, the recipe's options; the
 * time limit per task is sp->time_s, or timeout + grace + 60 s. */
char **slurm_sbatch_argv(const struct slurm_spec *sp, const struct recipe *r, const char *dir_abs,
			 const char *script, const struct slurm_array *a);
void slurm_argv_free(char **argv);
/* Submit: runs argv; sets *job to the job id. On refusal prints sbatch's
 * message to err and returns -1. */
int slurm_submit(char *const *argv, char **job, FILE *err);
/* Tasks of these jobs still in squeue (pending or running), or -1 when
 * squeue failed. */
long slurm_active(char *const *jobs, size_t njobs, long *running);
/* One array task as Slurm reports it. Its index is the point's plan index. */
struct slurm_task {
	uint64_t index;
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
void slurm_tasks_load(struct slurm_tasks *T, char *const *jobs, size_t njobs);
/* The task of plan index i, or NULL when no job knows it. */
const struct slurm_task *slurm_tasks_find(const struct slurm_tasks *T, uint64_t i);
void slurm_tasks_free(struct slurm_tasks *T);
/* Whether a task in state still runs or waits to (not one that ended):
 * PENDING, RUNNING, CONFIGURING, COMPLETING, SUSPENDED, REQUEUED, ... */
int slurm_state_active(const char *state);

/* The jobs a run directory submitted (DIR/slurm/jobs, one id a line, oldest
 * first; NULL when none); slurm_jobs_add appends one. */
char **slurm_jobs_read(const char *dir, size_t *njobs);
int slurm_jobs_add(const char *dir, const char *job);
void slurm_jobs_free(char **jobs, size_t njobs);
/* scancel every job; 0 when scancel succeeded. */
int slurm_cancel(char *const *jobs, size_t njobs);

/* SIGINT, SIGTERM and SIGHUP set a flag read by slurm_interrupted. */
void slurm_signals_install(void);
int slurm_interrupted(void);
/* Sleep s seconds or until a signal arrives. */
void slurm_sleep(double s);

#endif
