# tests/cudasim/local.mk - the CUDA backend's own kernels run on the CPU
# (cudasim.h): every .cu of engine/cuda/ translated (translate.sed) and
# compiled by the host C++ compiler into tests/cudasim/matrix-engine-cudasim.so,
# a module with the CUDA backend's entry point that tests/gpu/ops_check loads
# in place of engine/matrix-engine-cuda.so (--kernels-only: convolution,
# linear and attention on the engine's own kernels); cuBLASLt (cublaslt.cc),
# cuDNN's legacy convolution API (cudnn.cc), its graph API (cudnngraph.cc)
# and NCCL between the ranks' processes (cudasim.cc) are simulated, so the
# default paths run too.
# Built with CUDA (the headers and those libraries), as the real module is.
#   tests/cudasim/selftest.sh   the simulator against what a GPU must give
#   tests/cudasim/ops_check.sh  ops_check --kernels-only on it, both thread orders
#   tests/cudasim/model_check.sh  bert_tiny and mnist_cnn trained on the CUDA backend,
#                                 against the CPU (tests/gpu/model_check.sh on it)
#   tests/cudasim/model_check_resnet.sh  the same for resnet_tiny (by hand, below)
#   tests/cudasim/lt_faults.sh  wrong cuBLASLt algorithms made on demand: the engine
#                               rejects them, falls back, and its plan cache too
#   tests/cudasim/graph_faults.sh  wrong cuDNN graph plans made on demand: convolutions,
#                               GEN_STATS and attention plans rejected, the fallbacks right,
#                               the plan cache's graph plans reused and rejected
#   tests/cudasim/data_upload.sh  tests/gpu/data_upload.sh's --data uploads (pinned vs pageable)
#   tests/cudasim/plan_cache.sh  tests/gpu/plan_cache.sh on resnet_tiny (by hand: 75 s)
#   tests/cudasim/knob_sanity.sh  tests/gpu/knob_sanity.sh on small models: memory, layouts,
#                               compile modes, refused settings (speeds not judged)
#   tests/cudasim/conv_search.sh  cudnn_benchmark's timed search against cuDNN algorithms
#                                 of known speed (kept within the noise, else the fastest)
#   tests/cudasim/ddp_quick.sh  2 ranks on two simulated devices (NCCL between processes),
#                               SyncBN, in a CUDA Graph, against 1 process at the global batch
#   tests/cudasim/ddp_check.sh  tests/gpu/ddp_check.sh on it (by hand: about 4 minutes)
#   tests/cudasim/study_gpus.sh  `matrix run` of a gpus 1 / 2 study on the simulated
#                                devices: GPUs handed out, ranks, the scaling report
#   tests/cudasim/profile.sh    --profile's per-op CUDA events (training, graph inference)
#   tests/cudasim/cube_bert.sh  `matrix run` of recipes/inference_cube.yaml's 48 BERT settings
#                               (bert_tiny): every point ok, cudnn_benchmark ignored where on
#   tests/cudasim/bert_hf.sh    tests/engine/bert_hf.py --device cuda: BERT against HF's
#                               BertForMaskedLM (logits, 5 losses, every gradient)
CUDASIM_UNITS = backend_cuda kernels ops conv gemm gemm_check sdpa comm_nccl plans dnngraph convgraph
EXTRA_DIST += tests/cudasim/cudasim.h tests/cudasim/cudasim.cc tests/cudasim/cublaslt.cc tests/cudasim/cudnn.cc tests/cudasim/cudnngraph.cc tests/cudasim/simlib.h tests/cudasim/cub.h tests/cudasim/translate.sed \
	tests/cudasim/selftest.cu tests/cudasim/selftest.sh tests/cudasim/ops_check.sh tests/cudasim/model_check.sh \
	tests/cudasim/model_check_resnet.sh tests/cudasim/lt_faults.sh tests/cudasim/conv_search.sh \
	tests/cudasim/ddp_quick.sh tests/cudasim/ddp_check.sh tests/cudasim/study_gpus.sh tests/cudasim/setup.sh \
	tests/cudasim/graph_faults.sh tests/cudasim/data_upload.sh tests/cudasim/plan_cache.sh tests/cudasim/knob_sanity.sh tests/cudasim/profile.sh \
	tests/cudasim/cube_bert.sh tests/cudasim/bert_hf.sh
# longest first (seconds in a fresh-clone CI, two at a time): make starts the
# tests in this order, and Makefile.am includes this fragment first, so the
# short tests of the other fragments fill the end instead of one long test
# running alone there (knob_sanity did, for 110 s)
TESTS += tests/cudasim/ops_check.sh tests/cudasim/model_check.sh tests/cudasim/lt_faults.sh \
	tests/cudasim/conv_search.sh tests/cudasim/ddp_quick.sh tests/cudasim/knob_sanity.sh tests/cudasim/study_gpus.sh tests/cudasim/cube_bert.sh \
	tests/cudasim/profile.sh tests/cudasim/graph_faults.sh tests/cudasim/data_upload.sh tests/cudasim/bert_hf.sh tests/cudasim/selftest.sh
# resnet_tiny by hand (3 minutes on 2 cores, 209 checks; in make check it
# would add about 1.5 minutes to a CI of 17-20):
#   make check TESTS=tests/cudasim/model_check_resnet.sh

