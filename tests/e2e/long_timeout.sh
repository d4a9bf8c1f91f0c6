# A timeout of weeks (issue 22, LOW): measure.timeout 720h (30 days, the
# largest a recipe can write in hours) is 2.6e9 ms, beyond an int; the
# runner waits on its points in steps of at most an hour instead of
# converting the whole wait (CI's sanitizer pass, with float-cast-overflow,
# fails the conversion), so the points run and finish as under a short one.
. "$top_srcdir/tests/setup"
cat > r.yaml <<'YAML'
name: long_timeout
engine: command
command: [sh, -c, 'sleep 0.2; printf "status=ok\nthroughput=%s\nunit=samples/s\n" {v} > "$MATRIX_RESULT"']
factors:
  v: [1, 2]
measure: {timeout: 720h}
YAML
expect_status 0 "$MATRIX" run r.yaml --out run --jobs 2 > out.txt 2>&1
expect_eq "$(csv_col run/results.csv status | sort | uniq -c | tr -s ' ')" " 2 ok" "both points ok"
echo ok
