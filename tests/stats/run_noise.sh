# matrix compare and the run-to-run noise (--run-noise, issue 12): two runs
# made at different times differ by a shift common to every point (page
# cache, clocks, other load), which no interval from within one run holds.
# Runs of a command engine with known answers (tests/stats/shift_engine.sh:
# a factor on every point, +-0.3% scatter between processes, +-0.5% within
# one), 20 points of one process, 8 points of 5:
# One process a side decides nothing (each point 'unreplicated', its change
# and interval shown; beyond its interval or not is counted):
# (a) B = A x 1.02: none beyond its interval, the geometric-mean interval
#     holds 1.0;
# (b) the same with one point x 1.25 more: that point alone beyond its
#     interval; reversed, with --fail-on-regression, a possible regression;
# (c) B = A x 1.10, beyond the run noise: every point beyond its interval,
#     and the geometric mean's interval leaves out 1.0;
# (d) 5 processes a side, B = A x 1.02: the U test finds no point beyond the
#     run noise; one point x 1.15 more: that one is faster;
# (e) --run-noise 0 is the old test against no change: (a) has every point
#     beyond its interval;
# (g) decided regressions: (d) reversed, --fail-on-regression and
#     --threshold;
# (f) bad values of --run-noise exit 2 and say why.
# The 95% interval of every point is the one its verdict used.
. "$top_srcdir/tests/setup"
# run NAME K POINTS FACTOR SALT [BUMP_TRIAL BUMP]
run() {
	name=$1 k=$2 n=$3
	shift 3
	args=$(printf ', "%s"' "$@")
	cat > $name.yaml <<YAML
name: run_noise
engine: command
command: [sh, "$top_srcdir/tests/stats/shift_engine.sh", "{trial}"$args]
factors:
  trial: [$(seq -s ', ' 1 $n)]
repeat: $k
YAML
	"$MATRIX" run $name.yaml --out $name --no-report > $name.txt 2>&1 || { cat $name.txt >&2; fail "run $name failed"; }
}
run a 1 20 1 1
run s2 1 20 1.02 2
run s2b 1 20 1.02 3 7 1.25
run s10 1 20 1.10 4
run a5 5 8 1 5
run s5 5 8 1.02 6
run s5b 5 8 1.02 7 3 1.15
# counts FILE: "FASTER SLOWER" from the verdict line
counts() { sed -n 's/^significant and at least [0-9.]*% apart: \([0-9]*\) faster, \([0-9]*\) slower.*/\1 \2/p' "$1"; }
# holds_one FILE: the geometric-mean interval holds 1.0
holds_one() {
	ci=$(sed -n 's/.*geometric mean gain [0-9.]* (95% CI \([0-9.]*\)\.\.\([0-9.]*\)).*/\1 \2/p' "$1")
	[ -n "$ci" ] || fail "no geometric-mean interval in $1"
	awk -v ci="$ci" 'BEGIN { split(ci, c, " "); exit !(c[1] <= 1 && c[2] >= 1) }'
}
# consistent A B [OPTIONS]: in the CSV, a point is significant (faster,
# SLOWER, "~ (small)") exactly when its interval leaves out 1
consistent() {
	"$MATRIX" compare "$@" --format csv > c.csv || fail "compare $* --format csv"
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$col["verdict"] == "unreplicated" { n++; next }
		{ out = $col["gain_lo"] > 1 || $col["gain_hi"] < 1; sig = $col["verdict"] != "~"
		  if (out != sig) { print "inconsistent: " $0; bad = 1 } n++ }
		END { exit bad || n == 0 }' c.csv || fail "compare $*: a verdict disagrees with its interval"
}

# (a) a common 2% shift is run noise
expect_status 0 "$MATRIX" compare a s2 > a.txt
cat a.txt
expect_eq "$(counts a.txt)" "0 0" "(a) a 2% shift of the whole run: points flagged"
expect_grep '^unreplicated: 20 points measured in one process on a side (0 of them beyond their interval)' a.txt "(a) unreplicated"
holds_one a.txt || fail "(a) the geometric-mean interval leaves out 1.0"
expect_grep '^run-to-run noise: 3% (--run-noise), in every interval above' a.txt "(a) the run noise in use"
expect_grep 'shift common to every point here (median gain) 1.02 = +2%$' a.txt "(a) the common shift"
expect_grep '^note: 3% is the default, measured with A/A pairs' a.txt "(a) where the default comes from"
consistent a s2
# (e) without the run noise the shift is a change of every point
expect_status 0 "$MATRIX" compare a s2 --run-noise 0 > e.txt
expect_eq "$(counts e.txt)" "0 0" "(e) --run-noise 0: points decided"
expect_grep '^unreplicated: 20 points measured in one process on a side (20 of them beyond their interval)' e.txt "(e) --run-noise 0: beyond their interval"
holds_one e.txt && fail "(e) --run-noise 0: the geometric-mean interval holds 1.0"
expect_grep '^run-to-run noise: none (--run-noise 0)' e.txt "(e) the run noise turned off"
consistent a s2 --run-noise 0
# the same with a larger noise given: joined or not, with or without %
for v in 5 5% '5 %'; do
	expect_status 0 "$MATRIX" compare a s2 --run-noise "$v" > v.txt
	expect_grep '^run-to-run noise: 5% (--run-noise)' v.txt "--run-noise '$v'"
	grep -q '^note: .* is the default' v.txt && fail "--run-noise '$v': the note of the default"
