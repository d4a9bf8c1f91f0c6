# The study recipes (issue 19, item 7): each recipes/<study>.yaml expands to
# the number of points its header states, and a tiny CPU slice of each runs
# end to end through the report, whose figures and improvement tables are the
# ones the recipe lists. The slice is the recipe with command-line overrides:
# the native engine on the CPU, the tiny models, one small batch, a few steps
# of measurement, and --only where a factor has CPU-less levels. The version
# study (000) also loses its `container` factor (its images are CUDA builds of
# PyTorch versions, not on a test machine): sed removes it from a copy.
. "$top_srcdir/tests/setup"
R=$top_srcdir/recipes
QUICK="measure.warmup=1 measure.min_time=0s measure.max_time=0.05s measure.rel_ci=0.5 measure.timeout=60s"

# count RECIPE N: matrix expand counts N points, and the header says so
count() {
	expect_eq "$("$MATRIX" expand "$R/$1.yaml" --count)" "$2" "$1: points"
	grep -q "^# .*\b$3\b" "$R/$1.yaml" || fail "$1: the header does not state $3"
}
count pytorch_versions_training 108 "108 points"
count compile_training 36 "36 points"
count inference_accelerators 144 "144 points"
count inference_cube 768 "768 points"
count cpu_vs_gpu 12 "4 points, each measured 3 times"
for f in "$R"/pytorch_versions_training.yaml "$R"/compile_training.yaml "$R"/cpu_vs_gpu.yaml \
	"$R"/inference_accelerators.yaml "$R"/inference_cube.yaml; do
	grep -q '^# Report items and the write-up\|^# The report.s figures follow the write-up' "$f" ||
		fail "$f: no header mapping report items to the write-up"
	grep -q '^# Needs: ' "$f" || fail "$f: the header does not say what it needs"
done

# slice NAME RECIPE OKROWS FIGURE... -- run ARGS: run, then check
slice() {
	name=$1 recipe=$2 okrows=$3; shift 3
	figs=
	while [ "$1" != -- ]; do figs="$figs $1"; shift; done
	shift
	"$MATRIX" run "$recipe" $QUICK "$@" --out "$name" > "$name.out" 2> "$name.err" ||
		fail "$name: run failed: $(cat "$name.err")"
	expect_eq "$(csv_col "$name/results.csv" status | grep -c '^ok$')" "$okrows" "$name: ok rows"
	[ -s "$name/report.html" ] || fail "$name: no report.html"
	for f in $figs; do
		[ -s "$name/plots/$f.svg" ] || fail "$name: no figure $f ($(ls "$name/plots" | tr '\n' ' '))"
		grep -q "id=\"fig-$f\"" "$name/report.html" || fail "$name: figure $f not in report.html"
	done
}
# improved NAME FACTOR FROM TO N: the improvements table has N groups for it
improved() {
	got=$(awk -F, -v f="$2" -v a="$3" -v b="$4" '$1 == f && $2 == a && $3 == b && $5 > 0' \
		"$1/tables/improvements.csv" | wc -l)
	expect_eq "$got" "$5" "$1: improvement rows of $2 $3 -> $4"
}

# 000: no containers, the native engine, fp32 (fp16 is GPU-only), one GPU
sed -e '/^containers:/,/^order:/{/^order:/!d;}' -e '/container/d' -e '/^exclude:/d' \
	-e '/^  # torch.compile came/d' "$R/pytorch_versions_training.yaml" > versions.yaml
grep -q container versions.yaml && fail "versions.yaml still names the container factor"
slice versions versions.yaml 4 bars_precision_compile best effects -- \
	device=cpu engine=native model=resnet_tiny,bert_tiny batch=2 --only precision=fp32,gpus=1
improved versions compile none default 2

# 001: one GPU (8 is the GPU part), fp16 is GPU-only: fp32 stands in
slice compile "$R/compile_training.yaml" 4 bars_model_compile best -- \
	device=cpu model=resnet_tiny batch=2 precision=fp32 --only gpus=1,syncbn=off,compile=none\|default
improved compile compile none default 1
improved compile ema off on 1

# 002: the PyTorch engine's runtimes need torch: the native engine runs eager
# fp32 and reports the other runtimes unsupported
slice accel "$R/inference_accelerators.yaml" 2 scatter_batch_runtime scatter_model_precision -- \
	device=cpu engine=native model=resnet_tiny batch=1,8 --only precision=fp32,quant=dynamic,runtime=eager\|tensorrt
expect_eq "$(csv_col accel/results.csv status | grep -c '^unsupported$')" 2 "accel: tensorrt unsupported"

# 003: the cube's switches that the CPU backend honours, at fp32. Its subset
# charts are scatters with where: chart 7 (compiled points only) is drawn;
# chart 2 (fp16 only) keeps no point of the fp32 slice and is listed as not
# drawn; chart 5 (the conv models) went with the override of model.
slice cube "$R/inference_cube.yaml" 8 scatter_model_precision scatter_model_eval \
	scatter_model_eval_where_compile scatter_model_cudnn_benchmark_where_channels_last \
	scatter_eval_inference_mode best -- \
	device=cpu model=resnet_tiny,bert_tiny batch=1 --only precision=fp32,compile=none\|default,cudnn_benchmark=off,channels_last=off,inference_mode=off
improved cube compile none default 2
expect_eq "$(awk -F'\t' 'NF == 5' cube/plots/scatter_model_eval_where_compile.dat | wc -l | tr -d ' ')" 4 \
	"cube: chart 7 draws the compiled points only"
expect_grep 'no measured point is left where precision = fp16' cube/report.md "cube: chart 2 said not drawn"
grep -q 'x: channels_last, color: cudnn_benchmark' cube/recipe.yaml && fail "cube: chart 5 kept after model was overridden"

# 004: the CPU half (device is a factor here: --only picks it), repeat 1
slice cpu "$R/cpu_vs_gpu.yaml" 2 bars_device_threads -- \
	model=mnist_cnn batch=8 repeat=1 --only device=cpu
# threads: [1, all]: all is this machine's cores, recorded as the number
cores=$(getconf _NPROCESSORS_ONLN)
improved cpu threads 1 "$cores" 1
expect_eq "$(csv_col cpu/results.csv threads | sort -n | tr '\n' ' ')" "1 $cores " "cpu: threads recorded"
expect_eq "$(csv_col cpu/plan.csv threads | sort -n | tr '\n' ' ')" "1 $cores " "cpu: threads planned"
sed "s/threads: \\[1, all\\]/threads: [$cores, ALL]/" "$R/cpu_vs_gpu.yaml" > dup.yaml
expect_status 2 "$MATRIX" expand dup.yaml 2> dup.err
expect_grep "duplicate level '$cores' in factor 'threads' (first at line [0-9]*; all is this machine's cores: $cores)" \
	dup.err "threads: all that repeats a level"
echo ok
