#!/bin/sh
# plan_cache.sh - the persistent plan cache of the CUDA backend on a GPU
# (issue 18, item 3; engine/plancache.c, engine/cuda/plans.cu): each point
# runs twice on a fresh cache directory, then on a damaged cache.
#
#   resnet18 train fp16 NHWC batch 32, cudnn_benchmark on (timed conv search)
#   mnist_cnn train fp32 batch 64, compile max-autotune (conv search and
#                        cuBLASLt autotune of the linears)
#
# For each: the first run finds nothing (plan_cache_hits=0) and stores its
# choices; the second finds every one (hits = the first's stored, nothing
# rejected or stored) and runs the same algorithm for every convolution
# (name, direction, algorithm and math type from the point's log); its
# plan_ms is printed beside the first's (no timing assertion). Then: a
# truncated file is reported corrupt, ignored and rebuilt; algorithms edited
# to one that does not exist (checksum made right, python3) are rejected by
# the checks against the descriptor and searched again; --plan-cache off
# writes nothing and says plan_cache=off.
#
# The graph API's decisions (MATRIX_ENGINE_CONV=graph, resnet18 infer fp16
# NHWC batch 8): the first run puts forwards on the graph API and stores
# their engines; the second takes every decision from the cache (each
# "conv graph" line says so) with the same engine or legacy per
# convolution; engines edited to one that does not exist (checksum made
# right) are rejected (cuDNN makes no plan of them) and decided again.
#
#   sh tests/gpu/plan_cache.sh [OUTDIR]
#
# Last line "plan_cache: N passed, N failed"; exit 0, 1 when a check fails,
# 77 without a GPU. About 1 minute on one H100 (estimated, never run on a
# GPU; the graph API part adds three short inference points). On the CPU
# simulator with PLAN_CACHE_SMALL=1 (tests/cudasim/plan_cache.sh) all 17
# checks pass in 75 s.
set -u
if [ -z "${MATRIX_ENGINE:-}" ]; then
	if [ -n "${top_builddir:-}" ]; then MATRIX_ENGINE=$top_builddir/engine/matrix-engine
	else MATRIX_ENGINE=$(pwd)/engine/matrix-engine; fi
fi
E=$MATRIX_ENGINE
if [ -n "${1:-}" ]; then W=$1; mkdir -p "$W"; else W=$(mktemp -d); trap 'rm -rf "$W"' EXIT; fi
npass=0 nfail=0

. "$(dirname "$0")/probe.sh"
gpu_probe "$W" --plan-cache off

key() { sed -n "s/^$1=//p" "$2" | head -n 1; }
pass() { npass=$((npass + 1)); echo "PASS $*"; }
fail() { nfail=$((nfail + 1)); echo "FAIL $*"; }
check() { # WHAT CONDITION...
	what=$1; shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}

# run NAME DIR FLAGS...: one point with the plan cache in DIR (its own
# variables: the caller's n and d stay)
run() {
	rn=$1 rd=$2; shift 2
	if ! "$E" --device cuda --warmup 1 --steps 3 --plan-cache "$rd" "$@" --result "$W/$rn" \
		>"$W/$rn.log" 2>&1 || [ "$(key status "$W/$rn")" != ok ]; then
		echo "     point $rn failed: $(key status "$W/$rn") $(key reason "$W/$rn"); see $W/$rn.log"
		return 1
	fi
}

# the algorithm of every convolution of a log: "NAME DIR ALGO MATH", sorted
convs() {
	sed -n -E "s/^matrix-engine: cuda: conv '([^']*)' ([a-z_]+) [^:]*: ([A-Z_0-9]+) ([a-z-]+)( \((cached|plan cache)\))?: .*/\1 \2 \3 \4/p" "$1" | sort
}

# same_convs A B: the two lists of convolutions are equal and not empty
same_convs() { [ -s "$1" ] && cmp -s "$1" "$2"; }

