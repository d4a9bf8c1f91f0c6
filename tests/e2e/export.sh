# matrix export DIR --format json|csv (issue 21, item 3): one entry per
# point with its factors, metric value, 95% interval, processes and status;
# failures kept with their reason; the JSON parses and agrees with the CSV.
. "$top_srcdir/tests/setup"
cat > r.yaml <<YAML
name: ex
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, "{mode}", "{speed}"]
factors:
  mode: [ok, fail]
  speed: [10, 20]
exclude:
  - {mode: fail, speed: 20}
YAML
"$MATRIX" run r.yaml --out run > /dev/null 2>&1 && fail "the failing point went unnoticed"
"$MATRIX" export run --format csv > e.csv
expect_eq "$(head -1 e.csv)" "id,mode,speed,status,metric,unit,value,ci95_lo,ci95_hi,processes,reason" "csv header"
expect_eq "$(csv_col e.csv value | head -2 | sort -n | tr '\n' ' ')" "10 20 " "values"
expect_eq "$(csv_col e.csv status | sort | tr '\n' ' ')" "failed ok ok " "statuses"
expect_eq "$(csv_col e.csv processes | head -2 | tr '\n' ' ')" "1 1 " "processes"
expect_eq "$(csv_col e.csv unit | head -1)" "samples/s" "unit"
lo=$(csv_col e.csv ci95_lo | head -1); hi=$(csv_col e.csv ci95_hi | head -1); v=$(csv_col e.csv value | head -1)
awk -v lo="$lo" -v hi="$hi" -v v="$v" 'BEGIN { exit !(lo > 0 && lo < v && v < hi) }' || fail "interval $lo..$hi around $v"
"$MATRIX" export run > e.json
if command -v python3 > /dev/null; then
	python3 - e.json e.csv <<'PY' || fail "the JSON does not parse or disagrees with the CSV"
import csv, json, sys
j = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
assert j["recipe"] == "ex" and j["metric"]["name"] == "throughput" and j["metric"]["higher_is_better"] is True
assert len(j["points"]) == len(rows) == 3
for p, r in zip(j["points"], rows):
    assert p["id"] == r["id"] and p["status"] == r["status"], (p, r)
    assert p["factors"] == {"mode": r["mode"], "speed": r["speed"]}
    if p["status"] == "ok":
        assert abs(p["value"] - float(r["value"])) < 1e-9 and p["ci95"][0] < p["value"] < p["ci95"][1]
        assert p["values"] == [p["value"]] and p["processes"] == 1
    else:
        assert "went wrong" in p["reason"], p
PY
fi
expect_status 2 "$MATRIX" export run --format xml 2> err.txt
expect_eq "$(cat err.txt)" "matrix: export: unknown format 'xml' (expected json or csv)" "bad format"
expect_status 2 "$MATRIX" export run --formt csv 2> err.txt
expect_eq "$(head -1 err.txt)" "matrix: export: unknown option '--formt' (did you mean '--format'?)" "option typo"
echo ok
