/* factorial.h - factorial effects of a two-level design (recipe `design:`):
 * main effects and two-factor interactions estimated as log contrasts over
 * the runs of the design (a fraction or the full factorial), with the
 * aliases of each, and their table and section in the report. Above
 * model.h and rtable.h; the tables and pages call it. */
#ifndef MATRIX_FACTORIAL_H
#define MATRIX_FACTORIAL_H

#include <stddef.h>
#include <stdint.h>

#include "cellset.h"
#include "model.h"
#include "plan/design.h"
#include "rtable.h"
#include "stats.h"
#include "util.h"

struct factorial_effect {
	uint32_t effect;      /* main effect (one bit) or two-factor interaction (two) */
	size_t nplus, nminus; /* cells on each side of the contrast */
	double gain;          /* how many times better the metric is on the + side (main effect:
	                       * the factor's second level; interaction: both factors at the same
	                       * level) than on the - side: exp of the difference of the mean logs,
	                       * NaN when not estimated */
	double u;             /* half-width of the 95% interval of log(gain), NaN unknown */
	size_t nalias;        /* effects aliased with it that involve at most two factors */
	uint32_t alias[DESIGN_MAX_K * DESIGN_MAX_K];
	int estimated;        /* 0: an interaction aliased with another main effect or two-factor
	                       * interaction (its contrast measures their sum: not estimated) */
};

/* Lenth's pseudo standard error (Lenth 1989) over the 2^(k-p) - 1 contrasts
 * of the design (one per alias class), for a design of at least 8 runs:
 * s0 = 1.5 median |c|, PSE = 1.5 median of the |c| < 2.5 s0, and the margin
 * of error t(0.975, (2^(k-p) - 1) / 3) * PSE on the log scale. It holds the
 * noise between runs (what the points' intervals leave out with one process
 * per point) on the assumption that most contrasts are noise. */
struct factorial_lenth {
	size_t ncontrasts;    /* 0: not computed (fewer than 8 runs, or a side empty) */
	double pse;           /* pseudo standard error of a contrast, log scale */
	double me;            /* margin of error (95%), log scale */
};

/* Every main effect, then every two-factor interaction, of the recipe's
 * design from the cells that are runs of the design. Main effects are
 * always estimated (in a resolution III fraction they carry their aliased
 * interactions, which the aliases name); an interaction only when nothing
 * of at most two factors is aliased with it. *nmissing receives the number
 * of runs of the design (crossed factors included, exclusions applied)
 * without a cell: with missing runs the contrasts are no longer orthogonal. */
struct factorial_effect *factorial_compute(const struct recipe *r, const struct cellset *cs, int higher_better,
					   size_t *n, size_t *nmissing);
void factorial_lenth(const struct recipe *r, const struct cellset *cs, struct factorial_lenth *lt);

/* The table "factorial" of the run's design (NULL when the recipe has no
 * design: key or its design has fewer than two factors). */
struct rtable *factorial_table(const struct run *run);
/* The report's "Design" section: the design's description (as `matrix
 * expand` prints it) as preformatted text. Nothing without a fraction. */
void factorial_section(const struct run *run, struct strbuf *sb, int html);

#endif
