# Fractional designs through run and report (issue 19, item 6): a command
# engine with known effects (tests/report/design_engine.sh) run as the full
# factorial and as a 1/2 fraction of resolution V, crossed with a model
# factor: the fraction's main effects and its A x B interaction agree with the
# full factorial's within their intervals, and both hold the true values. A
# 1/4 fraction of resolution IV marks its aliased interactions instead of
# estimating them and prints its alias structure; a fraction with missing
# runs says so; a tiny native-engine fraction runs end to end.
. "$top_srcdir/tests/setup"
engine=$top_srcdir/tests/report/design_engine.sh
cat > full.yaml <<YAML
name: design_full
engine: command
command: [sh, "$engine", "{model}", "{a}", "{b}", "{c}", "{d}", "{e}"]
order: shuffled
factors:
  model: [small, big]
  a: [off, on]
  b: [off, on]
  c: [off, on]
  d: [off, on]
  e: [off, on]
design: {type: full, factors: [a, b, c, d, e]}
YAML
sed 's/^design: .*/design: {type: fractional, resolution: 5, factors: [a, b, c, d, e]}/; s/^name: .*/name: design_half/' full.yaml > half.yaml
expect_eq "$("$MATRIX" expand half.yaml --count)" 32 "2 models x 2^(5-1)"
"$MATRIX" run full.yaml --out full --jobs 2 > full.out 2>&1 || fail "full run: $(cat full.out)"
"$MATRIX" run half.yaml --out half --jobs 2 > half.out 2>&1 || fail "half run: $(cat half.out)"
expect_eq "$(($(wc -l < half/results.csv) - 1))" 32 "the fraction's rows"
expect_eq "$(($(wc -l < half/plan.csv) - 1))" 32 "the fraction's plan.csv"
# the fraction's points are points of the full factorial: same ids
cut -d, -f1 full/results.csv | sort > full.ids
cut -d, -f1 half/results.csv | sort | comm -23 - full.ids > strays
[ ! -s strays ] || fail "ids of the fraction not in the full run: $(cat strays)"
# a resumed fraction has nothing left to run
"$MATRIX" run --resume half > resume.out 2>&1 || fail "resume: $(cat resume.out)"
expect_eq "$(($(wc -l < half/results.csv) - 1))" 32 "resume runs no point again"
expect_eq "$(($(wc -l < full/results.csv) - 1))" 64 "the full factorial's rows"
for d in full half; do
	[ -s $d/tables/factorial.csv ] || fail "$d: no tables/factorial.csv"
	expect_eq "$(head -1 $d/tables/factorial.csv)" "effect,letters,minus,plus,runs_minus,runs_plus,gain,gain_lo,gain_hi,lenth_lo,lenth_hi,aliases" "$d: columns"
done
expect_grep '^## Design' half/report.md "the fraction's report has a Design section"
expect_grep 'defining relation: I = ABCDE' half/report.md "defining relation in the report"
expect_grep 'defining relation: I = ABCDE' half/report.html "defining relation in the page"
! grep -q '^## Design' full/report.md || fail "a full factorial has no alias structure to show"
# every main effect and two-factor interaction is estimated at resolution V
expect_eq "$(grep -c ',aliased,' half/tables/factorial.csv)" 0 "nothing aliased at resolution V"
expect_grep '^a,A,off,on,16,16,' half/tables/factorial.csv "16 runs on each side of a's contrast"
expect_grep '^a x b,AB,differ,same,16,16,' half/tables/factorial.csv "the a x b interaction estimated from the half"
# agreement: |log(fraction) - log(full)| within the two intervals combined,
# and each interval (from the points' intervals, and Lenth's from the
# scatter of the contrasts) holding the true value
check() { # EFFECT TRUE_GAIN
	awk -F, -v e="$1" -v truth="$2" '
	FNR == 1 { file++; next }
	$1 == e { g[file] = $7; lo[file] = $8; hi[file] = $9; llo[file] = $10; lhi[file] = $11 }
	END {
		if (!(1 in g) || !(2 in g) || g[1] == "" || g[2] == "") { print "no estimate of " e; exit 1 }
		for (i = 1; i <= 2; i++) {
			u[i] = (log(hi[i]) - log(lo[i])) / 2
			if (!(u[i] > 0)) { print e ": no interval"; exit 1 }
			if (lo[i] > truth || hi[i] < truth) { printf "%s: true gain %g outside %g..%g (%s)\n", e, truth, lo[i], hi[i], i == 1 ? "full" : "half"; exit 1 }
			if (llo[i] > truth || lhi[i] < truth) { printf "%s: true gain %g outside Lenth %g..%g (%s)\n", e, truth, llo[i], lhi[i], i == 1 ? "full" : "half"; exit 1 }
		}
		d = log(g[1]) - log(g[2]); if (d < 0) d = -d
		if (d > sqrt(u[1] * u[1] + u[2] * u[2])) { printf "%s: half %g and full %g disagree\n", e, g[2], g[1]; exit 1 }
	}' full/tables/factorial.csv half/tables/factorial.csv || fail "effect $1"
}
s=$(awk 'BEGIN { printf "%.10g", sqrt(1.25) }')
check a "$(awk -v s="$s" 'BEGIN { printf "%.10g", 1.5 * s }')"
check b "$(awk -v s="$s" 'BEGIN { printf "%.10g", 0.8 * s }')"
check c 1
check d 1.2
check e 1
check 'a x b' "$s"
check 'c x d' 1
# a 1/4 fraction of resolution IV without the model factor: two-factor
# interactions aliased in chains, main effects still estimated
cat > quarter.yaml <<YAML
name: design_quarter
engine: command
command: [sh, "$engine", small, "{a}", "{b}", "{c}", "{d}", "{e}", "{f}"]
factors:
  a: [off, on]
  b: [off, on]
  c: [off, on]
  d: [off, on]
  e: [off, on]
  f: [off, on]
