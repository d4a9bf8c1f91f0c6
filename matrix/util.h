/* util.h - small helpers shared by the runner: allocation, strings, hashing,
 * error reporting. */
#ifndef MATRIX_UTIL_H
#define MATRIX_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Allocation that never returns NULL: on failure, print and exit(1). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "matrix: <message>" to stderr, the message made fit for a terminal
 * (text_term: control characters escaped, at most TEXT_TERM_MAX bytes). */
void error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same to f. */
void error_to(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* For what cannot happen: print file, line and message, abort. */
#define BUG(...) bug_at(__FILE__, __LINE__, __VA_ARGS__)
void bug_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

/* A growable string. */
struct strbuf {
	char *buf; /* always NUL terminated once anything was added */
	size_t len;
	size_t cap;
};
void sb_add(struct strbuf *sb, const char *s, size_t n);
void sb_puts(struct strbuf *sb, const char *s);
void sb_putc(struct strbuf *sb, char c);
void sb_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(struct strbuf *sb, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void sb_reset(struct strbuf *sb);
void sb_free(struct strbuf *sb);

/* 64-bit FNV-1a with a final avalanche; stable across platforms and runs. */
uint64_t hash64(const void *data, size_t n, uint64_t h);
#define HASH64_INIT 0xcbf29ce484222325ULL

/* Levenshtein distance (bounded strings, small alphabet of names). */
size_t edit_distance(const char *a, const char *b);

/* Parse a duration such as "300s", "0.5s", "250ms", "5m", "1h" into seconds.
 * Returns 0 on success, -1 when the text is not a duration. */
int parse_duration(const char *s, double *seconds);
/* s without its leading and trailing spaces and tabs (cut in place; s
 * itself or a pointer into it). A level or a name on the command line is
 * read as YAML reads a plain scalar: 'batch=1, 8' is 1 and 8. */
char *str_trim(char *s);
/* Parse a base-10 integer that fills the whole string; 0 on success. */
int parse_long(const char *s, long *out);
/* How spawn_capture connects a child. Zero: stdin from /dev/null, stdout
 * and stderr together into out (or to /dev/null without out), SIGINT as the
 * parent has it, the parent's environment. */
struct spawn_io {
	int fd;              /* without out: stdout and stderr to fd when > 0 */
	int err_null;        /* stderr to /dev/null, not with stdout */
	int keep_stdin;      /* the parent's stdin, not /dev/null */
	int ignore_int;      /* SIGINT ignored in the child (the front end decides) */
	size_t cap;          /* bytes kept in out, the rest read and dropped (0: all) */
	size_t *total;       /* when not NULL: every byte read */
	const char *env[2];  /* when env[0]: setenv(env[0], env[1]) in the child */
};
/* Run argv (searched in PATH) and wait for it, its output captured as io
 * says into out (when not NULL; "" rather than NULL when it wrote nothing).
 * Returns its exit status, 128 + the signal that killed it, 127 when it
 * could not start (the reason on its stderr), -1 when no child could be
 * made. */
int spawn_capture(char *const argv[], const struct spawn_io *io, struct strbuf *out);

/* Parse a finite double that fills the whole string; 0 on success. */
int parse_double(const char *s, double *out);
/* v rounded to 3 significant digits for a person to read (report pages,
 * terminal tables; results.csv, the tables' CSV files and the JSON export keep every
 * digit): "0.000685", "1.23", "45.6", "32000" (31951.9); "1.23e+09" and
 * "4.56e-05" outside 0.001 .. 1e6; "" for NaN and the infinities; never
 * "-0". buf holds at least 32 bytes; returns buf. */
const char *fmt_sig3(char *buf, double v);
/* The ends lo and hi of an interval in a and b (32 bytes each) for a person:
 * 3 significant digits, more (up to 9) while the two would read the same
 * though they differ ("28000 .. 28000" for 28012 .. 28047 becomes
 * "28010 .. 28050"), or while an end
 * would read as on the other side of pivot, or at it, than it is (a gain's
 * interval 1.0004 .. 1.0031 excludes 1: "1.0004 .. 1.0031", not "1 .. 1");
 * pivot NaN: none. */
void fmt_sig_range(char *a, char *b, double lo, double hi, double pivot);
/* v beside its interval lo .. hi: with as many significant digits as
 * fmt_sig_range gives the ends (rounding keeps order), so that it never
 * reads as outside them: "30130" beside "30130 .. 30140" for 30134.6, not
 * "30100"; 3 digits when an end is not finite. buf: 32 bytes; returns buf. */
const char *fmt_sig_in(char *buf, double v, double lo, double hi, double pivot);
/* The digits fmt_sig_range takes for lo .. hi (3 to 9; 3 when an end is not
 * finite), and v with p of them (clamped to 3 .. 9), for a value with more
 * than one interval (the widest need wins). */
int fmt_sig_range_digits(double lo, double hi, double pivot);
const char *fmt_sig_digits(char *buf, double v, int p);
/* v for a machine: the shortest text that reads back as exactly v (%.15g,
 * else %.17g); "" for NaN and the infinities. buf: 32 bytes; returns buf. */
const char *fmt_full(char *buf, double v);
/* s as a JSON string, quoted: control characters and DEL as \u00XX, a byte
 * that is not part of valid UTF-8 as U+FFFD, so the output is always valid
 * JSON. */
void json_quote(struct strbuf *sb, const char *s);

/* Seconds from a monotonic clock. */
double now_monotonic(void);

/* Read a whole file into memory (NUL terminated); NULL with errno set. */
char *read_file(const char *path, size_t *len);
/* The same, NULL with errno EFBIG once more than max bytes were read (a
 * device that never ends, /dev/zero, stops there instead of filling memory;
 * a pipe is read as a file is, a FIFO that nobody writes as empty). */
char *read_file_max(const char *path, size_t max, size_t *len);
/* Read a file that someone else may have put in place (a point's result file
 * or log, a results.csv received from elsewhere): opened without blocking (a
 * FIFO cannot hang the caller), with nofollow without following a last
 * symbolic link, refused unless a regular file, at most cap bytes read.
 * Returns the text, NUL-terminated (its length in *len when len is not NULL),
 * or NULL: with *why NULL when it cannot be opened (errno says why), else
 * with *why saying what is wrong with it ("is not a regular file", ...), to
 * be put after the file's name. */
char *read_file_capped(const char *path, size_t cap, int nofollow, size_t *len, char **why);
/* The length of the valid UTF-8 sequence at s (n >= 1 bytes left), or 0 (an
 * overlong form, a surrogate or a byte that cannot start one). */
size_t utf8_len(const unsigned char *s, size_t n);
/* The terminal columns of s[0..n), text_clean's output: its characters
 * (UTF-8 lead bytes), one column each. */
size_t text_columns(const char *s, size_t n);
/* Text from elsewhere (a point's log or result) made fit for a file or a
 * terminal: valid UTF-8, each byte of an invalid sequence written as U+FFFD,
 * control characters but tab (C0, DEL, C1) written as \xHH or \u00HH; cut at a
 * character boundary to at most max bytes (0: no limit). */
char *text_clean(const char *s, size_t n, size_t max);
/* text_clean of each line of s[0..n), the newlines kept (text of many lines
 * for a page). */
char *text_clean_lines(const char *s, size_t n);
/* A message for a terminal or a log line: text_clean's escapes (a newline
 * too: one message stays one line), and when longer than max bytes its start
 * and its end around "[... N bytes left out ...]". */
char *text_term(const char *s, size_t max);
#define TEXT_TERM_MAX 4096
/* write(2) all of data, retrying on EINTR and short writes; 0 on success. */
int write_all(int fd, const void *data, size_t len);
/* Write a whole file atomically (temporary file, fsync, rename); 0 on success. */
int write_file_atomic(const char *path, const void *data, size_t len);
/* mkdir -p; 0 on success. */
int mkdir_p(const char *path, unsigned mode);

/* The directory of the running executable (from /proc/self/exe), or NULL. */
const char *self_dir(void);

/* What is wrong with dir, a path given as a run directory that has no
 * recipe.yaml, when that is more than "no recipe.yaml": a message (to free)
 * such as "'experiments/x' does not exist", "'D/results.csv' is a file, not
 * a run directory: its directory 'D' is one" or "'experiments/x' is not a
 * run directory: it holds 3 runs, the newest 'experiments/x/20261128-174151'";
 * NULL for an existing directory without runs in it (the caller says "no
 * recipe.yaml" its own way). */
char *rundir_problem(const char *dir);

/* "s" after a count that is not 1: "%zu point%s", n, plural_s(n). */
static inline const char *plural_s(uint64_t n)
{
	return n == 1 ? "" : "s";
}

#endif
