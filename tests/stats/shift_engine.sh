#!/bin/sh
# shift_engine.sh - a command engine for tests/stats/run_noise.sh: a known
# throughput, a known factor on it, and a small scatter between processes.
# Usage: shift_engine.sh TRIAL FACTOR SALT [BUMP_TRIAL BUMP]   (result to $MATRIX_RESULT)
#   throughput = 1000 samples/s x (1 + TRIAL / 10) x FACTOR (x BUMP when
#                TRIAL is BUMP_TRIAL) x (1 + 0.003 x s), s uniform in
#                [-1, 1] from the process's $MATRIX_POINT_ID and SALT (their
#                cksum, then Park and Miller's generator, exact in any awk:
#                the same draws on every machine; another SALT, another
#                run's draws)
#   step_ms = 1000 / throughput with a 95% CI of +-0.5% (log scale): the
#   process's own interval
res=${MATRIX_RESULT:?}
seed=$(printf '%s %s' "${MATRIX_POINT_ID:?}" "$3" | cksum | cut -d' ' -f1)
awk -v trial="$1" -v factor="$2" -v bt="${4:-}" -v bump="${5:-1}" -v seed="$seed" 'BEGIN {
	x = seed % 2147483646 + 1
	for (i = 0; i < 3; i++)
		x = (x * 16807) % 2147483647
	s = 2 * x / 2147483647 - 1
	t = 1000 * (1 + trial / 10) * factor * (1 + 0.003 * s)
	if (trial == bt)
		t *= bump
	ms = 1000 / t
	printf "status=ok\nthroughput=%.10g\nunit=samples/s\nstep_ms=%.10g\n", t, ms
	printf "step_ms_lo=%.10g\nstep_ms_hi=%.10g\nsamples=100\nci_met=1\ndevice=cpu\nengine=shift\n", ms / 1.005, ms * 1.005
}' >"$res"
