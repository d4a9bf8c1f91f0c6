#!/bin/sh
# data_upload.sh - tests/gpu/data_upload.sh on the CPU simulator (20 s):
# --data's pinned upload (batch k+1 made in pinned memory and copied on a
# second stream while step k runs) against the pageable one, mnist_cnn fp32
# batch 16 over two epoch boundaries: the batches of 12 steps bit for bit,
# everything else within 1e-5, eager and in one CUDA Graph, the default and
# a bad value. Not its batch 1024 part (DATA_UPLOAD_SMALL: minutes of CPU).
# Twice, under the two late schedules of the streams (CUDASIM_STREAMS,
# cudasim.cc): main-late (the compute stream late: a download that does
# not wait for the step reads what was there before) and side-late (the
# copy stream late: a step that does not wait for its batch's copy reads
# the slot's old contents). Each fails with its wait removed from
# backend_cuda.cu (engine/NOTES.md); a batch copied from the wrong slot,
# index or epoch fails under both.
set -u
NAME=data_upload
. "${top_srcdir:?}/tests/cudasim/setup.sh"
for sched in main-late side-late; do
  echo "== CUDASIM_STREAMS=$sched"
  # each its own plan cache: with the first run's choices cached, the second did
  # not catch a download without its synchronisation (tried)
  MATRIX_PLAN_CACHE=$W/plan-cache-$sched CUDASIM_STREAMS=$sched MATRIX_ENGINE_CUDA=$M DATA_UPLOAD_SMALL=1 MATRIX_ENGINE=$E DUMP_CMP=$B/tests/engine/dump_cmp \
    sh "$top_srcdir/tests/gpu/data_upload.sh" "$W/$sched" || rc=1
done
exit $rc
