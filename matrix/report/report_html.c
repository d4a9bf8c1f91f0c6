/* report_html.c - report.md and report.html. The HTML file is self-contained:
 * inline CSS, every figure as inline SVG (ids prefixed per figure so that
 * several gnuplot SVGs can share a page), no script, no network access. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pages.h"
#include "factorial.h"
#include "plan/grid.h"
#include "util.h"

/* Rows of each table shown in the pages; the CSV files hold all of them. */
#define PAGE_ROWS 40
/* Rows of the per-point table that opens the pages. */
#define PER_POINT_ROWS 100

/* DIR/NAME (env.txt) for the pages: a regular file of at most 4 MiB (a run
 * directory from elsewhere may hold a FIFO, which hung the report, or a link
 * to /dev/zero, which filled memory), else "(NAME is not a regular file)";
 * NULL when it cannot be opened. */
static char *read_text(const char *dir, const char *name)
{
	char *p = xasprintf("%s/%s", dir, name), *why = NULL;
	char *t = read_file_capped(p, (size_t)4 << 20, 0, NULL, &why);
	if (!t && why)
		t = xasprintf("(%s %s)", name, why);
	free(why);
	free(p);
	return t;
}

static void summary(const struct run *run, struct strbuf *sb, int html)
{
	const struct recipe *r = &run->recipe;
	/* the study's grid, whatever --only the runs kept (plan.csv holds only
	 * the last run's points); a merged directory has none */
	uint64_t planned = merge_is_dir(run->dir) ? 0 : grid_count(r);
	struct strbuf t = {0};
	sb_printf(&t, "%zu rows in results.csv", run->rows);
	if (planned)
		sb_printf(&t, " of %" PRIu64 " planned points", planned);
	sb_printf(&t, "; %zu measured with a value of %s (%zu distinct points after merging repeats), %zu "
		      "left out of the figures (see the last table). Metric: %s, %s.",
		  run->ok_rows, run->metric.name, run->cells.ncells, run->nfailures, metric_label(&run->metric),
		  run->metric.higher_better ? "higher is better" : "lower is better");
	if (run->torn_offset >= 0)
		sb_puts(&t, " The last line of results.csv is incomplete: the run is still going or was interrupted.");
	if (planned && run->rows < planned)
		sb_puts(&t, " Not every planned point has a result yet.");
	sb_printf(&t, " Factors: ");
	for (size_t f = 0; f < r->nfactors; f++) {
		sb_printf(&t, "%s%s (", f ? ", " : "", r->factors[f].name);
		for (size_t l = 0; l < r->factors[f].nlevels; l++)
			sb_printf(&t, "%s%s", l ? " " : "", r->factors[f].levels[l]);
		sb_puts(&t, ")");
	}
	sb_puts(&t, ".");
	if (html) {
		sb_puts(sb, "<p class=\"summary\">");
		html_escape(sb, t.buf);
		sb_puts(sb, "</p>\n");
	} else {
		md_escape(sb, t.buf, 0);
		sb_puts(sb, "\n\n");
	}
	sb_free(&t);
}

static void paras_markdown(const struct paras *ps, struct strbuf *sb)
{
	for (size_t i = 0; i < ps->n; i++) {
		sb_puts(sb, ps->item[i] ? "- " : "");
		md_escape(sb, ps->text[i], 0);
		sb_putc(sb, '\n');
		if (!ps->item[i] || i + 1 == ps->n || !ps->item[i + 1])
			sb_putc(sb, '\n');
	}
}

static void paras_html(const struct paras *ps, struct strbuf *sb)
{
	for (size_t i = 0; i < ps->n; i++) {
		if (ps->item[i] && (i == 0 || !ps->item[i - 1]))
			sb_puts(sb, "<ul>\n");
		sb_puts(sb, ps->item[i] ? "<li>" : "<p>");
		html_escape(sb, ps->text[i]);
		sb_puts(sb, ps->item[i] ? "</li>\n" : "</p>\n");
		if (ps->item[i] && (i + 1 == ps->n || !ps->item[i + 1]))
			sb_puts(sb, "</ul>\n");
	}
}

/* "Points": the per-point table that opens the pages, its first
 * PER_POINT_ROWS rows; a longer one says so above it, and where it is whole
 * (tables/per_point.md and .csv, report.c). */
