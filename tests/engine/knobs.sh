#!/bin/sh
# knobs.sh - every MATRIX_ENGINE_* knob is honest (engine/knobs.c, issue 11),
# on the cpu build, the CUDA backend's knobs included (their values are read
# by the same plain C before anything runs):
#   - a value that is none of the knob's is exit 2, before any result is
#     written, with one line naming the knob, the value and the values it
#     takes (the runner's reason: `failed`, "exit status 2: ..."); before,
#     MATRIX_ENGINE_SDPA, _POISON, _DP, _PROFILE and _DIE_RANK took any text
#     (PROFILE=0 profiled, DIE_RANK=x killed rank 0), and _CONV, _BNSTATS,
#     _OPTIM, _LAUNCH, _DATA_UPLOAD were read only where they act;
#   - MATRIX_ENGINE_DIE_RANK names a rank that exists, or is refused;
#   - the local launcher's variables in a rank are numbers it would set;
#   - a knob set that has nothing to act on says so on stderr, and the
#     result's `knobs` key lists the knobs set;
#   - MATRIX_ENGINE_PROFILE=1 profiles the timed steps and the result's
#     timing key says so; =0 does not.
. "$top_srcdir/tests/setup"
E=${MATRIX_ENGINE:?}
key() { sed -n "s/^$1=//p" "$2"; }
for v in CONV BNSTATS OPTIM SDPA GEMM POISON BN_BWD DATA_UPLOAD LAUNCH DP PROFILE DIE_RANK BUCKET_KB; do unset "MATRIX_ENGINE_$v"; done
P="--device cpu --model mnist_cnn --batch 2 --threads 1 --steps 1 --warmup 0"

# refused KNOB=VALUE MESSAGE [FLAGS]: exit 2, exactly MESSAGE on stderr, no result
refused() {
	kv=$1 msg=$2; shift 2
	rm -f res
	set +e; env "$kv" "$E" $P "$@" --result "$work/res" >out 2>err; rc=$?; set -e
	expect_eq "$rc" 2 "$kv: exit status"
	printf '%s\n' "matrix-engine: $msg" | cmp -s - err || fail "$kv: stderr is '$(cat err)', expected 'matrix-engine: $msg'"
	[ ! -e res ] || fail "$kv: a result was written"
}
refused MATRIX_ENGINE_SDPA=cudnn "MATRIX_ENGINE_SDPA='cudnn' is not one of auto, kernel (default auto)"
refused MATRIX_ENGINE_CONV=bogus "MATRIX_ENGINE_CONV='bogus' is not one of auto, graph, legacy, kernel (default auto)"
refused MATRIX_ENGINE_BNSTATS=on "MATRIX_ENGINE_BNSTATS='on' is not one of separate, conv (default separate)"
refused MATRIX_ENGINE_OPTIM=multi "MATRIX_ENGINE_OPTIM='multi' is not one of fused, per-tensor (default fused)"
refused MATRIX_ENGINE_POISON=true "MATRIX_ENGINE_POISON='true' is not one of 0, 1 (default 0)"
refused MATRIX_ENGINE_BN_BWD=yes "MATRIX_ENGINE_BN_BWD='yes' is not one of fused, separate (default fused)"
refused MATRIX_ENGINE_DATA_UPLOAD=fast "MATRIX_ENGINE_DATA_UPLOAD='fast' is not one of pinned, pageable (default pinned)"
refused MATRIX_ENGINE_LAUNCH=slurm "MATRIX_ENGINE_LAUNCH='slurm' is not one of auto, local, mpirun (default auto)"
refused MATRIX_ENGINE_DP=2 "MATRIX_ENGINE_DP='2' is not one of 0, 1 (default 0)"
refused MATRIX_ENGINE_PROFILE=yes "MATRIX_ENGINE_PROFILE='yes' is not one of 0, 1 (default 0)"
refused MATRIX_ENGINE_BUCKET_KB=0 "MATRIX_ENGINE_BUCKET_KB='0' is not a number of KiB from 1 to 4194304 (the data-parallel gradient buckets' size; default 25600, PyTorch DDP's 25 MiB)"
refused MATRIX_ENGINE_BUCKET_KB=64k "MATRIX_ENGINE_BUCKET_KB='64k' is not a number of KiB from 1 to 4194304 (the data-parallel gradient buckets' size; default 25600, PyTorch DDP's 25 MiB)"
refused MATRIX_ENGINE_DIE_RANK=x "MATRIX_ENGINE_DIE_RANK='x' is not K, K:exit or K:skew (a test knob: rank K, a number from 0, is killed at its third step, ends it with exit status 7, or changes one of its weights there)"
refused MATRIX_ENGINE_DIE_RANK=1:kill "MATRIX_ENGINE_DIE_RANK='1:kill' is not K, K:exit or K:skew (a test knob: rank K, a number from 0, is killed at its third step, ends it with exit status 7, or changes one of its weights there)"
refused MATRIX_ENGINE_DIE_RANK=0 "MATRIX_ENGINE_DIE_RANK=0: no ranks to end (--gpus 1 without MATRIX_ENGINE_DP=1 runs one process)"
refused MATRIX_ENGINE_DIE_RANK=2 "MATRIX_ENGINE_DIE_RANK=2: no such rank (ranks are numbered from 0 to --gpus - 1)" --gpus 2
# the pair the CUDA backend cannot run, refused on the cpu too
set +e; MATRIX_ENGINE_BNSTATS=conv MATRIX_ENGINE_CONV=legacy "$E" $P --result "$work/res" >out 2>err; rc=$?; set -e
expect_eq "$rc" 2 "BNSTATS=conv with CONV=legacy: exit status"
expect_eq "$(cat err)" "matrix-engine: MATRIX_ENGINE_BNSTATS=conv needs the cuDNN graph API, which MATRIX_ENGINE_CONV=legacy turns off" \
	"BNSTATS=conv with CONV=legacy: message"

