# The progress line on a terminal wider than 1024 columns (issue 22, item 9):
# it once wrote its end of line past a 1024-byte buffer. It fills the width,
# cut to one column less, and is cut on a character boundary.
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
echo ok
