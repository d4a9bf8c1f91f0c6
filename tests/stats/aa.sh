# The A/A test: the same small CPU recipe (tests/stats/aa.yaml: 16 points, 3
# fresh processes each, one thread) run twice and compared with itself.
# Nothing changed, so `matrix compare` may call at most max(1, 10%) of the
# points faster or slower, and the 95% interval of the geometric-mean gain
# must hold 1.0. The whole test takes about 20 s.
#
# The two runs go side by side (one thread each), point for point in the same
# order, so that whatever else the machine does (make -j check, other users)
# weighs on both alike. Run one after the other, they also differ by a shift
# common to every point, which compare allows up to --run-noise
# (tests/stats/run_noise.sh): 8 such pairs of this recipe passed on a 2-core
# machine under load 2 to 4, but a burst of other load during one run only
# would still fail the test for the machine's sake (tests/stats/NOTES.md,
# "Run-to-run noise").
. "$top_srcdir/tests/setup"
"$MATRIX" run "$top_srcdir/tests/stats/aa.yaml" --out a --no-report > a.txt 2>&1 & pa=$!
"$MATRIX" run "$top_srcdir/tests/stats/aa.yaml" --out b --no-report > b.txt 2>&1 & pb=$!
wait $pa || { cat a.txt >&2; fail "run a failed"; }
wait $pb || { cat b.txt >&2; fail "run b failed"; }
"$MATRIX" compare a b > cmp.txt || { cat cmp.txt >&2; fail "compare failed"; }
cat cmp.txt
n=$(sed -n 's/^\([0-9]*\) matched points.*/\1/p' cmp.txt)
expect_eq "$n" 16 "matched points"
changed=$(sed -n 's/^significant and at least 2% apart: \([0-9]*\) faster, \([0-9]*\) slower.*/\1 \2/p' cmp.txt)
[ -n "$changed" ] || fail "no verdict line"
set -- $changed
flagged=$(( $1 + $2 ))
allowed=$(( n / 10 > 1 ? n / 10 : 1 ))
echo "A/A: $flagged of $n points flagged (at most $allowed allowed)"
[ "$flagged" -le "$allowed" ] || fail "A/A comparison flagged $flagged of $n points (at most $allowed allowed)"
ci=$(sed -n 's/.*geometric mean gain [0-9.]* (95% CI \([0-9.]*\)\.\.\([0-9.]*\)).*/\1 \2/p' cmp.txt)
[ -n "$ci" ] || fail "no geometric-mean interval"
set -- $ci
awk -v lo="$1" -v hi="$2" 'BEGIN { exit !(lo <= 1 && hi >= 1) }' ||
	fail "the geometric-mean interval $1..$2 does not hold 1.0"
echo ok
