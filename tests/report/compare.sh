# matrix compare: B is A with every point of model=big, A=on 20 % slower;
# the geometric mean is 0.8^(11/46). Every point was measured in one process
# a side, so none is decided (issue 12: one process says nothing of a point's
# variation between processes): all 46 are 'unreplicated', the 11 slower ones
# beyond their intervals and the run noise (the default 3%: each point's 95%
# CI is 0.8 x exp(+-sqrt((2 log 1.02)^2 + log(1.03)^2))), and
# --fail-on-regression calls them possible regressions, exit 1; extreme
# values widen their columns instead of overflowing them. The decided
# verdicts (faster, SLOWER, small) on replicated points: tests/stats/run_noise.sh.
. "$top_srcdir/tests/setup"
sed "s|@ENGINE@|$top_srcdir/tests/report/engine.sh|" "$top_srcdir/tests/report/known.yaml.in" > known.yaml
"$MATRIX" run known.yaml --out a > /dev/null 2>&1 || [ $? = 1 ] || fail "run failed"
mkdir b && cp a/recipe.yaml b/
# columns: 4 model, 5 A, 11 throughput, 13-15 step_ms and its CI
awk -F, 'BEGIN { OFS = "," } NR > 1 && $4 == "big" && $5 == "on" && $11 != "" {
	$11 = $11 * 0.8; $13 = $13 / 0.8; $14 = $14 / 0.8; $15 = $15 / 0.8 } { print }' a/results.csv > b/results.csv
expect_status 0 "$MATRIX" compare a b > out.txt
# numbers with 3 significant digits (issue 21, item 2)
expect_grep '^46 matched points (0 only in A, 0 only in B); geometric mean gain 0.948 (95% CI 0.91..0.988) = -5.2%$' out.txt "geometric mean"
expect_grep '^significant and at least 2% apart: 0 faster, 0 slower; 0 within noise$' out.txt "nothing decided"
expect_grep '^unreplicated: 46 points measured in one process on a side (11 of them beyond their interval): their changes are shown but not decided' out.txt "unreplicated points counted"
expect_grep '^model=big A=on B=off C=x gpus=1  *37.5  *30  *0.8  *0.761..0.841  *-20%  *1/1  CI+spread (1 p.) unreplicated$' out.txt "one point"
grep -q 'SLOWER\|faster$' out.txt && fail "an unreplicated point was decided"
grep -q '^regression\|^possible regression' out.txt && fail "a regression line without --fail-on-regression"
# a CI gate does not pass what it could not decide: possible regressions
expect_status 1 "$MATRIX" compare a b --fail-on-regression 10% > out10p.txt
expect_grep '^possible regression: 11 unreplicated points slower by more than 10% beyond their interval (one process on a side: confirm with repeat: 3)$' out10p.txt "percent sign accepted"
expect_status 1 "$MATRIX" compare a b --fail-on-regression 10 > out10.txt
expect_grep '^possible regression: 11 unreplicated points' out10.txt "possible regression line"
grep -q '^regression:' out10.txt && fail "unreplicated points counted as decided regressions"
expect_status 0 "$MATRIX" compare a b --fail-on-regression 25 > /dev/null
# a threshold above the change: no possible regression either
expect_status 0 "$MATRIX" compare a b --threshold 25% --fail-on-regression 10 > /dev/null
# a side that ran on a busy machine (load average above the cores) is said;
# the runs above carry this machine's real load (make -j check): set here
mkdir calm busy && cp a/recipe.yaml calm/ && cp a/recipe.yaml busy/
awk -F, 'BEGIN { OFS = "," } NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; print; next }
	$col["status"] == "ok" { $col["load_start"] = 0 } { print }' a/results.csv > calm/results.csv
awk -F, 'BEGIN { OFS = "," } NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; print; next }
	$col["status"] == "ok" && n++ < 5 { $col["load_start"] = 2 * $col["cores"] + 1.5 } { print }' calm/results.csv > busy/results.csv
