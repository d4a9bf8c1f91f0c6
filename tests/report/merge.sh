# Runs merged across machines (issue 19, item 2), from real runs (about 5 s):
# two native CPU runs of a tiny study, the second on "another node" and with
# a factor the first lacks; two runs of the known-answers engine at two
# engine versions. `matrix merge` and `matrix report A B` make one study in
# which machine is a factor (effects, best per machine, figures coloured by
# it, export), say which factors differ and what they left out, and warn
# about points measured with different engine versions; bad input is exit 2
# with nothing written, the same measurements twice (a run given twice, a
# copy of it) among it.
#
# The second node, honestly: the runner writes each row's node from
# SLURMD_NODENAME when it is set (Slurm's name for the node a task runs on,
# the override the runner already has), so run B's rows say node-b while
# its env.txt (the front end's) names this host, as a Slurm run's would.
. "$top_srcdir/tests/setup"
host=$(uname -n)
cat > tiny.yaml <<'EOF'
name: tiny
engine: native
device: cpu
measure: {warmup: 2, min_time: 0.05s, max_time: 0.2s, rel_ci: 0.5, timeout: 60s}
factors:
  model: [mnist_cnn]
  task: [infer]
  batch: [1, 4]
  threads: [1]
  compile: [none, default]
report:
  metric: throughput
  scatter: [{x: batch, color: compile, where: {batch: [1, 4]}, panels: compile}]
  improvements: [{factor: compile, from: none, to: default, by: [batch]}]
EOF
"$MATRIX" run tiny.yaml --out A --no-report > a.txt 2>&1 || { cat a.txt >&2; fail "run A failed"; }
SLURMD_NODENAME=node-b "$MATRIX" run tiny.yaml factors.eval=off,on batch=1,16 --out B --no-report > b.txt 2>&1 ||
	{ cat b.txt >&2; fail "run B failed"; }
expect_eq "$(csv_col B/results.csv status | sort -u)" ok "B's points ran"
grep -q '^host: ' B/env.txt || fail "B/env.txt has no host line"
# rowkey FILE KEY: the first row's KEY, its column or its key in extra
rowkey() {
	python3 - "$1" "$2" <<'PY'
import csv, sys
row = next(csv.DictReader(open(sys.argv[1], newline="")))
if row.get(sys.argv[2]):
    print(row[sys.argv[2]])
else:
    print("".join(kv.split("=", 1)[1] for kv in row["extra"].split("; ") if kv.startswith(sys.argv[2] + "=")))
PY
}
cpu_a=$(rowkey A/results.csv cpu)
[ -n "$cpu_a" ] || fail "A's rows name no cpu"
ma="$cpu_a ($host)" mb="$cpu_a (node-b)"

# matrix merge: what it did, said
expect_status 0 "$MATRIX" merge A B --out M > m.out 2> m.err
expect_grep "^M (2 runs; 'matrix report M' reports them as one study)$" m.out "merge says where"
expect_grep "^matrix: merged 2 runs into one study with the factor 'machine' (2 levels): 'A' as run 1 (tiny, 4 rows, on $ma); 'B' as run 2 (tiny, 8 rows, on $mb)\.$" m.err "the runs and their machines"
expect_grep "^matrix: factor 'eval' is not in every run: it is in 'B' (off on): its rows at eval=off kept, 4 at other levels left out and not in 'A'; the merged study has the factors the runs share, without it\. 4 rows left out\.$" m.err "the differing factor"
grep -q warning m.err && fail "a warning about one engine version: $(cat m.err)"
for f in merge.txt env.txt runs/1/recipe.yaml runs/1/results.csv runs/2/results.csv runs/2/env.txt; do
	[ -s "M/$f" ] || fail "M/$f missing"
