# Command-line mistakes get help (issue 21): did-you-mean for commands,
# options, --only factors and levels and metrics; a filter that keeps no
# point and an unknown metric are errors (exit 2, nothing overwritten);
# help per command; versions; a recipe typo's follow-on errors do not suggest
# the typo. Every message is compared with its exact text.
. "$top_srcdir/tests/setup"
# check NAME STATUS CMD...: run CMD, compare its stderr with the file NAME.want
check() {
	name=$1 want=$2; shift 2
	set +e; "$@" > "$name.out" 2> "$name.err"; got=$?; set -e
	[ "$got" = "$want" ] || { cat "$name.err" >&2; fail "$name: '$*' exited $got, expected $want"; }
	cmp "$name.want" "$name.err" || { diff "$name.want" "$name.err" >&2; fail "$name: stderr differs"; }
}
cat > a.yaml <<'YAML'
name: a
engine: native
factors:
  model: [resnet18, resnet50]
  batch: [1, 8, 64]
  precision: [fp32, fp16]
exclude:
  - {model: resnet50, batch: [1, 8], precision: fp16}
YAML

usage_run=$("$MATRIX" run --help | sed -n 's/^usage: //p')
echo "matrix: 'runn' is not a matrix command (did you mean 'run'?)" > runn.want
check runn 2 "$MATRIX" runn a.yaml
echo "matrix: 'frobnicate' is not a matrix command (see 'matrix --help')" > frob.want
check frob 2 "$MATRIX" frobnicate
printf "matrix: run: unknown option '--dryrun' (did you mean '--dry-run'?)\nusage: %s\n" "$usage_run" > dryrun.want
check dryrun 2 "$MATRIX" run a.yaml --dryrun
printf "matrix: run: unknown option '--frobnicate'\nusage: %s\n" "$usage_run" > frobopt.want
check frobopt 2 "$MATRIX" run a.yaml --frobnicate
echo "matrix: unknown option '--verison' (did you mean '--version'?)" > verison.want
check verison 2 "$MATRIX" --verison

# an override written with a space or YAML's colon says how it is written
# (it said only "more than one recipe given ('a.yaml' and 'batch')")
usage_expand=$("$MATRIX" expand --help | sed -n 's/^usage: //p')
printf "matrix: expand: more than one recipe given ('a.yaml' and 'batch'): an override is one argument, KEY=VALUE: 'batch=8'\nusage: %s\n" "$usage_expand" > space.want
check space 2 "$MATRIX" expand a.yaml batch 8 --count
printf "matrix: run: more than one recipe given ('a.yaml' and 'batch:'): an override is one argument, KEY=VALUE: 'batch=8'\nusage: %s\n" "$usage_run" > colon.want
check colon 2 "$MATRIX" run a.yaml batch: 8 --dry-run
printf "matrix: expand: more than one recipe given ('a.yaml' and 'batch:8'): an override is one argument, KEY=VALUE: 'batch=8'\nusage: %s\n" "$usage_expand" > colon2.want
check colon2 2 "$MATRIX" expand a.yaml batch:8
cp a.yaml b.yaml
printf "matrix: expand: more than one recipe given ('a.yaml' and 'b.yaml')\nusage: %s\n" "$usage_expand" > two.want
check two 2 "$MATRIX" expand a.yaml b.yaml

