# GPU points get GPUs of their own: with CUDA_VISIBLE_DEVICES=0,1,2 and
# --jobs 3, every CUDA point (device level cuda) sees as many GPUs as its `gpus`
# level asks for in CUDA_VISIBLE_DEVICES, points running at the same time
# never share a GPU, several run at once, and a CPU point never overlaps a
# GPU point. (Real GPUs are not needed: the command engine only records what
# it was given, with start and end times.) env.txt holds nvidia-smi's GPUs
# and topology (a stand-in nvidia-smi); a data-parallel point (cpu ranks)
# whose rank is killed is `crashed`, killed by SIGKILL, no rank left.
. "$top_srcdir/tests/setup"
cat > eng.sh <<'SH'
#!/bin/sh
# eng.sh KIND N: record "KIND N start end CUDA_VISIBLE_DEVICES", then a result
t0=$(date +%s.%N)
sleep 0.4
t1=$(date +%s.%N)
echo "$1 $2 $t0 $t1 ${CUDA_VISIBLE_DEVICES:--}" >> "$LOGF"
printf 'status=ok\nthroughput=1\nunit=samples/s\nstep_ms=1\n' > "$MATRIX_RESULT"
SH
cat > g.yaml <<YAML
name: gpus
engine: command
command: [env, "LOGF=$work/log", sh, $work/eng.sh, "{device}", "{gpus}"]
measure: {timeout: 30s}
factors:
  device: [cpu, cuda]
  gpus: [1, 2]
  rep: [a, b, c]
YAML
CUDA_VISIBLE_DEVICES=0,1,2 "$MATRIX" run g.yaml --out g --jobs 3 --allow-oversubscribe --no-report > out.txt 2> err.txt ||
	{ cat err.txt >&2; fail "the study failed"; }
expect_eq "$(wc -l < log | tr -d ' ')" 12 "every point ran once"
sed -i 's/^cuda /gpu /' log
# a CPU point never runs beside a GPU point
awk '{ k++; s[k] = $3; e[k] = $4; c[k] = $1 }
END {
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++)
		if (c[i] != c[j] && s[i] < e[j] && s[j] < e[i]) { print "cpu and gpu points overlapped"; bad = 1 }
	exit bad
}' log || fail "CPU and GPU points mixed"
# each GPU point saw as many GPUs as it asked for
awk '$1 == "gpu" { n = split($5, a, ","); if (n != $2) { print "asked " $2 ", got " $5; bad = 1 } } END { exit bad }' log ||
	fail "a GPU point got the wrong number of GPUs"
# overlapping GPU points share no GPU; some overlap happened
awk '$1 == "gpu" { k++; s[k] = $3; e[k] = $4; d[k] = $5 }
END {
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++)
		if (s[i] < e[j] && s[j] < e[i]) {
			over++
			ni = split(d[i], a, ","); nj = split(d[j], b, ",")
			for (x = 1; x <= ni; x++) for (y = 1; y <= nj; y++)
				if (a[x] == b[y]) { print "GPU " a[x] " shared: " d[i] " and " d[j]; bad = 1 }
		}
	if (!over) { print "no two GPU points ever ran at once"; bad = 1 }
	exit bad
}' log || fail "GPU assignment"
grep -q "^gpus\|^cpu" g/env.txt || fail "env.txt describes no cpu or gpus"

# the topology of the GPUs goes into env.txt (a stand-in nvidia-smi here)
mkdir -p bin
cat > bin/nvidia-smi <<'SH'
#!/bin/sh
case "$*" in
"topo -m") printf '\tGPU0\tGPU1\nGPU0\t X \tNV18\nGPU1\tNV18\t X \n' ;;
--query-gpu=*) echo "NVIDIA H200, 580.1, 143771 MiB" ;;
*) exit 1 ;;
esac
SH
chmod +x bin/nvidia-smi
PATH=$work/bin:$PATH CUDA_VISIBLE_DEVICES=0,1,2 "$MATRIX" run g.yaml --out gt --no-report > out2.txt 2> err2.txt ||
	{ cat err2.txt >&2; fail "the study with a stand-in nvidia-smi failed"; }
expect_grep '^gpu topology:$' gt/env.txt "env.txt: the GPU topology's title"
expect_grep '^GPU0	 X 	NV18$' gt/env.txt "env.txt: nvidia-smi topo -m's matrix"
expect_grep '^NVIDIA H200, 580.1, 143771 MiB$' gt/env.txt "env.txt: the GPUs"

# a data-parallel point whose rank dies (the engine's launcher takes the
# others down and dies of the same signal): crashed, killed by SIGKILL
cat > dp.yaml <<'YAML'
name: dp_dies
engine: native
device: cpu
measure: {warmup: 0, min_time: 2s, max_time: 3s, timeout: 60s}
factors:
  model: [resnet_tiny]
  task: [train]
  batch: [2]
  threads: [1]
  gpus: [2]
YAML
MATRIX_ENGINE_DIE_RANK=1 "$MATRIX" run dp.yaml --out dp --no-report > out3.txt 2> err3.txt || true
expect_eq "$(csv_col dp/results.csv status)" crashed "a point whose rank is killed: status"
expect_grep 'killed by SIGKILL' dp/results.csv "a point whose rank is killed: reason"
sleep 0.5; if pgrep -f "result dp/logs/" >/dev/null 2>&1; then fail "ranks left running after the point crashed"; fi
