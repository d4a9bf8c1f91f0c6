# Runner overhead per point: 1000 points of a command engine that only writes
# status=ok, against the same engine started 1000 times by a shell loop (the
# peer, measured in the same run). Target: at most 5 ms per point.
set -eu
: "${MATRIX:?}"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
n=${N:-1000}
cat > engine.sh <<'SH'
echo status=ok > "$MATRIX_RESULT"
SH
levels=$(seq -s, 1 "$n")
cat > r.yaml <<YAML
name: overhead
engine: command
command: [sh, $work/engine.sh]
factors:
  i: [$levels]
YAML
t0=$(date +%s.%N)
i=0; while [ $i -lt "$n" ]; do MATRIX_RESULT=$work/peer.txt sh engine.sh </dev/null >/dev/null 2>&1; i=$((i + 1)); done
t1=$(date +%s.%N)
"$MATRIX" run r.yaml --out run --no-report > /dev/null
t2=$(date +%s.%N)
rows=$(($(wc -l < run/results.csv) - 1))
[ "$rows" = "$n" ] || { echo "runner stored $rows rows, expected $n"; exit 1; }
awk -v n="$n" -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {
	peer = (b - a) / n * 1000; ours = (c - b) / n * 1000
	printf "runner: %d points, %.2f ms per point; engine alone: %.2f ms per point\n", n, ours, peer
	printf "runner overhead: %.2f ms per point (target <= 5 ms), ratio runner/engine-alone %.2fx\n", ours - peer, ours / peer
}'
