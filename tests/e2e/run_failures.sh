# Every way a point can end is classified: ok, unsupported, failed (exit,
# missing or garbled result), oom, timeout (with a grandchild that ignores
# SIGTERM: the whole group is killed), crashed (signal name), and megabytes of
# output go to the log.
. "$top_srcdir/tests/setup"
cat > r.yaml <<YAML
name: failures
engine: command
command: [env, "PIDFILE=$work/grandchild.pid", sh, $top_srcdir/tests/e2e/engine.sh, "{mode}"]
measure: {timeout: 1s, grace: 0.5s}
factors:
  mode: [ok, unsupported, fail, failreason, oom, crash, hang, hangchild, garbled, badnumber, nan, negative, noresult, noisy]
YAML
expect_status 1 "$MATRIX" run r.yaml --out run > out.txt 2> err.txt
rows=run/results.csv
st() { awk -F, -v m="$1" 'NR>1 && $4 == m { print $5 }' $rows; }
why() { awk -F, -v m="$1" 'NR>1 && $4 == m { print $6 }' $rows; }
expect_eq "$(st ok)" ok "ok"
expect_eq "$(st unsupported)" unsupported "unsupported"
expect_eq "$(why unsupported)" "fp16 needs a GPU" "unsupported reason"
expect_eq "$(st fail)" failed "fail"
expect_eq "$(why fail)" "exit status 1: engine: something went wrong" "fail reason from the log"
expect_eq "$(why failreason)" "exit status 1: the model diverged" "fail reason from the result"
expect_eq "$(st oom)" oom "oom"
expect_eq "$(st crash)" crashed "crash"
expect_eq "$(why crash)" "killed by SIGSEGV" "crash reason"
expect_eq "$(st hang)" timeout "hang"
expect_eq "$(why hang)" "no result within the timeout of 1 s" "timeout reason"
expect_eq "$(st hangchild)" timeout "hang with a child"
gc=$(cat grandchild.pid)
sleep 0.2
if alive "$gc"; then kill -9 "$gc"; fail "grandchild $gc survived the timeout"; fi
expect_eq "$(st garbled)" failed "garbled"
expect_eq "$(why garbled)" "garbled result: result file line 2 has no '='" "garbled reason"
expect_eq "$(why badnumber)" "garbled result: throughput 'fast' is not a number" "bad number reason"
expect_eq "$(st nan)" failed "NaN is a failed measurement"
expect_eq "$(why nan)" "failed measurement: throughput is NaN" "NaN reason"
expect_eq "$(why negative)" "failed measurement: step_ms is negative (-2.5)" "negative reason"
expect_eq "$(why noresult)" "exit status 0 but no result file was written" "no result"
expect_eq "$(st noisy)" ok "noisy"
id=$(awk -F, 'NR>1 && $4 == "noisy" { print $1 }' $rows)
[ "$(wc -c < run/logs/$id.log)" -gt 1000000 ] || fail "noisy log is short"
expect_grep "14 points" out.txt "summary"
echo ok
