#!/bin/sh
# selftest.sh - the CPU simulator of the CUDA kernels (tests/cudasim/) checked
# against what a GPU must give (selftest.cu says what), before
# ops_check.sh trusts it with the engine's kernels.
set -eu
P=${top_builddir:?}/tests/cudasim/selftest
if [ ! -x "$P" ]; then
  echo "SKIP: built without CUDA (no $P): the simulator needs the CUDA headers"
  exit 77
fi
exec "$P"
