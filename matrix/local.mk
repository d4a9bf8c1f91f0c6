# ---- the runner: matrix ---------------------------------------------------------
noinst_LIBRARIES += matrix/libmatrix.a
matrix_libmatrix_a_SOURCES = \
	matrix/util.c matrix/util.h \
	matrix/vocab.c matrix/vocab.h \
	matrix/recipe.c matrix/recipe.h \
	matrix/grid.c matrix/grid.h \
	matrix/result.c matrix/result.h \
	matrix/store.c matrix/store.h \
	matrix/exec.c matrix/exec.h \
	matrix/argv.c matrix/argv.h \
	matrix/noise.c matrix/noise.h
matrix_libmatrix_a_CPPFLAGS = $(AM_CPPFLAGS) -DMATRIX_SRCDIR='"$(abs_top_srcdir)"' -DMATRIX_PKGDATADIR='"$(pkgdatadir)"' -DMATRIX_BINDIR='"$(bindir)"'

bin_PROGRAMS += matrix/matrix
matrix_matrix_SOURCES = \
	matrix/main.c matrix/cmd.h \
	matrix/cmd_expand.c \
	matrix/cmd_run.c
matrix_matrix_LDADD = matrix/libmatrix.a $(YAML_LIBS) $(CSV_LIBS) $(LIBM)
