# Figure facets (issue 19, item 1): where: draws the points at some levels
# only, panels: one panel per level on the same axes (gnuplot multiplot),
# bars grouped by two factors in panels, numeric factors on a sorted numeric
# axis with lines (log when they span more than 100x), the effects figure
# without the workload factors; `matrix report --where/--panels`, and their
# mistakes (exit 2, nothing written). Checked in the scripts and data the
# report writes. A command engine with a known throughput, 64 points (~3 s).
. "$top_srcdir/tests/setup"
cat > eng.sh <<'SH'
#!/bin/sh
# eng.sh MODEL PRECISION BATCH THREADS VERSION: 100 * sqrt(batch) * threads,
# x 0.25 big, x 2 fp16, x 1.2 v2
awk -v m="$1" -v p="$2" -v b="$3" -v t="$4" -v v="$5" 'BEGIN {
	x = 100 * sqrt(b) * t
	if (m == "big") x *= 0.25
	if (p == "fp16") x *= 2
	if (v == "v2") x *= 1.2
	printf "status=ok\nthroughput=%.10g\nunit=samples/s\n", x
}' > "$MATRIX_RESULT"
SH
cat > f.yaml <<YAML
name: facets
engine: command
command: [sh, $work/eng.sh, "{model}", "{precision}", "{batch}", "{threads}", "{version}"]
factors:
  model: [small, big]
  precision: [fp32, fp16]
  batch: [64, 1, 512, 8]
  threads: [2, 1]
  version: [v1, v2]
baseline: {precision: fp32, version: v1, threads: 1}
report:
  scatter:
    - {x: model, color: precision, where: {precision: fp16}}
    - {x: model, color: precision, where: {precision: fp32}}
    - {x: batch, color: precision}
    - {x: threads, color: model}
    - {x: model, color: batch, panels: version}
  normalised: [{x: model, color: precision, panels: precision}]
  bars:
    - {x: version, group: batch, panels: [model, precision]}
    - {x: batch, group: version}
  best: [{where: {version: v2}, panels: precision}]
YAML
"$MATRIX" run f.yaml --out run > run.txt 2> run.err || fail "run failed: $(cat run.err)"
P=run/plots
# drawn PNG SVG...: every figure drawn, in report.html
drawn() {
	for f in "$@"; do
		[ -s "$P/$f.svg" ] && [ -s "$P/$f.png" ] || { cat "$P/$f.err" >&2 || :; fail "$f not drawn"; }
		grep -q "id=\"fig-$f\"" run/report.html || fail "$f not in report.html"
	done
}
drawn scatter_model_precision_where_precision scatter_batch_precision scatter_threads_model \
	scatter_model_batch_by_version normalised_model_precision_by_precision \
	bars_version_batch_by_model_precision bars_batch_version best_by_precision_where_version effects
# points NAME: the dots of a scatter's data (rows with an id)
points() { awk -F'\t' 'NF == 5' "$P/$1.dat" | wc -l | tr -d ' '; }
# block NAME I COL: column COL of data block I, in order
block() { awk -F'\t' -v want="$2" -v col="$3" 'NF == 0 { blank++; next } { if (blank >= 2) b++; blank = 0 } b == want && !/^#/ { print $col }' "$P/$1.dat" | tr '\n' ' '; }

# where: the fp16 points only, one colour
expect_eq "$(points scatter_model_precision_where_precision)" 32 "points where precision = fp16"
expect_grep 'title "fp16"' $P/scatter_model_precision_where_precision.gp "fp16 dots"
grep -q 'title "fp32"' $P/scatter_model_precision_where_precision.gp && fail "fp32 dots drawn where precision = fp16"
expect_grep 'where precision = fp16' $P/scatter_model_precision_where_precision.gp "the title says where"
expect_eq "$(points scatter_model_precision_where_precision_2)" 32 "a second where on the same factor"
expect_grep 'title "fp32"' $P/scatter_model_precision_where_precision_2.gp "its own file"
expect_eq "$(points scatter_batch_precision)" 64 "every point without where"

