/* plot.c - gnuplot driven from C. A figure is a data file and a script
 * written into the run's plots/ directory (so that it can be re-drawn or
 * edited by hand: `cd plots && gnuplot NAME.gp`), the script made from the
 * templates in plots/ of the source tree (installed in $(pkgdatadir)/plots).
 * Each script draws an SVG and a PNG. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plot.h"
#include "util.h"

#ifndef MATRIX_SRC_PLOTS
#define MATRIX_SRC_PLOTS "plots"
#endif
#ifndef MATRIX_PLOTS_PKGDATADIR
#define MATRIX_PLOTS_PKGDATADIR "/usr/local/share/matrix/plots"
#endif

/* Okabe & Ito (2008), "Color Universal Design": distinguishable with every
 * common colour-vision deficiency. Yellow last: weak on white. */
static const char *const okabe_ito[] = {
	"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442",
};

const char *plot_color(size_t i)
{
	return okabe_ito[i % ARRAY_SIZE(okabe_ito)];
}

static int has_style(const char *dir)
{
	char *p = xasprintf("%s/style.gp", dir);
	int ok = access(p, R_OK) == 0;
	free(p);
	return ok;
}

const char *plot_templates_dir(void)
{
	static char *dir;
	if (dir)
		return dir;
	const char *env = getenv("MATRIX_PLOTS_DIR");
	if (env && *env) {
		dir = xstrdup(env);
		return has_style(dir) ? dir : NULL;
	}
	const char *self = self_dir();
	if (self) {
		char *p = xasprintf("%s/../share/matrix/plots", self);
		if (has_style(p))
			return dir = p;
		free(p);
	}
	if (has_style(MATRIX_PLOTS_PKGDATADIR))
		return dir = xstrdup(MATRIX_PLOTS_PKGDATADIR);
	if (has_style(MATRIX_SRC_PLOTS))
		return dir = xstrdup(MATRIX_SRC_PLOTS);
	return NULL;
}

const char *plot_gnuplot(void)
{
	const char *g = getenv("GNUPLOT");
	return g && *g ? g : "gnuplot";
}

/* Whether the gnuplot command can be executed (PATH searched). */
static int gnuplot_found(const char *g)
{
	if (strchr(g, '/'))
		return access(g, X_OK) == 0;
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);
		char *p = xasprintf("%.*s/%s", (int)n, n ? path : ".", g);
		int ok = access(p, X_OK) == 0;
		free(p);
		if (ok)
			return 1;
		path += n + (end ? 1 : 0);
	}
	return 0;
}

/* Whitelist escaping: letters, digits, space, bytes of multi-byte UTF-8
 * characters and a few inert punctuation marks are written as they are;
 * every other byte is written as an octal escape (\ooo), so that no byte of
 * the text can end the string, start a backquoted command (`), a macro (@)
 * or anything else gnuplot reads as code. The characters that enhanced text
 * gives a meaning to (_ ^ @ & { } ~ \) get an escaped backslash first, so
 * that they are shown as they are. A tic label is also a format: its '%'
 * is doubled. Control characters are shown as text (text_clean). */
static void quote(struct strbuf *sb, const char *s, int tic)
{
	if (!s)
		return;
	/* control characters as text, invalid UTF-8 as U+FFFD: the figure's
	 * SVG stays valid XML and valid UTF-8 */
	char *clean = text_clean(s, strlen(s), 0);
	for (s = clean; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80 ||
		    strchr(" .,:;-+/=()[]<>!?*|'", c)) {
			sb_putc(sb, (char)c);
			continue;
		}
		if (c == '%') {
			sb_puts(sb, tic ? "%%" : "%");
			continue;
		}
		if (strchr("_^@&{}~\\", c))
			sb_puts(sb, "\\134");
		sb_printf(sb, "\\%03o", c);
	}
	free(clean);
}

void plot_quote(struct strbuf *sb, const char *s)
{
	quote(sb, s, 0);
}

