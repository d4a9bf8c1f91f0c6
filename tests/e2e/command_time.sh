# The command engine (issue 21, item 7): it runs in the recipe's directory
# with {recipe_dir} and {run_dir}, and with measure.metric: wall_time matrix
# times a command that writes no result file itself (`matrix time`): rows
# with wall_time, the median run and its interval from the runs, the runs
# counted; a command that fails is a failed point with its exit status
# (3 too: not 'unsupported'), a killed one dies of its signal; a resume from
# the run directory alone keeps the recipe's directory; each point's line
# shows its wall_time, not throughput; recipe errors.
. "$top_srcdir/tests/setup"
real=$(pwd -P)
mkdir rdir
cat > rdir/probe.sh <<'SH'
# probe.sh RECIPE_DIR RUN_DIR N CODE: what it was given, where it ran
printf '%s\n%s\n%s\n%s\n' "$(pwd -P)" "$1" "$2" "${MATRIX_RESULT:-no MATRIX_RESULT}" > "$2/seen-$3-$4.txt"
sleep 0.01
exit "$4"
SH
cat > rdir/r.yaml <<'YAML'
name: timed
engine: command
command: [sh, probe.sh, "{recipe_dir}", "{run_dir}", "{n}", "{code}"]
measure: {metric: wall_time, warmup: 1, min_time: 0.2s, max_time: 0.4s, rel_ci: 0.001}
factors:
  n: [1, 2]
  code: [0, 3, 7]
YAML
expect_status 1 "$MATRIX" run rdir/r.yaml --out run > out.txt 2> err.txt
# the rows
expect_eq "$(csv_col run/results.csv status | sort | uniq -c | awk '{ printf "%s %s;", $1, $2 }')" "4 failed;2 ok;" "statuses"
/usr/bin/python3 - run/results.csv "$real" <<'PY' || fail "the timed rows (above)"
import csv, sys
real = sys.argv[2]
for r in csv.DictReader(open(sys.argv[1])):
    extra = dict(kv.split("=", 1) for kv in r["extra"].split("; ") if kv)
    assert r["command"].startswith("cd %s/rdir && MATRIX_RESULT=%s/run/logs/%s." % (real, real, r["id"])), r["command"]
    assert " time --warmup 1 --min-time 0.2s --max-time 0.4s --rel-ci 0.001 --result " in r["command"], r["command"]
    assert r["command"].endswith(" -- sh probe.sh %s/rdir %s/run %s %s" % (real, real, r["n"], r["code"])), r["command"]
    # provenance: where it ran, and the command measured (not matrix time)
    assert r["workdir"] == real + "/rdir", r["workdir"]
    assert r["engine_path"].endswith("sh %s/rdir/probe.sh" % real), r["engine_path"]
    if r["code"] != "0":
        assert r["status"] == "failed", r
        assert r["reason"] == "exit status %s: the command failed on its warm-up run 1" % r["code"], r["reason"]
        continue
    assert r["status"] == "ok", r
    n, med, lo, hi = int(r["samples"]), float(r["step_ms"]), float(r["step_ms_lo"]), float(r["step_ms_hi"])
    assert n >= 2 and 0 < lo <= med <= hi, r
    assert abs(float(extra["wall_time"]) * 1e3 - med) <= 1e-6 * med, (extra, med)
    assert abs(float(r["throughput"]) * med / 1e3 - 1) < 1e-6 and r["unit"] == "runs/s", r
    assert extra["warmup_runs"] == "1" and r["engine"] == "command" and r["ci_met"] in ("0", "1"), (r, extra)
    assert abs(float(r["rel_ci"]) - (hi - lo) / 2 / med) < 1e-4, r
    print("n=%s: %d runs, median %.2f ms [%.2f, %.2f]" % (r["n"], n, med, lo, hi))
PY
# where it ran and what it was given: the recipe's directory, absolute paths,
# no MATRIX_RESULT for the command
printf '%s\n%s\n%s\n%s\n' "$real/rdir" "$real/rdir" "$real/run" "no MATRIX_RESULT" > want.txt
for f in seen-1-0 seen-2-0 seen-1-7; do cmp want.txt run/$f.txt || fail "$f: $(cat run/$f.txt)"; done
# the report's metric is wall_time, in s, lower is better, with its interval
"$MATRIX" export run --format json > ex.json
/usr/bin/python3 - ex.json <<'PY' || fail "export of a timed run"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["metric"]["name"] == "wall_time" and j["metric"]["unit"] == "s" and j["metric"]["higher_is_better"] is False, j["metric"]
ok = [p for p in j["points"] if p["status"] == "ok"]
assert len(ok) == 2 and all(p["ci95"][0] <= p["value"] <= p["ci95"][1] for p in ok), ok
PY
expect_grep "^  best [^:]*: [0-9.]* s \[" out.txt "the summary in seconds"
# each point's line shows the recipe's metric, not throughput (runs/s)
expect_grep "^\[[0-9]/6\] ok  *[0-9.]* s  [0-9a-f]*  n=1 code=0  wall_time=[0-9.e-]* s$" out.txt "a point's line: its wall_time"
! grep -q "throughput=" out.txt || fail "a point's line shows throughput for a wall_time study"
# a resume from the run directory alone: still the recipe's directory
grep -qx "project_dir: $real/rdir" run/env.txt || fail "env.txt has no project_dir: $(cat run/env.txt)"
rm run/seen-*.txt
expect_status 1 "$MATRIX" run --resume run --retry-failed > out2.txt 2>&1
cmp want.txt run/seen-1-7.txt || fail "resumed: $(cat run/seen-1-7.txt)"
grep -qx "project_dir: $real/rdir" run/env.txt || fail "the resume lost project_dir: $(cat run/env.txt)"
# a plain command engine runs in the recipe's directory too
cat > rdir/plain.yaml <<'YAML'
name: plain
engine: command
command: [sh, -c, 'echo status=ok > "{result}"; pwd -P > "{run_dir}/where"']
factors:
  k: [1]
