# Command-line overrides (issue 21, item 2): KEY=VALUE replaces a factor's
# levels or sets a recipe key, integer ranges expand, exclusions and the
# baseline drop lost levels, the run saves the recipe as run (a resume alone
# reproduces it), and every error is located on its override, exact text.
. "$top_srcdir/tests/setup"
cat > a.yaml <<'YAML'
name: a
engine: native
factors:
  model: [resnet18, resnet50]   # a comment
  batch: [1, 8, 64]
  precision: [fp32, fp16]
exclude:
  - {model: resnet50, batch: [1, 8], precision: fp16}
baseline: {batch: 8}
YAML
"$MATRIX" expand a.yaml batch=32 precision=fp16,bf16 --format csv | cut -d, -f4- > p.csv
printf '%s\n' model,batch,precision resnet18,32,fp16 resnet18,32,bf16 resnet50,32,fp16 resnet50,32,bf16 > p.want
cmp p.want p.csv || fail "levels replaced"
expect_eq "$("$MATRIX" expand a.yaml batch=1..64:x2 --format csv | cut -d, -f5 | tail -n +2 | sort -un | tr '\n' ' ')" \
	"1 2 4 8 16 32 64 " "range times 2"
expect_eq "$("$MATRIX" expand a.yaml batch=1..10:+3,100 --format csv | cut -d, -f5 | tail -n +2 | sort -un | tr '\n' ' ')" \
	"1 4 7 10 100 " "range with a step, and a level"
# the exclusion keeps the levels batch still has: 2 models x 3 x 2 - (1 and 8, fp16)
expect_eq "$("$MATRIX" expand a.yaml batch=1..8:x8,64 --count)" 10 "exclusion kept"
# levels written as YAML writes them read the same: [1,8,64] and '1, 8, 64'
# (they were 'invalid level '[1'' and 'invalid level ' 8'')
expect_eq "$("$MATRIX" expand a.yaml 'batch=[1,8,64]' --count)" 10 "a bracketed list of levels"
expect_eq "$("$MATRIX" expand a.yaml 'batch=1, 8, 64' --count)" 10 "levels with spaces after the commas"
expect_eq "$("$MATRIX" expand a.yaml 'batch=[ 64 ]' --format csv | cut -d, -f5 | tail -n +2 | sort -u)" 64 "one bracketed level"
expect_eq "$("$MATRIX" expand a.yaml batch=2 --count)" 4 "exclusion dropped with its levels"
# report.improvements naming a lost level go too (the rest stay)
sed 's/^baseline: .*/report: {improvements: [{factor: batch, from: 1, to: 64}, {factor: precision, from: fp32, to: fp16}]}/' a.yaml > imp.yaml
expect_eq "$("$MATRIX" expand imp.yaml batch=1,8 --count)" 6 "an improvement naming a lost level dropped"
expect_eq "$("$MATRIX" expand imp.yaml batch=1,8 precision=fp32,bf16 --count)" 8 "both improvements dropped"
sed 's/to: fp16/to: fp8/' imp.yaml > imp2.yaml
expect_status 2 "$MATRIX" expand imp2.yaml batch=1,8 --count 2> err.txt
expect_grep "unknown level 'fp8' for factor 'precision'" err.txt "an improvement on a factor not overridden is still checked"
expect_eq "$("$MATRIX" expand a.yaml factors.threads=1,2 repeat=2 --count)" 40 "a new factor, repeat"
expect_eq "$("$MATRIX" expand a.yaml seed=5 order=shuffled --format csv | md5sum)" \
	"$("$MATRIX" expand a.yaml seed=5 order=shuffled --format csv | md5sum)" "seed and order"

# errors: located on the override, exact
check() {
	want=$1; shift
	set +e; "$MATRIX" expand a.yaml "$@" > /dev/null 2> err.txt; got=$?; set -e
	[ "$got" = 2 ] || fail "'$*' exited $got, expected 2"
	expect_eq "$(cat err.txt)" "$want" "error of '$*'"
}
check "a.yaml: override 'batch=abc': invalid level 'abc' for factor 'batch' (expected a positive integer)" batch=abc
check "a.yaml: override 'batch=8..1': a range is START..END of integers with 0 <= START <= END (1 <= START with xK)" batch=8..1
# a step without its colon says where the step goes (it said 'a range is
# START..END of integers', which 1..64x2 looks like it is)
check "a.yaml: override 'batch=1..64x2': a range's step follows a colon: START..END:+K or START..END:xK, as in 1..64:x2" batch=1..64x2
check "a.yaml: override 'batch=1..8:x1': a range's step is +K (K >= 1) or xK (K >= 2), as in 1..64:x2" batch=1..8:x1
check "a.yaml: override 'batch=1..5000': a range gives at most 1000 levels" batch=1..5000
check "a.yaml: override 'bach=1': 'bach' is neither a factor of the recipe nor a recipe key (did you mean 'batch'?)" bach=1
check "a.yaml: override 'threads=1': 'threads' is neither a factor of the recipe nor a recipe key (a new factor is factors.threads=...)" threads=1
check "a.yaml: override 'seed=x': 'seed' must be an integer >= 0, not 'x'" seed=x
check "a.yaml: override 'measure.min_tim=1s': unknown key 'min_tim' in 'measure' (did you mean 'min_time'?)" measure.min_tim=1s
check "a.yaml: override 'batch=': no value after '='" batch=
check "a.yaml: override 'name.x=1': 'name' is not a mapping: no key under it can be set" name.x=1
# a recipe key is no misspelling of another: report.metric on a recipe with
# 'repeat' (two edits from 'report') and no 'report' makes a report mapping
printf 'repeat: 2\n' | cat a.yaml - > rep.yaml
expect_eq "$("$MATRIX" expand rep.yaml report.metric=step_ms --count)" 20 "report.metric beside repeat"
# a misspelt 'factors' is the one error: the override changes its levels
# (batch=1) or adds a factor to it (factors.threads=1,2), not to a new one
sed 's/^factors:/factor:/' a.yaml > typo.yaml
for o in batch=1 factors.threads=1,2; do
	set +e; "$MATRIX" expand typo.yaml "$o" > /dev/null 2> err.txt; got=$?; set -e
	expect_eq "$got $(head -1 err.txt) $(wc -l < err.txt)" \
		"2 typo.yaml:3:1: unknown key 'factor' (did you mean 'factors'?) 3" "$o on a misspelt 'factors'"
