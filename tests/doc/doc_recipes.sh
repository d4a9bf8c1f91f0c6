# Every whole recipe shown in the documentation (a ```yaml block with a
# top-level name:) loads: README.md's example excluded on a factor it did
# not have ("unknown factor 'channels_last' in 'exclude'"), so a reader
# who copied it got an error at once. Snippets without name: (a part of a
# recipe) are left out.
. "$top_srcdir/tests/setup"
n=0
for doc in README.md doc/recipe.md; do
	awk -v out="$work/$(basename "$doc" .md)" '
		/^```ya?ml$/ { inb = 1; k++; f = out "_" k ".yaml"; start = NR + 1; printf "" > f; next }
		/^```/ && inb { inb = 0; close(f); print f ":" start; next }
		inb { print > f }' "$top_srcdir/$doc" > blocks.txt
	while IFS=: read -r f line; do
		grep -q '^name:' "$f" || continue
		n=$((n + 1))
		"$MATRIX" expand "$f" --count > /dev/null 2> err.txt ||
			fail "$doc:$line: the recipe shown there does not load: $(cat err.txt)"
	done < blocks.txt
done
[ "$n" -ge 3 ] || fail "only $n recipes found in the documentation"
echo ok
