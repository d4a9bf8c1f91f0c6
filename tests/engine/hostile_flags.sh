#!/bin/sh
# hostile_flags.sh - matrix-engine given values a user or a recipe may give
# that are legal one by one but not together, or beyond what it runs (issue
# 22's spirit, on the engine; tests/unit/test_flags.c has the parser's side):
#   - --threads above the CPU backend's pool (256) is exit 2 with the range;
#     the pool ran 256 threads while the record said threads=100000 and
#     counted 100000 cores into peak_tflops_est;
#   - threads beyond the online CPUs share them: peak_tflops_est counts the
#     online CPUs, not the threads.
. "$top_srcdir/tests/setup"
E=${MATRIX_ENGINE:?}
key() { sed -n "s/^$1=//p" "$2"; }
P="--device cpu --model mnist_cnn --batch 2 --steps 1 --warmup 0"
online=$(getconf _NPROCESSORS_ONLN)

set +e; "$E" $P --threads 100000 --result r >out 2>err; rc=$?; set -e
expect_eq "$rc" 2 "--threads 100000: exit status"
expect_eq "$(cat err)" "matrix-engine: --threads: 100000 is more than the CPU backend runs (1 to 256; this machine has $online online CPUs)" \
	"--threads 100000: message"
[ ! -e r ] || fail "--threads 100000: a result was written"
"$E" $P --threads 256 --result r >out 2>err || fail "--threads 256: $(cat err)"
expect_eq "$(key threads r)" 256 "--threads 256: the record's threads"

# peak per MHz: the same with the online CPUs and with 4 times as many threads
"$E" $P --threads "$online" --result a >out 2>err || fail "--threads $online: $(cat err)"
"$E" $P --threads $((4 * online)) --result b >out 2>err || fail "--threads $((4 * online)): $(cat err)"
[ "$(key cpu_mhz a)" != 0 ] || { echo "no cpu MHz in /proc/cpuinfo: peak not checked"; exit 0; }
pa=$(awk -v p="$(key peak_tflops_est a)" -v m="$(key cpu_mhz a)" 'BEGIN { print p / m }')
pb=$(awk -v p="$(key peak_tflops_est b)" -v m="$(key cpu_mhz b)" 'BEGIN { print p / m }')
awk -v a="$pa" -v b="$pb" 'BEGIN { exit !(b < a * 1.01 && b > a * 0.99) }' ||
	fail "peak_tflops_est per MHz: $pa with $online threads, $pb with $((4 * online)) on $online online CPUs"
exit 0