YAML
"$MATRIX" run rdir/plain.yaml --out prun --no-report > /dev/null || fail "plain command run"
expect_eq "$(cat prun/where)" "$real/rdir" "a plain command's directory"
# matrix time by hand: the result, and a line on stderr
"$MATRIX" time --warmup 1 --min-time 0.05s --max-time 0.2s --result direct.txt -- sleep 0.01 2> direct.err ||
	fail "matrix time: $(cat direct.err)"
expect_grep "^status=ok" direct.txt "matrix time: status"
expect_grep "^matrix: time: [0-9]* runs\{0,1\} after 1 warm-up runs: " direct.err "matrix time: its line"
# cut short by --max-time before 6 runs: no 95% interval, the CI not met,
# however alike the runs (it was ci_met=1 from [min, max] of 3)
"$MATRIX" time --warmup 0 --min-time 0.01s --max-time 0.25s --result short.txt -- sleep 0.1 2> short.err ||
	fail "matrix time: $(cat short.err)"
expect_grep '^samples=[2-5]$' short.txt "matrix time: a few runs"
expect_grep '^ci_met=0$' short.txt "matrix time: no CI met from fewer than 6 runs"
expect_grep "no baseline in the recipe: the first level of each factor but model, task, batch and seq_len" out.txt "the summary says what the baseline is"
# a command killed by a signal: matrix time dies of it, the result says so
expect_status 143 "$MATRIX" time --warmup 0 --result killed.txt -- sh -c 'kill -TERM $$' 2> kerr.txt
expect_grep "^status=failed" killed.txt "killed: status"
expect_grep "^reason=the command was killed by signal 15 on its timed run 1" killed.txt "killed: reason"
expect_status 127 "$MATRIX" time --warmup 0 --result none.txt -- ./no-such-command 2> nerr.txt
expect_grep "^reason=cannot run './no-such-command': No such file or directory" none.txt "exec failure"
# stderr says the result's reason (it said "the command failed on its warm-up run 1")
expect_eq "$(cat nerr.txt)" "matrix: time: cannot run './no-such-command': No such file or directory" "exec failure on stderr"
# a --result that cannot be written is refused before the first run (it
# was found after every timed run: 5 s of runs, then exit 1); so is a directory
: > ran
expect_status 2 "$MATRIX" time --warmup 0 --result nodir/x.txt -- sh -c 'echo x >> ran' 2> werr.txt
expect_eq "$(cat werr.txt)" "matrix: time: cannot write 'nodir/x.txt': No such file or directory" "unwritable --result"
expect_eq "$(wc -c < ran | tr -d ' ')" 0 "no run before the --result check"
expect_status 2 "$MATRIX" time --warmup 0 --result "$work" -- true 2> werr.txt
expect_eq "$(cat werr.txt)" "matrix: time: cannot write '$work': it is a directory" "a directory as --result"
# --max-time under the default --min-time: the message says which was not given
expect_status 2 "$MATRIX" time --max-time 0.3s --result x.txt -- true 2> merr.txt
expect_eq "$(head -1 merr.txt)" "matrix: time: --min-time (0.5s, the default) must not exceed --max-time (0.3s)" "default --min-time"
# a bad value says what that option takes
expect_status 2 "$MATRIX" time --rel-ci 0 --result x.txt -- true 2> rerr.txt
expect_grep "^matrix: time: --rel-ci '0' is not valid (want a number between 0 and 1, exclusive, such as 0.02)$" rerr.txt "--rel-ci 0"
expect_status 2 "$MATRIX" time --min-time soon --result x.txt -- true 2> rerr.txt
expect_grep "^matrix: time: --min-time 'soon' is not valid (want a duration such as 0.5s)$" rerr.txt "--min-time soon"
expect_status 2 "$MATRIX" time --result x.txt 2> uerr.txt
expect_grep "no command given" uerr.txt "time without a command"
# recipe errors
sed 's/"{code}"\]/"{code}", "{result}"]/' rdir/r.yaml > bad1.yaml
expect_status 2 "$MATRIX" expand bad1.yaml 2> e1.txt > /dev/null
expect_grep "bad1.yaml:3:71: '{result}' in a command that matrix times itself" e1.txt "{result} refused"
printf 'name: n\nengine: native\nmeasure: {metric: wall_time}\nfactors:\n  model: [mnist_cnn]\n' > bad2.yaml
expect_status 2 "$MATRIX" expand bad2.yaml 2> e2.txt > /dev/null
expect_grep "bad2.yaml:3:19: 'measure.metric: wall_time' times a command engine's command" e2.txt "native refused"
sed 's/metric: wall_time/metric: cpu_time/' rdir/r.yaml > bad3.yaml
expect_status 2 "$MATRIX" expand bad3.yaml 2> e3.txt > /dev/null
expect_grep "bad3.yaml:4:19: .measure.metric. must be .engine. or .wall_time., not .cpu_time." e3.txt "an unknown measure.metric"
echo ok
