# matrix run with a command engine: every point runs, the run directory holds
# what the design says, and each stored command reproduces its point by hand.
. "$top_srcdir/tests/setup"
cat > r.yaml <<YAML
name: basic
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, ok, "{speed}"]
factors:
  speed: [10, 20, 30]
  flavour: [vanilla, chocolate]
exclude:
  - {speed: 30, flavour: chocolate}
YAML
"$MATRIX" run r.yaml --out run > out.txt 2> err.txt || fail "run failed: $(cat err.txt)"
for f in recipe.yaml plan.csv env.txt results.csv; do [ -s run/$f ] || fail "run/$f missing"; done
cmp r.yaml run/recipe.yaml || fail "recipe.yaml is not the recipe as run"
expect_eq "$(tail -n +2 run/plan.csv | wc -l)" 5 "plan rows"
expect_eq "$(tail -n +2 run/results.csv | wc -l)" 5 "result rows"
expect_eq "$(csv_col run/results.csv status | sort -u)" ok "statuses"
expect_eq "$(csv_col run/results.csv throughput | sort -n | tr '\n' ' ')" "10 10 20 20 30 " "throughputs"
expect_eq "$(head -1 run/results.csv | cut -d, -f1-7)" "id,index,repeat,speed,flavour,status,reason" "header"
expect_grep "version=1.2" run/results.csv "extra keys kept"
expect_grep "^host: " run/env.txt "env.txt host"
ls run/logs/*.log > /dev/null || fail "no logs"
# plan ids == result ids
expect_eq "$(csv_col run/results.csv id | sort | tr '\n' ' ')" "$(csv_col run/plan.csv id | sort | tr '\n' ' ')" "ids"
# the stored command reproduces the point
# (from another directory: it starts with 'cd' to the recipe's)
cmd=$(tail -n 1 run/results.csv | awk -F, '{ print $NF }')
real=$(pwd -P)
case $cmd in "cd $real && MATRIX_RESULT=$real/run/logs/"*) ;; *) fail "stored command: $cmd" ;; esac
(cd / && eval "$(echo "$cmd" | sed "s|MATRIX_RESULT=[^ ]* |MATRIX_RESULT=$work/again.txt |")")
expect_grep "status=ok" again.txt "reproduced by hand"
expect_grep "5 points" out.txt "summary line"
[ -s run/report.html ] || fail "matrix run wrote no report.html"
[ -s run/tables/effects.csv ] || fail "matrix run wrote no effects table"
# a second run into the same directory is refused
expect_status 2 "$MATRIX" run r.yaml --out run 2> err2.txt
expect_grep "already holds a run" err2.txt "refuse to overwrite"
# --dry-run prints commands and creates nothing
"$MATRIX" run r.yaml --out dry --dry-run > dry.txt 2> dryerr.txt
expect_eq "$(wc -l < dry.txt)" 5 "dry run commands"
[ ! -e dry ] || fail "--dry-run created its directory"
# its closing line says the directory is not there (issue 21: it read as if it were)
expect_grep "^matrix: dry run: 5 of 5 points would run in a new directory 'dry' (not created by a dry run)$" dryerr.txt "dry run: new directory"
(mkdir nodir && cd nodir && "$MATRIX" run ../r.yaml --dry-run > /dev/null 2> ../dryerr2.txt && [ ! -e experiments ]) ||
	fail "--dry-run without --out: $(cat dryerr2.txt)"
expect_grep "would run in a new directory 'experiments/basic/[0-9-]*' (not created by a dry run; the run names it by the time it starts, --out DIR fixes the name)" dryerr2.txt "dry run: default directory"
# on a directory that exists (--resume), the points would run in it
"$MATRIX" run --resume run --retry-failed --dry-run > /dev/null 2> dryerr3.txt
expect_grep "^matrix: dry run: 0 of 5 points would run in 'run'$" dryerr3.txt "dry run: existing directory"
# --jobs N runs everything too; more points at once than cores is refused
# unless asked for (a command engine counts as one thread per point)
many=$(( $(getconf _NPROCESSORS_ONLN) + 1 ))
expect_status 2 "$MATRIX" run r.yaml --out over --jobs $many 2> over.txt
expect_grep "^matrix: run: --jobs $many x 1 threads per point = $many threads > $((many - 1)) cores" over.txt "oversubscription refused"
"$MATRIX" run r.yaml --out par --jobs 3 --allow-oversubscribe > /dev/null
expect_eq "$(tail -n +2 par/results.csv | wc -l)" 5 "parallel rows"
# --only filters
"$MATRIX" run r.yaml --out only --only 'flavour=vanilla,speed=10|20' > /dev/null
expect_eq "$(tail -n +2 only/results.csv | wc -l)" 2 "filtered rows"
# plan.csv holds the points --only keeps, not the whole grid
expect_eq "$(tail -n +2 only/plan.csv | wc -l)" 2 "filtered plan"
echo ok
