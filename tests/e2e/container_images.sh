# container_images.sh - the images of containers/ built and run for real:
# recipes/container_comparison.yaml's native and Debian-PyTorch images are
# built by `matrix build` (with docker: one runtime is enough here, both run
# container_checks.sh) and a slice of its points runs in each. The PyPI image
# is left out: it downloads about 3 GB of wheels on every run (it was built
# and run by hand: containers/README.md).
. "$top_srcdir/tests/setup"
rt=docker
. "$top_srcdir/tests/e2e/container_lib.sh"
# the recipe as shipped, with overrides: the runtime, and the containers
# without the PyPI one (an override drops a level from the exclusions, the
# baseline and report.improvements alike)
recipe=$top_srcdir/recipes/container_comparison.yaml
ovr="containers.runtime=$rt container=native,torch-debian"
# the build paths are relative to the top of the source tree
cd "$top_srcdir"
"$MATRIX" build "$recipe" $ovr > "$work/build.txt" 2>&1 ||
	fail "matrix build: $(tail -n 30 "$work/build.txt")"
cd "$work"
expect_grep "^native	$rt	localhost/matrix-container_comparison-native	sha256:[0-9a-f]*	no digest: local build	built$" build.txt "the native image"
expect_grep "^torch-debian	$rt	localhost/matrix-container_comparison-torch-debian	sha256:[0-9a-f]*	no digest: local build	built$" build.txt "the Debian PyTorch image"
# the multi-stage build left its compilers behind
docker run --rm localhost/matrix-container_comparison-native sh -c 'command -v gcc cc' > cc.txt 2>&1 &&
	fail "the native image holds a compiler: $(cat cc.txt)"
# one point per image: MNIST inference, batch 1, short
cd "$top_srcdir"
"$MATRIX" run "$recipe" $ovr model=mnist_cnn task=infer batch=1 \
	measure.warmup=2 measure.min_time=0.2s measure.max_time=1s --out "$work/run" > "$work/run.txt" 2>&1 ||
	fail "matrix run: $(cat "$work/run.txt")"
cd "$work"
expect_eq "$(csv_col run/results.csv status | sort -u)" ok "the points' status"
expect_eq "$(csv_col run/results.csv engine | sort | tr '\n' ' ')" "native pytorch " "each image's engine"
grep '^[^,]*,[^,]*,[^,]*,native,' run/results.csv | grep -q "engine_version=" || fail "no engine_version from the native image"
grep '^[^,]*,[^,]*,[^,]*,torch-debian,' run/results.csv | grep -q "torch_version=1\.13" ||
	fail "the Debian image's torch is not 1.13: $(cat run/results.csv)"
expect_eq "$(grep -c "image_id=sha256:" run/results.csv)" 2 "image ids"
expect_eq "$(grep -c "^container: .* runtime=$rt image=localhost/matrix-container_comparison-.* id=sha256:" run/env.txt)" 2 \
	"env.txt's image lines"
grep -q "^  runtime: $rt$" run/recipe.yaml || fail "the run's recipe.yaml lacks the runtime override: $(cat run/recipe.yaml)"
expect_grep "container" run/report.md "the report names the container"
# the recipe's report (item 4): the container's effect over the matched
# pair, best per group by container, the figures coloured by container
expect_grep '^container,native,torch-debian,1,' run/tables/effects.csv "the container's effect, one matched pair"
expect_grep '^container=native,1,' run/tables/best.csv "best per group: the native image"
expect_grep '^container=torch-debian,1,' run/tables/best.csv "best per group: the Debian PyTorch image"
for f in scatter_model_container scatter_batch_container bars_model_container effects best; do
	[ -s "run/plots/$f.svg" ] || fail "no figure $f ($(ls run/plots | tr '\n' ' '))"
done
expect_eq "$("$rt" ps -aq | wc -l)" 0 "containers left"
echo "images of containers/: native and Debian PyTorch built and run"
