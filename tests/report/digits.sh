# A value never reads as outside its own interval (issue 12: honest
# uncertainty): where an interval's ends need more than 3 significant digits
# to read apart, the value beside them gets as many. A point of 30138.6
# samples/s with a 95% interval of 30134 .. 30143 read "30100" beside
# "30130 .. 30140" in report.md's per-point table, "30100 | 30100 | 30100"
# in the points table, a gain of 1.02446 [1.02424, 1.02468] "1.02 | 1.02 |
# 1.02" in the best table and "gain over the baseline 1.02 [1.024,
# 1.025]" in matrix run's summary. And the side-by-side improvement table
# rounded its improvement to one decimal, "2.4" beside the improvements
# table's "2.45" (2.4462), in its CSV file too, which keeps every digit.
. "$top_srcdir/tests/setup"
# A=on is 1.024462 times faster; every point's interval +-0.015 % (step_ms)
cat > digits.yaml <<'EOF'
name: digits
engine: command
command: [sh, -c, 't=30138.6; [ {A} = on ] && t=30875.85; printf "status=ok\nthroughput=%s\nunit=samples/s\nstep_ms=10\nstep_ms_lo=9.9985\nstep_ms_hi=10.0015\nsamples=50\n" $t > "$MATRIX_RESULT"']
factors:
  A: ["off", "on"]
  B: [x, y]
  C: [u, v]
baseline: {A: "off"}
report:
  metric: throughput
  improvements: [{factor: A, from: "off", to: "on", by: [B, C]}]
EOF
"$MATRIX" run digits.yaml --out run > run.out 2>&1 || { cat run.out >&2; fail "the run failed"; }

# every "V | LO .. HI" of the per-point table (report.md, report.html via
# export's Markdown, which is the same table) has LO <= V <= HI as read
inside() { # inside WHAT: stdin lines "V LO HI"
	awk -v what="$1" '{ if (!($2 + 0 <= $1 + 0 && $1 + 0 <= $3 + 0)) { print what ": " $0 " reads outside its interval"; bad = 1 } n++ }
		END { if (!n) { print what ": nothing read"; bad = 1 } exit bad }' >&2 || fail "$1"
}
sed -n '/^## Points/,/^## /p' run/report.md | awk -F' [|] ' '/ ok \|$/ { split($5, r, " [.][.] "); print $4, r[1], r[2] }' | inside "report.md per-point table"
expect_grep '^| off | x | u | 30140 | 30130 .. 30140 | ok |$' run/report.md "the value with its interval's digits"
"$MATRIX" export run --format markdown | awk -F' [|] ' '/ ok \|$/ { split($5, r, " [.][.] "); print $4, r[1], r[2] }' | inside "export --format markdown"
# points table: | id | A | B | C | processes | value | lo | hi | unit | ci_kind |
sed -n '/^### Points: estimate/,/^### /p' run/report.md | awk -F' [|] ' '/ within \|$/ { print $6, $7, $8 }' | inside "report.md points table"
# best table: | group | points | baseline | best | unit | gain | gain_lo | gain_hi | ...
sed -n '/^### Best configuration/,/^### /p' run/report.md | awk -F' [|] ' '/samples\/s/ { print $6, $7, $8 }' | inside "report.md best table"
expect_grep '| samples/s | 1.024 | 1.024 | 1.025 |' run/report.md "the best gain with its interval's digits"
# improvements: | factor | from | to | group | pairs | baseline | new | unit | pct | lo | hi |
sed -n '/^### Improvements$/,/^### /p' run/report.md | awk -F' [|] ' '/samples\/s/ { sub(/ [|]$/, "", $11); print $9, $10, $11 }' | inside "report.md improvements table"
# the HTML page shows the same cells
grep -q '<td class="num">30140</td><td>30130 .. 30140</td>' run/report.html || fail "report.html: the value without its interval's digits"
# matrix run's summary: "best A=on: V samples/s [LO, HI]; gain over the baseline G [GLO, GHI]"
grep 'best A=on' run.out | sed 's/.*: \([0-9.]*\) samples\/s \[\([0-9.]*\), \([0-9.]*\)\].*/\1 \2 \3/' | inside "summary: the best value"
grep 'best A=on' run.out | sed 's/.*baseline \([0-9.]*\) \[\([0-9.]*\), \([0-9.]*\)\].*/\1 \2 \3/' | inside "summary: the gain"
expect_grep 'gain over the baseline 1.024 \[1.024, 1.025\]' run.out "the summary's gain"
# one process a point: the gain's interval says that it leaves out the
# variation between processes (bert_tiny's channels_last, which the engine
# ignores, showed a gain of 1.17 [1.15, 1.2] between two processes here)
expect_grep 'gain over the baseline 1.024 \[1.024, 1.025\] (one process a point: the variation between processes is not in it; repeat: 3 or more decides)' run.out "the summary's within-process note"
expect_grep '4 of the 4 gains compare points measured in one process each (ci_kind within)' run/report.md "the best table's within-process note"
# with repeats the intervals hold it: no note
sed 's/^baseline:/repeat: 3\nbaseline:/' digits.yaml > rep.yaml
"$MATRIX" run rep.yaml --out rep > rep.out 2>&1 || { cat rep.out >&2; fail "the run with repeats failed"; }
expect_grep 'gain over the baseline' rep.out "the summary with repeats"
if grep -q 'one process a point' rep.out; then fail "a within-process note with repeat: 3: $(cat rep.out)"; fi
if grep -q 'measured in one process each' rep/report.md; then fail "the best table's note with repeat: 3"; fi
expect_grep "Points measured in one process each: the whiskers hold the noise inside each process only" run/report.md "the normalised figure's within-process note"
if grep -q 'Points measured in one process each' rep/report.md; then fail "the normalised figure's note with repeat: 3"; fi
# the baseline-vs-optimal figure prints each gain's interval under it: its
# caption says the same as the best table (the figure had no note)
expect_grep "Configurations in tables/best.csv. 4 of the 4 gains in tables/best.csv compare points measured in one process each: their intervals hold the noise inside each process only" run/report.md "the best figure's within-process note"
if grep -q 'gains in tables/best.csv compare points' rep/report.md; then fail "the best figure's note with repeat: 3"; fi
expect_grep "jittered sideways, whiskers its 95% interval (one process a point: the noise inside that process only" run/report.md "the scatter's within-process note"
expect_grep "jittered sideways, whiskers its 95% interval;" rep/report.md "the scatter's whiskers with repeats"
# the side-by-side improvements: 3 significant digits on the page as in the
# improvements table, every digit in its CSV file
expect_grep '^| x | 30100 | 30100 | 30900 | 30900 | 2.45 | 2.45 |$' run/report.md "side-by-side improvement %"
awk -F, 'NR == 2 { d = $NF - 2.4462; if (d < 0) d = -d; ok = d < 1e-4 } END { exit !ok }' run/tables/improvements_1.csv ||
	fail "tables/improvements_1.csv: the improvement not with every digit: $(cat run/tables/improvements_1.csv)"
