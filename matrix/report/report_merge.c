/* report_merge.c - runs made apart (other hosts, other GPUs) as one study.
 * `matrix merge A B --out M` copies each run into M/runs/N and names them in
 * M/merge.txt (merge_write); run_load(M), and `matrix report A B`, read them
 * through merge_load: the first run's recipe on the factors every run has,
 * each with the levels of all of them, plus a factor `machine` (the node each
 * row ran on, named by its GPU, else its CPU), and one table of every row.
 * What differs between the runs is said, never merged silently: factors not
 * every run has (their rows at other than one level are left out), report
 * items and baselines that do not carry over, the metric, and points
 * measured with different engine versions. The same measurement in two runs
 * (a run given twice, a copy of it) is refused. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"
#include "plan/vocab.h"
#include "quality.h"
#include "result.h"
#include "table.h"
#include "util.h"

#define MERGE_FACTOR "machine"
#define MERGE_SOURCE_COLUMN "merge_source"
#define MERGE_EXAMPLES 3 /* points named in a warning, the rest counted */

/* One run being merged. */
struct src {
	const char *dir;      /* where its files are */
	const char *name;     /* what messages call it (the directory given) */
	struct recipe r;
	int have_recipe;
	struct table t;
	long torn;            /* >= 0: its last line was torn */
	char *env;            /* env.txt, or NULL */
	long *col;            /* per factor of r: its column in t */
	long *map;            /* per factor of r: its index in the merged recipe, -1 dropped */
	long *keep;           /* per factor of r that is dropped: the level whose rows stay */
	char **machine;       /* per row of t: its machine level */
};

static void note(struct run *run, FILE *notes, char *text)
{
	run->notes = xrealloc(run->notes, (run->nnotes + 1) * sizeof(char *));
	run->notes[run->nnotes++] = text;
	if (notes)
		fprintf(notes, "matrix: %s\n", text);
}

/* The value of "key: value" on its own line of env.txt text, or the first
 * line under a "key:" line (env.txt's multi-line entries), allocated; NULL. */
static char *env_value(const char *env, const char *key)
{
	size_t k = strlen(key);
	for (const char *p = env; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, key, k) != 0 || p[k] != ':')
			continue;
		const char *v = p + k + 1;
		if (*v == '\n')
			v++; /* "cpu:\nAMD EPYC\n" */
		else if (*v == ' ')
			v++;
		size_t n = strcspn(v, "\n");
		return n ? xstrndup(v, n) : NULL;
	}
	return NULL;
}

/* Read a run directory's recipe.yaml, results.csv and env.txt into s.
 * Returns 0, or -1 after printing why to err. */
static int src_read(struct src *s, FILE *err)
{
	char *rpath = xasprintf("%s/recipe.yaml", s->dir), *cpath = xasprintf("%s/results.csv", s->dir);
	char *why = NULL;
	int rc = -1;
	if (access(rpath, R_OK) != 0) {
		char *problem = rundir_problem(s->dir);
		if (problem)
			error_to(err, "%s", problem);
		else
			fprintf(err, "matrix: '%s' is not a run directory (no recipe.yaml)\n", s->name);
		free(problem);
		goto out;
	}
	if (recipe_load(rpath, &s->r, err) != 0) {
		fprintf(err, "matrix: cannot merge '%s': its recipe.yaml does not load\n", s->name);
		goto out;
	}
	s->have_recipe = 1;
	if (table_read(cpath, &s->t, &s->torn, &why) != 0) {
		if (why)
			fprintf(err, "matrix: %s\n", why);
		else
			fprintf(err, "matrix: cannot merge '%s': %s: %s\n", s->name, cpath,
				errno == ENOENT ? "no results yet" : strerror(errno));
		free(why);
		goto out;
	}
	/* rows of an older matrix read as this version's, as run_load reads them */
	result_table_upgrade(&s->t);
	if (s->t.nrows == 0) {
		fprintf(err, "matrix: cannot merge '%s': results.csv has no rows\n", s->name);
		goto out;
	}
	if (table_column(&s->t, "id") < 0 || table_column(&s->t, "status") < 0) {
		fprintf(err, "matrix: '%s' lacks the id or status column\n", cpath);
		goto out;
	}
	s->col = xcalloc(s->r.nfactors + 1, sizeof(long));
	for (size_t f = 0; f < s->r.nfactors; f++)
		if ((s->col[f] = table_column(&s->t, s->r.factors[f].name)) < 0) {
			error_to(err, "'%s' has no column for factor '%s'", cpath, s->r.factors[f].name);
			goto out;
		}
	if (recipe_factor_index(&s->r, MERGE_FACTOR) >= 0) {
		error_to(err, "cannot merge '%s': its recipe has a factor '%s', the one a merge adds", s->name,
			 MERGE_FACTOR);
		goto out;
	}
	char *epath = xasprintf("%s/env.txt", s->dir), *ewhy = NULL;
	s->env = read_file_capped(epath, (size_t)4 << 20, 0, NULL, &ewhy); /* not a FIFO, not /dev/zero */
	free(ewhy);
	free(epath);
	rc = 0;
out:
	free(rpath);
	free(cpath);
	return rc;
}

static void src_free(struct src *s)
{
	if (s->have_recipe)
		recipe_free(&s->r);
	for (size_t i = 0; s->machine && i < s->t.nrows; i++)
		free(s->machine[i]);
	free(s->machine);
	table_free(&s->t);
	free(s->env);
	free(s->col);
	free(s->map);
	free(s->keep);
}

