# SIGINT / SIGTERM stop the runner: the running point's whole group is killed,
# the exit status is 130, and the directory resumes. A second runner on the
# same directory is refused.
. "$top_srcdir/tests/setup"
cat > r.yaml <<YAML
name: signals
engine: command
command: [env, "PIDFILE=$work/grandchild.pid", sh, $top_srcdir/tests/e2e/engine.sh, "{mode}"]
measure: {timeout: 60s, grace: 0.5s}
factors:
  mode: [ok, hangchild]
YAML
"$MATRIX" run r.yaml --out run > out.txt 2> err.txt &
pid=$!
i=0; while [ ! -s grandchild.pid ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -s grandchild.pid ] || fail "the hanging point never started"
# a second runner is locked out
expect_status 2 "$MATRIX" run --resume run 2> lock.txt
expect_grep "is locked by another runner (pid $pid)" lock.txt "lock message"
# the lock is a POSIX record lock of the runner alone: a child forked but not
# yet exec'd does not inherit it, so the directory is free once the runner
# dies (an flock() was shared with such a child; seen as a resume refused
# right after a kill -9 under load)
ino=$(stat -c %i run/.lock)
grep -q "POSIX  *ADVISORY  *WRITE  *$pid  *[0-9a-f:]*:$ino " /proc/locks ||
	fail "no POSIX write lock of the runner $pid on run/.lock in /proc/locks: $(cat /proc/locks)"
kill -INT $pid
set +e; wait $pid; rc=$?; set -e
expect_eq "$rc" 130 "exit status after SIGINT"
expect_grep "interrupted by SIGINT" err.txt "interrupt message"
expect_grep "matrix run --resume run" err.txt "resume hint"
gc=$(cat grandchild.pid); sleep 0.2
if alive "$gc"; then kill -9 "$gc"; fail "grandchild survived SIGINT"; fi
expect_eq "$(tail -n +2 run/results.csv | wc -l)" 1 "finished point kept"
# SIGTERM likewise
rm -f grandchild.pid
"$MATRIX" run --resume run > /dev/null 2>&1 &
pid=$!
i=0; while [ ! -s grandchild.pid ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM $pid
set +e; wait $pid; rc=$?; set -e
expect_eq "$rc" 130 "exit status after SIGTERM"
expect_eq "$(tail -n +2 run/results.csv | wc -l)" 1 "no row for the killed point"
# a run with --only: the resume hint keeps the filter ('--resume DIR' alone
# runs the whole grid: it said "9 of 16 points; resume with: matrix run
# --resume DIR", which then ran 55 points; issue 21, item 6)
rm -f grandchild.pid
"$MATRIX" run r.yaml factors.side=a,b --only 'side=a|b,mode=ok|hangchild' --out only > /dev/null 2> err2.txt &
pid=$!
i=0; while [ ! -s grandchild.pid ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -s grandchild.pid ] || fail "the hanging point never started (--only)"
kill -INT $pid
set +e; wait $pid; rc=$?; set -e
expect_eq "$rc" 130 "exit status after SIGINT (--only)"
expect_grep "resume with: matrix run --resume only --only 'side=a|b,mode=ok|hangchild'\$" err2.txt "resume hint with --only"
echo ok
