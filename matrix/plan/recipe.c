/* recipe.c - load a study recipe from YAML (libyaml document API) and validate
 * all of it before anything runs. See DESIGN.md, "Recipe".
 *
 * Loading goes in stages. The first ones stop at their error, because nothing
 * after them could make sense: the file cannot be read, is not text, is not
 * YAML (tabs in indentation have their own message), is empty, holds more
 * than one document, is not a mapping, or expands through aliases into too
 * many nodes. Then the schema walk checks every key and collects every error
 * it finds; they are printed in file order (at most MAX_ERRORS_SHOWN) as
 *   FILE:LINE:COL: message
 *     the source line
 *     ^
 * Messages are lower case without a final full stop and quote their subject:
 * "'repeat' must be an integer >= 1, not 'two'". */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "design.h"
#include "recipe.h"
#include "result.h"
#include "util.h"
#include "vocab.h"

#define MAX_ERRORS_SHOWN 20
#define MAX_ERRORS_KEPT 1000
#define NODE_LIMIT 100000                 /* node visits, aliases expanded */
#define DEPTH_LIMIT 1000                  /* nesting: open '[' and '{', block collections */
#define EXCLUDE_WALK_LIMIT (1ULL << 24)   /* combinations tried for "every point is excluded" */
#define REPEAT_MAX 1000000
#define RECIPE_MAX_BYTES (8 << 20)        /* a recipe file: read no further (/dev/zero) */

/* ---- locating and printing errors --------------------------------------- */

/* Length of the valid UTF-8 sequence at p (at most n bytes), or 0 when the
 * bytes there are not valid UTF-8 or a character that text never holds
 * (NUL, C0 controls other than tab / LF / CR, DEL). */
static size_t text_char_len(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	if (c < 0x80) {
		if (c == '\t' || c == '\n' || c == '\r')
			return 1;
		return c < 0x20 || c == 0x7f ? 0 : 1;
	}
	size_t len;
	unsigned cp;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/* Whether the byte at i ends a line as libyaml counts lines: a line feed,
 * or a carriage return not followed by one (old Mac line ends; in "\r\n" the
 * "\n" ends the line). */
static int is_break(const char *text, size_t len, size_t i)
{
	return text[i] == '\n' || (text[i] == '\r' && (i + 1 == len || text[i + 1] != '\n'));
}

/* Byte offset where 1-based line starts, or (size_t)-1 past the end. A byte
 * order mark is not part of line 1 (libyaml does not count it). */
static size_t line_offset(const char *text, size_t len, unsigned line)
{
	size_t off = len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
	for (unsigned l = 1; l < line; l++) {
		while (off < len && !is_break(text, len, off))
			off++;
		if (off == len)
			return (size_t)-1;
		off++;
	}
	return off;
}

/* The 1-based line and column (in characters, as libyaml counts) of a byte. */
static struct mark offset_mark(const char *text, size_t len, size_t off)
{
	struct mark m = {1, 1};
	size_t start = line_offset(text, len, 1);
	if (off < start)
		return m;
	for (size_t i = start; i < off && i < len; i++) {
		if (is_break(text, len, i)) {
			m.line++;
			m.col = 1;
		} else if (((unsigned char)text[i] & 0xc0) != 0x80) {
			m.col++;
		}
	}
	return m;
}

#define SHOWN_COLUMNS 160 /* of a long source line: the part around the column */

/* Print one located error: the message line (control characters escaped,
 * cut to TEXT_TERM_MAX bytes), then the source line and a caret under the
 * column. The source line stops at the first character that is not text (so
 * a binary file prints only its readable start; a C1 control is not text
 * here either); tabs before the column are kept so that the caret lines up.
 * A line longer than SHOWN_COLUMNS characters is shown around the column,
 * "..." marking the parts left out. */
static void print_located(FILE *err, const char *path, const char *text, size_t len, struct mark m,
			  const char *msg)
{
	char *clean = text_term(msg, TEXT_TERM_MAX);
	fprintf(err, "%s:%u:%u: %s\n", path, m.line, m.col, clean);
	free(clean);
	if (!text)
		return;
	size_t off = line_offset(text, len, m.line);
	if (off == (size_t)-1 || off >= len)
		return;
	/* the characters of the line up to the first that is not text */
	size_t end = off, nchars = 0;
	while (end < len && !is_break(text, len, end)) {
		size_t n = text_char_len((const unsigned char *)text + end, len - end);
		if (!n || ((unsigned char)text[end] == 0xc2 && (unsigned char)text[end + 1] < 0xa0))
			break;
		end += n;
		nchars++;
	}
	if (end > off && text[end - 1] == '\r') {
		end--;
		nchars--;
	}
	/* the window of characters [first, last) shown */
	size_t col = m.col ? m.col - 1 : 0, first = 0, last = nchars;
	if (nchars > SHOWN_COLUMNS) {
		first = col > SHOWN_COLUMNS / 2 ? col - SHOWN_COLUMNS / 2 : 0;
		if (first + SHOWN_COLUMNS > nchars)
			first = nchars > SHOWN_COLUMNS ? nchars - SHOWN_COLUMNS : 0;
		last = first + SHOWN_COLUMNS;
	}
	size_t p = off, c = 0;
	for (; c < first; c++)
		p += text_char_len((const unsigned char *)text + p, len - p);
	size_t from = p;
	for (; c < last; c++)
		p += text_char_len((const unsigned char *)text + p, len - p);
	fprintf(err, "  %s%.*s%s\n  %s", first ? "..." : "", (int)(p - from), text + from, last < nchars ? "..." : "",
		first ? "   " : "");
	p = from;
	for (c = first; c < col; c++) {
		if (c < last) {
			fputc(text[p] == '\t' ? '\t' : ' ', err);
			p += text_char_len((const unsigned char *)text + p, len - p);
		} else {
			fputc(' ', err);
		}
	}
	fputs("^\n", err);
}

void recipe_error_at(const struct recipe *r, struct mark m, FILE *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *msg = xmalloc((size_t)(n < 0 ? 0 : n) + 1);
	va_start(ap, fmt);
	vsnprintf(msg, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap);
	va_end(ap);
	print_located(err, r->path ? r->path : "recipe", r->text, r->text_len, m, msg);
	free(msg);
}

/* ---- the loader --------------------------------------------------------- */

struct lerror {
	struct mark m;
	size_t seq;
	char *msg;
};

struct loader {
	struct recipe *r;
	yaml_document_t doc;
	struct lerror *errs;
	size_t nerrs, caperrs, dropped;
	yaml_node_t *root;
	int vocab_mode;          /* every factor must be in the vocabulary */
	const char *engine_word; /* "native" or "pytorch", for messages */
	int uses_command;        /* some point runs the command engine */
	int engine_known;        /* the engine key or factor was understood */
	int containers_ok;       /* `containers` is present and had no error */
	int saw_factor_engine;   /* a factor called engine was written, even a broken one */
	const char **broken;     /* factors left out after an error: references to */
	size_t nbroken;          /* them are not reported again */
	int factors_broken;      /* 'factors' itself was wrong (reported): a factor
	                          * named elsewhere is not reported as unknown */
	char *const *ovr;        /* the command line's KEY=VALUE overrides; their nodes'
	                          * marks are line 0, column = 1 + the override's index */
	size_t novr;
	const char **ovr_factors; /* factors whose levels an override replaced: a */
	size_t novr_factors;      /* reference to a level they lost is no error */
	yaml_node_t *wall_time_node; /* measure.metric: wall_time, or NULL */
	yaml_node_t *timeout_node;   /* measure.timeout, else measure.max_time, or NULL */
	int measure_ok;              /* warmup, max_time and timeout read without error */
	int plan;                    /* loaded to plan a run (expand, run, build): the checks of
	                              * settings that would make it fail (check_timeout), which
	                              * a run directory already made is not refused for */
	int report_metric;       /* report.metric was given */
};

static void errorf(struct loader *L, struct mark m, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void errorf(struct loader *L, struct mark m, const char *fmt, ...)
{
	if (L->nerrs == MAX_ERRORS_KEPT) {
		L->dropped++;
		return;
	}
	if (L->nerrs == L->caperrs) {
		L->caperrs = L->caperrs ? 2 * L->caperrs : 16;
		L->errs = xrealloc(L->errs, L->caperrs * sizeof(*L->errs));
	}
	struct strbuf sb = {0};
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	sb.buf = xmalloc((size_t)(n < 0 ? 0 : n) + 1);
	va_start(ap, fmt);
	vsnprintf(sb.buf, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap);
	va_end(ap);
	L->errs[L->nerrs].m = m;
	L->errs[L->nerrs].seq = L->nerrs;
	L->errs[L->nerrs].msg = sb.buf;
	L->nerrs++;
}

static int cmp_lerror(const void *a, const void *b)
{
	const struct lerror *x = a, *y = b;
	if (x->m.line != y->m.line)
		return x->m.line < y->m.line ? -1 : 1;
	if (x->m.col != y->m.col)
		return x->m.col < y->m.col ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void print_errors(struct loader *L, FILE *err)
{
	qsort(L->errs, L->nerrs, sizeof(*L->errs), cmp_lerror);
	size_t shown = L->nerrs < MAX_ERRORS_SHOWN ? L->nerrs : MAX_ERRORS_SHOWN;
	for (size_t i = 0; i < shown; i++) {
		struct mark m = L->errs[i].m;
		if (m.line == 0 && m.col >= 1 && m.col <= L->novr) {
			char *o = text_term(L->ovr[m.col - 1], TEXT_TERM_MAX / 2);
			char *msg = text_term(L->errs[i].msg, TEXT_TERM_MAX);
			fprintf(err, "%s: override '%s': %s\n", L->r->path, o, msg);
			free(o);
			free(msg);
		} else {
			print_located(err, L->r->path, L->r->text, L->r->text_len, m, L->errs[i].msg);
		}
	}
	size_t more = L->nerrs - shown + L->dropped;
	if (more)
		fprintf(err, "matrix: %zu more error%s in '%s' not shown\n", more, more == 1 ? "" : "s",
			L->r->path);
}

/* ---- nodes -------------------------------------------------------------- */

static yaml_node_t *node_at(struct loader *L, int index)
{
	return yaml_document_get_node(&L->doc, index);
}

static struct mark node_mark(const yaml_node_t *n)
{
	struct mark m = {(unsigned)n->start_mark.line + 1, (unsigned)n->start_mark.column + 1};
	return m;
}

static const char *scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

/* An empty value: `key:`, `key: ~`, `key: null` (plain, not quoted). */
static int is_null(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	const char *s = scalar(n);
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

static int is_string(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE && !is_null(n);
}

/* What a node is, for "must be X, not Y": a sequence, a mapping, null, or the
 * quoted text of a scalar (cut at 40 bytes or a line break). */
static const char *describe(const yaml_node_t *n, char *buf, size_t size)
{
	if (n->type == YAML_SEQUENCE_NODE)
		return "a sequence";
	if (n->type == YAML_MAPPING_NODE)
		return "a mapping";
	if (is_null(n))
		return "null";
	const char *s = scalar(n);
	size_t len = strcspn(s, "\r\n"), cut = len;
	if (cut > 40) {
		cut = 40;
		while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
			cut--;
	}
	snprintf(buf, size, "'%.*s%s'", (int)cut, s, cut < strlen(s) ? "..." : "");
	return buf;
}

static void wrong_type(struct loader *L, const yaml_node_t *n, const char *path, const char *what)
{
	char buf[64];
	errorf(L, node_mark(n), "'%s' must be %s, not %s", path, what, describe(n, buf, sizeof(buf)));
}

/* ", "-separated list of n names. */
static void join(struct strbuf *sb, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			sb_puts(sb, ", ");
		sb_puts(sb, names[i]);
	}
	if (!sb->buf)
		sb_add(sb, "", 0);
}

/* A hint for a word that is not among cands: " (did you mean 'x'?)", or
 * " (expected one of: a, b, c)" when no candidate is close. quote wraps the
 * suggestion ("{%s}" for placeholders). */
static void hint(struct strbuf *sb, const char *word, const char *const *cands, size_t n)
{
	const char *c = vocab_closest(word, cands, n);
	if (c) {
		sb_printf(sb, " (did you mean '%s'?)", c);
	} else {
		sb_puts(sb, " (expected one of: ");
		join(sb, cands, n);
		sb_puts(sb, ")");
	}
}

/* Flags the pairs of a mapping whose key repeats an earlier one (reporting
 * each as "duplicate key") or is not a string (reporting that). Returns n
 * bytes, 1 where the pair must be skipped. */
struct keyref {
	const char *s;
	size_t i;
};

static int cmp_keyref(const void *a, const void *b)
{
	const struct keyref *x = a, *y = b;
	int c = strcmp(x->s, y->s);
	if (c)
		return c;
	return x->i < y->i ? -1 : x->i > y->i;
}

static unsigned char *check_mapping_keys(struct loader *L, yaml_node_t *map)
{
	yaml_node_pair_t *pairs = map->data.mapping.pairs.start;
	size_t n = (size_t)(map->data.mapping.pairs.top - pairs);
	unsigned char *skip = xcalloc(n ? n : 1, 1);
	struct keyref *refs = xmalloc((n ? n : 1) * sizeof(*refs));
	size_t nrefs = 0;
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *k = node_at(L, pairs[i].key);
		if (!is_string(k)) {
			char buf[64];
			errorf(L, node_mark(k), "keys must be strings, not %s", describe(k, buf, sizeof(buf)));
			skip[i] = 1;
			continue;
		}
		refs[nrefs].s = scalar(k);
		refs[nrefs].i = i;
		nrefs++;
	}
	qsort(refs, nrefs, sizeof(*refs), cmp_keyref);
	for (size_t i = 1; i < nrefs; i++) {
		size_t first = i - 1;
		while (i < nrefs && !strcmp(refs[i].s, refs[first].s)) {
			yaml_node_t *k = node_at(L, pairs[refs[i].i].key);
			yaml_node_t *k0 = node_at(L, pairs[refs[first].i].key);
			errorf(L, node_mark(k), "duplicate key '%s' (first at line %u)", scalar(k), node_mark(k0).line);
			skip[refs[i].i] = 1;
			i++;
		}
	}
	free(refs);
	return skip;
}

/* A key someone would write in measure: for processes per point, which is
 * the top-level repeat. */
static int is_repeat_word(const char *k)
{
	static const char *const words[] = {"repeat", "repeats", "runs", "processes", "process_repeats"};
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (!strcmp(k, words[i]))
			return 1;
	return 0;
}

/* Walk a mapping with a fixed set of keys: vals[i] receives the value of
 * names[i] (NULL when absent) and keys[i] its key node. Unknown keys are
 * reported with a hint; path names the mapping in messages (NULL: top).
 *
 * A misspelt key (one or two edits from a name, not a mere prefix of one)
 * whose suggestion ("did you mean 'factors'?") is absent stands for it once
 * reported, as a compiler's fix-it recovers: its value is
 * read as the suggested key's, so the one error is the typo, not a "missing
 * required key 'factors'" or what follows from the key's absence (no engine:
 * no factor vocabulary; no containers: a container factor without images).
 * The value's own errors are still reported, as they would be once the key
 * is spelt right. */
static void get_fields(struct loader *L, yaml_node_t *map, const char *path, const char *const *names, size_t n,
		       yaml_node_t **vals, yaml_node_t **keys)
{
	for (size_t i = 0; i < n; i++)
		vals[i] = keys[i] = NULL;
	unsigned char *skip = check_mapping_keys(L, map);
	yaml_node_pair_t *pairs = map->data.mapping.pairs.start;
	size_t np = (size_t)(map->data.mapping.pairs.top - pairs);
	size_t *meant = xmalloc((np ? np : 1) * sizeof(*meant)); /* names[] index a misspelt key suggests, or n */
	for (size_t i = 0; i < np; i++) {
		meant[i] = n;
		if (skip[i])
			continue;
		yaml_node_t *k = node_at(L, pairs[i].key);
		size_t j;
		for (j = 0; j < n; j++)
			if (!strcmp(scalar(k), names[j]))
				break;
		if (j < n) {
			vals[j] = node_at(L, pairs[i].value);
			keys[j] = k;
			continue;
		}
		struct strbuf sb = {0};
		sb_printf(&sb, "unknown key '%s'", scalar(k));
		if (path)
			sb_printf(&sb, " in '%s'", path);
		if (path && !strcmp(path, "measure") && is_repeat_word(scalar(k))) {
			sb_puts(&sb, " (fresh processes per point are the top-level 'repeat: N')");
		} else {
			hint(&sb, scalar(k), names, n);
			const char *c = vocab_misspelt(scalar(k), names, n);
			for (j = 0; c && j < n; j++)
				if (names[j] == c)
					meant[i] = j;
		}
		errorf(L, node_mark(k), "%s", sb.buf);
		sb_free(&sb);
	}
	for (size_t i = 0; i < np; i++) {
		if (meant[i] < n && !vals[meant[i]]) {
			vals[meant[i]] = node_at(L, pairs[i].value);
			keys[meant[i]] = node_at(L, pairs[i].key);
		}
	}
	free(meant);
	free(skip);
}

/* A string value; NULL (after reporting) when it is not one. */
static const char *get_string(struct loader *L, yaml_node_t *n, const char *path)
{
	if (is_string(n))
		return scalar(n);
	wrong_type(L, n, path, "a string");
	return NULL;
}

/* One of vals[0..n-1]: its index, or -1 after reporting
 * "'order' must be 'given' or 'shuffled', not 'random'". */
static int get_enum(struct loader *L, yaml_node_t *n, const char *path, const char *const *vals, size_t nv)
{
	if (is_string(n))
		for (size_t i = 0; i < nv; i++)
			if (!strcmp(scalar(n), vals[i]))
				return (int)i;
	struct strbuf sb = {0};
	char buf[64];
	sb_printf(&sb, "'%s' must be ", path);
	for (size_t i = 0; i < nv; i++)
		sb_printf(&sb, "%s'%s'", i == 0 ? "" : i + 1 == nv ? " or " : ", ", vals[i]);
	sb_printf(&sb, ", not %s", describe(n, buf, sizeof(buf)));
	const char *c = is_string(n) ? vocab_closest(scalar(n), vals, nv) : NULL;
	if (c)
		sb_printf(&sb, " (did you mean '%s'?)", c);
	errorf(L, node_mark(n), "%s", sb.buf);
	sb_free(&sb);
	return -1;
}

/* A whole string of decimal digits that fits an unsigned 64-bit integer. */
static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (!*s)
		return -1;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* ---- stages before the schema ------------------------------------------- */

/* NUL bytes, control characters or invalid UTF-8: "not a text file". */
static int check_text(struct loader *L)
{
	const unsigned char *t = (const unsigned char *)L->r->text;
	size_t len = L->r->text_len;
	for (size_t i = 0; i < len;) {
		size_t n = text_char_len(t + i, len - i);
		if (!n) {
			errorf(L, offset_mark(L->r->text, len, i), "not a text file");
			return -1;
		}
		i += n;
	}
	return 0;
}

/* libyaml takes time quadratic in the depth of flow collections ("[[[[..."
 * 200000 deep takes minutes), so refuse deep nesting before parsing. The scan
 * skips comments and quoted scalars roughly; it can only undercount. */
static int check_depth(struct loader *L)
{
	const char *t = L->r->text;
	size_t len = L->r->text_len, depth = 0;
	for (size_t i = 0; i < len; i++) {
		char c = t[i];
		if (c == '#' && (i == 0 || t[i - 1] == ' ' || t[i - 1] == '\t' || t[i - 1] == '\n')) {
			while (i + 1 < len && t[i + 1] != '\n')
				i++;
		} else if (c == '"' || c == '\'') {
			for (i++; i < len && t[i] != c; i++)
				if (c == '"' && t[i] == '\\')
					i++;
		} else if (c == '[' || c == '{') {
			if (++depth > DEPTH_LIMIT) {
				errorf(L, offset_mark(t, len, i), "nesting too deep (limit %d levels)", DEPTH_LIMIT);
				return -1;
			}
		} else if ((c == ']' || c == '}') && depth > 0) {
			depth--;
		}
	}
	return 0;
}

/* Whether line (1-based) has a tab among its leading white space; *col gets
 * the 1-based column of that tab. */
static int tab_in_indent(const char *text, size_t len, unsigned line, unsigned *col)
{
	size_t off = line_offset(text, len, line);
	if (off == (size_t)-1)
		return 0;
	for (unsigned c = 1; off < len && (text[off] == ' ' || text[off] == '\t'); off++, c++) {
		if (text[off] == '\t') {
			*col = c;
			return 1;
		}
	}
	return 0;
}

/* A mark at the end of the text, past its last line or followed by white
 * space only (libyaml's end of stream, often a line after the last one),
 * moved to just after the last character of the last line that is neither
 * blank nor a comment, where the missing ']', '}' or quote belongs: the
 * error then shows that line and a caret as the others do. Returns 1 when
 * m was at the end. */
static int is_blank_char(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int end_of_text(const char *text, size_t len, struct mark *m)
{
	size_t off = line_offset(text, len, m->line);
	for (unsigned c = 1; off < len && c < m->col && !is_break(text, len, off); c++) {
		size_t n = text_char_len((const unsigned char *)text + off, len - off);
		off += n ? n : 1;
	}
	for (size_t i = off; off != (size_t)-1 && i < len; i++)
		if (!is_blank_char(text[i]))
			return 0;
	size_t end = len, bom = line_offset(text, len, 1);
	while (end > bom) {
		while (end > bom && is_blank_char(text[end - 1]))
			end--;
		size_t start = end;
		while (start > bom && !is_break(text, len, start - 1))
			start--;
		while (start < end && (text[start] == ' ' || text[start] == '\t'))
			start++; /* not past end: an indented comment on the first line */
		if (start == end || text[start] != '#')
			break;
		end = start; /* a comment line: the content is above */
	}
	if (end > bom)
		*m = offset_mark(text, len, end);
	return 1;
}

static void yaml_error(struct loader *L, const yaml_parser_t *p)
{
	const struct recipe *r = L->r;
	struct mark m;
	if (p->error == YAML_READER_ERROR)
		m = offset_mark(r->text, r->text_len, p->problem_offset);
	else
		m = (struct mark){(unsigned)p->problem_mark.line + 1, (unsigned)p->problem_mark.column + 1};
	unsigned col;
	if (p->error == YAML_SCANNER_ERROR && tab_in_indent(r->text, r->text_len, m.line, &col)) {
		m.col = col;
		errorf(L, m, "tab character in indentation (YAML allows spaces only)");
		return;
	}
	if (p->error == YAML_MEMORY_ERROR) {
		errorf(L, m, "out of memory while parsing YAML");
		return;
	}
	const char *problem = p->problem ? p->problem : "unknown error";
	const char *at_end = "";
	if (p->error != YAML_READER_ERROR && end_of_text(r->text, r->text_len, &m)) {
		if (!strcmp(problem, "found unexpected end of stream"))
			problem = "found unexpected end of file"; /* a quote left open */
		else
			at_end = " at end of file";
	}
	if (p->context && (p->context_mark.line != p->problem_mark.line ||
			   p->context_mark.column != p->problem_mark.column))
		errorf(L, m, "invalid YAML: %s%s (%s started at line %u, column %u)", problem, at_end, p->context,
		       (unsigned)p->context_mark.line + 1, (unsigned)p->context_mark.column + 1);
	else
		errorf(L, m, "invalid YAML: %s%s", problem, at_end);
}

/* A "\0" escape in a double-quoted scalar puts a NUL inside its value, which
 * every later use (a C string) would cut there: refuse it where it is. */
static int check_nul(struct loader *L)
{
	for (yaml_node_t *n = L->doc.nodes.start; n < L->doc.nodes.top; n++)
		if (n->type == YAML_SCALAR_NODE && strlen(scalar(n)) != n->data.scalar.length)
			errorf(L, node_mark(n), "a string cannot hold a NUL character ('\\0')");
	return L->nerrs ? -1 : 0;
}

/* check_node_count's walk, depth first: a stack of node ids with their
 * nesting depths, and the path from the top to the node walked last
 * (path[d]: its ancestor at depth d, set as each node is popped). */
struct node_walk {
	int *id;
	unsigned *depth;
	size_t top;
	int path[DEPTH_LIMIT + 2]; /* a scalar can be one deeper than a collection */
};

/* Push node id, a child of the node at depth d - 1 walked last, at depth d;
 * or, for a collection deeper than DEPTH_LIMIT, record an error and return
 * -1: deep nesting, or an alias inside the node it names (the node is its
 * own ancestor), which nests without end. */
static int push_node(struct loader *L, struct node_walk *w, int id, unsigned d)
{
	yaml_node_t *n = node_at(L, id);
	if (d > DEPTH_LIMIT && n && n->type != YAML_SCALAR_NODE) {
		int loop = 0;
		for (unsigned k = 1; k < d && k <= DEPTH_LIMIT; k++)
			loop |= w->path[k] == id;
		if (loop)
			errorf(L, node_mark(node_at(L, id)), "an alias loops: it is inside the node it names "
							      "(nesting over %d levels once aliases are expanded)",
			       DEPTH_LIMIT);
		else
			errorf(L, node_mark(node_at(L, id)), "nesting too deep (limit %d levels)", DEPTH_LIMIT);
		return -1;
	}
	w->id[w->top] = id;
	w->depth[w->top++] = d;
	return 0;
}

/* Aliases make the document a graph that can expand to billions of nodes
 * ("billion laughs") or even loop. Count the nodes a walk from the root would
 * visit, aliases expanded, and give up past NODE_LIMIT. The error points at
 * the top-level key whose value crosses the limit. The same walk bounds the
 * nesting, which check_depth sees in brackets only: block collections
 * ("- - - - x", indentation) nest as deep, and the alias expansion below
 * walks them recursively (45000 levels overflowed its stack under
 * AddressSanitizer); the error points at the first node too deep. */
static int check_node_count(struct loader *L)
{
	yaml_node_t *root = L->root;
	struct node_walk *w = xcalloc(1, sizeof(*w));
	w->id = xmalloc((NODE_LIMIT + 1) * sizeof(int));
	w->depth = xmalloc((NODE_LIMIT + 1) * sizeof(unsigned));
	size_t count = 1;
	int ret = 0;
	for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top; pr++) {
		count += 2;
		if (count > NODE_LIMIT)
			goto over;
		if (push_node(L, w, pr->value, 1))
			goto deep;
		yaml_node_t *rk = node_at(L, pr->key); /* a key can be a collection ("? [a, *a]"), and loop */
		if (rk && rk->type != YAML_SCALAR_NODE && push_node(L, w, pr->key, 1))
			goto deep;
		while (w->top) {
			unsigned d = w->depth[--w->top];
			w->path[d] = w->id[w->top];
			yaml_node_t *n = node_at(L, w->id[w->top]);
			if (!n)
				continue;
			if (n->type == YAML_SEQUENCE_NODE) {
				for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
					if (++count > NODE_LIMIT)
						goto over;
					if (push_node(L, w, *it, d + 1))
						goto deep;
				}
			} else if (n->type == YAML_MAPPING_NODE) {
				for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < n->data.mapping.pairs.top; q++) {
					count += 2;
					if (count > NODE_LIMIT)
						goto over;
					if (push_node(L, w, q->value, d + 1))
						goto deep;
					/* keys are walked only when they are collections */
					yaml_node_t *k = node_at(L, q->key);
					if (k && k->type != YAML_SCALAR_NODE && push_node(L, w, q->key, d + 1))
						goto deep;
				}
			}
		}
		continue;
over:
		errorf(L, node_mark(node_at(L, pr->key)), "too many nodes%s (limit %d)",
		       L->doc.nodes.top - L->doc.nodes.start > NODE_LIMIT ? "" : " after alias expansion", NODE_LIMIT);
		ret = -1;
		break;
	}
	goto out;
deep:
	ret = -1;
out:
	free(w->id);
	free(w->depth);
	free(w);
	return ret;
}