static long level_of(const struct factor *f, const char *level)
{
	for (size_t l = 0; l < f->nlevels; l++)
		if (strcmp(f->levels[l], level) == 0)
			return (long)l;
	return -1;
}

static void factor_add_level(struct factor *f, const char *level)
{
	f->levels = xrealloc(f->levels, (f->nlevels + 1) * sizeof(char *));
	f->level_marks = xrealloc(f->level_marks, (f->nlevels + 1) * sizeof(struct mark));
	f->levels[f->nlevels] = xstrdup(level);
	f->level_marks[f->nlevels] = (struct mark){0, 0};
	f->nlevels++;
}

/* Each row's machine: "GPU (node)", else "CPU (node)", else "node". The node
 * is the row's (the runner writes it: the host, or Slurm's node name), else
 * env.txt's host; the GPU the one any row of that node names (key gpu),
 * else env.txt's first GPU when the node is env.txt's host; the CPU the
 * row's (key cpu), else env.txt's. So every row of a node, CPU points
 * included, has one machine. */
static void src_machines(struct src *s, size_t si)
{
	char *host = s->env ? env_value(s->env, "host") : NULL;
	char *egpu = s->env ? env_value(s->env, "gpus") : NULL, *ecpu = s->env ? env_value(s->env, "cpu") : NULL;
	if (egpu)
		egpu[strcspn(egpu, ",")] = '\0'; /* nvidia-smi's "name, driver, memory" */
	size_t n = s->t.nrows;
	char **node = xcalloc(n + 1, sizeof(char *)), **gpu = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		node[i] = table_value(&s->t, i, "node");
		if (!node[i])
			node[i] = host ? xstrdup(host) : xasprintf("runs/%zu", si + 1);
		gpu[i] = table_value(&s->t, i, "gpu");
	}
	s->machine = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		const char *g = NULL;
		for (size_t j = 0; j < n && !g; j++)
			if (gpu[j] && strcmp(node[j], node[i]) == 0)
				g = gpu[j];
		if (!g && egpu && host && strcmp(host, node[i]) == 0)
			g = egpu;
		char *cpu = g ? NULL : table_value(&s->t, i, "cpu");
		const char *d = g ? g : cpu ? cpu : ecpu;
		s->machine[i] = d ? xasprintf("%s (%s)", d, node[i]) : xstrdup(node[i]);
		free(cpu);
	}
	for (size_t i = 0; i < n; i++) {
		free(node[i]);
		free(gpu[i]);
	}
	free(node);
	free(gpu);
	free(host);
	free(egpu);
	free(ecpu);
}

/* The factors not every run has: each dropped from the merged study, the
 * rows of a run that has it kept at one level (its baseline's, else its
 * first), said in a note. */
static void drop_factors(struct run *run, struct src *s, size_t n, FILE *notes)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t f = 0; f < s[i].r.nfactors; f++) {
			if (s[i].map[f] >= 0 || s[i].keep[f] >= 0)
				continue;
			const char *name = s[i].r.factors[f].name;
			struct strbuf sb = {0}, in = {0}, out = {0};
			size_t left = 0;
			for (size_t j = 0; j < n; j++) {
				long g = recipe_factor_index(&s[j].r, name);
				if (g < 0) {
					sb_printf(&out, "%s'%s'", out.len ? ", " : "", s[j].name);
					continue;
				}
				const struct factor *fa = &s[j].r.factors[g];
				long k = s[j].r.has_baseline && s[j].r.baseline.level[g] >= 0 ? s[j].r.baseline.level[g] : 0;
				s[j].keep[g] = k;
				size_t lj = 0;
				for (size_t r = 0; r < s[j].t.nrows; r++)
					lj += strcmp(s[j].t.rows[r].cell[s[j].col[g]], fa->levels[k]) != 0;
				left += lj;
				sb_printf(&in, "%s'%s' (", in.len ? "; " : "", s[j].name);
				for (size_t l = 0; l < fa->nlevels; l++)
					sb_printf(&in, "%s%s", l ? " " : "", fa->levels[l]);
				sb_printf(&in, "): its rows at %s=%s kept", name, fa->levels[k]);
				if (lj)
					sb_printf(&in, ", %zu at other levels left out", lj);
			}
			sb_printf(&sb, "factor '%s' is not in every run: it is in %s and not in %s; the merged "
				  "study has the factors the runs share, without it. %zu rows left out.",
				  name, in.buf, out.buf, left);
			note(run, notes, sb.buf);
			sb_free(&in);
			sb_free(&out);
		}
	}
}

/* Renumber facet f's factors by map (-1: not in the merged study) and widen
 * its where terms to the merged levels (oldn: each merged factor's level
 * count in the first run, whose levels come first; a level the other runs
 * added is not one the where named, so it is not drawn). Returns 0, or -1
 * (f freed) when f names a factor the merged study lacks. */
static int remap_facet(struct report_facet *f, const long *map, const struct recipe *r, const size_t *oldn)
{
	int ok = 1;
	for (size_t i = 0; i < f->nwhere; i++)
		ok = ok && map[f->where[i].factor] >= 0;
	for (size_t i = 0; i < f->npanels; i++)
		ok = ok && map[f->panels[i]] >= 0;
	if (!ok) {
		recipe_facet_free(f);
		return -1;
	}
	for (size_t i = 0; i < f->nwhere; i++) {
		size_t k = (size_t)map[f->where[i].factor], nl = r->factors[k].nlevels;
		f->where[i].factor = k;
		f->where[i].keep = xrealloc(f->where[i].keep, nl);
		memset(f->where[i].keep + oldn[k], 0, nl - oldn[k]);
	}
	for (size_t i = 0; i < f->npanels; i++)
		f->panels[i] = (size_t)map[f->panels[i]];
	return 0;
}