# --only: unknown factor or level, and a filter that keeps nothing
echo "matrix: --only: the recipe has no factor 'modl' (did you mean 'model'?)" > modl.want
check modl 2 "$MATRIX" run a.yaml --only modl=resnet18 --dry-run
echo "matrix: --only: the recipe has no factor 'size' (factors: model, batch, precision)" > size.want
check size 2 "$MATRIX" expand a.yaml --only size=1
echo "matrix: --only: factor 'model' has no level 'resnet5' (did you mean 'resnet50'?)" > lvl.want
check lvl 2 "$MATRIX" expand a.yaml --only model=resnet5
echo "matrix: --only: factor 'batch' has no level '2' (levels: 1, 8, 64)" > lvl2.want
check lvl2 2 "$MATRIX" expand a.yaml --only batch=2
echo "matrix: --only: no point of the plan matches 'id=deadbeef'" > id.want
check id 2 "$MATRIX" expand a.yaml --only model=resnet18,id=deadbeef
check id 2 "$MATRIX" run a.yaml --only id=deadbeef --out never
# id=A|B keeps both points, as NAME=L1|L2 keeps both levels (it kept none:
# 'A|B' was taken for one id); id terms, as every term, must all match
ids=$("$MATRIX" expand a.yaml --format csv | awk -F, 'NR > 1 && NR <= 3 { print $1 }' | tr '\n' '|')
expect_eq "$("$MATRIX" expand a.yaml --only "id=${ids%|}" --count)" 2 "id=A|B"
a=${ids%%|*}
b=${ids#*|}; b=${b%|}
expect_status 2 "$MATRIX" expand a.yaml --only "id=$a,id=$b" --count 2> /dev/null
[ ! -e never ] || fail "a filter that keeps nothing created the run directory"
echo "matrix: --only: no point of the plan matches every term of 'model=resnet50,batch=1,precision=fp16'" > every.want
check every 2 "$MATRIX" expand a.yaml --only model=resnet50,batch=1,precision=fp16
expect_eq "$("$MATRIX" expand a.yaml --count --only 'model=resnet50,batch=1|64')" 3 "a filter that keeps points"
# spaces around names and levels are read as YAML reads them (it said "the
# recipe has no factor ' batch' (did you mean 'batch'?)")
expect_eq "$("$MATRIX" expand a.yaml --count --only 'model = resnet50, batch=1 | 64')" 3 "a filter with spaces"

# report --metric: a name no result has is an error, and the report stays
cat > r.yaml <<YAML
name: m
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, ok, "{speed}"]
factors:
  speed: [10, 20]
YAML
"$MATRIX" run r.yaml --out run > /dev/null 2>&1 || fail "run failed"
# the folder of the runs (experiments/NAME) or a file of a run given for the
# run directory: said, with the run directory to give (it was 'not a run
# directory (no recipe.yaml)', as for a path that does not exist)
echo "matrix: '.' is not a run directory: it holds one run, './run'" > parent.want
check parent 2 "$MATRIX" report .
echo "matrix: 'run/report.md' is a file, not a run directory: its directory 'run' is one" > file.want
check file 2 "$MATRIX" export run/report.md
echo "matrix: 'rnu' does not exist" > rnu.want
check rnu 2 "$MATRIX" compare run rnu
cp run/report.md before.md
printf "%s\n" "matrix: no result in 'run' has a metric 'thruput' (did you mean 'throughput'?)" \
	"matrix: its metrics: throughput, step_ms, samples, version" > thruput.want
check thruput 2 "$MATRIX" report run --metric thruput
cmp before.md run/report.md || fail "report --metric thruput rewrote report.md"
printf "%s\n" "matrix: no result in 'run' has a metric 'watts'" \
	"matrix: its metrics: throughput, step_ms, samples, version" > watts.want
check watts 2 "$MATRIX" compare run run --metric watts
"$MATRIX" report run --metric step_ms --quiet || fail "report --metric step_ms failed"
expect_grep "step time" run/report.md "report on step_ms"
"$MATRIX" report run --where 'speed=10, 20' --panels ' speed' --quiet || fail "report --where with spaces (it said: unknown level ' 20')"
# the recipe's report.metric misspelt is the same error, and the report stays
# (issue 21, item 4: it wrote a report of no measured point over it, exit 0)
cp run/report.md before2.md
sed -i 's/^  speed: \[10, 20\]$/&\nreport: {metric: thruput}/' run/recipe.yaml
grep -q "metric: thruput" run/recipe.yaml || fail "the test's recipe edit did not apply"
cp thruput.want rthruput.want
echo "matrix: 'thruput' is the recipe's report.metric (run/recipe.yaml): --metric NAME picks another" >> rthruput.want
check rthruput 2 "$MATRIX" report run
cmp before2.md run/report.md || fail "report with the recipe's report.metric misspelt rewrote report.md"
check rthruput 2 "$MATRIX" export run --format csv
"$MATRIX" export run --format csv --metric throughput > /dev/null || fail "export --metric throughput over the recipe's misspelt one"
"$MATRIX" report run --metric throughput --quiet || fail "report --metric throughput over the recipe's misspelt one"

