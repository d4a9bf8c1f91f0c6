# The report's "Measurement quality" section and the run's closing quality
# line name what in a run deserves doubt (issue 12, item 4), from the
# results.csv columns an engine's record fills: here a command engine writes
# the GPU's clocks, temperature and throttle reasons and its thread count,
# and its three processes of point 'drift' disagree (steps of 100, 66 and
# 50 ms with 1 % intervals). Each kind is named for its points only,
# counted in the closing line, and the runner's own columns (load, CPU
# clock where /proc/cpuinfo gives one) are in every row.
. "$top_srcdir/tests/setup"
cat > r.yaml <<YAML
name: quality
engine: command
command: [sh, -c, 'c=\$(cat $work/count.{x} 2>/dev/null || echo 0); echo \$((c + 1)) > $work/count.{x}; t=100; [ {x} = drift ] && t=\$((100 + 50 * c)); s=\$((10000 / t)); printf "status=ok\nthroughput=%s\nstep_ms=%s\nstep_ms_lo=%s\nstep_ms_hi=%s\nunit=samples/s\nthreads={threads}\ngpu_sm_mhz_start=1980\ngpu_sm_mhz_end={mhz}\ngpu_temp_c_start=41\ngpu_temp_c_end=67\ngpu_throttle={thr}\n" \$t \$s \$((s * 99 / 100)) \$((s * 101 / 100)) > "\$MATRIX_RESULT"']
factors:
  x: [steady, drift]
  threads: ["1", "4096"]
  thr: [none, hw_slowdown]
  mhz: ["1980", "1410"]
exclude:
  - {x: drift, threads: "4096"}
  - {x: drift, thr: hw_slowdown}
  - {x: steady, thr: hw_slowdown, threads: "4096"}
  - {mhz: "1410", thr: none}
  - {mhz: "1980", thr: hw_slowdown}
repeat: 3
YAML
"$MATRIX" run r.yaml --out run > run.txt 2>&1 || { cat run.txt >&2; fail "the run failed"; }
"$MATRIX" expand r.yaml --format csv > points.csv
cat run.txt > all.txt
# the closing line: each kind counted
expect_grep '; 1 point with repeats that disagree beyond their CIs' run.txt "disagreeing repeats counted"
expect_grep '; 3 rows oversubscribed' run.txt "oversubscribed rows counted (one point, three processes)"
expect_grep '; GPU SM clock 1410..1980 MHz; GPU up to 67 C; 3 rows throttled' run.txt "GPU clocks, temperature and throttling"
# the report's section: each kind under its heading, its points named
r=run/report.md
expect_grep '^Points whose repeats disagree beyond their within-process intervals (1):' $r "disagree heading"
expect_grep '^- x=drift threads=1 thr=none mhz=1980 ([0-9a-f]*): 3 processes disagree beyond their within-process 95% CIs' $r "the drifting point named"
expect_grep '^Points that ran oversubscribed (more threads than cores at once) (3):' $r "oversubscribed heading"
expect_grep '^- x=steady threads=4096 thr=none mhz=1980 ([0-9a-f]*): oversubscribed: 1 points at once x 4096 threads \\> [0-9]* cores' $r "the oversubscribed point named"
expect_grep '^Points during which the GPU throttled (3):' $r "throttled heading"
expect_grep '^- x=steady threads=1 thr=hw_slowdown mhz=1410 ([0-9a-f]*): the GPU throttled while it ran (hw_slowdown)' $r "the throttled point named"
grep -q '^- x=steady threads=1 thr=none .*disagree' $r && fail "a steady point named as disagreeing"
grep -q '^- x=[a-z]* threads=1 .*oversubscribed' $r && fail "a one-thread point named as oversubscribed"
grep -q 'thr=none.*the GPU throttled' $r && fail "a point without throttling named as throttled"
# the runner's columns, in every row of results.csv
rows=$(($(wc -l < run/results.csv) - 1))
expect_eq "$rows" 12 "rows (4 points x 3 processes)"
for c in load_start cores concurrent gpu_throttle gpu_sm_mhz_end gpu_temp_c_end; do
	n=$(csv_col run/results.csv $c | grep -c .) || true
	expect_eq "$n" "$rows" "rows with a $c"
done
if grep -q '^cpu MHz' /proc/cpuinfo 2>/dev/null; then
	for c in cpu_mhz_start cpu_mhz_end; do
		n=$(csv_col run/results.csv $c | grep -c '^[0-9][0-9.]*$') || true
		expect_eq "$n" "$rows" "rows with a number in $c (/proc/cpuinfo gives the clock)"
	done
	expect_grep '; CPU clock [0-9]*\.\.[0-9]* MHz' run.txt "the CPU clock range"
else
	echo "note: /proc/cpuinfo gives no 'cpu MHz' here: cpu_mhz_start/end not checked"
fi
echo ok
