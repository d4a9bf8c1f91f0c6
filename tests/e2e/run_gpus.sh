# GPU points get GPUs of their own: with CUDA_VISIBLE_DEVICES=0,1,2 and
# --jobs 3, every CUDA point (device level cuda) sees as many GPUs as its `gpus`
# level asks for in CUDA_VISIBLE_DEVICES, points running at the same time
# never share a GPU, several run at once, and a CPU point never overlaps a
# GPU point. (Real GPUs are not needed: the command engine only records what
# it was given, with start and end times.)
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
