# report.md renders user strings as themselves (issue 22, item 4): a level or a
# description holding '|', backticks, HTML, a markdown link, emphasis or a
# line that starts a block is backslash-escaped; a code block in Provenance
# has a fence longer than any run of backticks in it, so a recipe holding
# ``` cannot close it; control characters in a results.csv received from
# elsewhere reach neither report.md nor report.html raw.
. "$top_srcdir/tests/setup"
cat > r.yaml <<'YAML'
name: md
description: "a `code` and <b>html</b> and [link](javascript:alert(1))\n# heading\n```\nfence"
engine: command
command: [sh, -c, 'printf "status=ok\nthroughput=$1\n" > "$MATRIX_RESULT"', sh, "{n}"]
factors:
  v: ["a|b", "`rm`", "<script>alert(1)</script>", "[x](javascript:alert(1))", "x_y", "**bold**"]
  n: ["1", "2"]
YAML
expect_status 0 "$MATRIX" run r.yaml --out run > out.txt 2> err.txt
md=run/report.md
expect_eq "$(sed -n 3,6p $md)" 'a \`code\` and \<b\>html\</b\> and \[link\](javascript:alert(1))
\# heading
\`\`\`
fence' "the description escaped"
expect_grep 'Factors: v (a\\|b \\`rm\\` \\<script\\>alert(1)\\</script\\> \\\[x\\\](javascript:alert(1)) x_y \\\*\\\*bold\\\*\\\*), n (1 2)\.' $md "the levels in the summary"
# in a table: a '|' stays in its cell
expect_grep '^| v | a\\|b | ' $md "a level with '|' in a table cell"
# outside the code blocks
awk '/^```/ { f = !f; next } !f' $md > prose.md
! grep -q '<script>' prose.md || fail "report.md holds raw HTML"
! grep -q '[^\\]](javascript' prose.md || fail "report.md holds a link"
# the recipe's code block: a fence of four backticks around a text with three
last=$(grep -n '^````yaml$' $md | cut -d: -f1)
[ -n "$last" ] || fail "no four-backtick fence for the recipe"
expect_eq "$(tail -1 $md)" '````' "the recipe's code block closed by its own fence"
! grep -q '<script>' run/report.html || fail "report.html holds raw HTML"
# a results.csv received from elsewhere with control characters in a cell
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "unit") c = i } NR > 1 && c { $c = "v\033[2J\001" } { print }' run/results.csv > t.csv
mv t.csv run/results.csv
grep -q "$(printf '\033')" run/results.csv || fail "the test did not put an escape into results.csv"
expect_status 0 "$MATRIX" report run > out.txt 2> err.txt
for f in run/report.md run/report.html run/plots/*.svg; do
	! grep -q "$(printf '\033')" $f || fail "$f holds an escape character"
	! LC_ALL=C grep -q "$(printf '\001')" $f || fail "$f holds a control character"
done
echo ok
