# Cells that leave the program (issue 22, item 4): the `extra` cell escapes a
# value's ';', '%' and edge spaces so that every key reads back exactly (a
# value "x; m2=999" once made m2 read as 999); `matrix export --format csv`,
# meant for spreadsheets, starts a text cell that begins with = + - @ with an
# apostrophe (numbers left as they are), as do the report's tables/*.csv,
# while results.csv keeps the level exactly; the JSON export stays valid with control characters and bytes that
# are not UTF-8 in a received results.csv.
. "$top_srcdir/tests/setup"
cat > eng.sh <<'SH'
#!/bin/sh
printf 'status=ok\nthroughput=%s\nnote=x; m2=999\npct=100%%25 \nm2=%s\n' "$2" "$2" > "$MATRIX_RESULT"
SH
cat > r.yaml <<YAML
name: cells
engine: command
command: [sh, $work/eng.sh, "{v}", "{n}"]
factors:
  v: ["=HYPERLINK(\"http://example.com\",\"x\")", "+1+2", "@SUM(A1)", "-x", "plain"]
  n: ["5"]
YAML
expect_status 0 "$MATRIX" run r.yaml --out run --no-report > out.txt 2> err.txt
# results.csv keeps the levels as they are
expect_eq "$(csv_col run/results.csv v | sed -n 2p)" "+1+2" "a level in results.csv"
expect_grep ',"=HYPERLINK(""http://example.com"",""x"")",5,ok,' run/results.csv "a formula-like level kept exactly in results.csv"
# (pct's trailing blank is not part of its value: result files are read
# without their values' edge blanks, as the report reads them)
expect_grep 'note=x%3B m2=999; pct=100%2525; m2=5' run/results.csv "the extra cell escaped"
"$MATRIX" export run --format csv --metric m2 > e.csv
vals=$(/usr/bin/python3 -c 'import csv, sys; print(" ".join(r["value"] for r in csv.DictReader(open(sys.argv[1]))))' e.csv)
expect_eq "$vals" "5 5 5 5 5" "m2 read back from extra"
expect_grep "$(printf ",'+1+2,5,ok,")" e.csv "a level starting with + neutralised"
expect_grep "$(printf ",'@SUM(A1),5,ok,")" e.csv "a level starting with @ neutralised"
expect_grep "$(printf ",'-x,5,ok,")" e.csv "a level starting with - neutralised"
expect_grep ",\"'=HYPERLINK(\"\"http://example.com\"\",\"\"x\"\")\",5,ok," e.csv "a level starting with = neutralised"
expect_grep ',plain,5,ok,' e.csv "a plain level as it is"
# the report's tables/*.csv are opened in spreadsheets too: a level there is
# text, a number a number
expect_status 0 "$MATRIX" report run > /dev/null
expect_grep "^v,\"'=HYPERLINK(\"\"http://example.com\"\",\"\"x\"\")\",'+1+2," run/tables/effects.csv "effects.csv: levels neutralised"
expect_grep ",'@SUM(A1),5,1,5,,,samples/s,$" run/tables/points.csv "points.csv: a level neutralised, the value a number"
if grep -q "^=\|,=\|,\"=\|^\"=" run/tables/*.csv; then fail "a cell of tables/*.csv starts with '='"; fi
# a received results.csv with control characters and bytes that are not UTF-8
sed -i "s/,plain,5,ok,/,$(printf 'pl\001ai\377n'),5,ok,/" run/results.csv
sed -i "s/  v: \[\(.*\)\"plain\"\]/  v: [\1\"pl\\\\x01ai\\\\xffn\"]/" run/recipe.yaml
"$MATRIX" export run > e.json 2> err.txt || { cat err.txt >&2; fail "export of a results.csv with odd bytes"; }
/usr/bin/python3 - e.json <<'PY' || fail "the JSON export is not valid JSON"
import json, sys
j = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
assert any("\x01" in p["factors"]["v"] for p in j["points"]), j
PY
echo ok