void plot_quote_tic(struct strbuf *sb, const char *s)
{
	quote(sb, s, 1);
}

/* Replace @KEY@ by its value in one line of a template; an unknown key is
 * an error. */
static int substitute_line(const char *p, const char *stop, const char *const *kv, size_t nkv,
			   struct strbuf *out, char **why)
{
	while (p < stop) {
		const char *at = memchr(p, '@', (size_t)(stop - p));
		if (!at) {
			sb_add(out, p, (size_t)(stop - p));
			break;
		}
		sb_add(out, p, (size_t)(at - p));
		const char *end = at + 1;
		while (end < stop && ((*end >= 'A' && *end <= 'Z') || *end == '_'))
			end++;
		if (end == stop || *end != '@' || end == at + 1) {
			sb_putc(out, '@');
			p = at + 1;
			continue;
		}
		size_t k;
		for (k = 0; k < nkv; k++)
			if (strlen(kv[2 * k]) == (size_t)(end - at - 1) &&
			    strncmp(kv[2 * k], at + 1, (size_t)(end - at - 1)) == 0)
				break;
		if (k == nkv) {
			*why = xasprintf("template key @%.*s@ has no value", (int)(end - at - 1), at + 1);
			return -1;
		}
		sb_puts(out, kv[2 * k + 1]);
		p = end + 1;
	}
	return 0;
}

/* Replace @KEY@ by its value in a template, except in its comment lines: a
 * value may span lines, and a comment would let all but its first line out
 * (or, ending in a backslash, swallow the next). */
static int substitute(const char *text, const char *const *kv, size_t nkv, struct strbuf *out,
		      char **why)
{
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		const char *stop = nl ? nl + 1 : p + strlen(p);
		const char *q = p + strspn(p, " \t");
		if (*q == '#')
			sb_add(out, p, (size_t)(stop - p));
		else if (substitute_line(p, stop, kv, nkv, out, why) != 0)
			return -1;
		p = stop;
	}
	return 0;
}

static void plot_fail(struct plot_set *ps, struct plot *p, char *why)
{
	p->why = why;
	ps->failed = 1;
	if (!ps->why)
		ps->why = xstrdup(why);
}

/* A new entry of ps with its name, title and caption (may be NULL). */
static struct plot *plot_add(struct plot_set *ps, const char *name, const char *title, const char *caption)
{
	if (ps->n == ps->cap) {
		ps->cap = ps->cap ? 2 * ps->cap : 16;
		ps->p = xrealloc(ps->p, ps->cap * sizeof(*ps->p));
	}
	struct plot *p = &ps->p[ps->n++];
	memset(p, 0, sizeof(*p));
	p->name = xstrdup(name);
	p->title = xstrdup(title);
	p->caption = caption ? xstrdup(caption) : NULL;
	return p;
}

