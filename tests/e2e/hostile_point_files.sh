# A point cannot hang or crash the runner through the files it is given
# (issue 22, items 2 and 3): a result path replaced by a FIFO, linked to
# /dev/zero or grown to 3 GB (sparse), 100000 keys, a log replaced by a FIFO. Each such
# point fails with a reason, the others are recorded, and the runner ends by
# itself: it never opens a FIFO blocking nor reads more than 1 MiB of result.
. "$top_srcdir/tests/setup"
cat > eng.sh <<'SH'
#!/bin/sh
res=$MATRIX_RESULT
case $1 in
ok) printf 'status=ok\nthroughput=1\n' > "$res" ;;
resultfifo) rm -f "$res"; mkfifo "$res" ;;
resultzero) rm -f "$res"; ln -s /dev/zero "$res" ;;
resulthuge) printf 'status=ok\nthroughput=1\n' > "$res"; truncate -s 3G "$res" ;;
resultkeys) printf 'status=ok\nthroughput=1\n' > "$res"; awk 'BEGIN { while (n < 100000) printf "k%d=1\n", n++ }' >> "$res" ;;
logfifo) log=$(readlink /proc/$$/fd/1); rm -f "$log"; mkfifo "$log"; exit 1 ;;
esac
SH
cat > r.yaml <<YAML
name: hostile_files
engine: command
command: [sh, $work/eng.sh, "{mode}"]
factors:
  mode: [ok, resultfifo, resultzero, resulthuge, resultkeys, logfifo]
YAML
# before the fix, the FIFOs hung the runner for good and /dev/zero or the
# 3 GB file were read whole (out of memory): bound both time and memory
# (under AddressSanitizer, whose shadow memory cannot live under ulimit -v,
# the memory bound is the sanitizer's own: its allocator fails loudly)
vlimit=1048576
if ldd "$MATRIX" 2>/dev/null | grep -q libasan; then vlimit=unlimited; fi
set +e
(ulimit -v $vlimit; exec timeout -s KILL 30 "$MATRIX" run r.yaml --out run --no-report) > out.txt 2> err.txt
rc=$?
set -e
[ "$rc" = 1 ] || { cat err.txt >&2; fail "matrix run exited $rc, expected 1 (5 points failed)"; }
why() { awk -F, -v m="$1" 'NR>1 && $4 == m { print $5 ": " $6 }' run/results.csv; }
expect_eq "$(why ok)" "ok: " "ok"
expect_eq "$(why resultfifo)" "failed: garbled result: result file is not a regular file" "a FIFO as result"
expect_eq "$(why resultzero)" "failed: garbled result: result file is a symbolic link" "a link to /dev/zero as result"
expect_eq "$(why resulthuge)" "failed: garbled result: result file is 3221225472 bytes (more than 1048576)" "a 3 GB result"
# 100000 keys in 0.9 MB: each was looked up among the others (40 s); now at
# most 1024 keys
expect_eq "$(why resultkeys)" "failed: garbled result: result file has more than 1024 keys (line 1025)" "a result of 100000 keys"
expect_eq "$(why logfifo)" "failed: exit status 1" "a FIFO as log"

# a run directory received from elsewhere whose results.csv is a FIFO: report
# and compare refuse it at once instead of blocking for good
cp -r run fifo
rm fifo/results.csv
mkfifo fifo/results.csv
set +e
timeout -s KILL 10 "$MATRIX" report fifo > rep.out 2> rep.err
rc=$?
set -e
expect_eq "$rc" 2 "report on a FIFO results.csv"
expect_eq "$(cat rep.err)" "matrix: 'fifo/results.csv' is not a regular file" "report's message"
set +e
timeout -s KILL 10 "$MATRIX" compare run fifo > cmp.out 2> cmp.err
rc=$?
set -e
expect_eq "$rc" 2 "compare with a FIFO results.csv"
echo ok
