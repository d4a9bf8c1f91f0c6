# The epoch-time and memory metrics (issue 19, item 3) on a real native CPU
# run of 4 points (about 2 s): epoch_time is dataset_size / throughput with
# the throughput's interval, bounds swapped, where a point used synthetic
# data, and the engine's own epoch_s where it read real data (a 64-image IDX
# set written by tests/engine/mkidx.py); its improvements are 100 * (base -
# new) / base; peak_mem_bytes is shown in MiB, lower is better; epoch_time
# without dataset_size or a data factor, and unknown metrics, are errors.
. "$top_srcdir/tests/setup"
python3 "$top_srcdir/tests/engine/mkidx.py" idx
cat > ep.yaml <<'EOF'
name: ep
engine: native
device: cpu
measure: {warmup: 2, min_time: 0.05s, max_time: 0.2s, rel_ci: 0.5, timeout: 60s}
dataset_size: 1000
factors:
  model: [mnist_cnn]
  task: [train]
  batch: [8]
  threads: [1]
  data: [synthetic, idx]
  compile: [none, default]
baseline: {compile: none}
report:
  metric: epoch_time
  improvements: [{factor: compile, from: none, to: default, by: [data]}]
EOF
"$MATRIX" run ep.yaml --out run > run.txt 2>&1 || { cat run.txt >&2; fail "the run failed"; }
# points.csv (id,...,value,lo,hi,unit,...) against the rows of results.csv
# (one process per point: the point's value is its row's)
key() { # key ID NAME: the row's value of NAME, its column or its extra key
	python3 - "$1" "$2" <<'PY'
import csv, sys
for row in csv.DictReader(open("run/results.csv", newline="")):
    if row["id"] != sys.argv[1]:
        continue
    if sys.argv[2] in row:
        print(row[sys.argv[2]])
        break
    for kv in row["extra"].split("; "):
        if kv.startswith(sys.argv[2] + "="):
            print(kv.split("=", 1)[1])
PY
}
col() { awk -F, -v id="$1" -v k="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $1 == id { print $c[k] }' run/tables/points.csv; }
# close A B WHAT: equal to 6 significant digits (points.csv's precision)
close() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-5 * (b < 0 ? -b : b)) }' || fail "$3: $1, expected $2"; }
checked=0
for id in $(awk -F, 'NR > 1 { print $1 }' run/results.csv); do
	expect_eq "$(col "$id" unit)" s "epoch_time's unit"
	v=$(col "$id" value) lo=$(col "$id" lo) hi=$(col "$id" hi)
	if [ "$(key "$id" data)" = synthetic ]; then
		thr=$(key "$id" throughput) ms=$(key "$id" step_ms) slo=$(key "$id" step_ms_lo) shi=$(key "$id" step_ms_hi)
		close "$v" "$(awk -v t="$thr" 'BEGIN { printf "%.10g", 1000 / t }')" "epoch_time = dataset_size / throughput"
		# throughput's interval thr * ms / shi .. thr * ms / slo, the epoch's
		# dataset_size / thr_hi .. dataset_size / thr_lo: a point's interval
		# is symmetric on the log scale, its half-width the step interval's
		# wider side (ci_sides.sh)
		close "$(awk -v l="$lo" -v h="$hi" 'BEGIN { printf "%.10g", h / l }')" \
			"$(awk -v m="$ms" -v a="$slo" -v b="$shi" 'BEGIN { r = m / a; if (b / m > r) r = b / m; printf "%.10g", r * r }')" "epoch hi / lo"
	else
		close "$v" "$(key "$id" epoch_s)" "epoch_time = the engine's epoch_s"
		# the engine's interval about epoch_s, its wider side both ways
		close "$(awk -v l="$lo" -v h="$hi" 'BEGIN { printf "%.10g", h / l }')" \
			"$(awk -v v="$(key "$id" epoch_s)" -v l="$(key "$id" epoch_s_lo)" -v h="$(key "$id" epoch_s_hi)" 'BEGIN { r = v / l; if (h / v > r) r = h / v; printf "%.10g", r * r }')" "epoch_s hi / lo"
	fi
	awk -v l="$lo" -v v="$v" -v h="$hi" 'BEGIN { exit !(l < v && v < h) }' || fail "$id: interval $lo..$hi does not hold $v"
	checked=$((checked + 1))
