# ---- the PyTorch engine: engine/pytorch/matrix_torch.py -----------------------
# Installed into $(pkgdatadir)/pytorch, where the runner looks for it
# (share/matrix/pytorch/matrix_torch.py beside bin/matrix).
pytorchdir = $(pkgdatadir)/pytorch
dist_pytorch_SCRIPTS = engine/pytorch/matrix_torch.py
dist_pytorch_DATA = engine/pytorch/matrix_torch_models.py engine/pytorch/matrix_torch_runtimes.py \
	engine/pytorch/matrix_torch_data.py engine/pytorch/matrix_torch_profile.py

# Tests of the PyTorch engine (tests/pytorch/). Flag parsing needs no torch.
pytorch_torch_tests = \
	tests/pytorch/engine_stats.py \
	tests/pytorch/engine_ok.py \
	tests/pytorch/engine_unsupported.py \
	tests/pytorch/engine_failures.py \
	tests/pytorch/engine_knobs.py \
	tests/pytorch/engine_knobs_infer.py \
	tests/pytorch/engine_ddp.py \
	tests/pytorch/engine_compile.py \
	tests/pytorch/engine_compile_modes.py \
	tests/pytorch/engine_cuda_paths.py \
	tests/pytorch/engine_runtimes.py \
	tests/pytorch/gpu_runtimes_script.sh \
	tests/pytorch/run_recipe.sh
TESTS += tests/pytorch/engine_flags.sh
if HAVE_TORCH
TESTS += $(pytorch_torch_tests)
endif
EXTRA_DIST += \
	engine/pytorch/README.md \
	engine/pytorch/NOTES.md \
	tests/pytorch/engine_flags.sh \
	$(pytorch_torch_tests) \
	tests/pytorch/enginetest.py \
	tests/pytorch/pytorch_small.yaml \
	tests/gpu/pytorch_knobs.sh
