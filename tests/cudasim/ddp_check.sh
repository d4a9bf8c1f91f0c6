#!/bin/sh
# ddp_check.sh - tests/gpu/ddp_check.sh (data-parallel ranks of the CUDA
# backend over NCCL) with no GPU: two simulated devices (CUDASIM_DEVICES=2),
# each rank its own process on the simulator, NCCL's all-reduce between
# them through shared memory (cudasim.cc), convolutions on the simulated
# cuDNN, linear on the simulated cuBLASLt. 2 ranks x 6 against 1 x 12
# (gradients, losses, final weights), SyncBN against the global batch's
# BatchNorm, the control without it, both inside one CUDA Graph, and the
# measured points on resnet_tiny (DDP_CHECK_SMALL). About 4 minutes on 2
# cores: by hand, `make check TESTS=tests/cudasim/ddp_check.sh`.
set -u
M=${top_builddir:?}/tests/cudasim/matrix-engine-cudasim.so
if [ ! -f "$M" ]; then
  echo "SKIP: built without CUDA (no $M)"
  exit 77
fi
MATRIX_ENGINE_CUDA=$M MATRIX_ENGINE_SDPA=kernel CUDASIM_DEVICES=2 DDP_CHECK_GPUS=2 DDP_CHECK_SMALL=cudasim
export MATRIX_ENGINE_CUDA MATRIX_ENGINE_SDPA CUDASIM_DEVICES DDP_CHECK_GPUS DDP_CHECK_SMALL
exec sh "${top_srcdir:?}/tests/gpu/ddp_check.sh"
