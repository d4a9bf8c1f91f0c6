#!/bin/sh
# engine.sh - a command engine with known answers, for the report tests.
# Usage: engine.sh MODEL A B C GPUS   (result to $MATRIX_RESULT)
#   throughput = 100 samples/s, x 0.25 for model=big,
#                x 1.5 when A=on, x 2 more when A=on and B=on,
#                C has no effect,
#                x GPUS x scale (1: 1, 2: 0.95, 4: 0.9)
#   step_ms    = 1000 * GPUS * 32 / throughput (batch 32 per GPU),
#   step_ms_lo/hi = step_ms / 1.02, step_ms * 1.02 (a 95% CI of +-2%, log scale)
# big, B=on, C=y, gpus=4 is unsupported.
# engine_version = $KNOWN_ENGINE_VERSION (default 1): two versions of this
# engine, for the warning of runs merged across versions (merge.sh).
model=$1 a=$2 b=$3 c=$4 gpus=$5
res=${MATRIX_RESULT:?}
if [ "$model" = big ] && [ "$b" = on ] && [ "$c" = y ] && [ "$gpus" = 4 ]; then
	printf 'status=unsupported\nreason=big with B needs more memory than 4 GPUs have\n' >"$res"
	exit 3
fi
awk -v model="$model" -v a="$a" -v b="$b" -v gpus="$gpus" -v ver="${KNOWN_ENGINE_VERSION:-1}" 'BEGIN {
	t = 100
	if (model == "big") t *= 0.25
	if (a == "on") t *= 1.5
	if (a == "on" && b == "on") t *= 2
	s = gpus == 1 ? 1 : gpus == 2 ? 0.95 : 0.9
	t *= gpus * s
	ms = 1000 * gpus * 32 / t
	printf "status=ok\nthroughput=%.10g\nunit=samples/s\nstep_ms=%.10g\n", t, ms
	printf "step_ms_lo=%.10g\nstep_ms_hi=%.10g\nsamples=50\ndevice=cpu\nengine=known\nkernel=k%s\n", ms / 1.02, ms * 1.02, gpus
	printf "engine_version=%s\n", ver
}' >"$res"
