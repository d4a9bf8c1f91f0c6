#!/bin/sh
# profile.sh - per-op profiles (issue 19 item 4): matrix-engine --profile
# FILE writes one CSV row per op of the step (and the input pipeline with
# --data) over 20 steps after the timed ones; the PyTorch engine writes the
# same columns from torch.profiler; a recipe's 'profile: on' gives every
# point DIR/profiles/ID.csv; bad values and a command engine are located
# recipe errors; a profile that cannot be written is refused before the point runs; runs
# merged keep each point's profile (issue 19, item 2).
. "$top_srcdir/tests/setup"
E=${MATRIX_ENGINE:?}
key() { sed -n "s/^$1=//p" "$2"; }
header="op,kind,calls,total_ms,mean_ms,pct_step,mem_bytes"

# check_csv FILE ROWS [CALLS [BYKIND]]: the header, ROWS rows (or any when
# empty), calls CALLS (when given), total = calls x mean (to the printed
# digits), percentages summing to 100 (per kind with BYKIND: the PyTorch
# engine's cpu and cuda times are two clocks)
check_csv() {
	expect_eq "$(head -n 1 "$1")" "$header" "$1: header"
	n=$(($(wc -l <"$1") - 1))
	[ -z "$2" ] || expect_eq "$n" "$2" "$1: rows"
	[ "$n" -gt 0 ] || fail "$1: no rows"
	awk -F, -v want="${3:-}" -v bykind="${4:-}" 'NR > 1 {
		if (want != "" && $3 != want) { print "calls " $3 " in: " $0; bad = 1 }
		if ($4 < 0 || $5 < 0 || $7 < 0) { print "negative: " $0; bad = 1 }
		d = $4 - $3 * $5; if (d < 0) d = -d
		if (d > 1e-4 * $4 + 1e-6) { print "total != calls x mean: " $0; bad = 1 }
		pct[bykind != "" ? $2 : "all"] += $6 }
		END { for (k in pct) if (pct[k] < 99.5 || pct[k] > 100.5) { print k ": percentages sum to " pct[k]; bad = 1 }
		exit bad }' "$1" || fail "$1: rows inconsistent"
}

# the native engine: every op of the step, in order, plus the pipeline
"$E" --model mnist_cnn --task train --batch 8 --threads 1 --warmup 2 --steps 5 --profile p/n.csv --result r 2>/dev/null
ops=$(key ops_per_step r)
check_csv p/n.csv "$ops" 20
expect_eq "$(sed -n 2p p/n.csv | cut -d, -f1-3)" "conv1,conv,20" "first row"
expect_grep "^conv1,conv_bwd,20," p/n.csv "a backward op"
expect_grep "^fc2.bias,sgd,20," p/n.csv "an optimizer op"
expect_eq "$(key profile r)" p/n.csv "profile key"
expect_eq "$(key profile_steps r)" 20 "profile_steps"
expect_eq "$(key samples r)" 5 "the timed steps are the ones asked for"
[ "$(awk -F, '$2 == "conv" { print $7 }' p/n.csv | head -n 1)" -gt 0 ] || fail "conv1 writes no bytes"
python3 "$top_srcdir/tests/engine/mkidx.py" mnist
"$E" --model mnist_cnn --task train --batch 8 --threads 1 --warmup 0 --steps 3 --data mnist --profile p/d.csv --result r 2>/dev/null
check_csv p/d.csv $((ops + 1)) 20
expect_grep "^input_pipeline,data,20," p/d.csv "the input pipeline row"
"$E" --model resnet_tiny --task infer --batch 2 --threads 1 --warmup 0 --steps 2 --profile p/i.csv --result r 2>/dev/null
check_csv p/i.csv "$(key ops_per_step r)" 20
# MATRIX_ENGINE_PROFILE=1 (the timed steps op by op) with --profile: both; the file was never
# written, and the record named it with profile_step_ms=0
rm -f p/both.csv
MATRIX_ENGINE_PROFILE=1 "$E" --model mnist_cnn --batch 4 --threads 1 --warmup 0 --steps 2 --profile p/both.csv --result rb 2>errb
check_csv p/both.csv "$(key ops_per_step rb)" 20
expect_grep "ms/step" errb "MATRIX_ENGINE_PROFILE=1 with --profile: the table on stderr"
awk -v v="$(key profile_step_ms rb)" 'BEGIN { exit !(v > 0) }' || fail "MATRIX_ENGINE_PROFILE=1 with --profile: profile_step_ms=$(key profile_step_ms rb)"

