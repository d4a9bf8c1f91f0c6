# A template's comment lines are not substituted (issue 22, item 5): with
# long tic labels on x a figure carries a second line of settings, which once
# landed in the templates' "# Keys: @...@" comment and spilt the plot
# specification onto a live line; every figure must be drawn.
. "$top_srcdir/tests/setup"
cat > r.yaml <<YAML
name: many_levels
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, ok, "{v}", "{u}"]
factors:
  v: [1, 2]
  u: [first_configuration, second_configuration, third_configuration, fourth_configuration,
      fifth_configuration, sixth_configuration, seventh_configuration]
  w: [a, b]
baseline: {v: 1}
report:
  scatter: [{x: u, color: w}]
  bars: [{x: v, group: w}]
YAML
expect_status 0 "$MATRIX" run r.yaml --out run > out.txt 2> err.txt
for f in scatter_u_w normalised bars_v_w effects best; do
	[ -s "run/plots/$f.svg" ] || { cat run/plots/$f.err >&2 || :; fail "plots/$f.svg not drawn"; }
done
expect_grep 'set xtics rotate by 30' run/plots/scatter_u_w.gp "long tic labels rotated"
expect_grep '^# Keys: @TITLE@' run/plots/scatter_u_w.gp "the template's comment kept as it is"
echo ok