if HAVE_CUDA
CUDASIM_GEN = tests/cudasim/gen
CUDASIM_OBJS = $(CUDASIM_UNITS:%=$(CUDASIM_GEN)/%.o) $(CUDASIM_GEN)/cudasim.o $(CUDASIM_GEN)/cublaslt.o $(CUDASIM_GEN)/cudnn.o $(CUDASIM_GEN)/cudnngraph.o
CUDASIM_CXXFLAGS = -std=c++17 -fPIC -O2 -g -w -ffp-contract=off $(ENGINE_ARCH_CFLAGS) -pthread \
	-include $(top_srcdir)/tests/cudasim/cudasim.h -I$(CUDASIM_GEN) -I$(top_srcdir)/tests/cudasim \
	-I$(top_srcdir)/engine/cuda -I$(top_builddir) -I$(top_srcdir) $(CUDA_CFLAGS)
CUDASIM_DEPS = $(top_srcdir)/tests/cudasim/cudasim.h $(top_srcdir)/tests/cudasim/cub.h \
	$(top_srcdir)/tests/cudasim/translate.sed $(CUDASIM_GEN)/vec.cuh $(top_srcdir)/engine/cuda/cuda.h \
	$(top_srcdir)/engine/cuda/gemm_view.h $(top_srcdir)/engine/graph.h $(top_srcdir)/engine/cuda/dnngraph.h \
	$(top_srcdir)/engine/cuda/dg_engine.h $(top_srcdir)/engine/cuda/convgraph.h $(top_srcdir)/engine/cuda/bnstats.h \
	$(top_srcdir)/engine/backend.h $(top_srcdir)/engine/engine.h $(top_srcdir)/engine/plancache.h \
	$(top_srcdir)/engine/knobs.h $(top_srcdir)/engine/comm.h $(top_srcdir)/engine/data.h
# cudart's, cuBLASLt's, cuDNN's and NCCL's calls are the simulator's: the real libraries stay out
CUDASIM_LIBS = $(filter-out -lcudart -lnccl -lcublasLt -lcublas -lcudnn,$(CUDA_LIBS))

$(CUDASIM_GEN)/%.cc: $(top_srcdir)/engine/cuda/%.cu $(top_srcdir)/tests/cudasim/translate.sed
	@$(MKDIR_P) $(CUDASIM_GEN)
	$(AM_V_GEN)sed -f $(top_srcdir)/tests/cudasim/translate.sed $< >$@
$(CUDASIM_GEN)/vec.cuh: $(top_srcdir)/engine/cuda/vec.cuh $(top_srcdir)/tests/cudasim/translate.sed
	@$(MKDIR_P) $(CUDASIM_GEN)
	$(AM_V_GEN)sed -f $(top_srcdir)/tests/cudasim/translate.sed $< >$@
$(CUDASIM_GEN)/selftest.cc: $(top_srcdir)/tests/cudasim/selftest.cu $(top_srcdir)/tests/cudasim/translate.sed
	@$(MKDIR_P) $(CUDASIM_GEN)
	$(AM_V_GEN)sed -f $(top_srcdir)/tests/cudasim/translate.sed $< >$@
$(CUDASIM_GEN)/%.o: $(CUDASIM_GEN)/%.cc $(CUDASIM_DEPS) config.h
	$(AM_V_GEN)$(CXX) $(CUDASIM_CXXFLAGS) -x c++ -c -o $@ $<
$(CUDASIM_GEN)/cudasim.o: $(top_srcdir)/tests/cudasim/cudasim.cc $(top_srcdir)/tests/cudasim/cudasim.h
	@$(MKDIR_P) $(CUDASIM_GEN)
	$(AM_V_GEN)$(CXX) $(CUDASIM_CXXFLAGS) -c -o $@ $<
$(CUDASIM_GEN)/cublaslt.o: $(top_srcdir)/tests/cudasim/cublaslt.cc $(top_srcdir)/tests/cudasim/cudasim.h $(top_srcdir)/tests/cudasim/simlib.h
	@$(MKDIR_P) $(CUDASIM_GEN)
	$(AM_V_GEN)$(CXX) $(CUDASIM_CXXFLAGS) -c -o $@ $<
$(CUDASIM_GEN)/cudnn.o: $(top_srcdir)/tests/cudasim/cudnn.cc $(top_srcdir)/tests/cudasim/cudasim.h $(top_srcdir)/tests/cudasim/simlib.h
	@$(MKDIR_P) $(CUDASIM_GEN)
	$(AM_V_GEN)$(CXX) $(CUDASIM_CXXFLAGS) -c -o $@ $<
$(CUDASIM_GEN)/cudnngraph.o: $(top_srcdir)/tests/cudasim/cudnngraph.cc $(top_srcdir)/tests/cudasim/cudasim.h $(top_srcdir)/tests/cudasim/simlib.h
	@$(MKDIR_P) $(CUDASIM_GEN)
	$(AM_V_GEN)$(CXX) $(CUDASIM_CXXFLAGS) -c -o $@ $<
tests/cudasim/matrix-engine-cudasim.so: $(CUDASIM_OBJS)
	$(AM_V_GEN)$(CXX) -shared -pthread -o $@ $(CUDASIM_OBJS) $(CUDASIM_LIBS) $(LIBM)
tests/cudasim/selftest: $(CUDASIM_GEN)/selftest.o $(CUDASIM_GEN)/cudasim.o
	$(AM_V_GEN)$(CXX) -pthread -o $@ $(CUDASIM_GEN)/selftest.o $(CUDASIM_GEN)/cudasim.o $(LIBM)
check_DATA += tests/cudasim/matrix-engine-cudasim.so tests/cudasim/selftest
endif
CLEANFILES += tests/cudasim/matrix-engine-cudasim.so tests/cudasim/selftest
clean-local: clean-cudasim
clean-cudasim:
	-rm -rf tests/cudasim/gen
.PHONY: clean-cudasim