# help: per command, the same from 'matrix help CMD' and 'CMD --help'
"$MATRIX" help run > help1.txt
"$MATRIX" run --help > help2.txt
cmp help1.txt help2.txt || fail "'matrix help run' and 'matrix run --help' differ"
expect_grep "^FILTER (--only): terms separated by commas" help1.txt "run --help explains --only"
expect_grep "^METRIC: throughput (samples/s" help1.txt "run --help lists the metrics"
expect_grep "^  -n, --dry-run " help1.txt "run --help lists the options"
for cmd in expand report compare; do
	"$MATRIX" help $cmd > h.txt
	expect_eq "$(head -1 h.txt)" "usage: $("$MATRIX" $cmd --help | head -1 | sed 's/^usage: //')" "help $cmd"
done
echo "matrix: 'rn' is not a matrix command (did you mean 'run'?)" > helprn.want
check helprn 2 "$MATRIX" help rn
expect_eq "$("$MATRIX" -V)" "$("$MATRIX" --version)" "-V"
case $("$MATRIX" -V | head -n 1) in "matrix "[0-9]*) ;; *) fail "-V prints '$("$MATRIX" -V | head -n 1)'" ;; esac
case $("$MATRIX_ENGINE" --version | head -n 1) in "matrix-engine "[0-9]*) ;; *) fail "matrix-engine --version" ;; esac

# a misspelt factor is reported once: references to the right name are not
# told to use the typo
cat > typo.yaml <<'YAML'
name: t
engine: native
factors:
  model: [mnist_cnn]
  channel_last: [on, off]
exclude:
  - {channels_last: on, model: mnist_cnn}
baseline: {channels_last: off}
YAML
cat > typo.want <<'TXT'
typo.yaml:5:3: unknown factor 'channel_last' (did you mean 'channels_last'?)
    channel_last: [on, off]
    ^
