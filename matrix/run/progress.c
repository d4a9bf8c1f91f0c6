/* progress.c - see progress.h. */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "progress.h"
#include "plan/vocab.h"
#include "report/effects.h"
#include "report/model.h"
#include "util.h"

void progress_init(struct progress *pg, size_t nfactors)
{
	memset(pg, 0, sizeof(*pg));
	pg->tty = isatty(2);
	pg->out_tty = isatty(1);
	pg->nfactors = nfactors;
	pg->first = xcalloc(nfactors ? nfactors : 1, sizeof(size_t));
	pg->varies = xcalloc(nfactors ? nfactors : 1, 1);
}

void progress_free(struct progress *pg)
{
	free(pg->first);
	free(pg->varies);
	pg->first = NULL;
	pg->varies = NULL;
}

void progress_count(struct progress *pg, const size_t *level, unsigned repeat)
{
	for (size_t f = 0; f < pg->nfactors; f++) {
		if (pg->total == 0)
			pg->first[f] = level[f];
		else if (pg->first[f] != level[f])
			pg->varies[f] = 1;
	}
	if (repeat)
		pg->repeats = 1;
	pg->total++;
}

size_t term_columns(int fd)
{
	struct winsize ws;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	const char *env = getenv("COLUMNS");
	long n;
	if (env && parse_long(env, &n) == 0 && n > 0 && n < 100000)
		return (size_t)n;
	return 80;
}

/* The byte offset after the first k characters of s. */
static size_t bytes_of(const char *s, size_t k)
{
	size_t i = 0;
	for (size_t c = 0; s[i]; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && c++ == k)
			break;
	return i;
}

char *term_fit(const char *text, size_t cols)
{
	char *clean = text_clean(text, strlen(text), 0);
	for (char *c = clean; *c; c++)
		if (*c == '\t')
			*c = ' ';
	/* one column less than the width: a character in the last column
	 * makes some terminals wrap */
	size_t room = cols > 1 ? cols - 1 : 1, len = strlen(clean);
	if (text_columns(clean, len) <= room)
		return clean;
	size_t keep = room > 3 ? room - 3 : room;
	size_t at = bytes_of(clean, keep);
	char *out = xasprintf("%.*s%s", (int)at, clean, room > 3 ? "..." : "");
	free(clean);
	return out;
}

char *term_wrap(const char *text, size_t cols)
{
	char *clean = text_clean(text, strlen(text), 0);
	for (char *c = clean; *c; c++)
		if (*c == '\t')
			*c = ' ';
	size_t room = cols > 1 ? cols - 1 : 1;
	static const char indent[] = "    ";
	size_t ind = room > 2 * (sizeof(indent) - 1) ? sizeof(indent) - 1 : 0;
	struct strbuf sb = {0};
	sb_add(&sb, "", 0);
	size_t used = 0; /* columns on the current line */
	const char *s = clean;
	while (*s) {
		size_t sp = 0;
		while (s[sp] == ' ')
			sp++;
		size_t wl = strcspn(s + sp, " ");
		size_t wcols = text_columns(s + sp, wl);
		if (used && used + sp + wcols > room) { /* the word starts the next line */
			sb_printf(&sb, "\n%.*s", (int)ind, indent);
			used = ind;
			s += sp;
			sp = 0;
		}
		sb_add(&sb, s, sp);
		used += sp;
		s += sp;
		while (wcols > room - used) { /* a word longer than a line: cut it */
			size_t at = bytes_of(s, room - used);
			sb_add(&sb, s, at);
			sb_printf(&sb, "\n%.*s", (int)ind, indent);
			used = ind;
			wcols -= text_columns(s, at);
			wl -= at;
			s += at;
		}
		sb_add(&sb, s, wl);
		used += wcols;
		s += wl;
	}
	free(clean);
	return sb.buf;
}

void progress_print(const struct progress *pg, const char *text)
{
	char *t = pg->out_tty ? term_wrap(text, term_columns(1)) : text_clean(text, strlen(text), 0);
	printf("%s\n", t);
	fflush(stdout);
	free(t);
}

void progress_label(const struct progress *pg, const struct recipe *r, const char *const *levels,
		    const char *repeat, int all, struct strbuf *sb)
{
	sb_add(sb, "", 0);
	size_t n = 0;
	for (size_t f = 0; f < r->nfactors; f++)
		if (all || (f < pg->nfactors && pg->varies[f]))
			sb_printf(sb, "%s%s=%s", n++ ? " " : "", r->factors[f].name, levels[f]);
	if (repeat && strcmp(repeat, "0") != 0)
		sb_printf(sb, "%srepeat=%s", n ? " " : "", repeat);
}

