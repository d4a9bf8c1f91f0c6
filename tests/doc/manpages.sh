# The manuals agree with the programs (issue 21, item 3): every command, usage
# line and option of 'matrix help CMD' is in doc/matrix.1, every flag of
# 'matrix-engine --help' in doc/matrix-engine.1, and every key, fixed value,
# factor and level the recipe loader accepts in doc/matrix-recipe.5 and
# doc/recipe.md, and none of them documents what the programs do not have
# (tests/doc/check_docs.py; each disagreement is one FAIL line naming the
# option or key and the file). The pages render without groff warnings.
. "$top_srcdir/tests/setup"
: "${MATRIX_ENGINE:?MATRIX_ENGINE must name the built matrix-engine}"
py=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import sys; sys.exit(sys.version_info < (3, 6))' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "SKIP: no python3 (3.6 or later) to run tests/doc/check_docs.py"; exit 77; }
"$py" "$top_srcdir/tests/doc/check_docs.py" || fail "the manuals disagree with the programs (FAIL lines above)"
if command -v groff >/dev/null 2>&1; then
	for page in matrix.1 matrix-engine.1 matrix-recipe.5; do
		groff -man -Tutf8 -ww -z "$top_srcdir/doc/$page" > groff.txt 2>&1 || fail "groff failed on doc/$page"
		[ ! -s groff.txt ] || { cat groff.txt >&2; fail "groff warns about doc/$page"; }
	done
else
	echo "note: groff is not installed: the pages' rendering was not checked (Debian package groff-base)"
fi
echo ok