int plot_prepare(struct plot_set *ps, const char *plotdir, const char *name, const char *title,
		 const char *caption, const char *tmpl, const char *const *kv, size_t nkv,
		 int width, int height)
{
	struct plot *p = plot_add(ps, name, title, caption);

	const char *dir = plot_templates_dir();
	if (!dir) {
		plot_fail(ps, p, xstrdup("the gnuplot templates (style.gp) were not found: set MATRIX_PLOTS_DIR"));
		return -1;
	}
	char *spath = xasprintf("%s/style.gp", dir);
	char *tpath = xasprintf("%s/%s.gp", dir, tmpl);
	char *style = read_file(spath, NULL);
	char *body = read_file(tpath, NULL);
	struct strbuf sb = {0};
	char *why = NULL;
	char w[32], h[32];
	snprintf(w, sizeof(w), "%d", width);
	snprintf(h, sizeof(h), "%d", height);
	const char **all = xmalloc((2 * nkv + 6) * sizeof(char *));
	memcpy(all, kv, 2 * nkv * sizeof(char *));
	all[2 * nkv + 0] = "NAME";
	all[2 * nkv + 1] = name;
	all[2 * nkv + 2] = "WIDTH";
	all[2 * nkv + 3] = w;
	all[2 * nkv + 4] = "HEIGHT";
	all[2 * nkv + 5] = h;
	int rc = -1;
	if (!style || !body) {
		why = xasprintf("unable to read template '%s': %s", !style ? spath : tpath, strerror(errno));
		goto out;
	}
	/* The script draws twice, SVG then PNG, running the whole body each
	 * time: a figure in panels (multiplot) cannot be replotted. */
	sb_printf(&sb, "# %s.gp - drawn by `matrix report` from the template %s.gp;\n"
		       "# re-draw with: cd plots && gnuplot %s.gp\n", name, tmpl, name);
	sb_printf(&sb, "do for [matrix_png = 0:1] {\n"
		       "if (matrix_png) {\n"
		       "  if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
		       "    set terminal pngcairo size %d,%d enhanced font \"Helvetica,13\" background rgb \"white\"\n"
		       "  } else {\n"
		       "    set terminal png size %d,%d enhanced background rgb \"white\"\n"
		       "  }\n"
		       "  set output \"%s.png\"\n"
		       "} else {\n"
		       "  set terminal svg size %d,%d dynamic enhanced font \"Helvetica,13\" background rgb \"white\"\n"
		       "  set output \"%s.svg\"\n"
		       "}\n",
		  width, height, width, height, name, width, height, name);
	if (substitute(style, all, nkv + 3, &sb, &why) != 0 || substitute(body, all, nkv + 3, &sb, &why) != 0)
		goto out;
	sb_puts(&sb, "\nunset output\n}\n");
	char *gp = xasprintf("%s/%s.gp", plotdir, name);
	if (write_file_atomic(gp, sb.buf, sb.len) != 0)
		why = xasprintf("unable to write '%s': %s", gp, strerror(errno));
	else
		rc = 0;
	free(gp);
out:
	if (rc != 0)
		plot_fail(ps, p, why ? why : xstrdup("cannot prepare the figure"));
	free(all);
	sb_free(&sb);
	free(style);
	free(body);
	free(spath);
	free(tpath);
	return rc;
}

void plot_note_empty(struct plot_set *ps, const char *name, const char *title, const char *caption,
		     const char *why)
{
	struct plot *p = plot_add(ps, name, title, caption);
	p->why = xstrdup(why);
	p->empty = 1;
}

/* Start gnuplot on plot p in plotdir; stderr to <name>.err. */
static pid_t plot_spawn(const char *plotdir, const struct plot *p, const char *gnuplot)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	if (chdir(plotdir) != 0)
		_exit(126);
	char *errpath = xasprintf("%s.err", p->name);
	int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		dup2(fd, 2);
		close(fd);
	}
	int nul = open("/dev/null", O_RDWR);
	if (nul >= 0) {
		dup2(nul, 0);
		dup2(nul, 1);
		close(nul);
	}
	char *script = xasprintf("%s.gp", p->name);
	execlp(gnuplot, gnuplot, script, (char *)NULL);
	_exit(127);
}

/* The last non-empty line of <name>.err, for the report. */
static char *last_error_line(const char *plotdir, const char *name)
{
	char *path = xasprintf("%s/%s.err", plotdir, name);
	char *text = read_file(path, NULL);
	free(path);
	if (!text)
		return xstrdup("gnuplot failed");
	char *line = NULL;
	for (char *s = strtok(text, "\n"); s; s = strtok(NULL, "\n"))
		if (strspn(s, " \t^") < strlen(s))
			line = s;
	char *r = xstrdup(line ? line : "gnuplot failed");
	free(text);
	return r;
}

/* Gnuplot is missing: every figure not yet failed fails with why. Returns
 * the number of figures (none is drawn). */
