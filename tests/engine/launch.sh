#!/bin/sh
# launch.sh - the engine's local launcher (engine/comm.c, issue 17): ranks
# started without MPI on this host, over the shared-memory communicator,
# and the launcher as their watchdog (mnist_cnn, 2 CPU ranks, 1 thread):
#   - a 2-rank point runs: launcher=local and comm=shm in the result and
#     the log, same weights on both ranks; MATRIX_ENGINE_LAUNCH=local says
#     so in the log; a bad MATRIX_ENGINE_LAUNCH is exit 2 with the choices;
#   - a rank killed by SIGKILL mid-run (MATRIX_ENGINE_DIE_RANK=1): the
#     engine dies of SIGKILL (exit 137, the runner's `crashed`), no result;
#   - a rank that exits 7 mid-run (MATRIX_ENGINE_DIE_RANK=0:exit): the
#     engine exits 7, the other rank killed;
#   - SIGTERM to the launcher reaches the ranks: it dies of SIGTERM (143);
#   - SIGKILL to the launcher: the ranks die with it (PR_SET_PDEATHSIG);
#   - without a GPU, --device cuda --gpus 2: every rank is unsupported and
#     rank 0's result says so (the launcher lets it write it: exit 3);
#   - after each, no rank is left running.
# tests/engine/ddp_cpu.sh checks the numbers (shm and MPI ranks against one
# process); tests/unit/test_comm_shm the collectives.
. "$top_srcdir/tests/setup"
E=${MATRIX_ENGINE:?}
key() { sed -n "s/^$1=//p" "$2"; }
R="--device cpu --model mnist_cnn --task train --batch 2 --gpus 2 --threads 1 --warmup 0"
# ranks TAG: the processes whose command line holds this test's TAG result path
ranks() { pgrep -f -- "--result $work/$1\$" 2>/dev/null | tr '\n' ' '; }
none_left() {
	i=0
	while [ -n "$(ranks "$1")" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ -z "$(ranks "$1")" ] || fail "$2: processes left running: $(ranks "$1")"
}

"$E" $R --steps 4 --result "$work/ok" 2>ok.log
expect_eq "$(key status ok)" ok "2 local ranks: status"
expect_eq "$(key launcher ok)" local "launcher key"
expect_eq "$(key comm ok)" shm "comm key"
expect_eq "$(key comm_host ok)" shm "comm_host key"
expect_eq "$(key ranks ok)" 2 "ranks"
expect_eq "$(key ranks_same_weights ok)" 1 "same weights"
expect_grep "ranks: launcher=local (MATRIX_ENGINE_LAUNCH=auto): 2 ranks on this host, host communicator shm" ok.log "log line"
MATRIX_ENGINE_LAUNCH=local "$E" $R --steps 1 --result "$work/ok2" 2>ok2.log
expect_grep "launcher=local (MATRIX_ENGINE_LAUNCH=local)" ok2.log "MATRIX_ENGINE_LAUNCH=local in the log"
MATRIX_ENGINE_LAUNCH=slurm expect_status 2 "$E" $R --steps 1 --result "$work/bad" 2>bad.log
expect_grep "MATRIX_ENGINE_LAUNCH='slurm' is not one of auto, local, mpirun" bad.log "bad launcher message"
[ ! -e bad ] || fail "a bad MATRIX_ENGINE_LAUNCH wrote a result"

MATRIX_ENGINE_DIE_RANK=1 expect_status 137 "$E" $R --steps 200 --result "$work/k" 2>k.log
[ ! -e k ] || fail "a killed rank: a result was written"
expect_grep "MATRIX_ENGINE_DIE_RANK=1: rank 1 kills itself with SIGKILL at step 3 (test knob)" k.log "knob log line"
expect_grep "rank 1 died of signal 9 (Killed); the launcher killed the others" k.log "watchdog log line"
none_left k "a killed rank"

MATRIX_ENGINE_DIE_RANK=0:exit expect_status 7 "$E" $R --steps 200 --result "$work/x" 2>x.log
[ ! -e x ] || fail "a rank that exited 7: a result was written"
expect_grep "rank 0 exited 7; the launcher ended the others" x.log "watchdog log line (exit)"
none_left x "a rank that exited 7"

# signals to the launcher: started in the background, signalled once both
# ranks run (3 processes with the tag)
for sig in TERM KILL; do
	"$E" $R --steps 1000000 --result "$work/s$sig" 2>"s$sig.log" &
	pid=$!
	i=0
	while [ "$(ranks "s$sig" | wc -w)" -lt 3 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	[ "$(ranks "s$sig" | wc -w)" -eq 3 ] || { kill -KILL $pid; fail "SIG$sig: the ranks did not start: $(cat "s$sig.log")"; }
	sleep 0.3 # in the steps
	kill -$sig $pid
	rc=0
	wait $pid || rc=$?
	case $sig in TERM) want=143 ;; KILL) want=137 ;; esac
	[ $rc -eq $want ] || fail "SIG$sig to the launcher: exit $rc, expected $want: $(tail -n 3 "s$sig.log")"
	none_left "s$sig" "SIG$sig to the launcher"
done
expect_grep "died of signal 15 (Terminated); the launcher killed the others" sTERM.log "SIGTERM reached a rank"

# every rank unsupported (no GPU here for --device cuda): rank 0's result
# is written, the launcher ends with its exit 3, not killing it first
rc=0
"$E" --device cuda --model mnist_cnn --steps 1 --result "$work/u1" >/dev/null 2>&1 || rc=$?
if [ $rc -eq 3 ]; then
	expect_status 3 "$E" --device cuda --model mnist_cnn --gpus 2 --steps 1 --result "$work/u2" 2>u2.log
	expect_eq "$(key status u2)" unsupported "2 ranks, each unsupported: rank 0's result"
	expect_eq "$(key reason u2)" "$(key reason u1)" "2 ranks, each unsupported: the reason"
	none_left u2 "unsupported ranks"
else
	echo "(a GPU is usable here: the unsupported-ranks case is not run)"
fi
echo "ok"
