# engine/local.mk - the native benchmark engine (included by Makefile.am).

bin_PROGRAMS += engine/matrix-engine
engine_matrix_engine_SOURCES = \
	engine/main.c engine/engine.h engine/check.h engine/rng.h \
	engine/flags.c engine/flags.h engine/knobs.c engine/knobs.h engine/record.c engine/record.h \
	engine/session.c engine/session.h \
	engine/comm.c engine/comm_shm.c engine/comm.h \
	engine/graph.c engine/graph.h \
	engine/passes.c engine/passes.h \
	engine/measure.c engine/measure.h \
	engine/mem.c engine/mem.h \
	engine/weights.c engine/weights.h engine/outfile.c engine/outfile.h \
	engine/data.c engine/data.h \
	engine/profile.c engine/profile.h \
	engine/plancache.c engine/plancache.h \
	engine/backend.h \
	engine/cpu/backend_cpu.c engine/cpu/cpu.h \
	engine/cpu/pool.c engine/cpu/pool.h \
	engine/cpu/gemm.c engine/cpu/conv.c engine/cpu/ops.c \
	engine/models/models.c engine/models/models.h engine/models/layers.c \
	engine/models/mnist_cnn.c engine/models/resnet.c engine/models/bert.c
engine_matrix_engine_CPPFLAGS = $(AM_CPPFLAGS) -DMATRIX_PKGLIBDIR='"$(pkglibdir)"'
engine_matrix_engine_CFLAGS = $(AM_CFLAGS) $(BLAS_CFLAGS) $(ENGINE_ARCH_CFLAGS)
# -rdynamic: the CUDA module resolves graph_numel & co. from the engine
engine_matrix_engine_LDFLAGS = -rdynamic
engine_matrix_engine_LDADD = $(BLAS_LIBS) $(ZLIB_LIBS) $(LIBM) $(PTHREAD_LIBS)

# ---- the CUDA backend: a module (dlopen), so CPU points never load CUDA ----
CUDA_MODULE_SRCS = engine/cuda/backend_cuda.cu engine/cuda/kernels.cu \
	engine/cuda/ops.cu engine/cuda/conv.cu engine/cuda/gemm.cu engine/cuda/gemm_check.cu \
	engine/cuda/sdpa.cu engine/cuda/comm_nccl.cu engine/cuda/plans.cu engine/cuda/dnngraph.cu \
	engine/cuda/convgraph.cu
EXTRA_DIST += $(CUDA_MODULE_SRCS) engine/cuda/cuda.h engine/cuda/vec.cuh engine/cuda/gemm_view.h engine/cuda/PERF.md \
	engine/cuda/dnngraph.h engine/cuda/dg_engine.h engine/cuda/convgraph.h engine/cuda/bnstats.h
SUFFIXES += .cu
NVCCFLAGS = -std=c++17 -O3 -Xcompiler -fPIC,-Wall -Wno-deprecated-declarations \
	$(CUDA_GENCODE) -I$(top_builddir) -I$(top_srcdir) $(CUDA_CFLAGS)
.cu.o:
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(NVCC) $(NVCCFLAGS) -c -o $@ $<
if HAVE_CUDA
CUDA_MODULE_OBJS = $(CUDA_MODULE_SRCS:.cu=.o)
$(CUDA_MODULE_OBJS): $(top_srcdir)/engine/cuda/cuda.h $(top_srcdir)/engine/cuda/vec.cuh $(top_srcdir)/engine/cuda/gemm_view.h $(top_srcdir)/engine/graph.h \
	$(top_srcdir)/engine/cuda/dnngraph.h $(top_srcdir)/engine/cuda/dg_engine.h $(top_srcdir)/engine/cuda/convgraph.h $(top_srcdir)/engine/cuda/bnstats.h \
	$(top_srcdir)/engine/plancache.h $(top_srcdir)/engine/knobs.h $(top_srcdir)/engine/backend.h $(top_srcdir)/engine/engine.h $(top_srcdir)/engine/comm.h $(top_srcdir)/engine/data.h config.h
enginemodule_DATA += engine/matrix-engine-cuda.so
engine/matrix-engine-cuda.so: $(CUDA_MODULE_OBJS)
	$(AM_V_GEN)$(CC) -shared -o $@ $(CUDA_MODULE_OBJS) $(CUDA_LIBS) -lstdc++ $(LIBM)
CLEANFILES += $(CUDA_MODULE_OBJS) engine/matrix-engine-cuda.so
endif

# ---- the MPI communicator of data-parallel ranks: a module (dlopen) too ----
EXTRA_DIST += engine/comm_mpi.c
if HAVE_MPI
enginemodule_DATA += engine/matrix-engine-mpi.so
engine/matrix-engine-mpi.so: engine/comm_mpi.c engine/comm.h engine/measure.h config.h
	$(AM_V_GEN)$(CC) $(AM_CFLAGS) $(CFLAGS) -fPIC -shared -I$(top_builddir) -I$(top_srcdir) \
		$(MPI_CFLAGS) -o $@ $(top_srcdir)/engine/comm_mpi.c $(MPI_LIBS)
CLEANFILES += engine/matrix-engine-mpi.so
endif

EXTRA_DIST += engine/NOTES.md

# ---- tests: contract (shell), reference checks against PyTorch (python) ----
TESTS += tests/engine/contract.sh tests/engine/cuda_nogpu.sh tests/engine/ddp_cpu.sh tests/engine/launch.sh tests/engine/data.sh tests/engine/profile.sh \
	tests/engine/knobs.sh tests/engine/outputs.sh tests/engine/hostile_flags.sh tests/engine/weights_files.sh
check_PROGRAMS += tests/engine/dump_cmp
tests_engine_dump_cmp_LDADD = $(LIBM)
EXTRA_DIST += tests/engine/ddp_cpu.sh tests/engine/launch.sh tests/engine/data.sh tests/engine/profile.sh tests/engine/mkidx.py \
	tests/engine/knobs.sh tests/engine/outputs.sh tests/engine/hostile_flags.sh tests/engine/weights_files.sh
EXTRA_DIST += tests/engine/contract.sh tests/engine/mxw.py tests/engine/mnist_ref.py \
	tests/engine/resnet_ref.py tests/engine/bert_ref.py tests/engine/bert_hf.py tests/engine/data_ref.py
if HAVE_TORCH
TESTS += tests/engine/mnist_ref.py tests/engine/resnet_ref.py tests/engine/bert_ref.py tests/engine/bert_hf.py tests/engine/data_ref.py
endif

# ---- benchmark: native vs PyTorch on this machine (`make bench`) ----
BENCHES += tests/bench/cpu_vs_pytorch.sh
EXTRA_DIST += tests/bench/cpu_vs_pytorch.sh
