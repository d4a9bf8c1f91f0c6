# tests/gpu/runtimes.sh (issue 20, item 4) is for a CUDA machine; what of it
# runs without one: its usage errors (exit 2), the skip without a GPU (77),
# its expectations with --plan (a CPU-only onnxruntime and no TensorRT: the
# onnxruntime and tensorrt points on cuda must be unsupported, and it says
# why), and a real run on the cpu with --device cpu: the onnxruntime points
# run and pass their accuracy check, the tensorrt ones are unsupported for the
# reason expected, and a point outside its tolerance makes it exit 1.
. "$top_srcdir/tests/setup"
script=$top_srcdir/tests/gpu/runtimes.sh
PYTHON_TORCH=${PYTHON_TORCH:-python3}
export PYTHON_TORCH
"$PYTHON_TORCH" -c 'import torch' 2>/dev/null || { echo "SKIP: $PYTHON_TORCH cannot import torch"; exit 77; }
"$PYTHON_TORCH" -c 'import torch, sys; sys.exit(torch.cuda.is_available())' ||
	{ echo "SKIP: this machine has a GPU: run tests/gpu/runtimes.sh itself (make check-gpu)"; exit 77; }

expect_status 2 sh "$script" --bogus 2> err.txt
expect_grep "unrecognized arguments: --bogus" err.txt "an unknown option"
expect_status 2 sh "$script" --runtimes eager,tensorrtt 2> err.txt
expect_grep "'eager,tensorrtt': each of eager, inductor, onnxruntime, tensorrt expected" err.txt "an unknown runtime"
expect_status 2 sh "$script" --batch 0 2> err.txt
expect_grep "at least 1" err.txt "a batch of 0"
expect_status 77 sh "$script" out > skip.txt
expect_grep "^SKIP: .*has no CUDA device here" skip.txt "the skip without a GPU"

ort=$("$PYTHON_TORCH" -c 'import onnxruntime as o; print(" ".join(o.get_available_providers()))' 2>/dev/null) || ort=none
sh "$script" --plan > plan.txt || fail "--plan: $(cat plan.txt)"
expect_grep "^mnist_cnn  *eager  *fp32  *runs$" plan.txt "eager fp32 runs"
expect_grep "^resnet18  *eager  *int8  *unsupported: precision int8 with runtime eager runs on cpu$" plan.txt "eager int8 on cuda"
expect_grep "^tensorrt: no TensorrtExecutionProvider" plan.txt "no TensorRT said"
expect_grep "^resnet18  *tensorrt  *fp16  *unsupported: needs TensorRT through onnxruntime's TensorrtExecutionProvider$" plan.txt "tensorrt expected unsupported"
case $ort in
none) expect_grep "^mnist_cnn  *onnxruntime  *fp32  *unsupported: needs the onnxruntime package$" plan.txt "onnxruntime missing" ;;
*CUDAExecutionProvider*) ;;
*) expect_grep "^onnxruntime: no CUDAExecutionProvider (install onnxruntime-gpu)" plan.txt "no CUDA provider said"
   expect_grep "^mnist_cnn  *onnxruntime  *int8  *unsupported: needs onnxruntime-gpu (CUDAExecutionProvider)$" plan.txt "onnxruntime expected unsupported" ;;
esac

# the cpu: two points run (skipped checks where onnxruntime is missing: then
# they must be unsupported, which the script checks the same way)
sh "$script" --device cpu --models mnist_cnn --runtimes onnxruntime,tensorrt --precisions fp32,int8 out -- --steps 3 > run.txt 2>&1 ||
	fail "the cpu run: $(cat run.txt)"
cat run.txt
expect_grep "^4 points: .*0 as they should not (none)" run.txt "the summary"
expect_grep "^mnist_cnn  *tensorrt  *int8  *unsupported .* ok (expected)$" run.txt "tensorrt unsupported as expected"
if [ "$ort" != none ]; then
	expect_grep "^mnist_cnn  *onnxruntime  *fp32  *ok  *[0-9.e-]*  *1  *[0-9.]*  *-  *ok$" run.txt "onnxruntime fp32 with its error and throughput"
	expect_grep "^mnist_cnn  *onnxruntime  *int8  *ok  *[0-9.e-]* " run.txt "onnxruntime int8"
fi
expect_eq "$(cut -f 1-4 out/runtimes.tsv | sed -n 2p)" "mnist_cnn	onnxruntime	fp32	$([ "$ort" = none ] && echo unsupported || echo ok)" "runtimes.tsv"
# a point outside its tolerance: exit 1, the point named
expect_status 1 sh "$script" --device cpu --models mnist_cnn --runtimes eager --precisions fp32,int8 out -- --steps 3 --tolerance 1e-9 > tight.txt 2>&1
expect_grep "^mnist_cnn  *eager  *int8  *failed .*FAIL: failed (exit 1): AccuracyError: max_rel_err" tight.txt "the accuracy failure"
expect_grep "^FAIL: mnist_cnn eager int8: failed (exit 1): AccuracyError: max_rel_err" tight.txt "the failure's line for make check-gpu"
expect_grep "^2 points: 1 ran, 0 unsupported, 1 as they should not (mnist_cnn_eager_int8)" tight.txt "the summary of a failure"
echo ok
