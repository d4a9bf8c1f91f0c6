#!/bin/sh
# lognormal.sh - a command engine with known noise, for tests/stats/coverage.sh.
# Each process draws its throughput once: 1000 samples/s x exp(0.05 z), z
# standard normal, seeded by $MATRIX_POINT_ID (so every process of every point
# draws its own value, the same on every run). The process's own 95% CI of
# its median step is +-0.5%: much narrower than the 5% spread between
# processes, as on a real machine.
res=${MATRIX_RESULT:?}
seed=$(( 0x$(printf %.7s "${MATRIX_POINT_ID:?}") ))
awk -v seed="$seed" 'BEGIN {
	srand(seed)
	u1 = rand(); u2 = rand()
	if (u1 < 1e-12) u1 = 1e-12
	z = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2)
	t = 1000 * exp(0.05 * z)
	ms = 1000 / t
	printf "status=ok\nthroughput=%.10g\nunit=samples/s\nstep_ms=%.10g\n", t, ms
	printf "step_ms_lo=%.10g\nstep_ms_hi=%.10g\nsamples=100\nci_met=1\ndevice=cpu\nengine=lognormal\n", ms / 1.005, ms * 1.005
}' >"$res"
