/* quality.c - how far a run's numbers can be trusted, from results.csv alone:
 * points that missed their CI target, repeats that disagree beyond their
 * within-process intervals, points run oversubscribed (concurrent points x
 * threads > cores), load average and clocks at start and end, GPU throttling.
 * Used by `matrix run` for its last line and by the report's "Measurement
 * quality" section. Older results.csv files without the named columns are
 * read from their `extra` cell. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quality.h"
#include "result.h"
#include "table.h"
#include "util.h"

char *table_value(const struct table *t, size_t r, const char *key)
{
	long c = table_column(t, key);
	if (c >= 0)
		return *t->rows[r].cell[c] ? xstrdup(t->rows[r].cell[c]) : NULL;
	long x = table_column(t, "extra");
	return x >= 0 ? result_extra_get(t->rows[r].cell[x], key) : NULL;
}

int table_number(const struct table *t, size_t r, const char *key, double *out)
{
	char *s = table_value(t, r, key);
	int rc = s && parse_double(s, out) == 0 ? 0 : -1;
	free(s);
	return rc;
}

static void range(double *lo, double *hi, double v)
{
	if (isnan(*lo) || v < *lo)
		*lo = v;
	if (isnan(*hi) || v > *hi)
		*hi = v;
}

static void note_as(struct quality *q, const struct table *t, size_t r, const struct recipe *rc,
		    const long *fcol, char *what, int of_row)
{
	q->notes = xrealloc(q->notes, (q->nnotes + 1) * sizeof(*q->notes));
	struct quality_note *n = &q->notes[q->nnotes++];
	const char *id = table_cell(t, r, "id");
	n->id = xstrdup(id ? id : "");
	struct strbuf sb = {0};
	for (size_t f = 0; f < rc->nfactors; f++)
		if (fcol[f] >= 0 && rc->factors[f].nlevels > 1)
			sb_printf(&sb, "%s%s=%s", sb.len ? " " : "", rc->factors[f].name, t->rows[r].cell[fcol[f]]);
	/* a note on one row names its repeat as matrix run's lines do: the
	 * repeats of a point read alike, "device=cpu threads=2" three times */
	const char *rep = of_row ? table_cell(t, r, "repeat") : NULL;
	if (rep && *rep && strcmp(rep, "0") != 0)
		sb_printf(&sb, "%srepeat=%s", sb.len ? " " : "", rep);
	n->label = sb.buf ? sb.buf : xstrdup("(all)");
	n->what = what;
}

/* A note on row r alone (its CI, its machine). */
static void note(struct quality *q, const struct table *t, size_t r, const struct recipe *rc, const long *fcol,
		 char *what)
{
	note_as(q, t, r, rc, fcol, what, 1);
}

/* Rows of one point (all its repeats) compare equal: same level of every factor. */
static const struct table *sort_t;
static const long *sort_fcol;
static size_t sort_nf;
static int same_point(size_t x, size_t y)
{
	for (size_t f = 0; f < sort_nf; f++)
		if (sort_fcol[f] >= 0 &&
		    strcmp(sort_t->rows[x].cell[sort_fcol[f]], sort_t->rows[y].cell[sort_fcol[f]]) != 0)
			return strcmp(sort_t->rows[x].cell[sort_fcol[f]], sort_t->rows[y].cell[sort_fcol[f]]);
	return 0;
}
static int cmp_row_point(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = same_point(x, y);
	return c ? c : (x > y) - (x < y);
}

/* Repeats of one point whose within-process intervals do not overlap: the
 * slowest process's interval lies wholly above the fastest's. */
static void scan_repeats(const struct table *t, const struct recipe *rc, const long *fcol,
			 const size_t *ok, size_t nok, struct quality *q)
{
	sort_t = t;
	sort_fcol = fcol;
	sort_nf = rc->nfactors;
	size_t *o = xmalloc((nok ? nok : 1) * sizeof(size_t));
	memcpy(o, ok, nok * sizeof(size_t));
	qsort(o, nok, sizeof(size_t), cmp_row_point);
	for (size_t i = 0; i < nok;) {
		size_t j = i;
		while (j < nok && same_point(o[j], o[i]) == 0)
			j++;
		if (j - i >= 2) {
			long fast = -1, slow = -1;
			double fv = NAN, sv = NAN, lo, hi, ms;
			int complete = 1;
			for (size_t k = i; k < j; k++) {
				if (table_number(t, o[k], "step_ms", &ms) || table_number(t, o[k], "step_ms_lo", &lo) ||
				    table_number(t, o[k], "step_ms_hi", &hi)) {
					complete = 0;
					break;
				}
				if (fast < 0 || ms < fv)
					fast = (long)o[k], fv = ms;
				if (slow < 0 || ms > sv)
					slow = (long)o[k], sv = ms;
			}
			double flo, fhi, slo, shi;
			if (complete && fast != slow && table_number(t, (size_t)fast, "step_ms_lo", &flo) == 0 &&
			    table_number(t, (size_t)fast, "step_ms_hi", &fhi) == 0 &&
			    table_number(t, (size_t)slow, "step_ms_lo", &slo) == 0 &&
			    table_number(t, (size_t)slow, "step_ms_hi", &shi) == 0 && slo > fhi) {
				q->disagree++;
				char n[7][32];
				note_as(q, t, (size_t)fast, rc, fcol,
				     xasprintf("%zu processes disagree beyond their within-process 95%% CIs: "
					       "step time %s ms (%s..%s ms) in one, %s ms (%s..%s ms) "
					       "in another, %s %% apart",
					       j - i, fmt_sig3(n[0], fv), fmt_sig3(n[1], flo), fmt_sig3(n[2], fhi),
					       fmt_sig3(n[3], sv), fmt_sig3(n[4], slo), fmt_sig3(n[5], shi),
					       fmt_sig3(n[6], 100.0 * (sv - fv) / fv)),
				     0);
			}
		}
		i = j;
	}
	free(o);
}