/* ---- aliases -------------------------------------------------------------- */

/* libyaml's document makes an alias the very node of its anchor, which
 * carries the anchor's position: an error found through `grace: *t` would
 * point at `timeout: &t nope`, and an override of one use would change the
 * other. So after check_node_count has bounded the expansion, every alias is
 * replaced by a copy of its anchored node whose own mark is the alias's (the
 * use); the nodes inside the copy keep their marks, the text that holds
 * them. The alias positions come from an event pass over the text: aliases
 * appear there in the order in which a depth-first walk of the document
 * meets a node it has seen before. */
struct aliases {
	struct loader *L;
	struct mark *at; /* each alias event's mark, in text order */
	size_t n, next;
	size_t norig;           /* nodes before copying */
	unsigned char *visited; /* norig + 1 flags */
};

static int alias_marks(struct loader *L, struct aliases *A)
{
	yaml_parser_t p;
	if (!yaml_parser_initialize(&p))
		BUG("yaml_parser_initialize failed");
	yaml_parser_set_input_string(&p, (const unsigned char *)L->r->text, L->r->text_len);
	size_t cap = 0;
	int ok = 1;
	for (;;) {
		yaml_event_t e;
		if (!yaml_parser_parse(&p, &e)) {
			ok = 0; /* cannot happen: the same text loaded */
			break;
		}
		if (e.type == YAML_ALIAS_EVENT) {
			if (A->n == cap) {
				cap = cap ? 2 * cap : 16;
				A->at = xrealloc(A->at, cap * sizeof(*A->at));
			}
			A->at[A->n++] = (struct mark){(unsigned)e.start_mark.line + 1, (unsigned)e.start_mark.column + 1};
		}
		int end = e.type == YAML_DOCUMENT_END_EVENT || e.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&e);
		if (end)
			break;
	}
	yaml_parser_delete(&p);
	return ok ? 0 : -1;
}

/* A copy of node id (its tree, fully), the copy's own mark m. */
static int copy_node(struct loader *L, int id, const struct mark *m)
{
	yaml_document_t *d = &L->doc;
	yaml_node_t *n = node_at(L, id);
	int c;
	if (n->type == YAML_SCALAR_NODE) {
		c = yaml_document_add_scalar(d, n->tag, n->data.scalar.value, (int)n->data.scalar.length,
					     n->data.scalar.style);
	} else if (n->type == YAML_SEQUENCE_NODE) {
		c = yaml_document_add_sequence(d, n->tag, n->data.sequence.style);
		for (size_t i = 0; c && i < (size_t)(node_at(L, id)->data.sequence.items.top -
						     node_at(L, id)->data.sequence.items.start); i++) {
			int item = copy_node(L, node_at(L, id)->data.sequence.items.start[i], NULL);
			if (!item || !yaml_document_append_sequence_item(d, c, item))
				return 0;
		}
	} else {
		c = yaml_document_add_mapping(d, n->tag, n->data.mapping.style);
		for (size_t i = 0; c && i < (size_t)(node_at(L, id)->data.mapping.pairs.top -
						     node_at(L, id)->data.mapping.pairs.start); i++) {
			yaml_node_pair_t pr = node_at(L, id)->data.mapping.pairs.start[i];
			int k = copy_node(L, pr.key, NULL), v = k ? copy_node(L, pr.value, NULL) : 0;
			if (!v || !yaml_document_append_mapping_pair(d, c, k, v))
				return 0;
		}
	}
	if (!c)
		return 0;
	yaml_node_t *o = node_at(L, id), *cn = node_at(L, c);
	cn->start_mark = o->start_mark;
	cn->end_mark = o->end_mark;
	if (m) {
		cn->start_mark.line = m->line - 1;
		cn->start_mark.column = m->col - 1;
		cn->end_mark = cn->start_mark;
	}
	return c;
}

/* The reference *ref (an item or a pair's key or value of a node met in the
 * walk): walked when first met, else an alias, replaced by a copy. */
static int expand_ref(struct aliases *A, int *ref);

static int expand_walk(struct aliases *A, int id)
{
	struct loader *L = A->L;
	A->visited[id] = 1;
	yaml_node_t *n = node_at(L, id);
	if (n->type == YAML_SEQUENCE_NODE) {
		size_t count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
		for (size_t i = 0; i < count; i++)
			if (expand_ref(A, &node_at(L, id)->data.sequence.items.start[i]))
				return -1;
	} else if (n->type == YAML_MAPPING_NODE) {
		size_t count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
		for (size_t i = 0; i < count; i++)
			if (expand_ref(A, &node_at(L, id)->data.mapping.pairs.start[i].key) ||
			    expand_ref(A, &node_at(L, id)->data.mapping.pairs.start[i].value))
				return -1;
	}
	return 0;
}

static int expand_ref(struct aliases *A, int *ref)
{
	int id = *ref;
	if (id < 1 || (size_t)id > A->norig)
		return 0;
	if (!A->visited[id])
		return expand_walk(A, id);
	if (A->next >= A->n)
		return -1; /* more shared nodes than aliases: cannot happen */
	/* *ref lives in an items or pairs array that adding nodes leaves in place */
	int c = copy_node(A->L, id, &A->at[A->next++]);
	if (!c)
		return -1;
	*ref = c;
	return 0;
}

/* Replace every alias by a copy (see struct aliases). Returns 0, or -1 after
 * recording an error. */
static int expand_aliases(struct loader *L)
{
	struct aliases A = {.L = L};
	if (alias_marks(L, &A) != 0 || A.n == 0) {
		free(A.at);
		return 0; /* no alias: nothing shared */
	}
	A.norig = (size_t)(L->doc.nodes.top - L->doc.nodes.start);
	A.visited = xcalloc(A.norig + 1, 1);
	int rc = expand_walk(&A, 1);
	free(A.visited);
	free(A.at);
	L->root = yaml_document_get_root_node(&L->doc);
	if (rc)
		errorf(L, (struct mark){1, 1}, "out of memory while expanding aliases");
	return rc;
}

/* ---- the schema --------------------------------------------------------- */

enum {
	K_NAME,
	K_DESCRIPTION,
	K_ENGINE,
	K_COMMAND,
	K_PYTHON,
	K_DEVICE,
	K_MEASURE,
	K_FACTORS,
	K_EXCLUDE,
	K_ORDER,
	K_SEED,
	K_REPEAT,
	K_BASELINE,
	K_REPORT,
	K_CONTAINERS,
	K_EXECUTOR,
	K_DESIGN,
	K_PROFILE,
	K_DATASET_SIZE,
	K_COUNT,
};
static const char *const top_keys[K_COUNT] = {
	"name", "description", "engine", "command", "python", "device", "measure", "factors",
	"exclude", "order", "seed", "repeat", "baseline", "report", "containers",
	"executor", "design", "profile", "dataset_size",
};

static const char *const engine_names[] = {"native", "pytorch", "command"};
static const char *const device_names[] = {"auto", "cuda", "cpu"};
static const char *const order_names[] = {"given", "shuffled"};

static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
	       c == '.';
}

/* letters, digits, '_', '-' and '.', not starting with '.' or '-' */
/* Whether name is a column of results.csv other than a factor's (store.h:
 * id, index, repeat, status, reason, the result columns, wall_s, extra,
 * command): a factor of that name made a second column of the name, and the
 * first, the factor's, was read as the other ('status' x: every point of an
 * unknown status; 'throughput' 100: its level read as the measurement).
 * device and engine are factors of the vocabulary whose levels the result
 * repeats, and stay allowed. */
static int factor_name_taken(const char *name)
{
	static const char *const own[] = {"id", "index", "repeat", "status", "reason", "wall_s", "extra", "command"};
	for (size_t i = 0; i < ARRAY_SIZE(own); i++)
		if (!strcmp(name, own[i]))
			return 1;
	return result_column_index(name) >= 0 && strcmp(name, "device") != 0 && strcmp(name, "engine") != 0;
}

static int valid_name(const char *s)
{
	if (!*s || *s == '.' || *s == '-')
		return 0;
	for (; *s; s++)
		if (!name_char(*s))
			return 0;
	return 1;
}

const char *recipe_placeholder(const char *s, size_t *len)
{
	for (const char *p = strchr(s, '{'); p; p = strchr(p + 1, '{')) {
		size_t n = 1;
		while (name_char(p[n]))
			n++;
		if (n > 1 && p[n] == '}') {
			*len = n + 1;
			return p;
		}
	}
	return NULL;
}

static void load_name(struct loader *L, yaml_node_t *v)
{
	const char *s = get_string(L, v, "name");
	if (!s)
		return;
	if (!valid_name(s)) {
		wrong_type(L, v, "name", "letters, digits, '_', '-' and '.' (not starting with '.' or '-')");
		return;
	}
	L->r->name = xstrdup(s);
}

static int load_duration(struct loader *L, yaml_node_t *v, const char *path, int positive, double *out)
{
	double d;
	if (is_string(v) && parse_duration(scalar(v), &d) == 0 && (!positive || d > 0)) {
		*out = d;
		return 0;
	}
	wrong_type(L, v, path, positive ? "a duration above zero such as 0.5s, 250ms or 5m"
					: "a duration such as 0.5s, 250ms or 5m");
	return -1;
}

static void load_measure(struct loader *L, yaml_node_t *v)
{
	static const char *const keys[] = {"warmup", "min_time", "max_time", "rel_ci", "timeout", "grace", "metric"};
	static const char *const metrics[] = {"engine", "wall_time"};
	struct measure *m = &L->r->measure;
	yaml_node_t *val[ARRAY_SIZE(keys)], *key[ARRAY_SIZE(keys)];
	if (v->type != YAML_MAPPING_NODE) {
		wrong_type(L, v, "measure", "a mapping");
		return;
	}
	get_fields(L, v, "measure", keys, ARRAY_SIZE(keys), val, key);
	if (val[0]) {
		uint64_t iters;
		double d;
		if (is_string(val[0]) && parse_u64(scalar(val[0]), &iters) == 0 && iters <= 1000000000) {
			m->warmup_iters = (long)iters;
			m->warmup_s = iters ? -1 : 0;
		} else if (is_string(val[0]) && parse_duration(scalar(val[0]), &d) == 0) {
			m->warmup_s = d;
			m->warmup_iters = 0;
		} else {
			wrong_type(L, val[0], "measure.warmup", "a duration such as 0.2s or a number of iterations");
		}
	}
	int min_ok = val[1] ? !load_duration(L, val[1], "measure.min_time", 0, &m->min_time_s) : 1;
	int max_ok = val[2] ? !load_duration(L, val[2], "measure.max_time", 1, &m->max_time_s) : 1;
	if (val[3]) {
		double d;
		if (is_string(val[3]) && parse_double(scalar(val[3]), &d) == 0 && d > 0 && d < 1)
			m->rel_ci = d;
		else
			wrong_type(L, val[3], "measure.rel_ci", "a number between 0 and 1");
	}
	int timeout_ok = val[4] ? !load_duration(L, val[4], "measure.timeout", 1, &m->timeout_s) : 1;
	L->timeout_node = val[4] ? val[4] : val[2];
	L->measure_ok = timeout_ok && max_ok;
	if (val[5])
		load_duration(L, val[5], "measure.grace", 0, &m->grace_s);
	if (val[6]) {
		m->wall_time = get_enum(L, val[6], "measure.metric", metrics, ARRAY_SIZE(metrics)) == 1;
		L->wall_time_node = m->wall_time ? val[6] : NULL;
	}
	if (min_ok && max_ok && m->min_time_s > m->max_time_s) {
		yaml_node_t *at = val[1] ? val[1] : val[2];
		errorf(L, node_mark(at), "'measure.min_time' (%gs) must not exceed 'measure.max_time' (%gs)",
		       m->min_time_s, m->max_time_s);
	}
}

/* A count for the slurm executor: 1 .. max; -1 after reporting. */
static long get_count(struct loader *L, yaml_node_t *v, const char *path, long max)
{
	uint64_t n;
	if (is_string(v) && parse_u64(scalar(v), &n) == 0 && n >= 1 && n <= (uint64_t)max)
		return (long)n;
	char what[64];
	snprintf(what, sizeof(what), "an integer from 1 to %ld", max);
	wrong_type(L, v, path, what);
	return -1;
}

/* executor: local | slurm | {slurm: {partition, account, qos, time, cpus,
 * mem, gpus, throttle, extra}} */
