# Text from a point is made fit for files and terminals (issue 22, item 8): a
# failure reason cut at 200 bytes ends on a character boundary, invalid UTF-8
# from a log or a result file is replaced (U+FFFD), control characters are
# escaped; results.csv, report.md and report.html stay valid UTF-8 and carry
# no escape sequence, nor does the runner's output. An engine's usage line
# after its error is not the reason, the error is.
. "$top_srcdir/tests/setup"
cat > eng.sh <<'SH'
#!/bin/sh
case $1 in
cut) printf '%0199d\303\251 and more\n' 0 >&2; exit 1 ;;
bad) printf 'engine: \377\376 bad \033[31mred\033[0m \302\233\n' >&2; exit 1 ;;
usage) printf 'engine: --batch: 99 is out of range\nusage: engine [flags] --result FILE\n\n' >&2; exit 2 ;;
res) printf 'status=ok\nthroughput=1\ndevice=cpu\377\nunit=samples/s\033[2J\nversion=\355\240\200\n' > "$MATRIX_RESULT" ;;
esac
SH
cat > r.yaml <<YAML
name: hostile_text
engine: command
command: [sh, $work/eng.sh, "{mode}"]
factors:
  mode: [cut, bad, res, usage]
YAML
# expand's table pads by characters, not bytes: a level 'héllo' is 5 wide
printf 'name: u\nengine: command\ncommand: [true]\nfactors:\n  x: ["h\303\251llo", plain]\n  y: [a]\n' > u.yaml
"$MATRIX" expand u.yaml > u.txt
expect_eq "$(sed -n 2p u.txt | cut -c 25-)" "  h$(printf '\303\251')llo  a" "a level with an accent, padded"
expect_eq "$(sed -n 3p u.txt | cut -c 25-)" "  plain  a" "the level below it, in the same column"
expect_status 1 "$MATRIX" run r.yaml --out run > out.txt 2> err.txt
for f in run/results.csv run/report.md run/report.html out.txt err.txt; do
	iconv -f UTF-8 -t UTF-8 "$f" > /dev/null 2>&1 || fail "$f is not valid UTF-8"
	! grep -q "$(printf '\033')" "$f" || fail "$f holds an escape character"
done
zeros=$(printf '%0199d' 0)
expect_grep ",cut,failed,exit status 1: $zeros,," run/results.csv "the reason cut before the split character"
expect_grep ",bad,failed,exit status 1: engine: $(printf '\357\277\275\357\277\275') bad \\\\x1b\[31mred\\\\x1b\[0m \\\\u009b," run/results.csv "invalid bytes replaced, controls escaped"
# an engine's usage line after its error: the error is the reason
expect_grep ",usage,failed,exit status 2: engine: --batch: 99 is out of range,," run/results.csv "the error, not the usage line"
expect_grep ",res,ok,.*,samples/s\\\\x1b\[2J,.*,cpu$(printf '\357\277\275')," run/results.csv "result values cleaned"
expect_grep "version=$(printf '\357\277\275\357\277\275\357\277\275')" run/results.csv "a surrogate is invalid"
echo ok
