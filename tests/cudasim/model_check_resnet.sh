#!/bin/sh
# model_check_resnet.sh - tests/cudasim/model_check.sh for resnet_tiny
# (batch 8: BatchNorm forward and backward, its ReLU folded into the
# backward, residual additions, max-pooling, SGD with momentum), a test of
# its own so that `make -j check` runs it beside the others (about 4.5
# minutes on 2 cores).
MODEL_CHECK_ONLY=resnet_tiny
export MODEL_CHECK_ONLY
exec sh "${top_srcdir:?}/tests/cudasim/model_check.sh"
