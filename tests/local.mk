# ---- runner tests
# container_images (about 190 s: two images built) first, as the longest
# of the cudasim fragment's are (tests/cudasim/local.mk)
TESTS += \
	tests/e2e/container_images.sh \
	tests/e2e/run_basic.sh \
	tests/e2e/run_failures.sh \
	tests/e2e/run_gpus.sh \
	tests/e2e/run_resume.sh \
	tests/e2e/run_signals.sh \
	tests/e2e/expand.sh \
	tests/e2e/usage.sh \
	tests/e2e/mistakes.sh \
	tests/e2e/overrides.sh \
	tests/e2e/export.sh \
	tests/e2e/provenance.sh \
	tests/e2e/hostile_gnuplot.sh \
	tests/e2e/hostile_point_files.sh \
	tests/e2e/long_timeout.sh \
	tests/e2e/hostile_escape.sh \
	tests/e2e/hostile_template.sh \
	tests/e2e/hostile_text.sh \
	tests/e2e/hostile_terminal.sh \
	tests/e2e/run_terminal.sh \
	tests/e2e/command_time.sh \
	tests/e2e/hostile_dirs.sh \
	tests/e2e/hostile_echo.sh \
	tests/e2e/hostile_markdown.sh \
	tests/e2e/hostile_cells.sh \
	tests/e2e/run_point.sh \
	tests/e2e/status.sh \
	tests/e2e/node_types.sh \
	tests/e2e/slurm_run.sh \
	tests/e2e/slurm_limits.sh \
	tests/e2e/slurm_cancel.sh \
	tests/e2e/container_docker.sh \
	tests/e2e/container_podman.sh \
	tests/e2e/container_rootless.sh \
	tests/e2e/dry_run_images.sh \
	tests/e2e/study_recipes.sh \
	tests/e2e/version.sh \
	tests/e2e/recipes_by_name.sh \
	tests/e2e/completion.sh \
	tests/e2e/completion_zsh.sh
EXTRA_DIST += tests/setup tests/e2e/engine.sh tests/e2e/slurm_cluster tests/e2e/container_lib.sh tests/e2e/container_checks.sh $(filter tests/e2e/%.sh,$(TESTS))
EXTRA_DIST += containers/README.md containers/debootstrap-base.sh .dockerignore \
	containers/native/Containerfile containers/pytorch-debian/Containerfile containers/pytorch-pypi/Containerfile \
	containers/cuda-pypi/Containerfile
# the debootstrap base image's tarball, kept across test runs (make clean keeps it)
distclean-local: distclean-container-cache
distclean-container-cache:
	rm -rf tests/container-cache
.PHONY: distclean-container-cache
check_PROGRAMS += tests/unit/plan/test_grid tests/unit/plan/test_design tests/unit/run/test_store
tests_unit_plan_test_grid_LDADD = matrix/libmatrix.a $(YAML_LIBS) $(CSV_LIBS) $(LIBM)
tests_unit_plan_test_design_LDADD = matrix/libmatrix.a $(YAML_LIBS) $(CSV_LIBS) $(LIBM)
tests_unit_run_test_store_LDADD = matrix/libmatrix.a $(YAML_LIBS) $(CSV_LIBS) $(LIBM)
TESTS += tests/unit/plan/test_grid tests/unit/plan/test_design tests/unit/run/test_store
BENCHES += tests/bench/runner_overhead.sh tests/bench/expand_count.sh
EXTRA_DIST += tests/bench/runner_overhead.sh tests/bench/expand_count.sh
EXTRA_DIST += tests/unit/t.h tests/unit/model_build.h

# ---- engine graph passes (CPU-only rewriting; the CUDA backend relies on them)
check_PROGRAMS += tests/unit/test_precision
tests_unit_test_precision_SOURCES = tests/unit/test_precision.c \
	engine/graph.c engine/passes.c engine/mem.c \
	engine/models/models.c engine/models/layers.c engine/models/mnist_cnn.c \
	engine/models/resnet.c engine/models/bert.c
