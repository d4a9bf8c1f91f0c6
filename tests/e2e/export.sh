# matrix export DIR --format json|jsonl|csv|markdown (issue 21, items 2
# and 3): one entry per point with its factors, metric value, 95% interval,
# processes, status, command and environment (from its row); failures kept
# with their reason; the JSON and JSON Lines parse and agree with the CSV,
# every digit kept; the Markdown table is report.md's per-point table.
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
expect_eq "$(head -1 e.csv)" "id,mode,speed,status,metric,unit,value,ci95_lo,ci95_hi,processes,reason,command,device,engine,node,workdir,git_commit,git_dirty,engine_path" "csv header"
expect_eq "$(csv_col e.csv workdir | sort -u)" "$PWD" "csv: where the points ran"
expect_eq "$(csv_col e.csv node | sort -u)" "$(hostname)" "csv: node"
# every digit: the interval's ends are not cut to 6 significant digits (the
# engine's 9.5 .. 10.5 ms about 10: the wider side, 10 / 9.5, both ways, so
# the low end is a round 9.5 and the high one 10 * 10 / 9.5)
csv_col e.csv ci95_hi | head -1 | grep -q '^[0-9]*\.[0-9]\{8,\}$' || fail "ci95_hi cut short: $(csv_col e.csv ci95_hi | head -1)"
expect_eq "$(csv_col e.csv value | head -2 | sort -n | tr '\n' ' ')" "10 20 " "values"
expect_eq "$(csv_col e.csv status | sort | tr '\n' ' ')" "failed ok ok " "statuses"
expect_eq "$(csv_col e.csv processes | head -2 | tr '\n' ' ')" "1 1 " "processes"
expect_eq "$(csv_col e.csv unit | head -1)" "samples/s" "unit"
lo=$(csv_col e.csv ci95_lo | head -1); hi=$(csv_col e.csv ci95_hi | head -1); v=$(csv_col e.csv value | head -1)
awk -v lo="$lo" -v hi="$hi" -v v="$v" 'BEGIN { exit !(lo > 0 && lo < v && v < hi) }' || fail "interval $lo..$hi around $v"
"$MATRIX" export run > e.json
"$MATRIX" export run --format jsonl > e.jsonl
expect_eq "$(wc -l < e.jsonl)" 3 "jsonl: a line per point"
if command -v python3 > /dev/null; then
	python3 - e.json e.csv e.jsonl <<'PY' || fail "the JSON does not parse or disagrees with the CSV"
import csv, json, sys
j = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
lines = [json.loads(l) for l in open(sys.argv[3])]
for p, l in zip(j["points"], lines):
    assert l["recipe"] == "ex" and l["metric"] == "throughput" and l["unit"] == "samples/s", l
    assert l["higher_is_better"] is True
    assert {k: v for k, v in l.items() if k not in ("recipe", "metric", "unit", "higher_is_better")} == p, (l, p)
assert j["recipe"] == "ex" and j["metric"]["name"] == "throughput" and j["metric"]["higher_is_better"] is True
assert len(j["points"]) == len(rows) == 3
for p, r in zip(j["points"], rows):
    assert p["id"] == r["id"] and p["status"] == r["status"], (p, r)
    assert p["factors"] == {"mode": r["mode"], "speed": r["speed"]}
    if p["status"] == "ok":
        assert p["value"] == float(r["value"]) and p["ci95"][0] < p["value"] < p["ci95"][1]
        assert p["ci95"] == [float(r["ci95_lo"]), float(r["ci95_hi"])], (p, r)
        assert p["values"] == [p["value"]] and p["processes"] == 1
    else:
        assert "went wrong" in p["reason"], p
    assert p["command"] == r["command"] and "engine.sh" in p["command"], p
    assert p["environment"]["workdir"] == r["workdir"] and p["environment"]["node"] == r["node"], p
PY
fi
# Markdown: the per-point table, the factors that vary, 3 significant digits
"$MATRIX" export run --format markdown > e.md
expect_eq "$(head -2 e.md)" "| mode | speed | throughput (samples/s) | 95% interval | status |
| --- | --- | ---: | --- | --- |" "markdown header"
expect_eq "$(sed -n 3,5p e.md | cut -d'|' -f2,3,4,6 | tr -s ' ' | sed 's/ $//')" " ok | 10 | 10 | ok
 ok | 20 | 20 | ok
 fail | 10 | | failed" "markdown rows in the recipe's level order"
sed -n 3p e.md | grep -q '| 9\.[0-9][0-9]* \.\. 1[0-9]\.[0-9]* |' || fail "markdown interval: $(sed -n 3p e.md)"
sed -n 3p e.md | grep -q '[0-9]\.[0-9]\{3\}' && fail "markdown with more than 3 significant digits: $(sed -n 3p e.md)"
# a merged study (matrix merge): one id is a point on every machine, and
# each point's command and environment come from its machine's row
SLURMD_NODENAME=node-b "$MATRIX" run r.yaml --out runb > /dev/null 2>&1 && fail "run b: the failing point went unnoticed"
"$MATRIX" merge run runb --out merged > /dev/null 2>&1 || fail "merge"
"$MATRIX" export merged --format csv > m.csv 2> /dev/null || fail "export of a merged study"
expect_eq "$(tail -n +2 m.csv | wc -l)" 6 "merged: every point on each machine"
expect_eq "$(csv_col m.csv node | sort | uniq -c | awk '{ printf "%s %s;", $1, $2 }')" \
	"$(printf '%s\n%s\n' "3 $(hostname)" "3 node-b" | sort -k2 | tr '\n' ';')" "merged: each machine's node"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "machine") m = i; if ($i == "node") n = i } next }
	index($m, $n) == 0 { bad = 1 } END { exit bad }' m.csv || fail "merged: a point's node is not its machine's: $(cat m.csv)"
# a factor named as another column (device and engine are the vocabulary's;
# value, metric may name a command engine's factors) is factors.NAME, its
# path in the JSON: the header had two 'device' columns, and a tool that
# reads by name got the factor's or the row's, whichever it took
cat > dev.yaml <<YAML
name: dev
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, ok, "{value}"]
factors:
  device: [cpu]
  value: [10, 20]
YAML
"$MATRIX" run dev.yaml --out devrun > /dev/null 2>&1 || fail "the run with a factor 'device' failed"
"$MATRIX" export devrun --format csv > dev.csv
expect_eq "$(head -1 dev.csv)" "id,factors.device,factors.value,status,metric,unit,value,ci95_lo,ci95_hi,processes,reason,command,device,engine,node,workdir,git_commit,git_dirty,engine_path" "csv header: no column twice"
expect_eq "$(csv_col dev.csv factors.value | tr '\n' ' ')" "10 20 " "the factor's column"
expect_eq "$(csv_col dev.csv value | tr '\n' ' ')" "10 20 " "the value column"
expect_status 2 "$MATRIX" export run --format xml 2> err.txt
expect_eq "$(cat err.txt)" "matrix: export: unknown format 'xml' (expected json, jsonl, csv or markdown)" "bad format"
expect_status 2 "$MATRIX" export run --formt csv 2> err.txt
expect_eq "$(head -1 err.txt)" "matrix: export: unknown option '--formt' (did you mean '--format'?)" "option typo"
echo ok
