/* executor.h - where the points of a study run. The study loop (cmd_run.c)
 * knows an executor only through this interface: start a point in a slot,
 * wait for a finished point, cancel every running point, describe the
 * environment the points run in. exec_local.c is the first implementation
 * (fork/exec on this machine); a container or Slurm executor provides the
 * same operations (DESIGN.md, "Executors").
 *
 * Slots: the study loop runs at most nslots points at once and names each by
 * its slot, 0 .. nslots-1; a slot is free again once wait returned it. */
#ifndef MATRIX_EXECUTOR_H
#define MATRIX_EXECUTOR_H

#include <stddef.h>
#include <stdio.h>

struct strbuf;

/* What a point needs from the machine. */
struct exec_resources {
	double timeout_s;     /* 0: none; then SIGTERM (or the executor's equivalent) */
	double grace_s;       /* seconds between SIGTERM and SIGKILL */
	int gpu;              /* 1: the point uses the GPU (runs alone) */
};

/* The image a point runs in (the container executor). */
struct exec_image {
	const char *runtime;  /* "podman" | "docker" */
	const char *ref;      /* the image: a reference or an id */
	const char *network;  /* --network ("none" by default) */
	const char *cpus;     /* --cpus, or NULL */
	const char *memory;   /* --memory (and --memory-swap: no swap), or NULL */
	const char *user;     /* --user ("UID:GID"), or NULL: the image's user */
	const char *image_user; /* the image's own USER (not root) that user
	                         * overrides with "0:0" (images.h), or NULL */
	const char *run_label; /* matrix.run=... on its containers: the run directory's */
	const char *cache;    /* the host's cache directory mounted read-write at
	                       * EXEC_CACHE_MOUNT (images_cache), or NULL: none */
	const char *cache_key; /* the image's own subdirectory of torch/ (its id's
	                        * first 12 hex digits), or NULL: not known yet */
	const char *cache_none; /* without a cache: why (its point's log says it) */
};

/* Where the cache directory is in a container: the native engine's plan
 * cache in plan/ (shared by every image: its files are named by GPU and
 * library versions), PyTorch's inductor and Triton caches in
 * torch/KEY/inductor and torch/KEY/triton (one per image). */
#define EXEC_CACHE_MOUNT "/matrix-cache"

/* One point to start: the engine's command, where its output and result go. */
struct exec_point {
	const char *id;           /* the point's id (names its container) */
	const struct exec_image *image; /* container executor: the image, NULL: on the host */
	char *const *argv;        /* NULL terminated; argv[0] searched in PATH */
	char *const *env;         /* extra "K=V" strings, NULL terminated, or NULL */
	const char *log_path;     /* stdout and stderr */
	const char *result_path;  /* the engine's result file (already in argv/env) */
	const char *cwd;          /* the directory it runs in, or NULL: the runner's */
	const char *log_head;     /* a line written at the top of its log, or NULL */
	struct exec_resources res;
};

/* How a point ended. */
struct exec_exit {
	int wstatus;          /* as from waitpid(2) */
	int timed_out;        /* it was ended for running past timeout_s */
	double wall_s;        /* seconds from start to exit */
	int oom_killed;       /* the container's memory limit killed it */
};

struct executor;
struct executor_ops {
	const char *name;     /* "local" */
	/* Start pt in slot (free). Returns 0, or -1 after printing why to err. */
	int (*start)(struct executor *ex, size_t slot, const struct exec_point *pt, FILE *err);
	/* Wait until a point is done: returns its slot and fills *out; -1 at once
	 * when nothing runs; -2 when an interrupt (SIGINT, SIGTERM, SIGHUP)
	 * arrived. Deals with timeouts meanwhile. */
	long (*wait)(struct executor *ex, struct exec_exit *out);
	/* The interrupting signal received so far, or 0. */
	int (*interrupted)(struct executor *ex);
	/* End every running point and forget it (its slot is free again). */
	void (*cancel_all)(struct executor *ex);
	/* Append "key: value" lines about where points run (CPU, GPUs) to sb. */
	void (*describe)(struct executor *ex, struct strbuf *sb);
	void (*free)(struct executor *ex);
};