static void fmt_hms(char *buf, size_t n, double s)
{
	long t = (long)(s + 0.5);
	snprintf(buf, n, "%02ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

void progress_line(const struct progress *pg, const char *current)
{
	if (!pg->tty)
		return;
	char el[48], eta[48] = "--:--:--";
	double elapsed = now_monotonic() - pg->start;
	fmt_hms(el, sizeof(el), elapsed);
	if (pg->done_now)
		fmt_hms(eta, sizeof(eta), elapsed / (double)pg->done_now * (double)(pg->todo_at_start - pg->done_now));
	struct strbuf sb = {0};
	sb_printf(&sb, "[%" PRIu64 "/%" PRIu64 "] ok %" PRIu64 ", failed %" PRIu64 ", elapsed %s, ETA %s%s%s",
		  pg->done, pg->total, pg->ok + pg->unsupported, pg->failed, el, eta, current && *current ? " | " : "",
		  current ? current : "");
	char *line = term_fit(sb.buf, term_columns(2));
	sb_free(&sb);
	fprintf(stderr, "\r\033[K%s", line);
	fflush(stderr);
	free(line);
}

void progress_clear(const struct progress *pg)
{
	if (pg->tty) {
		fprintf(stderr, "\r\033[K");
		fflush(stderr);
	}
}

void progress_point(struct progress *pg, const struct recipe *r, const struct progress_point *pp)
{
	int success = strcmp(pp->status, "ok") == 0 || strcmp(pp->status, "unsupported") == 0;
	pg->done++;
	pg->done_now++;
	if (strcmp(pp->status, "ok") == 0)
		pg->ok++;
	else if (strcmp(pp->status, "unsupported") == 0)
		pg->unsupported++;
	else
		pg->failed++;
	progress_clear(pg);
	/* a person reads a terminal: the factors that vary, the id last, the
	 * line wrapped to its width; a file gets every factor, whole */
	/* [ 9/64] above [10/64]: the counter as wide as the total, so the columns align */
	char tot[24];
	int width = snprintf(tot, sizeof(tot), "%" PRIu64, pg->total);
	for (int to_tty = 0; to_tty < 2; to_tty++) {
		FILE *out = to_tty ? stderr : stdout;
		int term = to_tty || pg->out_tty;
		if (to_tty && (pg->out_tty || !pg->tty || success))
			continue; /* stderr only for a failure no terminal would show */
		struct strbuf label = {0}, line = {0};
		progress_label(pg, r, pp->levels, pp->repeat, !term, &label);
		if (term)
			sb_printf(&line, "[%*" PRIu64 "/%" PRIu64 "] %s  %.3f s  %s", width, pg->done, pg->total,
				  pp->status, pp->wall_s, label.buf);
		else
			sb_printf(&line, "[%*" PRIu64 "/%" PRIu64 "] %-11s %8.3f s  %s  %s", width, pg->done,
				  pg->total, pp->status, pp->wall_s, pp->id, label.buf);
		double tv;
		char t3[32];
		const char *mname = r->report.metric;
		if (mname && strcmp(mname, "throughput") != 0 && pp->metric_value && *pp->metric_value &&
		    strcmp(pp->status, "ok") == 0 && parse_double(pp->metric_value, &tv) == 0) {
			struct metric m; /* the recipe's metric, in the report's unit */
			metric_describe(&m, mname, NULL);
			sb_printf(&line, "  %s=%s%s%s", mname, fmt_sig3(t3, tv * m.scale), *m.unit ? " " : "", m.unit);
			metric_free(&m);
		} else if (pp->throughput && *pp->throughput && strcmp(pp->status, "ok") == 0) /* results.csv has every digit */
			sb_printf(&line, "  throughput=%s %s",
				  parse_double(pp->throughput, &tv) == 0 ? fmt_sig3(t3, tv) : pp->throughput,
				  pp->unit ? pp->unit : "");
		if (pp->reason && *pp->reason)
			sb_printf(&line, "  (%s)", pp->reason);
		if (term)
			sb_printf(&line, "  %s", pp->id);
		char *text = term ? term_wrap(line.buf, term_columns(to_tty ? 2 : 1))
				  : text_clean(line.buf, line.len, 0); /* levels may hold anything */
		fprintf(out, "%s\n", text);
		fflush(out);
		free(text);
		sb_free(&line);
		sb_free(&label);
	}
}

/* One group's line: "  GROUP: best CONFIG: VALUE UNIT [LO, HI]; gain over
 * the baseline G [GLO, GHI]". */
static void summary_group(const struct progress *pg, const struct run *run, const struct best *b)
{
	const struct cellset *cs = &run->cells;
	const struct metric *m = &run->metric;
	struct strbuf sb = {0};
	char v[32], lo[32], hi[32];
	sb_puts(&sb, "  ");
	if (run->ngroup) {
		run_cell_label(run, (size_t)b->best, run->group, run->ngroup, " ", &sb);
		sb_puts(&sb, ": ");
	}
	sb_puts(&sb, "best ");
	size_t n = 0;
	for (size_t f = 0; f < run->recipe.nfactors; f++) {
		size_t l = CELL_LEVEL(cs, b->best, f);
		if (run->base_level[f] >= 0 && (size_t)run->base_level[f] != l) {
			sb_printf(&sb, "%s%s=%s", n++ ? " " : "", run->recipe.factors[f].name, run_level(run, f, l));
			/* a setting the engine ignored there is no reason for the gain */
			if (run_cell_ignored(run, (size_t)b->best, f))
				sb_puts(&sb, " (ignored by the engine)");
		}
	}
	if (!n)
		sb_puts(&sb, "(the baseline)");
	double val = cs->value[b->best] * m->scale, u = cs->u[b->best];
	/* a value with the digits of its interval's ends: never read as outside them */
	double vlo = val * exp(-u), vhi = val * exp(u);
	fmt_sig_in(v, val, vlo, vhi, NAN);
	sb_printf(&sb, ": %s%s%s", v, *m->unit ? " " : "", m->unit);
	if (isfinite(u)) {
		fmt_sig_range(lo, hi, vlo, vhi, NAN);
		sb_printf(&sb, " [%s, %s]", lo, hi);
	}
	if (b->baseline >= 0 && b->baseline != b->best && isfinite(b->gain)) {
		double glo = b->gain * exp(-b->gain_u), ghi = b->gain * exp(b->gain_u);
		fmt_sig_in(v, b->gain, glo, ghi, 1.0);
		sb_printf(&sb, "; gain over the baseline %s", v);
		if (isfinite(b->gain_u)) {
			fmt_sig_range(lo, hi, glo, ghi, 1.0);
			sb_printf(&sb, " [%s, %s]", lo, hi);
			/* one process a point: the interval holds the noise inside
			 * each process only, and a knob that does nothing can look
			 * like a gain of 10-20% between two fresh processes */
			if (cellset_pair_within(cs, (size_t)b->best, (size_t)b->baseline))
				sb_puts(&sb, " (one process a point: the variation between processes is not in it; "
					     "repeat: 3 or more decides)");
		} else {
			sb_puts(&sb, " (interval unknown)");
		}
	} else if (b->baseline < 0) {
		sb_puts(&sb, "; the baseline was not measured");
	}
	if (b->runner_up >= 0 && !b->clear)
		sb_puts(&sb, "; not told apart from the runner-up");
	progress_print(pg, sb.buf);
	sb_free(&sb);
}

void progress_summary(const struct progress *pg, const char *dir, size_t max_groups)
{
	FILE *quiet = fopen("/dev/null", "w"); /* the report says what is wrong with the run */
	if (!quiet)
		return;
	struct run run;
	int rc = run_load(&run, dir, NULL, quiet);
	fclose(quiet);
	if (rc != 0) {
		run_free(&run);
		return;
	}
	size_t nb = 0;
	struct best *b = run.cells.ncells
			     ? best_compute(&run.cells, run.group, run.ngroup, run.base_level, run.metric.higher_better,
					    &nb, NULL)
			     : NULL;
	if (nb) {
		struct strbuf sb = {0};
		sb_printf(&sb, "matrix: summary: %s, %s is better; best point", metric_label(&run.metric),
			  run.metric.higher_better ? "higher" : "lower");
		for (size_t g = 0; g < run.ngroup; g++)
			sb_printf(&sb, "%s%s", g ? ", " : " per ", run.recipe.factors[run.group[g]].name);
		sb_printf(&sb, "; gain over the baseline (> 1: better%s); [lo, hi]: 95%% intervals",
			  run.recipe.has_baseline ? "" : "; no baseline in the recipe: " VOCAB_NO_BASELINE);
		progress_print(pg, sb.buf);
		sb_free(&sb);
		for (size_t i = 0; i < nb && i < max_groups; i++)
			summary_group(pg, &run, &b[i]);
		if (nb > max_groups) {
			char *more = xasprintf("  ... and %zu more groups: report.md's best configuration table", nb - max_groups);
			progress_print(pg, more);
			free(more);
		}
	}
	best_free(b, nb);
	run_free(&run);
}
