#!/bin/sh
# model_check_resnet.sh - tests/cudasim/model_check.sh for resnet_tiny
# (batch 8: BatchNorm forward and backward, its ReLU folded into the
# backward, residual additions, max-pooling, SGD with momentum; cudnn_benchmark
# times every candidate convolution on the simulated cuDNN), about 6
# minutes on 2 cores: not in `make check` (CI would pass 20 minutes), run it
# as `make check TESTS=tests/cudasim/model_check_resnet.sh`.
MODEL_CHECK_ONLY=resnet_tiny
export MODEL_CHECK_ONLY
exec sh "${top_srcdir:?}/tests/cudasim/model_check.sh"
