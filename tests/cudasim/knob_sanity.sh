#!/bin/sh
# knob_sanity.sh - tests/gpu/knob_sanity.sh on the CPU simulator
# (KNOB_SMALL: resnet_tiny and mnist_cnn at batch 8 and 4): every knob off
# against on, with what must hold checked where the simulator can say it:
# inference_mode's and eval's peak memory and kept activations, the layout
# each convolution runs in under channels_last, what each compile mode
# changes (fused ops, a CUDA Graph, timed searches), the refused
# MATRIX_ENGINE_* values. About 30 s. Not the precision section (speed
# alone) nor the benchmark one: its three points (ResNet-50's of
# KNOB_QUICK, on resnet_tiny fp16) took 104 s here for ratios it cannot
# judge (the simulator's times are CPU time), and cudnn_benchmark's search
# itself is conv_search.sh's, against algorithms of known speed. The whole
# script by hand: KNOB_SMALL=1 sh tests/gpu/knob_sanity.sh, with
# MATRIX_ENGINE_CUDA naming the simulated module (about 4 minutes).
set -u
NAME=knob_sanity
. "${top_srcdir:?}/tests/cudasim/setup.sh"
MATRIX_ENGINE_CUDA=$M MATRIX_ENGINE=$E KNOB_SMALL=1 KNOB_QUICK=1 \
  KNOB_SECTIONS="memory channels_last compile env" \
  sh "$top_srcdir/tests/gpu/knob_sanity.sh" "$W/out"
rc=$?
# its SKIP means "no GPU": here, the simulated module did not load
[ $rc -ne 77 ] || { echo "FAIL: the engine ran no CUDA point on the simulator ($M)"; exit 1; }
exit $rc