struct executor {
	const struct executor_ops *ops;
	size_t nslots;
	void *state;          /* the implementation's */
};

/* The local executor: points fork/exec'd on this machine (exec_local.c).
 * Installs its signal handling. Returns NULL after printing why to err. */
struct executor *exec_local_new(size_t nslots, double grace_s, FILE *err);

/* The container executor (exec_container.c): a point with an image runs
 * as `RUNTIME run --name ... IMAGE argv` under the local executor, rundir
 * mounted at its own path; after it ends its container is inspected (exit
 * code, OOM kill), killed when it timed out or was cancelled, and removed. A
 * point without an image runs on the host. Returns NULL after printing why. */
struct executor *exec_container_new(size_t nslots, double grace_s, const char *rundir, FILE *err);
/* Why the absolute run directory cannot be mounted (--volume SRC:DST: it
 * holds ':' or ','), allocated, or NULL when it can. */
char *exec_container_dir_why(const char *abs);

/* The `RUNTIME run ...` argv of pt under the container name `name` (NULL
 * terminated, free each string and the array), for the executor and for
 * --dry-run. rundir is mounted at its own (absolute) path. */
char **exec_container_argv(const struct exec_point *pt, const char *name, const char *rundir);

/* Whether runtime works here (`RUNTIME info` succeeds): 0, or -1 with what it
 * printed (the caller frees *why). */
int exec_container_probe(const char *runtime, char **why);

/* The id of image ref under runtime into *id (free it): 0, or -1 with why. */
int exec_container_image_id(const char *runtime, const char *ref, char **id, char **why);

/* The repository digests of image ref under runtime ("REPO@sha256:...",
 * space-separated; free it), or NULL when it has none (built here, never
 * pushed or pulled) or cannot be inspected. */
char *exec_container_image_digest(const char *runtime, const char *ref);

/* The user image ref runs as under runtime, its USER (free it), or NULL
 * when it names none (root) or cannot be inspected. */
char *exec_container_image_user(const char *runtime, const char *ref);

/* What to build: the Containerfile (or Dockerfile) in dir, with context
 * (dir when NULL) and "NAME=VALUE" build arguments args[0..nargs-1]. */
struct exec_build {
	const char *dir, *context;
	char *const *args;
	size_t nargs;
};

/* Build b as image tag, output to log_path (NULL: to this process's
 * stdout): 0, or -1 with why (the log's last lines). */
int exec_container_build(const char *runtime, const struct exec_build *b, const char *tag, const char *log_path,
			 char **why);

/* Pull ref, output to log_path: 0, or -1 with why (its last lines). */
int exec_container_pull(const char *runtime, const char *ref, const char *log_path, char **why);

/* The label value of a run directory's containers (free it): a hash of its
 * absolute path, so that `--filter label=matrix.run=VALUE` finds them. */
char *exec_container_run_label(const char *rundir_abs);

/* Remove (kill first) every container of runtime labelled
 * matrix.run=label: what a runner killed by SIGKILL left. Returns how many,
 * -1 when the runtime could not list them. */
long exec_container_remove_stale(const char *runtime, const char *label);

/* The --user a point's container runs as under runtime (free it), or NULL:
 * "UID:GID" of this process when it is not root and runtime is a rootful
 * docker (its containers' root would own the files written into the run
 * directory); NULL as root (root owns them either way) and with rootless
 * podman or docker, where the container's root is this user already. */
char *exec_container_user(const char *runtime);

/* Why runtime cannot enforce a container's --cpus and --memory here (free
 * it), or NULL when it can (or cannot be asked): rootless podman or docker on
 * cgroups v1 run the container without them, with a warning only. */
char *exec_container_limits(const char *runtime);

#endif
