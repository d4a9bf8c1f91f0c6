#!/bin/sh
# session.sh - the GPU checks and benchmarks of tests/gpu in parts that each
# fit one call of a lent GPU machine (10 minutes a command; 15 minutes of
# device time a session now, start-up included; engine/NOTES.md "When a GPU
# is lent: the runbook"), ordered by value: correctness first, the
# benchmarks next, the rest last. Part `first` is the one call a 15-minute
# session can afford: the checks of the open correctness evidence (issue 11:
# the ops, the fp32/tf32 training gradients, BERT on CUDA) at once in
# lanes, then the knobs of that evidence (cudnn_benchmark, memory) alone.
# Part `check` is `make check-gpu`: every check at once in lanes, the
# speed comparisons alone after them (for a machine held long enough).
#
#   sh tests/gpu/session.sh --list            the parts in order, with their estimates
#   sh tests/gpu/session.sh --coverage        model_check.sh's configurations that no lane runs
#   sh tests/gpu/session.sh [--stand-in] PART...
#   sh tests/gpu/session.sh --record DIR      splice DIR/bench_convnets.md and DIR/bench_bert.md
#                                             (a bench part's tables) into engine/cuda/PERF.md
#                                             (SESSION_PERF_MD names another file)
#
# On the lent machine, with the bundle carried (carry [".gpu"]; the bundle is
# built by /work/shared/tools/gpu-bundle.sh):
#   bash .gpu/run.sh sh tests/gpu/session.sh ops
#
# A part runs its steps (each one check script, with its own time limit),
# some at once in lanes where none measures time, and ends within
# SESSION_PART_S seconds (default 560: 9 min 20 s). A step's limit is its
# own cap and what is left of the part less SESSION_RESERVE_S (default 25)
# for packing up (and at most SESSION_STEP_S, where set: a quick try); a
# step cut short is reported with what it had counted, and
# a step that fails or is cut short stops nothing that follows. Per part,
# under $OUT (else tests/gpu/logs/session under the build tree):
#   PART.log   the preflight, every step's whole output, the summary
#   PART.tgz   the steps' work directories: result files and logs, without
#              dumps (*.mxw) and plan caches
#   bench_convnets.md / bench_bert.md   the bench parts' tables (--record)
# (at most 3 files a part: the device returns 8 files a call). Last, on
# standard output, the summary: per step its status (ok, FAIL, SKIP,
# TIMEOUT, NOT RUN), checks passed / failed / skipped, seconds, and the
# script's own last line; the failures' first lines; any table rows.
#
# --stand-in: the CPU stands in for the GPU (tests/gpu/standin.sh: models,
# batches and timings shrunk, every precision fp32), ops_check runs its
# --self-test, runtimes.sh --device cpu, the benchmarks with small budgets:
# the plumbing of a part runs on a machine without a GPU (most CUDA-only
# checks fail under it, as they should). Its files say STAND-IN, and its
# tables are bench_*.standin.md, which --record does not read.
#
# MATRIX_ENGINE (default $top_builddir/engine/matrix-engine), top_srcdir,
# top_builddir, PYTHON_TORCH (default python3) as for the other GPU checks;
# .gpu/run.sh sets them. DUMP_CMP (ddp_check.sh) defaults to
# tests/engine/dump_cmp, compiled with cc into the work directory from its
# one source file where the build lacks it (the bundle does). Exit 0 when every step passed or
# skipped, 1 when one failed, was cut short or not run, 2 on a usage error.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
if [ -z "${top_builddir:-}" ]; then
	if [ -x engine/matrix-engine ]; then top_builddir=$(pwd); else top_builddir=$top_srcdir; fi
fi
MATRIX_ENGINE=${MATRIX_ENGINE:-$top_builddir/engine/matrix-engine}
PYTHON_TORCH=${PYTHON_TORCH:-python3}
export top_srcdir top_builddir MATRIX_ENGINE PYTHON_TORCH
PART_S=${SESSION_PART_S:-560}
RESERVE_S=${SESSION_RESERVE_S:-25}
PARTS="first ops bert bench-convnets bench-bert runtimes knobs pytorch-knobs"
# check: `make check-gpu`'s part (every check at once in lanes, the knobs
# alone after them), for a machine held longer than a device call: not in
# PARTS, not cut at SESSION_PART_S's default (make check-gpu gives it 1800 s)

