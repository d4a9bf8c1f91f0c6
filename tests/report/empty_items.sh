# A report item the recipe asks for that the rows cannot give says why
# (issue 21: honest reports): recipes/cpu_vs_gpu.yaml's improvement device
# cpu -> cuda on a machine without a GPU (every cuda point unsupported) was
# left out of the improvements table without a word; its caption now says
# "No row for device cpu -> cuda: no point at device=cuda has a value of
# epoch_time (the last table says why)", and an item whose levels were both
# measured but never in a matched pair says that instead. The effects table
# names the levels it has no row for in the same way. The per-point table
# has one row per point: a point's repeats that failed alike are one row
# ("unsupported (2 processes)"), where they were a row each, alike; and the
# quality notes on one process name its repeat.
. "$top_srcdir/tests/setup"
cat > r.yaml <<'YAML'
name: empty_items
engine: command
command: [sh, -c, 'if [ {dev} = gpu ]; then printf "status=unsupported\nreason=no GPU here\n" > "$MATRIX_RESULT"; exit 3; fi; printf "status=ok\nthroughput=%s\nunit=samples/s\nstep_ms=1\nstep_ms_lo=0.99\nstep_ms_hi=1.01\nci_met=0\nrel_ci=0.01\n" {n}00 > "$MATRIX_RESULT"']
factors:
  dev: [cpu, gpu]
  n: [1, 2]
  k: [a, b]
  m: [x, y]
exclude:
  - {k: a, m: y}
  - {k: b, m: x}
baseline: {dev: cpu, n: 1}
repeat: 2
report:
  improvements:
    - {factor: dev, from: cpu, to: gpu, by: [n, k]}
    - {factor: k, from: a, to: b}
    - {factor: n, from: 1, to: 2, by: [dev]}
YAML
"$MATRIX" run r.yaml --out run > run.txt 2>&1 || { cat run.txt >&2; fail "the run failed"; }
cap=$(sed -n '/^### Improvements$/,/^| factor/p' run/report.md | sed -n 3p)
case $cap in
*"No row for dev cpu -\> gpu: no point at dev=gpu has a value of throughput (the last table says why). No row for k a -\> b: no two measured points differ in k alone.") ;;
*) fail "improvements caption: $cap" ;;
esac
# k changes with m: both measured, never in a pair; n 1 -> 2 has its rows
expect_grep '^| n | 1 | 2 | dev=cpu | 2 | 100 | 200 | samples/s | 100 | ' run/report.md "n 1 -> 2 on the cpu"
grep -q 'No row for n 1' run/report.md && fail "n 1 -> 2 said to have no row" || true
cap=$(sed -n '/^### Effects: what/,/^| factor/p' run/report.md | sed -n 3p)
case $cap in
*"Sorted by size. No matched pair of measured points, so no row: dev cpu -\> gpu, k a -\> b, m x -\> y.") ;;
*) fail "effects caption: $cap" ;;
esac
pp=$(sed -n '/^## Points/,/^## /p' run/report.md | grep '^| [a-z]* | [12] |')
expect_eq "$(echo "$pp" | grep -c '^| gpu |')" 4 "one row per gpu point"
expect_grep '^| gpu | 1 | a | x |  |  | unsupported (2 processes) |$' run/report.md "a point's two unsupported processes: one row"
expect_eq "$(echo "$pp" | grep -c '^| cpu |')" 4 "one row per cpu point"
expect_grep "8 measured with a value of throughput (4 distinct points after merging repeats)" run/report.md "the count line"
# the measurement quality notes on one row name its repeat, as matrix run's
# lines do: a point's two processes that missed the CI target read alike
expect_grep '^- dev=cpu n=1 k=a m=x ([0-9a-f]*): missed the CI target' run/report.md "the first process's note"
expect_grep '^- dev=cpu n=1 k=a m=x repeat=1 ([0-9a-f]*): missed the CI target' run/report.md "the second process's note names its repeat"
# its side-by-side table (two by factors) says the same over its "(none)"
cap=$(sed -n '/^### Improvement of dev cpu -\\> gpu by k, side by side$/,/^(none)$/p' run/report.md | sed -n 3p)
case $cap in
*"(values in samples/s; the 95% intervals are in tables/improvements.csv). No row for dev cpu -\> gpu: no point at dev=gpu has a value of throughput (the last table says why).") ;;
*) fail "side-by-side caption: $cap" ;;
esac