/* The scatter-like items v[0..*n-1] (scatter, normalised) on the merged
 * factors: those naming a factor the study lacks go, named in gone. */
static void remap_scatters(struct report_scatter *v, size_t *n, const char *what, const long *map,
			   const struct recipe *r, const size_t *oldn, struct strbuf *gone)
{
	size_t w = 0;
	for (size_t i = 0; i < *n; i++) {
		struct report_scatter sc = v[i];
		int ok = map[sc.x] >= 0 && (sc.color < 0 || map[sc.color] >= 0);
		if (!ok)
			recipe_facet_free(&sc.facet);
		if (!ok || remap_facet(&sc.facet, map, r, oldn) != 0) {
			sb_printf(gone, "%s%s %zu", gone->len ? ", " : "", what, i + 1);
			continue;
		}
		sc.x = map[sc.x];
		sc.color = sc.color >= 0 ? map[sc.color] : -1;
		v[w++] = sc;
	}
	*n = w;
}

/* The report items of the first recipe, on the merged factors (map: its
 * factor's index in the merged recipe, or -1; oldn as for remap_facet):
 * those naming a dropped factor go (said in a note), the rest are
 * renumbered; then a scatter and bars coloured by machine when it has
 * several levels. */
static void remap_report(struct run *run, const long *map, const size_t *oldn, size_t nold, const char *first,
			 FILE *notes)
{
	struct report_spec *rs = &run->recipe.report;
	const struct recipe *r = &run->recipe;
	struct strbuf gone = {0};
	remap_scatters(rs->scatter, &rs->nscatter, "scatter", map, r, oldn, &gone);
	remap_scatters(rs->normalised, &rs->nnormalised, "normalised", map, r, oldn, &gone);
	size_t w = 0;
	for (size_t i = 0; i < rs->nbars; i++) {
		struct report_bars b = rs->bars[i];
		int ok = map[b.x] >= 0 && (b.group < 0 || map[b.group] >= 0);
		if (!ok)
			recipe_facet_free(&b.facet);
		if (!ok || remap_facet(&b.facet, map, r, oldn) != 0) {
			sb_printf(&gone, "%sbars %zu", gone.len ? ", " : "", i + 1);
			continue;
		}
		b.x = map[b.x];
		b.group = b.group >= 0 ? map[b.group] : -1;
		rs->bars[w++] = b;
	}
	rs->nbars = w;
	w = 0;
	for (size_t i = 0; i < rs->nbest; i++) {
		if (remap_facet(&rs->best[i].facet, map, r, oldn) != 0)
			sb_printf(&gone, "%sbest %zu", gone.len ? ", " : "", i + 1);
		else
			rs->best[w++] = rs->best[i];
	}
	rs->nbest = w;
	w = 0;
	for (size_t i = 0; i < rs->nimprovements; i++) {
		struct report_improvement im = rs->improvements[i];
		int ok = map[im.factor] >= 0;
		for (size_t k = 0; k < im.nby; k++)
			ok = ok && map[im.by[k]] >= 0;
		if (!ok) {
			sb_printf(&gone, "%simprovements %zu", gone.len ? ", " : "", i + 1);
			free(im.by);
			continue;
		}
		im.factor = map[im.factor];
		for (size_t k = 0; k < im.nby; k++)
			im.by[k] = map[im.by[k]];
		rs->improvements[w++] = im;
	}
	rs->nimprovements = w;
	if (rs->effects_shown) { /* report.effects.factors: machine is shown too */
		unsigned char *shown = xcalloc(r->nfactors, 1);
		for (size_t f = 0; f < nold; f++)
			if (map[f] >= 0)
				shown[map[f]] = rs->effects_shown[f];
		shown[r->nfactors - 1] = 1;
		free(rs->effects_shown);
		rs->effects_shown = shown;
	}
	if (gone.len) {
		note(run, notes, xasprintf("report items of '%s' that name a factor not every run has are left "
					   "out: %s.", first, gone.buf));
		sb_free(&gone);
	}
	size_t m = r->nfactors - 1;
	if (r->factors[m].nlevels < 2)
		return;
	long x = -1;
	for (size_t f = 0; f < m && x < 0; f++)
		if (r->factors[f].nlevels > 1)
			x = (long)f;
	rs->scatter = xrealloc(rs->scatter, (rs->nscatter + 1) * sizeof(*rs->scatter));
	rs->scatter[rs->nscatter] = (struct report_scatter){.x = x >= 0 ? x : (long)m, .color = x >= 0 ? (long)m : -1};
	rs->nscatter++;
	if (x >= 0) {
		rs->bars = xrealloc(rs->bars, (rs->nbars + 1) * sizeof(*rs->bars));
		rs->bars[rs->nbars] = (struct report_bars){.x = x, .group = (long)m};
		rs->nbars++;
	}
}

/* The merged recipe in run->recipe: the first run's, its factors replaced
 * by the shared ones (levels of every run, the first's order first) and
 * machine (levels: machines, nm of them). Frees what it drops of s[0].r. */
