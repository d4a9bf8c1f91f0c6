# matrix run on a terminal (issue 21, item 6), through a pseudo-terminal
# (script(1)) at two widths, one from TIOCGWINSZ (stty cols) and one from
# $COLUMNS (a terminal of no size): no line is wider than the terminal; the
# progress line and the per-point lines name only the factors that vary; a
# line per finished point, failed or not; the closing summary gives the best
# point of each group with its gain over the baseline and the 95% interval
# that the report's best table gives; after a resume the counts say which
# are this invocation's and which the directory's.
. "$top_srcdir/tests/setup"
command -v script > /dev/null && command -v stty > /dev/null || { echo "no script(1) or stty: skipped"; exit 77; }
cat > r.yaml <<YAML
name: term
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, "{mode}", "{speed}"]
factors:
  speed: [1, 2, 4]
  size: [small, large_with_a_rather_long_level_name]
  fixed: [same_level_everywhere]
  mode: [ok, fail]
exclude:
  - {speed: [1, 2], mode: fail}
baseline: {speed: 1, mode: ok}
YAML
# lines of a terminal's output: split at carriage returns, newlines and
# erase-line sequences
lines() { LC_ALL=C awk 'BEGIN { RS = "\r|\033\\[K|\n" } length($0) > 0' "$1"; }
check_width() { # FILE WIDTH
	widest=$(lines "$1" | LC_ALL=C awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }')
	[ "$widest" -lt "$2" ] || { lines "$1" >&2; fail "a line of $widest columns on a terminal of $2"; }
}
for w in 60 100; do
	rm -rf "run$w"
	if [ $w = 60 ]; then size="stty cols 60"; else size="stty cols 0 rows 0; COLUMNS=100; export COLUMNS"; fi
	set +e
	script -qec "$size; '$MATRIX' run r.yaml --out run$w" /dev/null > tty$w.txt 2>&1
	rc=$?
	set -e
	[ $rc = 1 ] || { cat tty$w.txt >&2; fail "width $w: matrix run exited $rc, expected 1 (one point fails)"; }
	check_width tty$w.txt $w
	lines tty$w.txt > l$w.txt
	if grep -q "fixed=" l$w.txt; then fail "width $w: a factor of one level is shown: $(grep fixed= l$w.txt | head -n 1)"; fi
	expect_grep "^\[0/8\] ok 0, failed 0, elapsed 00:00:0" l$w.txt "width $w: the progress line"
	[ $w = 60 ] || expect_grep "^\[0/8\] ok 0, failed 0, elapsed .* | speed=1 size=small mode=ok$" l$w.txt \
		"width $w: the progress line names what varies"
	# one line per point: 6 ok, 2 failed, each with its id
	expect_eq "$(grep -c '^\[[1-8]/8\] ok  [0-9.]* s  speed=' l$w.txt)" 6 "width $w: a line per ok point"
	expect_eq "$(grep -c '^\[[1-8]/8\] failed  [0-9.]* s  speed=4' l$w.txt)" 2 "width $w: a line per failed point"
	for id in $(csv_col run$w/results.csv id); do
		tr -d '\n' < tty$w.txt | grep -q "$id" || fail "width $w: no line names point $id"
	done
	expect_grep "^matrix: 8 points ran in .*: 6 ok, 0 unsupported, 2" l$w.txt "width $w: the counts"
done
# the summary is the report's best table: each group's best point, its gain
# over the baseline and the gain's interval, to 3 significant digits
tr '\n' ' ' < l100.txt | sed 's/  */ /g' > flat.txt
expect_grep "matrix: summary: throughput (samples/s), higher is better; best point per size; gain over the baseline (> 1: better); \[lo, hi\]: 95% intervals" flat.txt "summary header"
/usr/bin/python3 - run100/tables/best.csv flat.txt <<'PY'
import csv, sys
def sig3(x):  # util.c's fmt_sig3
    t = "%.3g" % x
    return "%.0f" % float(t) if 1e3 <= abs(float(t)) < 1e6 and "e" in t else t
rows = list(csv.DictReader(open(sys.argv[1])))
flat = open(sys.argv[2]).read()
assert len(rows) == 2, rows
for r in rows:
    want = "%s: best %s: %s samples/s" % (r["group"], r["best_config"], sig3(float(r["best"])))
    gain = "gain over the baseline %s [%s, %s]" % (sig3(float(r["gain"])), sig3(float(r["gain_lo"])), sig3(float(r["gain_hi"])))
    i = flat.find(want)
    assert i >= 0, (want, flat)
    assert gain in flat[i:i + 300], (gain, flat[i:i + 300])
PY
[ $? = 0 ] || fail "the summary disagrees with tables/best.csv"
# stdout to a file: every factor, whole lines
"$MATRIX" run r.yaml --out plain --only speed=1 > plain.txt 2>&1 || fail "run to a file failed: $(cat plain.txt)"
expect_eq "$(grep -c '^\[[12]/2\] ok  .* speed=1 size=.* fixed=same_level_everywhere mode=ok' plain.txt)" 2 "lines in a file name every factor"
# a resume: this invocation's counts and the directory's
script -qec "stty cols 100; '$MATRIX' run --resume plain" /dev/null > resume.txt 2>&1 || true
lines resume.txt | tr '\n' ' ' | sed 's/  */ /g' > rflat.txt
expect_grep "matrix: this invocation: 6 points ran in [0-9:]*: 4 ok, 0 unsupported, 2 failed; directory: 8 of 8 points have a row: 6 ok, 0 unsupported, 2 failed" rflat.txt "counts after a resume"
check_width resume.txt 100
echo ok
