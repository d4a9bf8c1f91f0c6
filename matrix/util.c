/* util.c - allocation, strings, hashing, small parsers, files. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static void oom(size_t n)
{
	fprintf(stderr, "matrix: out of memory (asked for %zu bytes)\n", n);
	exit(1);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *d = xmalloc(n + 1);
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		BUG("vsnprintf failed for '%s'", fmt);
	char *s = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

static void verror_to(FILE *f, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	char *msg = xmalloc((size_t)(n < 0 ? 0 : n) + 1);
	vsnprintf(msg, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap2);
	va_end(ap2);
	char *clean = text_term(msg, TEXT_TERM_MAX);
	fprintf(f, "matrix: %s\n", clean);
	free(clean);
	free(msg);
}

void error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verror_to(stderr, fmt, ap);
	va_end(ap);
}

void error_to(FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verror_to(f, fmt, ap);
	va_end(ap);
}

void bug_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "matrix: BUG at %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void sb_add(struct strbuf *sb, const char *s, size_t n)
{
	if (sb->len + n + 1 > sb->cap) {
		size_t cap = sb->cap ? sb->cap : 64;
		while (cap < sb->len + n + 1)
			cap *= 2;
		sb->buf = xrealloc(sb->buf, cap);
		sb->cap = cap;
	}
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_puts(struct strbuf *sb, const char *s)
{
	sb_add(sb, s, strlen(s));
}

void sb_putc(struct strbuf *sb, char c)
{
	sb_add(sb, &c, 1);
}

void sb_vprintf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	if (n < 0)
		BUG("vsnprintf failed for '%s'", fmt);
	sb_add(sb, "", 0);
	if (sb->len + (size_t)n + 1 > sb->cap) {
		sb->cap = sb->len + (size_t)n + 64;
		sb->buf = xrealloc(sb->buf, sb->cap);
	}
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	sb->len += (size_t)n;
}

void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(sb, fmt, ap);
	va_end(ap);
}

void sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void sb_free(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

uint64_t hash64(const void *data, size_t n, uint64_t h)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	/* final avalanche (splitmix64), so that close inputs give far ids */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return (size_t)-1;
	size_t prev[65], cur[65];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, (lb + 1) * sizeof(size_t));
	}
	return prev[lb];
}

/* v with p significant digits, written as fmt_sig3 says. */
static const char *fmt_sig(char *buf, double v, int p)
{
	if (!isfinite(v)) {
		buf[0] = '\0';
		return buf;
	}
	snprintf(buf, 32, "%.*g", p, v == 0 ? 0.0 : v);
	double r = strtod(buf, NULL), a = fabs(r);
	if (a >= 1e3 && a < 1e6 && strchr(buf, 'e'))
		snprintf(buf, 32, "%.0f", r); /* 3.2e+04 -> 32000 */
	return buf;
}

const char *fmt_sig3(char *buf, double v)
{
	return fmt_sig(buf, v, 3);
}

/* -1, 0, 1: x below, at, above y */
static int side(double x, double y)
{
	return (x > y) - (x < y);
}

/* The significant digits (3 to 9) that fmt_sig_range gives lo and hi. */
static int range_digits(double lo, double hi, double pivot)
{
	char a[32], b[32];
	for (int p = 3;; p++) {
		fmt_sig(a, lo, p);
		fmt_sig(b, hi, p);
		if (p == 9 || !isfinite(lo) || !isfinite(hi))
			return p;
		double rl = strtod(a, NULL), rh = strtod(b, NULL);
		int apart = lo == hi || strcmp(a, b) != 0;
		int sides = !isfinite(pivot) || (side(rl, pivot) == side(lo, pivot) && side(rh, pivot) == side(hi, pivot));
		if (apart && sides)
			return p;
	}
}

void fmt_sig_range(char *a, char *b, double lo, double hi, double pivot)
{
	int p = range_digits(lo, hi, pivot);
	fmt_sig(a, lo, p);
	fmt_sig(b, hi, p);
}

const char *fmt_sig_in(char *buf, double v, double lo, double hi, double pivot)
{
	int p = isfinite(lo) && isfinite(hi) ? range_digits(lo, hi, pivot) : 3;
	return fmt_sig(buf, v, p);
}

