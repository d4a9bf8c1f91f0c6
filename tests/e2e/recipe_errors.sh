# recipe_errors.sh - every recipe in tests/recipes/bad must be refused by
# `matrix expand` with exit status 2 and exactly the text of its .err file on
# stderr. It runs inside that folder, so messages name the bare file.
. "$top_srcdir/tests/setup"
out=$work
cd "$top_srcdir/tests/recipes/bad"
n=0
failed=0
for f in *.yaml; do
	n=$((n + 1))
	expected=${f%.yaml}.err
	[ -f "$expected" ] || { echo "FAIL: $f: no $expected" >&2; failed=$((failed + 1)); continue; }
	set +e
	"$MATRIX" expand "$f" >"$out/stdout" 2>"$out/stderr"
	rc=$?
	set -e
	if [ "$rc" != 2 ]; then
		echo "FAIL: $f: exit status $rc, expected 2" >&2
		failed=$((failed + 1))
	elif ! cmp -s "$out/stderr" "$expected"; then
		echo "FAIL: $f: stderr differs from $expected:" >&2
		diff -u "$expected" "$out/stderr" >&2 || true
		failed=$((failed + 1))
	elif [ -s "$out/stdout" ]; then
		echo "FAIL: $f: printed on stdout:" >&2
		cat "$out/stdout" >&2
		failed=$((failed + 1))
	fi
done
[ "$n" -gt 0 ] || fail "no recipes in tests/recipes/bad"
echo "$n bad recipes, $failed failed"
[ "$failed" = 0 ]
