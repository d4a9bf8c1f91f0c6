# probe.sh - sourced by the GPU checks (tests/gpu/*.sh): is there a GPU
# (have_gpu, which the benchmarks and model_check.sh use too), does the engine run
# on a GPU here? gpu_probe needs E (the engine).
#
#   gpu_probe DIR [ENGINE ARGS...]
#
# runs one mnist_cnn point on cuda (result and log in DIR/probe, probe.log)
# and returns when it ran; else it ends the check: SKIP (exit 77) when the
# engine answers unsupported (exit 3) and the machine has no GPU, FAIL (exit
# 1) when it has one that the engine cannot use (a build or a bundle without
# cuDNN, a driver too old: the reason is printed), or when the point failed
# otherwise. Without the second case a check on a machine with a GPU but an
# unusable engine would say SKIP, and `make check-gpu` pass having checked
# nothing (model_check.sh has its own probe, with the same rule).
have_gpu() { ls /dev/nvidia[0-9]* >/dev/null 2>&1 || nvidia-smi -L >/dev/null 2>&1; }

gpu_probe() {
	_probe_dir=$1
	shift
	_probe_rc=0
	"$E" --device cuda --model mnist_cnn --batch 8 --steps 1 --warmup 0 "$@" --result "$_probe_dir/probe" \
		>"$_probe_dir/probe.log" 2>&1 || _probe_rc=$?
	[ "$_probe_rc" -eq 0 ] && return 0
	_probe_why=$(sed -n 's/^reason=//p' "$_probe_dir/probe" 2>/dev/null | head -n 1)
	if [ "$_probe_rc" -eq 3 ] && ! have_gpu; then
		echo "SKIP: no GPU ($_probe_why)"
		exit 77
	elif [ "$_probe_rc" -eq 3 ]; then
		echo "FAIL: a GPU is present but matrix-engine --device cuda is unsupported: $_probe_why"
		exit 1
	fi
	echo "FAIL: the probe point (mnist_cnn on cuda) exited $_probe_rc:"
	tail -n 5 "$_probe_dir/probe.log"
	exit 1
}