const char *fmt_sig_digits(char *buf, double v, int p)
{
	return fmt_sig(buf, v, p < 3 ? 3 : p > 9 ? 9 : p);
}

int fmt_sig_range_digits(double lo, double hi, double pivot)
{
	return isfinite(lo) && isfinite(hi) ? range_digits(lo, hi, pivot) : 3;
}

const char *fmt_full(char *buf, double v)
{
	if (!isfinite(v)) {
		buf[0] = '\0';
		return buf;
	}
	snprintf(buf, 32, "%.15g", v == 0 ? 0.0 : v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, 32, "%.17g", v);
	return buf;
}

void json_quote(struct strbuf *sb, const char *s)
{
	sb_putc(sb, '"');
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		size_t len = utf8_len(p + i, n - i);
		if (!len) {
			sb_puts(sb, "\\ufffd");
			i++;
		} else if (p[i] == '"' || p[i] == '\\') {
			sb_printf(sb, "\\%c", p[i]);
			i++;
		} else if (p[i] < 0x20 || p[i] == 0x7f) {
			sb_printf(sb, "\\u%04x", p[i]);
			i++;
		} else {
			sb_add(sb, (const char *)p + i, len);
			i += len;
		}
	}
	sb_putc(sb, '"');
}

int parse_double(const char *s, double *out)
{
	char *end;
	if (!*s)
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int parse_long(const char *s, long *out)
{
	char *end;
	if (!*s)
		return -1;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int parse_duration(const char *s, double *seconds)
{
	static const struct {
		const char *suffix;
		double scale;
	} units[] = {{"ms", 1e-3}, {"us", 1e-6}, {"s", 1}, {"m", 60}, {"min", 60}, {"h", 3600}};
	size_t n = strlen(s);
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		size_t ls = strlen(units[i].suffix);
		if (n <= ls || strcmp(s + n - ls, units[i].suffix) != 0)
			continue;
		char num[64];
		if (n - ls >= sizeof(num))
			return -1;
		memcpy(num, s, n - ls);
		num[n - ls] = '\0';
		double v;
		if (!(num[0] >= '0' && num[0] <= '9') && num[0] != '.')
			continue;
		if (parse_double(num, &v) == 0 && v >= 0) {
			*seconds = v * units[i].scale;
			return 0;
		}
	}
	return -1;
}

double now_monotonic(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

char *read_file(const char *path, size_t *len)
{
	return read_file_max(path, SIZE_MAX - 1, len);
}

char *read_file_max(const char *path, size_t max, size_t *len)
{
	/* opened without blocking: a FIFO nobody writes reads as empty instead
	 * of hanging the open; then read as usual (a pipe with a writer blocks) */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	struct strbuf sb = {0};
	char buf[65536];
	for (;;) {
		if (sb.len > max) {
			close(fd);
			sb_free(&sb);
			errno = EFBIG;
			return NULL;
		}
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			sb_free(&sb);
			errno = e;
			return NULL;
		}
		if (n == 0)
			break;
		sb_add(&sb, buf, (size_t)n);
	}
	close(fd);
	sb_add(&sb, "", 0);
	if (len)
		*len = sb.len;
	return sb.buf;
}

char *read_file_capped(const char *path, size_t cap, int nofollow, size_t *len, char **why)
{
	*why = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (nofollow ? O_NOFOLLOW : 0));
	if (fd < 0) {
		if (errno == ELOOP && nofollow)
			*why = xstrdup("is a symbolic link");
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		*why = xasprintf("cannot be examined: %s", strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = xstrdup("is not a regular file");
		close(fd);
		return NULL;
	}
	if ((uintmax_t)st.st_size > cap) {
		*why = xasprintf("is %jd bytes (more than %zu)", (intmax_t)st.st_size, cap);
		close(fd);
		return NULL;
	}
	/* the size may change while we read: read at most cap + 1 bytes */
	struct strbuf sb = {0};
	char buf[65536];
	while (sb.len <= cap) {
		size_t want = cap + 1 - sb.len < sizeof(buf) ? cap + 1 - sb.len : sizeof(buf);
		ssize_t n = read(fd, buf, want);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			*why = xasprintf("cannot be read: %s", strerror(errno));
			close(fd);
			sb_free(&sb);
			return NULL;
		}
		if (n == 0)
			break;
		sb_add(&sb, buf, (size_t)n);
	}
	close(fd);
	if (sb.len > cap) {
		*why = xasprintf("is more than %zu bytes", cap);
		sb_free(&sb);
		return NULL;
	}
	sb_add(&sb, "", 0);
	if (len)
		*len = sb.len;
	return sb.buf;
}