/* Row r against the CI target: counted as known and missed, noted when
 * missed. */
static void scan_ci(const struct table *t, size_t r, const struct recipe *rc, const long *fcol,
		    struct quality *q)
{
	double rel = NAN, met = NAN;
	table_number(t, r, "rel_ci", &rel);
	if (table_number(t, r, "ci_met", &met) != 0 && !isnan(rel) && q->rel_ci_target > 0)
		met = rel <= q->rel_ci_target;
	if (isnan(met))
		return;
	q->ci_known++;
	if (met == 0) {
		q->ci_missed++;
		double n = NAN;
		table_number(t, r, "samples", &n);
		note(q, t, r, rc, fcol,
		     isnan(rel) ? xasprintf("missed the CI target (rel_ci %g %%)", 100 * q->rel_ci_target)
				: xasprintf("missed the CI target: 95%% CI half-width %.2f %% of the "
					    "median > %g %%, %.0f samples",
					    100 * rel, 100 * q->rel_ci_target, n));
	}
}

/* Row r's machine: the load at start (noted when busy), the CPU and GPU
 * clocks, the GPU temperature, throttling (noted). */
static void scan_machine(const struct table *t, size_t r, const struct recipe *rc, const long *fcol,
			 struct quality *q)
{
	double v, cores_r;
	if (table_number(t, r, "load_start", &v) == 0) {
		range(&q->load_min, &q->load_max, v);
		if (table_number(t, r, "cores", &cores_r) == 0 && v > cores_r) {
			q->busy++;
			note(q, t, r, rc, fcol,
			     xasprintf("a busy machine: load average %.2f at start on %.0f cores", v, cores_r));
		}
	}
	if (table_number(t, r, "cpu_mhz_start", &v) == 0)
		range(&q->mhz_min, &q->mhz_max, v);
	if (table_number(t, r, "cpu_mhz_end", &v) == 0)
		range(&q->mhz_min, &q->mhz_max, v);
	if (table_number(t, r, "gpu_sm_mhz_start", &v) == 0)
		range(&q->gpu_mhz_min, &q->gpu_mhz_max, v);
	if (table_number(t, r, "gpu_sm_mhz_end", &v) == 0)
		range(&q->gpu_mhz_min, &q->gpu_mhz_max, v);
	double tmax = NAN;
	if (table_number(t, r, "gpu_temp_c_start", &v) == 0)
		tmax = v;
	if (table_number(t, r, "gpu_temp_c_end", &v) == 0 && (isnan(tmax) || v > tmax))
		tmax = v;
	if (!isnan(tmax) && (isnan(q->gpu_temp_max) || tmax > q->gpu_temp_max))
		q->gpu_temp_max = tmax;
	/* a training loss that is not finite: the steps ran on NaN / inf (an
	 * fp16 run skips its updates), not what training the model costs */
	const char *lkey = "loss"; /* the native engine's; the PyTorch engine's loss_last */
	char *loss = table_value(t, r, lkey);
	if (!loss || !*loss) {
		free(loss);
		loss = table_value(t, r, lkey = "loss_last");
	}
	if (loss && *loss && (table_number(t, r, lkey, &v) != 0 || !isfinite(v))) {
		q->diverged++;
		note(q, t, r, rc, fcol,
		     xasprintf("training diverged: loss %s after the timed steps, so they ran on non-finite "
			       "values (an fp16 run skips its updates): not the speed of training this model; "
			       "lower --lr or check the data",
			       loss));
	}
	free(loss);
	/* --device auto beside a GPU whose backend did not load: measured on the cpu */
	char *fb = table_value(t, r, "device_fallback");
	if (fb && *fb) {
		q->fell_back++;
		note(q, t, r, rc, fcol, xasprintf("ran on the cpu, not the GPU (device auto): %s", fb));
	}
	free(fb);
	char *thr = table_value(t, r, "gpu_throttle");
	if (thr && strcmp(thr, "none") != 0 && strcmp(thr, "0") != 0) {
		q->throttled++;
		note(q, t, r, rc, fcol, xasprintf("the GPU throttled while it ran (%s)", thr));
	}
	free(thr);
}

