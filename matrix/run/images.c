/* images.c - the images of the container levels (images.h). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images.h"
#include "util.h"

static int program_in_path(const char *name)
{
	const char *path = getenv("PATH");
	for (const char *p = path ? path : ""; *p;) {
		size_t n = strcspn(p, ":");
		char *f = xasprintf("%.*s/%s", (int)n, p, name);
		int ok = access(f, X_OK) == 0;
		free(f);
		if (ok)
			return 1;
		p += n + (p[n] == ':');
	}
	return 0;
}

/* The tag a `build:` container is built as: localhost/matrix-RECIPE-NAME. */
static char *image_tag(const char *recipe, const char *name)
{
	char *t = xasprintf("localhost/matrix-%s-%s", recipe, name);
	for (char *c = t; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
		else if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || strchr("/.-_", *c)))
			*c = '-';
	return t;
}

/* A level's cpus and memory must hold: 0 when it has none or its runtime rt
 * (one that works) enforces them; else an error on stderr and -1 (a dry
 * run: the error as a warning, 0). *probed and *why keep rt's answer for
 * the next levels. */
static int limits_check(const struct container *c, const char *rt, int *probed, char **why, int dry_run)
{
	if (!c->cpus && !c->memory)
		return 0;
	if (!*probed) {
		*why = exec_container_limits(rt);
		*probed = 1;
	}
	if (!*why)
		return 0;
	error("%scontainer '%s': %s%s%s%s%s cannot be enforced: %s; run as root, boot with cgroups v2 "
	      "(systemd.unified_cgroup_hierarchy=1), or drop the container's cpus and memory%s",
	      dry_run ? "dry run: " : "", c->name, c->cpus ? "cpus: " : "", c->cpus ? c->cpus : "",
	      c->cpus && c->memory ? ", " : "", c->memory ? "memory: " : "", c->memory ? c->memory : "", *why,
	      dry_run ? ": the run would stop with this error" : "");
	return dry_run ? 0 : -1;
}

/* Long (~85 lines): one pass over the levels keeps the probe results of
 * both runtimes (works, why, user, warned, limits) that every later level reuses;
 * a split would pass that state around for no clearer code. */
int images_resolve(struct images *I, const struct recipe *r, long cf, int dry_run)
{
	static const char *const all[] = {"podman", "docker"};
	const struct factor *f = &r->factors[cf];
	char *why[2] = {0};
	int works[2] = {-1, -1}; /* -1: not probed yet */
	char *user[2] = {0};
	int warned[2] = {0}; /* a dry run said that this runtime does not work */
	int lim_probed[2] = {0};
	char *lim_why[2] = {0}; /* why it cannot enforce --cpus and --memory */
	int rc = 0;
	memset(I, 0, sizeof(*I));
	I->n = f->nlevels;
	I->entry = xcalloc(I->n, sizeof(*I->entry));
	I->im = xcalloc(I->n, sizeof(*I->im));
	I->id = xcalloc(I->n, sizeof(*I->id));
	I->digest = xcalloc(I->n, sizeof(*I->digest));
	I->failed = xcalloc(I->n, sizeof(*I->failed));
	I->built = xcalloc(I->n, sizeof(*I->built));
	for (size_t j = 0; j < I->n && rc == 0; j++) {
		const struct container *c = NULL;
		for (size_t i = 0; i < r->ncontainers; i++)
			if (!strcmp(r->containers[i].name, f->levels[j]))
				c = &r->containers[i];
		if (!c)
			BUG("container level '%s' without an entry", f->levels[j]);
		I->entry[j] = c;
		const char *rt = NULL;
		size_t k;
		/* a dry run probes as the run does, so that it shows the runtime
		 * and the --user the run will use */
		for (k = 0; k < 2 && !rt; k++) {
			if (c->runtime && strcmp(c->runtime, all[k]))
				continue;
			if (works[k] < 0) {
				works[k] = exec_container_probe(all[k], &why[k]) == 0;
				if (works[k])
					user[k] = exec_container_user(all[k]);
			}
			if (works[k])
				break;
		}
		if (k < 2) {
			rt = all[k];
			if (limits_check(c, rt, &lim_probed[k], &lim_why[k], dry_run) < 0)
				rc = -1;
		} else {
			struct strbuf sb = {0};
			for (k = 0; k < 2; k++)
				if (works[k] == 0)
					sb_printf(&sb, "%s%s: %s", sb.len ? "; " : "", all[k], why[k]);
			if (dry_run) {
				/* the commands as they would be with the runtime named, else
				 * the first installed, once it works */
				if (c->runtime)
					k = strcmp(c->runtime, "podman") == 0 ? 0 : 1;
				else
					k = program_in_path("podman") || !program_in_path("docker") ? 0 : 1;
				rt = all[k];
				if (!warned[k]++) {
					user[k] = exec_container_user(rt);
					error("dry run: container '%s' needs %s, and it does not work here (%s): the run would "
					      "stop with this error; the commands below are %s's once it works",
					      c->name, c->runtime ? c->runtime : "podman or docker", sb.buf ? sb.buf : "", rt);
				}
			} else {
				error("container '%s' needs %s, and it does not work here (%s): install podman (with "
				      "runc or crun) or docker.io and start dockerd, or set DOCKER_HOST / CONTAINERS_CONF",
				      c->name, c->runtime ? c->runtime : "podman or docker", sb.buf ? sb.buf : "");
				rc = -1;
				rt = "podman";
			}
			sb_free(&sb);
		}
		k = strcmp(rt, "podman") == 0 ? 0 : 1;
		I->im[j] = (struct exec_image){
			.runtime = rt, .network = c->network, .cpus = c->cpus, .memory = c->memory,
			.user = user[k] ? xstrdup(user[k]) : NULL,
			.ref = c->build ? image_tag(r->name, c->name) : xstrdup(c->image)};
	}
	for (size_t k = 0; k < 2; k++) {
		free(why[k]);
		free(user[k]);
		free(lim_why[k]);
	}
	return rc;
}