tests_unit_test_precision_LDADD = $(LIBM)
TESTS += tests/unit/test_precision

# ---- the CUDA backend's GEMM descriptions (engine/cuda/gemm_view.h), checked on the host
check_PROGRAMS += tests/unit/test_gemm_view
tests_unit_test_gemm_view_SOURCES = tests/unit/test_gemm_view.c engine/cuda/gemm_view.h
tests_unit_test_gemm_view_LDADD = $(LIBM)
TESTS += tests/unit/test_gemm_view
# ---- the text form of a cuDNN engine config in the plan cache (engine/cuda/dg_engine.h)
check_PROGRAMS += tests/unit/test_dg_engine
tests_unit_test_dg_engine_SOURCES = tests/unit/test_dg_engine.c engine/cuda/dg_engine.h
TESTS += tests/unit/test_dg_engine
# ---- BatchNorm statistics from the convolution (engine/cuda/bnstats.h): knob, pairing, sums check
check_PROGRAMS += tests/unit/test_bnstats
tests_unit_test_bnstats_SOURCES = tests/unit/test_bnstats.c engine/cuda/bnstats.h engine/knobs.c engine/knobs.h \
	engine/graph.c engine/passes.c engine/mem.c \
	engine/models/models.c engine/models/layers.c engine/models/mnist_cnn.c \
	engine/models/resnet.c engine/models/bert.c
tests_unit_test_bnstats_LDADD = $(LIBM)
TESTS += tests/unit/test_bnstats
check_PROGRAMS += tests/unit/test_saved
tests_unit_test_saved_SOURCES = tests/unit/test_saved.c \
	engine/graph.c engine/passes.c engine/mem.c \
	engine/models/models.c engine/models/layers.c engine/models/mnist_cnn.c \
	engine/models/resnet.c engine/models/bert.c
tests_unit_test_saved_LDADD = $(LIBM)
TESTS += tests/unit/test_saved
# the flash form of attention: the pass and the CPU backend's two forms
check_PROGRAMS += tests/unit/test_flash
tests_unit_test_flash_SOURCES = tests/unit/test_flash.c \
	engine/graph.c engine/passes.c engine/mem.c engine/comm.c engine/comm_shm.c engine/knobs.c \
	engine/cpu/backend_cpu.c engine/cpu/pool.c engine/cpu/gemm.c engine/cpu/conv.c engine/cpu/ops.c \
	engine/models/models.c engine/models/layers.c engine/models/mnist_cnn.c \
	engine/models/resnet.c engine/models/bert.c
tests_unit_test_flash_CFLAGS = $(AM_CFLAGS) $(BLAS_CFLAGS) $(ENGINE_ARCH_CFLAGS)
tests_unit_test_flash_LDADD = $(BLAS_LIBS) $(LIBM) $(PTHREAD_LIBS)
TESTS += tests/unit/test_flash

# a BatchNorm's ReLU backward folded into its backward: the pass and the CPU backend's fused op
check_PROGRAMS += tests/unit/test_bnrelu
tests_unit_test_bnrelu_SOURCES = tests/unit/test_bnrelu.c \
	engine/graph.c engine/passes.c engine/mem.c engine/comm.c engine/comm_shm.c engine/knobs.c \
	engine/cpu/backend_cpu.c engine/cpu/pool.c engine/cpu/gemm.c engine/cpu/conv.c engine/cpu/ops.c \
	engine/models/models.c engine/models/layers.c engine/models/mnist_cnn.c \
	engine/models/resnet.c engine/models/bert.c
tests_unit_test_bnrelu_CFLAGS = $(AM_CFLAGS) $(BLAS_CFLAGS) $(ENGINE_ARCH_CFLAGS)
tests_unit_test_bnrelu_LDADD = $(BLAS_LIBS) $(LIBM) $(PTHREAD_LIBS)
TESTS += tests/unit/test_bnrelu