size_t text_columns(const char *s, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += ((unsigned char)s[i] & 0xc0) != 0x80;
	return k;
}

size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf; /* the range of the second byte */
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else
		return 0;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

char *text_clean(const char *s, size_t n, size_t max)
{
	struct strbuf sb = {0};
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		char esc[8];
		const char *piece = (const char *)p + i;
		size_t len = utf8_len(p + i, n - i), step = len ? len : 1;
		if (!len) {
			piece = "\xef\xbf\xbd"; /* U+FFFD */
			len = 3;
		} else if ((p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7f) {
			snprintf(esc, sizeof(esc), "\\x%02x", p[i]);
			piece = esc;
			len = 4;
		} else if (p[i] == 0xc2 && p[i + 1] < 0xa0) {
			snprintf(esc, sizeof(esc), "\\u%04x", p[i + 1]);
			piece = esc;
			len = 6;
		}
		if (max && sb.len + len > max)
			break;
		sb_add(&sb, piece, len);
		i += step;
	}
	sb_add(&sb, "", 0);
	return sb.buf;
}

char *text_clean_lines(const char *s, size_t n)
{
	struct strbuf sb = {0};
	sb_add(&sb, "", 0);
	for (size_t i = 0; i <= n;) {
		const char *nl = memchr(s + i, '\n', n - i);
		size_t end = nl ? (size_t)(nl - s) : n;
		char *line = text_clean(s + i, end - i, 0);
		sb_puts(&sb, line);
		free(line);
		if (!nl)
			break;
		sb_putc(&sb, '\n');
		i = end + 1;
	}
	return sb.buf;
}

/* The last byte of s[0..n) that starts a character (n when none). */
static size_t char_start_before(const char *s, size_t n)
{
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

char *text_term(const char *s, size_t max)
{
	char *clean = text_clean(s, strlen(s), 0);
	size_t len = strlen(clean);
	if (len <= max)
		return clean;
	/* three quarters from the start, a quarter from the end, each cut
	 * before a character */
	size_t head = char_start_before(clean, max * 3 / 4);
	size_t tail = char_start_before(clean, len - max / 4);
	char *out = xasprintf("%.*s[... %zu bytes left out ...]%s", (int)head, clean, tail - head, clean + tail);
	free(clean);
	return out;
}

int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int write_file_atomic(const char *path, const void *data, size_t len)
{
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		goto fail;
	if (write_all(fd, data, len) < 0 || fsync(fd) < 0) {
		close(fd);
		goto fail_unlink;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0)
		goto fail_unlink;
	free(tmp);
	return 0;
fail_unlink:;
	int e = errno;
	unlink(tmp);
	errno = e;
fail:
	e = errno;
	free(tmp);
	errno = e;
	return -1;
}

char *str_trim(char *s)
{
	char *z = s + strlen(s);
	while (*s == ' ' || *s == '\t')
		s++;
	while (z > s && (z[-1] == ' ' || z[-1] == '\t'))
		z--;
	*z = '\0';
	return s;
}

int mkdir_p(const char *path, unsigned mode)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST) {
			free(p);
			return -1;
		}
		*s = '/';
	}
	int rc = mkdir(p, mode);
	free(p);
	return rc < 0 && errno != EEXIST ? -1 : 0;
}

const char *self_dir(void)
{
	static char dir[PATH_MAX];
	static int done;
	if (!done) {
		done = 1;
		ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
		if (n <= 0) {
			dir[0] = '\0';
		} else {
			dir[n] = '\0';
			char *slash = strrchr(dir, '/');
			if (slash)
				*slash = '\0';
		}
	}
	return dir[0] ? dir : NULL;
}