done
ls M/runs/1/logs/*.log > /dev/null || fail "A's logs not copied"
expect_grep "^run: runs/1 $(cd A && pwd)$" M/merge.txt "merge.txt names run 1"
expect_eq "$(grep -c '^== run [12]: runs/[12], from ' M/env.txt)" 2 "env.txt: both runs'"

# matrix report M: one study over machine
expect_status 0 "$MATRIX" report M > r.out 2> r.err
expect_grep "factor 'eval' is not in every run" r.err "the report says it again"
expect_grep '^machine,' M/tables/effects.csv "machine is a factor of the effects"
# batch 1 is the one point both machines ran: 2 matched pairs (compile none, default)
expect_eq "$(awk -F, '$1 == "machine" { print $4 }' M/tables/effects.csv)" 2 "machine: matched pairs"
expect_grep '^batch,1,4,' M/tables/effects.csv "batch's levels from both runs"
expect_grep 'batch (1 4 16)' M/report.md "batch's levels: A's, then B's"
expect_grep '^## Merged runs$' M/report.md "report.md has the merge section"
expect_grep "factor 'eval' is not in every run" M/report.md "report.md says which factors differ"
expect_grep 'Merged runs</h2>' M/report.html "report.html has the merge section"
expect_grep "machine (.*$mb" M/report.md "the factors list machine's levels"
# the recipe's where: names batch 1 and 4, so B's batch 16 is not drawn
f=$(ls M/plots/scatter_batch_compile*.dat | head -n 1)
[ -s "$f" ] || fail "the recipe's faceted scatter was not drawn ($(ls M/plots | tr '\n' ' '))"
# (the x axis is batch's numeric one: points jittered around 1 and 4)
expect_eq "$(awk '!/^#/ && NF >= 2 && $1 > 10' "$f" | wc -l | tr -d ' ')" 0 "batch 16 not in the where's figure"
expect_eq "$(awk '!/^#/ && NF == 5' "$f" | wc -l | tr -d ' ')" 6 "the where's points: batch 1 and 4 (A's 4, B's 2)"
# facets over machine from the command line: a panel per machine
# (B ran batch 1 too: each machine's group has its baseline point)
"$MATRIX" report --quiet --panels machine --where compile=none M 2> p.err ||
	{ cat p.err >&2; fail "report --panels machine --where compile=none"; }
ls M/plots/*by_machine*.svg > /dev/null 2>&1 || fail "no figure in panels per machine ($(ls M/plots | tr '\n' ' '))"
"$MATRIX" report --quiet M > p.out 2> p.err || { cat p.err >&2; fail "report M again"; }
# --quiet prints nothing but errors and warnings: not the merge's notes
[ -s p.out ] && fail "report --quiet printed: $(cat p.out)"
grep -v '^matrix: warning:' p.err > p.notes && fail "report --quiet printed notes: $(cat p.notes)"
# and its help says so (it said 'print nothing but errors')
"$MATRIX" help report > help.txt
expect_grep '^  -q, --quiet  *print nothing but errors and warnings' help.txt "report --help on --quiet"
"$MATRIX" report M > p.out 2> p.err || { cat p.err >&2; fail "report M without --quiet"; }
expect_grep 'merged 2 runs into one study' p.err "report M prints the merge notes"
for f in scatter_batch_machine bars_batch_machine effects best; do
	[ -s "M/plots/$f.svg" ] || fail "figure $f missing ($(ls M/plots | tr '\n' ' '))"
done
# no baseline: every factor a setting at its first level, but machine and
# those that say what is measured (batch): the best configuration is per
# batch and machine
expect_eq "$(awk -F, 'NR > 1 { print $1 }' M/tables/best.csv | tr '\n' '|')" \
	"batch=1 machine=$ma|batch=1 machine=$mb|batch=4 machine=$ma|batch=16 machine=$mb|" "best configuration per batch and machine"
# export: every point with its machine
"$MATRIX" export M --format csv > m.csv
expect_eq "$(csv_col m.csv machine | sort | uniq -c | awk '{ print $1 }' | tr '\n' ' ')" "4 4 " "points per machine"
expect_eq "$(awk -F, 'NR > 1' m.csv | wc -l | tr -d ' ')" 8 "points exported (A 4, B 4 at eval=off)"

# matrix report A B: the same, into --out, or next to A by default
expect_status 0 "$MATRIX" report --quiet A B --out R 2> r2.err
[ -s R/report.html ] && [ -s R/merge.txt ] || fail "report A B --out R wrote no merged report"
cmp M/tables/effects.csv R/tables/effects.csv || fail "report A B and merge + report differ"
# compare reads a merged directory as one run: M against R, the same runs
expect_status 0 "$MATRIX" compare M R > c.out 2> c.err
expect_grep "8 matched points" c.out "compare matches every point, machine included"
# each merge note once, though both sides are merged directories of the same
# runs (and the same directory twice)
expect_eq "$(grep -c "merged 2 runs into one study" c.err)" 1 "compare M R: the merge note once"
expect_status 0 "$MATRIX" compare M M > c2.out 2> c2.err
expect_eq "$(grep -c "factor 'eval' is not in every run" c2.err)" 1 "compare M M: the factor note once"
expect_eq "$(sort c2.err | uniq -d)" "" "compare M M: no line twice"
# the table's columns line up however long the point labels (the machines'
# names): each row's processes end under the header's "procs"
awk '/^point / { h = index($0, "procs") + 4 } h && / 1\/1  / { n++; if (index($0, " 1/1  ") + 3 != h) bad++ }
	END { exit !(h && n == 8 && !bad) }' c2.out || { cat c2.out >&2; fail "compare's columns do not line up"; }
expect_status 0 "$MATRIX" report A B > r3.out 2> r3.err
d=$(sed -n 's|^\(\./merged-[0-9]\{8\}-[0-9]\{6\}\)/report.html.*|\1|p' r3.out)
[ -n "$d" ] && [ -s "$d/merge.txt" ] || fail "report A B without --out: $(cat r3.out)"

# engine versions: the known-answers engine at version 1, then 2, same points
sed "s|@ENGINE@|$top_srcdir/tests/report/engine.sh|" "$top_srcdir/tests/report/known.yaml.in" > known.yaml
"$MATRIX" run known.yaml gpus=1 C=x --out K1 --no-report > /dev/null 2>&1 || fail "run K1 failed"
KNOWN_ENGINE_VERSION=2 "$MATRIX" run known.yaml gpus=1 C=x --out K2 --no-report > /dev/null 2>&1 || fail "run K2 failed"
expect_status 0 "$MATRIX" report K1 K2 --out K > k.out 2> k.err
# runs measured differently: pooled, and said
"$MATRIX" run known.yaml gpus=1 C=x measure.min_time=0.02s --out K3 --no-report > /dev/null 2>&1 || fail "run K3 failed"
expect_status 0 "$MATRIX" merge K1 K3 --out K13 2> k13.err
expect_grep "^matrix: 'K1' and 'K3' measured differently (min_time [0-9.e-]*s / 0.02s): a point's processes from both are pooled as alike$" k13.err "differing measurement settings"
if grep -q 'measured differently' k.err; then fail "K1 and K2 measured alike: $(grep 'measured differently' k.err)"; fi
# the command engine's rows name no CPU: env.txt's does (when it has one)
ecpu=$(sed -n '/^cpu:$/{n;p;q;}' K1/env.txt)
mk=${ecpu:+$ecpu ($host)}
mk=${mk:-$host}
expect_grep "^matrix: warning: 8 points were measured with different engine versions, so their repeats or the differences between machines mix versions: model=big A=off B=off C=x gpus=1: known 1 on $mk (run 1), known 2 on $mk (run 2); .*; \.\.\.$" k.err "the version warning"
expect_grep "warning: 8 points were measured with different engine versions" K/report.md "the warning in report.md"
# one machine: the two runs' rows are two processes of each point
expect_eq "$(csv_col K/tables/points.csv processes | sort -u)" 2 "two processes per point"

# bad input: exit 2, nothing written
expect_status 2 "$MATRIX" merge A --out X 2> e1.txt
expect_grep "merge needs two or more run directories" e1.txt "one run"
expect_status 2 "$MATRIX" merge A B 2> e2.txt
expect_grep "merge needs --out DIR" e2.txt "no --out"
expect_status 2 "$MATRIX" merge A nowhere --out X 2> e3.txt
expect_grep "^matrix: 'nowhere' does not exist$" e3.txt "not a run directory"
[ ! -e X ] || fail "a failed merge wrote X"
expect_status 2 "$MATRIX" merge A B --out M 2> e4.txt
expect_grep "^matrix: 'M' is not empty: a merge writes a new directory$" e4.txt "existing directory"
expect_status 2 "$MATRIX" status M 2> e7.txt
expect_grep "^matrix: 'M' is a merged directory (matrix merge): it has no plan; 'matrix report' reads it as one study$" e7.txt "status on a merged directory"
expect_status 2 "$MATRIX" run --resume M 2> e8.txt
expect_grep "^matrix: 'M' is a merged directory (matrix merge): it is reported, not resumed; resume the runs it copied$" e8.txt "resume of a merged directory"
# the same measurements twice: a run given twice, or a copy of it (its
# rows would count as more processes than ran)
expect_status 2 "$MATRIX" merge A A --out X 2> e9.txt
expect_grep "^matrix: 'A' (run 1) and 'A' (run 2) hold the same measurements (4 row(s), e.g. logs/[0-9a-f]*\.[0-9a-f]*\.result): a run given twice, or a copy of one" e9.txt "a run merged with itself"
cp -r A Acopy
expect_status 2 "$MATRIX" merge B Acopy A --out X 2> e10.txt
expect_grep "^matrix: 'Acopy' (run 2) and 'A' (run 3) hold the same measurements (4 row(s)" e10.txt "a run merged with its copy"
expect_status 2 "$MATRIX" report A Acopy 2> e11.txt
expect_grep "hold the same measurements" e11.txt "report of a run and its copy"
[ ! -e X ] || fail "a refused merge wrote X"
expect_status 2 "$MATRIX" report A --out X 2> e5.txt
expect_grep "give two or more directories" e5.txt "--out with one directory"
# a run with a factor called machine (a copy of K1, factor C renamed in its
# recipe and results.csv)
mkdir C && sed -e 's/^  C: /  machine: /' -e 's/{C}/{machine}/' -e 's/C: x,/machine: x,/' K1/recipe.yaml > C/recipe.yaml
sed '1s/,C,/,machine,/' K1/results.csv > C/results.csv
"$MATRIX" expand C/recipe.yaml > /dev/null || fail "C's recipe does not load"
expect_status 2 "$MATRIX" merge K1 C --out X 2> e6.txt
expect_grep "its recipe has a factor 'machine', the one a merge adds" e6.txt "a machine factor already"
# a received results.csv with a column 'machine' that is no factor (here its
# unit column renamed): the merge makes that column itself; the run's was
# read as the machine of its rows ("samples/s")
mkdir U && cp K1/recipe.yaml U/ && sed '1s/,unit,/,machine,/' K1/results.csv > U/results.csv
expect_status 0 "$MATRIX" merge U K2 --out UM 2> u.err
"$MATRIX" export UM --format csv > um.csv
expect_eq "$(csv_col um.csv machine | sort -u | tr '\n' '|')" "$mk|" "a run's own 'machine' column is not the merge's"
# a factor named device, whose column the results.csv has twice (the
# factor's, then the result's, which a command engine fills as it likes): the
# merged rows keep the factor's level (the result's replaced it, and leaked)
cat > dev.yaml <<YAML
name: dev
engine: command
command: [sh, -c, 'printf "status=ok\\nthroughput=%s\\ndevice=elsewhere\\n" "\$1" > "\$MATRIX_RESULT"', sh, "{v}"]
factors:
  device: [cpu]
  v: ["1", "2"]
YAML
"$MATRIX" run dev.yaml --out D1 --no-report > /dev/null 2>&1 || fail "run D1 failed"
"$MATRIX" run dev.yaml --out D2 --no-report > /dev/null 2>&1 || fail "run D2 failed"
expect_grep "^id,index,repeat,device,v,status,.*,device," D1/results.csv "the device column twice"
expect_status 0 "$MATRIX" merge D1 D2 --out DM 2> d.err
"$MATRIX" export DM --format csv > dm.csv
expect_eq "$(csv_col dm.csv factors.device | sort | uniq -c | awk '{ print $1 $2 }' | tr '\n' ' ')" "2cpu " "the factor's level kept in the merge"
# a GPU names its machine: the rows' node (SLURMD_NODENAME) with the GPU
# that node's rows name (key gpu); a node's CPU points, which name no GPU,
# are on the same machine as its GPU points, not on a machine of their own
cat > g.yaml <<'YAML'
name: gpus
engine: command
command: [sh, -c, 'printf "status=ok\nthroughput=%s\nunit=samples/s\n" {v} > "$MATRIX_RESULT"; [ {dev} = cpu ] || echo "gpu=$GPU" >> "$MATRIX_RESULT"']
factors:
  dev: [cuda, cpu]
  v: [1, 2]
YAML
SLURMD_NODENAME=gpu-node-1 GPU="NVIDIA H100 80GB HBM3" "$MATRIX" run g.yaml --out G1 --no-report > /dev/null 2>&1 || fail "run G1"
SLURMD_NODENAME=gpu-node-2 GPU="NVIDIA A100-SXM4-80GB" "$MATRIX" run g.yaml --out G2 --no-report > /dev/null 2>&1 || fail "run G2"
expect_status 0 "$MATRIX" merge G1 G2 --out GM 2> gm.err
expect_grep "'G1' as run 1 (gpus, 4 rows, on NVIDIA H100 80GB HBM3 (gpu-node-1)); 'G2' as run 2 (gpus, 4 rows, on NVIDIA A100-SXM4-80GB (gpu-node-2))" gm.err "machines named by their GPU"
"$MATRIX" export GM --format csv > gm.csv
expect_eq "$(csv_col gm.csv machine | sort | uniq -c | awk '{ print $1 }' | tr '\n' ' ')" "4 4 " "a node's CPU and GPU points on one machine"
echo ok