# a rank of the local launcher whose variables are not the launcher's (atoi read 'x' as 0: stdin)
set +e
MATRIX_ENGINE_RANK_OF=1 MATRIX_ENGINE_SHM_FD=x MATRIX_ENGINE_RANKS=2 MATRIX_ENGINE_RANK=0 MATRIX_ENGINE_LOCAL_RANK=0 \
	"$E" $P --gpus 2 --result "$work/res" >out 2>err; rc=$?
set -e
expect_eq "$rc" 2 "MATRIX_ENGINE_SHM_FD=x: exit status"
expect_eq "$(cat err)" "matrix-engine: a rank of the local launcher with MATRIX_ENGINE_SHM_FD='x' (the launcher sets it: a number from 0 to 1048575)" \
	"MATRIX_ENGINE_SHM_FD=x: message"
set +e
MATRIX_ENGINE_RANK_OF=1 MATRIX_ENGINE_SHM_FD=0 MATRIX_ENGINE_RANKS=2 MATRIX_ENGINE_RANK=0 MATRIX_ENGINE_LOCAL_RANK=-1 \
	"$E" $P --gpus 2 --result "$work/res" >out 2>err </dev/null; rc=$?
set -e
expect_eq "$rc" 2 "MATRIX_ENGINE_LOCAL_RANK=-1: exit status"
expect_grep "MATRIX_ENGINE_LOCAL_RANK='-1' (the launcher sets it: a number from 0 to 1)" err "MATRIX_ENGINE_LOCAL_RANK=-1: message"

# the runner: a refused knob is a failed point with the message as its reason, not a crash
cat >r.yaml <<'EOF'
name: knob_refused
engine: native
device: cpu
measure: {warmup: 0, min_time: 0.01s, max_time: 0.1s, timeout: 60s}
factors:
  model: [mnist_cnn]
  batch: [2]
  threads: [1]
EOF
set +e; MATRIX_ENGINE_SDPA=bogus "$MATRIX" run r.yaml --out run >run.out 2>&1; set -e
expect_eq "$(csv_col run/results.csv status)" failed "runner: status of a point with MATRIX_ENGINE_SDPA=bogus"
expect_grep "exit status 2: matrix-engine: MATRIX_ENGINE_SDPA='bogus' is not one of auto, kernel" run/results.csv "runner: reason"

