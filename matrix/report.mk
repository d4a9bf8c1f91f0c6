# ---- reports: matrix report / matrix compare (sources added to matrix/matrix) ----
# The report code, in its levels from the bottom (matrix/README.md,
# "Dependencies"), is a library of its own so that it can carry the location
# of the gnuplot templates (-D below) and be linked into its unit tests.
noinst_LIBRARIES += matrix/libreport.a
matrix_libreport_a_SOURCES = \
	matrix/report/stats.h \
	matrix/report/stats.c \
	matrix/report/quality.h \
	matrix/report/quality.c \
	matrix/report/cellset.h \
	matrix/report/cellset.c \
	matrix/report/model.h \
	matrix/report/report_load.c \
	matrix/report/report_merge.c \
	matrix/report/effects.h \
	matrix/report/effects.c \
	matrix/report/rtable.h \
	matrix/report/report_table.c \
	matrix/report/factorial.h \
	matrix/report/factorial.c \
	matrix/report/profiles.h \
	matrix/report/report_profiles.c \
	matrix/report/tables.h \
	matrix/report/report_tables.c \
	matrix/report/plot.h \
	matrix/report/plot.c \
	matrix/report/facets.h \
	matrix/report/report_facets.c \
	matrix/report/figures.h \
	matrix/report/report_figures.c \
	matrix/report/pages.h \
	matrix/report/report_quality.c \
	matrix/report/report_html.c \
	matrix/report/report.h \
	matrix/report/report.c
matrix_libreport_a_CPPFLAGS = $(AM_CPPFLAGS) \
	-DMATRIX_SRC_PLOTS='"$(abs_top_srcdir)/plots"' \
	-DMATRIX_PLOTS_PKGDATADIR='"$(pkgdatadir)/plots"'

matrix_matrix_SOURCES += matrix/report/cmd_report.c matrix/report/cmd_compare.c matrix/report/cmd_export.c \
	matrix/report/cmd_merge.c
# libreport uses libmatrix: list libmatrix again after it for the static link
matrix_matrix_LDADD += matrix/libreport.a matrix/libmatrix.a $(YAML_LIBS) $(CSV_LIBS) $(LIBM)

# plots
plotsdir = $(pkgdatadir)/plots
dist_plots_DATA = \
	plots/style.gp \
	plots/scatter.gp \
	plots/bars.gp \
	plots/lines.gp \
	plots/scaling.gp \
	plots/effects.gp \
	plots/best.gp

# ---- report tests
check_PROGRAMS += tests/unit/report/test_effects
tests_unit_report_test_effects_LDADD = matrix/libreport.a matrix/libmatrix.a $(YAML_LIBS) $(CSV_LIBS) $(LIBM)
TESTS += tests/unit/report/test_effects
check_PROGRAMS += tests/unit/report/test_stats
tests_unit_report_test_stats_LDADD = matrix/libreport.a matrix/libmatrix.a $(YAML_LIBS) $(CSV_LIBS) $(LIBM)
TESTS += tests/unit/report/test_stats tests/stats/coverage.sh tests/stats/aa.sh tests/stats/run_noise.sh \
	tests/stats/null_effects.sh
EXTRA_DIST += tests/stats/coverage.sh tests/stats/null_effects.sh tests/stats/aa.sh tests/stats/lognormal.sh tests/stats/aa.yaml tests/stats/NOTES.md \
	tests/stats/run_noise.sh tests/stats/shift_engine.sh
TESTS += tests/report/report.sh tests/report/compare.sh tests/report/bad_input.sh tests/report/html.sh \
	tests/report/facets.sh tests/report/digits.sh tests/report/empty_items.sh tests/report/changed_recipe.sh \
	tests/report/ci_sides.sh tests/report/units.sh tests/report/whiskers.sh \
	tests/report/design.sh tests/report/metrics.sh tests/report/merge.sh tests/report/no_baseline.sh \
	tests/report/diverged.sh tests/report/ignored.sh tests/report/quality.sh tests/report/figure_axes.sh
CLEANFILES += tests/report/report-screenshot.png
EXTRA_DIST += \
	tests/report/report.sh \
	tests/report/compare.sh \
	tests/report/bad_input.sh \
	tests/report/html.sh \
	tests/report/facets.sh \
	tests/report/digits.sh \
	tests/report/empty_items.sh \
	tests/report/changed_recipe.sh \
	tests/report/ci_sides.sh \
	tests/report/whiskers.sh \
	tests/report/diverged.sh \
	tests/report/quality.sh \
	tests/report/figure_axes.sh \
	tests/report/ignored.sh \
	tests/report/units.sh \
	tests/report/engine.sh \
	tests/report/design.sh \
	tests/report/metrics.sh \
	tests/report/merge.sh \
	tests/report/no_baseline.sh \
	tests/report/design_engine.sh \
	tests/report/known.yaml.in \
	tests/report/golden/effects.csv \
	tests/report/golden/interactions.csv \
	tests/report/golden/improvements.csv \
	tests/report/golden/improvements_1.csv \
	tests/report/golden/best.csv \
	tests/report/golden/scaling.csv \
	tests/report/golden/failures.csv

# ---- report benchmark (make bench)
BENCHES += tests/bench/report_800.sh
EXTRA_DIST += tests/bench/report_800.sh