# numeric axes: batch (declared 64, 1, 512, 8) sorted, log (512x); threads linear
expect_grep 'set xtics ("1" 1, "8" 8, "64" 64, "512" 512)' $P/scatter_batch_precision.gp "batch tics in numeric order"
expect_grep '^set logscale x' $P/scatter_batch_precision.gp "log x for batch"
expect_eq "$(block scatter_batch_precision 1 1)" "1 8 64 512 " "the fp32 line, in numeric order"
expect_grep 'with lines' $P/scatter_batch_precision.gp "lines through the means"
grep -q '^set logscale x' $P/scatter_threads_model.gp && fail "log x for threads 1..2"
expect_grep 'set xtics ("1" 1, "2" 2)' $P/scatter_threads_model.gp "threads tics in numeric order"
expect_eq "$(grep -o 'title "[0-9]*"' $P/scatter_model_batch_by_version.gp | head -n 4 | tr '\n' ' ')" \
	'title "1" title "8" title "64" title "512" ' "a numeric colour factor's key in numeric order"
expect_eq "$(grep -o 'title "[0-9]*"' $P/bars_version_batch_by_model_precision.gp | head -n 4 | tr '\n' ' ')" \
	'title "1" title "8" title "64" title "512" ' "a numeric group factor's bars in numeric order"
expect_grep 'yerrorlines' $P/bars_batch_version.gp "bars on a numeric x are lines"
expect_grep '^set logscale x' $P/bars_batch_version.gp "log x for the batch lines"
expect_eq "$(block bars_batch_version 0 1)" "1 8 64 512 " "the batch rows in numeric order"

# panels: one per level (pair of levels), the same axes
expect_grep 'set multiplot layout 1,2' $P/scatter_model_batch_by_version.gp "two panels by version"
expect_eq "$(grep -c '^plot ' $P/scatter_model_batch_by_version.gp)" 2 "plot commands of two panels"
expect_grep 'set title "version = v2"' $P/scatter_model_batch_by_version.gp "panel title"
expect_grep '^set yrange \[' $P/scatter_model_batch_by_version.gp "one y range for every panel"
expect_grep 'set multiplot layout 2,2' $P/bars_version_batch_by_model_precision.gp "bars per model x precision"
expect_eq "$(grep -c '^plot ' $P/bars_version_batch_by_model_precision.gp)" 4 "four bar charts"
expect_grep 'set title "model = big, precision = fp16"' $P/bars_version_batch_by_model_precision.gp "panel of two factors"
expect_eq "$(grep -c '^# x' $P/bars_version_batch_by_model_precision.dat)" 4 "a data block per panel"
expect_grep 'set multiplot layout 1,2' $P/normalised_model_precision_by_precision.gp "normalised in panels"

# best: the optimal where version = v2 (threads 2), per precision panel,
# against the recipe's baseline (fp32, v1, threads 1): x2.4, and x4.8 at fp16
expect_eq "$(block best_by_precision_where_version 0 9 | tr ' ' '\n' | sort -u | tr '\n' ' ')" "×2.4 " "fp32 panel gains"
expect_eq "$(block best_by_precision_where_version 1 9 | tr ' ' '\n' | sort -u | tr '\n' ' ')" "×4.8 " "fp16 panel gains"

# effects: without model and batch by default, said in the caption
grep -q '"model: \|"batch: ' $P/effects.gp && fail "the effects figure shows model or batch"
expect_grep 'precision: fp32 → fp16' $P/effects.gp "the effects figure shows precision"
expect_grep 'Left out: the effects of .*model' run/report.md "the caption says what is left out"