expect_status 0 "$MATRIX" compare calm calm > calm.txt
grep -q '^note: [AB]: .* rows started with more load than cores' calm.txt && fail "a busy-machine note on quiet runs"
expect_status 0 "$MATRIX" compare calm busy > busy.txt
expect_grep '^note: B: 5 of [0-9]* rows started with more load than cores (load average up to [0-9.]*): on a busy machine whole runs shift far beyond the run noise' busy.txt "the busy side named"
expect_status 0 "$MATRIX" compare calm busy --format json > busy.json
expect_grep '"busy_rows_a": 0, "busy_rows_b": 5,' busy.json "json: busy rows"
# Markdown (a pull request's comment) says it too, and the regressions that
# otherwise only the exit status carried
expect_status 0 "$MATRIX" compare calm busy --format markdown > busy.md
expect_grep '^\*\*note\*\*: B: 5 of [0-9]* rows started with more load than cores' busy.md "markdown: the busy side named"
# a point without an interval (a row with no CI): the geometric mean keeps
# one, from the scatter of the gains, and says so; it had none at all
mkdir noci && cp a/recipe.yaml noci/
awk -F, 'BEGIN { OFS = "," } NR > 1 && $4 == "big" && $5 == "on" && $11 != "" && !done { $14 = ""; $15 = ""; done = 1 } { print }' b/results.csv > noci/results.csv
expect_status 0 "$MATRIX" compare a noci > noci.txt
expect_grep '^46 matched points (0 only in A, 0 only in B); geometric mean gain 0.948 (95% CI 0.[0-9]*..0.9[0-9]*, from the scatter of the 46 gains: 1 point has no interval of its own) = -5.2%$' noci.txt "geometric mean with a point without an interval"
expect_grep ', 1 without a CI$' noci.txt "the point without an interval counted"
expect_status 0 "$MATRIX" compare a noci --format markdown > noci.md
expect_grep 'geometric mean gain 0.948 (95% CI 0.[0-9]* .. 0.9[0-9]*, from the scatter of the 46 gains: 1 point has no interval of its own)' noci.md "markdown: the same"
# the same on step time: the gain does not depend on the metric's direction
expect_status 0 "$MATRIX" compare --metric step_ms a b > ms.txt
expect_grep 'geometric mean gain 0.948 ' ms.txt "step time geometric mean"
# bad input
# --format (issue 21, item 2): JSON and CSV with every digit, Markdown as
# the terminal's table (3 significant digits); the same exit status
expect_status 0 "$MATRIX" compare a b --format json > c.json
expect_status 0 "$MATRIX" compare a b --format csv > c.csv
expect_status 0 "$MATRIX" compare a b --format markdown > c.md
expect_status 1 "$MATRIX" compare a b --format csv --fail-on-regression 10 > /dev/null
expect_status 1 "$MATRIX" compare a b --format markdown --fail-on-regression 10 > reg.md
expect_grep '^\*\*possible regression\*\*: [0-9]* unreplicated points slower by more than 10% beyond their interval' reg.md "markdown: the possible regression said"
grep -q 'regression' c.md && fail "markdown: a regression line without --fail-on-regression"
expect_eq "$(head -2 c.md)" "| point | A | B | gain | 95% CI | change | verdict |
| --- | ---: | ---: | ---: | ---: | ---: | --- |" "markdown header"
expect_grep '^| model=big A=on B=off C=x gpus=1 | 37.5 | 30 | 0.8 | 0.761 .. 0.841 | -20% | unreplicated |$' c.md "markdown row"
expect_grep '^46 matched points (0 only in A, 0 only in B); geometric mean gain 0.948 (95% CI 0.91 .. 0.988); 0 faster, 0 slower, 0 within noise, 46 unreplicated (one process on a side: change shown, not decided).$' c.md "markdown summary"
expect_eq "$(head -1 c.csv)" "model,A,B,C,gpus,metric,unit,value_a,value_b,gain,gain_lo,gain_hi,run_noise_pct,change_pct,processes_a,processes_b,test,p,verdict" "csv header"
expect_eq "$(tail -n +2 c.csv | wc -l)" 46 "csv: a row per match"
if command -v python3 > /dev/null; then
	python3 - c.json c.csv <<'PY' || fail "the JSON does not parse or disagrees with the CSV"
