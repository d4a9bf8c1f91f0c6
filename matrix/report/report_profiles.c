/* report_profiles.c - the per-op profile tables (profiles.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "profiles.h"
#include "table.h"
#include "util.h"

/* One point's profile. */
struct prof {
	char *label;          /* the point's factor levels (those that vary) */
	struct table t;       /* op,kind,calls,total_ms,mean_ms,pct_step,mem_bytes */
	long op, kind, calls, total, mean, pct;
};

static double cell_num(const struct table *t, size_t r, long c)
{
	const char *s = c >= 0 && (size_t)c < t->rows[r].n ? t->rows[r].cell[c] : NULL;
	return s && *s ? strtod(s, NULL) : 0.0;
}

static const char *cell_str(const struct table *t, size_t r, long c)
{
	const char *s = c >= 0 && (size_t)c < t->rows[r].n ? t->rows[r].cell[c] : NULL;
	return s ? s : "";
}

/* The label of row i of t (plan.csv, or a merged directory's results):
 * "f=v ..." over the factors with more than one level (every factor when
 * none has; a merged study's machine among them), " (run N)" for run N of
 * a merged directory; a point's repeats share it (they are one point). */
static char *point_label(const struct run *run, const struct table *t, size_t i, size_t source)
{
	const struct recipe *r = &run->recipe;
	struct strbuf sb = {0};
	sb_puts(&sb, "");
	int any = 0;
	for (size_t f = 0; f < r->nfactors; f++)
		any |= r->factors[f].nlevels > 1;
	for (size_t f = 0; f < r->nfactors; f++) {
		if (any && r->factors[f].nlevels < 2)
			continue;
		long c = table_column(t, r->factors[f].name);
		sb_printf(&sb, "%s%s=%s", sb.len ? " " : "", r->factors[f].name, cell_str(t, i, c));
	}
	if (source)
		sb_printf(&sb, " (run %zu)", source);
	return sb.buf;
}

/* Read dir/profiles/ID.csv into p; 0, or -1 when there is none usable. */
static int prof_read(const char *dir, const char *id, struct prof *p)
{
	char *path = xasprintf("%s/profiles/%s.csv", dir, id), *why = NULL;
	int rc = table_read(path, &p->t, NULL, &why);
	free(why);
	free(path);
	if (rc != 0)
		return -1; /* not profiled, or not run */
	p->op = table_column(&p->t, "op");
	p->kind = table_column(&p->t, "kind");
	p->calls = table_column(&p->t, "calls");
	p->total = table_column(&p->t, "total_ms");
	p->mean = table_column(&p->t, "mean_ms");
	p->pct = table_column(&p->t, "pct_step");
	if (p->op < 0 || p->total < 0 || p->pct < 0) {
		table_free(&p->t);
		return -1;
	}
	return 0;
}

static void prof_add(struct prof **ps, size_t *n, struct prof *p)
{
	*ps = xrealloc(*ps, (*n + 1) * sizeof(**ps));
	(*ps)[(*n)++] = *p;
}

/* The profiles of run N of merged directory run->dir (its copy sub) onto
 * *ps: the points of its plan, in order, that the merged study has (a row
 * of run->table from that run: the rows a dropped factor left out have
 * none), labelled from that row. */
static void load_merged_source(const struct run *run, const char *sub, size_t source, struct prof **ps,
			       size_t *n)
{
	const struct table *rt = &run->table;
	long rid = table_column(rt, "id"), rsrc = table_column(rt, "merge_source");
	char *path = xasprintf("%s/plan.csv", sub), *why = NULL, num[32];
	struct table plan;
	int rc = table_read(path, &plan, NULL, &why);
	free(why);
	free(path);
	if (rc != 0 || rid < 0 || rsrc < 0)
		return;
	snprintf(num, sizeof num, "%zu", source);
	long idc = table_column(&plan, "id");
	for (size_t i = 0; idc >= 0 && i < plan.nrows; i++) {
		const char *id = cell_str(&plan, i, idc);
		size_t r;
		for (r = 0; r < rt->nrows; r++)
			if (strcmp(cell_str(rt, r, rsrc), num) == 0 && strcmp(cell_str(rt, r, rid), id) == 0)
				break;
		struct prof p = {0};
		if (r == rt->nrows || prof_read(sub, id, &p) != 0)
			continue;
		p.label = point_label(run, rt, r, source);
		prof_add(ps, n, &p);
	}
	table_free(&plan);
}