# tamper FILE: every conv entry's algorithm 99, the checksum made right again
tamper() {
	python3 - "$1" <<'EOF'
import re, sys
p = sys.argv[1]
lines = open(p, "rb").read().split(b"\n")[:-2]  # without the end line
lines = [re.sub(rb"^(conv1 [^\t]*\talgo=)\d+", rb"\g<1>99", l) for l in lines]
body = b"\n".join(lines) + b"\n"
h = 1469598103934665603
for c in body:
    h = ((h ^ c) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
open(p, "wb").write(body + b"end\t%d\t%016x\n" % (len(lines) - 2, h))
EOF
}

# PLAN_CACHE_SMALL=1 (tests/cudasim/plan_cache.sh, on the CPU simulator):
# resnet_tiny and small batches instead, the same checks
if [ -n "${PLAN_CACHE_SMALL:-}" ]; then
	P1="resnet_tiny:--model resnet_tiny --task train --batch 4 --precision fp16 --channels-last on --cudnn-benchmark on"
	P2="mnist:--model mnist_cnn --task train --batch 8 --compile max-autotune"
	gf="--model resnet_tiny --task infer --eval on --inference-mode on --batch 2 --precision fp16 --channels-last on"
else
	P1="resnet18:--model resnet18 --task train --batch 32 --precision fp16 --channels-last on --cudnn-benchmark on"
	P2="mnist:--model mnist_cnn --task train --batch 64 --compile max-autotune"
	gf="--model resnet18 --task infer --eval on --inference-mode on --batch 8 --precision fp16 --channels-last on"
fi
for pt in "$P1" "$P2"; do
	n=${pt%%:*} flags=${pt#*:}
	d=$W/cache.$n
	rm -rf "$d"
	# shellcheck disable=SC2086
	if ! run "$n.1" "$d" $flags || ! run "$n.2" "$d" $flags; then
		fail "$n: a point did not run"
		continue
	fi
	s1=$(key plan_cache_stored "$W/$n.1")
	check "$n first run: plan_cache=on, load=new, 0 hits, $s1 stored" \
		[ "$(key plan_cache "$W/$n.1")/$(key plan_cache_load "$W/$n.1")/$(key plan_cache_hits "$W/$n.1")" = on/new/0 -a "${s1:-0}" -gt 0 ]
	h2=$(key plan_cache_hits "$W/$n.2")
	check "$n second run: $h2 hits of $s1 stored, $(key plan_cache_misses "$W/$n.2") misses, $(key plan_cache_rejected "$W/$n.2") rejected" \
		[ "$h2" = "$s1" -a "$(key plan_cache_rejected "$W/$n.2")" = 0 -a "$(key plan_cache_stored "$W/$n.2")" = 0 ]
	convs "$W/$n.1.log" >"$W/$n.1.convs"
	convs "$W/$n.2.log" >"$W/$n.2.convs"
	# (none logged would make this check and the next hold for nothing)
	check "$n: the same algorithm for each of $(wc -l <"$W/$n.1.convs") convolutions (more than none)" \
		same_convs "$W/$n.1.convs" "$W/$n.2.convs"
	fresh=$(grep "cuda: conv '" "$W/$n.2.log" | grep -vc -e '(cached)' -e '(plan cache)')
	check "$n second run: no convolution searched ($fresh were)" [ "$fresh" = 0 ]
	echo "     $n plan_ms: $(key plan_ms "$W/$n.1") ms searched, $(key plan_ms "$W/$n.2") ms from the cache; startup_s $(key startup_s "$W/$n.1") -> $(key startup_s "$W/$n.2")"

	f=$(ls "$d"/plans-*.txt 2>/dev/null | head -n 1)
	if [ -z "$f" ]; then
		fail "$n: no plans-*.txt in $d after two runs: the damaged-cache checks cannot run"
		continue
	fi
	# a torn file: corrupt, ignored, rebuilt
	head -c $(($(wc -c <"$f") / 2)) "$f" >"$f.half" && mv "$f.half" "$f"
	# shellcheck disable=SC2086
	if run "$n.3" "$d" $flags; then
		check "$n truncated cache: load=corrupt, said on stderr, rebuilt ($(key plan_cache_stored "$W/$n.3") stored)" \
			[ "$(key plan_cache_load "$W/$n.3")" = corrupt -a "$(key plan_cache_stored "$W/$n.3")" = "$s1" ]
		grep -q "is corrupt" "$W/$n.3.log" || fail "$n: the corrupt cache was not said in the log"
	else
		fail "$n: the point on a truncated cache did not run"
	fi
	# algorithms that do not exist: rejected by the checks, searched again
	if command -v python3 >/dev/null 2>&1 && tamper "$f"; then
		# shellcheck disable=SC2086
		if run "$n.4" "$d" $flags; then
			nc=$(grep -c "^conv1 " "$f" 2>/dev/null)
			check "$n tampered cache: $(key plan_cache_rejected "$W/$n.4") of $nc convolution choices rejected and searched again" \
				[ "$(key plan_cache_load "$W/$n.4")" = loaded -a "$(key plan_cache_rejected "$W/$n.4")" -gt 0 ]
		else
			fail "$n: the point on a tampered cache did not run (a cached choice was trusted?)"
		fi
	else
		echo "     $n: tampered cache not checked (no python3)"
	fi
done

# off: nothing written (not even in the default place), plan_cache=off
# the graph API's decision of every forward of a log: "NAME ID:KNOBS" or "NAME legacy", sorted
gconvs() {
	sed -n -E "s/^matrix-engine: cuda: conv graph '([^']*)' [^:]*: (cuDNN graph API, engine ([^ ]+)|legacy).*/\1 \3/p" "$1" |
		sed -e 's/,$//' -e 's/ $/ legacy/' | sort
}

# tamper_graph FILE: every stored graph engine 999999 (no engine has that index), the checksum made right again
tamper_graph() {
	python3 - "$1" <<'EOF'
import re, sys
p = sys.argv[1]
lines = open(p, "rb").read().split(b"\n")[:-2]  # without the end line
lines = [re.sub(rb"^(convg1 [^\t]*\tgraph eng=)\d+", rb"\g<1>999999", l) for l in lines]
body = b"\n".join(lines) + b"\n"
h = 1469598103934665603
for c in body:
    h = ((h ^ c) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
open(p, "wb").write(body + b"end\t%d\t%016x\n" % (len(lines) - 2, h))
EOF
}

MATRIX_ENGINE_CONV=graph
export MATRIX_ENGINE_CONV
d=$W/cache.graph
# shellcheck disable=SC2086
if run graph.1 "$d" $gf && run graph.2 "$d" $gf; then
	gconvs "$W/graph.1.log" >"$W/graph.1.g"
	gconvs "$W/graph.2.log" >"$W/graph.2.g"
	g1=$(key conv_graph_ops "$W/graph.1") s1=$(key plan_cache_stored "$W/graph.1")
	check "graph API first run: ${g1:-?} forwards on the graph API (more than none), ${s1:-?} decisions stored" \
		[ "${g1:-0}" -gt 0 -a "${s1:-0}" -gt 0 ]
	notc=$(grep "cuda: conv graph '" "$W/graph.2.log" | grep -vc '(plan cache)')
	nall=$(grep -c "cuda: conv graph '" "$W/graph.2.log")
	check "graph API second run: every one of $nall decisions from the plan cache ($notc not), 0 rejected" \
		[ "$notc" = 0 -a "$nall" -gt 0 -a "$(key plan_cache_rejected "$W/graph.2")" = 0 ]
	check "graph API second run: the same engine or legacy for each of $(wc -l <"$W/graph.1.g") forwards" \
		same_convs "$W/graph.1.g" "$W/graph.2.g"
	f=$(ls "$d"/plans-*.txt 2>/dev/null | head -n 1)
	ng=$(grep -c "^convg1 .*	graph eng=" "$f" 2>/dev/null)
	if [ -n "$f" ] && [ "${ng:-0}" -gt 0 ] && command -v python3 >/dev/null 2>&1 && tamper_graph "$f"; then
		# shellcheck disable=SC2086
		if run graph.3 "$d" $gf; then
			r3=$(key plan_cache_rejected "$W/graph.3") g3=$(key conv_graph_ops "$W/graph.3")
			check "graph API tampered cache: ${r3:-?} of $ng stored engines rejected, ${g3:-?} forwards decided again on the graph API" \
				[ "${r3:-0}" -ge "$ng" -a "${g3:-0}" -gt 0 ]
		else
			fail "graph API: the point on a tampered cache did not run (a stored engine was trusted?)"
		fi
	else
		fail "graph API: no stored graph engine to tamper with in '${f:-no file}' (${ng:-0} entries)"
	fi
else
	fail "graph API: a point did not run"
fi
unset MATRIX_ENGINE_CONV

XDG_CACHE_HOME=$W/xdg
export XDG_CACHE_HOME
unset MATRIX_PLAN_CACHE
if run off.1 off --model mnist_cnn --task train --batch 64 --cudnn-benchmark on; then
	check "--plan-cache off: plan_cache=$(key plan_cache "$W/off.1"), nothing written" \
		[ "$(key plan_cache "$W/off.1")" = off -a ! -e "$W/xdg/matrix" ]
else
	fail "--plan-cache off: the point did not run"
fi

echo "plan_cache: $npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
