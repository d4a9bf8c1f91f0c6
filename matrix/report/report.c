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

/* Write the report for an already loaded run. */
static int report_run(struct run *run, FILE *err)
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
	report_figures_build(run, &rt, pdir, &ps, err);
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
	struct run run;
	if (run_load(&run, dir, metric, err) != 0)
		return 2;
	int rc = report_run(&run, err);
	run_free(&run);
	return rc;
}