# ---- --data's pinned upload, host side (engine/data.c): the staging ring's order (issue 18, item 1)
check_PROGRAMS += tests/unit/test_data_ring
tests_unit_test_data_ring_SOURCES = tests/unit/test_data_ring.c engine/data.c engine/data.h engine/measure.c engine/mem.c \
	engine/graph.c
tests_unit_test_data_ring_LDADD = $(ZLIB_LIBS) $(LIBM)
TESTS += tests/unit/test_data_ring

# ---- the engine's stopping rule and interval (engine/measure.c): no CI met below 6 samples
check_PROGRAMS += tests/unit/test_measure
tests_unit_test_measure_SOURCES = tests/unit/test_measure.c engine/measure.c engine/measure.h
tests_unit_test_measure_LDADD = $(LIBM)
TESTS += tests/unit/test_measure

# ---- the engine's persistent plan cache (engine/plancache.c): files, staleness, concurrent writers
check_PROGRAMS += tests/unit/test_plancache
tests_unit_test_plancache_SOURCES = tests/unit/test_plancache.c engine/plancache.c engine/plancache.h
TESTS += tests/unit/test_plancache

# ---- matrix-engine's command line (engine/flags.c): --NAME VALUE and --NAME=VALUE alike (issue 21)
# ---- the engine's MATRIX_ENGINE_* knobs (engine/knobs.c): values, refusals and their messages, the record's list
check_PROGRAMS += tests/unit/test_knobs
tests_unit_test_knobs_SOURCES = tests/unit/test_knobs.c engine/knobs.c engine/knobs.h
TESTS += tests/unit/test_knobs

check_PROGRAMS += tests/unit/test_flags
tests_unit_test_flags_SOURCES = tests/unit/test_flags.c engine/flags.c engine/flags.h
tests_unit_test_flags_LDADD = $(LIBM)
TESTS += tests/unit/test_flags

# ---- fuzzing (issue 22): libFuzzer harnesses for the recipe loader, for
# results.csv -> report tables (export, compare, merge), for the store a
# resumed run opens and for the engine's plan cache files, built with clang apart from the rest (every
# source instrumented): `make fuzz` builds them, `make fuzz-run` runs each for
# FUZZ_SECONDS (default 60) from its seed corpus. .ci/run runs them when clang
# and libFuzzer are installed.
FUZZ_CC = clang
FUZZ_SECONDS = 60
FUZZ_FLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I$(top_builddir) -I$(top_srcdir)/matrix -I$(top_srcdir) \
	-DMATRIX_SRCDIR='"$(abs_top_srcdir)"' -DMATRIX_PKGDATADIR='"$(pkgdatadir)"' -DMATRIX_BINDIR='"$(bindir)"' \
	-DMATRIX_SRC_PLOTS='"$(abs_top_srcdir)/plots"' -DMATRIX_PLOTS_PKGDATADIR='"$(pkgdatadir)/plots"'
FUZZ_LIB_SRCS = $(filter %.c,$(matrix_libmatrix_a_SOURCES) $(matrix_libreport_a_SOURCES))
FUZZ_LIBS = $(YAML_LIBS) $(CSV_LIBS) $(LIBM)
EXTRA_DIST += tests/fuzz/fuzz_recipe.c tests/fuzz/fuzz_results.c tests/fuzz/fuzz_plancache.c tests/fuzz/fuzz_store.c \
	tests/fuzz/fuzz_run_recipe.h \
	tests/fuzz/corpus
