#!/bin/sh
# session_plumbing.sh - tests/gpu/session.sh without a GPU: --list names every
# part with an estimate under the 9.5 minutes a part may take; every
# configuration of model_check.sh is in one of its lanes; an unknown
# part is a usage error; --record splices a bench table between its markers
# and leaves the rest of the file; and two parts run with the CPU standing in
# (--stand-in) with 5 s a step (SESSION_STEP_S): the first part's step is
# cut short (TIMEOUT, with what it had counted, equal to the PASS / FAIL
# lines of its output), the second part still runs, each part leaves PART.log and
# PART.tgz under $OUT and nothing else (names the device can return), the
# logs and the summary say STAND-IN, the archive holds the step's output, and
# the exit status is 1; then a GPU that nvidia-smi lists (a stand-in) with
# the engine's CUDA probe failing: the part fails at once, no step run.
# About 20 s.
. "${top_srcdir:?}/tests/setup"
PY=${PYTHON_TORCH:-}
if [ -z "$PY" ] || ! "$PY" -c 'import torch' >/dev/null 2>&1; then
	echo "SKIP: no python3 that imports torch (PYTHON_TORCH='$PY'): the preflight and the runtimes part use it"
	exit 77
fi
S="$top_srcdir/tests/gpu/session.sh"
export MATRIX_ENGINE PYTHON_TORCH top_builddir

sh "$S" --list >list.out || fail "--list exited $?"
for p in first ops bert bench-convnets bench-bert runtimes knobs pytorch-knobs; do
	line=$(grep -E "^[0-9]+ +$p " list.out) || fail "--list does not name part $p"
	est=$(echo "$line" | awk '{ print $3 }')
	awk -v e="$est" 'BEGIN { exit !(e > 0 && e < 9.5) }' || fail "part $p: estimate '$est' min, not in (0, 9.5)"
done
expect_grep '^total about [0-9.]* min' list.out "--list's total"
# a configuration added to model_check.sh needs a lane (and an estimate) here
sh "$S" --coverage >cov.out || fail "$(cat cov.out) (add it to a lane of tests/gpu/session.sh, with its time)"

expect_status 2 sh "$S" no-such-part
expect_status 2 sh "$S"

# --record: the table between its markers, the rest kept
mkdir rec
printf '| new | table |\n' >rec/bench_bert.md
printf 'above\n<!-- bench_bert:begin -->\nold\n<!-- bench_bert:end -->\nbelow\n' >perf.md
SESSION_PERF_MD=$work/perf.md sh "$S" --record rec >rec.out || fail "--record exited $?"
expect_eq "$(cat perf.md)" "above
<!-- bench_bert:begin -->
| new | table |
<!-- bench_bert:end -->
below" "PERF.md after --record"
expect_status 1 sh "$S" --record "$work/nothing-here"

# two parts, the CPU standing in, 5 s a step: knob_sanity's ~47 points cannot end in time
rc=0
OUT=$work/out SESSION_STEP_S=5 sh "$S" --stand-in knobs pytorch-knobs >run.out 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { cat run.out >&2; fail "exit $rc, expected 1 (a step cut short)"; }
expect_eq "$(cd out && ls | tr '\n' ' ')" "knobs.log knobs.tgz pytorch-knobs.log pytorch-knobs.tgz " "the files under OUT"
expect_grep '^knob_sanity  *TIMEOUT .* cut short at its [0-9]*s limit' run.out "the step cut short, in the summary"
expect_grep '^== summary of part pytorch-knobs (STAND-IN' run.out "the second part ran after the first's failure"
expect_grep '^pytorch_knobs  *\(SKIP .*no CUDA torch\|TIMEOUT\)' out/pytorch-knobs.log "the second part's step (no CUDA torch here)"
expect_grep 'STAND-IN: the CPU stands in for the GPU' out/knobs.log "the log says STAND-IN"
# the counts of the summary are the step's own PASS / FAIL lines (in the log)
sed -n '/^==== step knob_sanity: sh/,/^==== step knob_sanity: TIMEOUT/p' out/knobs.log >ks.out
np=$(grep -c '^PASS' ks.out || :) nf=$(grep -c '^FAIL' ks.out || :) # grep -c exits 1 on a count of 0
grep -q "^knob_sanity  *TIMEOUT  *$np  *$nf " out/knobs.log ||
	fail "the summary's counts are not the output's $np PASS / $nf FAIL lines: $(grep '^knob_sanity ' out/knobs.log)"