/* Row r run with more threads at once than cores: counted and noted. The
 * threads are the factor's level (factor c_threads, -1 when none), else the
 * row's threads column. */
static void scan_oversub(const struct table *t, size_t r, const struct recipe *rc, const long *fcol,
			 long c_threads, struct quality *q)
{
	double conc, cores, threads = 1;
	if (c_threads >= 0 && fcol[c_threads] >= 0)
		parse_double(t->rows[r].cell[fcol[c_threads]], &threads);
	else
		table_number(t, r, "threads", &threads);
	if (table_number(t, r, "concurrent", &conc) == 0 && table_number(t, r, "cores", &cores) == 0 &&
	    conc * threads > cores) {
		q->oversub++;
		note(q, t, r, rc, fcol,
		     xasprintf("oversubscribed: %.0f points at once x %.0f threads > %.0f cores", conc,
			       threads, cores));
	}
}

/* The node type of row r: its GPU's name and its CPU's, NULL when it names
 * neither (allocated). */
static char *node_type(const struct table *t, size_t r)
{
	char *gpu = table_value(t, r, "gpu"), *cpu = table_value(t, r, "cpu");
	char *type = gpu && cpu ? xasprintf("%s / %s", gpu, cpu) : gpu ? gpu : cpu;
	if (gpu && cpu) {
		free(gpu);
		free(cpu);
	}
	return type;
}

/* The node types of the ok rows, and each factor whose levels did not all
 * run on the same node types: its comparisons mix hardware. */
static void scan_node_types(const struct table *t, const struct recipe *rc, const long *fcol, const size_t *ok,
			    size_t nok, struct quality *q)
{
	long *type = xmalloc((nok ? nok : 1) * sizeof(long));
	for (size_t i = 0; i < nok; i++) {
		char *ty = node_type(t, ok[i]);
		type[i] = -1;
		for (size_t k = 0; ty && k < q->ntypes && type[i] < 0; k++)
			if (strcmp(q->types[k], ty) == 0)
				type[i] = (long)k;
		if (ty && type[i] < 0) {
			q->types = xrealloc(q->types, (q->ntypes + 1) * sizeof(char *));
			q->type_rows = xrealloc(q->type_rows, (q->ntypes + 1) * sizeof(size_t));
			q->types[q->ntypes] = ty;
			q->type_rows[q->ntypes] = 0;
			type[i] = (long)q->ntypes++;
		} else {
			free(ty);
		}
		if (type[i] >= 0)
			q->type_rows[type[i]]++;
	}
	for (size_t f = 0; q->ntypes > 1 && f < rc->nfactors; f++) {
		const struct factor *fa = &rc->factors[f];
		if (fcol[f] < 0 || fa->nlevels < 2)
			continue;
		/* seen[level * ntypes + type]: the level has rows of that type */
		unsigned char *seen = xcalloc(fa->nlevels * q->ntypes, 1);
		for (size_t i = 0; i < nok; i++)
			for (size_t l = 0; type[i] >= 0 && l < fa->nlevels; l++)
				if (strcmp(t->rows[ok[i]].cell[fcol[f]], fa->levels[l]) == 0)
					seen[l * q->ntypes + (size_t)type[i]] = 1;
		long first = -1;
		int differ = 0;
		for (size_t l = 0; l < fa->nlevels && !differ; l++) {
			if (!memchr(seen + l * q->ntypes, 1, q->ntypes))
				continue; /* no measured row */
			if (first < 0)
				first = (long)l;
			else
				differ = memcmp(seen + l * q->ntypes, seen + (size_t)first * q->ntypes, q->ntypes) != 0;
		}
		if (differ) {
			struct strbuf sb = {0};
			sb_printf(&sb, "%s:", fa->name);
			const char *sep = " ";
			for (size_t l = 0; l < fa->nlevels; l++) {
				int any = 0;
				for (size_t k = 0; k < q->ntypes; k++) {
					if (!seen[l * q->ntypes + k])
						continue;
					if (!any)
						sb_printf(&sb, "%s%s on ", sep, fa->levels[l]);
					sb_printf(&sb, "%s%s", any ? ", " : "", q->types[k]);
					any = 1;
					sep = "; ";
				}
			}
			q->mixed = xrealloc(q->mixed, (q->nmixed + 1) * sizeof(char *));
			q->mixed[q->nmixed++] = sb.buf;
		}
		free(seen);
	}
	free(type);
}

