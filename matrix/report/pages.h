/* pages.h - the report's pages: the text of the quality and method sections
 * (report_quality.c), report.md and report.html (report_html.c). Above
 * tables.h and figures.h. */
#ifndef MATRIX_REPORT_PAGES_H
#define MATRIX_REPORT_PAGES_H

#include "figures.h"
#include "model.h"
#include "tables.h"

/* Text of a section: paragraphs and list items, rendered by each page. */
struct paras {
	size_t n;
	char **text;          /* plain text */
	int *item;            /* 1: a list item, 0: a paragraph */
};
void paras_free(struct paras *ps);
/* "Measurement quality": the summary, interval kinds, points to doubt. */
void report_quality_paras(const struct run *run, struct paras *ps);
/* "Uncertainty": how the intervals are computed, a worked example from
 * this run, how they propagate, the improvement formula, compare's rule. */
void report_method_paras(const struct run *run, struct paras *ps);
/* "Merged runs" (runs merged across machines): what the merge did and what
 * differs between the runs; no paragraph for a single run. */
void report_merge_paras(const struct run *run, struct paras *ps);

int report_markdown_write(const struct run *run, const struct report_tables *rt,
			  const struct plot_set *ps, const char *path);
int report_html_write(const struct run *run, const struct report_tables *rt,
		      const struct plot_set *ps, const char *plotdir, const char *path);

#endif
