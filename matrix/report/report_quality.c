/* report_quality.c - the report's "Measurement quality" section (what in this
 * run's measurements deserves doubt) and its "Uncertainty" section (how every
 * interval of the report is computed, with a worked example on this run's own
 * numbers), as paragraphs and list items that report.md and report.html
 * render alike. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pages.h"
#include "stats.h"
#include "util.h"

/* Notes listed per kind at most. */
#define QUALITY_NOTES 40

static void add(struct paras *ps, int item, char *text)
{
	ps->text = xrealloc(ps->text, (ps->n + 1) * sizeof(char *));
	ps->item = xrealloc(ps->item, (ps->n + 1) * sizeof(int));
	ps->text[ps->n] = text;
	ps->item[ps->n] = item;
	ps->n++;
}

void paras_free(struct paras *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		free(ps->text[i]);
	free(ps->text);
	free(ps->item);
	memset(ps, 0, sizeof(*ps));
}

/* The notes whose text holds key, under a heading. */
static void notes(struct paras *ps, const struct quality *q, const char *key, const char *heading)
{
	size_t n = 0, shown = 0;
	for (size_t i = 0; i < q->nnotes; i++)
		n += strstr(q->notes[i].what, key) != NULL;
	if (!n)
		return;
	add(ps, 0, xasprintf("%s (%zu):", heading, n));
	for (size_t i = 0; i < q->nnotes && shown < QUALITY_NOTES; i++)
		if (strstr(q->notes[i].what, key)) {
			add(ps, 1, xasprintf("%s (%s): %s", q->notes[i].label, q->notes[i].id, q->notes[i].what));
			shown++;
		}
	if (shown < n)
		add(ps, 1, xasprintf("... and %zu more", n - shown));
}

void report_quality_paras(const struct run *run, struct paras *ps)
{
	const struct quality *q = &run->quality;
	struct strbuf sb = {0};
	quality_summary(q, &sb);
	add(ps, 0, xasprintf("%c%s.", sb.buf[0] - 'a' + 'A', sb.buf + 1));
	sb_free(&sb);
	size_t between = 0, within = 0, none = 0;
	for (size_t c = 0; c < run->cells.ncells; c++) {
		between += run->cells.kind[c] == CI_BETWEEN;
		within += run->cells.kind[c] == CI_WITHIN;
		none += run->cells.kind[c] == CI_NONE;
	}
	add(ps, 0, xasprintf("Intervals: %zu of %zu points measured in two or more fresh processes "
			     "(ci_kind between), %zu in one process (ci_kind within), %zu without an "
			     "interval.%s",
			     between, run->cells.ncells, within, none,
			     within ? " A within-process interval holds only the noise inside that "
				      "process, not the variation between fresh processes (often the "
				      "larger part): measure with repeat: 3 or more to see it."
				    : ""));
	notes(ps, q, "missed the CI target", "Points that missed the CI target (their median is less certain than the recipe asked)");
	notes(ps, q, "processes disagree", "Points whose repeats disagree beyond their within-process intervals");
	notes(ps, q, "a busy machine", "Points started while other work kept the machine busy (load average above the cores)");
	notes(ps, q, "oversubscribed", "Points that ran oversubscribed (more threads than cores at once)");
	notes(ps, q, "the GPU throttled", "Points during which the GPU throttled");
	notes(ps, q, "ran on the cpu, not the GPU", "Points of device auto that ran on the cpu although a GPU is present (its backend did not load)");
	notes(ps, q, "training diverged", "Points whose training diverged (the loss is not finite: their speed is not that of training the model)");
	if (q->ntypes > 1) {
		struct strbuf types = {0};
		for (size_t k = 0; k < q->ntypes; k++)
			sb_printf(&types, "%s%s (%zu rows)", k ? "; " : "", q->types[k], q->type_rows[k]);
		add(ps, 0, xasprintf("Node types: the measured rows ran on %zu kinds of node (GPU / CPU): %s.%s", q->ntypes,
				     types.buf,
				     q->nmixed ? " WARNING: the levels of these factors ran on different node types, so "
						 "their comparisons mix the hardware with the factor's effect (run them on "
						 "one node type, e.g. a partition or --constraint in executor.slurm.extra):"
					       : " Every factor's levels ran on the same node types."));
		sb_free(&types);
		for (size_t i = 0; i < q->nmixed; i++)
			add(ps, 1, xstrdup(q->mixed[i]));
	}
}

void report_merge_paras(const struct run *run, struct paras *ps)
{
	for (size_t i = 0; i < run->nnotes; i++)
		add(ps, i > 0, xstrdup(run->notes[i]));
}

