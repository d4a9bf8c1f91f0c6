# Nothing is written into a directory before every check on it has passed
# (issue 22, item 7): a refused `--resume DIR --allow-changed` (a new factor)
# leaves recipe.yaml, plan.csv and env.txt as they were, so that the directory
# still reports and resumes; `--out` into a non-empty directory that is not a
# matrix run is refused and leaves the user's files alone; an empty one is used.
# A run directory whose recipe.yaml was edited by hand (it no longer matches
# the recipe_hash that env.txt recorded) is refused by `--resume DIR` and
# resumed with the edit under --allow-changed (LOW: text_hash was unused).
. "$top_srcdir/tests/setup"
cat > r1.yaml <<YAML
name: dirs
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, ok, "{v}"]
factors:
  v: [1, 2]
YAML
sed 's/^  v: \[1, 2\]$/  v: [1, 2]\n  w: [a, b]/' r1.yaml > r2.yaml
expect_status 0 "$MATRIX" run r1.yaml --out run --no-report > out.txt 2> err.txt
mkdir before
cp run/recipe.yaml run/plan.csv run/env.txt run/results.csv before/
expect_status 2 "$MATRIX" run r2.yaml --resume run --allow-changed --no-report > out.txt 2> err.txt
expect_eq "$(cat err.txt)" "matrix: 'run/results.csv' has other columns than this recipe's results" "refused"
for f in recipe.yaml plan.csv env.txt results.csv; do
	cmp -s before/$f run/$f || fail "a refused resume changed run/$f"
done
[ ! -e run/recipe.prev.yaml ] || fail "a refused resume renamed the recipe"
expect_status 0 "$MATRIX" report --quiet run
expect_status 0 "$MATRIX" run --resume run --no-report > out.txt 2> err.txt
# --out into someone's directory
mkdir mine mine/plots
echo "my notes" > mine/report.md
echo "my recipe" > mine/recipe.yaml
echo "my figure" > mine/plots/a.svg
expect_status 2 "$MATRIX" run r1.yaml --out mine > out.txt 2> err.txt
expect_eq "$(cat err.txt)" "matrix: 'mine' is not empty and holds no matrix run: choose another --out" "refused --out"
expect_eq "$(cat mine/report.md mine/recipe.yaml mine/plots/a.svg)" "my notes
my recipe
my figure" "the user's files are untouched"
expect_eq "$(ls mine | tr '\n' ' ')" "plots recipe.yaml report.md " "nothing added"
mkdir empty
expect_status 0 "$MATRIX" run r1.yaml --out empty --no-report > out.txt 2> err.txt
[ -s empty/results.csv ] || fail "an empty directory was not used"

# a hand-edited recipe.yaml
expect_status 0 "$MATRIX" run r1.yaml --out ed --only v=1 --no-report > out.txt 2> err.txt
grep -q '^recipe_hash: [0-9a-f]\{16\}$' ed/env.txt || fail "env.txt records no recipe_hash"
sed -i 's/v: \[1, 2\]/v: [1, 2, 3]/' ed/recipe.yaml
expect_status 2 "$MATRIX" run --resume ed --no-report > out.txt 2> err.txt
expect_grep "^matrix: 'ed/recipe.yaml' was edited since the run recorded it (hash [0-9a-f]*, recorded [0-9a-f]* in env.txt)" err.txt "an edited recipe.yaml refused"
expect_eq "$(wc -l < ed/results.csv | tr -d ' ')" 2 "nothing run from an edited recipe.yaml"
expect_status 0 "$MATRIX" run --resume ed --allow-changed --no-report > out.txt 2> err.txt
expect_grep "resuming with the edit (--allow-changed)" err.txt "--allow-changed says it resumes with the edit"
expect_eq "$(wc -l < ed/results.csv | tr -d ' ')" 4 "the edited recipe's points run"
expect_status 0 "$MATRIX" run --resume ed --no-report > out.txt 2> err.txt
# a run directory from elsewhere whose env.txt is a FIFO or a link to
# /dev/zero (issue 22): 'matrix report' hung on the FIFO for good and read
# /dev/zero until it ran out of memory, and 'matrix merge' the same; the
# pages now say the file is not a regular file. A recipe.yaml that is a
# FIFO is an empty recipe, not a hang. Under a timeout and a memory limit.
vlimit=1000000 # not under AddressSanitizer, whose shadow memory cannot live under it
if ldd "$MATRIX" 2>/dev/null | grep -q libasan; then vlimit=unlimited; fi
# a second run to merge with (a copy of run would be refused: the same measurements)
expect_status 0 "$MATRIX" run r1.yaml --out run2 --no-report > out.txt 2> err.txt
for kind in fifo zero; do
	cp -r run env$kind
	rm env$kind/env.txt
	if [ $kind = fifo ]; then mkfifo env$kind/env.txt; else ln -s /dev/zero env$kind/env.txt; fi
	set +e
	(ulimit -v $vlimit; timeout 20 "$MATRIX" report --quiet env$kind) > out.txt 2> err.txt
	rc=$?
	set -e
	[ $rc = 0 ] || fail "report with env.txt a $kind: exit $rc, $(head -c 300 err.txt)"
	expect_grep '^(env.txt is not a regular file)$' env$kind/report.md "the $kind env.txt in report.md"
	set +e
	(ulimit -v $vlimit; timeout 20 "$MATRIX" merge env$kind run2 --out merged$kind --quiet) > out.txt 2> err.txt
	rc=$?
	set -e
	[ $rc = 0 ] || fail "merge with env.txt a $kind: exit $rc, $(head -c 300 err.txt)"
done
cp -r run rfifo && rm rfifo/recipe.yaml && mkfifo rfifo/recipe.yaml
set +e
timeout 20 "$MATRIX" report rfifo > out.txt 2> err.txt
rc=$?
set -e
expect_eq "$rc" 2 "report with recipe.yaml a FIFO"
expect_grep "^rfifo/recipe.yaml:1:1: empty recipe" err.txt "a FIFO recipe.yaml reads as empty"
echo ok
