# The usage line of every command, as `matrix CMD --help` prints it, is in the
# README word for word; unknown commands and options exit 2.
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
expect_status 2 "$MATRIX" run --resume "$work/nowhere" 2> err.txt
expect_eq "$(cat err.txt)" "matrix: '$work/nowhere' is not a run directory: it has no recipe.yaml" "resume of nothing"
echo ok
