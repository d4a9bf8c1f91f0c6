#!/bin/sh
# tests/dist/readme.sh - the README's commands work in an unpacked release
# tarball (issue 21, item 5). Not part of `make check` (it builds the tree
# again, and runs the quick start: minutes); run it as `make dist-readme-check`
# from a configured build tree, or `sh tests/dist/readme.sh [TARBALL]`.
#
# It unpacks the tarball (`make dist` builds one when none is given), checks
# that it holds what the README's commands call (autogen.sh,
# tests/install-deps.sh, the recipes, the tests), then runs the README's first
# fenced shell block word for word but for `sh tests/install-deps.sh && `
# (that needs root and the network: it is checked with `sh -n`, and run too
# with READMECHECK_INSTALL_DEPS=1), checks the quick start's results, and runs
# the second block the same way: the whole test suite with READMECHECK_FULL=1,
# else `make check` with a few tests (TESTS=...; say so in the output).
set -eu
top_builddir=${top_builddir:-$(pwd)}
tarball=${1:-}
if [ -z "$tarball" ]; then
	echo "readme.sh: make dist in $top_builddir"
	(cd "$top_builddir" && make -s dist >/dev/null)
	tarball=$(ls -t "$top_builddir"/matrix-*.tar.gz | head -n 1)
fi
case $tarball in /*) ;; *) tarball=$(pwd)/$tarball ;; esac
work=$(mktemp -d "${TMPDIR:-/tmp}/matrix-dist.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$work"
tar xzf "$tarball"
set -- matrix-*/
[ -d "$1" ] || fail "$tarball holds no matrix-VERSION/ directory"
cd "$1"
echo "readme.sh: unpacked $(basename "$tarball") in $work"

for f in README.md autogen.sh configure.ac Makefile.am m4/.keep tests/install-deps.sh tests/setup \
	recipes/cpu_quickstart.yaml .ci/run doc/matrix.1 doc/recipe.md; do
	[ -e "$f" ] || fail "the tarball lacks $f (add it to EXTRA_DIST)"
done
sh -n tests/install-deps.sh || fail "tests/install-deps.sh does not parse"

# the README's fenced shell blocks, as .ci/run reads them
block() { awk -v want="$1" '/^```(sh|bash|shell)$/ { n++; inblock = 1; next } /^```$/ { inblock = 0; next } inblock && n == want { print }' README.md; }
deps='sh tests/install-deps.sh && '
for n in 1 2; do
	cmd=$(block $n)
	case $cmd in "$deps"*) ;; *) fail "README block $n does not begin with '$deps': $cmd" ;; esac
done

run_block() { # run_block N COMMAND
	echo "readme.sh: block $1: $2"
	t0=$(date +%s)
	bash -c "$2" > "block$1.log" 2>&1 || { tail -n 40 "block$1.log"; fail "README block $1 failed in the unpacked tarball: $2"; }
	echo "readme.sh: block $1 took $(($(date +%s) - t0)) s"
}
cmd1=$(block 1)
[ -n "${READMECHECK_INSTALL_DEPS:-}" ] || cmd1=${cmd1#"$deps"}
run_block 1 "$cmd1"
set -- experiments/cpu_quickstart/*/results.csv
[ -f "$1" ] || fail "the quick start left no results.csv"
rows=$(($(wc -l < "$1") - 1))
[ "$rows" -eq "$(./matrix/matrix expand recipes/cpu_quickstart.yaml --count)" ] ||
	fail "the quick start wrote $rows rows, the recipe has $(./matrix/matrix expand recipes/cpu_quickstart.yaml --count) points"
[ -f "$(dirname "$1")/report.md" ] || fail "the quick start wrote no report.md"
echo "readme.sh: the quick start wrote $rows rows and its report"

cmd2=$(block 2)
cmd2=${cmd2#"$deps"}
if [ -z "${READMECHECK_FULL:-}" ]; then
	few='tests/e2e/usage.sh tests/doc/manpages.sh tests/e2e/recipes_by_name.sh tests/e2e/version.sh tests/e2e/run_basic.sh'
	case $cmd2 in *'make -j"$(nproc)" check') ;; *) fail "README block 2 does not end with make check: $cmd2" ;; esac
	cmd2="$cmd2 TESTS='$few'"
	echo "readme.sh: block 2 with a few tests (READMECHECK_FULL=1 runs them all)"
fi
run_block 2 "$cmd2"
grep -q '^# FAIL: *0$' block2.log && grep -q '^# ERROR: *0$' block2.log || { tail -n 30 block2.log; fail "make check failed"; }
grep '^# TOTAL' block2.log
echo "readme.sh: ok"