# part_info NAME: "MINUTES|what runs" (the estimates: engine/NOTES.md, the runbook)
part_info() {
	case $1 in
	first) echo "8|3 lanes: ops_check -q (every op, 16 configurations), then its full-size cases | model_check mnist_cnn resnet_tiny | model_check bert_tiny, each cut at 5.5 min; then knob_sanity.sh KNOB_QUICK=1 alone (cudnn_benchmark ResNet-50 fp16, inference_mode / eval memory, ~18 points)" ;;
	ops) echo "7|4 lanes: ops_check -q (every op, 16 configurations), plan_cache.sh, then ops_check's full-size cases | model_check mnist_cnn resnet_tiny | model_check resnet18 resnet50 conv_graph | ddp_check.sh (1 GPU, ranks by the local launcher; only its mpirun comparison needs MPI), then data_upload.sh" ;;
	bert) echo "7|5 lanes: bert_hf.sh (against transformers' BertForMaskedLM, ~10 s), then model_check bert_tiny | bert_tiny_s512 | bert_base | bert_base_s128 | bert_accept" ;;
	bench-convnets) echo "5.5|bench_convnets.sh (issue 18's rows: ResNet-50 b256 infer / train, b1 latency, MNIST, start-up), PyTorch without max-autotune" ;;
	bench-bert) echo "6|bench_bert.sh (issue 16's rows: BERT-base / -large infer / train), ours reduce-overhead, PyTorch eager, then torch.compile within a 330 s budget" ;;
	runtimes) echo "6|runtimes.sh (the PyTorch engine's runtimes: 24 points, inductor's compiles most of it)" ;;
	knobs) echo "8|knob_sanity.sh (each knob off against on, 63 points), then memory_vs_pytorch.sh (12 points)" ;;
	check) echo "11|make check-gpu: 11 lanes at once: ops_check -q then its full-size cases | model_check mnist_cnn | resnet_tiny | resnet18 resnet50 conv_graph | bert_tiny, then bert_hf.sh | bert_tiny_s512 | bert_base | bert_base_s128 | bert_accept | ddp_check.sh, data_upload.sh, plan_cache.sh | memory_vs_pytorch.sh, knob_sanity.sh's memory, layout, compile and env sections; then its speed sections alone (cudnn_benchmark, precision)" ;;
	pytorch-knobs) echo "9|pytorch_knobs.sh (the PyTorch engine's knobs, 5-10 min: cut short at the part's end)" ;;
	*) return 1 ;;
	esac
}

usage() {
	echo "usage: sh tests/gpu/session.sh --list | --coverage | [--stand-in] PART... | --record DIR"
	echo "parts, in order: $PARTS"
}

list() {
	printf '%-3s %-15s %6s  %s\n' "#" part "min" "what runs (one part per device call)"
	i=0 total=0
	for p in $PARTS; do
		i=$((i + 1))
		info=$(part_info "$p")
		printf '%-3s %-15s %6s  %s\n' "$i" "$p" "${info%%|*}" "${info#*|}"
		total=$(awk -v a="$total" -v b="${info%%|*}" 'BEGIN { print a + b }')
	done
	echo "total about $total min of device time; each part ends within $PART_S s (SESSION_PART_S)."
	echo "A session has 15 min of device time (it was 30): the first call adds 1-2 min to start the"
	echo "machine, each call a few seconds to carry the tree; a machine idle for 30 s is given back."
	echo "With 15 min: part 'first' (its lanes repeat parts of ops and bert), then what time is left."
}

