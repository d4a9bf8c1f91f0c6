# report_800.sh - time `matrix report` on an 800-point run (the size of the
# inference-cube study). Target: under 5 s on 2 cores. Prints one figure line.
# The run directory is made by hand: the plan from `matrix expand`, results
# from a multiplicative model with deterministic noise, 3 % unsupported.
set -eu
: "${MATRIX:?MATRIX must name the built matrix binary}"
work=$(mktemp -d "${TMPDIR:-/tmp}/matrix-bench.XXXXXX")
trap '[ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"' EXIT
cd "$work"
mkdir run
cat > run/recipe.yaml <<'YAML'
name: report_800
description: 800 synthetic points for the report benchmark
engine: command
command: [sh, -c, "exit 0"]
factors:
  model: [resnet50, resnet18, bert_base, bert_large, mnist_cnn]
  batch: [1, 8, 32, 64, 128]
  precision: [fp32, fp16]
  channels_last: [off, on]
  cudnn_benchmark: [off, on]
  compile: [none, default]
  eval: [off, on]
baseline: {batch: 1, precision: fp32, channels_last: off, cudnn_benchmark: off, compile: none, eval: off}
report:
  metric: throughput
  scatter: [{x: model, color: precision}, {x: model, color: channels_last}, {x: model, color: compile}]
  bars: [{x: model, group: precision}]
  improvements: [{factor: compile, from: none, to: default, by: [model, batch]}]
YAML
"$MATRIX" expand run/recipe.yaml --format csv > run/plan.csv
printf 'host: bench\n' > run/env.txt
awk -F, 'BEGIN { OFS = ","; srand(1)
	base["resnet50"] = 1200; base["resnet18"] = 3500; base["bert_base"] = 900; base["bert_large"] = 300; base["mnist_cnn"] = 40000
	print "id,index,repeat,model,batch,precision,channels_last,cudnn_benchmark,compile,eval,status,reason,throughput,unit,step_ms,step_ms_lo,step_ms_hi,samples,startup_s,peak_mem_bytes,flops_per_step,tflops,pct_peak,device,engine,ignored,wall_s,extra,command" }
NR > 1 {
	t = base[$4] * (1 + log($5) / log(2) / 3)
	if ($6 == "fp16") t *= ($4 ~ /bert/ ? 3.1 : 2.2)
	if ($7 == "on" && $4 !~ /bert/) t *= ($6 == "fp16" ? 1.35 : 1.05)
	if ($8 == "on") t *= 1.08
	if ($9 == "default") t *= 1.3
	if ($10 == "on") t *= 1.12
	t *= exp((rand() - 0.5) * 0.1)
	if (rand() < 0.03) {
		print $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, "unsupported", "not on this device", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "0.1", "", "true"
		next
	}
	ms = 1000 * $5 / t; ci = 1 + 0.01 + rand() * 0.02
	print $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, "ok", "", t, "samples/s", ms, ms / ci, ms * ci, 50, 2.5, 1e9, "", "", "", "cuda", "synthetic", "", "3.1", "kernel=x", "true"
}' run/plan.csv > run/results.csv
points=$(($(wc -l < run/results.csv) - 1))
start=$(date +%s.%N)
"$MATRIX" report --quiet run
end=$(date +%s.%N)
figures=$(ls run/plots/*.svg | wc -l)
awk -v s="$start" -v e="$end" -v n="$points" -v f="$figures" -v c="$(nproc)" 'BEGIN {
	printf "report_800: matrix report on %d points: %.2f s wall (%d figures, svg + png; %d cores; target < 5 s)\n", n, e - s, f, c }'