design: {type: fractional, fraction: 1/4}
YAML
"$MATRIX" run quarter.yaml --out quarter > quarter.out 2>&1 || fail "quarter run: $(cat quarter.out)"
expect_eq "$(($(wc -l < quarter/results.csv) - 1))" 16 "2^(6-2) runs"
expect_grep 'generators (minimum aberration): E = ABC, F = BCD' quarter/report.md "generators in the report"
expect_grep '^  AB = CE$' quarter/report.md "alias chain in the report"
expect_grep '^a x b,AB,differ,same,,,aliased,,,,,c x e$' quarter/tables/factorial.csv "a x b aliased, not estimated"
expect_eq "$(grep -c ',aliased,' quarter/tables/factorial.csv)" 15 "every two-factor interaction of the 2^(6-2) aliased"
expect_grep '^a,A,off,on,8,8,[0-9.]*,[0-9.]*,[0-9.]*,[0-9.]*,[0-9.]*,$' quarter/tables/factorial.csv "a main effect estimated, clear"
expect_grep 'resolution IV' quarter/report.md "resolution in the report"
expect_grep "Lenth's pseudo standard error of the design's 15 contrasts" quarter/report.md "Lenth's PSE over the 2^(6-2)'s contrasts"
# the pair tables of a fraction are empty: they say why and where the effects are
expect_eq "$(grep -c 'No row: in this fractional design no two measured points differ in one factor alone' quarter/report.md)" 3 "effects, interactions, improvements: why empty"
! grep -q 'No row: in this fractional design' full/report.md || fail "a full factorial's tables called a fraction's"
# runs missing from the design: said in the table's caption
"$MATRIX" run quarter.yaml --out part --only c=off > part.out 2>&1 || fail "partial run: $(cat part.out)"
expect_grep '8 runs of the design have no result' part/report.md "missing runs noted"
# the example recipe: 16 of 128 runs
expect_eq "$("$MATRIX" expand "$top_srcdir/recipes/cpu_fractional.yaml" --count)" 16 "recipes/cpu_fractional.yaml"
# a tiny native-engine fraction, end to end
cat > native.yaml <<'YAML'
name: design_native
engine: native
device: cpu
measure: {warmup: 1, min_time: 0s, max_time: 0.05s, rel_ci: 0.5, timeout: 60s}
factors:
  model: [mnist_cnn]
  batch: [2, 4]
  task: [infer, train]
  eval: [off, on]
  compile: [none, default]
design: {type: fractional, resolution: 4}
YAML
"$MATRIX" run native.yaml --out native > native.out 2>&1 || fail "native run: $(cat native.out)"
expect_eq "$(grep -c ',ok,' native/results.csv)" 8 "2^(4-1) native points measured"
expect_grep '^batch,A,2,4,4,4,[0-9.]*,[0-9.]*,[0-9.]*,[0-9.]*,[0-9.]*,$' native/tables/factorial.csv "batch's main effect from the native fraction"
expect_grep '^batch x task,AB,differ,same,,,aliased,,,,,eval x compile$' native/tables/factorial.csv "aliased pair in the native fraction"
echo ok