# record DIR: the bench tables that came back, into engine/cuda/PERF.md
record() {
	n=0 perf=${SESSION_PERF_MD:-$top_srcdir/engine/cuda/PERF.md}
	for b in bench_convnets bench_bert; do
		f=$1/$b.md
		[ -f "$f" ] || continue
		if ! grep -q "^<!-- $b:begin -->" "$perf" || ! grep -q "^<!-- $b:end -->" "$perf"; then
			echo "session.sh --record: $perf has no <!-- $b:begin --> / end markers: nothing written" >&2
			return 1
		fi
		"$PYTHON_TORCH" -c 'import sys; sys.dont_write_bytecode = True; sys.path.insert(0, sys.argv[1])
import benchlib
b = sys.argv[3]
benchlib.write_marked(sys.argv[4], open(sys.argv[2]).read(), "<!-- %s:begin -->" % b, "<!-- %s:end -->" % b)' \
			"$here" "$f" "$b" "$perf" || return 1
		echo "recorded $f in $perf"
		n=$((n + 1))
	done
	[ $n -gt 0 ] || { echo "session.sh --record: no bench_convnets.md or bench_bert.md in '$1'" >&2; return 1; }
}

stamp() { date -u +%H:%M:%S; }
say() { echo "$*" | tee -a "$log"; }

# step NAME CAP CMD...: one check, its output in $pw/NAME.out, at most CAP
# seconds and no later than the part's end less RESERVE_S; its summary line
# in $pw/NAME.sum. Steps of a lane run one after the other, lanes at once.
step() {
	name=$1 cap=$2
	shift 2
	t=$(date +%s)
	lim=$((part_end - RESERVE_S - t))
	[ "$cap" -lt "$lim" ] && lim=$cap
	[ -n "${SESSION_STEP_S:-}" ] && [ "$SESSION_STEP_S" -lt "$lim" ] && lim=$SESSION_STEP_S
	if [ "$lim" -lt 5 ]; then
		echo "$name|NOT RUN|0|0|0|0|no time left in the part" >"$pw/$name.sum"
		echo "[$(stamp)] $name: not run, no time left in the part"
		return 0
	fi
	echo "[$(stamp)] $name: started, limit ${lim}s"
	echo "$*" >"$pw/$name.cmd"
	src=0
	timeout -k 10 "$lim" "$@" >"$pw/$name.out" 2>&1 </dev/null || src=$?
	count "$name" $src $(($(date +%s) - t)) "$lim"
	echo "[$(stamp)] $name: $(cut -d'|' -f2 "$pw/$name.sum") after $(($(date +%s) - t))s"
}

# count NAME RC SECS LIMIT: $pw/NAME.sum from the step's output
count() {
	f=$pw/$1.out
	np=$(grep -cE '^(PASS|CHECK OK|ACCEPT OK|ok +- )' "$f")
	nf=$(grep -cE '^(FAIL|CHECK FAIL|ACCEPT FAIL)' "$f")
	ns=$(grep -cE '^SKIP' "$f")
	if grep -qE '^ops_check [^ ]+: [0-9]+ passed, [0-9]+ failed' "$f"; then # ops_check -q: per configuration
		np=$(sed -nE 's/^ops_check [^ ]+: ([0-9]+) passed, ([0-9]+) failed.*/\1/p' "$f" | awk '{ s += $1 } END { print s + 0 }')
		nf=$(sed -nE 's/^ops_check [^ ]+: ([0-9]+) passed, ([0-9]+) failed.*/\2/p' "$f" | awk '{ s += $1 } END { print s + 0 }')
		nf=$((nf + $(grep -cE '^FAIL [^ ]+: the check (died|exited)' "$f")))
	fi
	last=$(grep -v '^[[:space:]]*$' "$f" | tail -n 1 | cut -c1-150)
	case $2 in
	0) st=ok ;;
	77) st=SKIP last=$(grep -m1 '^SKIP' "$f" | cut -c1-150) ;;
	124 | 137) st=TIMEOUT last="cut short at its ${4}s limit; last section: $(grep '^== ' "$f" | tail -n 1 | cut -c1-60); last line: $last" ;;
	*) st="FAIL($2)" ;;
	esac
	echo "$1|$st|$np|$nf|$ns|$3|$last" >"$pw/$1.sum"
}