/* The profiles of DIR's points, in plan order (a merged directory's run
 * after run, each from its copy runs/N); *n of them. */
static struct prof *load_profiles(const struct run *run, size_t *n)
{
	struct prof *ps = NULL;
	*n = 0;
	if (merge_is_dir(run->dir)) {
		char **subs, **names;
		size_t nsub;
		if (merge_dir_sources(run->dir, &subs, &names, &nsub, stderr) != 0)
			return NULL;
		for (size_t k = 0; k < nsub; k++) {
			load_merged_source(run, subs[k], k + 1, &ps, n);
			free(subs[k]);
			free(names[k]);
		}
		free(subs);
		free(names);
		return ps;
	}
	struct table plan;
	char *path = xasprintf("%s/plan.csv", run->dir), *why = NULL;
	int rc = table_read(path, &plan, NULL, &why);
	free(why);
	free(path);
	if (rc != 0)
		return NULL;
	long idc = table_column(&plan, "id");
	for (size_t i = 0; idc >= 0 && i < plan.nrows; i++) {
		struct prof p = {0};
		if (prof_read(run->dir, cell_str(&plan, i, idc), &p) != 0)
			continue;
		p.label = point_label(run, &plan, i, 0);
		prof_add(&ps, n, &p);
	}
	table_free(&plan);
	return ps;
}

/* An op of a point: the median over the point's processes that have it. */
struct pop {
	const char *op, *kind;  /* the processes' tables' cells */
	double calls, total, mean, pct;
	char text[4][40];       /* the four as shown: one process's cells as written */
};

/* A point's profile: its repeats (fresh processes, each with its own
 * profiles/ID.csv) merged, each op's numbers the median over them, so that
 * a point is one entry as in every other table (with repeat: 3 it was
 * three, labelled "#1" and "#2" after the first). */
