# A point is contained as a whole (issue 22, item 4): every descendant of a
# point dies at its timeout, on SIGINT and when the runner is killed outright
# (SIGKILL), one that called setsid and ignores SIGTERM included; and a
# resumed attempt writes to a fresh result path, so that nothing left of an
# earlier attempt can be taken for its result. Where cgroup v2 is writable
# (item 2), the point's cgroup ends its tree even when its keeper is killed
# outright.
. "$top_srcdir/tests/setup"
cat > eng.sh <<'SH'
#!/bin/sh
# eng.sh MODE: record the result path, start two grandchildren that ignore
# SIGTERM (one in the point's process group, one in a session of its own),
# record their pids, then hang (MODE hang) or write a result (MODE ok)
echo "$MATRIX_RESULT" >> "$W/paths.txt"
[ "$1" = ok ] && [ -s "$W/resumed" ] && { printf 'status=ok\nthroughput=1\n' > "$MATRIX_RESULT"; exit 0; }
sh -c 'trap "" TERM; echo $$ > "$0.tmp"; mv "$0.tmp" "$0"; while :; do sleep 1; done' "$W/plain.pid" &
setsid sh -c 'trap "" TERM; echo $$ > "$0.tmp"; mv "$0.tmp" "$0"; while :; do sleep 1; done' "$W/setsid.pid" &
sleep 1000
SH
recipe() {
	cat > r.yaml <<YAML
name: escape
engine: command
command: [env, "W=$work", sh, $work/eng.sh, "{mode}"]
measure: {timeout: $1, grace: 0.5s}
factors:
  mode: [$2]
YAML
}
started() {
	i=0; while { [ ! -s plain.pid ] || [ ! -s setsid.pid ]; } && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ -s plain.pid ] && [ -s setsid.pid ] || fail "$1: the point never started its grandchildren"
}
all_dead() {
	for f in plain setsid; do
		gc=$(cat $f.pid)
		i=0; while alive "$gc" && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
		if alive "$gc"; then kill -9 "$gc"; fail "$1: the $f grandchild $gc survived"; fi
	done
	rm -f plain.pid setsid.pid
}
# at the timeout
recipe 1s hang
expect_status 1 "$MATRIX" run r.yaml --out t --no-report > out.txt 2> err.txt
started "timeout"
expect_grep ",timeout," t/results.csv "timeout status"
all_dead "timeout"
# on SIGINT
recipe 60s hang
"$MATRIX" run r.yaml --out i --no-report > out.txt 2> err.txt &
pid=$!
started "SIGINT"
kill -INT $pid
set +e; wait $pid; rc=$?; set -e
expect_eq "$rc" 130 "exit status after SIGINT"
all_dead "SIGINT"
# the point's keeper killed outright: where the runner can make a cgroup v2
# per point (env.txt says so), the cgroup still ends the tree
recipe 60s hang
"$MATRIX" run r.yaml --out c --no-report > out.txt 2> err.txt &
pid=$!
started "keeper SIGKILL"
if grep -q '^containment: a cgroup v2 per point' c/env.txt; then
	keeper=$(ps -o pid= --ppid $pid | head -1 | tr -d ' ')
	[ -n "$keeper" ] || fail "no keeper under the runner"
	kill -KILL "$keeper"
	all_dead "keeper SIGKILL"
	set +e; wait $pid; rc=$?; set -e
	expect_eq "$rc" 1 "exit status after the keeper was killed"
	expect_grep ",crashed,killed by SIGKILL" c/results.csv "the point killed"
else
	echo "no writable cgroup v2 here ($(grep '^containment' c/env.txt)): the keeper-killed case is not checked"
	kill -INT $pid
	set +e; wait $pid; set -e
	all_dead "SIGINT"
fi
# the runner killed outright, then resumed
recipe 60s ok
rm -f paths.txt
"$MATRIX" run r.yaml --out k --no-report > out.txt 2> err.txt &
pid=$!
started "SIGKILL"
kill -KILL $pid
{ wait $pid; } 2> /dev/null || :
all_dead "SIGKILL"
echo yes > resumed
expect_status 0 "$MATRIX" run --resume k --no-report > out.txt 2> err.txt
expect_eq "$(wc -l < paths.txt | tr -d ' ')" 2 "two attempts"
[ "$(sed -n 1p paths.txt)" != "$(sed -n 2p paths.txt)" ] || fail "the resumed attempt was given the killed attempt's result path $(sed -n 1p paths.txt)"
echo ok
