#!/bin/sh
# The PyTorch engine rejects bad flags and levels with exit 2 and a message that
# names them, before importing torch; --help and --list-models exit 0.
set -u
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
engine=$srcdir/engine/pytorch/matrix_torch.py
py=${PYTHON_TORCH:-python3}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0

# expect_usage WORD ARGS...: exit 2 and WORD in the message
expect_usage() {
	word=$1; shift
	"$py" "$engine" "$@" --result "$tmp/r" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -ne 2 ]; then
		echo "FAIL - $*: exit $rc, want 2"; fail=1; return
	fi
	if ! grep -q -- "$word" "$tmp/err"; then
		echo "FAIL - $*: message does not name '$word':"; cat "$tmp/err"; fail=1; return
	fi
	if ! grep -q '^status=failed$' "$tmp/r" || ! grep -q "^reason=bad flag: .*$word" "$tmp/r"; then
		echo "FAIL - $*: result file lacks status=failed / reason naming '$word'"; cat "$tmp/r"; fail=1; return
	fi
	rm -f "$tmp/r"
	echo "ok   - $* -> exit 2: $(cat "$tmp/err")"
}

expect_usage --frobnicate --model mnist_cnn --frobnicate 3
expect_usage --precison --precison fp16
expect_usage fp64 --precision fp64
expect_usage --precision --precision
expect_usage resnet99 --model resnet99
expect_usage --task --task predict
expect_usage --batch --batch 0
expect_usage --batch --batch many
expect_usage --channels-last --channels-last yes
expect_usage --compile --compile fast
expect_usage --warmup --warmup 3x
expect_usage --warmup --warmup 0.5
expect_usage --min-time --min-time -1s
expect_usage --max-time --min-time 2s --max-time 1s
expect_usage --rel-ci --rel-ci 0
expect_usage --seq-len --model bert_tiny --seq-len 513
expect_usage --gpus --gpus 0
expect_usage stray stray

# no torch needed for any of that: it must be quick
start=$(date +%s)
"$py" "$engine" --bogus >/dev/null 2>&1
[ $(( $(date +%s) - start )) -le 3 ] || { echo "FAIL - bad flags take more than 3 s (torch imported?)"; fail=1; }

if "$py" "$engine" --help >"$tmp/help" 2>&1; then
	for f in --model --task --batch --seq-len --precision --channels-last --cudnn-benchmark --eval \
		--inference-mode --compile --syncbn --ema --gpus --threads --device --warmup --min-time \
		--max-time --rel-ci --steps --seed --result --list-models; do
		grep -q -- "$f" "$tmp/help" || { echo "FAIL - --help does not document $f"; fail=1; }
	done
	echo "ok   - --help exits 0"
else
	echo "FAIL - --help exit status"; fail=1
fi
if "$py" "$engine" --list-models >"$tmp/models" 2>&1; then
	for m in mnist_cnn resnet18 resnet50 resnet_tiny bert_tiny bert_base bert_large; do
		grep -q "^$m " "$tmp/models" || { echo "FAIL - --list-models lacks $m"; fail=1; }
	done
	echo "ok   - --list-models lists the 7 models"
else
	echo "FAIL - --list-models exit status"; fail=1
fi
exit $fail