static void per_point_section(const struct rtable *t, struct strbuf *sb, int html)
{
	int cut = t->nrows > PER_POINT_ROWS;
	if (html) {
		sb_puts(sb, "<h2 id=\"points\">Points</h2>\n<p class=\"caption\">");
		html_escape(sb, t->caption);
		sb_puts(sb, "</p>\n");
		if (cut)
			sb_printf(sb, "<p class=\"more\">The first %d of %zu points; all of them in <a "
				  "href=\"tables/per_point.md\">tables/per_point.md</a> (this table) and <a "
				  "href=\"tables/per_point.csv\">tables/per_point.csv</a> (every digit).</p>\n",
				  PER_POINT_ROWS, t->nrows);
		if (t->nrows)
			rtable_html(t, PER_POINT_ROWS, sb);
		return;
	}
	sb_puts(sb, "## Points\n\n");
	md_escape(sb, t->caption, 0);
	sb_puts(sb, "\n\n");
	if (cut)
		sb_printf(sb, "The first %d of %zu points; all of them in [tables/per_point.md](tables/per_point.md) "
			  "(this table) and [tables/per_point.csv](tables/per_point.csv) (every digit).\n\n",
			  PER_POINT_ROWS, t->nrows);
	if (t->nrows) {
		rtable_markdown(t, PER_POINT_ROWS, sb);
		sb_putc(sb, '\n');
	}
}

/* The sections "Measurement quality" and "Uncertainty". */
static void sections(const struct run *run, struct strbuf *sb, int html)
{
	struct paras q = {0}, u = {0}, m = {0};
	report_merge_paras(run, &m);
	if (m.n) {
		sb_puts(sb, html ? "<h2 id=\"merged\">Merged runs</h2>\n" : "## Merged runs\n\n");
		(html ? paras_html : paras_markdown)(&m, sb);
	}
	paras_free(&m);
	report_quality_paras(run, &q);
	report_method_paras(run, &u);
	sb_puts(sb, html ? "<h2 id=\"quality\">Measurement quality</h2>\n" : "## Measurement quality\n\n");
	(html ? paras_html : paras_markdown)(&q, sb);
	sb_puts(sb, html ? "<h2 id=\"uncertainty\">Uncertainty</h2>\n" : "## Uncertainty\n\n");
	(html ? paras_html : paras_markdown)(&u, sb);
	paras_free(&q);
	paras_free(&u);
}

/* A fenced code block: its text cleaned (text_clean_lines), the fence one
 * backtick longer than the longest run of backticks in it (at least three),
 * so that nothing in the text can close it. */
