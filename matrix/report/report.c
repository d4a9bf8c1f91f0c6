/* report.c - report_write: the whole report of one run directory, from
 * recipe.yaml and results.csv to tables/, plots/, report.md and report.html.
 * Safe to re-run at any time, also while the run is going: every file is
 * replaced atomically. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "figures.h"
#include "model.h"
#include "pages.h"
#include "tables.h"
#include "util.h"

/* Write the report for an already loaded run; cli: the command line's
 * figure facets, or NULL. */
static int report_run(struct run *run, const struct report_facet *cli, FILE *err)
{
	char *tdir = xasprintf("%s/tables", run->dir);
	char *pdir = xasprintf("%s/plots", run->dir);
	struct report_tables rt;
	struct plot_set ps = {0};
	int rc = 0;
	if (mkdir_p(tdir, 0777) != 0 || mkdir_p(pdir, 0777) != 0) {
		fprintf(err, "matrix: unable to create '%s': %s\n", errno ? tdir : pdir, strerror(errno));
		free(tdir);
		free(pdir);
		return 2;
	}
	report_tables_build(run, &rt);
	for (size_t i = 0; i < rt.n; i++) {
		char *path = xasprintf("%s/%s.csv", tdir, rt.t[i]->name);
		if (rtable_write_csv(rt.t[i], path) != 0) {
			fprintf(err, "matrix: unable to write '%s': %s\n", path, strerror(errno));
			rc = 2;
		}
		free(path);
	}
	char *pp = xasprintf("%s/%s.csv", tdir, rt.per_point->name);
	if (rtable_write_csv(rt.per_point, pp) != 0) {
		fprintf(err, "matrix: unable to write '%s': %s\n", pp, strerror(errno));
		rc = 2;
	}
	free(pp);
	/* the per-point table whole, as the pages show their first rows of it */
	struct strbuf ppm = {0};
	sb_puts(&ppm, "# Points\n\n");
	md_escape(&ppm, rt.per_point->caption, 0);
	sb_puts(&ppm, "\n\n");
	rtable_markdown(rt.per_point, 0, &ppm);
	pp = xasprintf("%s/%s.md", tdir, rt.per_point->name);
	if (write_file_atomic(pp, ppm.buf, ppm.len) != 0) {
		fprintf(err, "matrix: unable to write '%s': %s\n", pp, strerror(errno));
		rc = 2;
	}
	free(pp);
	sb_free(&ppm);
	report_figures_build(run, &rt, pdir, cli, &ps, err);
	size_t undrawn = plot_run_all(&ps, pdir, err);
	char *md = xasprintf("%s/report.md", run->dir);
	char *html = xasprintf("%s/report.html", run->dir);
	if (report_markdown_write(run, &rt, &ps, md) != 0) {
		fprintf(err, "matrix: unable to write '%s': %s\n", md, strerror(errno));
		rc = 2;
	}
	if (report_html_write(run, &rt, &ps, pdir, html) != 0) {
		fprintf(err, "matrix: unable to write '%s': %s\n", html, strerror(errno));
		rc = 2;
	}
	if (rc == 0 && undrawn)
		rc = 1;
	free(md);
	free(html);
	plot_set_free(&ps);
	report_tables_free(&rt);
	free(tdir);
	free(pdir);
	return rc;
}

int report_write(const char *dir, FILE *err)
{
	return report_write_metric(dir, NULL, err);
}

int report_write_metric(const char *dir, const char *metric, FILE *err)
{
	struct report_opts o = {.metric = metric};
	return report_write_opts(dir, &o, err);
}

/* o's facets, resolved against the run's recipe, into cli. Returns 0, or
 * 2 after saying which is wrong. */
static int cli_facets(const struct run *run, const struct report_opts *o, struct report_facet *cli, FILE *err)
{
	char *why = NULL;
	for (size_t i = 0; i < o->nwhere; i++)
		if (recipe_facet_arg(&run->recipe, o->where[i], 0, cli, &why) != 0) {
			fprintf(err, "matrix: --where '%s': %s\n", o->where[i], why);
			free(why);
			return 2;
		}
	if (o->panels && recipe_facet_arg(&run->recipe, o->panels, 1, cli, &why) != 0) {
		fprintf(err, "matrix: --panels '%s': %s\n", o->panels, why);
		free(why);
		return 2;
	}
	return 0;
}

int report_write_opts(const char *dir, const struct report_opts *o, FILE *err)
{
	struct run run;
	struct report_facet cli = {0};
	if (run_load_notes(&run, dir, o->metric, err, o->quiet ? NULL : err) != 0)
		return 2;
	/* --quiet: of a merged directory's notes (what the merge did, what
	 * differs between the runs), only those that say a number may be wrong */
	for (size_t i = 0; o->quiet && i < run.nnotes; i++)
		if (strncmp(run.notes[i], "warning:", 8) == 0)
			fprintf(err, "matrix: %s\n", run.notes[i]);
	int rc = cli_facets(&run, o, &cli, err);
	if (rc == 0)
		rc = report_run(&run, o->nwhere || o->panels ? &cli : NULL, err);
	recipe_facet_free(&cli);
	run_free(&run);
	return rc;
}