static void load_executor(struct loader *L, yaml_node_t *v)
{
	static const char *const names[] = {"local", "slurm"};
	static const char *const keys[] = {"partition", "account", "qos", "time", "cpus",
					   "mem", "gpus", "throttle", "extra"};
	struct slurm_spec *sl = &L->r->slurm;
	if (is_string(v)) {
		sl->given = get_enum(L, v, "executor", names, ARRAY_SIZE(names)) == 1;
		return;
	}
	yaml_node_t *ev[2], *ek[2];
	if (v->type != YAML_MAPPING_NODE) {
		wrong_type(L, v, "executor", "'local', 'slurm' or a mapping such as {slurm: {partition: gpu}}");
		return;
	}
	get_fields(L, v, "executor", names, 2, ev, ek);
	if (!ev[1])
		return;
	sl->given = 1;
	if (is_null(ev[1]))
		return;
	if (ev[1]->type != YAML_MAPPING_NODE) {
		wrong_type(L, ev[1], "executor.slurm", "a mapping");
		return;
	}
	yaml_node_t *val[ARRAY_SIZE(keys)], *key[ARRAY_SIZE(keys)];
	get_fields(L, ev[1], "executor.slurm", keys, ARRAY_SIZE(keys), val, key);
	char **str[] = {&sl->partition, &sl->account, &sl->qos};
	for (size_t i = 0; i < 3; i++)
		if (val[i]) {
			char *path = xasprintf("executor.slurm.%s", keys[i]);
			const char *s = get_string(L, val[i], path);
			if (s && (!*s || strpbrk(s, " \t\n")))
				wrong_type(L, val[i], path, "one word");
			else if (s)
				*str[i] = xstrdup(s);
			free(path);
		}
	if (val[3])
		load_duration(L, val[3], "executor.slurm.time", 1, &sl->time_s);
	if (val[4])
		sl->cpus = get_count(L, val[4], "executor.slurm.cpus", 4096);
	if (val[5]) {
		const char *s = get_string(L, val[5], "executor.slurm.mem");
		size_t digits = s ? strspn(s, "0123456789") : 0;
		if (s && (!digits || (s[digits] && (!strchr("KMGTkmgt", s[digits]) || s[digits + 1]))))
			wrong_type(L, val[5], "executor.slurm.mem", "a size such as 4G or 500M");
		else if (s)
			sl->mem = xstrdup(s);
	}
	if (val[6])
		sl->gpus = get_count(L, val[6], "executor.slurm.gpus", 64);
	if (val[7])
		sl->throttle = get_count(L, val[7], "executor.slurm.throttle", 1000000);
	if (val[8]) {
		yaml_node_t *x = val[8];
		if (x->type != YAML_SEQUENCE_NODE) {
			wrong_type(L, x, "executor.slurm.extra", "a list of sbatch arguments");
			return;
		}
		size_t n = (size_t)(x->data.sequence.items.top - x->data.sequence.items.start);
		sl->extra = xcalloc(n + 1, sizeof(char *));
		for (size_t i = 0; i < n; i++) {
			const char *s = get_string(L, node_at(L, x->data.sequence.items.start[i]),
						   "executor.slurm.extra[]");
			if (s)
				sl->extra[sl->nextra++] = xstrdup(s);
		}
	}
}

/* A container setting shared by the section and its entries: `network` a
 * name, `cpus` a positive number, `memory` bytes with an optional k, m or g
 * suffix (the runtimes' syntax). NULL after reporting when it is wrong. */
static const char *container_setting(struct loader *L, yaml_node_t *n, const char *path, const char *key)
{
	char *at = xasprintf("%s.%s", path, key);
	const char *s = get_string(L, n, at), *ok = NULL;
	double d;
	if (!s) {
		/* reported */
	} else if (!strcmp(key, "network")) {
		if (valid_name(s))
			ok = s;
		else
			wrong_type(L, n, at, "a network name ('none', 'host', 'bridge', ...)");
	} else if (!strcmp(key, "cpus")) {
		if (parse_double(s, &d) == 0 && d > 0 && d <= 4096)
			ok = s;
		else
			wrong_type(L, n, at, "a number of CPUs above 0");
	} else { /* memory */
		size_t len = strspn(s, "0123456789");
		if (len > 0 && len < 16 && (!s[len] || (strchr("kmgKMG", s[len]) && !s[len + 1])) && atol(s) > 0)
			ok = s;
		else
			wrong_type(L, n, at, "a size in bytes with an optional k, m or g suffix (512m)");
	}
	free(at);
	return ok;
}

static const char *const container_keys[] = {"image", "build", "runtime", "network", "cpus",
					     "memory", "context", "args", "engine"};
static const char *const container_runtimes[] = {"auto", "podman", "docker"};

/* containers.cache: off, or the absolute host directory mounted into every
 * container as its engines' caches (images.c); a name --volume cannot
 * carry (':' or ',') or a relative one is an error. */
static void container_cache(struct loader *L, yaml_node_t *n)
{
	const char *s = get_string(L, n, "containers.cache");
	if (!s)
		return;
	if (strcmp(s, "off") != 0 && (s[0] != '/' || strpbrk(s, ":,\n") || strlen(s) > 2048)) {
		wrong_type(L, n, "containers.cache",
			   "off, or an absolute directory without ':' or ',' (/scratch/matrix-cache)");
		return;
	}
	free(L->r->container_cache);
	L->r->container_cache = xstrdup(s);
}

/* The containers section's own settings (runtime, network, cpus, memory),
 * the entries' defaults, into def[2..5] (indexes of container_keys), and
 * its cache (r->container_cache); their pairs are marked in skip. */