/* The torch/ subdirectory of image id: its first 12 hex digits. */
static char *cache_key(const char *id)
{
	const char *h = strncmp(id, "sha256:", 7) == 0 ? id + 7 : id;
	char *k = xstrndup(h, 12);
	for (char *c = k; *c; c++)
		if (!strchr("0123456789abcdefABCDEF", *c))
			*c = '_';
	return k;
}

/* mkdir -p dir, each directory it makes mode 0700. 0, or -1 with errno. */
static int mkdirs(const char *dir)
{
	char *d = xstrdup(dir);
	int rc = 0;
	for (char *p = d + 1; rc == 0 && *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(d, 0700) != 0 && errno != EEXIST)
				rc = -1;
			*p = '/';
		}
	struct stat st;
	if (rc == 0 && mkdir(d, 0700) != 0 && errno != EEXIST)
		rc = -1;
	else if (rc == 0 && stat(d, &st) == 0 && !S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		rc = -1;
	}
	free(d);
	return rc;
}

/* The cache directory the recipe's value v (NULL: the default) names into
 * *dir, or NULL with *none (off) or *why (it cannot be named). */
static void cache_name(const char *v, char **dir, char **none, char **why)
{
	*dir = *none = *why = NULL;
	const char *env = getenv("MATRIX_PLAN_CACHE"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char cwd[PATH_MAX];
	if (v && !strcmp(v, "off"))
		*none = xstrdup("containers.cache: off");
	else if (v)
		*dir = xstrdup(v);
	else if (env && !strcmp(env, "off"))
		*none = xstrdup("MATRIX_PLAN_CACHE=off");
	else if (env && *env && env[0] == '/')
		*dir = xasprintf("%s/containers", env);
	else if (env && *env)
		*dir = getcwd(cwd, sizeof(cwd)) ? xasprintf("%s/%s/containers", cwd, env) : NULL;
	else if (xdg && xdg[0] == '/')
		*dir = xasprintf("%s/matrix/containers", xdg);
	else if (home && home[0] == '/')
		*dir = xasprintf("%s/.cache/matrix/containers", home);
	if (!*dir && !*none)
		*why = xstrdup(env && *env ? "the working directory cannot be named (MATRIX_PLAN_CACHE is relative)"
					   : "neither MATRIX_PLAN_CACHE, XDG_CACHE_HOME nor HOME names a directory");
	else if (*dir && strpbrk(*dir, ":,"))
		*why = xasprintf("'%s' holds ':' or ',', which a container runtime's --volume cannot carry", *dir);
}

/* Whether a USER runs as root: none, root or uid 0 (any group). */
static int user_is_root(const char *u)
{
	size_t n = strcspn(u, ":");
	return n == 0 || (n == 4 && !strncmp(u, "root", 4)) || (n == 1 && u[0] == '0');
}

/* Level j's user, once its image is known: an image with a USER of its own
 * (not root) would run as a user that can write neither the run directory
 * (the result file: every point failed, 'Permission denied') nor the cache,
 * where no --user is given (the runner is root, or the runtime rootless):
 * it runs with --user=0:0, the container's root, which is the runner on the
 * host (as a rootful docker run by a user gets that user's --user). */
static void set_user(struct images *I, size_t j)
{
	struct exec_image *im = &I->im[j];
	if (im->image_user) { /* set here before: the image may have changed */
		free((char *)im->image_user);
		free((char *)im->user);
		im->image_user = im->user = NULL;
	}
	if (im->user)
		return; /* the runner's own --user already */
	char *u = exec_container_image_user(im->runtime, im->ref);
	if (u && !user_is_root(u)) {
		im->image_user = u;
		im->user = xstrdup("0:0");
	} else {
		free(u);
	}
}

int images_cache(struct images *I, const struct recipe *r, int dry_run)
{
	char *dir, *why;
	cache_name(r->container_cache, &dir, &I->cache_none, &why);
	if (dir && !why && dry_run) {
		/* made by the run: its first part that exists must be a directory this user can write */
		char *d = xstrdup(dir), *slash;
		struct stat st;
		while (stat(d, &st) != 0 && errno == ENOENT && (slash = strrchr(d, '/')) && slash > d)
			*slash = '\0';
		int found = stat(d, &st) == 0;
		if (!found || !S_ISDIR(st.st_mode) || access(d, W_OK | X_OK) != 0)
			why = xasprintf("cannot make or write '%s': '%s' %s", dir, d,
					found && !S_ISDIR(st.st_mode) ? "is not a directory" : "cannot be written");
		free(d);
	} else if (dir && !why) {
		static const char *const sub[] = {"", "/plan", "/torch"};
		for (size_t i = 0; i < ARRAY_SIZE(sub) && !why; i++) {
			char *d = xasprintf("%s%s", dir, sub[i]);
			if (mkdirs(d) != 0 || access(d, W_OK | X_OK) != 0)
				why = xasprintf("cannot make or write '%s': %s", d, strerror(errno));
			free(d);
		}
	}
	if (why) {
		error("%scontainers.cache: %s; name a directory this user can write (containers.cache: DIR, or "
		      "MATRIX_PLAN_CACHE / XDG_CACHE_HOME / HOME), or run without the cache (containers.cache: off)%s",
		      dry_run ? "dry run: " : "", why, dry_run ? ": the run would stop with this error" : "");
		free(why);
		free(dir);
		return dry_run ? 0 : -1;
	}
	I->cache = dir;
	for (size_t j = 0; j < I->n; j++) {
		I->im[j].cache = I->cache;
		I->im[j].cache_none = I->cache_none;
		char *id = NULL, *w = NULL;
		if (exec_container_image_id(I->im[j].runtime, I->im[j].ref, &id, &w) == 0) {
			/* a dry run shows the --user of an image that is here */
			if (I->cache)
				I->im[j].cache_key = cache_key(id);
			set_user(I, j);
		}
		free(id);
		free(w);
	}
	return 0;
}

/* Level j's torch/ subdirectory from its id, once known, and its user. */
static void set_key(struct images *I, size_t j)
{
	free((char *)I->im[j].cache_key);
	I->im[j].cache_key = I->cache && I->id[j] ? cache_key(I->id[j]) : NULL;
	if (I->id[j])
		set_user(I, j);
}

size_t images_ensure(struct images *I, const unsigned char *want, const char *logdir, int rebuild, FILE *out)
{
	size_t nfailed = 0;
	for (size_t j = 0; j < I->n; j++) {
		if (want && !want[j])
			continue;
		const struct exec_image *im = &I->im[j];
		const struct container *c = I->entry[j];
		char *why = NULL;
		free(I->id[j]);
		I->id[j] = NULL;
		free(I->digest[j]);
		I->digest[j] = NULL;
		free(I->failed[j]);
		I->failed[j] = NULL;
		if (!(rebuild && c->build) && exec_container_image_id(im->runtime, im->ref, &I->id[j], &why) == 0) {
			I->digest[j] = exec_container_image_digest(im->runtime, im->ref);
			set_key(I, j);
			continue;
		}
		free(why);
		why = NULL;
		char *log = logdir ? xasprintf("%s/build-%s.log", logdir, c->name) : NULL;
		int ok;
		if (c->build) {
			fprintf(out, "matrix: building '%s' from '%s' with %s%s%s\n", im->ref, c->build, im->runtime,
				log ? "; log in " : "", log ? log : "");
			fflush(out);
			fflush(stdout);
			struct exec_build b = {.dir = c->build, .context = c->context, .args = c->args, .nargs = c->nargs};
			ok = exec_container_build(im->runtime, &b, im->ref, log, &why) == 0;
		} else {
			fprintf(out, "matrix: pulling '%s' with %s%s%s\n", im->ref, im->runtime, log ? "; log in " : "",
				log ? log : "");
			fflush(out);
			fflush(stdout);
			ok = exec_container_pull(im->runtime, im->ref, log, &why) == 0;
		}
		if (ok && exec_container_image_id(im->runtime, im->ref, &I->id[j], &why) == 0) {
			I->built[j] = 1;
			I->digest[j] = exec_container_image_digest(im->runtime, im->ref);
			set_key(I, j);
		} else {
			I->failed[j] = xasprintf("container '%s': no image: %s", c->name, why ? why : "");
			fprintf(out, "matrix: %s\n", I->failed[j]);
			nfailed++;
		}
		free(why);
		free(log);
	}
	return nfailed;
}

void images_claim_run(struct images *I, const char *rundir_abs, int dry_run, FILE *out)
{
	char *label = exec_container_run_label(rundir_abs);
	const char *done[2] = {0};
	for (size_t j = 0; j < I->n; j++) {
		free((char *)I->im[j].run_label);
		I->im[j].run_label = xstrdup(label);
		const char *rt = I->im[j].runtime;
		if (dry_run || (done[0] && !strcmp(done[0], rt)) || (done[1] && !strcmp(done[1], rt)))
			continue;
		done[done[0] ? 1 : 0] = rt;
		long n = exec_container_remove_stale(rt, label);
		if (n > 0)
			fprintf(out, "matrix: removed %ld %s container%s that an earlier runner of this directory left\n", n,
				rt, n == 1 ? "" : "s");
	}
	free(label);
}

void images_describe(const struct images *I, struct strbuf *sb)
{
	for (size_t j = 0; j < I->n; j++) {
		const struct exec_image *im = &I->im[j];
		sb_printf(sb, "container: %s runtime=%s image=%s id=%s", I->entry[j]->name, im->runtime, im->ref,
			  I->id[j] ? I->id[j] : "unknown");
		if (I->digest[j])
			sb_printf(sb, " digest=%s", I->digest[j]);
		if (im->user)
			sb_printf(sb, " user=%s", im->user);
		if (im->image_user)
			sb_printf(sb, " image_user=%s", im->image_user);
		sb_putc(sb, '\n');
	}
	if (I->cache)
		sb_printf(sb, "container_cache: %s mounted at %s\n", I->cache, EXEC_CACHE_MOUNT);
	else if (I->cache_none)
		sb_printf(sb, "container_cache: none (%s)\n", I->cache_none);
}

void images_free(struct images *I)
{
	for (size_t j = 0; j < I->n; j++) {
		free((char *)I->im[j].ref);
		free((char *)I->im[j].user);
		free((char *)I->im[j].image_user);
		free((char *)I->im[j].run_label);
		free((char *)I->im[j].cache_key);
		free(I->id[j]);
		free(I->digest[j]);
		free(I->failed[j]);
	}
	free(I->entry);
	free(I->im);
	free(I->id);
	free(I->digest);
	free(I->failed);
	free(I->built);
	free(I->cache);
	free(I->cache_none);
	memset(I, 0, sizeof(*I));
}
