/* facets.h - a figure's facets (report_facets.c): the cells it draws (the
 * recipe item's `where:` and `matrix report --where`), its panels (one per
 * combination of the panel factors' levels, on the same axes, drawn with
 * gnuplot's multiplot), and numeric axes for numeric factors. Above
 * model.h and plot.h; the figures (figures.h) use it. */
#ifndef MATRIX_REPORT_FACETS_H
#define MATRIX_REPORT_FACETS_H

#include <stddef.h>

#include "model.h"
#include "plot.h"

struct strbuf;

/* What one figure draws. */
struct facet_view {
	const struct run *run;
	size_t nwhere;
	const struct where_term **where;  /* the item's terms, then the command line's */
	size_t npf;                       /* panel factors */
	size_t pf[FACET_MAX_PANELS];
	size_t npanels;                   /* panels holding a drawn cell (1 without panel factors) */
	size_t *key;                      /* npanels keys (mixed radix over pf's levels), ascending */
	long *panel;                      /* ncells: the cell's panel, -1 when not drawn */
	size_t ndrawn;                    /* cells drawn */
};

/* The view of a figure: item's facets (may be NULL) with the command line's
 * cli (may be NULL): where terms of both; the item's panels, else cli's
 * panels unless one of them is a factor in avoid[0..navoid-1] (the
 * figure's own axes). */
void facet_view_build(struct facet_view *v, const struct run *run, const struct report_facet *item,
		      const struct report_facet *cli, const size_t *avoid, size_t navoid);
void facet_view_free(struct facet_view *v);
/* "precision = fp16, batch = 64": the levels of panel p, into sb. */
void facet_panel_label(const struct facet_view *v, size_t p, struct strbuf *sb);
/* " where precision = fp16 or fp32 and model = a" (" where" first), or
 * nothing without where terms; into sb. */
void facet_where_text(const struct facet_view *v, struct strbuf *sb);
/* ", one panel per model and precision", or nothing without panels. */
void facet_panels_text(const struct facet_view *v, struct strbuf *sb);
/* "_where_precision", "_by_version": what makes a figure's file name
 * differ from the same figure without facets; into sb. */
void facet_name_suffix(const struct facet_view *v, struct strbuf *sb);

/* A figure in panels: the plot bodies body[0..npanels-1] (each what
 * follows `plot`) laid out on one page. Appends to extra (the template's
 * EXTRA, just before its `plot`) the shared ranges yrange ("[1:100]" or
 * NULL) and, with more than one panel, the multiplot layout and the first
 * panel's settings; sets *plot to the first body followed by every other
 * panel's settings and plot command. title (the page's), ylabel and xlabel
 * (shown on the first column and last row only) are quoted; rot_bottom is
 * extra room under rotated tics (pixels); keychars the key's widest text.
 * *w and *h are the figure's size: grown for the panels. A NULL body is a
 * panel without points: its place is left empty with a note "LEVELS: no
 * points" (gnuplot cannot plot an empty data block); with one panel, or
 * when every body is NULL, the caller draws nothing. */
void facet_layout(const struct facet_view *v, char *const *body, const char *yrange, const char *title,
		  const char *xlabel, const char *ylabel, int rot_bottom, size_t keychars, struct strbuf *extra,
		  struct strbuf *plot, int *w, int *h);

/* Whether factor f is numeric: the vocabulary's integer factors (batch,
 * threads, gpus, seq_len) and any factor whose every level is an integer,
 * all different (levels such as 2.2 and 2.10 are versions: categories). On
 * 1, val[l] is level l's value (nlevels entries). */
int facet_numeric(const struct run *run, size_t f, double *val);
/* A numeric axis over values val[0..n-1]: log when they are all > 0 and
 * span more than 100x. */
int facet_log_axis(const double *val, size_t n);

#endif