static size_t plot_fail_all(struct plot_set *ps, const char *gnuplot, FILE *err)
{
	size_t failed = 0;
	char *why = xasprintf("gnuplot not found ('%s'): install the Debian package gnuplot-nox "
			      "(or set GNUPLOT) to draw the figures", gnuplot);
	fprintf(err, "matrix: %s; tables and pages written without figures\n", why);
	for (size_t i = 0; i < ps->n; i++)
		if (ps->p[i].empty)
			continue;
		else if (!ps->p[i].why) {
			plot_fail(ps, &ps->p[i], xstrdup(why));
			failed++;
		} else {
			failed++;
		}
	free(why);
	return failed;
}

/* Figure p's gnuplot ended (waitpid gave pid and status): drawn when it
 * exited 0 and wrote a non-empty svg, else failed with why; its .err file
 * is removed once drawn. */
static void plot_finish(struct plot_set *ps, struct plot *p, const char *plotdir, const char *gnuplot,
			pid_t pid, int status)
{
	if (pid < 0) {
		plot_fail(ps, p, xasprintf("cannot wait for gnuplot: %s", strerror(errno)));
		return;
	}
	char *svg = xasprintf("%s/%s.svg", plotdir, p->name);
	struct stat st;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		plot_fail(ps, p, xasprintf("cannot run '%s': install the Debian package gnuplot-nox", gnuplot));
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		plot_fail(ps, p, last_error_line(plotdir, p->name));
	else if (stat(svg, &st) != 0 || st.st_size == 0)
		plot_fail(ps, p, xasprintf("gnuplot wrote no %s.svg", p->name));
	else
		p->drawn = 1;
	free(svg);
	char *errpath = xasprintf("%s/%s.err", plotdir, p->name);
	if (p->drawn)
		unlink(errpath);
	free(errpath);
}

size_t plot_run_all(struct plot_set *ps, const char *plotdir, FILE *err)
{
	const char *gnuplot = plot_gnuplot();
	size_t failed = 0;
	if (!gnuplot_found(gnuplot))
		return plot_fail_all(ps, gnuplot, err);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t jobs = ncpu > 1 ? (size_t)ncpu : 1;
	if (jobs > 8)
		jobs = 8;
	/* Children are waited for by pid, oldest first, so that a caller's
	 * other children (matrix run's points) are never reaped here. */
	pid_t *pids = xcalloc(ps->n ? ps->n : 1, sizeof(pid_t));
	size_t next = 0, oldest = 0, running = 0;
	while (next < ps->n || running) {
		while (next < ps->n && running < jobs) {
			if (ps->p[next].why) {
				next++;
				continue;
			}
			pids[next] = plot_spawn(plotdir, &ps->p[next], gnuplot);
			if (pids[next] < 0)
				plot_fail(ps, &ps->p[next], xasprintf("cannot start gnuplot: %s", strerror(errno)));
			else
				running++;
			next++;
		}
		if (!running)
			break;
		while (oldest < next && pids[oldest] <= 0)
			oldest++;
		size_t i = oldest++;
		int status;
		pid_t pid;
		do
			pid = waitpid(pids[i], &status, 0);
		while (pid < 0 && errno == EINTR);
		running--;
		pids[i] = 0;
		plot_finish(ps, &ps->p[i], plotdir, gnuplot, pid, status);
	}
	free(pids);
	for (size_t i = 0; i < ps->n; i++)
		if (!ps->p[i].drawn && !ps->p[i].empty) {
			failed++;
			fprintf(err, "matrix: figure '%s' not drawn: %s\n", ps->p[i].name,
				ps->p[i].why ? ps->p[i].why : "unknown reason");
		}
	return failed;
}

void plot_set_free(struct plot_set *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		free(ps->p[i].name);
		free(ps->p[i].title);
		free(ps->p[i].caption);
		free(ps->p[i].why);
	}
	free(ps->p);
	free(ps->why);
	memset(ps, 0, sizeof(*ps));
}
