# tests/gpu/local.mk - checks and benchmark of the CUDA backend, for a machine
# with an NVIDIA GPU (included by Makefile.am). Never part of `make check`.
# On a lent machine with 30 minutes and 10 a command, run tests/gpu/session.sh
# one part a call instead (engine/NOTES.md, "When a GPU is lent: the runbook").
#
#   make check-gpu   the native CUDA engine, in one command (never run yet;
#                    issue 11 asks for under 10 minutes on one H100: estimated
#                    9-12, unmeasured): tests/gpu/session.sh's part `check`,
#                    what measures no time at once in 11 lanes, then what
#                    compares speeds alone: tests/gpu/ops_check (every
#                    op, CUDA against CPU, the models' full-size shapes too),
#                    tests/gpu/model_check.sh (whole models through
#                    --dump: gradients, 5-step losses; the optimizers'
#                    multi-tensor kernels against one kernel per op, bit
#                    for bit; one lane per model), tests/gpu/memory_vs_pytorch.sh
#                    (peak memory against PyTorch in the matching mode),
#                    tests/gpu/ddp_check.sh (NCCL ranks, SyncBN included:
#                    1 GPU, and 2 GPUs where present),
#                    tests/gpu/plan_cache.sh (the plan cache: a second run
#                    finds every choice, a damaged cache is rebuilt),
#                    tests/gpu/data_upload.sh (--data's pinned upload against
#                    the pageable one: the same batches, losses and weights,
#                    eager and CUDA Graph), tests/gpu/bert_hf.sh (BERT against
#                    transformers' BertForMaskedLM); then alone
#                    tests/gpu/knob_sanity.sh (each knob off against on: what
#                    must hold). Each step ok, FAIL, TIMEOUT or SKIP; the whole
#                    output in tests/gpu/logs/check.log, the steps' files in
#                    check.tgz; the last line is "N passed, N failed" (a
#                    check is a step). Without a GPU every one skips and the
#                    target succeeds ("SKIP: no GPU"). CHECK_GPU_S (default
#                    1800) bounds the whole; a step that hangs is cut and fails.
#   make check-gpu-serial GPU_CHECKS='tests/gpu/ops_check tests/gpu/model_check.sh ...'
#                    the named checks one after the other (a fresh plan cache
#                    shared by them), each its log in tests/gpu/logs/NAME.log.
#   make check-gpu-runtimes  tests/gpu/runtimes.sh (the PyTorch engine's runtimes:
#                    eager, inductor, onnxruntime on its CUDA provider,
#                    tensorrt, at fp32/fp16/int8, with their accuracy checks;
#                    its table of speeds in tests/gpu/logs/runtimes.out/), alone.
#   make check-gpu-pytorch  tests/gpu/pytorch_knobs.sh (the PyTorch engine's
#                    knobs on the GPU), apart: it takes minutes of its own.
#   make bench-gpu   tests/gpu/bench_convnets.sh: native against PyTorch on the
#                    same GPU; the table goes into engine/cuda/PERF.md (or
#                    BENCH_GPU_OUT=FILE). Without a GPU it says SKIP and succeeds.
#                    Its pipeline runs on the CPU in make check
#                    (tests/gpu/bench_convnets_smoke.sh, resnet_tiny, ~20 s).
#   make bench-gpu-bert  tests/gpu/bench_bert.sh: BERT-base / -large inference
#                    and training, native against PyTorch (eager, torch.compile)
#                    on the same GPU, with MFU and peak memory; its table goes
#                    into engine/cuda/PERF.md too (or BENCH_GPU_OUT=FILE). About
#                    12 minutes; without a GPU: SKIP, and it succeeds.
#                    Its pipeline runs on the CPU in make check
#                    (tests/gpu/bench_bert_smoke.sh, bert_tiny, ~15 s).