TXT
check typo 2 "$MATRIX" expand typo.yaml
# matrix build takes a recipe by name as run and expand do (it said
# "unable to read 'NAME'"): found in $MATRIX_RECIPES, then its own checks
mkdir -p named
cp a.yaml named/bynm.yaml
set +e; MATRIX_RECIPES=$work/named "$MATRIX" build bynm > /dev/null 2> b.err; got=$?; set -e
expect_eq "$got" 2 "build of a recipe without containers"
expect_eq "$(cat b.err)" "matrix: build: '$work/named/bynm.yaml' has no 'container' factor: nothing to build" "build by name"
# --executor slurm where slurm does not answer (installed, no controller or
# configuration): refused before the run directory is made, with sinfo's
# reason (the run made it, then sbatch failed, exit 1, and the reason's
# lines were joined by \x00). Stand-in tools: sinfo fails as Slurm's does.
mkdir -p fakeslurm
for t in sbatch squeue scancel; do printf '#!/bin/sh\necho "$0 ran" >> %s/ran\nexit 1\n' "$work" > fakeslurm/$t; done
printf '#!/bin/sh\necho "sinfo: error: fetch_config: DNS SRV lookup failed" >&2\necho "sinfo: fatal: Could not establish a configuration source" >&2\nexit 1\n' > fakeslurm/sinfo
chmod +x fakeslurm/*
set +e; PATH=$work/fakeslurm:$PATH "$MATRIX" run a.yaml --executor slurm --out sl > /dev/null 2> sl.err; got=$?; set -e
expect_eq "$got" 2 "slurm that does not answer"
expect_eq "$(cat sl.err)" "matrix: run: slurm does not answer: 'sinfo' failed (exit status 1): sinfo: fatal: Could not establish a configuration source" "its message"
[ ! -e sl ] || fail "a run directory was made for a slurm that does not answer"
[ ! -e ran ] || fail "sbatch ran: $(cat ran)"
# a level with a comma cannot be written in --only (commas separate its
# terms): the error says how to keep its points (it listed 'a,b' among the
# levels and left the user to wonder why 'lvl=a,b' was 'no level a')
cat > comma.yaml <<'YAML'
name: comma
engine: command
command: [sh, -c, 'exit 0', "{lvl}"]
factors:
  lvl: ["a,b", c]
YAML
set +e; "$MATRIX" expand comma.yaml --only 'lvl=a,b' --count > /dev/null 2> c.err; got=$?; set -e
expect_eq "$got" 2 "--only with a comma level"
expect_eq "$(cat c.err)" "matrix: --only: factor 'lvl' has no level 'a' (levels: a,b, c); a level with ',' or '|' in it ('a,b') is kept by its points' id=ID|ID (matrix expand prints them)" "the way to keep it"
# a python that cannot import torch (MATRIX_PYTHON, the recipe's python:)
# stops a PyTorch recipe before any point, with nothing written: it failed
# every point alike, one by one, and left a directory no later run could use
cat > pt.yaml <<'YAML'
name: pt
engine: pytorch
device: cpu
factors:
  model: [mnist_cnn]
  batch: [1, 2]
YAML
printf "matrix: MATRIX_PYTHON '/nonexistent/python3' cannot import torch, which the PyTorch engine needs (it did not start, exit status 127: cannot run '/nonexistent/python3': No such file or directory); point it at a python with torch, or leave it unset to use the first python3 that has it\n" > nopy.want
check nopy 2 env MATRIX_PYTHON=/nonexistent/python3 "$MATRIX" run pt.yaml --out nopy_run --no-report
[ ! -e nopy_run ] || fail "a run without torch made its directory"
printf "matrix: MATRIX_PYTHON '/bin/false' cannot import torch, which the PyTorch engine needs (exit status 1: no output); point it at a python with torch, or leave it unset to use the first python3 that has it\n" > falsepy.want
check falsepy 2 env MATRIX_PYTHON=/bin/false "$MATRIX" run pt.yaml --dry-run
printf 'python: /bin/false\n' >> pt.yaml
sed "s/MATRIX_PYTHON/the recipe's python:/" falsepy.want > recipepy.want
check recipepy 2 "$MATRIX" run pt.yaml --out recipepy_run --no-report
[ ! -e recipepy_run ] || fail "a run without torch made its directory (python:)"
# only the points that will run need torch: --only keeping the native ones,
# or exclusions removing every PyTorch point, run without it
cat > mixed.yaml <<'YAML'
name: mixed
device: cpu
python: /bin/false
factors:
  engine: [native, pytorch]
  model: [mnist_cnn]
  batch: [1, 2]
YAML
cp recipepy.want mixedpy.want && cp recipepy.want mixedpy_only.want
check mixedpy 2 "$MATRIX" run mixed.yaml --dry-run
expect_status 0 "$MATRIX" run mixed.yaml --dry-run --only engine=native
check mixedpy_only 2 "$MATRIX" run mixed.yaml --dry-run --only batch=2
printf 'exclude:\n  - {engine: pytorch}\n' >> mixed.yaml
expect_status 0 "$MATRIX" run mixed.yaml --dry-run
# --retry-failed and --allow-changed only change a resume: without --resume
# they were accepted and did nothing (a fresh run, the failed points not retried)
printf "matrix: run: --retry-failed applies to a resumed run: matrix run a.yaml --resume DIR --retry-failed\nusage: %s\n" "$usage_run" > retry.want
check retry 2 "$MATRIX" run a.yaml --retry-failed --dry-run
printf "matrix: run: --allow-changed applies to a resumed run: matrix run a.yaml --resume 'my run' --allow-changed\nusage: %s\n" "$usage_run" > allowch.want
check allowch 2 "$MATRIX" run a.yaml --out 'my run' --allow-changed
[ ! -e 'my run' ] || fail "a refused --allow-changed made its directory"
# a misspelt report.metric is said at the first ok point, not only by the
# report after the whole study
cat > wr.sh <<'SH'
#!/bin/sh
printf 'status=ok\nthroughput=10\nunit=samples/s\n' > "$1"
SH
chmod +x wr.sh
cat > met.yaml <<'YAML'
name: met
engine: command
command: ["./wr.sh", "{result}"]
factors:
  x: [1, 2]
report:
  metric: thruput
YAML
"$MATRIX" run met.yaml --out met_run --no-report > met.out 2> met.err
expect_grep "^matrix: warning: point [0-9a-f]* is ok but its result has no 'thruput', the recipe's report.metric (did you mean 'throughput'?): the report will have no metric to show" met.err "a misspelt metric at the first point"
expect_eq "$(grep -c 'report.metric' met.err)" 1 "said once"
# the recipe's text reaches the terminal escaped
sed 's/thruput/"thr\\e]0;pwned\\a"/' met.yaml > met3.yaml
"$MATRIX" run met3.yaml --out met3_run --no-report > /dev/null 2> met3.err
expect_grep "has no 'thr\\\\x1b\]0;pwned\\\\x07'" met3.err "the metric escaped"
if LC_ALL=C grep -q "$(printf '\033')" met3.err; then fail "an escape character reached the terminal"; fi
sed 's/thruput/throughput/' met.yaml > met2.yaml
"$MATRIX" run met2.yaml --out met2_run --no-report > /dev/null 2> met2.err
if grep -q 'report.metric' met2.err; then fail "a warning for a metric the points have: $(cat met2.err)"; fi
# a plan too large to run: refused at once, nothing made (a run of 10^18
# points went silent, its memory growing, walking them)
python3 -c "
print('name: huge\nengine: command\ncommand: [true]\nfactors:')
for i in range(14): print('  f%d: [%s]' % (i, ', '.join('l%d' % j for j in range(20))))
" > huge.yaml
printf "matrix: run: the recipe's 14 factors make 1638400000000000000 combinations; a run walks every one (at most 100000000): use fewer levels or fewer factors\n" > huge.want
check huge 2 timeout 20 "$MATRIX" run huge.yaml --out huge_run --no-report
[ ! -e huge_run ] || fail "a refused plan made its directory"
python3 -c "
print('name: many\nengine: command\ncommand: [true]\nfactors:')
for i in range(5): print('  f%d: [%s]' % (i, ', '.join('l%d' % j for j in range(20))))
" > many.yaml
printf "matrix: run: the plan has 3200000 points; a run starts a process and keeps a row for each (at most 1000000): use fewer levels, excludes, a fractional design, or --only\n" > many.want
check many 2 timeout 20 "$MATRIX" run many.yaml --dry-run
# --out naming a file: says so
: > afile
printf "matrix: 'afile' is a file, not a directory: choose another --out\n" > afile.want
check afile 2 "$MATRIX" run a.yaml --out afile
# compare of a run whose every point failed: says so, not "no metric"
printf 'name: allfail\nengine: command\ncommand: [false]\nfactors:\n  x: [1, 2]\n' > allfail.yaml
"$MATRIX" run allfail.yaml --out allfail_run --no-report > /dev/null 2>&1 || :
printf "matrix: no point of 'allfail_run' ran ok (2 rows, none with status ok): no 'throughput' to use; 'matrix status allfail_run' lists why\n" > allfail.want
check allfail 2 "$MATRIX" compare allfail_run allfail_run
# the metrics listed leave out the point's settings its extra repeats (batch=8: a factor)
printf 'name: ex\nengine: command\ncommand: [sh, -c, %s]\nfactors:\n  k: [1]\n' \
	"'printf \"status=ok\\nthroughput=5\\nbatch=8\\ngpus=1\\nwatts_used=300\\n\" > \"\$MATRIX_RESULT\"'" > ex.yaml
"$MATRIX" run ex.yaml --out ex_run --no-report > /dev/null 2>&1 || fail "the ex run failed"
printf "%s\n" "matrix: no result in 'ex_run' has a metric 'watts' (did you mean 'watts_used'?)" \
	"matrix: its metrics: throughput, watts_used" > exm.want
check exm 2 "$MATRIX" compare ex_run ex_run --metric watts
echo ok