# preflight: what the machine has, into the log (a few seconds)
preflight() {
	say "== part $part (estimate $(part_info "$part" | cut -d'|' -f1) min) at $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(uname -n)${standin:+ -- STAND-IN: the CPU stands in for the GPU, no figure is a GPU figure}"
	{
		echo "tree: $top_srcdir ($(git -C "$top_srcdir" describe --always --dirty 2>/dev/null || echo 'no git: a bundle'))"
		if command -v nvidia-smi >/dev/null 2>&1; then
			nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
		else echo "gpu: no nvidia-smi"; fi
		timeout 120 "$PYTHON_TORCH" -c '
import importlib
import torch
print("torch %s, CUDA %s, cuDNN %s, %s" % (torch.__version__, torch.version.cuda, torch.backends.cudnn.version(),
      torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no CUDA device"))
for m in ("torchvision", "transformers", "onnxruntime", "onnx"):
    try:
        x = importlib.import_module(m)
        extra = " " + ",".join(x.get_available_providers()) if m == "onnxruntime" else ""
        print("%s %s%s" % (m, getattr(x, "__version__", "?"), extra))
    except Exception as e:
        print("%s: none (%s)" % (m, str(e).splitlines()[0] if str(e) else type(e).__name__))' 2>&1 | sed 's/^/python: /'
		for b in engine/matrix-engine engine/matrix-engine-cuda.so engine/matrix-engine-mpi.so tests/gpu/ops_check; do
			[ -e "$top_builddir/$b" ] || { echo "build: no $b"; continue; }
			miss=$(ldd "$top_builddir/$b" 2>/dev/null | grep 'not found' | awk '{ print $1 }' | tr '\n' ' ')
			echo "build: $b${miss:+: MISSING $miss}"
		done
		echo "mpirun: $(command -v mpirun || echo 'none (ddp_check.sh skips only its mpirun comparison: its ranks use the local launcher)')"
		echo "dump_cmp: $DUMP_CMP"
		MATRIX_PLAN_CACHE="$pw/plan-cache.probe" "$MATRIX_ENGINE" --device cuda --model mnist_cnn --batch 2 \
			--steps 1 --warmup 0 --result "$pw/probe.result" >"$pw/probe.log" 2>&1
		echo "engine probe (--device cuda, exit $?): $(grep -E '^(status|reason|gpu|driver|cuda_runtime|cudnn|cublaslt|device)=' "$pw/probe.result" 2>/dev/null | tr '\n' ' ')"
		[ -z "$LIBS_NOTE" ] || echo "libraries:$LIBS_NOTE"
	} >>"$log" 2>&1
	grep -E '^(gpu|python: torch|build: .*MISSING|engine probe|libraries)' "$log" | cut -c1-200
}

# probe_gate: 0 unless a GPU is here (nvidia-smi lists one) and the engine's
# CUDA probe did not end ok: then every CUDA check would skip as if there
# were no GPU (their SKIP means "no GPU") and the part would pass having
# measured nothing; it fails at once instead, saying why.
probe_gate() {
	[ -z "$standin" ] || return 0
	command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU ' || return 0
	[ "$(sed -n 's/^status=//p' "$pw/probe.result" 2>/dev/null)" != ok ] || return 0
	say "FAIL: a GPU is here but the engine's CUDA probe did not run ok ($(sed -n 's/^reason=//p' "$pw/probe.result" 2>/dev/null | cut -c1-150)); the part's steps are not run. The probe's log:"
	tail -n 8 "$pw/probe.log" 2>/dev/null | tee -a "$log"
	echo "probe|FAIL(probe)|0|1|0|0|the CUDA probe failed on a machine with a GPU" >"$pw/probe.sum"
	return 1
}

# ---- the parts: each a function of steps; lanes are subshells run at once
mc() { # LANE CAP CONFIGURATIONS: one model_check.sh lane in $pw/LANE (dumps removed after)
	step "$1" "$2" env MODEL_CHECK_ONLY="$3" MATRIX_PLAN_CACHE="$pw/plan-cache.$1" sh "$here/model_check.sh" "$pw/$1"
	find "$pw/$1" -name '*.mxw' -delete 2>/dev/null
}

# ops_check_step CAP small|full: ops_check -q without the models' full-size
# cases (step ops_check; its --self-test standing in), or those only (step
# ops_full: ResNet-18/50's convolutions at 224 x 224, BERT-base/large's ops;
# never run on a GPU, their time unknown: after the others, so that a cut
# loses them only), or SKIP where it is not built
ops_check_step() {
	oc=$top_builddir/tests/gpu/ops_check
	name=ops_check
	[ "$2" = full ] && name=ops_full
	if [ ! -x "$oc" ]; then
		echo "$name|SKIP|0|0|1|0|not built: $oc (make tests/gpu/ops_check)" >"$pw/$name.sum"
	elif [ -n "$standin" ] && [ "$2" = full ]; then
		echo "$name|SKIP|0|0|1|0|the stand-in's self-test has no full-size cases" >"$pw/$name.sum"
	elif [ -n "$standin" ]; then step "$name" "$1" "$oc" --self-test
	elif [ "$2" = full ]; then step "$name" "$1" "$oc" -q --op full-size
	else step "$name" "$1" "$oc" -q --no-full-size; fi
}

# a 15-minute session's one call: the lanes cut at 330 s so that the knobs,
# which measure, run alone in what is left
part_first() {
	t0=$(date +%s)
	(
		ops_check_step 330 small
		ops_check_step $((t0 + 330 - $(date +%s))) full
	) &
	mc mc_small 330 "mnist_cnn resnet_tiny" &
	mc mc_bert_tiny 330 "bert_tiny" &
	wait
	step knob_quick 200 env KNOB_QUICK=1 sh "$here/knob_sanity.sh" "$pw/knob_quick"
}

part_ops() {
	(
		ops_check_step 240 small
		step plan_cache 200 env MATRIX_PLAN_CACHE="$pw/plan-cache.plan" sh "$here/plan_cache.sh" "$pw/plan_cache"
		ops_check_step 300 full
	) &
	mc mc_small 540 "mnist_cnn resnet_tiny" &
	mc mc_resnet 540 "resnet18 resnet50 conv_graph" &
	(
		step ddp 300 sh "$here/ddp_check.sh" "$pw/ddp"
		step data_upload 120 sh "$here/data_upload.sh" "$pw/data_upload"
	) &
	wait
}

# the configurations and parts of model_check.sh (MODEL_CHECK_ONLY's names)
mc_configs() {
	awk '/^for m in .*; do$/ { l = $0; getline; if ($0 ~ /selected \|\|/) { sub(/^for m in /, "", l); sub(/; do$/, "", l); print l } }
		/selected_part [a-z_0-9]+/ && !/^selected_part\(\)/ { match($0, /selected_part [a-z_0-9]+/); print substr($0, RSTART + 14, RLENGTH - 14) }' \
		"$here/model_check.sh" | tr ' ' '\n' | grep . | sort -u
}
# uncovered [PART]: those in no lane of the session's parts (the bert part
# gives them one of their own), or in no lane of part PART alone
uncovered() {
	{
		if [ -n "${1:-}" ]; then sed -n "/^part_$1() {\$/,/^}\$/p" "$here/session.sh"
		else sed '/^part_check() {$/,/^}$/d' "$here/session.sh"; fi |
			sed -n 's/^[[:space:]]*mc mc_[a-z0-9_]* [0-9]* "\([a-z0-9_ ]*\)".*/\1/p' | tr ' ' '\n' | sed 's/^/L /'
		mc_configs | sed 's/^/M /'
	} | awk '$1 == "L" { l[$2] = 1; next } !($2 in l) { print $2 }'
}

part_bert() {
	(
		step bert_hf 90 sh "$here/bert_hf.sh"
		mc mc_bert_tiny 540 "bert_tiny"
	) &
	mc mc_bert_tiny_s512 540 "bert_tiny_s512" &
	mc mc_bert_base 540 "bert_base" &
	mc mc_bert_base_s128 540 "bert_base_s128" &
	mc mc_bert_accept 540 "bert_accept" &
	more=$(uncovered | tr '\n' ' ')
	if [ -n "$more" ]; then
		say "model_check.sh configurations in no lane of session.sh (no estimate made): ${more}run in a lane of their own"
		mc mc_more 540 "$more" &
	fi
	wait
}

# the benchmarks measure time: one step at a time, nothing beside them
part_bench_convnets() {
	if [ -n "$standin" ]; then bb=60 bc=20; else bb=420 bc=180; fi
	step bench_convnets 540 env BENCH_OUTDIR="$pw/bench_convnets" BENCH_BUDGET_S=$bb BENCH_COMPILE_S=$bc \
		BENCH_TORCH_MAX_AUTOTUNE=0 sh "$here/bench_convnets.sh" "$O/bench_convnets$tab.md"
}

# SESSION_BERT_BUDGET_S (default 330) bounds the points; 540 runs every
# torch.compile point too (a part of its own in a later session)
part_bench_bert() {
	if [ -n "$standin" ]; then bb=60 bc=20; else bb=${SESSION_BERT_BUDGET_S:-330} bc=150; fi
	step bench_bert 540 env BENCH_OUTDIR="$pw/bench_bert" BENCH_BUDGET_S="$bb" BENCH_COMPILE_S=$bc \
		BENCH_MAX_AUTOTUNE=0 sh "$here/bench_bert.sh" "$O/bench_bert$tab.md"
}

part_runtimes() {
	if [ -n "$standin" ]; then step runtimes 300 sh "$here/runtimes.sh" --device cpu --models mnist_cnn "$pw/runtimes"
	else step runtimes 540 sh "$here/runtimes.sh" "$pw/runtimes"; fi
}

# both measure: one after the other
part_knobs() {
	step knob_sanity 390 sh "$here/knob_sanity.sh" "$pw/knob_sanity"
	step memory_vs_pytorch 240 sh "$here/memory_vs_pytorch.sh" "$pw/memory"
}
# make check-gpu (issue 11 item 5: under 10 minutes on one H100): what
# measures no time runs at once, one lane a process of its own on the GPU
# (16 CPU cores, 80+ GB: the lanes' peaks add up to about 25 GB), each step
# with a plan cache of its own; memory_vs_pytorch.sh and knob_sanity.sh's
# sections that judge no speed too (peaks are per process; layouts and
# compile modes are read from logs). Its sections that compare speeds
# (cudnn_benchmark, precision: 70 points) run alone after the lanes (step
# knob_speed), with a fresh plan cache (no choice timed while the lanes ran).
# runtimes.sh's table is of speeds: not here (make check-gpu-runtimes, alone).
part_check() {
	pc() { echo "MATRIX_PLAN_CACHE=$pw/plan-cache.$1"; }
	(
		ops_check_step 900 small
		ops_check_step 900 full
	) &
	mc mc_mnist 900 "mnist_cnn" &
	mc mc_resnet_tiny 900 "resnet_tiny" &
	mc mc_resnet 900 "resnet18 resnet50 conv_graph" &
	(
		mc mc_bert_tiny 900 "bert_tiny"
		step bert_hf 300 env "$(pc bert_hf)" sh "$here/bert_hf.sh"
	) &
	mc mc_bert_tiny_s512 900 "bert_tiny_s512" &
	mc mc_bert_base 900 "bert_base" &
	mc mc_bert_base_s128 900 "bert_base_s128" &
	mc mc_bert_accept 900 "bert_accept" &
	(
		step ddp 600 env "$(pc ddp)" sh "$here/ddp_check.sh" "$pw/ddp"
		step data_upload 300 env "$(pc data_upload)" sh "$here/data_upload.sh" "$pw/data_upload"
		step plan_cache 300 env "$(pc plan)" sh "$here/plan_cache.sh" "$pw/plan_cache"
	) &
	(
		step memory_vs_pytorch 600 env "$(pc memory)" sh "$here/memory_vs_pytorch.sh" "$pw/memory"
		step knob_static 300 env "$(pc knob_static)" KNOB_SECTIONS="memory channels_last compile env" \
			sh "$here/knob_sanity.sh" "$pw/knob_static"
	) &
	more=$(uncovered check | tr '\n' ' ')
	if [ -n "$more" ]; then
		say "model_check.sh configurations in no lane of part check: ${more}run in a lane of their own"
		mc mc_more 900 "$more" &
	fi
	wait
	step knob_speed 600 env "$(pc knob_speed)" KNOB_SECTIONS="benchmark precision" \
		sh "$here/knob_sanity.sh" "$pw/knob_speed"
}

part_pytorch_knobs() { step pytorch_knobs 540 sh "$here/pytorch_knobs.sh" "$pw/pytorch_knobs"; }

# summary: the steps' lines, their failures, any table rows; to stdout and the log
summary() {
	{
		echo "== summary of part $part${standin:+ (STAND-IN: CPU, not a GPU run)}: $(($(date +%s) - part_t0))s of $PART_S"
		printf '%-20s %-9s %6s %6s %5s %5s  %s\n' step status pass fail skip secs "last line"
		for s in "$pw"/*.sum; do
			[ -f "$s" ] || continue
			IFS='|' read -r n st p x k secs l <"$s"
			printf '%-20s %-9s %6s %6s %5s %5s  %s\n' "$n" "$st" "$p" "$x" "$k" "$secs" "$l"
		done
		for o in "$pw"/*.out; do # each step's first failures
			nf=$(grep -cE '^(FAIL|CHECK FAIL|ACCEPT FAIL)' "$o" 2>/dev/null) || continue
			echo "failures of $(basename "$o" .out): $nf, the first $((nf < 6 ? nf : 6)):"
			grep -m 6 -E '^(FAIL|CHECK FAIL|ACCEPT FAIL)' "$o" | cut -c1-180 | sed 's/^/  /'
		done
		rows=$(cat "$pw"/*.out 2>/dev/null | grep '^| ' | grep -v '^| case ')
		[ -z "$rows" ] || { echo "table rows:"; echo "$rows"; }
	} | tee -a "$log"
}

# run_part NAME: preflight, the steps, the log, the archive, the summary
run_part() {
	part=$1
	pw=$W/$part log=$O/$part.log
	mkdir -p "$pw"
	: >"$log"
	part_t0=$(date +%s) part_end=$(($(date +%s) + PART_S))
	preflight
	probe_gate && "part_$(echo "$part" | tr - _)"
	for s in "$pw"/*.sum; do
		n=$(basename "$s" .sum)
		{
			echo "==== step $n: $(cat "$pw/$n.cmd" 2>/dev/null)"
			cat "$pw/$n.out" 2>/dev/null
			echo "==== step $n: $(cut -d'|' -f2,6 "$s" | tr '|' ' ')s"
		} >>"$log"
	done
	summary
	tar -C "$W" -czf "$O/$part.tgz" --exclude='*.mxw' --exclude='plan-cache*' --exclude='cache.*' "$part" 2>>"$log"
	if [ "$(wc -c <"$O/$part.tgz")" -gt 15000000 ]; then # the device returns files of up to 16 MiB
		(cd "$W" && find "$part" -type f \( -name '*.out' -o -name '*.sum' -o -name '*.result' -o -name '*.tsv' -o -name 'probe*' \) |
			tar -czf "$O/$part.tgz" -T -)
		say "$part.tgz: over 15 MB with every log; only the steps' outputs and result files kept"
	fi
	case $part in bench-*) bf=$(echo "$part" | tr - _)$tab.md ;; *) bf= ;; esac
	echo "files: $(cd "$O" && ls "$part".* $bf 2>/dev/null | tr '\n' ' ')(in $O)"
	[ "$part" != check ] || check_counts
	! grep -qE '\|(FAIL|TIMEOUT|NOT RUN)' "$pw"/*.sum 2>/dev/null
}

# check_counts: make check-gpu's last lines, a check being a step: ok is
# passed, SKIP skipped, anything else (FAIL, TIMEOUT, NOT RUN) failed
check_counts() {
	cp=0 cf=0 cs=0
	for s in "$pw"/*.sum; do
		[ -f "$s" ] || continue
		case $(cut -d'|' -f2 "$s") in
		ok) cp=$((cp + 1)) ;;
		SKIP) cs=$((cs + 1)) ;;
		*) cf=$((cf + 1)) ;;
		esac
	done
	{
		[ $cp -gt 0 ] || [ $cf -gt 0 ] || echo "SKIP: no GPU"
		echo "check-gpu: $cs skipped"
		echo "$cp passed, $cf failed"
	} | tee -a "$log"
}

standin=
case ${1:-} in
--list) list; exit 0 ;;
--coverage) # model_check.sh's configurations in no lane: none, or session.sh needs a lane (and an estimate)
	more=$(uncovered | tr '\n' ' ')
	[ -z "$more" ] || { echo "model_check.sh configurations in no lane of session.sh: $more"; exit 1; }
	more=$(uncovered check | tr '\n' ' ')
	[ -z "$more" ] || { echo "model_check.sh configurations in no lane of part check (make check-gpu): $more"; exit 1; }
	echo "every configuration of model_check.sh is in a lane: $(mc_configs | tr '\n' ' ')"; exit 0 ;;
--record) [ $# -eq 2 ] || { usage >&2; exit 2; }; record "$2"; exit $? ;;
--stand-in) standin=1; shift ;;
-h | --help) usage; exit 0 ;;
esac
[ $# -gt 0 ] || { usage >&2; exit 2; }
for p; do
	part_info "$p" >/dev/null || { echo "session.sh: unknown part '$p'" >&2; usage >&2; exit 2; }
done
O=${OUT:-$top_builddir/tests/gpu/logs/session}
mkdir -p "$O"
W=$(mktemp -d "${TMPDIR:-/tmp}/gpu-session.XXXXXX")
trap 'rm -rf "$W"' EXIT
tab=
if [ -n "$standin" ]; then # the wrappers standin.sh describes
	tab=.standin
	mkdir -p "$W/bin"
	STANDIN_ENGINE=$MATRIX_ENGINE STANDIN_PYTHON=$PYTHON_TORCH
	export STANDIN_ENGINE STANDIN_PYTHON
	printf '#!/bin/sh\nexec sh "%s/standin.sh" engine "$@"\n' "$here" >"$W/bin/engine"
	printf '#!/bin/sh\nexec sh "%s/standin.sh" python "$@"\n' "$here" >"$W/bin/python"
	chmod +x "$W/bin/engine" "$W/bin/python"
	MATRIX_ENGINE=$W/bin/engine PYTHON_TORCH=$W/bin/python
fi
DUMP_CMP=${DUMP_CMP:-$top_builddir/tests/engine/dump_cmp}
if [ ! -x "$DUMP_CMP" ] && command -v cc >/dev/null 2>&1 &&
	cc -O2 -o "$W/dump_cmp" "$top_srcdir/tests/engine/dump_cmp.c" -lm >"$W/dump_cmp.log" 2>&1; then
	DUMP_CMP=$W/dump_cmp
fi
export DUMP_CMP
# Libraries the CUDA module needs that the loader does not find (the bundle
# carries none of CUDA's; the lent machine has CUDA and cuDNN in
# /usr/local/cuda/lib64, and NCCL perhaps only as PyTorch's pip package
# nvidia-nccl): looked for under the Python's nvidia/*/lib folders, and the
# folder that has one put on LD_LIBRARY_PATH, said in the log.
LIBS_NOTE=
for b in engine/matrix-engine-cuda.so tests/gpu/ops_check; do
	[ -e "$top_builddir/$b" ] || continue
	for l in $(ldd "$top_builddir/$b" 2>/dev/null | awk '/not found/ { print $1 }'); do
		d=$("$PYTHON_TORCH" -c '
import glob, os, sys
import nvidia
for base in nvidia.__path__:
    for f in sorted(glob.glob(os.path.join(base, "*", "lib", sys.argv[1]))):
        print(os.path.dirname(f)); sys.exit(0)' "$l" 2>/dev/null) || d=
		if [ -n "$d" ]; then
			LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
			LIBS_NOTE="$LIBS_NOTE $l from $d;"
		else
			LIBS_NOTE="$LIBS_NOTE $l NOT FOUND ($b);"
		fi
	done
done
export LD_LIBRARY_PATH
status=0 # (sh has no local variables: the functions' names differ from these)
for arg; do
	run_part "$arg" || status=1
done
exit $status