# ops_check links the CPU backend (the reference) and loads the CUDA module
# with dlopen; the module resolves graph_numel & co. from it (-rdynamic).
if HAVE_CUDA
check_PROGRAMS += tests/gpu/ops_check
endif
# the checker's own self-test needs no GPU: part of make check (SKIP without CUDA)
TESTS += tests/gpu/ops_selftest.sh
# bench_bert.sh's pipeline on the CPU with bert_tiny, both engines (SKIP without torch)
TESTS += tests/gpu/bench_bert_smoke.sh
# bench_convnets.sh's the same, resnet_tiny and mnist_cnn (~20 s; SKIP without torch)
TESTS += tests/gpu/bench_convnets_smoke.sh
# compare_dumps.py (model_check's comparisons) on dumps it makes (~2 s; SKIP without torch)
TESTS += tests/gpu/compare_dumps_selftest.sh
# session.sh's plumbing with the CPU standing in for the GPU (~12 s; SKIP without torch)
TESTS += tests/gpu/session_plumbing.sh
tests_gpu_ops_check_SOURCES = tests/gpu/ops_check.c \
	engine/graph.c engine/graph.h engine/mem.c engine/mem.h engine/backend.h engine/rng.h engine/comm.c engine/comm_shm.c engine/comm.h \
	engine/plancache.c engine/plancache.h engine/knobs.c engine/knobs.h \
	engine/cpu/backend_cpu.c engine/cpu/cpu.h engine/cpu/pool.c engine/cpu/pool.h \
	engine/cpu/gemm.c engine/cpu/conv.c engine/cpu/ops.c
tests_gpu_ops_check_CFLAGS = $(AM_CFLAGS) $(BLAS_CFLAGS) $(ENGINE_ARCH_CFLAGS)
tests_gpu_ops_check_LDFLAGS = -rdynamic
tests_gpu_ops_check_LDADD = $(BLAS_LIBS) $(LIBM) $(PTHREAD_LIBS) -ldl

EXTRA_DIST += tests/gpu/ops_selftest.sh tests/gpu/model_check.sh tests/gpu/compare_dumps.py tests/gpu/bench_convnets.sh \
	tests/gpu/knob_sanity.sh tests/gpu/memory_vs_pytorch.sh tests/gpu/ddp_check.sh tests/gpu/runtimes.sh \
	tests/gpu/plan_cache.sh tests/gpu/bench_bert.sh tests/gpu/bench_bert_smoke.sh tests/gpu/benchlib.py \
	tests/gpu/bench_convnets_smoke.sh tests/gpu/compare_dumps_selftest.sh tests/gpu/smoke.sh \
	tests/gpu/session.sh tests/gpu/standin.sh tests/gpu/session_plumbing.sh \
	tests/engine/cuda_nogpu.sh tests/gpu/data_upload.sh tests/gpu/bert_hf.sh tests/gpu/probe.sh

GPU_LOG_DIR = tests/gpu/logs
GPU_CHECKS = tests/gpu/ops_check tests/gpu/model_check.sh tests/gpu/knob_sanity.sh \
	tests/gpu/memory_vs_pytorch.sh tests/gpu/ddp_check.sh tests/gpu/plan_cache.sh \
	tests/gpu/data_upload.sh tests/gpu/bert_hf.sh
CHECK_GPU_S = 1800
GPU_ENV = MATRIX_ENGINE='$(abs_top_builddir)/engine/matrix-engine'; export MATRIX_ENGINE; \
	top_srcdir='$(abs_top_srcdir)'; export top_srcdir; \
	top_builddir='$(abs_top_builddir)'; export top_builddir; \
	PYTHON_TORCH='$(PYTHON_TORCH)'; export PYTHON_TORCH;

check-gpu-pytorch: all
	@$(MKDIR_P) $(GPU_LOG_DIR); $(GPU_ENV) $(MAKE) --no-print-directory check-gpu-serial GPU_CHECKS=tests/gpu/pytorch_knobs.sh

check-gpu-runtimes: all
	@$(MKDIR_P) $(GPU_LOG_DIR); $(GPU_ENV) $(MAKE) --no-print-directory check-gpu-serial GPU_CHECKS=tests/gpu/runtimes.sh