done

# a run saves the recipe as run; --resume DIR alone runs the same points
cat > r.yaml <<YAML
name: o
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, ok, "{speed}"]
factors:
  speed: [10, 20]
  flavour: [vanilla]
exclude:
  - {speed: 20}
YAML
"$MATRIX" run r.yaml speed=1..4 measure.timeout=60s --out run --only speed=1\|2 > /dev/null 2>&1 || fail "run with overrides"
expect_eq "$(head -1 run/recipe.yaml)" "# the recipe as run: r.yaml with speed=1..4 measure.timeout=60s" "recipe.yaml names the overrides"
expect_grep "speed: \[1, 2, 3, 4\]" run/recipe.yaml "recipe.yaml holds the levels"
expect_grep "timeout: 60s" run/recipe.yaml "recipe.yaml holds the key"
"$MATRIX" run --resume run > /dev/null 2>&1 || fail "resume"
expect_eq "$(csv_col run/plan.csv speed | tr '\n' ' ')" "1 2 3 4 " "plan.csv as run"
expect_eq "$(csv_col run/results.csv speed | sort -n | tr '\n' ' ')" "1 2 3 4 " "the resume ran the points as run"
"$MATRIX" run r.yaml speed=1..4 measure.timeout=60s --resume run > /dev/null 2>&1 || fail "resume with the same overrides"
expect_status 2 "$MATRIX" run r.yaml speed=1..5 --resume run 2> err.txt
expect_grep "differs from the recipe" err.txt "other overrides are another recipe"
# the refusal says how to resume: the directory alone, and the recipe and
# overrides it runs (it said 'resume with that recipe', which the user had
# just named)
expect_status 2 "$MATRIX" run r.yaml --resume run 2> err.txt
expect_eq "$(cat err.txt)" "matrix: 'r.yaml' differs from the recipe 'run' was run with (run/recipe.yaml): resume with 'matrix run --resume run' alone, which runs that one (r.yaml with speed=1..4 measure.timeout=60s), or pass --allow-changed" "how to resume"
# a range in the recipe (issue 21, item 1): {range: [START, END], step: +K | xK | K},
# the same levels as the command line's START..END:xK; its step overridden
sed 's/^  batch: .*/  batch: {range: [1, 64], step: x2}/' a.yaml > rng.yaml
expect_eq "$("$MATRIX" expand rng.yaml --format csv | cut -d, -f5 | tail -n +2 | sort -un | tr '\n' ' ')" \
	"1 2 4 8 16 32 64 " "a recipe's range, times 2"
expect_eq "$("$MATRIX" expand rng.yaml factors.batch.step=+20 --format csv | cut -d, -f5 | tail -n +2 | sort -un | tr '\n' ' ')" \
	"1 21 41 61 " "a recipe's range, its step overridden"
expect_eq "$("$MATRIX" expand rng.yaml batch=1..64:x2 --count)" "$("$MATRIX" expand rng.yaml --count)" "the command line's range alike"
# a range's ends from the command line, as the recipe writes them (issue 21:
# 'factors.batch.range=[2,32]' was refused for its comma): [A,B], A,B and A..B
# alike; on a range the step stays, a list of levels becomes a range (step +1)
for v in '[2,32]' '2,32' '2..32' '[2, 32]'; do
	expect_eq "$("$MATRIX" expand rng.yaml "factors.batch.range=$v" --format csv | cut -d, -f5 | tail -n +2 | sort -un | tr '\n' ' ')" \
		"2 4 8 16 32 " "factors.batch.range=$v on a range keeps its step"
done
expect_eq "$("$MATRIX" expand a.yaml 'factors.batch.range=[2,5]' --format csv | cut -d, -f5 | tail -n +2 | sort -un | tr '\n' ' ')" \
	"2 3 4 5 " "factors.batch.range on a list of levels"
expect_eq "$("$MATRIX" expand a.yaml 'factors.batch.range=[2,32]' factors.batch.step=x4 --format csv | cut -d, -f5 | tail -n +2 | sort -un | tr '\n' ' ')" \
	"2 8 32 " "factors.batch.range then its step"
check "a.yaml: override 'factors.batch.range=[2,32,64]': 'factors.batch.range' takes the range's two ends, [START,END] (or START..END), integers; a step is factors.batch.step=+K|xK, or give the levels as batch=START..END:xK" 'factors.batch.range=[2,32,64]'
check "a.yaml: override 'factors.batch.range=[32,2]': 'factors.batch.range' must be [START, END] with 0 <= START <= END, not [32, 2]" 'factors.batch.range=[32,2]'
check "a.yaml: override 'factors.batch.step=x2': factor 'batch' is a list of levels, not a range: a step needs its range first (factors.batch.range=[START,END] factors.batch.step=x2), or give the levels as batch=START..END:x2" factors.batch.step=x2
# a level given twice in an override: said so, not "(first at line 0)"
check "a.yaml: override 'batch=8,8': duplicate level '8' in factor 'batch' (earlier in the override)" batch=8,8
echo ok
