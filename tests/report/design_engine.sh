#!/bin/sh
# design_engine.sh - a command engine with known factorial effects, for the
# fractional design tests (tests/report/design.sh).
# Usage: design_engine.sh MODEL A B C D E [F]   (result to $MATRIX_RESULT)
#   throughput = 100 samples/s, x 0.5 for model=big,
#                x 1.5 when A=on, x 0.8 when B=on, x 1.25 more when A=on and B=on,
#                x 1.2 when D=on, C, E and F have no effect,
#                x a noise factor in [0.99, 1.01) fixed by the arguments (cksum);
#   step_ms = 1000 * 32 / throughput, step_ms_lo/hi = step_ms / 1.03, * 1.03.
# Averaged over the other factors, in log-contrast terms (mean of log
# throughput at on minus at off): A gains 1.5 * sqrt(1.25), B 0.8 * sqrt(1.25),
# the A x B interaction (same level against different) sqrt(1.25), D 1.2,
# the others 1.
res=${MATRIX_RESULT:?}
n=$(printf '%s ' "$@" | cksum | cut -d' ' -f1)
awk -v model="$1" -v a="$2" -v b="$3" -v d="$5" -v n="$n" 'BEGIN {
	t = 100
	if (model == "big") t *= 0.5
	if (a == "on") t *= 1.5
	if (b == "on") t *= 0.8
	if (a == "on" && b == "on") t *= 1.25
	if (d == "on") t *= 1.2
	t *= 0.99 + 0.02 * (n % 1000) / 1000
	ms = 1000 * 32 / t
	printf "status=ok\nthroughput=%.10g\nunit=samples/s\nstep_ms=%.10g\n", t, ms
	printf "step_ms_lo=%.10g\nstep_ms_hi=%.10g\nsamples=50\ndevice=cpu\nengine=design\n", ms / 1.03, ms * 1.03
}' >"$res"
