# User strings echoed to a terminal are escaped (issue 22, item 4 and LOW):
# control characters in levels (YAML "\e", "\x9b") reach no terminal raw, not
# in a recipe error, the expand table, a dry run's command lines, the run's
# point lines or compare's table; a "\0" in a string is an error, not a string
# cut there; an error on a 1 MB line echoes a few kilobytes, not the line; a
# recipe with too many nodes and no alias is not told about alias expansion;
# an override with a newline stays one comment line in the saved recipe.
. "$top_srcdir/tests/setup"
esc=$(printf '\033')
c1=$(printf '\302\233')
no_raw() { # FILE WHAT
	! grep -q "$esc" "$1" || { cat -v "$1" >&2; fail "$2: an escape character reaches the terminal"; }
	! grep -q "$c1" "$1" || { cat -v "$1" >&2; fail "$2: a C1 control reaches the terminal"; }
}
cat > dup.yaml <<'YAML'
name: echo
engine: command
command: [sh, -c, 'printf "status=ok\nthroughput=1\n" > "$MATRIX_RESULT"', "{v}"]
factors:
  v: ["a\e[31mred", "a\e[31mred"]
YAML
expect_status 2 "$MATRIX" expand dup.yaml > out.txt 2> err.txt
no_raw err.txt "a recipe error"
expect_grep "duplicate level 'a\\\\x1b\[31mred'" err.txt "the level escaped in the message"

sed 's/"a\\e\[31mred", "a\\e\[31mred"/"a\\e[31mred", "b\\x9b", c/' dup.yaml > r.yaml
expect_status 0 "$MATRIX" expand r.yaml > out.txt 2> err.txt
no_raw out.txt "the expand table"
expect_grep ' a\\x1b\[31mred$' out.txt "the level escaped in the table"
expect_status 0 "$MATRIX" run r.yaml --dry-run > out.txt 2> err.txt
no_raw out.txt "a dry run"
expect_grep " \$'a\\\\x1b\[31mred'\$" out.txt "a dry run quotes a control character as \$'...'"
expect_grep " \$'b\\\\xc2\\\\x9b'\$" out.txt "a dry run quotes a C1 control as \$'...'"
# the quoted line is the command: bash gives back the level's bytes
line=$(grep "MATRIX_RESULT=.* \$'a" out.txt | sed 's/.* \$/$/')
expect_eq "$(bash -c "printf %s $line" | od -An -c | tr -s ' ')" " a 033 [ 3 1 m r e d" "the dry run's quoting"
expect_status 0 "$MATRIX" run r.yaml --out A --no-report > out.txt 2> err.txt
no_raw out.txt "the point lines"
expect_grep ' v=a\\x1b\[31mred  throughput=1' out.txt "the level escaped in a point line"
expect_status 0 "$MATRIX" run r.yaml --out B --no-report > /dev/null 2>&1
expect_status 0 "$MATRIX" compare A B > out.txt 2> err.txt
no_raw out.txt "compare's table"
expect_grep '^v=a\\x1b\[31mred ' out.txt "the level escaped in compare's table"
expect_status 2 "$MATRIX" run r.yaml --out C --only "v=$esc[2J" > out.txt 2> err.txt
no_raw err.txt "an --only error"

# a NUL escape is refused where it is written
sed 's/"a\\e\[31mred", "a\\e\[31mred"/"a\\0b", c/' dup.yaml > nul.yaml
expect_status 2 "$MATRIX" expand nul.yaml > out.txt 2> err.txt
expect_eq "$(head -1 err.txt)" "nul.yaml:5:7: a string cannot hold a NUL character ('\\0')" "the NUL error"

# an error on a 1 MB line
big=$(head -c 1000000 /dev/zero | tr '\0' x)
printf 'name: big\nengine: command\ncommand: [echo, "{v}"]\nfactors:\n  v: [%s, %s]\n' "$big" "$big" > big.yaml
expect_status 2 "$MATRIX" expand big.yaml > out.txt 2> err.txt
expect_grep "^big.yaml:5:1000009: duplicate level 'xxx*\[\.\.\. [0-9]* bytes left out \.\.\.\]xxx*' in factor 'v'" err.txt "the message cut in the middle"
[ "$(wc -c < err.txt)" -lt 5000 ] || fail "the error on a 1 MB line is $(wc -c < err.txt) bytes"
# the caret under the column in the window shown
expect_eq "$(sed -n 2p err.txt | cut -c1-5)" "  ..." "the window's start marked"
expect_eq "$(sed -n 3p err.txt | sed 's/[^ ^]//g' | tr -d ' ' )" "^" "a caret line"
col2=$(sed -n 2p err.txt | awk '{ print index($0, ", ") + 2 }')
col3=$(sed -n 3p err.txt | awk '{ print index($0, "^") }')
expect_eq "$col3" "$col2" "the caret under the second level"

# a recipe with too many nodes and no alias is not told about aliases
awk 'BEGIN { printf "name: many\nengine: command\ncommand: [echo, \"{v}\"]\nfactors:\n  v: [l0"; for (i = 1; i <= 100000; i++) printf ", l%d", i; print "]" }' > many.yaml
expect_status 2 "$MATRIX" expand many.yaml > out.txt 2> err.txt
expect_eq "$(head -1 err.txt)" "many.yaml:4:1: too many nodes (limit 100000)" "too many nodes without an alias"

# an override with a newline: one comment line in the saved recipe
sed 's/"a\\e\[31mred", "a\\e\[31mred"/a, b/' dup.yaml > ok.yaml
expect_status 0 "$MATRIX" run ok.yaml "description=hi
seed: 5" --out D --no-report > out.txt 2> err.txt
expect_eq "$(sed -n 1p D/recipe.yaml)" '# the recipe as run: ok.yaml with description=hi\x0aseed: 5' "the saved recipe's first line"
! grep -q '^seed' D/recipe.yaml || fail "an override's newline became a line of the saved recipe"
echo ok