static void container_defaults(struct loader *L, yaml_node_t *v, unsigned char *skip, const char *def[6])
{
	size_t np = (size_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
	for (size_t i = 0; i < np; i++) {
		yaml_node_pair_t *pr = &v->data.mapping.pairs.start[i];
		if (skip[i])
			continue;
		yaml_node_t *k = node_at(L, pr->key), *val = node_at(L, pr->value);
		if (!strcmp(scalar(k), "runtime")) {
			int rt = get_enum(L, val, "containers.runtime", container_runtimes,
					  ARRAY_SIZE(container_runtimes));
			def[2] = rt > 0 ? container_runtimes[rt] : NULL;
		} else if (!strcmp(scalar(k), "network") || !strcmp(scalar(k), "cpus") || !strcmp(scalar(k), "memory")) {
			size_t j = !strcmp(scalar(k), "network") ? 3 : !strcmp(scalar(k), "cpus") ? 4 : 5;
			def[j] = container_setting(L, val, "containers", scalar(k));
		} else if (!strcmp(scalar(k), "cache")) {
			container_cache(L, val);
		} else {
			continue;
		}
		skip[i] = 1;
	}
}

/* What an entry's mapping holds beyond its settings in got[]. */
struct container_extra {
	yaml_node_t *args;        /* args: (a build's), or NULL */
	const char *engine;       /* "native" | "pytorch", or NULL */
	struct mark engine_mark;
};

/* The build-only keys of entry path (context, args) and its engine, fv and
 * fk as get_fields filled them. Returns 1 when they are right, 0 after errors. */
static int container_entry_extra(struct loader *L, yaml_node_t **fv, yaml_node_t **fk, const char *path,
				 const char *got[7], struct container_extra *x)
{
	int ok = 1;
	for (size_t j = 6; j < 8; j++)
		if (fv[j] && !fv[1]) {
			errorf(L, node_mark(fk[j]), "'%s.%s' is only for a 'build' entry", path, container_keys[j]);
			ok = 0;
		}
	if (fv[6]) {
		char *at = xasprintf("%s.context", path);
		if (!(got[6] = get_string(L, fv[6], at)))
			ok = 0;
		free(at);
	}
	x->args = fv[7];
	if (fv[8]) {
		char *at = xasprintf("%s.engine", path);
		int e = get_enum(L, fv[8], at, engine_names, 2);
		free(at);
		if (e < 0)
			ok = 0;
		else
			x->engine = engine_names[e];
		x->engine_mark = node_mark(fk[8]);
	}
	return ok;
}

/* The settings of entry path: IMAGE, or a mapping {image | build, context,
 * args, runtime, network, cpus, memory, engine}, into got[] (indexes of
 * container_keys; NULL where not given) and x. Returns 1 when it is right,
 * 0 after errors. */
/* An image reference goes to the runtime as an argument of its own: one
 * that starts with '-' would be read as an option ('--privileged'), and no
 * reference holds white space or a control character. 0 after reporting. */
static int check_image(struct loader *L, yaml_node_t *n, const char *path)
{
	const char *ref = scalar(n);
	int bad = *ref == '-';
	for (const unsigned char *c = (const unsigned char *)ref; *c && !bad; c++)
		bad = *c <= ' ' || *c == 0x7f;
	if (bad)
		errorf(L, node_mark(n), "'%s' must be an image reference such as debian:bookworm or "
					"registry.example.org/team/engine:1.0, not '%s'%s", path, ref,
		       *ref == '-' ? " (a runtime would read it as an option)" : " (white space or a control character)");
	return !bad;
}

static int container_entry(struct loader *L, yaml_node_t *val, const char *path, const char *got[7],
			   struct container_extra *x)
{
	int ok = 1;
	if (is_string(val)) {
		got[0] = scalar(val);
		ok = check_image(L, val, path);
	} else if (val->type == YAML_MAPPING_NODE) {
		yaml_node_t *fv[9], *fk[9];
		get_fields(L, val, path, container_keys, 9, fv, fk);
		if (!fv[0] == !fv[1]) {
			errorf(L, node_mark(fv[0] && fv[1] ? fk[1] : val), "'%s' needs either 'image' or 'build'%s", path,
			       fv[0] ? ", not both" : "");
			ok = 0;
		}
		for (size_t j = 0; j < 2; j++)
			if (fv[j]) {
				char *at = xasprintf("%s.%s", path, container_keys[j]);
				if (!(got[j] = get_string(L, fv[j], at)) || (j == 0 && !check_image(L, fv[j], at)))
					ok = 0;
				free(at);
			}
		if (fv[2]) {
			char *at = xasprintf("%s.runtime", path);
			int rt = get_enum(L, fv[2], at, container_runtimes, ARRAY_SIZE(container_runtimes));
			free(at);
			if (rt < 0)
				ok = 0;
			got[2] = rt > 0 ? container_runtimes[rt] : "auto";
		}
		for (size_t j = 3; j < 6; j++)
			if (fv[j] && !(got[j] = container_setting(L, fv[j], path, container_keys[j])))
				ok = 0;
		ok = container_entry_extra(L, fv, fk, path, got, x) && ok;
	} else {
		wrong_type(L, val, path, "an image name or a mapping with 'image' or 'build'");
		ok = 0;
	}
	return ok;
}

/* A build entry's args: {NAME: VALUE, ...} as "NAME=VALUE" strings into c
 * (the --build-arg of each). Returns 0, or -1 after reporting. */
static int container_args(struct loader *L, yaml_node_t *v, const char *path, struct container *c)
{
	char *at = xasprintf("%s.args", path);
	int rc = 0;
	if (v->type != YAML_MAPPING_NODE) {
		wrong_type(L, v, at, "a mapping of build arguments (BASE: debian:bookworm)");
		free(at);
		return -1;
	}
	unsigned char *skip = check_mapping_keys(L, v);
	size_t np = (size_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
	c->args = xcalloc(np + 1, sizeof(char *));
	for (size_t i = 0; i < np; i++) {
		yaml_node_pair_t *pr = &v->data.mapping.pairs.start[i];
		yaml_node_t *k = node_at(L, pr->key), *val = node_at(L, pr->value);
		if (skip[i]) {
			rc = -1;
			continue;
		}
		size_t n = strspn(scalar(k), "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
		if (!n || scalar(k)[n] || (scalar(k)[0] >= '0' && scalar(k)[0] <= '9')) {
			errorf(L, node_mark(k), "build argument '%s' in '%s' must be letters, digits and '_', not starting with a digit",
			       scalar(k), at);
			rc = -1;
			continue;
		}
		char *vat = xasprintf("%s.%s", at, scalar(k));
		const char *s = get_string(L, val, vat);
		free(vat);
		if (!s) {
			rc = -1;
			continue;
		}
		c->args[c->nargs++] = xasprintf("%s=%s", scalar(k), s);
	}
	free(skip);
	free(at);
	return rc;
}

/* containers: {runtime: auto|podman|docker, network:, cpus:, memory:,
 * NAME: IMAGE | {image: IMAGE | build: DIR [context: DIR] [args: {K: V}],
 * runtime:, network:, cpus:, memory:, engine: native|pytorch}}.
 * The section's runtime, network, cpus and memory are every entry's defaults. */
static void load_containers(struct loader *L, yaml_node_t *v)
{
	struct recipe *r = L->r;
	size_t errs = L->nerrs;
	if (v->type != YAML_MAPPING_NODE) {
		wrong_type(L, v, "containers", "a mapping of names to images");
		return;
	}
	unsigned char *skip = check_mapping_keys(L, v);
	size_t np = (size_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
	r->containers = xcalloc(np ? np : 1, sizeof(*r->containers));
	/* the section's settings first: they are the entries' defaults */
	const char *def[6] = {0};
	container_defaults(L, v, skip, def);
	for (size_t i = 0; i < np; i++) {
		yaml_node_pair_t *pr = &v->data.mapping.pairs.start[i];
		if (skip[i])
			continue;
		yaml_node_t *k = node_at(L, pr->key), *val = node_at(L, pr->value);
		char *path = xasprintf("containers.%s", scalar(k));
		const char *got[7] = {0};
		struct container_extra x = {0};
		int ok = 1;
		if (!valid_name(scalar(k))) {
			errorf(L, node_mark(k),
			       "container name '%s' must be letters, digits, '_', '-' and '.' (not starting with '.' or '-')",
			       scalar(k));
			ok = 0;
		}
		ok = container_entry(L, val, path, got, &x) && ok;
		if (!ok || !(got[0] || got[1])) {
			free(path);
			continue;
		}
		for (size_t j = 2; j < 6; j++)
			if (!got[j])
				got[j] = def[j];
		struct container *c = &r->containers[r->ncontainers++];
		c->name = xstrdup(scalar(k));
		c->image = got[0] ? xstrdup(got[0]) : NULL;
		c->build = got[1] ? xstrdup(got[1]) : NULL;
		c->runtime = got[2] && strcmp(got[2], "auto") ? xstrdup(got[2]) : NULL;
		c->network = xstrdup(got[3] ? got[3] : "none");
		c->cpus = got[4] ? xstrdup(got[4]) : NULL;
		c->memory = got[5] ? xstrdup(got[5]) : NULL;
		c->context = got[6] ? xstrdup(got[6]) : NULL;
		c->engine = x.engine;
		c->engine_mark = x.engine_mark;
		c->mark = node_mark(k);
		if (x.args)
			container_args(L, x.args, path, c); /* errors counted: containers_ok */
		free(path);
	}
	free(skip);
	L->containers_ok = L->nerrs == errs;
}

/* The nitems levels of factor f, items of a sequence (NULL: the single
 * level val), as written; a level that is not a one-line scalar is an error
 * and left out. */
static void load_levels(struct loader *L, struct factor *f, yaml_node_item_t *items, size_t nitems,
			yaml_node_t *val)
{
	const char *name = f->name;
	f->levels = xcalloc(nitems, sizeof(*f->levels));
	f->level_marks = xcalloc(nitems, sizeof(*f->level_marks));
	for (size_t j = 0; j < nitems; j++) {
		yaml_node_t *l = items ? node_at(L, items[j]) : val;
		char buf[64];
		if (l->type != YAML_SCALAR_NODE)
			errorf(L, node_mark(l), "levels of factor '%s' must be scalars, not %s", name,
			       describe(l, buf, sizeof(buf)));
		else if (is_null(l) || !*scalar(l))
			errorf(L, node_mark(l), "empty level in factor '%s'", name);
		else if (strcspn(scalar(l), "\r\n\t") != strlen(scalar(l)))
			errorf(L, node_mark(l), "level %s of factor '%s' must be on one line", describe(l, buf, sizeof(buf)), name);
		else {
			f->levels[f->nlevels] = xstrdup(scalar(l));
			f->level_marks[f->nlevels] = node_mark(l);
			f->nlevels++;
		}
	}
}

static const char *expand_item(const char *item, struct strbuf *sb);

#define RANGE_MAX_LEVELS 1000

/* The levels of range mapping val, "1,2,4", into sb (empty first), read
 * quietly: -1 when it is not a well-formed range (load_range says why). */
static int range_levels(struct loader *L, yaml_node_t *val, struct strbuf *sb)
{
	yaml_node_t *range = NULL, *step = NULL;
	for (yaml_node_pair_t *p = val->data.mapping.pairs.start; p < val->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(L, p->key);
		if (is_string(k) && !strcmp(scalar(k), "range"))
			range = node_at(L, p->value);
		else if (is_string(k) && !strcmp(scalar(k), "step"))
			step = node_at(L, p->value);
	}
	yaml_node_item_t *it = range && range->type == YAML_SEQUENCE_NODE ? range->data.sequence.items.start : NULL;
	long lo, hi, k;
	if (!it || range->data.sequence.items.top - it != 2 || node_at(L, it[0])->type != YAML_SCALAR_NODE ||
	    node_at(L, it[1])->type != YAML_SCALAR_NODE || parse_long(scalar(node_at(L, it[0])), &lo) < 0 ||
	    parse_long(scalar(node_at(L, it[1])), &hi) < 0 || (step && step->type != YAML_SCALAR_NODE))
		return -1;
	const char *st = step ? scalar(step) : "+1", *num = st + (*st == '+' || *st == 'x');
	if (*num == '-' || parse_long(num, &k) < 0)
		return -1;
	char *item = xasprintf("%ld..%ld:%c%ld", lo, hi, *st == 'x' ? 'x' : '+', k);
	sb_reset(sb);
	const char *why = expand_item(item, sb);
	free(item);
	return why ? -1 : 0;
}

/* Factor f's levels from a range mapping val, {range: [START, END], step:
 * +K | xK | K} (step default +1: every integer), as the command line's
 * START..END:+K reads them (expand_item); each level marked at the range.
 * Returns 0, or -1 after reporting (f has no levels then). Long because
 * each way a range can be wrong has its own located message. */
static int load_range(struct loader *L, struct factor *f, yaml_node_t *val)
{
	yaml_node_t *range = NULL, *step = NULL;
	char buf[64];
	yaml_node_pair_t *p0 = val->data.mapping.pairs.start, *p;
	for (p = p0; p < val->data.mapping.pairs.top && !range; p++)
		if (is_string(node_at(L, p->key)) && !strcmp(scalar(node_at(L, p->key)), "range"))
			range = node_at(L, p->value);
	if (!range) { /* no range meant: a mapping where levels go */
		errorf(L, node_mark(val),
		       "'factors.%s' must be a sequence of levels ([1, 8, 64]), a single level or a range "
		       "({range: [1, 256], step: x2}), not a mapping", f->name);
		return -1;
	}
	unsigned char *skip = check_mapping_keys(L, val);
	int bad = 0;
	for (p = p0; p < val->data.mapping.pairs.top; p++) {
		if (skip[p - p0]) {
			bad = 1;
			continue;
		}
		yaml_node_t *k = node_at(L, p->key);
		if (!strcmp(scalar(k), "step"))
			step = node_at(L, p->value);
		else if (strcmp(scalar(k), "range") != 0) {
			errorf(L, node_mark(k), "unknown key '%s' in the range of factor '%s' (expected range or step)",
			       scalar(k), f->name);
			bad = 1;
		}
	}
	free(skip);
	if (bad)
		return -1;
	yaml_node_item_t *it = range->type == YAML_SEQUENCE_NODE ? range->data.sequence.items.start : NULL;
	long ends[2];
	if (!it || range->data.sequence.items.top - it != 2) {
		errorf(L, node_mark(range), "'factors.%s.range' must be [START, END], two integers, not %s", f->name,
		       describe(range, buf, sizeof(buf)));
		return -1;
	}
	for (int e = 0; e < 2; e++) {
		yaml_node_t *n = node_at(L, it[e]);
		if (n->type != YAML_SCALAR_NODE || parse_long(scalar(n), &ends[e]) < 0) {
			errorf(L, node_mark(n), "'factors.%s.range': its %s must be an integer, not %s", f->name,
			       e ? "END" : "START", describe(n, buf, sizeof(buf)));
			return -1;
		}
	}
	long lo = ends[0], hi = ends[1];
	const char *st = step && step->type == YAML_SCALAR_NODE ? scalar(step) : step ? NULL : "+1";
	long k;
	if (!st || parse_long(st + (*st == '+' || *st == 'x'), &k) < 0 || *(st + (*st == '+' || *st == 'x')) == '-' ||
	    k < (*st == 'x' ? 2 : 1)) {
		errorf(L, node_mark(step), "'factors.%s.step' must be +K or K (add K >= 1) or xK (times K >= 2), not %s",
		       f->name, st ? st : describe(step, buf, sizeof(buf)));
		return -1;
	}
	if (lo < 0 || hi < lo || (*st == 'x' && lo < 1)) {
		errorf(L, node_mark(range), "'factors.%s.range' must be [START, END] with 0 <= START <= END%s, not [%ld, %ld]",
		       f->name, *st == 'x' ? " and 1 <= START (step x)" : "", lo, hi);
		return -1;
	}
	struct strbuf sb = {0};
	if (range_levels(L, val, &sb) != 0) { /* well formed: too many levels */
		errorf(L, node_mark(range), "factor '%s': a range gives at most %d levels", f->name, RANGE_MAX_LEVELS);
		sb_free(&sb);
		return -1;
	}
	size_t n = 1;
	for (const char *c = sb.buf; *c; c++)
		n += *c == ',';
	f->levels = xcalloc(n, sizeof(*f->levels));
	f->level_marks = xcalloc(n, sizeof(*f->level_marks));
	for (char *tok = sb.buf, *comma; tok; tok = comma ? comma + 1 : NULL) {
		comma = strchr(tok, ',');
		if (comma)
			*comma = '\0';
		f->levels[f->nlevels] = xstrdup(tok);
		f->level_marks[f->nlevels++] = node_mark(range);
	}
	sb_free(&sb);
	return 0;
}

/* A factor's name k as a recipe may use it: 0, or -1 after a located error
 * (not a name, 'result', or a column results.csv has of its own; the last
 * is marked broken so that its uses are not errors of their own). */
static int factor_name_check(struct loader *L, yaml_node_t *k, const char *name)
{
	if (!valid_name(name)) {
		errorf(L, node_mark(k),
		       "factor name '%s' must be letters, digits, '_', '-' and '.' (not starting with '.' or '-')",
		       name);
		return -1;
	}
	if (!strcmp(name, "result")) {
		errorf(L, node_mark(k), "factor name 'result' is reserved ('{result}' names the result file)");
		return -1;
	}
	if (factor_name_taken(name)) {
		errorf(L, node_mark(k),
		       "factor name '%s' is reserved: results.csv has a column '%s' of its own, which the "
		       "factor's would shadow", name, name);
		L->broken[L->nbroken++] = name; /* its uses are not errors of their own */
		return -1;
	}
	return 0;
}

/* Read factors: names and level texts as written; levels are checked later,
 * once the engine is known. */
static void load_factors(struct loader *L, yaml_node_t *v)
{
	struct recipe *r = L->r;
	if (v->type != YAML_MAPPING_NODE) {
		wrong_type(L, v, "factors", "a mapping");
		L->factors_broken = 1;
		return;
	}
	size_t np = (size_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
	if (np == 0) {
		errorf(L, node_mark(v), "'factors' must not be empty");
		L->factors_broken = 1;
		return;
	}
	unsigned char *skip = check_mapping_keys(L, v);
	r->factors = xcalloc(np, sizeof(*r->factors));
	L->broken = xcalloc(2 * np, sizeof(*L->broken)); /* a factor, and the name it misspells */
	for (size_t i = 0; i < np; i++) {
		yaml_node_pair_t *pr = &v->data.mapping.pairs.start[i];
		if (skip[i])
			continue;
		yaml_node_t *k = node_at(L, pr->key), *val = node_at(L, pr->value);
		const char *name = scalar(k);
		if (!strcmp(name, "engine"))
			L->saw_factor_engine = 1;
		if (factor_name_check(L, k, name) < 0)
			continue;
		yaml_node_item_t *items = NULL;
		size_t nitems = 1;
		if (val->type == YAML_SEQUENCE_NODE) {
			items = val->data.sequence.items.start;
			nitems = (size_t)(val->data.sequence.items.top - items);
		} else if (val->type == YAML_MAPPING_NODE) { /* a range */
			struct factor *f = &r->factors[r->nfactors];
			f->name = xstrdup(name);
			f->mark = node_mark(k);
			if (load_range(L, f, val) == 0) {
				r->nfactors++;
				continue;
			}
			free(f->name);
			memset(f, 0, sizeof(*f));
			L->broken[L->nbroken++] = name;
			continue;
		} else if (is_null(val)) {
			nitems = 0;
		}
		if (nitems == 0) {
			errorf(L, node_mark(is_null(val) ? k : val), "factor '%s' has no levels", name);
			L->broken[L->nbroken++] = name;
			continue;
		}
		struct factor *f = &r->factors[r->nfactors++];
		f->name = xstrdup(name);
		f->mark = node_mark(k);
		load_levels(L, f, items, nitems, val);
		if (f->nlevels == 0) {
			/* every level was reported; keep the factor out of the recipe */
			free(f->name);
			free(f->levels);
			free(f->level_marks);
			memset(f, 0, sizeof(*f));
			r->nfactors--;
			L->broken[L->nbroken++] = name;
		}
	}
	free(skip);
}

static void level_hint_error(struct loader *L, struct mark m, const char *level, const char *factor,
			     const char *where, const char *const *cands, size_t n, const char *expected)
{
	struct strbuf sb = {0};
	sb_printf(&sb, "unknown level '%s' for factor '%s'%s", level, factor, where);
	const char *c = cands ? vocab_closest(level, cands, n) : NULL;
	if (c)
		sb_printf(&sb, " (did you mean '%s'?)", c);
	else
		sb_printf(&sb, " (expected %s)", expected);
	errorf(L, m, "%s", sb.buf);
	sb_free(&sb);
}

static void check_levels(struct loader *L, struct factor *f)
{
	struct recipe *r = L->r;
	const struct vocab_factor *vf = f->vocab;
	if (!vf)
		return;
	if (!strcmp(vf->name, "container")) {
		if (!L->containers_ok)
			return; /* reported: no containers, or broken ones */
		const char **names = xcalloc(r->ncontainers + 1, sizeof(*names));
		for (size_t i = 0; i < r->ncontainers; i++)
			names[i] = r->containers[i].name;
		struct strbuf exp = {0};
		sb_puts(&exp, "one of: ");
		join(&exp, names, r->ncontainers);
		for (size_t j = 0; j < f->nlevels; j++) {
			size_t i;
			for (i = 0; i < r->ncontainers; i++)
				if (!strcmp(f->levels[j], names[i]))
					break;
			if (i == r->ncontainers)
				level_hint_error(L, f->level_marks[j], f->levels[j], f->name, "", names, r->ncontainers,
						 exp.buf);
		}
		sb_free(&exp);
		free(names);
		return;
	}
	size_t nv = 0;
	if (vf->levels)
		while (vf->levels[nv])
			nv++;
	for (size_t j = 0; j < f->nlevels; j++) {
		const char *why;
		const char *canon = vocab_check_level(vf, f->levels[j], &why);
		if (canon) {
			if (canon != f->levels[j] && strcmp(canon, f->levels[j])) {
				free(f->levels[j]);
				f->levels[j] = xstrdup(canon);
			}
		} else if (vf->type == VOCAB_INT) {
			errorf(L, f->level_marks[j], "invalid level '%s' for factor '%s' (expected %s)", f->levels[j],
			       f->name, why);
		} else {
			level_hint_error(L, f->level_marks[j], f->levels[j], f->name, "", vf->levels, nv, why);
		}
	}
}

/* Duplicate levels (after canonical spelling: "true" repeats "on"). */
static void check_duplicate_levels(struct loader *L, struct factor *f)
{
	struct keyref *refs = xmalloc((f->nlevels ? f->nlevels : 1) * sizeof(*refs));
	for (size_t j = 0; j < f->nlevels; j++) {
		refs[j].s = f->levels[j];
		refs[j].i = j;
	}
	qsort(refs, f->nlevels, sizeof(*refs), cmp_keyref);
	for (size_t j = 1; j < f->nlevels; j++)
		if (!strcmp(refs[j].s, refs[j - 1].s)) {
			size_t first = j - 1;
			while (first > 0 && !strcmp(refs[first - 1].s, refs[j].s))
				first--;
			/* quote the level as written */
			struct mark m = f->level_marks[refs[j].i];
			const char *why, *all = f->vocab ? vocab_check_level(f->vocab, "all", &why) : NULL;
			int cores = all && !strcmp(f->vocab->name, "threads") && !strcmp(all, f->levels[refs[j].i]);
			/* an override's marks have no line: 'first at line 0' said nothing */
			unsigned line = f->level_marks[refs[first].i].line;
			char at[48] = "earlier in the override";
			if (line)
				snprintf(at, sizeof(at), "first at line %u", line);
			errorf(L, m, "duplicate level '%s' in factor '%s' (%s%s%s)", f->levels[refs[j].i], f->name, at,
			       cores ? "; all is this machine's cores: " : "", cores ? all : "");
		}
	free(refs);
}

/* Decide the engine and which factors the vocabulary governs, then check
 * every level. Long (~80 lines) because the engine's three sources (the
 * key, a factor, the command) and their conflicts are one decision, each
 * with its own located message; split, the order of the checks would be
 * spread over several functions. */
static void load_engine_and_levels(struct loader *L, yaml_node_t *engine, yaml_node_t *engine_key)
{
	struct recipe *r = L->r;
	long ef = recipe_factor_index(r, "engine");
	if (engine && ef >= 0) {
		struct mark fm = r->factors[ef].mark, km = node_mark(engine_key);
		int factor_later = fm.line > km.line || (fm.line == km.line && fm.col > km.col);
		errorf(L, factor_later ? fm : km, "'engine' is both a key and a factor");
	} else if (engine && engine->type == YAML_SEQUENCE_NODE) {
		/* 'engine: [native, pytorch]' as a key: the engines compared are a factor */
		errorf(L, node_mark(engine), "'engine' must be 'native', 'pytorch' or 'command', not a sequence "
		       "(to compare engines, make it a factor: 'factors: {engine: [native, pytorch]}')");
		L->engine_known = 0;
	} else if (engine) {
		int e = get_enum(L, engine, "engine", engine_names, ARRAY_SIZE(engine_names));
		if (e >= 0)
			r->engine = (enum recipe_engine)e;
		L->engine_known = e >= 0;
		if (e == ENGINE_NATIVE || e == ENGINE_PYTORCH) {
			L->vocab_mode = 1;
			L->engine_word = engine_names[e];
		}
		L->uses_command = e == ENGINE_COMMAND;
	} else if (ef >= 0) {
		r->engine = ENGINE_FACTOR;
		L->engine_known = 1;
		struct factor *f = &r->factors[ef];
		for (size_t j = 0; j < f->nlevels; j++) {
			if (!L->vocab_mode && (!strcmp(f->levels[j], "native") || !strcmp(f->levels[j], "pytorch"))) {
				L->vocab_mode = 1;
				L->engine_word = !strcmp(f->levels[j], "native") ? "native" : "pytorch";
			}
			if (!strcmp(f->levels[j], "command"))
				L->uses_command = 1;
		}
	} else if (!L->saw_factor_engine) {
		errorf(L, node_mark(L->root), "missing required key 'engine' (or an 'engine' factor)");
	}

	/* a container's own engine replaces the recipe's native or pytorch: the
	 * two share the factor vocabulary */
	for (size_t i = 0; i < r->ncontainers; i++)
		if (r->containers[i].engine && !(engine && (r->engine == ENGINE_NATIVE || r->engine == ENGINE_PYTORCH)))
			errorf(L, r->containers[i].engine_mark,
			       "'containers.%s.engine' needs the recipe's 'engine' to be native or pytorch "
			       "(not a command or an engine factor)",
			       r->containers[i].name);

	static const char *const runner_factors[] = {"container", "engine", "device"};
	const char *vnames[64];
	size_t nvn = 0;
	for (const struct vocab_factor *vf = vocab_factors; vf->name && nvn < ARRAY_SIZE(vnames); vf++)
		vnames[nvn++] = vf->name;
	for (size_t i = 0; i < r->nfactors; i++) {
		struct factor *f = &r->factors[i];
		const struct vocab_factor *vf = vocab_find(f->name);
		if (L->vocab_mode && !vf) {
			struct strbuf sb = {0};
			sb_printf(&sb, "unknown factor '%s'", f->name);
			const char *c = vocab_closest(f->name, vnames, nvn);
			if (c) {
				sb_printf(&sb, " (did you mean '%s'?)", c);
				/* references to the right name are follow-on errors, and
				 * the misspelt name is no candidate for them */
				if (recipe_factor_index(r, c) < 0)
					L->broken[L->nbroken++] = c;
			} else {
				sb_printf(&sb, " for the %s engine (expected one of: ", L->engine_word);
				join(&sb, vnames, nvn);
				sb_puts(&sb, ")");
			}
			errorf(L, f->mark, "%s", sb.buf);
			sb_free(&sb);
		}
		if (!L->vocab_mode && vf) {
			size_t k;
			for (k = 0; k < ARRAY_SIZE(runner_factors); k++)
				if (!strcmp(vf->name, runner_factors[k]))
					break;
			if (k == ARRAY_SIZE(runner_factors))
				vf = NULL;
		}
		f->vocab = vf;
		check_levels(L, f);
		check_duplicate_levels(L, f);
	}
}

static void load_command(struct loader *L, yaml_node_t *v, yaml_node_t *key)
{
	struct recipe *r = L->r;
	if (!v) {
		if (L->uses_command)
			errorf(L, node_mark(L->root), "missing required key 'command' (the argv of the command engine)");
		return;
	}
	if (!L->uses_command) {
		if (L->engine_known)
			errorf(L, node_mark(key), "'command' is only used by the command engine");
		return;
	}
	if (v->type != YAML_SEQUENCE_NODE) {
		wrong_type(L, v, "command", "a sequence of strings");
		return;
	}
	yaml_node_item_t *items = v->data.sequence.items.start;
	size_t n = (size_t)(v->data.sequence.items.top - items);
	if (n == 0) {
		errorf(L, node_mark(v), "'command' must not be empty");
		return;
	}
	/* the names a placeholder may have: a factor, then the runner's */
	static const char *const runner_names[] = {"result", "recipe_dir", "run_dir"};
	size_t ncands = r->nfactors + ARRAY_SIZE(runner_names);
	const char **cands = xcalloc(ncands, sizeof(*cands));
	for (size_t i = 0; i < r->nfactors; i++)
		cands[i] = r->factors[i].name;
	for (size_t i = 0; i < ARRAY_SIZE(runner_names); i++)
		cands[r->nfactors + i] = runner_names[i];
	r->command = xcalloc(n, sizeof(*r->command));
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *it = node_at(L, items[i]);
		if (!is_string(it)) {
			wrong_type(L, it, "command", "a sequence of strings");
			continue;
		}
		const char *s = scalar(it), *p;
		size_t len;
		while ((p = recipe_placeholder(s, &len))) {
			char *name = xstrndup(p + 1, len - 2);
			int known = recipe_factor_index(r, name) >= 0;
			for (size_t k = 0; !known && k < ARRAY_SIZE(runner_names); k++)
				known = strcmp(name, runner_names[k]) == 0;
			for (size_t k = 0; !known && k < L->nbroken; k++)
				known = strcmp(name, L->broken[k]) == 0; /* a factor with its own error */
			if (!known) {
				struct strbuf sb = {0};
				sb_printf(&sb, "unknown placeholder '{%s}' in 'command'", name);
				const char *c = vocab_closest(name, cands, ncands);
				if (c) {
					sb_printf(&sb, " (did you mean '{%s}'?)", c);
				} else {
					sb_puts(&sb, " (expected '{result}', '{recipe_dir}', '{run_dir}' or a factor: ");
					join(&sb, cands, r->nfactors);
					sb_puts(&sb, ")");
				}
				errorf(L, node_mark(it), "%s", sb.buf);
				sb_free(&sb);
			} else if (!strcmp(name, "result") && r->measure.wall_time && recipe_factor_index(r, name) < 0) {
				errorf(L, node_mark(it), "'{result}' in a command that matrix times itself "
				       "('measure.metric: wall_time' writes the result): drop '{result}', or let the "
				       "command write its result and drop 'measure.metric'");
			}
			free(name);
			s = p + len;
		}
		r->command[r->ncommand++] = xstrdup(scalar(it));
	}
	free(cands);
}

/* measure.metric: wall_time needs a command engine that runs on the host
 * (`matrix time` wraps the command), and makes wall_time the report's
 * metric unless report.metric says otherwise. */
static void check_wall_time(struct loader *L)
{
	struct recipe *r = L->r;
	if (!L->wall_time_node)
		return;
	if (L->engine_known && !L->uses_command)
		errorf(L, node_mark(L->wall_time_node), "'measure.metric: wall_time' times a command engine's "
		       "command: the native and pytorch engines time their own steps (drop it, or use "
		       "engine: command)");
	else if (recipe_factor_index(r, "container") >= 0)
		errorf(L, node_mark(L->wall_time_node), "'measure.metric: wall_time' times the command on the host: "
		       "not with a 'container' factor (time the command inside the image and write a result "
		       "file instead)");
	if (!L->report_metric) {
		free(r->report.metric);
		r->report.metric = xstrdup("wall_time");
	}
}

/* The engines that time their own steps (native, pytorch) and matrix time
 * run for the warm-up and max_time at least: a timeout no longer than that
 * kills every point before its measurement ends ('measure.timeout=0.5s'
 * with a max_time of 1s: every point 'timeout'). A command engine's own
 * program takes no measure settings: its timeout is its own business. */
static void check_timeout(struct loader *L)
{
	const struct measure *m = &L->r->measure;
	if (!L->plan || !L->timeout_node || !L->measure_ok || !L->engine_known ||
	    (L->uses_command && !L->wall_time_node))
		return;
	double need = m->max_time_s + (m->warmup_s > 0 ? m->warmup_s : 0);
	if (m->timeout_s > need)
		return;
	if (m->warmup_s > 0)
		errorf(L, node_mark(L->timeout_node),
		       "'measure.timeout' (%gs) must exceed the warm-up and 'measure.max_time' (%gs + %gs): every "
		       "point would be killed before its measurement ends", m->timeout_s, m->warmup_s, m->max_time_s);
	else
		errorf(L, node_mark(L->timeout_node),
		       "'measure.timeout' (%gs) must exceed 'measure.max_time' (%gs): every point would be killed "
		       "before its measurement ends", m->timeout_s, m->max_time_s);
}

static void load_device(struct loader *L, yaml_node_t *v, yaml_node_t *key)
{
	struct recipe *r = L->r;
	long df = recipe_factor_index(r, "device");
	if (df >= 0) {
		free(r->device);
		r->device = NULL;
		if (v) {
			struct mark fm = r->factors[df].mark, km = node_mark(key);
			int factor_later = fm.line > km.line || (fm.line == km.line && fm.col > km.col);
			errorf(L, factor_later ? fm : km, "'device' is both a key and a factor");
		}
		return;
	}
	if (!v)
		return;
	int d = get_enum(L, v, "device", device_names, ARRAY_SIZE(device_names));
	if (d >= 0) {
		free(r->device);
		r->device = xstrdup(device_names[d]);
	}
}

/* A factor named by a scalar node: its index, or -1 after reporting. where
 * names the section (" in 'exclude'"). */
static long resolve_factor(struct loader *L, yaml_node_t *n, const char *path)
{
	struct recipe *r = L->r;
	if (!is_string(n)) {
		wrong_type(L, n, path, "a factor name");
		return -1;
	}
	long fi = recipe_factor_index(r, scalar(n));
	if (fi >= 0)
		return fi;
	for (size_t i = 0; i < L->nbroken; i++)
		if (!strcmp(L->broken[i], scalar(n)))
			return -1;
	if (L->factors_broken) /* every name would be unknown, "expected one of: " none */
		return -1;
	const char **cands = xcalloc(r->nfactors + 1, sizeof(*cands));
	size_t nc = 0;
	for (size_t i = 0; i < r->nfactors; i++)
		if (!L->vocab_mode || vocab_find(r->factors[i].name))
			cands[nc++] = r->factors[i].name; /* not a misspelt one (reported) */
	struct strbuf sb = {0};
	sb_printf(&sb, "unknown factor '%s' in '%s'", scalar(n), path);
	hint(&sb, scalar(n), cands, nc);
	errorf(L, node_mark(n), "%s", sb.buf);
	sb_free(&sb);
	free(cands);
	return -1;
}

/* Whether level is good for the vocabulary of f while one of f's own levels
 * is not (that one is reported where the factor is): a reference that the
 * typo's fix makes good is no error of its own, and was told to use the
 * typo ("unknown level 'default' ... (did you mean 'defualt'?)"). */
static int level_awaits_fix(const struct factor *f, const char *level)
{
	const char *why;
	if (!f->vocab || !vocab_check_level(f->vocab, level, &why))
		return 0;
	for (size_t j = 0; j < f->nlevels; j++)
		if (!vocab_check_level(f->vocab, f->levels[j], &why))
			return 1;
	return 0;
}

/* A level of factor fi named by a node: its index, or -1 after reporting. */
static long resolve_level(struct loader *L, size_t fi, yaml_node_t *n, const char *path)
{
	struct recipe *r = L->r;
	struct factor *f = &r->factors[fi];
	if (n->type != YAML_SCALAR_NODE || is_null(n)) {
		char *p = xasprintf("%s.%s", path, f->name);
		wrong_type(L, n, p, "a level");
		free(p);
		return -1;
	}
	long li = recipe_level_index(r, fi, scalar(n));
	if (li >= 0 || level_awaits_fix(f, scalar(n)))
		return li;
	struct strbuf exp = {0}, where = {0};
	sb_puts(&exp, "one of: ");
	join(&exp, (const char *const *)f->levels, f->nlevels);
	sb_printf(&where, " in '%s'", path);
	level_hint_error(L, node_mark(n), scalar(n), f->name, where.buf, (const char *const *)f->levels, f->nlevels,
			 exp.buf);
	sb_free(&exp);
	sb_free(&where);
	return -1;
}

static void load_exclude(struct loader *L, yaml_node_t *v)
{
	struct recipe *r = L->r;
	if (v->type != YAML_SEQUENCE_NODE) {
		wrong_type(L, v, "exclude", "a sequence of mappings");
		return;
	}
	yaml_node_item_t *items = v->data.sequence.items.start;
	size_t n = (size_t)(v->data.sequence.items.top - items);
	r->excludes = xcalloc(n ? n : 1, sizeof(*r->excludes));
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *rule = node_at(L, items[i]);
		char buf[64];
		if (rule->type != YAML_MAPPING_NODE) {
			errorf(L, node_mark(rule), "exclude rules must be mappings of factors to levels, not %s",
			       describe(rule, buf, sizeof(buf)));
			continue;
		}
		size_t np = (size_t)(rule->data.mapping.pairs.top - rule->data.mapping.pairs.start);
		if (np == 0) {
			errorf(L, node_mark(rule), "empty exclude rule (it would exclude every point)");
			continue;
		}
		unsigned char *skip = check_mapping_keys(L, rule);
		struct exclude_rule *er = &r->excludes[r->nexcludes];
		er->terms = xcalloc(np, sizeof(*er->terms));
		er->mark = node_mark(rule);
		int ok = 1, gone = 0;
		for (size_t j = 0; j < np; j++) {
			yaml_node_pair_t *pr = &rule->data.mapping.pairs.start[j];
			if (skip[j]) {
				ok = 0;
				continue;
			}
			long fi = resolve_factor(L, node_at(L, pr->key), "exclude");
			if (fi < 0) {
				ok = 0;
				continue;
			}
			struct factor *f = &r->factors[fi];
			yaml_node_t *val = node_at(L, pr->value);
			struct exclude_term *t = &er->terms[er->nterms++];
			t->factor = (size_t)fi;
			t->match = xcalloc(f->nlevels, 1);
			if (val->type == YAML_SEQUENCE_NODE) {
				yaml_node_item_t *lv = val->data.sequence.items.start;
				size_t nl = (size_t)(val->data.sequence.items.top - lv);
				if (nl == 0) {
					errorf(L, node_mark(val), "empty level list for factor '%s' in 'exclude'", f->name);
					ok = 0;
				}
				for (size_t k = 0; k < nl; k++) {
					long li = resolve_level(L, (size_t)fi, node_at(L, lv[k]), "exclude");
					if (li == -1)
						ok = 0;
					else if (li >= 0)
						t->match[li] = 1;
				}
			} else {
				long li = resolve_level(L, (size_t)fi, val, "exclude");
				if (li == -1)
					ok = 0;
				else if (li >= 0)
					t->match[li] = 1;
			}
			if (!memchr(t->match, 1, f->nlevels))
				gone = 1; /* every level it names was overridden away */
		}
		free(skip);
		if (ok && !gone) {
			r->nexcludes++;
		} else {
			for (size_t j = 0; j < er->nterms; j++)
				free(er->terms[j].match);
			free(er->terms);
			memset(er, 0, sizeof(*er));
		}
	}
}

static int rule_matches(const struct exclude_rule *er, const size_t *level)
{
	for (size_t t = 0; t < er->nterms; t++)
		if (!er->terms[t].match[level[er->terms[t].factor]])
			return 0;
	return 1;
}

/* Survivors by enumerating only the factors the rules name (the others
 * multiply out): -1 when that sub-cube times the rules exceeds budget. */
static int surviving_subcube(const struct recipe *r, uint64_t cube, uint64_t budget, uint64_t *out)
{
	unsigned char *named = xcalloc(r->nfactors ? r->nfactors : 1, 1);
	uint64_t sub = 1, terms = 0;
	int rc = -1;
	for (size_t e = 0; e < r->nexcludes; e++)
		for (size_t t = 0; t < r->excludes[e].nterms; t++) {
			size_t f = r->excludes[e].terms[t].factor;
			if (!named[f]) {
				named[f] = 1;
				sub *= r->factors[f].nlevels; /* <= cube: no overflow */
			}
			terms++;
		}
	if (terms && sub > budget / terms) {
		free(named);
		return -1;
	}
	size_t *level = xcalloc(r->nfactors ? r->nfactors : 1, sizeof(*level));
	uint64_t n = 0;
	for (;;) {
		size_t e;
		for (e = 0; e < r->nexcludes; e++)
			if (rule_matches(&r->excludes[e], level))
				break;
		n += e == r->nexcludes;
		size_t i = r->nfactors;
		while (i > 0) { /* the odometer over the named factors only */
			i--;
			if (!named[i])
				continue;
			if (++level[i] < r->factors[i].nlevels)
				break;
			level[i] = 0;
		}
		int wrapped = 1;
		for (size_t k = 0; k < r->nfactors; k++)
			if (named[k] && level[k]) {
				wrapped = 0;
				break;
			}
		if (wrapped)
			break;
	}
	*out = n * (cube / sub);
	rc = 0;
	free(level);
	free(named);
	return rc;
}

/* Survivors by inclusion-exclusion over the rules (each a box in the cube):
 * -1 when there are more than 16 rules. */
static int surviving_inclusion_exclusion(const struct recipe *r, uint64_t cube, uint64_t *out)
{
	if (r->nexcludes > 16)
		return -1;
	__int128 excluded = 0;
	size_t maxl = 1;
	for (size_t f = 0; f < r->nfactors; f++)
		if (r->factors[f].nlevels > maxl)
			maxl = r->factors[f].nlevels;
	unsigned char *ok = xmalloc(maxl);
	for (uint32_t set = 1; set < (1u << r->nexcludes); set++) {
		__int128 box = 1;
		for (size_t f = 0; f < r->nfactors && box; f++) {
			size_t nl = r->factors[f].nlevels, cnt = nl;
			int constrained = 0;
			memset(ok, 1, nl);
			for (size_t e = 0; e < r->nexcludes; e++) {
				if (!(set >> e & 1))
					continue;
				for (size_t t = 0; t < r->excludes[e].nterms; t++)
					if (r->excludes[e].terms[t].factor == f) {
						constrained = 1;
						for (size_t l = 0; l < nl; l++)
							ok[l] &= r->excludes[e].terms[t].match[l];
					}
			}
			if (constrained) {
				cnt = 0;
				for (size_t l = 0; l < nl; l++)
					cnt += ok[l];
			}
			box *= cnt;
		}
		excluded += __builtin_popcount(set) % 2 ? box : -box;
	}
	free(ok);
	*out = (uint64_t)((__int128)cube - excluded);
	return 0;
}

int recipe_surviving(const struct recipe *r, uint64_t budget, uint64_t *out)
{
	uint64_t cube = 1;
	for (size_t i = 0; i < r->nfactors; i++) {
		if (cube > UINT64_MAX / r->factors[i].nlevels)
			return -1;
		cube *= r->factors[i].nlevels;
	}
	/* a fraction keeps 1 in 2^p of the combinations of its factors, which
	 * no exclusion names (load_design refuses that) */
	unsigned p = r->design.fractional ? r->design.p : 0;
	if (!r->nexcludes) {
		*out = cube >> p;
		return 0;
	}
	if (surviving_subcube(r, cube, budget, out) == 0 ||
	    surviving_inclusion_exclusion(r, cube, out) == 0) {
		*out >>= p;
		return 0;
	}
	return -1;
}

/* "every point is excluded": exact (recipe_surviving) where that is cheap;
 * else walk level combinations in order until one that no rule matches, and
 * past EXCLUDE_WALK_LIMIT combinations assume one survives. */
static void check_all_excluded(struct loader *L, yaml_node_t *key)
{
	struct recipe *r = L->r;
	uint64_t cube = 1;
	for (size_t i = 0; i < r->nfactors; i++) {
		if (cube > UINT64_MAX / r->factors[i].nlevels) {
			errorf(L, node_mark(key), "the grid is too large (more than 2^64 combinations)");
			return;
		}
		cube *= r->factors[i].nlevels;
	}
	if (cube > UINT64_MAX / r->repeat) {
		errorf(L, node_mark(key), "the grid is too large (%" PRIu64 " combinations x repeat %u: more than 2^64 points)",
		       cube, r->repeat);
		return;
	}
	if (!r->nexcludes)
		return;
	/* a rule that matches every level of each factor it names matches all */
	for (size_t e = 0; e < r->nexcludes; e++) {
		const struct exclude_rule *er = &r->excludes[e];
		size_t t;
		for (t = 0; t < er->nterms; t++) {
			const struct exclude_term *et = &er->terms[t];
			if (memchr(et->match, 0, r->factors[et->factor].nlevels))
				break;
		}
		if (t == er->nterms)
			goto all;
	}
	uint64_t alive;
	if (recipe_surviving(r, (uint64_t)1 << 28, &alive) == 0) {
		if (alive)
			return;
		goto all;
	}
	size_t *level = xcalloc(r->nfactors ? r->nfactors : 1, sizeof(*level));
	uint64_t tried = 0;
	int survivor = 0;
	for (;;) {
		size_t e;
		for (e = 0; e < r->nexcludes; e++)
			if (rule_matches(&r->excludes[e], level))
				break;
		if (e == r->nexcludes || ++tried >= EXCLUDE_WALK_LIMIT) {
			survivor = 1;
			break;
		}
		size_t i = r->nfactors;
		while (i > 0) {
			i--;
			if (++level[i] < r->factors[i].nlevels)
				break;
			level[i] = 0;
			if (i == 0)
				goto done;
		}
		if (r->nfactors == 0)
			break;
	}
done:
	free(level);
	if (survivor)
		return;
all:
	errorf(L, node_mark(key), "every point is excluded (%llu combinations, all matched by exclude rules)",
		       (unsigned long long)cube);
}

/* ---- design: {type: full | fractional, resolution: N, fraction: 1/2^p, factors: [...]} ---- */

/* A resolution: 3..11 or III..XI; 0 after reporting. */
static unsigned design_resolution(struct loader *L, yaml_node_t *v)
{
	if (is_string(v)) {
		uint64_t n;
		if (parse_u64(scalar(v), &n) == 0 && n >= 3 && n <= DESIGN_MAX_K)
			return (unsigned)n;
		for (unsigned i = 3; i <= DESIGN_MAX_K; i++)
			if (!strcmp(scalar(v), design_roman(i)))
				return i;
		if (parse_u64(scalar(v), &n) == 0 && n < 3) {
			errorf(L, node_mark(v), "'design.resolution' must be at least 3 (III), not %s: below III "
			       "main effects are aliased with each other", scalar(v));
			return 0;
		}
	}
	wrong_type(L, v, "design.resolution", "a resolution from 3 to 11 (or III to XI)");
	return 0;
}

/* A fraction 1/2, 1/4, ..., 1/1024: its p (log2 of the denominator); 0 after reporting. */
static unsigned design_fraction(struct loader *L, yaml_node_t *v)
{
	if (is_string(v) && !strncmp(scalar(v), "1/", 2)) {
		uint64_t den;
		if (parse_u64(scalar(v) + 2, &den) == 0 && den >= 2 && den <= 1u << 10 && !(den & (den - 1)))
			return (unsigned)__builtin_ctzll(den);
	}
	wrong_type(L, v, "design.fraction", "a fraction 1/2, 1/4, 1/8, ... (one over a power of two)");
	return 0;
}

/* The factors listed in `design.factors` (a sequence), in declared order.
 * -1 after reporting. */
static int design_factors_listed(struct loader *L, yaml_node_t *list, int fractional)
{
	struct recipe *r = L->r;
	struct design *d = &r->design;
	int ok = 0;
	if (list->type != YAML_SEQUENCE_NODE) {
		wrong_type(L, list, "design.factors", "a sequence of factor names");
		return -1;
	}
	yaml_node_item_t *it = list->data.sequence.items.start;
	size_t n = (size_t)(list->data.sequence.items.top - it);
	unsigned char *seen = xcalloc(r->nfactors ? r->nfactors : 1, 1);
	int over = 0;
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *fn = node_at(L, it[i]);
		long fi = resolve_factor(L, fn, "design.factors");
		if (fi < 0) {
			ok = -1;
			continue;
		}
		const struct factor *f = &r->factors[fi];
		if (seen[fi]) {
			errorf(L, node_mark(fn), "factor '%s' is listed twice in 'design.factors'", f->name);
			ok = -1;
		} else if (f->nlevels != 2) {
			errorf(L, node_mark(fn), "factor '%s' has %zu level%s, a %s design takes two-level factors "
			       "only", f->name, f->nlevels, f->nlevels == 1 ? "" : "s",
			       fractional ? "fractional" : "two-level");
			ok = -1;
		} else if (d->k == DESIGN_MAX_K) {
			if (!over++)
				errorf(L, node_mark(fn), "'design.factors' lists more than %d factors: %s up to "
				       "%d two-level factors", DESIGN_MAX_K, fractional ? "fractional designs are "
				       "catalogued for" : "a design's factorial effects are estimated for", DESIGN_MAX_K);
			ok = -1;
		} else {
			d->factor[d->k++] = (size_t)fi;
		}
		seen[fi] = 1;
	}
	free(seen);
	if (n == 0) {
		errorf(L, node_mark(list), "'design.factors' is empty");
		ok = -1;
	}
	/* declared order: letters follow the factors section, not the list */
	for (size_t i = 1; i < d->k; i++)
		for (size_t j = i; j > 0 && d->factor[j] < d->factor[j - 1]; j--) {
			size_t t = d->factor[j];
			d->factor[j] = d->factor[j - 1];
			d->factor[j - 1] = t;
		}
	return ok;
}

/* The factors of the design: those listed in `factors`, else every factor
 * with more than one level. Each must have two levels. -1 after reporting. */
static int design_factors(struct loader *L, yaml_node_t *list, int fractional)
{
	struct recipe *r = L->r;
	struct design *d = &r->design;
	int ok = 0;
	d->k = 0;
	if (list)
		return design_factors_listed(L, list, fractional);
	for (size_t fi = 0; fi < r->nfactors; fi++) {
		const struct factor *f = &r->factors[fi];
		if (f->nlevels == 2) {
			if (d->k < DESIGN_MAX_K)
				d->factor[d->k] = fi;
			d->k++;
		} else if (f->nlevels > 2 && fractional) {
			errorf(L, f->mark, "factor '%s' has %zu levels, a fractional design takes two-level factors "
			       "only (list the two-level ones in 'design.factors' to run every level of the others "
			       "with each run of the fraction)", f->name, f->nlevels);
			ok = -1;
		}
	}
	if (d->k > DESIGN_MAX_K) {
		errorf(L, d->mark, "the design has %zu two-level factors, %s up to %d (list at most %d in "
		       "'design.factors')", d->k, fractional ? "fractional designs are catalogued for" :
		       "a design's factorial effects are estimated for", DESIGN_MAX_K, DESIGN_MAX_K);
		d->k = 0;
		return -1;
	}
	return ok;
}

/* The fraction's size: p from `fraction`, else the smallest fraction
 * (largest p) whose minimum-aberration design has at least resolution res
 * (0: not asked). resv, fracv and typev locate the messages. */
static void design_size(struct loader *L, unsigned res, unsigned p, yaml_node_t *resv, yaml_node_t *fracv,
			yaml_node_t *typev)
{
	struct design *d = &L->r->design;
	unsigned k = (unsigned)d->k;
	if (!resv && !fracv) {
		errorf(L, node_mark(typev), "a fractional design needs 'resolution' (e.g. resolution: 4) or "
		       "'fraction' (e.g. fraction: 1/2)");
		return;
	}
	if (k < 3) {
		errorf(L, node_mark(typev), "a fractional design needs at least 3 two-level factors, the design "
		       "has %u", k);
		return;
	}
	unsigned maxp = design_max_p(k);
	if (fracv && p > maxp) {
		struct design t = *d;
		if (design_choose(&t, maxp) < 0)
			BUG("no catalogued 2^(%u-%u) design", k, maxp);
		errorf(L, node_mark(fracv), "no 1/%u fraction of %u two-level factors exists: %u runs cannot "
		       "separate %u main effects; the smallest fraction is 1/%u (%u runs, resolution %s)",
		       1u << p, k, 1u << (k - p), k, 1u << maxp, 1u << (k - maxp), design_roman(t.resolution));
		return;
	}
	if (resv && res > k) {
		errorf(L, node_mark(resv), "no fraction of %u two-level factors has resolution %s: the 1/2 "
		       "fraction, the largest, has resolution %s (remove 'design' to run all %u combinations)",
		       k, design_roman(res), design_roman(k), 1u << k);
		return;
	}
	if (!fracv) {
		for (p = maxp; p > 1; p--) {
			struct design t = *d;
			if (design_choose(&t, p) == 0 && t.resolution >= res)
				break;
		}
	}
	if (design_choose(d, p) < 0)
		BUG("no catalogued 2^(%u-%u) design", k, p);
	if (resv && d->resolution < res) {
		unsigned q = p;
		struct design t = *d;
		while (q > 1 && (design_choose(&t, q) < 0 || t.resolution < res))
			q--;
		errorf(L, node_mark(fracv), "the 1/%u fraction of %u two-level factors has resolution %s at best, "
		       "not %s; the smallest fraction with resolution %s is 1/%u (%u runs)", 1u << p, k,
		       design_roman(d->resolution), design_roman(res), design_roman(res), 1u << q, 1u << (k - q));
		return;
	}
	d->fractional = 1;
}

/* An exclusion that names a factor of a fraction would cut runs out of it
 * and leave its effects confounded: refused. Exclusions over the other
 * (crossed) factors drop whole copies of the fraction and are kept. */
static void design_check_excludes(struct loader *L)
{
	struct recipe *r = L->r;
	const struct design *d = &r->design;
	for (size_t e = 0; e < r->nexcludes; e++)
		for (size_t t = 0; t < r->excludes[e].nterms; t++)
			for (size_t i = 0; i < d->k; i++)
				if (r->excludes[e].terms[t].factor == d->factor[i]) {
					errorf(L, r->excludes[e].mark, "this exclusion names '%s', a factor of the "
					       "fractional design: it would remove runs of the fraction and confound its "
					       "effects (exclude by the other factors only, or run the full factorial)",
					       r->factors[d->factor[i]].name);
					t = r->excludes[e].nterms - 1;
					break;
				}
}

static void load_design(struct loader *L, yaml_node_t *v)
{
	static const char *const keys[] = {"type", "resolution", "fraction", "factors"};
	static const char *const types[] = {"full", "fractional"};
	struct recipe *r = L->r;
	struct design *d = &r->design;
	yaml_node_t *val[4], *key[4];
	if (v->type != YAML_MAPPING_NODE) {
		wrong_type(L, v, "design", "a mapping (e.g. {type: fractional, resolution: 4})");
		return;
	}
	d->given = 1;
	d->mark = node_mark(v);
	get_fields(L, v, "design", keys, 4, val, key);
	int type = -1;
	if (!val[0])
		errorf(L, d->mark, "'design' needs a 'type': 'full' or 'fractional'");
	else
		type = get_enum(L, val[0], "design.type", types, 2);
	unsigned res = val[1] ? design_resolution(L, val[1]) : 0;
	unsigned p = val[2] ? design_fraction(L, val[2]) : 0;
	int ok = (!val[1] || res) && (!val[2] || p);
	if (type == 0)
		for (size_t i = 1; i < 3; i++)
			if (val[i])
				errorf(L, node_mark(key[i]), "'design.%s' applies to 'type: fractional' only", keys[i]);
	if (design_factors(L, val[3], type == 1) < 0 || type < 0 || !ok)
		return;
	if (type == 0) {
		if (d->k == 0)
			errorf(L, node_mark(val[0]), "'design: {type: full}' estimates the factorial effects of "
			       "two-level factors, and the recipe has none");
		return;
	}
	design_size(L, res, p, val[1], val[2], val[0]);
	if (d->fractional)
		design_check_excludes(L);
}

static void load_baseline(struct loader *L, yaml_node_t *v)
{
	struct recipe *r = L->r;
	if (v->type != YAML_MAPPING_NODE) {
		wrong_type(L, v, "baseline", "a mapping of factors to levels");
		return;
	}
	r->baseline.level = xmalloc((r->nfactors ? r->nfactors : 1) * sizeof(long));
	for (size_t i = 0; i < r->nfactors; i++)
		r->baseline.level[i] = -1;
	r->baseline.mark = node_mark(v);
	r->has_baseline = 1;
	unsigned char *skip = check_mapping_keys(L, v);
	size_t np = (size_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
	for (size_t j = 0; j < np; j++) {
		yaml_node_pair_t *pr = &v->data.mapping.pairs.start[j];
		if (skip[j])
			continue;
		long fi = resolve_factor(L, node_at(L, pr->key), "baseline");
		if (fi < 0)
			continue;
		long li = resolve_level(L, (size_t)fi, node_at(L, pr->value), "baseline");
		if (li >= 0)
			r->baseline.level[fi] = li;
	}
	free(skip);
}

/* Items of a report list: a sequence of mappings with the given keys. */
static yaml_node_item_t *report_items(struct loader *L, yaml_node_t *v, const char *path, size_t *n)
{
	*n = 0;
	if (v->type != YAML_SEQUENCE_NODE) {
		wrong_type(L, v, path, "a sequence of mappings");
		return NULL;
	}
	*n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	return v->data.sequence.items.start;
}

/* report.*.where (path): a mapping of factors to a level or a list of
 * levels, into f. Returns 0, or -1 after reporting. */
static int load_where(struct loader *L, yaml_node_t *v, const char *path, struct report_facet *f)
{
	struct recipe *r = L->r;
	if (v->type != YAML_MAPPING_NODE) {
		wrong_type(L, v, path, "a mapping of factors to levels");
		return -1;
	}
	unsigned char *skip = check_mapping_keys(L, v);
	yaml_node_pair_t *pairs = v->data.mapping.pairs.start;
	size_t np = (size_t)(v->data.mapping.pairs.top - pairs);
	f->where = xcalloc(np ? np : 1, sizeof(*f->where));
	int ok = 1;
	for (size_t i = 0; i < np; i++) {
		if (skip[i]) {
			ok = 0;
			continue;
		}
		long fi = resolve_factor(L, node_at(L, pairs[i].key), path);
		yaml_node_t *val = node_at(L, pairs[i].value);
		if (fi < 0) {
			ok = 0;
			continue;
		}
		yaml_node_item_t *it = NULL;
		size_t n = 1;
		if (val->type == YAML_SEQUENCE_NODE) {
			it = val->data.sequence.items.start;
			n = (size_t)(val->data.sequence.items.top - it);
			if (n == 0) {
				errorf(L, node_mark(val), "'%s.%s' names no level (write at least one)", path,
				       r->factors[fi].name);
				ok = 0;
				continue;
			}
		}
		unsigned char *keep = xcalloc(r->factors[fi].nlevels, 1);
		int lok = 1;
		for (size_t k = 0; k < n; k++) {
			long li = resolve_level(L, (size_t)fi, it ? node_at(L, it[k]) : val, path);
			if (li < 0)
				lok = 0;
			else
				keep[li] = 1;
		}
		if (!lok) {
			free(keep);
			ok = 0;
			continue;
		}
		f->where[f->nwhere].factor = (size_t)fi;
		f->where[f->nwhere].keep = keep;
		f->nwhere++;
	}
	free(skip);
	return ok ? 0 : -1;
}

/* How many levels of factor fi f's where terms keep. */
static size_t facet_levels(const struct recipe *r, const struct report_facet *f, size_t fi)
{
	size_t n = r->factors[fi].nlevels;
	for (size_t t = 0; t < f->nwhere; t++)
		if (f->where[t].factor == fi) {
			size_t k = 0;
			for (size_t l = 0; l < r->factors[fi].nlevels; l++)
				k += f->where[t].keep[l];
			if (k < n)
				n = k;
		}
	return n;
}

/* report.*.panels (path): a factor or a list of at most FACET_MAX_PANELS
 * factors, each once, making at most FACET_MAX_CELLS panels given f's
 * where. Returns 0, or -1 after reporting. */
static int load_panels(struct loader *L, yaml_node_t *v, const char *path, struct report_facet *f)
{
	struct recipe *r = L->r;
	yaml_node_item_t *it = NULL;
	size_t n = 1;
	if (v->type == YAML_SEQUENCE_NODE) {
		it = v->data.sequence.items.start;
		n = (size_t)(v->data.sequence.items.top - it);
		if (n == 0 || n > FACET_MAX_PANELS) {
			errorf(L, node_mark(v), "'%s' must name 1 or %d factors, not %zu", path, FACET_MAX_PANELS, n);
			return -1;
		}
	}
	int ok = 1;
	for (size_t k = 0; k < n; k++) {
		yaml_node_t *node = it ? node_at(L, it[k]) : v;
		long fi = resolve_factor(L, node, path);
		if (fi < 0) {
			ok = 0;
			continue;
		}
		for (size_t j = 0; j < f->npanels; j++)
			if (f->panels[j] == (size_t)fi) {
				errorf(L, node_mark(node), "factor '%s' is twice in '%s'", r->factors[fi].name, path);
				fi = -1;
				ok = 0;
				break;
			}
		if (fi >= 0)
			f->panels[f->npanels++] = (size_t)fi;
	}
	if (!ok)
		return -1;
	size_t cells = 1;
	for (size_t j = 0; j < f->npanels; j++)
		cells *= facet_levels(r, f, f->panels[j]);
	if (cells > FACET_MAX_CELLS) {
		errorf(L, node_mark(v), "'%s' makes %zu panels, more than %d (keep fewer levels with 'where')", path,
		       cells, FACET_MAX_CELLS);
		return -1;
	}
	return 0;
}

/* An item of report.scatter, report.normalised, report.bars or report.best
 * (path): a mapping of keys[0..nkeys-1], the first two factors (x and
 * color or group; x is required when nkeys is 4), then where and panels.
 * Returns 0 with the factors' indexes (-1 when absent) and the facets in f,
 * -1 after an error. */
static int load_report_item(struct loader *L, yaml_node_t *it, const char *path, const char *const *keys,
			    size_t nkeys, long *x, long *second, struct report_facet *f)
{
	yaml_node_t *fv[4], *fk[4];
	memset(f, 0, sizeof(*f));
	*x = *second = -1;
	if (it->type != YAML_MAPPING_NODE) {
		wrong_type(L, it, path, "a sequence of mappings");
		return -1;
	}
	get_fields(L, it, path, keys, nkeys, fv, fk);
	int ok = 1;
	if (nkeys == 4) {
		if (!fv[0]) {
			errorf(L, node_mark(it), "missing required key 'x' in '%s'", path);
			ok = 0;
		} else if ((*x = resolve_factor(L, fv[0], path)) < 0) {
			ok = 0;
		}
		if (fv[1] && (*second = resolve_factor(L, fv[1], path)) < 0)
			ok = 0;
	}
	yaml_node_t *where = fv[nkeys - 2], *panels = fv[nkeys - 1];
	char *p = xasprintf("%s.where", path);
	if (where && load_where(L, where, p, f) != 0)
		ok = 0;
	free(p);
	p = xasprintf("%s.panels", path);
	if (panels && load_panels(L, panels, p, f) != 0)
		ok = 0;
	free(p);
	if (!ok)
		recipe_facet_free(f);
	return ok ? 0 : -1;
}

/* An item of report.improvements: {factor, from, to, by}, added to rs when
 * it is right. */
static void load_report_improvement(struct loader *L, yaml_node_t *it, struct report_spec *rs)
{
	static const char *const impr_keys[] = {"factor", "from", "to", "by"};
	yaml_node_t *fv[4], *fk[4];
	if (it->type != YAML_MAPPING_NODE) {
		wrong_type(L, it, "report.improvements", "a sequence of mappings");
		return;
	}
	get_fields(L, it, "report.improvements", impr_keys, 4, fv, fk);
	int ok = 1;
	for (size_t k = 0; k < 3; k++)
		if (!fv[k]) {
			errorf(L, node_mark(it), "missing required key '%s' in 'report.improvements'",
			       impr_keys[k]);
			ok = 0;
		}
	long f = fv[0] ? resolve_factor(L, fv[0], "report.improvements") : -1;
	long from = -1, to = -1;
	if (f >= 0 && fv[1])
		from = resolve_level(L, (size_t)f, fv[1], "report.improvements");
	if (f >= 0 && fv[2])
		to = resolve_level(L, (size_t)f, fv[2], "report.improvements");
	long *by = NULL;
	size_t nby = 0;
	if (fv[3]) {
		yaml_node_item_t *b = NULL;
		size_t nb = 1;
		if (fv[3]->type == YAML_SEQUENCE_NODE) {
			b = fv[3]->data.sequence.items.start;
			nb = (size_t)(fv[3]->data.sequence.items.top - b);
		}
		by = xcalloc(nb ? nb : 1, sizeof(*by));
		for (size_t k = 0; k < nb; k++) {
			long bf = resolve_factor(L, b ? node_at(L, b[k]) : fv[3], "report.improvements");
			if (bf < 0)
				ok = 0;
			else
				by[nby++] = bf;
		}
	}
	if (!ok || f < 0 || from < 0 || to < 0) {
		free(by);
		return;
	}
	struct report_improvement *ri = &rs->improvements[rs->nimprovements++];
	ri->factor = f;
	ri->from = from;
	ri->to = to;
	ri->nby = nby;
	ri->by = by;
}

/* report.scatter or report.normalised (path): a list of {x, color, where,
 * panels} into *out, *n. */
static void load_report_scatters(struct loader *L, yaml_node_t *v, const char *path, struct report_scatter **out,
				 size_t *n)
{
	static const char *const keys[] = {"x", "color", "where", "panels"};
	size_t ni;
	yaml_node_item_t *items = report_items(L, v, path, &ni);
	if (!items)
		return;
	*out = xcalloc(ni ? ni : 1, sizeof(**out));
	for (size_t i = 0; i < ni; i++) {
		struct report_scatter *s = &(*out)[*n];
		if (load_report_item(L, node_at(L, items[i]), path, keys, 4, &s->x, &s->color, &s->facet) == 0)
			(*n)++;
	}
}

/* report.effects: {factors: [...]}, the factors the effects figure shows. */
static void load_report_effects(struct loader *L, yaml_node_t *v)
{
	static const char *const keys[] = {"factors"};
	struct recipe *r = L->r;
	yaml_node_t *fv[1], *fk[1];
	if (v->type != YAML_MAPPING_NODE) {
		wrong_type(L, v, "report.effects", "a mapping");
		return;
	}
	get_fields(L, v, "report.effects", keys, 1, fv, fk);
	if (!fv[0])
		return;
	yaml_node_item_t *it = NULL;
	size_t n = 1;
	if (fv[0]->type == YAML_SEQUENCE_NODE) {
		it = fv[0]->data.sequence.items.start;
		n = (size_t)(fv[0]->data.sequence.items.top - it);
	}
	unsigned char *shown = xcalloc(r->nfactors ? r->nfactors : 1, 1);
	int ok = 1;
	for (size_t k = 0; k < n; k++) {
		long fi = resolve_factor(L, it ? node_at(L, it[k]) : fv[0], "report.effects.factors");
		if (fi < 0)
			ok = 0;
		else
			shown[fi] = 1;
	}
	if (!ok) {
		free(shown);
		return;
	}
	r->report.effects_given = 1;
	r->report.effects_shown = shown;
}

static void load_report(struct loader *L, yaml_node_t *v)
{
	enum { R_METRIC, R_SCATTER, R_NORMALISED, R_BARS, R_BEST, R_EFFECTS, R_IMPROVEMENTS, R_COUNT };
	static const char *const keys[] = {"metric", "scatter", "normalised", "bars", "best", "effects",
					   "improvements"};
	static const char *const bars_keys[] = {"x", "group", "where", "panels"};
	static const char *const best_keys[] = {"where", "panels"};
	struct recipe *r = L->r;
	struct report_spec *rs = &r->report;
	yaml_node_t *val[R_COUNT], *key[R_COUNT];
	if (v->type != YAML_MAPPING_NODE) {
		wrong_type(L, v, "report", "a mapping");
		return;
	}
	get_fields(L, v, "report", keys, R_COUNT, val, key);
	if (val[R_METRIC]) {
		const char *m = get_string(L, val[R_METRIC], "report.metric");
		L->report_metric = 1;
		if (m) {
			free(rs->metric);
			rs->metric = xstrdup(m);
		}
	}
	size_t n;
	yaml_node_item_t *items;
	long x, second;
	if (val[R_SCATTER])
		load_report_scatters(L, val[R_SCATTER], "report.scatter", &rs->scatter, &rs->nscatter);
	if (val[R_NORMALISED])
		load_report_scatters(L, val[R_NORMALISED], "report.normalised", &rs->normalised, &rs->nnormalised);
	if (val[R_BARS] && (items = report_items(L, val[R_BARS], "report.bars", &n))) {
		rs->bars = xcalloc(n ? n : 1, sizeof(*rs->bars));
		for (size_t i = 0; i < n; i++) {
			struct report_bars *b = &rs->bars[rs->nbars];
			if (load_report_item(L, node_at(L, items[i]), "report.bars", bars_keys, 4, &b->x, &b->group,
					     &b->facet) == 0)
				rs->nbars++;
		}
	}
	if (val[R_BEST] && (items = report_items(L, val[R_BEST], "report.best", &n))) {
		rs->best = xcalloc(n ? n : 1, sizeof(*rs->best));
		for (size_t i = 0; i < n; i++)
			if (load_report_item(L, node_at(L, items[i]), "report.best", best_keys, 2, &x, &second,
					     &rs->best[rs->nbest].facet) == 0)
				rs->nbest++;
	}
	if (val[R_EFFECTS])
		load_report_effects(L, val[R_EFFECTS]);
	if (val[R_IMPROVEMENTS] && (items = report_items(L, val[R_IMPROVEMENTS], "report.improvements", &n))) {
		rs->improvements = xcalloc(n ? n : 1, sizeof(*rs->improvements));
		for (size_t i = 0; i < n; i++)
			load_report_improvement(L, node_at(L, items[i]), rs);
	}
}

/* dataset_size: the samples of one epoch, for the metric epoch_time
 * (dataset_size / throughput). A report.metric epoch_time needs it or a
 * `data` factor (the engine's own epoch_s from real data). */
static void load_dataset_size(struct loader *L, yaml_node_t *v, yaml_node_t *report)
{
	struct recipe *r = L->r;
	uint64_t n;
	if (v && is_string(v) && parse_u64(scalar(v), &n) == 0 && n >= 1 && n <= (uint64_t)1 << 53)
		r->dataset_size = (double)n;
	else if (v)
		wrong_type(L, v, "dataset_size", "an integer >= 1 (the samples in one epoch)");
	if (!v && report && report->type == YAML_MAPPING_NODE && r->report.metric &&
	    !strcmp(r->report.metric, "epoch_time") && recipe_factor_index(r, "data") < 0) {
		yaml_node_t *at = report;
		for (yaml_node_pair_t *p = report->data.mapping.pairs.start; p < report->data.mapping.pairs.top; p++)
			if (is_string(node_at(L, p->key)) && !strcmp(scalar(node_at(L, p->key)), "metric"))
				at = node_at(L, p->value);
		errorf(L, node_mark(at),
		       "metric 'epoch_time' needs 'dataset_size' (the samples in one epoch: epoch_time = "
		       "dataset_size / throughput) or a 'data' factor (the engine's epoch_s from real data)");
	}
}

/* The top level's plain values: description, python, order, seed, repeat. */
static void load_scalars(struct loader *L, yaml_node_t *const *v)
{
	struct recipe *r = L->r;
	if (v[K_DESCRIPTION] && !is_null(v[K_DESCRIPTION])) {
		const char *s = get_string(L, v[K_DESCRIPTION], "description");
		if (s)
			r->description = xstrdup(s);
	}
	if (v[K_PYTHON]) {
		const char *s = get_string(L, v[K_PYTHON], "python");
		if (s)
			r->python = xstrdup(s);
	}
	if (v[K_ORDER]) {
		int o = get_enum(L, v[K_ORDER], "order", order_names, ARRAY_SIZE(order_names));
		if (o >= 0)
			r->order = (enum recipe_order)o;
	}
	if (v[K_SEED]) {
		uint64_t s;
		if (is_string(v[K_SEED]) && parse_u64(scalar(v[K_SEED]), &s) == 0)
			r->seed = s;
		else
			wrong_type(L, v[K_SEED], "seed", "an integer >= 0");
	}
	if (v[K_REPEAT]) {
		uint64_t n;
		if (is_string(v[K_REPEAT]) && parse_u64(scalar(v[K_REPEAT]), &n) == 0 && n >= 1 && n <= REPEAT_MAX)
			r->repeat = (unsigned)n;
		else if (is_string(v[K_REPEAT]) && parse_u64(scalar(v[K_REPEAT]), &n) == 0 && n > REPEAT_MAX)
			wrong_type(L, v[K_REPEAT], "repeat", "at most " "1000000");
		else
			wrong_type(L, v[K_REPEAT], "repeat", "an integer >= 1");
	}
}

static void load_schema(struct loader *L)
{
	struct recipe *r = L->r;
	yaml_node_t *v[K_COUNT], *k[K_COUNT];
	get_fields(L, L->root, NULL, top_keys, K_COUNT, v, k);
	struct mark rootm = node_mark(L->root);

	if (!v[K_NAME])
		errorf(L, rootm, "missing required key 'name'");
	else
		load_name(L, v[K_NAME]);
	load_scalars(L, v);
	if (v[K_MEASURE])
		load_measure(L, v[K_MEASURE]);
	if (v[K_CONTAINERS])
		load_containers(L, v[K_CONTAINERS]);
	if (v[K_EXECUTOR])
		load_executor(L, v[K_EXECUTOR]);

	if (!v[K_FACTORS]) {
		errorf(L, rootm, "missing required key 'factors'");
		L->factors_broken = 1;
	} else
		load_factors(L, v[K_FACTORS]);
	load_engine_and_levels(L, v[K_ENGINE], k[K_ENGINE]);
	load_device(L, v[K_DEVICE], k[K_DEVICE]);

	long cf = recipe_factor_index(r, "container");
	if (cf >= 0 && !v[K_CONTAINERS])
		errorf(L, r->factors[cf].mark, "factor 'container' needs a 'containers' mapping of names to images");
	else if (cf < 0 && v[K_CONTAINERS])
		errorf(L, node_mark(k[K_CONTAINERS]), "'containers' is only used by a factor called 'container'");

	load_command(L, v[K_COMMAND], k[K_COMMAND]);
	if (v[K_EXCLUDE])
		load_exclude(L, v[K_EXCLUDE]);
	if (v[K_DESIGN])
		load_design(L, v[K_DESIGN]);
	if (v[K_PROFILE]) { /* per-op profiles: the engines' --profile */
		static const char *const onoff[] = {"off", "on"};
		int on = get_enum(L, v[K_PROFILE], "profile", onoff, ARRAY_SIZE(onoff));
		r->profile = on == 1;
		if (on == 1 && r->engine == ENGINE_COMMAND)
			errorf(L, node_mark(v[K_PROFILE]), "'profile: on' needs the native or pytorch engine "
			       "(a command engine writes no per-op profile)");
	}
	if (v[K_BASELINE])
		load_baseline(L, v[K_BASELINE]);
	if (v[K_REPORT])
		load_report(L, v[K_REPORT]);
	load_dataset_size(L, v[K_DATASET_SIZE], v[K_REPORT]);
	check_wall_time(L);
	check_timeout(L);
	if (!L->nerrs && r->nfactors)
		check_all_excluded(L, v[K_EXCLUDE] ? k[K_EXCLUDE] : k[K_FACTORS]);
}

/* ---- command-line overrides ---------------------------------------------- */

/* Expand one item of an override's value into sb as ","-separated levels:
 * "A..B" (every integer), "A..B:+K" (step K), "A..B:xK" (times K), or the
 * item itself. Returns NULL, or what is wrong (static). */
static const char *expand_item(const char *item, struct strbuf *sb)
{
	const char *dots = strstr(item, "..");
	if (!dots) {
		if (!*item)
			return "empty level";
		sb_printf(sb, "%s%s", sb->len ? "," : "", item);
		return NULL;
	}
	char *lo_s = xstrndup(item, (size_t)(dots - item)), *hi_s = xstrdup(dots + 2);
	char *step_s = strchr(hi_s, ':');
	char op = '+';
	long lo, hi, step = 1;
	const char *why = NULL;
	if (step_s) {
		*step_s++ = '\0';
		op = *step_s == 'x' ? 'x' : *step_s == '+' ? '+' : 0;
		if (!op || parse_long(step_s + 1, &step) < 0 || step < (op == 'x' ? 2 : 1))
			why = "a range's step is +K (K >= 1) or xK (K >= 2), as in 1..64:x2";
	}
	const char *glued = step_s ? NULL : strpbrk(hi_s, "x+");
	if (!why && glued && glued > hi_s && parse_long(lo_s, &lo) == 0)
		why = "a range's step follows a colon: START..END:+K or START..END:xK, as in 1..64:x2";
	if (!why && (parse_long(lo_s, &lo) < 0 || parse_long(hi_s, &hi) < 0 || lo < 0 || hi < lo ||
		     (op == 'x' && lo < 1)))
		why = "a range is START..END of integers with 0 <= START <= END (1 <= START with xK)";
	size_t n = 0;
	for (long v = lo; !why && v <= hi; v = op == 'x' ? v * step : v + step) {
		if (++n > RANGE_MAX_LEVELS) {
			why = "a range gives at most 1000 levels";
			break;
		}
		sb_printf(sb, "%s%ld", sb->len ? "," : "", v);
		if (v > hi / (op == 'x' ? step : 1) && op == 'x')
			break;
		if (op == '+' && v > hi - step)
			break;
	}
	free(lo_s);
	free(hi_s);
	return why;
}

/* A new node of the document, marked as override i's. */
static int ovr_node(struct loader *L, size_t i, int id)
{
	yaml_node_t *n = node_at(L, id);
	n->start_mark.line = (size_t)-1; /* node_mark: line 0 */
	n->start_mark.column = i;        /* node_mark: column i + 1 */
	return id;
}

static int ovr_scalar(struct loader *L, size_t i, const char *s)
{
	int id = yaml_document_add_scalar(&L->doc, NULL, (yaml_char_t *)s, (int)strlen(s), YAML_ANY_SCALAR_STYLE);
	if (!id)
		BUG("yaml_document_add_scalar failed");
	return ovr_node(L, i, id);
}

/* The value of key in mapping map: the pair's index, or -1. */
static long map_find(struct loader *L, int map, const char *key, size_t keylen)
{
	yaml_node_t *m = node_at(L, map);
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(L, p->key);
		if (k->type == YAML_SCALAR_NODE && strlen(scalar(k)) == keylen && !strncmp(scalar(k), key, keylen))
			return p - m->data.mapping.pairs.start;
	}
	return -1;
}

/* The root's pair for top-level key (one of top_keys): the pair's index, or
 * -1. Absent, an unknown key misspelt for it stands for it, as get_fields
 * reads it (so factors.batch=4 changes the levels of a recipe's 'factor:'
 * and the one error is the typo); a recipe key never does ('repeat' is two
 * edits from 'report'). */
static long top_find(struct loader *L, int root, const char *key)
{
	long p = map_find(L, root, key, strlen(key));
	yaml_node_t *m = node_at(L, root);
	for (yaml_node_pair_t *q = m->data.mapping.pairs.start; p < 0 && q < m->data.mapping.pairs.top; q++) {
		yaml_node_t *k = node_at(L, q->key);
		if (!is_string(k))
			continue;
		size_t t = 0;
		while (t < K_COUNT && strcmp(scalar(k), top_keys[t]))
			t++;
		const char *c = t == K_COUNT ? vocab_misspelt(scalar(k), top_keys, K_COUNT) : NULL;
		if (c && !strcmp(c, key))
			p = q - m->data.mapping.pairs.start;
	}
	return p;
}

/* Override KEY (keylen bytes of arg) names neither a factor nor a recipe
 * key: the error, with the closest of those (fp: the factors pair of the
 * root, -1 when none). */
static void override_unknown(struct loader *L, struct mark m, const char *arg, size_t keylen, int root,
			     long fp)
{
	const char **cands = xcalloc(K_COUNT + 1, sizeof(char *));
	size_t nc = 0;
	yaml_node_t *fm = fp >= 0 ? node_at(L, node_at(L, root)->data.mapping.pairs.start[fp].value) : NULL;
	if (fm && fm->type == YAML_MAPPING_NODE) {
		size_t nf = (size_t)(fm->data.mapping.pairs.top - fm->data.mapping.pairs.start);
		cands = xrealloc(cands, (K_COUNT + nf + 1) * sizeof(char *));
		for (size_t j = 0; j < nf; j++)
			if (node_at(L, fm->data.mapping.pairs.start[j].key)->type == YAML_SCALAR_NODE)
				cands[nc++] = scalar(node_at(L, fm->data.mapping.pairs.start[j].key));
	}
	for (size_t t = 0; t < K_COUNT; t++)
		cands[nc++] = top_keys[t];
	char *k = xstrndup(arg, keylen);
	const char *near = vocab_closest(k, cands, nc);
	if (near)
		errorf(L, m, "'%s' is neither a factor of the recipe nor a recipe key (did you mean '%s'?)", k, near);
	else
		errorf(L, m, "'%s' is neither a factor of the recipe nor a recipe key (a new factor is factors.%s=...)", k, k);
	free(k);
	free(cands);
}

/* Set key (up to eq, dots going into mappings from map) of override i to
 * levels (comma-separated): a sequence when seq or when it replaces one,
 * else a scalar; mappings created where missing. */
static void override_set(struct loader *L, size_t i, struct mark m, int map, const char *key,
			 const char *eq, const char *levels, int seq)
{
	const char *arg = key;
	size_t keylen = (size_t)(eq - arg);
	int root = yaml_document_get_root_node(&L->doc) - L->doc.nodes.start + 1;
	for (;;) {
		const char *dot = memchr(key, '.', (size_t)(eq - key));
		size_t len = (size_t)((dot ? dot : eq) - key);
		if (len == 0) {
			errorf(L, m, "'%.*s' is not a key", (int)keylen, arg);
			return;
		}
		char *k = xstrndup(key, len);
		long p = map == root ? top_find(L, map, k) : map_find(L, map, key, len);
		if (!dot) {
			int vid;
			if (p >= 0 && node_at(L, node_at(L, map)->data.mapping.pairs.start[p].value)->type == YAML_SEQUENCE_NODE)
				seq = 1;
			if (seq) {
				vid = yaml_document_add_sequence(&L->doc, NULL, YAML_FLOW_SEQUENCE_STYLE);
				ovr_node(L, i, vid);
				char *lv = xstrdup(levels), *s2 = NULL;
				for (char *l = strtok_r(lv, ",", &s2); l; l = strtok_r(NULL, ",", &s2))
					yaml_document_append_sequence_item(&L->doc, vid, ovr_scalar(L, i, l));
				free(lv);
			} else {
				vid = ovr_scalar(L, i, levels);
			}
			if (p >= 0)
				node_at(L, map)->data.mapping.pairs.start[p].value = vid;
			else
				yaml_document_append_mapping_pair(&L->doc, map, ovr_scalar(L, i, k), vid);
			free(k);
			return;
		}
		if (p < 0) {
			int sub = yaml_document_add_mapping(&L->doc, NULL, YAML_BLOCK_MAPPING_STYLE);
			ovr_node(L, i, sub);
			yaml_document_append_mapping_pair(&L->doc, map, ovr_scalar(L, i, k), sub);
			map = sub;
		} else {
			map = node_at(L, map)->data.mapping.pairs.start[p].value;
			if (node_at(L, map)->type != YAML_MAPPING_NODE) {
				errorf(L, m, "'%s' is not a mapping: no key under it can be set", k);
				free(k);
				return;
			}
		}
		free(k);
		key = dot + 1;
	}
}

/* Override i is factors.NAME.range=VALUE (eq: its '='): the range's two
 * ends as the recipe writes them, [START,END] (START,END and START..END
 * read the same), set in factor NAME's range mapping; a factor given as a
 * list of levels (or a single level) becomes the range {range: [START,
 * END]} (step +1 unless a factors.NAME.step override follows). Checked
 * further by load_range, as the recipe's own range is. */
static void apply_range_override(struct loader *L, size_t i, struct mark m, const char *eq)
{
	const char *arg = L->ovr[i], *name = arg + 8;
	size_t nlen = (size_t)(eq - name) - 6;
	char *v = xstrdup(eq + 1), *b = str_trim(v);
	size_t n = strlen(b);
	if (n >= 2 && b[0] == '[' && b[n - 1] == ']') {
		b[n - 1] = '\0';
		b++;
	}
	char *dots = strstr(b, ".."), *comma = strchr(b, ',');
	char *lo = b, *hi = dots ? dots + 2 : comma ? comma + 1 : NULL;
	if (hi && !(dots && comma)) {
		*(dots ? dots : comma) = '\0';
		lo = str_trim(lo);
		hi = str_trim(hi);
	}
	long a, c;
	if (!hi || (dots && comma) || parse_long(lo, &a) < 0 || parse_long(hi, &c) < 0) {
		errorf(L, m,
		       "'factors.%.*s.range' takes the range's two ends, [START,END] (or START..END), integers; "
		       "a step is factors.%.*s.step=+K|xK, or give the levels as %.*s=START..END:xK",
		       (int)nlen, name, (int)nlen, name, (int)nlen, name);
		free(v);
		return;
	}
	char *ends = xasprintf("%ld,%ld", a, c);
	int root = yaml_document_get_root_node(&L->doc) - L->doc.nodes.start + 1;
	long fp = top_find(L, root, "factors");
	if (fp >= 0) {
		int fmap = node_at(L, root)->data.mapping.pairs.start[fp].value;
		long p = node_at(L, fmap)->type == YAML_MAPPING_NODE ? map_find(L, fmap, name, nlen) : -1;
		if (p >= 0 && node_at(L, node_at(L, fmap)->data.mapping.pairs.start[p].value)->type != YAML_MAPPING_NODE)
			node_at(L, fmap)->data.mapping.pairs.start[p].value =
				ovr_node(L, i, yaml_document_add_mapping(&L->doc, NULL, YAML_FLOW_MAPPING_STYLE));
	}
	L->ovr_factors = xrealloc(L->ovr_factors, (L->novr_factors + 1) * sizeof(char *));
	L->ovr_factors[L->novr_factors++] = xstrndup(name, nlen);
	override_set(L, i, m, root, arg, eq, ends, 1);
	free(ends);
	free(v);
}

/* Override arg, "factors.NAME.step=VALUE" (eq at its '='), on a factor
 * that the recipe gives as a list of levels, not a range: -1 after the error
 * that says how to write it, else 0 (any other override too). */
static int step_on_list(struct loader *L, struct mark m, const char *arg, const char *eq)
{
	if (!(eq - arg > 13 && !strncmp(arg, "factors.", 8) && !strncmp(eq - 5, ".step", 5) &&
	      !memchr(arg + 8, '.', (size_t)(eq - arg) - 13)))
		return 0;
	int root = yaml_document_get_root_node(&L->doc) - L->doc.nodes.start + 1;
	long fp = top_find(L, root, "factors");
	int fmap = fp >= 0 ? node_at(L, root)->data.mapping.pairs.start[fp].value : 0;
	int nlen = (int)(eq - arg) - 13;
	long p = fmap && node_at(L, fmap)->type == YAML_MAPPING_NODE ? map_find(L, fmap, arg + 8, (size_t)nlen) : -1;
	if (p >= 0 && node_at(L, node_at(L, fmap)->data.mapping.pairs.start[p].value)->type != YAML_MAPPING_NODE) {
		errorf(L, m,
		       "factor '%.*s' is a list of levels, not a range: a step needs its range first "
		       "(factors.%.*s.range=[START,END] factors.%.*s.step=%s), or give the levels as %.*s=START..END:%s",
		       nlen, arg + 8, nlen, arg + 8, nlen, arg + 8, eq + 1, nlen, arg + 8, eq + 1);
		return -1;
	}
	return 0;
}

/* Apply override i, "KEY=VALUE", to the document: a factor's levels
 * (factors.KEY), else the recipe key KEY (dots go into mappings:
 * measure.min_time=1s), created where missing. A value with commas or a
 * range, or one that replaces a sequence or names a factor, is a sequence. */
static void apply_override(struct loader *L, size_t i)
{
	const char *arg = L->ovr[i], *eq = strchr(arg, '=');
	struct mark m = {0, (unsigned)i + 1};
	if (!eq || eq == arg) {
		errorf(L, m, "expected KEY=VALUE (a factor's levels, or a recipe key)");
		return;
	}
	if (eq - arg > 14 && !strncmp(arg, "factors.", 8) && !strncmp(eq - 6, ".range", 6) &&
	    !memchr(arg + 8, '.', (size_t)(eq - arg) - 14)) {
		apply_range_override(L, i, m, eq);
		return;
	}
	if (step_on_list(L, m, arg, eq) < 0)
		return;
	/* levels as YAML writes them are read the same: [1, 2] is 1,2 (spaces
	 * around a level dropped, as in a flow sequence) */
	struct strbuf levels = {0};
	char *value = xstrdup(eq + 1), *save = NULL, *list = str_trim(value);
	size_t vlen = strlen(list);
	int bracketed = vlen >= 2 && list[0] == '[' && list[vlen - 1] == ']';
	if (bracketed) {
		list[vlen - 1] = '\0';
		list++;
	}
	const char *why = NULL;
	for (char *it = strtok_r(list, ",", &save); it && !why; it = strtok_r(NULL, ",", &save))
		why = expand_item(str_trim(it), &levels);
	int seq = bracketed || strchr(eq + 1, ',') || strstr(eq + 1, "..");
	if (!why && !levels.len)
		why = "no value after '='";
	if (why) {
		errorf(L, m, "%s", why);
		goto out;
	}
	size_t keylen = (size_t)(eq - arg);
	int root = yaml_document_get_root_node(&L->doc) - L->doc.nodes.start + 1;
	int map = root;
	long fp = top_find(L, root, "factors");
	if (keylen > 8 && !strncmp(arg, "factors.", 8))
		seq = 1; /* factors.NAME=...: a factor, maybe a new one */
	if (seq && !strchr(eq + 1, ',') && keylen > 13 && !strncmp(arg, "factors.", 8) && !strncmp(eq - 5, ".step", 5))
		seq = 0; /* factors.NAME.step=x4: a range's step */
	if (fp >= 0 && !memchr(arg, '.', keylen)) {
		int fmap = node_at(L, root)->data.mapping.pairs.start[fp].value;
		if (node_at(L, fmap)->type == YAML_MAPPING_NODE && map_find(L, fmap, arg, keylen) >= 0) {
			map = fmap;
			seq = 1;
		}
	}
	if (map == root && !memchr(arg, '.', keylen)) {
		size_t t;
		for (t = 0; t < K_COUNT; t++)
			if (strlen(top_keys[t]) == keylen && !strncmp(top_keys[t], arg, keylen))
				break;
		if (t == K_COUNT) {
			override_unknown(L, m, arg, keylen, root, fp);
			goto out;
		}
	}
	if (map != root || (keylen > 8 && !strncmp(arg, "factors.", 8))) {
		const char *name = map != root ? arg : arg + 8;
		size_t len = (size_t)(eq - name) - (seq ? 0 : 5); /* factors.NAME.step: NAME */
		L->ovr_factors = xrealloc(L->ovr_factors, (L->novr_factors + 1) * sizeof(char *));
		L->ovr_factors[L->novr_factors++] = xstrndup(name, len);
	}
	override_set(L, i, m, map, arg, eq, levels.buf, seq);
out:
	free(value);
	sb_free(&levels);
}

/* Whether the scalar node s is a level of factor name in the document. */
static int doc_has_level(struct loader *L, int fmap, const char *name, yaml_node_t *s)
{
	long p = map_find(L, fmap, name, strlen(name));
	if (p < 0 || s->type != YAML_SCALAR_NODE)
		return 1;
	yaml_node_t *v = node_at(L, node_at(L, fmap)->data.mapping.pairs.start[p].value);
	if (v->type == YAML_MAPPING_NODE) { /* a range: its levels ("1,2,4") */
		struct strbuf sb = {0};
		int has = 1;
		if (range_levels(L, v, &sb) == 0) {
			has = 0;
			for (char *tok = sb.buf, *comma; tok && !has; tok = comma ? comma + 1 : NULL) {
				comma = strchr(tok, ',');
				has = (comma ? (size_t)(comma - tok) : strlen(tok)) == strlen(scalar(s)) &&
				      !strncmp(tok, scalar(s), strlen(scalar(s)));
			}
		}
		sb_free(&sb);
		return has;
	}
	if (v->type != YAML_SEQUENCE_NODE)
		return 1;
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++)
		if (node_at(L, *it)->type == YAML_SCALAR_NODE && !strcmp(scalar(node_at(L, *it)), scalar(s)))
			return 1;
	return 0;
}

/* Drop from report.improvements the entries whose factor is name and whose
 * from or to is a level the factor lost. */
static void prune_lost_improvements(struct loader *L, int root, int fmap, const char *name)
{
	long rp = top_find(L, root, "report");
	if (rp < 0)
		return;
	int rmap = node_at(L, root)->data.mapping.pairs.start[rp].value;
	if (node_at(L, rmap)->type != YAML_MAPPING_NODE)
		return;
	long ip = map_find(L, rmap, "improvements", 12);
	if (ip < 0)
		return;
	yaml_node_t *seq = node_at(L, node_at(L, rmap)->data.mapping.pairs.start[ip].value);
	if (seq->type != YAML_SEQUENCE_NODE)
		return;
	yaml_node_item_t *it = seq->data.sequence.items.start, *w = it;
	for (; it < seq->data.sequence.items.top; it++) {
		yaml_node_t *e = node_at(L, *it);
		long f = e->type == YAML_MAPPING_NODE ? map_find(L, *it, "factor", 6) : -1;
		int lost = 0;
		if (f >= 0) {
			yaml_node_t *fv = node_at(L, e->data.mapping.pairs.start[f].value);
			if (fv->type == YAML_SCALAR_NODE && !strcmp(scalar(fv), name))
				for (int k = 0; k < 2; k++) {
					long q = map_find(L, *it, k ? "to" : "from", k ? 2 : 4);
					if (q >= 0 && !doc_has_level(L, fmap, name, node_at(L, e->data.mapping.pairs.start[q].value)))
						lost = 1;
				}
		}
		if (!lost)
			*w++ = *it;
	}
	seq->data.sequence.items.top = w;
}

/* Whether a report item (a mapping node) must go after factor name lost
 * levels: its where term for name is left without a level (a list loses
 * the lost ones). */
static int where_lost(struct loader *L, int item, int fmap, const char *name)
{
	yaml_node_t *e = node_at(L, item);
	long wp = e->type == YAML_MAPPING_NODE ? map_find(L, item, "where", 5) : -1;
	if (wp < 0)
		return 0;
	int wmap = e->data.mapping.pairs.start[wp].value;
	yaml_node_t *w = node_at(L, wmap);
	long p = w->type == YAML_MAPPING_NODE ? map_find(L, wmap, name, strlen(name)) : -1;
	if (p < 0)
		return 0;
	yaml_node_t *v = node_at(L, w->data.mapping.pairs.start[p].value);
	if (v->type != YAML_SEQUENCE_NODE)
		return !doc_has_level(L, fmap, name, v);
	yaml_node_item_t *it = v->data.sequence.items.start, *o = it;
	for (; it < v->data.sequence.items.top; it++)
		if (doc_has_level(L, fmap, name, node_at(L, *it)))
			*o++ = *it;
	int gone = o == v->data.sequence.items.start && it != o;
	v->data.sequence.items.top = o;
	return gone;
}

/* Drop from report.scatter, normalised, bars and best the figures whose
 * where keeps only levels that factor name lost (they would draw nothing),
 * and the lost levels from the others' where lists. */
static void prune_lost_where(struct loader *L, int root, int fmap, const char *name)
{
	static const char *const lists[] = {"scatter", "normalised", "bars", "best"};
	long rp = top_find(L, root, "report");
	if (rp < 0)
		return;
	int rmap = node_at(L, root)->data.mapping.pairs.start[rp].value;
	if (node_at(L, rmap)->type != YAML_MAPPING_NODE)
		return;
	for (size_t k = 0; k < ARRAY_SIZE(lists); k++) {
		long lp = map_find(L, rmap, lists[k], strlen(lists[k]));
		if (lp < 0)
			continue;
		yaml_node_t *seq = node_at(L, node_at(L, rmap)->data.mapping.pairs.start[lp].value);
		if (seq->type != YAML_SEQUENCE_NODE)
			continue;
		yaml_node_item_t *it = seq->data.sequence.items.start, *w = it;
		for (; it < seq->data.sequence.items.top; it++)
			if (!where_lost(L, *it, fmap, name))
				*w++ = *it;
		seq->data.sequence.items.top = w;
	}
}

/* After overrides replaced factors' levels: drop from exclude rules the
 * levels those factors lost (a rule left with none goes), baseline entries
 * report.improvements entries that name a lost level and figures whose
 * where keeps none of the levels left, so the recipe as run is whole. */
static void prune_lost_levels(struct loader *L)
{
	int root = yaml_document_get_root_node(&L->doc) - L->doc.nodes.start + 1;
	long fp = top_find(L, root, "factors"), ep = top_find(L, root, "exclude"),
	     bp = top_find(L, root, "baseline");
	if (fp < 0)
		return;
	int fmap = node_at(L, root)->data.mapping.pairs.start[fp].value;
	if (node_at(L, fmap)->type != YAML_MAPPING_NODE)
		return;
	for (size_t o = 0; o < L->novr_factors; o++) {
		const char *name = L->ovr_factors[o];
		yaml_node_t *ex = ep >= 0 ? node_at(L, node_at(L, root)->data.mapping.pairs.start[ep].value) : NULL;
		if (ex && ex->type == YAML_SEQUENCE_NODE) {
			yaml_node_item_t *rule = ex->data.sequence.items.start;
			while (rule < ex->data.sequence.items.top) {
				yaml_node_t *rm = node_at(L, *rule);
				long p = rm->type == YAML_MAPPING_NODE ? map_find(L, *rule, name, strlen(name)) : -1;
				int drop = 0;
				if (p >= 0) {
					yaml_node_t *v = node_at(L, rm->data.mapping.pairs.start[p].value);
					if (v->type == YAML_SEQUENCE_NODE) {
						yaml_node_item_t *it = v->data.sequence.items.start, *w = it;
						for (; it < v->data.sequence.items.top; it++)
							if (doc_has_level(L, fmap, name, node_at(L, *it)))
								*w++ = *it;
						drop = w == v->data.sequence.items.start && it != w;
						v->data.sequence.items.top = w;
					} else {
						drop = !doc_has_level(L, fmap, name, v);
					}
				}
				if (drop) {
					memmove(rule, rule + 1, (size_t)(ex->data.sequence.items.top - rule - 1) * sizeof(*rule));
					ex->data.sequence.items.top--;
				} else {
					rule++;
				}
			}
		}
		yaml_node_t *b = bp >= 0 ? node_at(L, node_at(L, root)->data.mapping.pairs.start[bp].value) : NULL;
		long p = b && b->type == YAML_MAPPING_NODE ? map_find(L, node_at(L, root)->data.mapping.pairs.start[bp].value, name, strlen(name)) : -1;
		if (p >= 0 && !doc_has_level(L, fmap, name, node_at(L, b->data.mapping.pairs.start[p].value))) {
			yaml_node_pair_t *pr = b->data.mapping.pairs.start + p;
			memmove(pr, pr + 1, (size_t)(b->data.mapping.pairs.top - pr - 1) * sizeof(*pr));
			b->data.mapping.pairs.top--;
		}
		prune_lost_improvements(L, root, fmap, name);
		prune_lost_where(L, root, fmap, name);
	}
}

static int write_text(void *data, unsigned char *buffer, size_t size)
{
	sb_add(data, (const char *)buffer, size);
	return 1;
}

/* The document as YAML text (the document is consumed). */
static char *emit_document(yaml_document_t *doc, const char *header)
{
	struct strbuf sb = {0};
	sb_puts(&sb, header);
	yaml_emitter_t e;
	if (!yaml_emitter_initialize(&e))
		BUG("yaml_emitter_initialize failed");
	yaml_emitter_set_output(&e, write_text, &sb);
	yaml_emitter_set_unicode(&e, 1);
	yaml_emitter_set_width(&e, -1);
	if (!yaml_emitter_open(&e) || !yaml_emitter_dump(&e, doc) || !yaml_emitter_close(&e))
		BUG("cannot emit the recipe: %s", e.problem ? e.problem : "?");
	yaml_emitter_delete(&e);
	return sb.buf;
}

static int load_text(const char *path, char *given, char *const *ovr, size_t novr, struct recipe *r,
		     FILE *err, char **as_run, int plan);

static int load_overrides(const char *path, char *const *ovr, size_t novr, struct recipe *r, FILE *err, int plan)
{
	char *as_run = NULL;
	if (load_text(path, NULL, ovr, novr, r, err, novr ? &as_run : NULL, plan) < 0)
		return -1;
	if (!novr)
		return 0;
	/* load what is saved as run, so that text, marks and hash are its own */
	recipe_free(r);
	return load_text(path, as_run, NULL, 0, r, err, NULL, plan);
}

int recipe_load(const char *path, struct recipe *r, FILE *err)
{
	return load_overrides(path, NULL, 0, r, err, 0);
}

int recipe_load_overrides(const char *path, char *const *ovr, size_t novr, struct recipe *r, FILE *err)
{
	return load_overrides(path, ovr, novr, r, err, 1);
}

/* The absolute directory of the file at path ("." when it cannot be
 * resolved). */
static char *recipe_dir_of(const char *path)
{
	char *abs = realpath(path, NULL);
	char *slash = abs ? strrchr(abs, '/') : NULL;
	if (!slash) {
		free(abs);
		return xstrdup(".");
	}
	if (slash == abs)
		slash[1] = '\0'; /* a recipe in / */
	else
		*slash = '\0';
	return abs;
}

/* What a recipe is without the keys that set it otherwise. */
static void recipe_defaults(struct recipe *r)
{
	r->engine = ENGINE_NATIVE;
	r->device = xstrdup("auto");
	r->measure = (struct measure){
		.warmup_s = 0.2, .warmup_iters = 0, .min_time_s = 0.5, .max_time_s = 5,
		.rel_ci = 0.02, .timeout_s = 300, .grace_s = 5,
	};
	r->order = ORDER_GIVEN;
	r->seed = 1;
	r->repeat = 1;
	r->report.metric = xstrdup("throughput");
}

/* Parse the one document of the text into L->doc (*have_doc = 1 once it
 * holds one) and check that its root is a mapping. Returns 0, or -1 after
 * recording errors in L. */
static int parse_document(struct loader *L, yaml_parser_t *parser, int *have_doc)
{
	if (!yaml_parser_load(parser, &L->doc)) {
		yaml_error(L, parser);
		return -1;
	}
	*have_doc = 1;
	L->root = yaml_document_get_root_node(&L->doc);
	if (!L->root || is_null(L->root)) {
		errorf(L, (struct mark){1, 1}, "empty recipe (expected a mapping with name, engine and factors)");
		return -1;
	}
	yaml_document_t next;
	if (!yaml_parser_load(parser, &next)) {
		yaml_error(L, parser);
		return -1;
	}
	if (yaml_document_get_root_node(&next)) {
		struct mark m = {(unsigned)next.start_mark.line + 1, (unsigned)next.start_mark.column + 1};
		errorf(L, m, "more than one document in the recipe (expected one)");
		yaml_document_delete(&next);
		return -1;
	}
	yaml_document_delete(&next);
	if (check_nul(L))
		return -1;
	if (L->root->type != YAML_MAPPING_NODE) {
		char buf[64];
		errorf(L, node_mark(L->root), "the recipe must be a mapping with name, engine and factors, not %s",
		       describe(L->root, buf, sizeof(buf)));
		return -1;
	}
	return 0;
}

/* The recipe as run (allocated): a comment naming path and the overrides,
 * then doc with them applied (emitting deletes doc). */
static char *recipe_as_run(yaml_document_t *doc, const char *path, char *const *ovr, size_t novr)
{
	struct strbuf h = {0};
	sb_printf(&h, "# the recipe as run: %s with", path);
	for (size_t i = 0; i < novr; i++)
		sb_printf(&h, " %s", ovr[i]);
	/* one comment line, whatever the overrides hold */
	char *line = text_clean(h.buf, h.len, 0);
	sb_reset(&h);
	sb_printf(&h, "%s\n", line);
	free(line);
	char *text = emit_document(doc, h.buf);
	sb_free(&h);
	return text;
}

/* Load the recipe at path (or, when given is not NULL, that text, which r
 * then owns). With
 * overrides, *as_run receives the recipe as run: a comment naming them, then
 * the document with them applied. */
static int load_text(const char *path, char *given, char *const *ovr, size_t novr, struct recipe *r,
		     FILE *err, char **as_run, int plan)
{
	struct loader L;
	yaml_parser_t parser;
	int have_parser = 0, have_doc = 0;

	memset(r, 0, sizeof(*r));
	memset(&L, 0, sizeof(L));
	L.r = r;
	L.ovr = ovr;
	L.novr = novr;
	L.plan = plan;
	r->path = xstrdup(path);
	r->dir = recipe_dir_of(path);
	r->text = given ? given : read_file_max(path, RECIPE_MAX_BYTES, &r->text_len);
	if (given)
		r->text_len = strlen(given);
	if (!r->text && errno == EFBIG) {
		fprintf(err, "matrix: unable to read '%s': more than %d MiB, no recipe is that long\n", path,
			RECIPE_MAX_BYTES >> 20);
		recipe_free(r);
		return -1;
	}
	if (!r->text) {
		fprintf(err, "matrix: unable to read '%s': %s\n", path, strerror(errno));
		recipe_free(r);
		return -1;
	}
	r->text_hash = hash64(r->text, r->text_len, HASH64_INIT);
	recipe_defaults(r);

	if (check_text(&L) || check_depth(&L))
		goto fail;
	if (!yaml_parser_initialize(&parser))
		BUG("yaml_parser_initialize failed");
	have_parser = 1;
	yaml_parser_set_input_string(&parser, (const unsigned char *)r->text, r->text_len);
	if (parse_document(&L, &parser, &have_doc) != 0 || check_node_count(&L) || expand_aliases(&L))
		goto fail;
	for (size_t i = 0; i < novr; i++)
		apply_override(&L, i);
	if (!L.nerrs)
		prune_lost_levels(&L);
	L.root = yaml_document_get_root_node(&L.doc); /* the nodes may have moved */
	if (L.nerrs || check_node_count(&L))
		goto fail;
	load_schema(&L);
	if (L.nerrs)
		goto fail;
	free(L.broken);
	for (size_t i = 0; i < L.novr_factors; i++)
		free((char *)L.ovr_factors[i]);
	free(L.ovr_factors);
	if (as_run) {
		*as_run = recipe_as_run(&L.doc, path, ovr, novr);
	} else {
		yaml_document_delete(&L.doc);
	}
	yaml_parser_delete(&parser);
	return 0;

fail:
	print_errors(&L, err);
	for (size_t i = 0; i < L.nerrs; i++)
		free(L.errs[i].msg);
	free(L.errs);
	free(L.broken);
	for (size_t i = 0; i < L.novr_factors; i++)
		free((char *)L.ovr_factors[i]);
	free(L.ovr_factors);
	if (have_doc)
		yaml_document_delete(&L.doc);
	if (have_parser)
		yaml_parser_delete(&parser);
	recipe_free(r);
	return -1;
}

void recipe_free(struct recipe *r)
{
	free(r->path);
	free(r->dir);
	free(r->text);
	free(r->name);
	free(r->description);
	for (size_t i = 0; i < r->ncommand; i++)
		free(r->command[i]);
	free(r->command);
	free(r->python);
	free(r->device);
	for (size_t i = 0; i < r->nfactors; i++) {
		struct factor *f = &r->factors[i];
		free(f->name);
		for (size_t j = 0; j < f->nlevels; j++)
			free(f->levels[j]);
		free(f->levels);
		free(f->level_marks);
	}
	free(r->factors);
	for (size_t i = 0; i < r->nexcludes; i++) {
		for (size_t j = 0; j < r->excludes[i].nterms; j++)
			free(r->excludes[i].terms[j].match);
		free(r->excludes[i].terms);
	}
	free(r->excludes);
	free(r->baseline.level);
	free(r->report.metric);
	for (size_t i = 0; i < r->report.nscatter; i++)
		recipe_facet_free(&r->report.scatter[i].facet);
	free(r->report.scatter);
	for (size_t i = 0; i < r->report.nnormalised; i++)
		recipe_facet_free(&r->report.normalised[i].facet);
	free(r->report.normalised);
	for (size_t i = 0; i < r->report.nbars; i++)
		recipe_facet_free(&r->report.bars[i].facet);
	free(r->report.bars);
	for (size_t i = 0; i < r->report.nbest; i++)
		recipe_facet_free(&r->report.best[i].facet);
	free(r->report.best);
	free(r->report.effects_shown);
	for (size_t i = 0; i < r->report.nimprovements; i++)
		free(r->report.improvements[i].by);
	free(r->report.improvements);
	for (size_t i = 0; i < r->ncontainers; i++) {
		free(r->containers[i].name);
		free(r->containers[i].image);
		free(r->containers[i].build);
		free(r->containers[i].runtime);
		free(r->containers[i].network);
		free(r->containers[i].cpus);
		free(r->containers[i].memory);
		free(r->containers[i].context);
		for (size_t j = 0; j < r->containers[i].nargs; j++)
			free(r->containers[i].args[j]);
		free(r->containers[i].args);
	}
	free(r->containers);
	free(r->container_cache);
	free(r->slurm.partition);
	free(r->slurm.account);
	free(r->slurm.qos);
	free(r->slurm.mem);
	for (size_t i = 0; i < r->slurm.nextra; i++)
		free(r->slurm.extra[i]);
	free(r->slurm.extra);
	memset(r, 0, sizeof(*r));
}

long recipe_factor_index(const struct recipe *r, const char *name)
{
	for (size_t i = 0; i < r->nfactors; i++)
		if (!strcmp(r->factors[i].name, name))
			return (long)i;
	return -1;
}

long recipe_level_index(const struct recipe *r, size_t fi, const char *level)
{
	const struct factor *f = &r->factors[fi];
	const char *canon = level;
	if (f->vocab && (f->vocab->type == VOCAB_SWITCH || !strcmp(f->vocab->name, "threads"))) {
		const char *why; /* on = true = yes; threads: all = the cores */
		const char *c = vocab_check_level(f->vocab, level, &why);
		if (c)
			canon = c;
	}
	for (size_t j = 0; j < f->nlevels; j++)
		if (!strcmp(f->levels[j], canon))
			return (long)j;
	return -1;
}

/* The factor named by the n bytes at name, or -1 with *why saying so. */
static long facet_factor(const struct recipe *r, const char *name, size_t n, char **why)
{
	char *copy = xstrndup(name, n), *nm = str_trim(copy);
	long fi = recipe_factor_index(r, nm);
	if (fi < 0) {
		const char **cands = xcalloc(r->nfactors + 1, sizeof(*cands));
		for (size_t i = 0; i < r->nfactors; i++)
			cands[i] = r->factors[i].name;
		struct strbuf sb = {0};
		sb_printf(&sb, "unknown factor '%s'", nm);
		hint(&sb, nm, cands, r->nfactors);
		*why = sb.buf;
		free(cands);
	}
	free(copy);
	return fi;
}

int recipe_facet_arg(const struct recipe *r, const char *arg, int panels, struct report_facet *f, char **why)
{
	*why = NULL;
	if (panels) {
		struct report_facet p = {0};
		for (const char *s = arg;;) {
			size_t n = strcspn(s, ",");
			long fi = facet_factor(r, s, n, why);
			if (fi < 0)
				return -1;
			if (p.npanels == FACET_MAX_PANELS) {
				*why = xasprintf("at most %d factors make panels", FACET_MAX_PANELS);
				return -1;
			}
			for (size_t j = 0; j < p.npanels; j++)
				if (p.panels[j] == (size_t)fi) {
					*why = xasprintf("factor '%s' is named twice", r->factors[fi].name);
					return -1;
				}
			p.panels[p.npanels++] = (size_t)fi;
			if (!s[n])
				break;
			s += n + 1;
		}
		size_t cells = 1;
		for (size_t j = 0; j < p.npanels; j++)
			cells *= facet_levels(r, f, p.panels[j]);
		if (cells > FACET_MAX_CELLS) {
			*why = xasprintf("%zu panels, more than %d (keep fewer levels with --where)", cells,
					 FACET_MAX_CELLS);
			return -1;
		}
		f->npanels = p.npanels;
		memcpy(f->panels, p.panels, sizeof(p.panels));
		return 0;
	}
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg || !eq[1]) {
		*why = xstrdup("expected FACTOR=LEVEL[,LEVEL...]");
		return -1;
	}
	long fi = facet_factor(r, arg, (size_t)(eq - arg), why);
	if (fi < 0)
		return -1;
	const struct factor *fa = &r->factors[fi];
	unsigned char *keep = xcalloc(fa->nlevels, 1);
	for (const char *s = eq + 1;;) {
		size_t n = strcspn(s, ",");
		char *copy = xstrndup(s, n), *lv = str_trim(copy);
		long li = recipe_level_index(r, (size_t)fi, lv);
		if (li < 0) {
			struct strbuf sb = {0};
			sb_printf(&sb, "unknown level '%s' for factor '%s'", lv, fa->name);
			hint(&sb, lv, (const char *const *)fa->levels, fa->nlevels);
			*why = sb.buf;
			free(copy);
			free(keep);
			return -1;
		}
		keep[li] = 1;
		free(copy);
		if (!s[n])
			break;
		s += n + 1;
	}
	f->where = xrealloc(f->where, (f->nwhere + 1) * sizeof(*f->where));
	f->where[f->nwhere].factor = (size_t)fi;
	f->where[f->nwhere].keep = keep;
	f->nwhere++;
	return 0;
}

int recipe_facet_keeps(const struct report_facet *f, const size_t *lv)
{
	for (size_t t = 0; t < f->nwhere; t++)
		if (!f->where[t].keep[lv[f->where[t].factor]])
			return 0;
	return 1;
}

void recipe_facet_free(struct report_facet *f)
{
	for (size_t t = 0; t < f->nwhere; t++)
		free(f->where[t].keep);
	free(f->where);
	memset(f, 0, sizeof(*f));
}