# The library sources are compiled once into tests/fuzz/obj/ (each with the
# harnesses' flags) and linked into each harness: compiling them into each
# harness anew took about 65 s of CI's fuzzing pass, one source at a time.
FUZZ_OBJ = tests/fuzz/obj
FUZZ_HDRS = $(wildcard $(top_srcdir)/matrix/*.h $(top_srcdir)/matrix/*/*.h) config.h
FUZZ_LIB_OBJS = $(FUZZ_LIB_SRCS:%.c=$(FUZZ_OBJ)/%.o)
$(FUZZ_OBJ)/%.o: $(top_srcdir)/%.c $(FUZZ_HDRS)
	@$(MKDIR_P) $(@D)
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_FLAGS) -c -o $@ $<
tests/fuzz/fuzz_recipe: $(top_srcdir)/tests/fuzz/fuzz_recipe.c $(FUZZ_LIB_OBJS)
	$(AM_V_GEN)$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(top_srcdir)/tests/fuzz/fuzz_recipe.c $(FUZZ_LIB_OBJS) $(FUZZ_LIBS)
# (with `matrix compare` and `matrix export`, which read the same file)
FUZZ_RESULTS_SRCS = matrix/report/cmd_compare.c matrix/report/cmd_export.c
FUZZ_RESULTS_OBJS = $(FUZZ_RESULTS_SRCS:%.c=$(FUZZ_OBJ)/%.o)
tests/fuzz/fuzz_results: $(top_srcdir)/tests/fuzz/fuzz_results.c $(top_srcdir)/tests/fuzz/fuzz_run_recipe.h $(FUZZ_LIB_OBJS) $(FUZZ_RESULTS_OBJS)
	$(AM_V_GEN)$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(top_srcdir)/tests/fuzz/fuzz_results.c $(FUZZ_LIB_OBJS) \
	  $(FUZZ_RESULTS_OBJS) $(FUZZ_LIBS)
# the run's store resumed: results.csv and a task's row file (run/store.c)
tests/fuzz/fuzz_store: $(top_srcdir)/tests/fuzz/fuzz_store.c $(top_srcdir)/tests/fuzz/fuzz_run_recipe.h $(FUZZ_LIB_OBJS)
	$(AM_V_GEN)$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(top_srcdir)/tests/fuzz/fuzz_store.c $(FUZZ_LIB_OBJS) $(FUZZ_LIBS)
# the engine's plan cache reader (engine/plancache.c, a file any earlier run wrote)
tests/fuzz/fuzz_plancache: $(top_srcdir)/tests/fuzz/fuzz_plancache.c $(top_srcdir)/engine/plancache.c $(top_srcdir)/engine/plancache.h
	$(AM_V_GEN)$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $(top_srcdir)/tests/fuzz/fuzz_plancache.c
fuzz: tests/fuzz/fuzz_recipe tests/fuzz/fuzz_results tests/fuzz/fuzz_store tests/fuzz/fuzz_plancache
fuzz-run: fuzz
	@for f in recipe results store plancache; do \
	  mkdir -p tests/fuzz/work/$$f; \
	  echo "== fuzz_$$f for $(FUZZ_SECONDS) s"; \
	  tests/fuzz/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 tests/fuzz/work/$$f $(top_srcdir)/tests/fuzz/corpus/$$f >tests/fuzz/work/$$f.log 2>&1 \
	    || { tail -n 60 tests/fuzz/work/$$f.log; exit 1; }; \
	  grep -E '^stat::number_of_executed_units|^Done' tests/fuzz/work/$$f.log | tr '\n' ' '; echo; \
	done
CLEANFILES += tests/fuzz/fuzz_recipe tests/fuzz/fuzz_results tests/fuzz/fuzz_store tests/fuzz/fuzz_plancache
clean-local: clean-fuzz-obj
clean-fuzz-obj:
	-rm -rf $(FUZZ_OBJ)
.PHONY: fuzz fuzz-run clean-fuzz-obj

# ---- the local launcher's host communicator (engine/comm_shm.c): collectives against a serial reference (issue 17)
check_PROGRAMS += tests/unit/test_comm_shm
tests_unit_test_comm_shm_SOURCES = tests/unit/test_comm_shm.c engine/comm_shm.c engine/comm.h
tests_unit_test_comm_shm_LDADD = $(LIBM)
TESTS += tests/unit/test_comm_shm
