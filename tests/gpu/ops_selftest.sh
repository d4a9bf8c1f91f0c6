#!/bin/sh
# ops_selftest.sh - `make check` runs the GPU op checker's self-test, which
# needs no GPU: the f16/bf16 conversions, and that a device spoiling one
# element of an op's output or input fails every op. (The GPU run itself is
# `make check-gpu`.)
set -eu
P=${top_builddir:?}/tests/gpu/ops_check
if [ ! -x "$P" ]; then
  echo "SKIP: built without CUDA (no $P)"
  exit 77
fi
exec "$P" --self-test