static void merge_recipe(struct run *run, struct src *s, size_t n, char **machines, size_t nm, FILE *notes)
{
	struct recipe *r0 = &s[0].r;
	size_t nf = 0;
	for (size_t f = 0; f < r0->nfactors; f++)
		nf += s[0].map[f] >= 0;
	struct factor *fs = xcalloc(nf + 1, sizeof(struct factor));
	long *base = xcalloc(nf + 1, sizeof(long));
	size_t *oldn = xcalloc(nf + 1, sizeof(size_t)), nold = r0->nfactors;
	for (size_t f = 0; f < r0->nfactors; f++) {
		struct factor *fa = &r0->factors[f];
		long k = s[0].map[f];
		if (k < 0) {
			free(fa->name);
			for (size_t l = 0; l < fa->nlevels; l++)
				free(fa->levels[l]);
			free(fa->levels);
			free(fa->level_marks);
			continue;
		}
		fs[k] = *fa;
		oldn[k] = fa->nlevels;
		/* without a baseline, every factor but the workload's (model, task,
		 * batch, seq_len) is a setting at its first level (set_references);
		 * machine is never one */
		base[k] = r0->has_baseline ? r0->baseline.level[f] : vocab_is_workload(fa->name) ? -1 : 0;
		for (size_t i = 1; i < n; i++) {
			const struct factor *o = &s[i].r.factors[recipe_factor_index(&s[i].r, fa->name)];
			for (size_t l = 0; l < o->nlevels; l++)
				if (level_of(&fs[k], o->levels[l]) < 0)
					factor_add_level(&fs[k], o->levels[l]);
		}
	}
	fs[nf] = (struct factor){.name = xstrdup(MERGE_FACTOR), .mark = {0, 0}};
	for (size_t i = 0; i < nm; i++)
		factor_add_level(&fs[nf], machines[i]);
	base[nf] = -1;
	free(r0->factors);
	free(r0->baseline.level);
	r0->factors = fs;
	r0->nfactors = nf + 1;
	r0->baseline.level = base;
	r0->has_baseline = 1; /* machine is free: the best configuration is per machine */
	for (size_t i = 0; i < r0->nexcludes; i++) {
		for (size_t j = 0; j < r0->excludes[i].nterms; j++)
			free(r0->excludes[i].terms[j].match);
		free(r0->excludes[i].terms);
	}
	free(r0->excludes);
	r0->excludes = NULL;
	r0->nexcludes = 0; /* the merged study's points are the rows it has */
	r0->profile = 0;   /* profiles/ID.csv stay with each run: one id is a point on every machine */
	int design = r0->design.given;
	for (size_t j = 0; design && j < r0->design.k; j++) {
		long k = s[0].map[r0->design.factor[j]];
		design = k >= 0 && fs[k].nlevels == 2;
		if (design)
			r0->design.factor[j] = (size_t)k;
	}
	if (r0->design.given && !design) {
		memset(&r0->design, 0, sizeof(r0->design));
		note(run, notes, xasprintf("'%s' has a design: its factors do not all have the same two levels in "
					   "every run, so the merged study is analysed as the points it has",
					   s[0].name));
	}
	for (size_t i = 1; i < n; i++)
		if (s[i].r.repeat > r0->repeat)
			r0->repeat = s[i].r.repeat;
	/* run->recipe takes s[0]'s: the struct moves, s[0] keeps its map */
	run->recipe = *r0;
	memset(r0, 0, sizeof(*r0));
	s[0].have_recipe = 0;
	remap_report(run, s[0].map, oldn, nold, s[0].name, notes);
	free(oldn);
}

/* What the runs' recipes say differently that the merge cannot keep: their
 * names, metrics and baselines (the first run's hold). */
static void compare_recipes(struct run *run, struct src *s, size_t n, FILE *notes)
{
	const struct recipe *r0 = &s[0].r;
	for (size_t i = 1; i < n; i++) {
		const struct recipe *ri = &s[i].r;
		if (strcmp(ri->name, r0->name) != 0)
			note(run, notes, xasprintf("'%s' is a run of recipe '%s', '%s' of '%s': the merged study is "
						   "named after the first", s[i].name, ri->name, s[0].name, r0->name));
		if (strcmp(ri->report.metric, r0->report.metric) != 0)
			note(run, notes, xasprintf("'%s' reports %s, '%s' %s: the merged study reports %s (--metric "
						   "NAME chooses)", s[i].name, ri->report.metric, s[0].name,
						   r0->report.metric, r0->report.metric));
		struct strbuf sb = {0};
		for (size_t f = 0; f < r0->nfactors; f++) {
			long g = recipe_factor_index(ri, r0->factors[f].name);
			if (g < 0 || s[0].map[f] < 0)
				continue;
			const char *a = r0->has_baseline && r0->baseline.level[f] >= 0
					? r0->factors[f].levels[r0->baseline.level[f]] : "(free)";
			const char *b = ri->has_baseline && ri->baseline.level[g] >= 0
					? ri->factors[g].levels[ri->baseline.level[g]] : "(free)";
			if (strcmp(a, b) != 0)
				sb_printf(&sb, "%s%s: %s in '%s', %s in '%s'", sb.len ? "; " : "", r0->factors[f].name,
					  a, s[0].name, b, s[i].name);
		}
		if (sb.len) {
			note(run, notes, xasprintf("the baselines differ (%s): the merged study takes the first's",
						   sb.buf));
			sb_free(&sb);
		}
		/* a point's processes from the runs are pooled: measured alike? */
		const struct measure *ma = &r0->measure, *mb = &ri->measure;
		struct strbuf ms = {0};
		if (ma->warmup_s != mb->warmup_s || ma->warmup_iters != mb->warmup_iters)
			sb_printf(&ms, "%swarmup", ms.len ? ", " : "");
		if (ma->min_time_s != mb->min_time_s)
			sb_printf(&ms, "%smin_time %gs / %gs", ms.len ? ", " : "", ma->min_time_s, mb->min_time_s);
		if (ma->max_time_s != mb->max_time_s)
			sb_printf(&ms, "%smax_time %gs / %gs", ms.len ? ", " : "", ma->max_time_s, mb->max_time_s);
		if (ma->rel_ci != mb->rel_ci)
			sb_printf(&ms, "%srel_ci %g / %g", ms.len ? ", " : "", ma->rel_ci, mb->rel_ci);
		if (ms.len) {
			note(run, notes, xasprintf("'%s' and '%s' measured differently (%s): a point's processes from "
						   "both are pooled as alike", s[0].name, s[i].name, ms.buf));
			sb_free(&ms);
		}
	}
}