static void md_code_block(struct strbuf *sb, const char *text, const char *lang)
{
	char *clean = text_clean_lines(text, strlen(text));
	size_t run = 0, longest = 0;
	for (const char *c = clean; *c; c++) {
		run = *c == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	size_t fence = longest + 1 > 3 ? longest + 1 : 3;
	for (size_t i = 0; i < fence; i++)
		sb_putc(sb, '`');
	sb_printf(sb, "%s\n%s\n", lang, clean);
	for (size_t i = 0; i < fence; i++)
		sb_putc(sb, '`');
	sb_puts(sb, "\n\n");
	free(clean);
}

int report_markdown_write(const struct run *run, const struct report_tables *rt,
			  const struct plot_set *ps, const char *path)
{
	struct strbuf sb = {0};
	const struct recipe *r = &run->recipe;
	sb_puts(&sb, "# ");
	md_escape(&sb, r->name, 1);
	sb_puts(&sb, "\n\n");
	if (r->description) {
		md_escape(&sb, r->description, 0);
		sb_puts(&sb, "\n\n");
	}
	per_point_section(rt->per_point, &sb, 0);
	summary(run, &sb, 0);
	factorial_section(run, &sb, 0);
	sections(run, &sb, 0);
	sb_puts(&sb, "## Figures\n\n");
	for (size_t i = 0; i < ps->n; i++) {
		const struct plot *p = &ps->p[i];
		sb_puts(&sb, "### ");
		md_escape(&sb, p->title, 1);
		sb_puts(&sb, "\n\n");
		if (p->drawn) {
			sb_puts(&sb, "![");
			md_escape(&sb, p->title, 1);
			sb_printf(&sb, "](plots/%s.png)\n\n[SVG](plots/%s.svg) · data: plots/%s.dat · script: plots/%s.gp\n\n",
				  p->name, p->name, p->name, p->name);
		} else {
			sb_puts(&sb, "*Not drawn: ");
			md_escape(&sb, p->why ? p->why : "unknown reason", 1);
			sb_puts(&sb, ".*\n\n");
		}
		if (p->caption) {
			md_escape(&sb, p->caption, 0);
			sb_puts(&sb, "\n\n");
		}
	}
	sb_puts(&sb, "## Tables\n\n");
	for (size_t i = 0; i < rt->n; i++) {
		const struct rtable *t = rt->t[i];
		sb_puts(&sb, "### ");
		md_escape(&sb, t->title, 1);
		sb_puts(&sb, "\n\n");
		if (t->caption) {
			md_escape(&sb, t->caption, 0);
			sb_puts(&sb, "\n\n");
		}
		if (t->nrows == 0)
			sb_puts(&sb, "(none)\n\n");
		else {
			rtable_markdown(t, PAGE_ROWS, &sb);
			sb_putc(&sb, '\n');
		}
	}
	sb_puts(&sb, "## Provenance\n\n");
	if (run->command_example) {
		sb_puts(&sb, "A point's command, as run (every one is in results.csv):\n\n");
		md_code_block(&sb, run->command_example, "");
	}
	char *env = read_text(run->dir, "env.txt");
	sb_puts(&sb, "Environment (env.txt):\n\n");
	md_code_block(&sb, env ? env : "(no env.txt)", "");
	free(env);
	sb_puts(&sb, "Recipe (recipe.yaml):\n\n");
	md_code_block(&sb, r->text ? r->text : "", "yaml");
	sb.buf[--sb.len] = '\0'; /* the file ends with one newline */
	int rc = write_file_atomic(path, sb.buf, sb.len);
	sb_free(&sb);
	return rc;
}

/* Append an SVG file without its XML prologue, every id prefixed. */
static int inline_svg(struct strbuf *sb, const char *path, const char *prefix)
{
	char *svg = read_file(path, NULL);
	if (!svg)
		return -1;
	char *p = strstr(svg, "<svg");
	if (!p) {
		free(svg);
		return -1;
	}
	static const char *const pats[] = {"id='", "id=\"", "href='#", "href=\"#", "url(#"};
	while (*p) {
		size_t best = (size_t)-1, bk = 0;
		for (size_t k = 0; k < ARRAY_SIZE(pats); k++) {
			char *q = strstr(p, pats[k]);
			if (q && (size_t)(q - p) < best) {
				best = (size_t)(q - p);
				bk = k;
			}
		}
		if (best == (size_t)-1) {
			sb_puts(sb, p);
			break;
		}
		size_t n = best + strlen(pats[bk]);
		sb_add(sb, p, n);
		sb_printf(sb, "%s-", prefix);
		p += n;
	}
	free(svg);
	return 0;
}

static const char css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;color:#1a1a1a;"
    "max-width:1100px;margin:2em auto;padding:0 1.2em;line-height:1.45}\n"
    "h1{font-size:1.7em;margin-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #ccc;padding-bottom:.2em}\n"
    "h3{margin-top:1.6em}\n"
    "figure{margin:1.5em 0;padding:0}figure svg{width:100%;height:auto;max-width:960px;display:block}\n"
    "figcaption{font-size:.92em;color:#444;max-width:960px}\n"
    "table{border-collapse:collapse;font-size:.88em;margin:.6em 0}\n"
    "th,td{border-bottom:1px solid #e2e2e2;padding:.25em .6em;text-align:left;vertical-align:top}\n"
    "th{background:#f3f3f3}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}\n"
    "tbody tr:nth-child(even){background:#fafafa}\n"
    "pre{background:#f6f6f6;padding:.8em;overflow:auto;font-size:.85em}\n"
    ".caption{color:#444;font-size:.92em;max-width:960px}.missing{color:#a33}\n"
    "nav a{margin-right:1em}\n";

/* The page's head, title, description, the per-point table, summary and
 * navigation. */
static void html_head(const struct run *run, const struct report_tables *rt, struct strbuf *sb)
{
	const struct recipe *r = &run->recipe;
	sb_puts(sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
	html_escape(sb, r->name);
	sb_puts(sb, " - matrix report</title>\n<style>\n");
	sb_puts(sb, css);
	sb_puts(sb, "</style>\n</head>\n<body>\n<h1>");
	html_escape(sb, r->name);
	sb_puts(sb, "</h1>\n");
	if (r->description) {
		sb_puts(sb, "<p>");
		html_escape(sb, r->description);
		sb_puts(sb, "</p>\n");
	}
	per_point_section(rt->per_point, sb, 1);
	summary(run, sb, 1);
	sb_puts(sb, "<nav><a href=\"#points\">Points</a><a href=\"#quality\">Measurement quality</a><a href=\"#uncertainty\">Uncertainty</a>"
		    "<a href=\"#figures\">Figures</a><a href=\"#tables\">Tables</a>"
		    "<a href=\"#provenance\">Provenance</a></nav>\n");
	factorial_section(run, sb, 1);
}

/* "Figures": each figure's SVG inline (or why it is missing) and caption. */
static void html_figures(const struct plot_set *ps, const char *plotdir, struct strbuf *sb)
{
	sb_puts(sb, "<h2 id=\"figures\">Figures</h2>\n");
	for (size_t i = 0; i < ps->n; i++) {
		const struct plot *p = &ps->p[i];
		sb_printf(sb, "<figure id=\"fig-%s\">\n", p->name);
		char *svg = xasprintf("%s/%s.svg", plotdir, p->name);
		char *prefix = xasprintf("f%zu", i);
		if (!p->drawn || inline_svg(sb, svg, prefix) != 0) {
			sb_puts(sb, "<p class=\"missing\">Figure not drawn: ");
			html_escape(sb, p->why ? p->why : "the SVG could not be read");
			sb_puts(sb, "</p>\n");
		}
		free(svg);
		free(prefix);
		sb_puts(sb, "<figcaption><b>");
		html_escape(sb, p->title);
		sb_puts(sb, ".</b> ");
		html_escape(sb, p->caption);
		if (p->empty)
			sb_puts(sb, "</figcaption>\n</figure>\n");
		else
			sb_printf(sb, " <a href=\"plots/%s.png\">PNG</a> <a href=\"plots/%s.dat\">data</a> "
				      "<a href=\"plots/%s.gp\">script</a></figcaption>\n</figure>\n",
				  p->name, p->name, p->name);
	}
}

/* "Tables": each table with its caption, at most PAGE_ROWS rows. */
static void html_tables(const struct report_tables *rt, struct strbuf *sb)
{
	sb_puts(sb, "<h2 id=\"tables\">Tables</h2>\n");
	for (size_t i = 0; i < rt->n; i++) {
		const struct rtable *t = rt->t[i];
		sb_printf(sb, "<h3 id=\"tables-%s\">", t->name);
		html_escape(sb, t->title);
		sb_printf(sb, " <small>(<a href=\"tables/%s.csv\">tables/%s.csv</a>)</small></h3>\n", t->name,
			  t->name);
		if (t->caption) {
			sb_puts(sb, "<p class=\"caption\">");
			html_escape(sb, t->caption);
			sb_puts(sb, "</p>\n");
		}
		if (t->nrows == 0)
			sb_puts(sb, "<p>(none)</p>\n");
		else
			rtable_html(t, PAGE_ROWS, sb);
	}
}

/* "Provenance": a point's command, env.txt, recipe.yaml, and when and from
 * where the page was written; then the end of the page. */
static void html_provenance(const struct run *run, struct strbuf *sb)
{
	sb_puts(sb, "<h2 id=\"provenance\">Provenance</h2>\n");
	if (run->command_example) {
		sb_puts(sb, "<p>A point's command, as run (every one is in results.csv):</p>\n<pre>");
		html_escape(sb, run->command_example);
		sb_puts(sb, "</pre>\n");
	}
	char *env = read_text(run->dir, "env.txt");
	sb_puts(sb, "<h3>Environment (env.txt)</h3>\n<pre>");
	html_escape(sb, env ? env : "(no env.txt)");
	sb_puts(sb, "</pre>\n");
	free(env);
	sb_puts(sb, "<h3>Recipe (recipe.yaml)</h3>\n<pre>");
	html_escape(sb, run->recipe.text ? run->recipe.text : "");
	sb_puts(sb, "</pre>\n");
	time_t now = time(NULL);
	char stamp[64];
	strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
	sb_printf(sb, "<p class=\"caption\">Written by matrix %s on %s from ", PACKAGE_VERSION, stamp);
	html_escape(sb, run->dir);
	sb_puts(sb, ".</p>\n</body>\n</html>\n");
}

int report_html_write(const struct run *run, const struct report_tables *rt,
		      const struct plot_set *ps, const char *plotdir, const char *path)
{
	struct strbuf sb = {0};
	html_head(run, rt, &sb);
	sections(run, &sb, 1);
	html_figures(ps, plotdir, &sb);
	html_tables(rt, &sb);
	html_provenance(run, &sb);
	int rc = write_file_atomic(path, sb.buf, sb.len);
	sb_free(&sb);
	return rc;
}
