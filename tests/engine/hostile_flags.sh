#!/bin/sh
# hostile_flags.sh - matrix-engine given values a user or a recipe may give
# that are legal one by one but not together, or beyond what it runs (issue
# 22's spirit, on the engine; tests/unit/test_flags.c has the parser's side):
#   - --threads above the CPU backend's pool (256) is exit 2 with the range;
#     the pool ran 256 threads while the record said threads=100000 and
#     counted 100000 cores into peak_tflops_est;
#   - threads beyond the online CPUs share them: peak_tflops_est counts the
#     online CPUs, not the threads;
#   - sizes no machine holds (--image-size 2^30, --batch 2^30 on ResNet-50)
#     are status=oom naming the tensor and its shape, exit 1: its element
#     count overflowed int64 (undefined behaviour, UBSan) and the record
#     said "failed to allocate 13835058055282163712 bytes";
#   - --device auto with a GPU present whose CUDA backend does not load runs
#     on the cpu and says why (stderr, device_fallback in the record).
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

# a tensor beyond 2^46 elements: oom with its shape, before anything is allocated
oom() {
	want=$1; shift
	set +e; "$E" --device cpu --threads 1 --steps 1 --warmup 0 "$@" --result r >out 2>err; rc=$?; set -e
	expect_eq "$rc" 1 "$*: exit status"
	expect_eq "$(key status r)" oom "$*: status"
	expect_eq "$(key reason r)" "out of memory: tensor $want elements is more than the 2^46 elements (256 TiB of f32) one tensor may hold" "$*: reason"
}
oom "'input' of 1x3x1073741824x1073741824" --model resnet18 --batch 1 --image-size 1073741824
oom "'input' of 1073741824x3x65536x65536" --model resnet18 --batch 1073741824 --image-size 65536
oom "'conv1' of 268435456x64x112x112" --model resnet50 --batch 268435456
oom "'layers.0.attention.probs' of 1073741824x2x512x512" --model bert_tiny --task train --batch 1073741824 --seq-len 512

# --device auto with a GPU present and no CUDA backend to load: the cpu, said on stderr and in
# the record (it fell back silently). A GPU is faked with /dev/nvidia0 on a tmpfs /dev of a
# private mount namespace (root, unshare), never on this machine's /dev.
if [ ! -e /dev/nvidia0 ] && unshare -m sh -c 'mount -t tmpfs none /dev' 2>/dev/null; then
	set +e
	MATRIX_ENGINE_CUDA=/no/such/module.so unshare -m sh -c 'mount -t tmpfs none /dev && touch /dev/nvidia0 &&
		exec "$0" --device auto --model mnist_cnn --batch 2 --threads 1 --steps 1 --warmup 0 --result r' "$E" >out 2>err
	rc=$?; set -e
	expect_eq "$rc" 0 "--device auto, a GPU, no module: exit status ($(cat err))"
	expect_eq "$(key device r)" cpu "--device auto, a GPU, no module: device"
	expect_grep "^device_fallback=a GPU is present (/dev/nvidia0) but unable to load the CUDA backend: /no/such/module.so" r \
		"--device auto, a GPU, no module: the record"
	expect_grep "^matrix-engine: --device auto: a GPU is present (/dev/nvidia0) but unable to load the CUDA backend: .*: the point runs on the cpu$" \
		err "--device auto, a GPU, no module: stderr"
else
	echo "no private mount namespace here (or a real GPU): --device auto's fallback not checked"
fi

# peak per MHz: the same with the online CPUs and with 4 times as many threads
"$E" $P --threads "$online" --result a >out 2>err || fail "--threads $online: $(cat err)"
"$E" $P --threads $((4 * online)) --result b >out 2>err || fail "--threads $((4 * online)): $(cat err)"
[ "$(key cpu_mhz a)" != 0 ] || { echo "no cpu MHz in /proc/cpuinfo: peak not checked"; exit 0; }
pa=$(awk -v p="$(key peak_tflops_est a)" -v m="$(key cpu_mhz a)" 'BEGIN { print p / m }')
pb=$(awk -v p="$(key peak_tflops_est b)" -v m="$(key cpu_mhz b)" 'BEGIN { print p / m }')
awk -v a="$pa" -v b="$pb" 'BEGIN { exit !(b < a * 1.01 && b > a * 0.99) }' ||
	fail "peak_tflops_est per MHz: $pa with $online threads, $pb with $((4 * online)) on $online online CPUs"
exit 0