/* A row's engine and its version(s), "native 0.1.0", "pytorch torch 2.6.0"
 * (allocated; "" when it names none). */
static char *row_version(const struct table *t, size_t r)
{
	static const char *const keys[] = {"engine", "engine_version", "torch_version", "onnxruntime_version"};
	static const char *const shown[] = {"", "", "torch ", "onnxruntime "};
	struct strbuf sb = {0};
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		char *v = table_value(t, r, keys[k]);
		if (v)
			sb_printf(&sb, "%s%s%s", sb.len ? " " : "", shown[k], v);
		free(v);
	}
	return sb.buf ? sb.buf : xstrdup("");
}

struct vrow {
	char *point;          /* the shared factors' levels, "model=a batch=1" */
	char *version;
	const char *machine;
	const char *source;
};

static int cmp_vrow(const void *a, const void *b)
{
	const struct vrow *x = a, *y = b;
	int c = strcmp(x->point, y->point);
	return c ? c : strcmp(x->version, y->version);
}

/* Warn about the points (the shared factors' levels, any machine) whose ok
 * rows name different engine versions: their repeats, or the differences
 * between their machines, mix versions. t is the merged table, nf the
 * shared factors (the merged recipe's but machine). */
static void check_versions(struct run *run, const struct table *t, size_t nf, FILE *notes)
{
	const struct recipe *r = &run->recipe;
	long st = table_column(t, "status"), mc = table_column(t, MERGE_FACTOR);
	long sc = table_column(t, MERGE_SOURCE_COLUMN);
	struct vrow *v = xcalloc(t->nrows + 1, sizeof(*v));
	size_t nv = 0;
	for (size_t i = 0; i < t->nrows; i++) {
		if (strcmp(t->rows[i].cell[st], "ok") != 0)
			continue;
		struct strbuf p = {0};
		for (size_t f = 0; f < nf; f++)
			sb_printf(&p, "%s%s=%s", f ? " " : "", r->factors[f].name,
				  t->rows[i].cell[table_column(t, r->factors[f].name)]);
		v[nv].point = p.buf ? p.buf : xstrdup("");
		v[nv].version = row_version(t, i);
		v[nv].machine = t->rows[i].cell[mc];
		v[nv].source = t->rows[i].cell[sc];
		nv++;
	}
	qsort(v, nv, sizeof(*v), cmp_vrow);
	size_t bad = 0;
	struct strbuf ex = {0};
	for (size_t i = 0, j; i < nv; i = j) {
		for (j = i + 1; j < nv && strcmp(v[j].point, v[i].point) == 0;)
			j++;
		if (strcmp(v[i].version, v[j - 1].version) == 0)
			continue;
		if (bad++ >= MERGE_EXAMPLES)
			continue;
		sb_printf(&ex, "%s%s:", ex.len ? "; " : " ", v[i].point);
		for (size_t k = i; k < j; k++)
			if (k == i || strcmp(v[k].version, v[k - 1].version) != 0 ||
			    strcmp(v[k].machine, v[k - 1].machine) != 0)
				sb_printf(&ex, "%s %s on %s (run %s)", k == i ? "" : ",",
					  *v[k].version ? v[k].version : "no version", v[k].machine, v[k].source);
	}
	if (bad)
		note(run, notes, xasprintf("warning: %zu point%s measured with different engine versions, so "
					   "%s repeats or the differences between machines mix versions:%s%s",
					   bad, bad == 1 ? " was" : "s were", bad == 1 ? "its" : "their", ex.buf,
					   bad > MERGE_EXAMPLES ? "; ..." : ""));
	sb_free(&ex);
	for (size_t i = 0; i < nv; i++) {
		free(v[i].point);
		free(v[i].version);
	}
	free(v);
}

/* A run's column that the merge makes itself: a results.csv received with
 * one is read without it. */
static int merge_column(const char *name)
{
	return strcmp(name, MERGE_FACTOR) == 0 || strcmp(name, MERGE_SOURCE_COLUMN) == 0;
}

/* The merged table: every column of every run (the first's order first),
 * then machine and merge_source (the run's number); the rows of each run
 * whose dropped factors are at their kept level. */