# a profile that cannot be written: refused before the run (exit 2, tests/engine/outputs.sh), said on stderr
: >notdir
set +e; "$E" --batch 4 --threads 1 --warmup 0 --steps 1 --profile notdir/sub/x.csv --result r 2>err; rc=$?; set -e
expect_eq "$rc" 2 "unwritable profile"
expect_grep "^matrix-engine: --profile: 'notdir/sub/x.csv': Not a directory" err "its message"

# the PyTorch engine: the same columns
if [ -n "${PYTHON_TORCH:-}" ]; then
	"$PYTHON_TORCH" "$top_srcdir/engine/pytorch/matrix_torch.py" --model mnist_cnn --task train --batch 8 --threads 1 \
		--device cpu --warmup 1 --steps 3 --data mnist --profile p/t.csv --result rt 2>/dev/null
	check_csv p/t.csv "" "" bykind
	expect_eq "$(key status rt)" ok "pytorch status"
	expect_eq "$(key profile_steps rt)" 20 "pytorch profile_steps"
	expect_grep "^aten::convolution_backward,cpu,40," p/t.csv "pytorch: the convolutions' backward, 2 a step"
	expect_grep "^aten::index,cpu," p/t.csv "pytorch: the pipeline's gather"
else
	echo "note: no python3 with torch: the PyTorch engine's profile not checked"
fi

# the runner: profile: on
cat >p.yaml <<YAML
name: prof
engine: native
device: cpu
measure: {warmup: 1, min_time: 0.02s, max_time: 0.1s, rel_ci: 0.05, timeout: 60s}
factors:
  model: [mnist_cnn]
  batch: [4, 8]
  threads: [1]
profile: on
YAML
"$MATRIX" run p.yaml --out run >out 2>&1 || { cat out; fail "matrix run with profile: on"; }
for id in $(csv_col run/plan.csv id); do
	check_csv "run/profiles/$id.csv" "" 20
	expect_grep "^$id,.* --profile run/profiles/$id.csv --result run/logs/$id.result" run/plan.csv "--profile in the command"
done
# the report: the top ops of each point, the points side by side
expect_eq "$(head -n 1 run/tables/profile_top.csv)" "point,op,kind,calls,total_ms,mean_ms,pct_step" "profile_top header"
expect_eq "$(($(wc -l <run/tables/profile_top.csv) - 1))" 10 "5 ops of each of 2 points"
expect_eq "$(csv_col run/tables/profile_top.csv point | sort -u | tr '\n' ' ')" "batch=4 batch=8 " "its points"
awk -F, 'NR > 2 && $1 == p && $5 + 0 > t + 0 { exit 1 } { p = $1; t = $5 }' run/tables/profile_top.csv ||
	fail "profile_top: not sorted by total time"
expect_eq "$(head -n 1 run/tables/profile_side.csv)" "op,kind,batch=4,batch=8" "profile_side header"
expect_eq "$(($(wc -l <run/tables/profile_side.csv) - 1))" 12 "the 12 ops with the largest share"
expect_grep "^### Per-op profile: the top ops of each point" run/report.md "report.md: top ops"
expect_grep "Per-op profile: the points side by side" run/report.html "report.html: side by side"
# repeats (fresh processes of one point, each with its own profile) are one
# point in the tables, each number the median over its processes; they were
# a column each, labelled "#1", "#2" after the first
sed 's/^profile: on/profile: on\nrepeat: 3/' p.yaml > pr.yaml
"$MATRIX" run pr.yaml --out runr >out 2>&1 || { cat out; fail "matrix run with repeat: 3"; }
expect_eq "$(ls runr/profiles | wc -l | tr -d ' ')" 6 "a profile per process"
expect_eq "$(head -n 1 runr/tables/profile_side.csv)" "op,kind,batch=4,batch=8" "repeats: profile_side header"
expect_eq "$(csv_col runr/tables/profile_top.csv point | sort -u | tr '\n' ' ')" "batch=4 batch=8 " "repeats: its points"
expect_grep "each number the median over its processes' profiles" runr/report.md "repeats: the caption says the median"
# batch=4's conv2 forward total: the median of its three processes' totals
want=$(for id in $(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $c["batch"] == 4 { print $c["id"] }' runr/plan.csv); do
	awk -F, '$1 == "conv2" && $2 == "conv" { print $4 }' "runr/profiles/$id.csv"; done | sort -g | sed -n 2p)
got=$(awk -F, '$1 == "batch=4" && $2 == "conv2" && $3 == "conv" { print $5 }' runr/tables/profile_top.csv)
[ -n "$want" ] && [ -n "$got" ] || fail "repeats: no conv2 total (want '$want', got '$got')"
awk -v a="$want" -v b="$got" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-5 * a) }' ||
	fail "repeats: batch=4 conv2 total $got, the median of its processes is $want"
