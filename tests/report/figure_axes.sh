# The baseline-vs-optimal figure stays readable (issue 19, item 1): with 12
# groups of long names the x tic labels are turned (set xtics rotate, room
# made below the axis) instead of overlapping, and its log y axis has tics
# at 1-2-5 steps inside the drawn range (values 100..2400 samples/s: 100,
# 200, 500, 1000, 2000), not gnuplot's powers of ten alone; with 2 short
# groups the labels stay level.
. "$top_srcdir/tests/setup"
levels=$(i=1; while [ $i -le 12 ]; do printf '%sa-model-with-a-long-name-%d' "${sep:-}" $i; sep=', '; i=$((i + 1)); done)
cat > r.yaml <<YAML
name: axes
engine: command
command: [sh, -c, 'n={model}; n=\${n##*-}; t=\$((n * 100)); [ {x} = b ] && t=\$((t * 2)); printf "status=ok\\nthroughput=%s\\nunit=samples/s\\n" \$t > "\$MATRIX_RESULT"']
factors:
  model: [$levels]
  x: [a, b]
YAML
"$MATRIX" run r.yaml --out run > out.txt 2>&1 || { cat out.txt >&2; fail "the run failed"; }
[ -s run/plots/best.svg ] || fail "best.svg not drawn"
expect_grep '^set xtics rotate by [0-9]* right$' run/plots/best.gp "12 long group labels turned"
expect_grep '^set ytics ("100" 100, "200" 200, "500" 500, "1000" 1000, "2000" 2000)$' run/plots/best.gp "1-2-5 log tics"
# two short groups: level labels
sed -e 's/^  model: .*/  model: [m-1, m-2]/' r.yaml > s.yaml
"$MATRIX" run s.yaml --out short > out2.txt 2>&1 || { cat out2.txt >&2; fail "the short run failed"; }
! grep -q '^set xtics rotate' short/plots/best.gp || fail "two short labels turned"
echo ok
