#!/bin/sh
# func_length_fail.sh - tests/arch/func_length.sh can fail: a function of 81
# lines without a reason above it fails, by name and line; the same with a
# reason, one of exactly 80 lines, and a CUDA template kernel with its reason
# above the 'template' line pass.
. "$top_srcdir/tests/setup"
check=$top_srcdir/tests/arch/func_length.sh

# fn NAME LINES: a C function of LINES lines in all (signature to '}')
fn() {
	echo "static int $1(int x)"
	echo "{"
	i=3
	while [ "$i" -lt "$2" ]; do
		echo "	x += $i;"
		i=$((i + 1))
	done
	echo "}"
}
mkdir ok bad
{ echo "/* plain */"; fn eighty 80; echo; echo "/* Long because it must be. */"; fn reasoned 95; } > ok/a.c
{ echo "/* Long (about 90 lines): one body for four passes. */"; echo "template <int V>";
  echo "__global__ void __launch_bounds__(256)"; echo "k_sums(float *x)"; echo "{"
  i=0; while [ $i -lt 90 ]; do echo "    x[$i] = 0;"; i=$((i + 1)); done; echo "}"; } > ok/k.cu
expect_status 0 sh "$check" ok > ok.out 2>&1
expect_grep '3 functions, 2 over 80 lines, each with its reason above it' ok.out "reasons and 80 lines pass"

{ echo "/* short comment, no reason */"; fn toolong 81; echo; fn fine 10; } > bad/b.c
{ echo "template <int V>"; echo "__global__ void __launch_bounds__(256)"; echo "k_long(float *x)"; echo "{"
  i=0; while [ $i -lt 90 ]; do echo "    x[$i] = 0;"; i=$((i + 1)); done; echo "}"; } > bad/k.cu
expect_status 1 sh "$check" bad > bad.out 2>&1
expect_grep 'bad/b.c:2: toolong is 81 lines (over 80) with no reason above it' bad.out "an 81-line function without a reason"
expect_grep 'bad/k.cu:1: k_long is 95 lines (over 80) with no reason above it' bad.out "a kernel template without a reason"
! grep -q 'fine' bad.out || fail "a short function was named: $(cat bad.out)"
echo "func_length_fail.sh: func_length.sh passes reasons and fails two functions without one"