done
expect_eq "$checked" 4 "points checked"
expect_grep 'Metric: epoch time (s), lower is better' run/report.md "the metric named with its unit"
# the normalised scatter draws gains (> 1 better) whatever the metric: its
# caption said "lower is better" on a time
norm=$(grep "relative to its group's baseline" run/report.md) || fail "no normalised scatter"
case $norm in *"higher is better."*) ;; *) fail "normalised caption: $norm" ;; esac
expect_grep "epoch_time is the time of one epoch.* 2 rows), else the recipe's dataset_size / throughput (dataset_size 1000 samples; 2 rows)" run/report.md "where each epoch_time came from"
# improvements on a time: 100 * (base - new) / base
awk -F, 'NR > 1 { w = 100 * ($6 - $7) / $6; d = $9 - w; if (d < 0) d = -d; if (d > 5e-3 + 1e-4 * (w < 0 ? -w : w)) { print "row " NR ": " $9 " != " w; bad = 1 } }
	END { exit bad }' run/tables/improvements.csv || fail "improvement_pct is not 100 * (base - new) / base"
expect_eq "$(awk -F, 'NR > 1' run/tables/improvements.csv | wc -l | tr -d ' ')" 2 "improvement rows"
# peak memory: MiB, lower is better, in tables, figures and pages
expect_status 0 "$MATRIX" report --quiet --metric peak_mem_bytes run
for id in $(awk -F, 'NR > 1 { print $1 }' run/results.csv); do
	expect_eq "$(col "$id" unit)" MiB "peak memory's unit"
	close "$(col "$id" value)" "$(awk -v b="$(key "$id" peak_mem_bytes)" 'BEGIN { printf "%.10g", b / 1048576 }')" "peak memory in MiB"
done
expect_grep 'Metric: peak memory (MiB), lower is better' run/report.md "peak memory named with its unit"
expect_grep 'set ylabel "peak memory (MiB), log scale"' run/plots/scatter_data_compile.gp "scatter axis in MiB"
expect_grep 'lower is better' run/report.md "lower is better in the pages"
expect_grep ',MiB,' run/tables/improvements.csv "improvements in MiB"
# errors: epoch_time needs dataset_size or a data factor; unknown metrics suggest
sed -e '/dataset_size/d' -e '/data: \[/d' -e 's/by: \[data\]/by: [batch]/' ep.yaml > nosize.yaml
expect_status 2 "$MATRIX" expand nosize.yaml 2> e1.txt
cat > e1.want <<'EOF'
nosize.yaml:13:11: metric 'epoch_time' needs 'dataset_size' (the samples in one epoch: epoch_time = dataset_size / throughput) or a 'data' factor (the engine's epoch_s from real data)
    metric: epoch_time
            ^
EOF
cmp e1.want e1.txt || { diff e1.want e1.txt >&2; fail "epoch_time without dataset_size"; }
sed 's/epoch_time/throughput/' nosize.yaml > thr.yaml
"$MATRIX" run thr.yaml --out plain --no-report > /dev/null 2>&1 || fail "the plain run failed"
expect_status 2 "$MATRIX" report --metric epoch_time plain 2> e2.txt
expect_grep "^matrix: no result in 'plain' has a metric 'epoch_time'$" e2.txt "epoch_time not computable"
expect_grep "epoch_time needs the recipe's dataset_size" e2.txt "what epoch_time needs"
expect_status 2 "$MATRIX" report --metric epoch_tme run 2> e3.txt
expect_grep "has a metric 'epoch_tme' (did you mean 'epoch_time'?)" e3.txt "suggestion"
expect_status 2 "$MATRIX" report --metric peak_mem 2> e4.txt run
expect_grep "(did you mean 'peak_mem_bytes'?)" e4.txt "suggestion"
echo ok
