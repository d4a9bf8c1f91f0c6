/* images.h - the images of a recipe's `container` levels, for `matrix run`
 * and `matrix build`: the runtime each runs under (its entry's, or the first
 * of podman and docker that works), its reference (a `build:` entry's tag,
 * localhost/matrix-RECIPE-NAME), building or pulling what is missing, and
 * the image id each point's row records. */
#ifndef MATRIX_IMAGES_H
#define MATRIX_IMAGES_H

#include <stddef.h>
#include <stdio.h>

#include "executor.h"
#include "plan/recipe.h"

struct images {
	size_t n;                        /* the container factor's levels */
	const struct container **entry;  /* the recipe's entry of each level */
	struct exec_image *im;           /* its runtime, reference, limits */
	char **id;                       /* its image id once known, else NULL */
	char **digest;                   /* its repository digests once known, else NULL */
	char **failed;                   /* why its image could not be had, else NULL */
	int *built;                      /* 1: built (or pulled) by images_ensure */
	char *cache;                     /* the host's cache directory (images_cache), or NULL */
	char *cache_none;                /* why there is none (containers.cache: off, ...), or NULL */
};

/* Resolve every level of r's container factor (cf) into I: the runtime
 * (probed: the one named, or the first of podman and docker that works) and
 * the --user it needs. Returns -1 after one error on stderr when a runtime
 * needed is absent or cannot start, or would ignore a level's cpus or
 * memory (rootless on cgroups v1) (free I with images_free all the same);
 * a dry run says so on stderr instead and goes on with the runtime named
 * (auto: the first installed), so that its commands can be shown. */
int images_resolve(struct images *I, const struct recipe *r, long cf, int dry_run);

/* The host directory mounted into every container of I as its engines'
 * caches (executor.h, EXEC_CACHE_MOUNT): r's containers.cache, else the
 * native engine's plan cache directory ($MATRIX_PLAN_CACHE, else
 * $XDG_CACHE_HOME/matrix, else ~/.cache/matrix) + "/containers"; none when
 * containers.cache or MATRIX_PLAN_CACHE is off. Created (mode 0700, with
 * plan/ and torch/) unless dry_run. Returns -1 after an error on stderr when
 * it cannot be made or written (a dry run: a warning, 0). Each level's
 * image id, when its runtime has the image, names its torch/ subdirectory
 * (images_ensure names it for the images it builds or pulls). */
int images_cache(struct images *I, const struct recipe *r, int dry_run);

/* Make sure each level j with want[j] has an image: its id when present; a
 * `build:` entry that is missing (every one with rebuild) is built and an
 * image reference that is missing pulled, their output in
 * logdir/build-NAME.log (logdir NULL: on stdout). One that fails is
 * I->failed[j] (the log's last lines), not an error: its points fail, the
 * others run. Progress lines on out. Returns how many failed. */
size_t images_ensure(struct images *I, const unsigned char *want, const char *logdir, int rebuild, FILE *out);

/* Label the containers of I as the run directory rundir_abs's
 * (matrix.run=HASH) and, unless dry_run, remove those an earlier runner of
 * it left (one killed by SIGKILL cannot remove them itself) under every
 * runtime of I, saying how many on out. */
void images_claim_run(struct images *I, const char *rundir_abs, int dry_run, FILE *out);

/* env.txt's lines on the images: per level of the container factor,
 * "container: NAME runtime=RT image=REF id=ID [digest=REPO@sha256:...]
 * [user=UID:GID]" (the id "unknown" when it could not be had); then
 * "container_cache: HOST mounted at /matrix-cache" or "container_cache:
 * none (WHY)". */
void images_describe(const struct images *I, struct strbuf *sb);

void images_free(struct images *I);

#endif
