#!/bin/sh
# plan_cache.sh - tests/gpu/plan_cache.sh on the CPU simulator, by hand
# (about 75 s: make check TESTS=tests/cudasim/plan_cache.sh): the plan
# cache's legacy choices (resnet_tiny training with cudnn_benchmark's
# search, mnist_cnn under max-autotune) and graph-API decisions (resnet_tiny
# inference, MATRIX_ENGINE_CONV=graph) stored, reused, a torn file and
# tampered entries rejected (PLAN_CACHE_SMALL: resnet_tiny and small
# batches instead of resnet18; the simulated cuDNN's algorithms and engines).
set -u
NAME=plan_cache
. "${top_srcdir:?}/tests/cudasim/setup.sh"
MATRIX_ENGINE_CUDA=$M PLAN_CACHE_SMALL=1 MATRIX_ENGINE=$E sh "$top_srcdir/tests/gpu/plan_cache.sh" "$W/out"