# runs merged (issue 19, items 2 and 4): each point's profile follows its
# point, from the run's copy runs/N, labelled with its run; the points a
# factor not in every run leaves out have none
sed 's/^  batch: .*/  batch: [4, 16]\n  compile: [none, default]/' p.yaml >p2.yaml
"$MATRIX" run p2.yaml --out run2 >out 2>&1 || { cat out; fail "matrix run p2.yaml"; }
expect_eq "$(ls run2/profiles | wc -l)" 4 "run2: a profile per point"
"$MATRIX" report run run2 --out merged >out 2>&1 || { cat out; fail "matrix report run run2"; }
expect_eq "$(csv_col merged/tables/profile_top.csv point | uniq | tr '\n' ',')" \
	"batch=4 (run 1),batch=8 (run 1),batch=4 (run 2),batch=16 (run 2)," "merged: the points' profiles in run and plan order"
expect_eq "$(($(wc -l <merged/tables/profile_top.csv) - 1))" 20 "merged: 5 ops of each of 4 points"
expect_eq "$(head -n 1 merged/tables/profile_side.csv)" \
	"op,kind,batch=4 (run 1),batch=8 (run 1),batch=4 (run 2),batch=16 (run 2)" "merged: profile_side header"
expect_grep "of run N: runs/N/profiles/ID.csv" merged/report.md "merged: where the profiles are"
# the op with the most time in run 2's batch=16 point is its file's, not another point's
id16=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$c["batch"] == 16 && $c["compile"] == "none" { print $c["id"] }' run2/plan.csv)
[ -n "$id16" ] || fail "no id for batch=16 compile=none in run2/plan.csv"
expect_eq "$(grep '^batch=16 (run 2),' merged/tables/profile_top.csv | head -n 1 | cut -d, -f2,3,5)" \
	"$(tail -n +2 "run2/profiles/$id16.csv" | sort -t, -k4,4 -g -r | head -n 1 | cut -d, -f1,2,4)" \
	"merged: the top op of batch=16 (run 2) is from runs/2/profiles/$id16.csv"
# matrix merge, then report: the same
"$MATRIX" merge run run2 --out m2 --quiet >/dev/null 2>&1 || fail "matrix merge run run2"
"$MATRIX" report m2 >/dev/null 2>&1 || fail "matrix report m2"
cmp -s merged/tables/profile_side.csv m2/tables/profile_side.csv || fail "matrix merge + report: another profile_side"
rm -r run/profiles
"$MATRIX" report run >/dev/null 2>&1 || fail "matrix report without profiles"
! grep -q "Per-op profile" run/report.md || fail "report.md shows profiles the run no longer has"
sed 's/^profile: on/profile: maybe/' p.yaml >bad1.yaml
set +e; "$MATRIX" expand bad1.yaml >out 2>err; rc=$?; set -e
expect_eq "$rc" 2 "profile: maybe"
expect_eq "$(head -n 1 err)" "bad1.yaml:9:10: 'profile' must be 'off' or 'on', not 'maybe'" "its message"
sed 's/^engine: native/engine: command\ncommand: [true]/' p.yaml | sed 's/^  model:.*//; s/^  threads:.*//' >bad2.yaml
set +e; "$MATRIX" expand bad2.yaml >out 2>err; rc=$?; set -e
expect_eq "$rc" 2 "profile: on with a command engine"
expect_grep "'profile: on' needs the native or pytorch engine (a command engine writes no per-op profile)" err "its message"
echo "ok   profile.sh"
