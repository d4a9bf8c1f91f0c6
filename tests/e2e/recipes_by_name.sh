# Recipes found by name (issue 21, item 5): 'matrix run|expand NAME' looks for
# NAME.yaml in $MATRIX_RECIPES (':'-separated), ./recipes and the installed
# share/matrix/recipes, in that order; a file wins over a name; a name that is
# nowhere is an error listing where it looked (with a did-you-mean);
# 'matrix recipes' lists them by directory with their point counts.
. "$top_srcdir/tests/setup"
mk() { # mk DIR NAME BATCHES [DESCRIPTION]
	mkdir -p "$1"
	printf 'name: %s\ndescription: %s\nengine: native\ndevice: cpu\nfactors:\n  model: mnist_cnn\n  batch: [%s]\n' \
		"$2" "${4:-$2 from $1}" "$3" > "$1/$2.yaml"
}
mk a tiny "1, 2"
mk b tiny "1, 2, 3"
mk b other "1"
mk recipes local "1, 2, 4, 8"
printf 'name: broken\nengine: native\nfactors: {batch: [0]}\n' > b/broken.yml
unset MATRIX_RECIPES

# ./recipes, without $MATRIX_RECIPES
expect_eq "$("$MATRIX" expand local --count)" 4 "./recipes by name"
expect_eq "$("$MATRIX" expand local.yaml --count)" 4 "./recipes by NAME.yaml"
# $MATRIX_RECIPES first, its directories in order
expect_eq "$(MATRIX_RECIPES="$work/a:$work/b" "$MATRIX" expand tiny --count)" 2 "first of \$MATRIX_RECIPES"
expect_eq "$(MATRIX_RECIPES="$work/b:$work/a" "$MATRIX" expand tiny --count)" 3 "order of \$MATRIX_RECIPES"
expect_eq "$(MATRIX_RECIPES="$work/b" "$MATRIX" expand other --count)" 1 "\$MATRIX_RECIPES"
# a file named like that wins over the name
cp b/tiny.yaml tiny
expect_eq "$(MATRIX_RECIPES="$work/a" "$MATRIX" expand tiny --count)" 3 "a file wins"
rm tiny
# run by name: the run directory holds that recipe
MATRIX_RECIPES="$work/a" "$MATRIX" run tiny --dry-run > dry.txt
expect_eq "$(grep -c -- '--batch' dry.txt)" 2 "run by name, dry run"
MATRIX_RECIPES="$work/a" "$MATRIX" run tiny batch=1 --out run --no-report > /dev/null 2>&1 || fail "run by name failed"
grep -q '^name: tiny' run/recipe.yaml || fail "run by name saved another recipe"

# nowhere: where it looked (the build tree's binary: the source tree's
# recipes too), and the closest name there
rm -rf experiments
pkg='/[^,]*/share/matrix/recipes'
expect_status 2 "$MATRIX" expand tinny 2> err.txt
grep -qx "matrix: no recipe 'tinny': no such file, and no tinny.yaml in \$MATRIX_RECIPES (unset), ./recipes, $top_srcdir/recipes, $pkg ('matrix recipes' lists the recipes there)" err.txt ||
	{ cat err.txt; fail "not found, \$MATRIX_RECIPES unset"; }
MATRIX_RECIPES="$work/a:$work/b" expect_status 2 "$MATRIX" run tinny 2> err.txt
grep -qx "matrix: no recipe 'tinny': no such file, and no tinny.yaml in $work/a, $work/b, ./recipes, $top_srcdir/recipes, $pkg (did you mean 'tiny'?)" err.txt ||
	{ cat err.txt; fail "not found, with a suggestion"; }
[ ! -e experiments ] || fail "a recipe not found left a run directory"
# a path is not looked up: the loader says what is wrong with it
expect_status 2 "$MATRIX" expand a/none.yaml 2> err.txt
grep -q "a/none.yaml" err.txt || fail "a missing path: $(cat err.txt)"

# matrix recipes: by directory, the point counts, a hidden name, an invalid recipe (exit 1)
MATRIX_RECIPES="$work/a:$work/b" expect_status 1 "$MATRIX" recipes > list.txt
cat > list.want <<EOT
$work/a:
  tiny                                2 points  tiny from a

$work/b:
  broken                       invalid: $work/b/broken.yml:3:19: invalid level '0' for factor 'batch' (expected a positive integer)
  other                               1 point   other from b
  tiny                         (hidden by the one of that name above)

./recipes:
  local                               4 points  local from recipes