void quality_scan(const struct table *t, const struct recipe *rc, const unsigned char *keep,
		  struct quality *q)
{
	memset(q, 0, sizeof(*q));
	q->load_min = q->load_max = q->mhz_min = q->mhz_max = NAN;
	q->gpu_mhz_min = q->gpu_mhz_max = q->gpu_temp_max = NAN;
	q->rel_ci_target = rc->measure.rel_ci;
	long c_status = table_column(t, "status");
	if (c_status < 0)
		return;
	long *fcol = xmalloc((rc->nfactors ? rc->nfactors : 1) * sizeof(long));
	for (size_t f = 0; f < rc->nfactors; f++)
		fcol[f] = table_column(t, rc->factors[f].name);
	long c_threads = recipe_factor_index(rc, "threads");
	size_t *ok = xmalloc((t->nrows ? t->nrows : 1) * sizeof(size_t));
	size_t nok = 0;
	for (size_t r = 0; r < t->nrows; r++) {
		if (strcmp(t->rows[r].cell[c_status], "ok") != 0 || (keep && !keep[r]))
			continue;
		size_t f = 0;
		while (f < rc->nfactors && fcol[f] >= 0 && recipe_level_index(rc, f, t->rows[r].cell[fcol[f]]) >= 0)
			f++;
		if (f < rc->nfactors)
			continue;
		ok[nok++] = r;
		q->ok_rows++;
		scan_ci(t, r, rc, fcol, q);
		scan_machine(t, r, rc, fcol, q);
		scan_oversub(t, r, rc, fcol, c_threads, q);
	}
	scan_repeats(t, rc, fcol, ok, nok, q);
	scan_node_types(t, rc, fcol, ok, nok, q);
	free(ok);
	free(fcol);
}

void quality_summary(const struct quality *q, struct strbuf *sb)
{
	sb_printf(sb, "measurement quality: ");
	if (q->ci_known)
		sb_printf(sb, "%zu of %zu measured rows missed the CI target (rel_ci %g %%)", q->ci_missed,
			  q->ci_known, 100 * q->rel_ci_target);
	else
		sb_printf(sb, "no row says whether it met the CI target");
	sb_printf(sb, "; %zu point%s with repeats that disagree beyond their CIs", q->disagree, plural_s(q->disagree));
	if (q->oversub)
		sb_printf(sb, "; %zu row%s oversubscribed", q->oversub, plural_s(q->oversub));
	if (!isnan(q->load_min))
		sb_printf(sb, "; load average at start %.2f..%.2f", q->load_min, q->load_max);
	if (q->busy)
		sb_printf(sb, " (%zu row%s started with more load than cores)", q->busy, plural_s(q->busy));
	if (!isnan(q->mhz_min))
		sb_printf(sb, "; CPU clock %.0f..%.0f MHz", q->mhz_min, q->mhz_max);
	if (!isnan(q->gpu_mhz_min))
		sb_printf(sb, "; GPU SM clock %.0f..%.0f MHz", q->gpu_mhz_min, q->gpu_mhz_max);
	if (!isnan(q->gpu_temp_max))
		sb_printf(sb, "; GPU up to %.0f C", q->gpu_temp_max);
	if (q->throttled)
		sb_printf(sb, "; %zu row%s throttled", q->throttled, plural_s(q->throttled));
	if (q->diverged)
		sb_printf(sb, "; %zu row%s whose training diverged (loss not finite)", q->diverged, plural_s(q->diverged));
	if (q->fell_back)
		sb_printf(sb, "; %zu row%s of device auto ran on the cpu beside a GPU", q->fell_back, plural_s(q->fell_back));
	if (q->ntypes > 1)
		sb_printf(sb, "; rows ran on %zu node types", q->ntypes);
	for (size_t i = 0; i < q->nmixed; i++)
		sb_printf(sb, "%s%.*s", i ? ", " : " (the levels of ", (int)strcspn(q->mixed[i], ":"), q->mixed[i]);
	if (q->nmixed)
		sb_printf(sb, " ran on different ones: their comparisons mix hardware)");
}

void quality_free(struct quality *q)
{
	for (size_t i = 0; i < q->nnotes; i++) {
		free(q->notes[i].id);
		free(q->notes[i].label);
		free(q->notes[i].what);
	}
	free(q->notes);
	for (size_t i = 0; i < q->ntypes; i++)
		free(q->types[i]);
	free(q->types);
	free(q->type_rows);
	for (size_t i = 0; i < q->nmixed; i++)
		free(q->mixed[i]);
	free(q->mixed);
	memset(q, 0, sizeof(*q));
}
