# The scatters draw each dot's 95% interval as whiskers (yerrorbars, the
# .dat's columns 4 and 5); their y range must hold the whiskers, not only
# the dots: it was the dots' range x/÷ 1.3, so a point with a wide
# interval (here step 10 ms, 5 .. 20 ms: throughput 100, 50 .. 200) had
# its whisker cut off at the frame ('set yrange [76.9231:156]'), in the
# plain and in the normalised scatter.
. "$top_srcdir/tests/setup"
cat > r.yaml <<'YAML'
name: whiskers
engine: command
command: [sh, -c, 'if [ "$0" = 2 ]; then printf "status=ok\nthroughput=100\nunit=samples/s\nstep_ms=10\nstep_ms_lo=5\nstep_ms_hi=20\n"; else printf "status=ok\nthroughput=120\nunit=samples/s\nstep_ms=8.3\nstep_ms_lo=8.2\nstep_ms_hi=8.4\n"; fi > "$MATRIX_RESULT"', "{k}"]
factors:
  k: [1, 2]
YAML
"$MATRIX" run r.yaml --out run > run.txt 2>&1 || { cat run.txt >&2; fail "the run failed"; }
n=0
for gp in run/plots/scatter_k.gp run/plots/normalised.gp; do
	[ -f "$gp" ] || fail "no $gp"
	grep -q 'using 1:2:4:5 with yerrorbars' "$gp" || fail "$gp draws no whiskers"
	yr=$(sed -n 's/^set yrange \[\(.*\):\(.*\)\]$/\1 \2/p' "$gp")
	[ -n "$yr" ] || fail "no y range in $gp"
	awk -F'\t' -v yr="$yr" -v gp="$gp" '
		BEGIN { split(yr, r, " ") }
		NF == 5 { n++; if ($4 < r[1] || $5 > r[2]) { print gp ": whisker " $4 " .. " $5 " outside the y range " r[1] " .. " r[2] > "/dev/stderr"; bad = 1 } }
		END { exit bad || n != 2 }' "${gp%.gp}.dat" || fail "$gp: a whisker outside the frame (or not 2 dots)"
	n=$((n + 1))
done
expect_eq "$n" 2 "scatters checked"
# an absurd interval (step 100000 ms, 2.3e-308 .. 100001: its upper end
# on the throughput is past the largest double) takes no part in the range:
# 'set yrange [...:inf]' is no range, and gnuplot drew no figure; nor do
# the bars draw it (a whisker to 'inf' stopped the bars figure)
mkdir absurd && cp run/recipe.yaml absurd/
awk -F, 'BEGIN { OFS = "," } NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; print; next }
	$col["k"] == 2 { $col["step_ms"] = 100000; $col["step_ms_lo"] = "2.3e-308"; $col["step_ms_hi"] = 100001 } { print }' \
	run/results.csv > absurd/results.csv
if command -v gnuplot > /dev/null; then
	expect_status 0 "$MATRIX" report absurd --quiet
else
	"$MATRIX" report absurd --quiet || true
fi
yr=$(sed -n 's/^set yrange \[\(.*\)\]$/\1/p' absurd/plots/scatter_k.gp)
case $yr in
*inf* | *nan* | "") fail "scatter: y range '$yr' of an absurd interval" ;;
esac
if grep -q 'inf' absurd/plots/bars_k.dat; then fail "bars: a whisker to inf: $(cat absurd/plots/bars_k.dat)"; fi