void report_method_paras(const struct run *run, struct paras *ps)
{
	const struct metric *m = &run->metric;
	add(ps, 0, xasprintf(
	    "Every point runs in K fresh processes (the recipe's repeat: K = %u here). Each process "
	    "reports its median step and a 95%% interval of that median from its own samples (the "
	    "within-process interval: order statistics, seldom symmetric about the median; its half-width "
	    "here is its wider side on the log scale, so that it holds the whole interval). A point's value is the median of its K process values. Its "
	    "95%% interval is a Student t interval on the logarithms of the K values, "
	    "t(0.975, K-1) * sd / sqrt(K), widened while K < %d by the median within-process "
	    "half-width (added in quadrature: with few processes the spread between them is "
	    "itself uncertain) and recentred on the median (the distance between the median and the "
	    "mean of the logs is added to the half-width). With K = 1 the interval is the process's "
	    "own (ci_kind within): it leaves out the variation between processes.",
	    run->recipe.repeat, STAT_WIDEN_BELOW));
	/* the worked example: this run's first point with several processes */
	long ex = -1;
	for (size_t c = 0; c < run->cells.ncells && ex < 0; c++)
		if (run->cells.nrep[c] >= 2 && run->cells.rep[c])
			ex = (long)c;
	if (ex >= 0) {
		size_t c = (size_t)ex, k = run->cells.nrep[c];
		char n[7][32];
		struct strbuf sb = {0};
		double mean = 0, ss = 0;
		for (size_t i = 0; i < k; i++)
			mean += log(run->cells.rep[c][i]);
		mean /= (double)k;
		for (size_t i = 0; i < k; i++) {
			double d = log(run->cells.rep[c][i]) - mean;
			ss += d * d;
			sb_printf(&sb, "%s%s", i ? ", " : "", fmt_sig3(n[0], run->cells.rep[c][i] * m->scale));
		}
		double sd = sqrt(ss / (double)(k - 1)), t = stat_t975(k - 1);
		double v = run->cells.value[c] * m->scale, u = run->cells.u[c];
		struct strbuf lab = {0};
		run_cell_label(run, c, NULL, 0, " ", &lab);
		add(ps, 0, xasprintf(
		    "Worked example, point %s (%s): %zu processes gave %s %s; median %s %s; sd of the "
		    "logs %s, t(0.975, %zu) = %s, so t * sd / sqrt(%zu) = %s; with the widening "
		    "and recentring the half-width on the log scale is u = %s, and the interval is "
		    "%s * exp(-u) .. %s * exp(u) = %s .. %s %s (3 significant digits).",
		    run->cells.id[c], lab.buf ? lab.buf : "", k, sb.buf, m->unit, fmt_sig3(n[0], v), m->unit,
		    fmt_sig3(n[1], sd), k - 1, fmt_sig3(n[2], t), k, fmt_sig3(n[3], t * sd / sqrt((double)k)),
		    fmt_sig3(n[4], u), n[0], n[0], fmt_sig3(n[5], v * exp(-u)), fmt_sig3(n[6], v * exp(u)), m->unit));
		sb_free(&sb);
		sb_free(&lab);
	}
	add(ps, 0, xstrdup(
	    "Intervals propagate on the log scale over matched pairs (points equal in every other "
	    "factor): a pair's log gain has half-width sqrt(u_a^2 + u_b^2); a geometric mean over n "
	    "pairs has sqrt(sum of the pairs' squares) / n. The same holds for interactions, "
	    "improvements, best over baseline and matrix compare. Where a pair's point was measured "
	    "in one process (ci_kind within), whose interval leaves out the variation between "
	    "processes, a geometric mean's half-width is at least t(0.975, n-1) * sd / sqrt(n) of the "
	    "pairs' log gains (their scatter holds that variation), as matrix compare's is; a single "
	    "pair (best over baseline) has no scatter, and says so. A best point is chosen as the "
	    "largest of several noisy values, so its gain tends to be overstated; clear_winner says "
	    "whether it stands apart from the runner-up."));
	if (strcmp(m->name, "epoch_time") == 0)
		add(ps, 0, xasprintf(
		    "epoch_time is the time of one epoch, in seconds: the engine's epoch_s where the point "
		    "read real data (--data: the data set's steps per epoch times the median step; %zu rows), "
		    "else the recipe's dataset_size / throughput (dataset_size %.17g samples; %zu rows), its "
		    "interval from the throughput's (the reciprocal: the bounds swap).",
		    run->epoch_rows[1], run->recipe.dataset_size, run->epoch_rows[0]));
	add(ps, 0, xasprintf("The improvement formula, the same in every table: %s.", IMPROVEMENT_FORMULA));
	add(ps, 0, xstrdup(
	    "matrix compare calls a point faster or slower when the difference is significant and "
	    "at least --threshold (2% by default): significant by a two-sided Mann-Whitney U test at "
	    "5% over the process values when each side has 3 or more processes and the test can "
	    "reach 5% (3 against 5, 4 against 4 or more), else when the two points' intervals do "
	    "not overlap. With one process per side that rule ignores the variation between "
	    "processes, so (with 8 or more matched points) such a point must also lie beyond 1.96 "
	    "times the spread of all matched points' log gains (1.4826 MAD); it is still less "
	    "reliable than repeats. The geometric-mean gain's interval is the wider of the "
	    "propagated one and a t interval from the scatter of the matched log gains."));
}