# accepted, with nothing to act on here: said, and listed in the result
MATRIX_ENGINE_SDPA=kernel MATRIX_ENGINE_POISON=1 MATRIX_ENGINE_BN_BWD=separate MATRIX_ENGINE_LAUNCH=local \
	MATRIX_ENGINE_DATA_UPLOAD=pageable MATRIX_ENGINE_PROFILE=0 MATRIX_ENGINE_BUCKET_KB=64 "$E" $P --result "$work/r" 2>err
expect_eq "$(key status r)" ok "accepted knobs: status"
expect_eq "$(key knobs r)" "MATRIX_ENGINE_SDPA=kernel MATRIX_ENGINE_POISON=1 MATRIX_ENGINE_BN_BWD=separate MATRIX_ENGINE_DATA_UPLOAD=pageable MATRIX_ENGINE_LAUNCH=local MATRIX_ENGINE_PROFILE=0 MATRIX_ENGINE_BUCKET_KB=64" \
	"the knobs key"
expect_grep "^matrix-engine: MATRIX_ENGINE_SDPA=kernel changes nothing here: a setting of the CUDA backend, and the point runs on the cpu$" err "SDPA on the cpu"
expect_grep "^matrix-engine: MATRIX_ENGINE_POISON=1 changes nothing here: a setting of the CUDA backend" err "POISON on the cpu"
expect_grep "^matrix-engine: MATRIX_ENGINE_BN_BWD=separate changes nothing here: no BatchNorm backward in mnist_cnn infer$" err "BN_BWD in inference"
expect_grep "^matrix-engine: MATRIX_ENGINE_DATA_UPLOAD=pageable changes nothing here: no --data" err "DATA_UPLOAD without --data"
expect_grep "^matrix-engine: MATRIX_ENGINE_LAUNCH=local changes nothing here: one process, no ranks to start (--gpus 1)$" err "LAUNCH without ranks"
expect_grep "^matrix-engine: MATRIX_ENGINE_BUCKET_KB=64 changes nothing here: one process, no gradients to all-reduce (--gpus 1)$" err "BUCKET_KB without ranks"
# the paths read where they act: said where they do not (they were taken silently)
MATRIX_ENGINE_CUDA=/no/such.so MATRIX_ENGINE_MPI=/no/mpi.so "$E" $P --result "$work/rm" 2>errm
expect_eq "$(key status rm)" ok "module paths on the cpu: status"
expect_grep "^matrix-engine: MATRIX_ENGINE_CUDA=/no/such.so changes nothing here: the point runs on the cpu" errm "CUDA module on the cpu"
expect_grep "^matrix-engine: MATRIX_ENGINE_MPI=/no/mpi.so changes nothing here: no ranks started by mpirun" errm "MPI module without mpirun"
if grep -q 'PROFILE\|ms/step' err; then fail "MATRIX_ENGINE_PROFILE=0 said or profiled something: $(cat err)"; fi
[ -z "$(key timing r)" ] || fail "MATRIX_ENGINE_PROFILE=0: timing=$(key timing r)"
"$E" $P --result "$work/r0" 2>/dev/null
expect_eq "$(key knobs r0)" none "no knob set: the knobs key"

# MATRIX_ENGINE_PROFILE=1: the timed steps op by op, said in the log and the result
MATRIX_ENGINE_PROFILE=1 "$E" $P --result "$work/rp" 2>errp
expect_grep "^matrix-engine: MATRIX_ENGINE_PROFILE=1: the timed steps run op by op" errp "PROFILE=1: log line"
expect_grep "ms/step" errp "PROFILE=1: the table"
expect_eq "$(key timing rp)" "host_clock, op by op (MATRIX_ENGINE_PROFILE=1: each op timed after a sync)" "PROFILE=1: timing key"
echo "knobs.sh: ok"
