# The release tarball holds every file git tracks (issue 21, item 5): a file
# left out of EXTRA_DIST is missing from `make dist`, and its test fails or,
# worse, silently checks less there (tests/recipes/bad/alias_use.yaml was
# such a case: recipe_errors.sh walks the bad recipes it finds). The list is
# make's own (print-dist-files: $(DISTFILES), what distdir copies); files
# that are not shipped on purpose are named below with the reason. Skipped
# outside a git checkout (in an unpacked tarball there is nothing to compare).
. "$top_srcdir/tests/setup"
# (an unpacked tarball inside a checkout, as make distcheck's, is not one)
[ "$(git -C "$top_srcdir" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$top_srcdir" && pwd -P)" ] || {
	echo "SKIP: $top_srcdir is not the top of a git checkout (a release tarball has no other list to compare with)"
	exit 77
}
# not shipped on purpose: git's own files
not_shipped='^(\.gitignore|.*/\.gitignore|\.gitattributes)$'
# (without make check's MAKEFLAGS: its TESTS=... would narrow the list)
env -u MAKEFLAGS -u MFLAGS -u MAKEOVERRIDES -u MAKELEVEL make -s -C "$top_builddir" print-dist-files | tr ' ' '\n' | sed 's|^\./||' | grep . | sort -u > dist.txt
[ -s dist.txt ] || fail "make print-dist-files printed nothing"
# a directory in the list (tests/fuzz/corpus) is copied whole
while read -r d; do
	[ -d "$top_srcdir/$d" ] && (cd "$top_srcdir" && find "$d" -type f)
done < dist.txt >> dist.txt.dirs
sort -u dist.txt dist.txt.dirs -o dist.txt
git -C "$top_srcdir" ls-files | grep -vE "$not_shipped" | sort -u > git.txt
[ -s git.txt ] || fail "git ls-files listed nothing in $top_srcdir"
comm -23 git.txt dist.txt > missing.txt
[ ! -s missing.txt ] || fail "tracked files that make dist leaves out (add them to an EXTRA_DIST, or say here why not): $(tr '\n' ' ' < missing.txt)"
echo "files.sh: the tarball holds all $(wc -l < git.txt) tracked files"
