# ---- the runner: matrix ---------------------------------------------------------
# matrix/ is one folder per stage of the data flow (see matrix/README.md):
# the shared base at the top (util, table, result), plan/, run/, report/ (report.mk).
noinst_LIBRARIES += matrix/libmatrix.a
matrix_libmatrix_a_SOURCES = \
	matrix/util.c matrix/util.h \
	matrix/table.c matrix/table.h \
	matrix/result.c matrix/result.h \
	matrix/plan/vocab.c matrix/plan/vocab.h \
	matrix/plan/recipe.c matrix/plan/recipe.h \
	matrix/plan/design.c matrix/plan/design.h \
	matrix/plan/grid.c matrix/plan/grid.h \
	matrix/plan/argv.c matrix/plan/argv.h \
	matrix/plan/catalog.c matrix/plan/catalog.h \
	matrix/run/store.c matrix/run/store.h \
	matrix/run/executor.h matrix/run/exec_local.c matrix/run/exec_container.c \
	matrix/run/images.c matrix/run/images.h \
	matrix/run/exec_slurm.h matrix/run/exec_slurm.c \
	matrix/run/noise.c matrix/run/noise.h \
	matrix/run/provenance.c matrix/run/provenance.h
matrix_libmatrix_a_CPPFLAGS = $(AM_CPPFLAGS) -DMATRIX_SRCDIR='"$(abs_top_srcdir)"' -DMATRIX_PKGDATADIR='"$(pkgdatadir)"' -DMATRIX_BINDIR='"$(bindir)"' \
	-DMATRIX_BUILDDIR='"$(abs_top_builddir)"'

bin_PROGRAMS += matrix/matrix
matrix_matrix_SOURCES = \
	matrix/main.c matrix/cmd.h \
	matrix/plan/cmd_expand.c matrix/plan/cmd_recipes.c \
	matrix/run/cmd_run.c matrix/run/progress.c matrix/run/progress.h \
	matrix/run/cmd_time.c \
	matrix/run/cmd_status.c \
	matrix/run/cmd_build.c
matrix_matrix_LDADD = matrix/libmatrix.a $(YAML_LIBS) $(CSV_LIBS) $(LIBM)

# ---- the layering of matrix/: which stage may include which (make check)
TESTS += tests/arch/layers.sh tests/arch/layers_fail.sh tests/arch/func_length.sh tests/arch/func_length_fail.sh
EXTRA_DIST += tests/arch/layers.sh tests/arch/layers_fail.sh tests/arch/func_length.sh tests/arch/func_length_fail.sh