struct pprof {
	const char *label;
	size_t nproc, nops;
	struct pop *ops;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median_of(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The op's row in p's table, or -1. */
static long prof_row(const struct prof *p, const char *op, const char *kind)
{
	for (size_t r = 0; r < p->t.nrows; r++)
		if (!strcmp(cell_str(&p->t, r, p->op), op) && !strcmp(cell_str(&p->t, r, p->kind), kind))
			return (long)r;
	return -1;
}

/* ps[0..n) grouped by label (first appearance first) into points. */
static struct pprof *merge_repeats(const struct prof *ps, size_t n, size_t *npp)
{
	struct pprof *pp = xcalloc(n ? n : 1, sizeof(*pp));
	size_t m = 0;
	double *v = xmalloc((n ? n : 1) * 4 * sizeof(double));
	for (size_t i = 0; i < n; i++) {
		size_t k;
		for (k = 0; k < i; k++)
			if (!strcmp(ps[k].label, ps[i].label))
				break;
		if (k < i)
			continue; /* a repeat of an earlier point: merged there */
		struct pprof *q = &pp[m++];
		q->label = ps[i].label;
		for (size_t j = i; j < n; j++)
			q->nproc += !strcmp(ps[j].label, ps[i].label);
		/* every op any of its processes has, in the first one's order */
		for (size_t j = i; j < n; j++) {
			if (strcmp(ps[j].label, ps[i].label))
				continue;
			for (size_t r = 0; r < ps[j].t.nrows; r++) {
				const char *op = cell_str(&ps[j].t, r, ps[j].op), *kind = cell_str(&ps[j].t, r, ps[j].kind);
				size_t e;
				for (e = 0; e < q->nops; e++)
					if (!strcmp(q->ops[e].op, op) && !strcmp(q->ops[e].kind, kind))
						break;
				if (e < q->nops)
					continue;
				size_t c = 0;
				for (size_t jj = i; jj < n; jj++) {
					long rr = strcmp(ps[jj].label, ps[i].label) ? -1 : prof_row(&ps[jj], op, kind);
					if (rr < 0)
						continue;
					v[c] = cell_num(&ps[jj].t, (size_t)rr, ps[jj].calls);
					v[n + c] = cell_num(&ps[jj].t, (size_t)rr, ps[jj].total);
					v[2 * n + c] = cell_num(&ps[jj].t, (size_t)rr, ps[jj].mean);
					v[3 * n + c] = cell_num(&ps[jj].t, (size_t)rr, ps[jj].pct);
					c++;
				}
				q->ops = xrealloc(q->ops, (q->nops + 1) * sizeof(*q->ops));
				struct pop *o = &q->ops[q->nops++];
				*o = (struct pop){op, kind, median_of(v, c), median_of(v + n, c),
						  median_of(v + 2 * n, c), median_of(v + 3 * n, c), {{0}}};
				const double med[4] = {o->calls, o->total, o->mean, o->pct};
				const long col[4] = {ps[j].calls, ps[j].total, ps[j].mean, ps[j].pct};
				for (int x = 0; x < 4; x++)
					if (c == 1)
						snprintf(o->text[x], sizeof o->text[x], "%s", cell_str(&ps[j].t, r, col[x]));
					else
						snprintf(o->text[x], sizeof o->text[x], "%.6g", med[x]);
			}
		}
	}
	free(v);
	*npp = m;
	return pp;
}

static const struct pprof *sort_prof;
static int by_total(const void *a, const void *b)
{
	double x = sort_prof->ops[*(const size_t *)a].total, y = sort_prof->ops[*(const size_t *)b].total;
	return (x < y) - (x > y);
}

static struct rtable *top_table(const struct pprof *ps, size_t n, int merged, size_t maxproc)
{
	static const char *const cols[] = {"point", "op", "kind", "calls", "total_ms", "mean_ms", "pct_step"};
	struct rtable *t = rtable_new("profile_top", "Per-op profile: the top ops of each point", 7, cols);
	t->caption = xasprintf("the %d ops with the most time in each profiled point (profiles/ID.csv%s: the "
			       "steps after the timed ones, each op timed)%s; pct_step: share of the step, percent",
			       PROFILES_TOP, merged ? ", of run N: runs/N/profiles/ID.csv" : "",
			       maxproc > 1 ? "; a point measured in several processes (repeat): each number the "
					     "median over its processes' profiles" : "");
	for (size_t k = 3; k < 7; k++) {
		t->align_right[k] = 1;
		t->sig[k] = k > 3; /* the times and shares, not the calls */
	}
	for (size_t i = 0; i < n; i++) {
		const struct pprof *p = &ps[i];
		size_t *ix = xmalloc((p->nops + 1) * sizeof(size_t));
		for (size_t r = 0; r < p->nops; r++)
			ix[r] = r;
		sort_prof = p;
		qsort(ix, p->nops, sizeof(size_t), by_total);
		for (size_t k = 0; k < p->nops && k < PROFILES_TOP; k++) {
			const struct pop *o = &p->ops[ix[k]];
			const char *row[7] = {p->label, o->op, o->kind, o->text[0], o->text[1], o->text[2], o->text[3]};
			rtable_add(t, (char *const *)row);
		}
		free(ix);
	}
	return t;
}

/* An op of the side-by-side table: its name, kind and share per point. */
struct side_op {
	const char *op, *kind;
	double *pct;          /* per point, -1: the point has no such op */
	double max;
};

static int by_max(const void *a, const void *b)
{
	const struct side_op *x = a, *y = b;
	return (x->max < y->max) - (x->max > y->max);
}

static struct rtable *side_table(const struct pprof *ps, size_t n, size_t maxproc)
{
	size_t np = n < PROFILES_SIDE ? n : PROFILES_SIDE, nops = 0;
	struct side_op *ops = NULL;
	for (size_t i = 0; i < np; i++)
		for (size_t r = 0; r < ps[i].nops; r++) {
			const char *op = ps[i].ops[r].op, *kind = ps[i].ops[r].kind;
			size_t k;
			for (k = 0; k < nops; k++)
				if (!strcmp(ops[k].op, op) && !strcmp(ops[k].kind, kind))
					break;
			if (k == nops) {
				ops = xrealloc(ops, (nops + 1) * sizeof(*ops));
				ops[nops] = (struct side_op){op, kind, xmalloc(np * sizeof(double)), 0};
				for (size_t j = 0; j < np; j++)
					ops[nops].pct[j] = -1;
				nops++;
			}
			double v = ps[i].ops[r].pct;
			ops[k].pct[i] = ops[k].pct[i] < 0 ? v : ops[k].pct[i] + v;
			if (ops[k].pct[i] > ops[k].max)
				ops[k].max = ops[k].pct[i];
		}
	qsort(ops, nops, sizeof(*ops), by_max);
	const char **cols = xmalloc((np + 2) * sizeof(char *));
	cols[0] = "op";
	cols[1] = "kind";
	for (size_t i = 0; i < np; i++)
		cols[2 + i] = ps[i].label;
	struct rtable *t = rtable_new("profile_side", "Per-op profile: the points side by side", np + 2, cols);
	t->caption = xasprintf("each op's share of the step (percent) in each of %s%zu profiled points%s, the %d "
			       "ops with the largest share in any; empty: the point has no such op",
			       np < n ? "the first " : "the ", np,
			       maxproc > 1 ? " (the median over a point's processes)" : "", PROFILES_SIDE_OPS);
	const char **row = xmalloc((np + 2) * sizeof(char *));
	char **num = xmalloc(np * sizeof(char *));
	for (size_t k = 0; k < nops && k < PROFILES_SIDE_OPS; k++) {
		row[0] = ops[k].op;
		row[1] = ops[k].kind;
		for (size_t i = 0; i < np; i++) {
			num[i] = ops[k].pct[i] < 0 ? xstrdup("") : xasprintf("%.4g", ops[k].pct[i]);
			row[2 + i] = num[i];
		}
		rtable_add(t, (char *const *)row);
		for (size_t i = 0; i < np; i++)
			free(num[i]);
	}
	for (size_t i = 0; i < np; i++)
		t->align_right[2 + i] = t->sig[2 + i] = 1;
	for (size_t k = 0; k < nops; k++)
		free(ops[k].pct);
	free(ops);
	free(num);
	free(row);
	free(cols);
	return t;
}

void profiles_tables(const struct run *run, struct rtable **top, struct rtable **side)
{
	size_t n, npp = 0, maxproc = 0;
	struct prof *ps = load_profiles(run, &n);
	struct pprof *pp = merge_repeats(ps, n, &npp);
	for (size_t i = 0; i < npp; i++)
		maxproc = pp[i].nproc > maxproc ? pp[i].nproc : maxproc;
	*top = *side = NULL;
	if (npp) {
		*top = top_table(pp, npp, merge_is_dir(run->dir), maxproc);
		*side = side_table(pp, npp, maxproc);
	}
	for (size_t i = 0; i < npp; i++)
		free(pp[i].ops);
	free(pp);
	for (size_t i = 0; i < n; i++) {
		free(ps[i].label);
		table_free(&ps[i].t);
	}
	free(ps);
}
