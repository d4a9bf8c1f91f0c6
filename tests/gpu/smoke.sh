# tests/gpu/smoke.sh - sourced by the benchmarks' smoke tests (after
# tests/setup; bench_bert_smoke.sh, bench_convnets_smoke.sh), with NAME the
# benchmark (bench_bert, bench_convnets) and B its script:
#   smoke_needs_torch      SKIP (exit 77) without a python3 that imports torch
#   smoke_run              B perf.md in $work/out, the smoke run: exit 0, the
#                          table says SMOKE RUN, written between the markers
#                          of perf.md with the lines around them kept
#   smoke_failing RESULT PATTERN  B again with the point whose result file is
#                          RESULT failing and a 1 s budget: exit 1, PATTERN
#                          (the failed point named) in its output, PyTorch
#                          "not measured" for the budget
smoke_needs_torch() {
	PY=${PYTHON_TORCH:-}
	if [ -z "$PY" ] || ! "$PY" -c 'import torch' >/dev/null 2>&1; then
		echo "SKIP: no python3 that imports torch (PYTHON_TORCH='$PY'): the benchmark measures PyTorch"
		exit 77
	fi
	export PYTHON_TORCH MATRIX_ENGINE
	unset BENCH_BUDGET_S BENCH_COMPILE_S BENCH_MAX_AUTOTUNE BENCH_TORCH_MAX_AUTOTUNE
}

smoke_run() {
	printf 'kept above\n<!-- %s:begin -->\nold table\n<!-- %s:end -->\nkept below\n' "$NAME" "$NAME" >perf.md
	rc=0
	BENCH_OUTDIR=$work/out sh "$B" perf.md >run.out 2>&1 || rc=$?
	[ "$rc" -eq 0 ] || { cat run.out >&2; fail "$NAME.sh (smoke) exited $rc"; }
	expect_grep '^SMOKE RUN' perf.md "the table says it is a smoke run"
	[ "$(head -n 2 perf.md)" = "kept above
<!-- $NAME:begin -->" ] || fail "the lines before the begin marker changed: $(head -n 2 perf.md)"
	[ "$(tail -n 2 perf.md)" = "<!-- $NAME:end -->
kept below" ] || fail "the lines after the end marker changed: $(tail -n 2 perf.md)"
	if grep -q 'old table' perf.md; then fail "the old table between the markers stayed"; fi
}

smoke_failing() {
	cat >engine.sh <<EOF
#!/bin/sh
case "\$*" in *$1*) echo "injected failure" >&2; exit 1;; esac
exec "$MATRIX_ENGINE" "\$@"
EOF
	chmod +x engine.sh
	rc=0
	MATRIX_ENGINE=$work/engine.sh BENCH_BUDGET_S=1 BENCH_OUTDIR=$work/out2 sh "$B" >run2.out 2>&1 || rc=$?
	[ "$rc" -eq 1 ] || { cat run2.out >&2; fail "with a failing point of ours: exit $rc, expected 1"; }
	expect_grep "$2" run2.out "the failed point is named"
	expect_grep '| not measured; not counted: eager: not run: 0 s of the 1 s budget left' run2.out \
		"PyTorch's points left out by the budget"
}