static void merge_table(struct src *s, size_t n, struct table *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < n; i++)
		for (size_t c = 0; c < s[i].t.ncols; c++)
			if (!merge_column(s[i].t.header[c]) && table_column(t, s[i].t.header[c]) < 0) {
				t->header = xrealloc(t->header, (t->ncols + 1) * sizeof(char *));
				t->header[t->ncols++] = xstrdup(s[i].t.header[c]);
			}
	t->header = xrealloc(t->header, (t->ncols + 2) * sizeof(char *));
	t->header[t->ncols++] = xstrdup(MERGE_FACTOR);
	t->header[t->ncols++] = xstrdup(MERGE_SOURCE_COLUMN);
	for (size_t i = 0; i < n; i++) {
		long *at = xmalloc((s[i].t.ncols + 1) * sizeof(long));
		for (size_t c = 0; c < s[i].t.ncols; c++)
			at[c] = merge_column(s[i].t.header[c]) ? -1 : table_column(t, s[i].t.header[c]);
		for (size_t r = 0; r < s[i].t.nrows; r++) {
			const struct row *in = &s[i].t.rows[r];
			size_t f;
			for (f = 0; f < s[i].r.nfactors; f++)
				if (s[i].map[f] < 0 &&
				    strcmp(in->cell[s[i].col[f]], s[i].r.factors[f].levels[s[i].keep[f]]) != 0)
					break;
			if (f < s[i].r.nfactors)
				continue;
			t->rows = xrealloc(t->rows, (t->nrows + 1) * sizeof(*t->rows));
			struct row *out = &t->rows[t->nrows++];
			out->n = t->ncols;
			out->cell = xcalloc(t->ncols, sizeof(char *));
			/* a name twice (a factor device or engine, then the result's
			 * column of that name): the first, the factor's, as
			 * table_column reads it everywhere (the second replaced the
			 * level, and leaked it) */
			for (size_t c = 0; c < s[i].t.ncols; c++)
				if (at[c] >= 0 && !out->cell[at[c]])
					out->cell[at[c]] = xstrdup(in->cell[c]);
			out->cell[t->ncols - 2] = xstrdup(s[i].machine[r]);
			out->cell[t->ncols - 1] = xasprintf("%zu", i + 1);
			for (size_t c = 0; c < t->ncols; c++)
				if (!out->cell[c])
					out->cell[c] = xstrdup("");
		}
		free(at);
	}
}

/* Which factors are shared (map), the machines in order of appearance. */
static void shared_factors(struct src *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		s[i].map = xmalloc((s[i].r.nfactors + 1) * sizeof(long));
		s[i].keep = xmalloc((s[i].r.nfactors + 1) * sizeof(long));
	}
	long next = 0;
	for (size_t f = 0; f < s[0].r.nfactors; f++) {
		size_t i;
		for (i = 1; i < n && recipe_factor_index(&s[i].r, s[0].r.factors[f].name) >= 0; i++)
			;
		s[0].map[f] = i == n ? next++ : -1;
		s[0].keep[f] = -1;
	}
	for (size_t i = 1; i < n; i++)
		for (size_t f = 0; f < s[i].r.nfactors; f++) {
			long g = recipe_factor_index(&s[0].r, s[i].r.factors[f].name);
			s[i].map[f] = g >= 0 ? s[0].map[g] : -1;
			s[i].keep[f] = -1;
		}
}

/* A row's measurement: the name of the result file its attempt wrote,
 * "ID.NONCE.result" (run/cmd_run.c: a random 64-bit nonce per attempt), as
 * its command cell gives it ("--result DIR/logs/..." or
 * "MATRIX_RESULT=DIR/logs/..."); 0 when the cell has none (copied into key:
 * 16 + 1 + 16 hex digits). */
static int row_measurement(const char *cmd, char key[34])
{
	for (const char *p = cmd ? strstr(cmd, "/logs/") : NULL; p; p = strstr(p + 1, "/logs/")) {
		const char *q = p + 6;
		if (strspn(q, "0123456789abcdef") == 16 && q[16] == '.' && strspn(q + 17, "0123456789abcdef") == 16 &&
		    strncmp(q + 33, ".result", 7) == 0) {
			memcpy(key, q, 33);
			key[33] = '\0';
			return 1;
		}
	}
	return 0;
}

struct meas {
	char key[34];
	size_t src;
};

static int meas_cmp(const void *a, const void *b)
{
	const struct meas *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->src > y->src) - (x->src < y->src);
}

/* The same measurement in two of the runs (a run given twice, or a copy of
 * one): its rows would count as more processes than ran, and compare would
 * test copies against copies. Refused, naming the runs. */
static int merge_duplicates(const struct src *s, size_t n, FILE *err)
{
	size_t nm = 0, cap = 0;
	struct meas *m = NULL;
	for (size_t i = 0; i < n; i++) {
		long c = table_column(&s[i].t, "command");
		for (size_t r = 0; c >= 0 && r < s[i].t.nrows; r++) {
			char key[34];
			if ((size_t)c >= s[i].t.rows[r].n || !row_measurement(s[i].t.rows[r].cell[c], key))
				continue;
			if (nm == cap)
				m = xrealloc(m, (cap = cap ? 2 * cap : 64) * sizeof(*m));
			memcpy(m[nm].key, key, sizeof(key));
			m[nm++].src = i;
		}
	}
	if (nm)
		qsort(m, nm, sizeof(*m), meas_cmp);
	int rc = 0;
	for (size_t i = 0; i + 1 < nm && rc == 0; i++) {
		if (strcmp(m[i].key, m[i + 1].key) != 0 || m[i].src == m[i + 1].src)
			continue;
		size_t a = m[i].src, b = m[i + 1].src, same = 0;
		for (size_t j = 0; j + 1 < nm; j++)
			same += strcmp(m[j].key, m[j + 1].key) == 0 && m[j].src == a && m[j + 1].src == b;
		fprintf(err,
			"matrix: '%s' (run %zu) and '%s' (run %zu) hold the same measurements (%zu row(s), e.g. "
			"logs/%s.result): a run given twice, or a copy of one. Merged, each would count as more "
			"processes than ran; give each run once\n",
			s[a].name, a + 1, s[b].name, b + 1, same, m[i].key);
		rc = -1;
	}
	free(m);
	return rc;
}

