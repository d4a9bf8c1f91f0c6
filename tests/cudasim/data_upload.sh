#!/bin/sh
# data_upload.sh - tests/gpu/data_upload.sh on the CPU simulator (8 s):
# --data's pinned upload (batch k+1 made in pinned memory and copied on a
# second stream while step k runs) against the pageable one, mnist_cnn fp32
# batch 16 over two epoch boundaries: the batches of 12 steps bit for bit,
# everything else within 1e-5, eager and in one CUDA Graph, the default and
# a bad value. Not its batch 1024 part (DATA_UPLOAD_SMALL: minutes of CPU).
# The simulator runs streams one after another, so a missing wait between
# the copy stream and the step shows only on a GPU; a batch copied from the
# wrong slot, index or epoch shows here.
set -u
NAME=data_upload
. "${top_srcdir:?}/tests/cudasim/setup.sh"
MATRIX_ENGINE_CUDA=$M DATA_UPLOAD_SMALL=1 MATRIX_ENGINE=$E DUMP_CMP=$B/tests/engine/dump_cmp \
  sh "$top_srcdir/tests/gpu/data_upload.sh" "$W/out"