# check-gpu: session.sh's part check, its files in tests/gpu/logs (each
# step's plan cache a fresh directory of its own under the part's work
# directory: the checks neither read nor fill the user's)
check-gpu: all $(check_PROGRAMS)
	@$(MKDIR_P) $(GPU_LOG_DIR); $(GPU_ENV) \
	OUT='$(abs_top_builddir)/$(GPU_LOG_DIR)'; export OUT; \
	SESSION_PART_S='$(CHECK_GPU_S)'; export SESSION_PART_S; \
	$(SHELL) $(srcdir)/tests/gpu/session.sh check

# check-gpu-serial: the engine's plan cache (--plan-cache) in a fresh directory of
# its own, so that the checks neither read nor fill the user's
check-gpu-serial: all $(check_PROGRAMS)
	@$(MKDIR_P) $(GPU_LOG_DIR); $(GPU_ENV) \
	MATRIX_PLAN_CACHE='$(abs_top_builddir)/$(GPU_LOG_DIR)/plan-cache'; export MATRIX_PLAN_CACHE; \
	rm -rf "$$MATRIX_PLAN_CACHE"; \
	pass=0; fail=0; skip=0; \
	for t in $(GPU_CHECKS); do \
	  log=$(GPU_LOG_DIR)/`basename $$t .sh`.log; rc=0; \
	  echo "== $$t (output: $$log)"; \
	  case $$t in \
	  *.sh) out=$(GPU_LOG_DIR)/`basename $$t .sh`.out; \
	        case $$t in tests/gpu/pytorch_knobs.sh|tests/gpu/runtimes.sh) arg=$$out;; *) arg=;; esac; \
	        $(SHELL) $(srcdir)/$$t $$arg >$$log 2>&1 || rc=$$?;; \
	  *) if test -x $$t; then ./$$t -q >$$log 2>&1 || rc=$$?; \
	     else echo "SKIP: built without the CUDA backend (no $$t)" >$$log; rc=77; fi;; \
	  esac; \
	  grep -E '^(FAIL|SKIP|CHECK FAIL)' $$log | head -n 40; \
	  tail -n 1 $$log | grep -vE '^(FAIL|SKIP|CHECK FAIL)' || :; \
	  case $$rc in \
	  0) echo "PASS: $$t"; pass=`expr $$pass + 1`;; \
	  77) echo "SKIP: $$t"; skip=`expr $$skip + 1`;; \
	  *) echo "FAIL: $$t (exit $$rc)"; fail=`expr $$fail + 1`;; \
	  esac; \
	done; \
	if test $$pass -eq 0 && test $$fail -eq 0; then echo "SKIP: no GPU"; fi; \
	echo "check-gpu: $$skip skipped"; \
	echo "$$pass passed, $$fail failed"; \
	test $$fail -eq 0

BENCH_GPU_OUT = $(srcdir)/engine/cuda/PERF.md
bench-gpu: all
	@$(GPU_ENV) rc=0; \
	$(SHELL) $(srcdir)/tests/gpu/bench_convnets.sh $(BENCH_GPU_OUT) || rc=$$?; \
	if test $$rc -eq 77; then echo "SKIP: no GPU"; rc=0; fi; \
	exit $$rc

bench-gpu-bert: all
	@$(GPU_ENV) rc=0; \
	$(SHELL) $(srcdir)/tests/gpu/bench_bert.sh $(BENCH_GPU_OUT) || rc=$$?; \
	if test $$rc -eq 77; then echo "SKIP: no GPU"; rc=0; fi; \
	exit $$rc

clean-local: clean-gpu-logs
clean-gpu-logs:
	-rm -rf $(GPU_LOG_DIR)

.PHONY: check-gpu check-gpu-serial check-gpu-runtimes check-gpu-pytorch bench-gpu bench-gpu-bert clean-gpu-logs