/* The child's side of spawn_capture: its descriptors, then exec. */
_Noreturn static void spawn_child(char *const argv[], const struct spawn_io *io, int pipe_w, pid_t parent)
{
	/* a helper (a runtime's build, inspect or info, squeue, git) answers
	 * this process only: it ends when this process does, killed by a
	 * SIGTERM it does not handle (a long `podman build` ran on) */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(127); /* it ended before the line above */
	int null = open("/dev/null", O_RDWR);
	int to = pipe_w >= 0 ? pipe_w : io->fd > 0 ? io->fd : null;
	if (!io->keep_stdin && null >= 0)
		dup2(null, 0);
	if (to >= 0)
		dup2(to, 1);
	if (io->err_null ? null >= 0 : to >= 0)
		dup2(io->err_null ? null : to, 2);
	if (io->ignore_int)
		signal(SIGINT, SIG_IGN);
	if (io->env[0])
		setenv(io->env[0], io->env[1] ? io->env[1] : "", 1);
	execvp(argv[0], argv);
	dprintf(2, "cannot run '%s': %s\n", argv[0], strerror(errno));
	_exit(127);
}

int spawn_capture(char *const argv[], const struct spawn_io *io, struct strbuf *out)
{
	static const struct spawn_io plain;
	if (!io)
		io = &plain;
	int fds[2] = {-1, -1};
	if (out && pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	pid_t parent = getpid(), pid = fork();
	if (pid < 0) {
		if (out) {
			close(fds[0]);
			close(fds[1]);
		}
		return -1;
	}
	if (pid == 0)
		spawn_child(argv, io, fds[1], parent);
	size_t total = 0;
	if (out) {
		close(fds[1]);
		char buf[4096];
		for (;;) {
			ssize_t n = read(fds[0], buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			size_t keep = io->cap && out->len + (size_t)n > io->cap ? io->cap - (out->len < io->cap ? out->len : io->cap) : (size_t)n;
			if (keep)
				sb_add(out, buf, keep);
			total += (size_t)n;
		}
		close(fds[0]);
		if (!out->buf)
			sb_add(out, "", 0);
	}
	if (io->total)
		*io->total = total;
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Whether DIR/recipe.yaml exists; its modification time in *mtime. */
static int has_recipe(const char *dir, struct timespec *mtime)
{
	char *path = xasprintf("%s/recipe.yaml", dir);
	struct stat st;
	int yes = stat(path, &st) == 0;
	if (yes && mtime)
		*mtime = st.st_mtim;
	free(path);
	return yes;
}

char *rundir_problem(const char *dir)
{
	struct stat st;
	if (stat(dir, &st) != 0)
		return xasprintf("'%s' does not exist", dir);
	if (!S_ISDIR(st.st_mode)) {
		char *parent = xstrdup(dir), *slash = strrchr(parent, '/');
		if (slash)
			*(slash == parent ? slash + 1 : slash) = '\0';
		else
			strcpy(parent, ".");
		char *msg = has_recipe(parent, NULL)
				    ? xasprintf("'%s' is a file, not a run directory: its directory '%s' is one", dir, parent)
				    : xasprintf("'%s' is a file, not a run directory", dir);
		free(parent);
		return msg;
	}
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	size_t n = 0;
	char *newest = NULL;
	struct timespec newest_t = {0, 0};
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char *sub = xasprintf("%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", e->d_name);
		struct timespec t;
		if (has_recipe(sub, &t)) {
			n++;
			if (!newest || t.tv_sec > newest_t.tv_sec ||
			    (t.tv_sec == newest_t.tv_sec &&
			     (t.tv_nsec > newest_t.tv_nsec || (t.tv_nsec == newest_t.tv_nsec && strcmp(sub, newest) > 0)))) {
				free(newest);
				newest = sub;
				newest_t = t;
				continue;
			}
		}
		free(sub);
	}
	closedir(d);
	char *msg = NULL;
	if (n == 1)
		msg = xasprintf("'%s' is not a run directory: it holds one run, '%s'", dir, newest);
	else if (n > 1)
		msg = xasprintf("'%s' is not a run directory: it holds %zu runs, the newest '%s'", dir, n, newest);
	free(newest);
	return msg;
}
