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
	timeout 20 "$MATRIX" expand "$f" >"$out/stdout" 2>"$out/stderr" # a hang fails (124)
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
# a recipe that never ends (issue 22): 'matrix expand /dev/zero' read until
# memory ran out (4 GB in 3 s here); now it stops after 8 MiB. Run under a
# memory limit and a timeout, so that without the cap it fails, not the host.
# (AddressSanitizer's shadow memory cannot live under ulimit -v: the limit
# is left out there, as in hostile_point_files.sh)
vlimit=1000000
if ldd "$MATRIX" 2>/dev/null | grep -q libasan; then vlimit=unlimited; fi
set +e
(ulimit -v $vlimit; timeout 20 "$MATRIX" expand /dev/zero) > "$out/zero.out" 2> "$out/zero.err"
rc=$?
set -e
[ "$rc" = 2 ] && [ "$(cat "$out/zero.err")" = "matrix: unable to read '/dev/zero': more than 8 MiB, no recipe is that long" ] || {
	echo "FAIL: /dev/zero as a recipe: exit $rc, $(head -c 300 "$out/zero.err")" >&2
	failed=$((failed + 1))
}
# a recipe through a pipe (a shell's <(...)) is read as a file is
cat "$top_srcdir/recipes/cpu_threads.yaml" | "$MATRIX" expand /dev/stdin --count > "$out/pipe.out" 2>&1 &&
	[ "$(cat "$out/pipe.out")" = 6 ] || { echo "FAIL: a recipe on a pipe: $(cat "$out/pipe.out")" >&2; failed=$((failed + 1)); }
[ "$n" -gt 0 ] || fail "no recipes in tests/recipes/bad"
echo "$n bad recipes, $failed failed"
[ "$failed" = 0 ]
