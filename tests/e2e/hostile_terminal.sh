# The progress line on a terminal wider than 1024 columns (issue 22, item 9):
# it once wrote its end of line past a 1024-byte buffer. It fills the width,
# cut to one column less, and is cut on a character boundary.
# `matrix export --format csv` on a terminal shows control characters escaped.
. "$top_srcdir/tests/setup"
command -v script > /dev/null && command -v stty > /dev/null || { echo "no script(1) or stty: skipped"; exit 77; }
long=$(awk 'BEGIN { while (n++ < 3000) printf "x" }')
wide=$(awk 'BEGIN { while (n++ < 3000) printf "\303\251" }')
cat > r.yaml <<YAML
name: wide
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, sleep, "0.3", "{v}"]
factors:
  v: [$long, "a$wide", b]
YAML
script -qec "stty cols 2000; '$MATRIX' run r.yaml --out run --no-report" /dev/null > tty.txt 2>&1 || {
	cat tty.txt >&2; fail "matrix run on a wide terminal failed"; }
# the longest piece between carriage returns and erase-line sequences
longest=$(LC_ALL=C awk 'BEGIN { RS = "\r|\033\\[K|\n" } /^\[0\/3\]/ { if (length($0) > m) m = length($0) } END { print m }' tty.txt)
expect_eq "$longest" 1999 "the progress line cut to the width less one"
iconv -f UTF-8 -t UTF-8 tty.txt > /dev/null 2>&1 || fail "the progress line splits a character"
# `matrix export --format csv` keeps a level's bytes for a pipe, but on a
# terminal an escape sequence in a level would act: it is shown escaped there
cat > e.yaml <<'YAML'
name: esc
engine: command
command: [sh, -c, 'printf "status=ok\nthroughput=1\n" > "$MATRIX_RESULT"', "{a}"]
factors: {a: ["x\e[31mred", plain]}
YAML
"$MATRIX" run e.yaml --out esc --no-report > /dev/null 2>&1 || fail "the run with an escape in a level failed"
script -qec "'$MATRIX' export esc --format csv" /dev/null > tty.txt 2>&1 || { cat tty.txt >&2; fail "export on a terminal failed"; }
expect_grep ',x\\x1b\[31mred,ok,' tty.txt "export csv on a terminal: the escape shown escaped"
if grep -q "$(printf '\033')" tty.txt; then fail "export csv on a terminal printed an ESC byte"; fi
"$MATRIX" export esc --format csv > pipe.csv
expect_grep "$(printf ',x\033\\[31mred,ok,')" pipe.csv "export csv to a pipe: the level's bytes as they are"
echo ok