tar -tzf out/knobs.tgz >tgz.list || fail "knobs.tgz does not list"
expect_grep '^knobs/knob_sanity.out$' tgz.list "the step's output in the archive"
if grep -q '\.mxw$' tgz.list; then fail "a dump in the archive"; fi

# part check (make check-gpu), the CPU standing in, 5 s a step: every lane
# at once, knob_speed (knob_sanity's speed comparisons) only after the last lane ended,
# each step in the summary, and the last lines the steps' counts
rc=0
OUT=$work/chk SESSION_STEP_S=5 sh "$S" --stand-in check >chk.out 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { cat chk.out >&2; fail "part check: exit $rc, expected 1 (steps cut short)"; }
expect_eq "$(cd chk && ls | tr '\n' ' ')" "check.log check.tgz " "part check: the files under OUT"
steps="bert_hf data_upload ddp knob_speed knob_static mc_bert_accept mc_bert_base mc_bert_base_s128 mc_bert_tiny mc_bert_tiny_s512 mc_mnist mc_resnet mc_resnet_tiny memory_vs_pytorch ops_check ops_full plan_cache"
for s in $steps; do
	grep -q "^$s " chk.out || fail "part check: step $s not in the summary"
done
# [HH:MM:SS] NAME: started / ... after Ns: knob_sanity starts after every other step's end
awk '/^\[[0-9:]+\] [a-z_0-9]+: / {
		split(substr($1, 2, 8), t, ":"); s = t[1] * 3600 + t[2] * 60 + t[3]; n = $2; sub(/:$/, "", n)
		if ($3 == "started,") { if (n == "knob_speed") ks = s; else starts++ }
		else if (n != "knob_speed" && s > last) last = s
	}
	END { if (ks == "" || starts < 12 || ks < last) { printf "knob_speed started at %s, the lanes ended at %s (%d lane steps started)\n", ks, last, starts; exit 1 } }' chk.out >order.out ||
	fail "part check: knob_speed did not run alone after the lanes: $(cat order.out)"
ok=$(awk -v l="$steps" 'BEGIN { n = split(l, a, " "); for (i = 1; i <= n; i++) s[a[i]] = 1 } ($1 in s) && $2 == "ok" { c++ } END { print c + 0 }' chk.out)
bad=$(awk -v l="$steps" 'BEGIN { n = split(l, a, " "); for (i = 1; i <= n; i++) s[a[i]] = 1 } ($1 in s) && $2 != "ok" && $2 != "SKIP" { c++ } END { print c + 0 }' chk.out)
expect_eq "$(tail -n 1 chk.out)" "$ok passed, $bad failed" "part check: the last line, the summary's steps counted"
[ "$bad" -gt 0 ] || fail "part check: no step cut short at 5 s"
expect_grep '^check-gpu: [0-9]* skipped$' chk.out "part check: the skipped count"

# a GPU listed by nvidia-smi (a stand-in nvidia-smi here) but the engine's
# CUDA probe not ok (no device here): the part fails at once, its steps not
# run (their SKIP would mean "no GPU" and the part would pass)
mkdir fakebin
printf '#!/bin/sh\n[ "$1" = -L ] && echo "GPU 0: NVIDIA H200 (UUID: GPU-stand-in)"\nexit 0\n' >fakebin/nvidia-smi
chmod +x fakebin/nvidia-smi
rc=0
PATH=$work/fakebin:$PATH OUT=$work/gate sh "$S" first >gate.out 2>&1 || rc=$?
expect_eq "$rc" 1 "a GPU with a failing CUDA probe: exit status"
expect_grep "^FAIL: a GPU is here but the engine's CUDA probe did not run ok" gate.out "the probe gate says why"
expect_grep '^probe  *FAIL(probe)' gate.out "the probe gate in the summary"
if grep '^==== step ' gate/first.log | grep -qv '^==== step probe:'; then
	fail "a step ran after the probe failed: $(grep '^==== step ' gate/first.log | grep -v '^==== step probe:' | head -n 1)"
fi
echo "ok: session.sh --list, usage errors, --record, two stand-in parts cut short ($np PASS, $nf FAIL counted), a failed CUDA probe stops a part"