int merge_load(struct run *run, char *const *dirs, char *const *names, size_t n, struct table *t, FILE *err,
	       FILE *notes)
{
	struct src *s = xcalloc(n, sizeof(*s));
	char **machines = NULL;
	size_t nm = 0;
	int rc = -1;
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < n; i++) {
		s[i].dir = dirs[i];
		s[i].name = names[i];
		s[i].torn = -1;
		if (src_read(&s[i], err) != 0)
			goto out;
	}
	if (merge_duplicates(s, n, err) != 0)
		goto out;
	shared_factors(s, n);
	struct strbuf sb = {0};
	for (size_t i = 0; i < n; i++) {
		src_machines(&s[i], i);
		struct strbuf ms = {0};
		for (size_t r = 0; r < s[i].t.nrows; r++) {
			size_t k;
			for (k = 0; k < nm && strcmp(machines[k], s[i].machine[r]) != 0; k++)
				;
			if (k == nm) {
				machines = xrealloc(machines, (nm + 1) * sizeof(char *));
				machines[nm++] = xstrdup(s[i].machine[r]);
			}
			size_t seen = 0;
			for (size_t q = 0; q < r && !seen; q++)
				seen = strcmp(s[i].machine[q], s[i].machine[r]) == 0;
			if (!seen)
				sb_printf(&ms, "%s%s", ms.len ? ", " : "", s[i].machine[r]);
		}
		sb_printf(&sb, "%s'%s' as run %zu (%s, %zu rows, on %s)", i ? "; " : "", s[i].name, i + 1,
			  s[i].r.name, s[i].t.nrows, ms.buf ? ms.buf : "");
		sb_free(&ms);
		if (s[i].torn >= 0 && run->torn_offset < 0)
			run->torn_offset = s[i].torn;
	}
	note(run, notes, xasprintf("merged %zu runs into one study with the factor '%s' (%zu level%s): %s.", n,
				   MERGE_FACTOR, nm, nm == 1 ? "" : "s", sb.buf ? sb.buf : ""));
	sb_free(&sb);
	compare_recipes(run, s, n, notes);
	drop_factors(run, s, n, notes);
	merge_table(s, n, t);
	merge_recipe(run, s, n, machines, nm, notes);
	check_versions(run, t, run->recipe.nfactors - 1, notes);
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		src_free(&s[i]);
	free(s);
	for (size_t i = 0; i < nm; i++)
		free(machines[i]);
	free(machines);
	return rc;
}

/* ---- the merged directory ------------------------------------------------------- */

int merge_dir_sources(const char *dir, char ***subdirs, char ***names, size_t *n, FILE *err)
{
	char *path = xasprintf("%s/%s", dir, MERGE_FILE), *why = NULL;
	char *text = read_file_capped(path, (size_t)4 << 20, 0, NULL, &why);
	*subdirs = *names = NULL;
	*n = 0;
	if (!text) {
		if (why)
			fprintf(err, "matrix: unable to read '%s': it %s\n", path, why);
		else
			fprintf(err, "matrix: unable to read '%s': %s\n", path, strerror(errno));
		free(why);
		free(path);
		return -1;
	}
	int rc = 0;
	unsigned line = 0;
	for (char *p = text, *nl; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		line++;
		if (*p == '#' || *p == '\0')
			continue;
		/* "run: runs/N FROM" */
		char *sub = strncmp(p, "run: runs/", 10) == 0 ? p + 5 : NULL;
		size_t d = sub ? strspn(sub + 5, "0123456789") : 0;
		if (!sub || d == 0 || (sub[5 + d] != ' ' && sub[5 + d] != '\0')) {
			fprintf(err, "matrix: %s:%u: expected 'run: runs/N FROM', not '%.60s'\n", path, line, p);
			rc = -1;
			break;
		}
		*subdirs = xrealloc(*subdirs, (*n + 1) * sizeof(char *));
		*names = xrealloc(*names, (*n + 1) * sizeof(char *));
		(*subdirs)[*n] = xasprintf("%s/%.*s", dir, (int)(5 + d), sub);
		(*names)[*n] = xstrdup(sub[5 + d] ? sub + 6 + d : sub);
		(*n)++;
	}
	if (rc == 0 && *n == 0) {
		fprintf(err, "matrix: '%s' names no run\n", path);
		rc = -1;
	}
	for (size_t i = 0; rc != 0 && i < *n; i++) {
		free((*subdirs)[i]);
		free((*names)[i]);
	}
	if (rc != 0) {
		free(*subdirs);
		free(*names);
		*subdirs = *names = NULL;
		*n = 0;
	}
	free(text);
	free(path);
	return rc;
}

int merge_is_dir(const char *dir)
{
	char *path = xasprintf("%s/%s", dir, MERGE_FILE);
	int yes = access(path, F_OK) == 0;
	free(path);
	return yes;
}