done
expect_status 0 "$MATRIX" compare --run-noise=5 a s2 > v.txt
expect_grep '^run-to-run noise: 5% (--run-noise)' v.txt "--run-noise=5"
# (b) one point beyond the shift
expect_status 0 "$MATRIX" compare a s2b > b.txt
expect_eq "$(counts b.txt)" "0 0" "(b) one point x 1.25: points decided"
expect_grep '^unreplicated: 20 points measured in one process on a side (1 of them beyond their interval)' b.txt "(b) one beyond its interval"
expect_grep '^trial=7  .* +27.[0-9]%  *1/1  CI+spread (1 p.) unreplicated$' b.txt "(b) the point that changed"
expect_status 0 "$MATRIX" compare s2b a > br.txt
expect_status 1 "$MATRIX" compare s2b a --fail-on-regression 10 > br10.txt
expect_grep '^possible regression: 1 unreplicated points slower by more than 10% beyond their interval' br10.txt "(b) reversed: a possible regression"
expect_status 0 "$MATRIX" compare s2b a --fail-on-regression 25 > /dev/null
consistent a s2b
# (c) a real change of the whole run, beyond the run noise
expect_status 0 "$MATRIX" compare a s10 > c.txt
expect_eq "$(counts c.txt)" "0 0" "(c) x 1.10: points decided"
expect_grep '^unreplicated: 20 points measured in one process on a side (20 of them beyond their interval)' c.txt "(c) all beyond their interval"
holds_one c.txt && fail "(c) x 1.10: the geometric-mean interval holds 1.0"
consistent a s10
# (d) five processes a side: the U test of B moved toward A by the run noise
expect_status 0 "$MATRIX" compare a5 s5 --threshold 1 > d.txt
cat d.txt
expect_eq "$(counts d.txt)" "0 0" "(d) 5 processes, a 2% shift: points flagged"
expect_grep '^trial=1  .*  5/5  U p=1.000  *~$' d.txt "(d) the U test decided: B moved by 3% lies below A"
holds_one d.txt || fail "(d) the geometric-mean interval leaves out 1.0"
consistent a5 s5 --threshold 1
expect_status 0 "$MATRIX" compare a5 s5 --threshold 1 --run-noise 0 > d0.txt
expect_eq "$(counts d0.txt)" "8 0" "(d) 5 processes, a 2% shift, --run-noise 0: points flagged"
expect_grep '^trial=1  .*  5/5  U p=0.008  *faster$' d0.txt "(d) the U test without the run noise"
consistent a5 s5 --threshold 1 --run-noise 0
expect_status 0 "$MATRIX" compare a5 s5b > db.txt
expect_eq "$(counts db.txt)" "1 0" "(d) 5 processes, one point x 1.15 more: points flagged"
expect_grep '^trial=3  .*  5/5  U p=0.008  *faster$' db.txt "(d) the point that changed"
consistent a5 s5b
# the same on step time (lower is better): B's values move the other way
expect_status 0 "$MATRIX" compare a5 s5b --metric step_ms > dms.txt
expect_eq "$(counts dms.txt)" "1 0" "(d) on step_ms: points flagged"
expect_grep '^trial=3  .*  5/5  U p=0.008  *faster$' dms.txt "(d) on step_ms: the point that changed"
# (g) decided regressions: five processes a side, trial 3 slower by 1 / 1.173
expect_status 0 "$MATRIX" compare s5b a5 > g.txt
expect_eq "$(counts g.txt)" "0 1" "(g) reversed: points flagged"
expect_grep '^trial=3  .*  5/5  U p=0.008  *SLOWER$' g.txt "(g) the point that got slower"
grep -q '^unreplicated' g.txt && fail "(g) replicated points called unreplicated"
expect_status 1 "$MATRIX" compare s5b a5 --fail-on-regression 10% > g10.txt
expect_grep '^regression: 1 matched points significantly slower by more than 10%$' g10.txt "(g) the regression line"
grep -q '^possible regression' g10.txt && fail "(g) a decided regression called possible"
expect_status 0 "$MATRIX" compare s5b a5 --fail-on-regression 20% > /dev/null
expect_status 0 "$MATRIX" compare s5b a5 --threshold 20% --fail-on-regression 10% > g20.txt
expect_grep '1 significant but smaller than 20%$' g20.txt "(g) a threshold above the change"
expect_grep '^trial=3  .*  5/5  U p=0.008  *~ (small)$' g20.txt "(g) the small change marked"
# the figures for other tools
expect_status 0 "$MATRIX" compare a s2 --format json > a.json
expect_grep '"run_noise_pct": 3, "common_shift_gain": 1.0' a.json "json: run_noise_pct and common_shift_gain"
expect_status 0 "$MATRIX" compare a s2 --format markdown > a.md
expect_grep '^Run-to-run noise 3% (`--run-noise`) in every interval; the shift common to every point (median gain) is 1.02.$' a.md "markdown: the run noise"
expect_eq "$(head -1 c.csv | tr ',' '\n' | grep -c '^run_noise_pct$')" 1 "csv: a run_noise_pct column"
# (f) bad values
for v in -1 abc 3x ''; do
	expect_status 2 "$MATRIX" compare a s2 --run-noise "$v" 2> err.txt
	expect_eq "$(head -1 err.txt)" "matrix: --run-noise wants a percentage >= 0 (like 5%), not '$v'" "--run-noise '$v'"
done
expect_status 2 "$MATRIX" compare a s2 --run-noise 2> err.txt
expect_eq "$(head -1 err.txt)" "matrix: option '--run-noise' needs a value" "--run-noise without a value"
echo ok