import csv, json, sys
j = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
s = j["summary"]
assert (s["matched"], s["only_a"], s["only_b"], s["slower"], s["faster"], s["within_noise"]) == (46, 0, 0, 0, 0, 0), s
assert (s["unreplicated"], s["unreplicated_beyond_ci"], s["possible_regressions"]) == (46, 11, 0), s
assert abs(s["geomean_gain"] - 0.8 ** (11 / 46)) < 1e-12, s
assert j["metric"]["name"] == "throughput" and j["a"] == "a" and j["b"] == "b"
assert len(j["points"]) == len(rows) == 46
for p, r in zip(j["points"], rows):
    assert p["factors"] == {k: r[k] for k in ("model", "A", "B", "C", "gpus")}, (p, r)
    assert p["value_a"] == float(r["value_a"]) and p["gain"] == float(r["gain"]), (p, r)
    assert p["gain_ci95"] == [float(r["gain_lo"]), float(r["gain_hi"])] and p["verdict"] == r["verdict"]
    assert p["id_a"] == p["id_b"] and len(p["id_a"]) == 16
assert all(p["verdict"] == "unreplicated" for p in j["points"])
slow = [p for p in j["points"] if p["gain_ci95"][1] < 1]
assert len(slow) == 11 and all(p["factors"]["model"] == "big" and p["factors"]["A"] == "on" for p in slow)
assert all(abs(p["gain"] - 0.8) < 1e-9 for p in slow)
PY
fi
expect_status 2 "$MATRIX" compare a b --format xml 2> err5.txt
expect_eq "$(cat err5.txt)" "matrix: compare: unknown format 'xml' (expected table, json, csv or markdown)" "bad format"
expect_status 2 "$MATRIX" compare a 2> err1.txt
expect_grep 'usage: matrix compare' err1.txt "usage"
expect_status 2 "$MATRIX" compare a b --fail-on-regression lots 2> err2.txt
expect_grep "^matrix: --fail-on-regression wants a percentage >= 0 (like 5%), not 'lots'$" err2.txt "bad percentage"
expect_status 2 "$MATRIX" compare a b --threshold -1% 2> err4.txt
expect_grep "^matrix: --threshold wants a percentage >= 0 (like 5%), not '-1%'$" err4.txt "bad threshold"
mkdir empty
expect_status 2 "$MATRIX" compare a empty 2> err3.txt
expect_grep "'empty' is not a run directory (no recipe.yaml)" err3.txt "not a run directory"
# extreme values (a gain of 1e+300, its interval 20 characters wide): every
# column as wide as its widest cell, so each number ends where its heading
# does, on every line of the table
mkdir huge && cp a/recipe.yaml huge/
awk -F, 'BEGIN { OFS = "," } NR > 1 && $4 == "big" && $11 != "" {
	$11 = $11 * 1e300; $13 = $13 / 1e300; $14 = $14 / 1e300; $15 = $15 / 1e300 } { print }' a/results.csv > huge/results.csv
expect_status 0 "$MATRIX" compare a huge > huge.txt
expect_grep ' 1e+300 9.52e+299..1.05e+300  +1e+302%   1/1  CI+spread (1 p.) unreplicated$' huge.txt "a huge gain"
awk '/^point / { head = $0; for (i = 1; i <= 6; i++) { split("A B gain 95%_CI change procs", h, " ")
		name = h[i]; sub("_", " ", name); end[i] = index(head, " " name " ") + length(name) }; next }
	head != "" && NF == 0 { exit }
	head != "" { for (i = 1; i <= 6; i++) if (substr($0, end[i], 1) == " " || substr($0, end[i] + 1, 1) != " ") {
		print "column " i " does not end at " end[i] ": " $0; bad = 1 } }
	END { exit bad || head == "" }' huge.txt || fail "compare: a column overflows its width (huge.txt)"
# every process of a point gave one value (a command engine's exact
# answer), 4 a side, B = 0.8 x A: the U test's interval is the shift itself
# widened by the run noise, 0.8 / 1.03 .. 0.8 x 1.03; it was empty (no
# shift between two differences when all are alike): a SLOWER point with
# no interval, gain_ci95 null in JSON
for v in 100 80; do
	cat > const$v.yaml <<YAML
