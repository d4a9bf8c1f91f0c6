# ---- runner tests
TESTS += \
	tests/e2e/run_basic.sh \
	tests/e2e/run_failures.sh \
	tests/e2e/run_gpus.sh \
	tests/e2e/run_resume.sh \
	tests/e2e/run_signals.sh \
	tests/e2e/expand.sh \
	tests/e2e/usage.sh \
	tests/e2e/mistakes.sh \
	tests/e2e/hostile_gnuplot.sh \
	tests/e2e/hostile_point_files.sh \
	tests/e2e/hostile_escape.sh \
	tests/e2e/hostile_template.sh \
	tests/e2e/hostile_text.sh \
	tests/e2e/hostile_terminal.sh \
	tests/e2e/hostile_dirs.sh
EXTRA_DIST += tests/setup tests/e2e/engine.sh $(filter tests/e2e/%.sh,$(TESTS))
check_PROGRAMS += tests/unit/plan/test_grid tests/unit/run/test_store
tests_unit_plan_test_grid_LDADD = matrix/libmatrix.a $(YAML_LIBS) $(CSV_LIBS) $(LIBM)
tests_unit_run_test_store_LDADD = matrix/libmatrix.a $(YAML_LIBS) $(CSV_LIBS) $(LIBM)
TESTS += tests/unit/plan/test_grid tests/unit/run/test_store
BENCHES += tests/bench/runner_overhead.sh tests/bench/expand_count.sh
EXTRA_DIST += tests/bench/runner_overhead.sh tests/bench/expand_count.sh
EXTRA_DIST += tests/unit/t.h

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
check_PROGRAMS += tests/unit/test_saved
tests_unit_test_saved_SOURCES = tests/unit/test_saved.c \
	engine/graph.c engine/passes.c engine/mem.c \
	engine/models/models.c engine/models/layers.c engine/models/mnist_cnn.c \
	engine/models/resnet.c engine/models/bert.c
tests_unit_test_saved_LDADD = $(LIBM)
TESTS += tests/unit/test_saved