/* Copy the regular file from to to (whole, atomically); a missing from is
 * no error when optional. Returns 0, or -1 after printing why. */
static int copy_file(const char *from, const char *to, int optional, FILE *err)
{
	size_t len;
	struct stat st;
	if (lstat(from, &st) != 0 || !S_ISREG(st.st_mode)) {
		if (optional)
			return 0;
		fprintf(err, "matrix: '%s' is not a file\n", from);
		return -1;
	}
	char *data = read_file(from, &len);
	if (!data) {
		fprintf(err, "matrix: unable to read '%s': %s\n", from, strerror(errno));
		return -1;
	}
	int rc = write_file_atomic(to, data, len);
	if (rc != 0)
		fprintf(err, "matrix: unable to write '%s': %s\n", to, strerror(errno));
	free(data);
	return rc;
}

/* Copy the regular files of directory from/sub (if any) into to/sub. */
static int copy_dir(const char *from, const char *to, const char *sub, FILE *err)
{
	char *src = xasprintf("%s/%s", from, sub), *dst = xasprintf("%s/%s", to, sub);
	DIR *d = opendir(src);
	int rc = 0;
	if (d && mkdir_p(dst, 0777) != 0) {
		fprintf(err, "matrix: unable to create '%s': %s\n", dst, strerror(errno));
		rc = -1;
	}
	for (struct dirent *e; d && rc == 0 && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char *a = xasprintf("%s/%s", src, e->d_name), *b = xasprintf("%s/%s", dst, e->d_name);
		rc = copy_file(a, b, 1, err);
		free(a);
		free(b);
	}
	if (d)
		closedir(d);
	free(src);
	free(dst);
	return rc;
}

/* out must be missing or an empty directory; created. */
static int make_out(const char *out, FILE *err)
{
	DIR *d = opendir(out);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)) && (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")))
			;
		closedir(d);
		if (e) {
			fprintf(err, "matrix: '%s' is not empty: a merge writes a new directory\n", out);
			return -1;
		}
	}
	if (mkdir_p(out, 0777) != 0) {
		fprintf(err, "matrix: unable to create '%s': %s\n", out, strerror(errno));
		return -1;
	}
	return 0;
}

int merge_write(const char *out, char *const *dirs, size_t n, FILE *err, FILE *notes)
{
	struct run check;
	struct table t;
	memset(&check, 0, sizeof(check));
	check.torn_offset = -1;
	int ok = merge_load(&check, dirs, dirs, n, &t, err, notes) == 0;
	table_free(&t);
	for (size_t i = 0; i < check.nnotes; i++)
		free(check.notes[i]);
	free(check.notes);
	if (ok)
		recipe_free(&check.recipe);
	if (!ok || make_out(out, err) != 0)
		return 2;
	struct strbuf list = {0}, env = {0};
	sb_printf(&list, "# %s: the runs this directory merges ('matrix merge'): each 'run: runs/N FROM', its\n"
			 "# copy and where it came from. 'matrix report DIR' reports them as one study.\n",
		  MERGE_FILE);
	sb_printf(&env, "merged runs (matrix merge), each run's env.txt:\n");
	int rc = 0;
	static const char *const files[] = {"recipe.yaml", "results.csv", "env.txt", "plan.csv"};
	for (size_t i = 0; i < n && rc == 0; i++) {
		char *sub = xasprintf("%s/runs/%zu", out, i + 1);
		char real[PATH_MAX];
		const char *from = realpath(dirs[i], real) ? real : dirs[i];
		char *clean = text_clean(from, strlen(from), 0);
		sb_printf(&list, "run: runs/%zu %s\n", i + 1, clean);
		if (mkdir_p(sub, 0777) != 0) {
			fprintf(err, "matrix: unable to create '%s': %s\n", sub, strerror(errno));
			rc = -1;
		}
		for (size_t f = 0; f < ARRAY_SIZE(files) && rc == 0; f++) {
			char *a = xasprintf("%s/%s", dirs[i], files[f]), *b = xasprintf("%s/%s", sub, files[f]);
			rc = copy_file(a, b, f >= 2, err);
			free(a);
			free(b);
		}
		if (rc == 0)
			rc = copy_dir(dirs[i], sub, "logs", err);
		if (rc == 0)
			rc = copy_dir(dirs[i], sub, "profiles", err);
		char *e = xasprintf("%s/env.txt", dirs[i]), *why = NULL;
		char *text = read_file_capped(e, (size_t)4 << 20, 0, NULL, &why);
		free(why);
		sb_printf(&env, "\n== run %zu: runs/%zu, from %s ==\n%s", i + 1, i + 1, clean,
			  text ? text : "(no env.txt)\n");
		free(text);
		free(e);
		free(clean);
		free(sub);
	}
	if (rc == 0) {
		char *p = xasprintf("%s/env.txt", out);
		if ((rc = write_file_atomic(p, env.buf, env.len)) != 0)
			fprintf(err, "matrix: unable to write '%s': %s\n", p, strerror(errno));
		free(p);
	}
	if (rc == 0) { /* last: a directory with merge.txt is whole */
		char *p = xasprintf("%s/%s", out, MERGE_FILE);
		if ((rc = write_file_atomic(p, list.buf, list.len)) != 0)
			fprintf(err, "matrix: unable to write '%s': %s\n", p, strerror(errno));
		free(p);
	}
	sb_free(&list);
	sb_free(&env);
	return rc == 0 ? 0 : 2;
}