# matrix report --where / --panels: added to every such figure
expect_status 0 "$MATRIX" report --quiet run --where=model=big --panels precision --metric throughput
expect_eq "$(points scatter_threads_model_by_precision_where_model)" 32 "--where model=big"
expect_grep 'set multiplot layout 1,2' $P/scatter_threads_model_by_precision_where_model.gp "--panels precision"
[ -s $P/scatter_batch_precision_where_model.svg ] || fail "a figure coloured by the panel factor keeps one panel"
grep -q multiplot $P/scatter_batch_precision_where_model.gp && fail "panels by the colour factor"
expect_grep 'set multiplot layout 1,2' $P/scatter_model_batch_by_version_where_model.gp "a figure's own panels stay"
# a where that keeps nothing: listed as not drawn, not a failure
expect_status 0 "$MATRIX" report --quiet run --where version=v1
expect_grep 'no measured point is left where version = v2 and version = v1' run/report.md "empty figure noted"

# mistakes: exit 2 with a suggestion, the report left as it was
cp run/report.md before.md
check_err() {
	expect_status 2 "$MATRIX" report run "$@" 2> err.txt
	expect_eq "$(cat err.txt)" "$msg" "$*"
}
msg="matrix: --where 'precison=fp16': unknown factor 'precison' (did you mean 'precision'?)"
check_err --where precison=fp16
msg="matrix: --where 'precision=fp61': unknown level 'fp61' for factor 'precision' (did you mean 'fp16'?)"
check_err --where precision=fp61
msg="matrix: --where 'precision': expected FACTOR=LEVEL[,LEVEL...]"
check_err --where precision
msg="matrix: --panels 'model,batch,version': at most 2 factors make panels"
check_err --panels model,batch,version
msg="matrix: --panels 'modle': unknown factor 'modle' (did you mean 'model'?)"
check_err --panels modle
cmp before.md run/report.md || fail "a mistake changed the report"

# an override that removes the only level a where keeps drops that figure
expect_eq "$("$MATRIX" expand f.yaml precision=fp32 --count)" 32 "override of a where level"

# levels that look like decimals (versions 2.10 and 2.2) are categories in the
# recipe's order, not a numeric axis (where 2.10 would be 2.1, before 2.2)
cat > v.yaml <<YAML
name: versions
engine: command
command: [sh, $work/eng.sh, small, fp32, 8, 1, "{version}"]
factors:
  version: ["2.2", "2.10"]
report:
  bars: [{x: version}]
YAML
"$MATRIX" run v.yaml --out vrun > vrun.txt 2> vrun.err || fail "versions run failed: $(cat vrun.err)"
grep -q 'yerrorlines\|^set logscale x' vrun/plots/bars_version.gp && fail "versions 2.2 and 2.10 drawn on a numeric axis"
expect_eq "$(awk -F'\t' 'NF > 1 && !/^#/ { print $5 }' vrun/plots/bars_version.dat | tr '\n' ' ')" "2.2 2.10 " \
	"versions in the recipe's order"

# a panel without points (model big has no baseline point: excluded) is left
# empty with a note; the figure is still drawn (gnuplot fails on an empty
# data block, which made the whole figure fail)
cat > e.yaml <<YAML
name: empty-panel
engine: command
command: [sh, $work/eng.sh, "{model}", "{precision}", 8, 1, "{version}"]
factors:
  model: [small, big]
  version: [v1, v2]
  precision: [fp32, fp16]
baseline: {version: v1, precision: fp32}
exclude:
  - {model: big, version: v1}
report:
  best: [{panels: model}]
  normalised: [{x: version, color: precision, panels: model}]
YAML
"$MATRIX" run e.yaml --out erun > erun.txt 2> erun.err || fail "empty-panel run failed: $(cat erun.err)"
P=erun/plots
for f in best_by_model normalised_version_precision_by_model; do
	[ -s $P/$f.png ] && [ -s $P/$f.svg ] || fail "$f not drawn: $(cat $P/$f.err 2>/dev/null)"
	expect_grep 'set label 900 "model = big: no points"' $P/$f.gp "$f: the empty panel's note"
	expect_grep '^set multiplot next' $P/$f.gp "$f: the empty panel skipped"
done
echo ok
