# The usage line of every command, as `matrix CMD --help` prints it, is in the
# README word for word; unknown commands and options exit 2; --NAME=VALUE.
. "$top_srcdir/tests/setup"
for cmd in expand run status report compare export recipes; do
	line=$("$MATRIX" $cmd --help | sed -n 's/^usage: //p')
	[ -n "$line" ] || fail "'matrix $cmd --help' prints no usage line"
	grep -qxF "$line" "$top_srcdir/README.md" || fail "README.md lacks the usage line: $line"
done
expect_status 2 "$MATRIX" frobnicate 2> err.txt
expect_eq "$(cat err.txt)" "matrix: 'frobnicate' is not a matrix command (see 'matrix --help')" "unknown command"
expect_status 2 "$MATRIX" run --frobnicate 2> err.txt
expect_eq "$(head -1 err.txt)" "matrix: run: unknown option '--frobnicate'" "unknown option"
expect_status 2 "$MATRIX" run 2> err.txt
expect_eq "$(head -1 err.txt)" "matrix: run: no recipe given" "no recipe"
# a command short of its arguments says which is missing (these printed
# their usage line alone)
expect_status 2 "$MATRIX" compare "$work" 2> err.txt
expect_eq "$(head -1 err.txt)" "matrix: compare takes two run directories: only '$work' given (the run to compare it with goes after it)" "compare with one directory"
expect_status 2 "$MATRIX" compare 2> err.txt
expect_eq "$(head -1 err.txt)" "matrix: compare takes two run directories: none given" "compare with none"
expect_status 2 "$MATRIX" report 2> err.txt
expect_eq "$(head -1 err.txt)" "matrix: report: no run directory given" "report with none"
expect_status 2 "$MATRIX" run-point "$work" 2> err.txt
expect_eq "$(head -1 err.txt)" "matrix: run-point: no point given (its id or plan index)" "run-point without its point"
expect_status 2 "$MATRIX" run --resume "$work/nowhere" 2> err.txt
expect_eq "$(cat err.txt)" "matrix: '$work/nowhere' does not exist" "resume of nothing"
# an option's value joined to it (--jobs=2), as getopt_long reads it; an
# option without a value takes none that way; a joined-looking value stays whole
cat > j.yaml <<YAML
name: joined
engine: command
command: [sh, $top_srcdir/tests/e2e/engine.sh, ok, "{k}"]
factors:
  k: [1, 2, 3]
YAML
"$MATRIX" run j.yaml --out=J --jobs=2 --only='k=1|3' --no-report > /dev/null || fail "run with --out=J --jobs=2 --only='k=1|3'"
expect_eq "$(csv_col J/results.csv k | sort | tr '\n' ' ')" "1 3 " "--only='k=1|3' kept"
expect_grep "^command: [^ ]*/matrix run j.yaml --out J --jobs 2 --only 'k=1|3' --no-report$" J/env.txt "env.txt: the options as read"
expect_status 2 "$MATRIX" run j.yaml --out=K --no-report=yes 2> err.txt
expect_eq "$(head -1 err.txt)" "matrix: run: unknown option '--no-report=yes'" "a flag takes no value"
[ ! -e K ] || fail "a refused run wrote K"
expect_status 2 "$MATRIX" expand j.yaml --only --format=csv 2> err.txt
expect_grep "^matrix: --only: " err.txt "the value of --only is kept whole"
echo ok