name: const
engine: command
command: [sh, -c, 'printf "status=ok\\nthroughput=$v\\nunit=samples/s\\nstep_ms=10\\nstep_ms_lo=9.9\\nstep_ms_hi=10.1\\n" > "\$MATRIX_RESULT"', "{k}"]
factors:
  k: [1]
repeat: 4
YAML
	"$MATRIX" run const$v.yaml --out const$v --no-report > /dev/null 2>&1 || fail "the run const$v failed"
done
expect_status 0 "$MATRIX" compare const100 const80 > const.txt
expect_grep '^(all) *100 *80 *0.8 *0.777..0.824 *-20% *4/4  U p=0.029 *SLOWER$' const.txt "a tied point's interval"
# throughputs in different units (runs/s from matrix time or a command
# engine beside samples/s) are not the same quantity: exit 2, as a run does
# not compare such rows among its own (7a5ab46); compare read B's runs/s as
# samples/s and called every point unchanged
for u in samples runs; do
	cat > unit_$u.yaml <<YAML
name: units
engine: command
command: [sh, -c, 'printf "status=ok\\nthroughput=100\\nunit=$u/s\\nstep_ms=10\\nstep_ms_lo=9.9\\nstep_ms_hi=10.1\\n" > "\$MATRIX_RESULT"', "{k}"]
factors:
  k: [1, 2]
YAML
	"$MATRIX" run unit_$u.yaml --out unit_$u --no-report > /dev/null 2>&1 || fail "the run unit_$u failed"
done
st=0
"$MATRIX" compare unit_samples unit_runs > units.txt 2> units.err || st=$?
expect_eq "$st" 2 "compare of runs in different units: exit status"
expect_eq "$(cat units.err)" "matrix: compare: the throughput of 'unit_samples' is in samples/s, that of 'unit_runs' in runs/s: not the same quantity, no gain between them" "units differ"
expect_status 0 "$MATRIX" compare unit_samples unit_runs --metric step_ms > /dev/null
# a factor named as a column of the CSV (gain, p, test, verdict...: a
# command engine's factors may be called anything) is factors.NAME, its
# path in the JSON, as in matrix export: the header had two 'gain' and two
# 'p' columns, and a tool that reads by name got either
cat > clash.yaml <<'YAML'
name: clash
engine: command
command: [sh, -c, 'printf "status=ok\nthroughput=%s\nunit=samples/s\nstep_ms=10\nstep_ms_lo=9.9\nstep_ms_hi=10.1\n" $((100 * $0)) > "$MATRIX_RESULT"', "{gain}", "{p}"]
factors:
  gain: [1, 2]
  p: [1, 2]
YAML
"$MATRIX" run clash.yaml --out clash --no-report > /dev/null 2>&1 || fail "the run with factors 'gain' and 'p' failed"
expect_status 0 "$MATRIX" compare clash clash --format csv > clash.csv
expect_eq "$(head -1 clash.csv)" "factors.gain,factors.p,metric,unit,value_a,value_b,gain,gain_lo,gain_hi,run_noise_pct,change_pct,processes_a,processes_b,test,p,verdict" "csv header: no column twice"
expect_eq "$(csv_col clash.csv factors.gain | sort | tr '\n' ' ')" "1 1 2 2 " "the factor's column"
expect_eq "$(csv_col clash.csv gain | tr '\n' ' ')" "1 1 1 1 " "the gain column"
# a level a spreadsheet would run as a formula is text there, as in export
cat > formula.yaml <<'YAML'
name: formula
engine: command
command: [sh, -c, 'printf "status=ok\nthroughput=100\nunit=samples/s\n" > "$MATRIX_RESULT"', "{cell}"]
factors:
  cell: ["=HYPERLINK(1)", "-1.5", "@x"]
YAML
"$MATRIX" run formula.yaml --out formula --no-report > /dev/null 2>&1 || fail "the run with formula levels failed"
expect_status 0 "$MATRIX" compare formula formula --format csv > formula.csv
expect_eq "$(csv_col formula.csv cell | sort | tr '\n' ' ')" "'=HYPERLINK(1) '@x -1.5 " "csv: formulas defused, numbers kept"
echo ok
