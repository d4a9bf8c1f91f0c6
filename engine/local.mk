# engine/local.mk - the native benchmark engine (included by Makefile.am).

bin_PROGRAMS += engine/matrix-engine
engine_matrix_engine_SOURCES = \
	engine/main.c engine/engine.h engine/check.h engine/rng.h \
	engine/graph.c engine/graph.h \
	engine/passes.c engine/passes.h \
	engine/measure.c engine/measure.h \
	engine/mem.c engine/mem.h \
	engine/weights.c engine/weights.h \
	engine/backend.h \
	engine/cpu/backend_cpu.c engine/cpu/cpu.h \
	engine/cpu/pool.c engine/cpu/pool.h \
	engine/cpu/gemm.c engine/cpu/conv.c engine/cpu/ops.c \
	engine/models/models.c engine/models/models.h engine/models/layers.c \
	engine/models/mnist_cnn.c engine/models/resnet.c engine/models/bert.c
engine_matrix_engine_CFLAGS = $(AM_CFLAGS) $(BLAS_CFLAGS) -march=native -ftree-vectorize -fvect-cost-model=dynamic
engine_matrix_engine_LDADD = $(BLAS_LIBS) $(LIBM) $(PTHREAD_LIBS)

EXTRA_DIST += engine/NOTES.md

# ---- tests: contract (shell), reference checks against PyTorch (python) ----
TESTS += tests/engine/contract.sh
EXTRA_DIST += tests/engine/contract.sh tests/engine/mxw.py tests/engine/mnist_ref.py \
	tests/engine/resnet_ref.py tests/engine/bert_ref.py
if HAVE_TORCH
TESTS += tests/engine/mnist_ref.py tests/engine/resnet_ref.py tests/engine/bert_ref.py
endif

# ---- benchmark: native vs PyTorch on this machine (`make bench`) ----
BENCHES += tests/bench/cpu_vs_pytorch.sh
EXTRA_DIST += tests/bench/cpu_vs_pytorch.sh