EOT
# the installed directory may hold recipes too: compare the first three directories
sed -n '1,/^\.\/recipes:$/p' list.txt > got.txt; echo "  local                               4 points  local from recipes" >> got.txt
cmp list.want got.txt || { diff list.want list.txt; fail "matrix recipes"; }
MATRIX_RECIPES="$work/a" "$MATRIX" recipes --names > names.txt
expect_eq "$(head -n 2 names.txt | tr '\n' ' ')" "tiny local " "recipes --names"
expect_status 2 "$MATRIX" recipes --name 2> err.txt
expect_eq "$(head -n 1 err.txt)" "matrix: recipes: unknown option '--name' (did you mean '--names'?)" "recipes --name"

# the build tree's binary run outside the source tree (make, no make
# install) finds the source tree's recipes, listed once from inside it
mkdir outside
(cd outside && "$MATRIX" recipes --names) > names.txt
grep -qx cpu_quickstart names.txt || { cat names.txt; fail "the build tree's matrix outside the source tree lists no recipes"; }
expect_eq "$(cd outside && "$MATRIX" expand cpu_quickstart --count)" \
	"$("$MATRIX" expand "$top_srcdir/recipes/cpu_quickstart.yaml" --count)" "the source tree's recipe by name"
if [ -d "$top_srcdir/recipes" ] && [ ! -d "$top_srcdir/recipes/recipes" ]; then
	(cd "$top_srcdir" && "$MATRIX" recipes) > src.txt
	expect_eq "$(grep -c 'recipes:$' src.txt)" 1 "the source tree's recipes listed once from inside it"
fi

# make install: the installed matrix, run from elsewhere, lists and runs the
# installed recipes by name (DESTDIR: SELF/../share/matrix/recipes)
env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$top_builddir" install-binPROGRAMS install-dist_recipesDATA \
	DESTDIR="$work/dest" > install.txt 2>&1 || { cat install.txt; fail "make install DESTDIR"; }
inst=$(find "$work/dest" -path '*/bin/matrix' -type f)
[ -x "$inst" ] || fail "make install put no bin/matrix under DESTDIR"
(cd outside && "$inst" recipes > list.txt) || { cat outside/list.txt; fail "installed: matrix recipes"; }
grep -qx "$work/dest/.*/share/matrix/recipes:" outside/list.txt || { cat outside/list.txt; fail "installed recipes not listed"; }
grep -q '^  cpu_quickstart  *[0-9]* points  ' outside/list.txt || { cat outside/list.txt; fail "installed cpu_quickstart not listed"; }
expect_eq "$(cd outside && "$inst" expand cpu_quickstart --count)" \
	"$("$MATRIX" expand "$top_srcdir/recipes/cpu_quickstart.yaml" --count)" "installed recipe by name"

# none anywhere: where it looked and how to point it somewhere (a copy of
# the binary in a bare directory; skipped where MATRIX_PKGDATADIR holds recipes)
mkdir -p bare/bin
cp "$MATRIX" bare/bin/matrix
set +e; (cd outside && "$work/bare/bin/matrix" recipes) > out.txt 2> err.txt; st=$?; set -e
if [ "$st" = 0 ]; then
	echo "skipped the no-recipes message: $(head -n 1 out.txt) holds recipes"
else
	expect_eq "$st" 1 "matrix recipes with no recipes: exit status"
	grep -qx "matrix: no recipes (\*\.yaml) in \$MATRIX_RECIPES (unset), \./recipes, $pkg; point MATRIX_RECIPES at a directory of recipes: MATRIX_RECIPES=DIR\[:DIR\.\.\.\]" err.txt ||
		{ cat err.txt; fail "no recipes: the message"; }
	(cd outside && MATRIX_RECIPES="$work/a" "$work/bare/bin/matrix" recipes --names) > names.txt
	expect_eq "$(cat names.txt)" "tiny" "MATRIX_RECIPES points it somewhere"
fi

# an installed layout: PREFIX/bin/matrix finds PREFIX/share/matrix/recipes
mkdir -p inst/bin inst/share/matrix/recipes empty
cp "$MATRIX" inst/bin/matrix
mk inst/share/matrix/recipes shipped "1, 2, 3, 4, 5"
cd empty
expect_eq "$("$work/inst/bin/matrix" expand shipped --count)" 5 "installed share/matrix/recipes"
"$work/inst/bin/matrix" recipes > list.txt
grep -qx "$work/inst/share/matrix/recipes:" list.txt || { cat list.txt; fail "installed directory not listed"; }
grep -q "^  shipped  *5 points  shipped from inst/share/matrix/recipes$" list.txt || { cat list.txt; fail "installed recipe not listed"; }
echo ok
