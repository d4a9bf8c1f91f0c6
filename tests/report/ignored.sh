# A best configuration that differs from the baseline in a setting the
# engine ignored at that point (the row's `ignored`): the setting is no
# reason for the gain, and the summary and the best table say so. On the
# inference cube's CPU slice, channels_last (ignored for bert_tiny) was the
# "best" for bert_tiny with a gain of 1.17 and nothing said it did nothing.
. "$top_srcdir/tests/setup"
# K=on is "faster" (as one process can be) and ignored; L=on is faster and used
cat > ig.yaml <<'YAML'
name: ig
engine: command
command: [sh, -c, 't=100; ign=; [ {K} = on ] && t=120 && ign=K; [ {L} = on ] && t=$((t + 50)); printf "status=ok\nthroughput=%s\nunit=samples/s\nstep_ms=10\nstep_ms_lo=9.99\nstep_ms_hi=10.01\nignored=%s\n" $t "$ign" > "$MATRIX_RESULT"']
factors:
  grp: [a, b]
  K: ["off", "on"]
  L: ["off", "on"]
exclude:
  - {grp: b, L: "on"}
baseline: {K: "off", L: "off"}
YAML
"$MATRIX" run ig.yaml --out run > run.out 2>&1 || { cat run.out >&2; fail "the run failed"; }
expect_grep "grp=a: best K=on (ignored by the engine) L=on: " run.out "summary: the ignored setting named"
expect_grep "grp=b: best K=on (ignored by the engine): " run.out "summary: the ignored setting alone"
expect_grep "Settings of a best configuration that the engine ignored at that point (its row's ignored column), so no reason for the gain (2): grp=a: K=on; grp=b: K=on\." run/report.md "best table caption"
# a setting the engine used: not named
if grep -q "L=on (ignored" run.out; then fail "a used setting called ignored: $(cat run.out)"; fi
# best_config stays the settings alone (CSV readers split it on spaces)
expect_grep '^grp=a,.*,K=on L=on,' run/tables/best.csv "best.csv: best_config unchanged"
echo ok
