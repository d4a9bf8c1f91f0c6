#!/bin/sh
# weights_files.sh - --weights FILE given what a user may give it (issue
# 22's spirit, on the engine): every bad file is exit 2 (bad input, as a bad
# --data; it was exit 1, the runner's "failed") with one line that says what
# is wrong:
#   - a FIFO is refused, not waited on (the engine blocked in fopen forever);
#   - a directory, a character device, a missing file say so (a directory
#     was "not a weights file (magic MXWT)", a missing file had no reason);
#   - a truncated file says where it ends;
#   - a tensor of another shape gives both shapes (it said "another shape
#     than the model's").
. "$top_srcdir/tests/setup"
E=${MATRIX_ENGINE:?}
P="--device cpu --model mnist_cnn --batch 2 --threads 1 --steps 1 --warmup 0"

# refused FILE MESSAGE [FLAGS]: exit 2 within 60 s, exactly MESSAGE, no result
refused() {
	w=$1 msg=$2; shift 2
	rm -f r
	set +e; timeout 60 "$E" $P "$@" --weights "$w" --result r >out 2>err; rc=$?; set -e
	expect_eq "$rc" 2 "--weights $w: exit status"
	printf '%s\n' "matrix-engine: --weights: $msg" | cmp -s - err ||
		fail "--weights $w: stderr is '$(cat err)', expected 'matrix-engine: --weights: $msg'"
	[ ! -e r ] || fail "--weights $w: a result was written"
}

"$E" $P --save-weights w.mxw --result r0 >out 2>err || fail "--save-weights: $(cat err)"
"$E" $P --weights w.mxw --result r0 >out 2>err || fail "--weights of the same model: $(cat err)"
mkfifo fifo
refused fifo "'fifo' is a FIFO, not a weights file"
mkdir adir
refused adir "'adir' is a directory, not a weights file"
[ -c /dev/zero ] && refused /dev/zero "'/dev/zero' is a character device, not a weights file"
refused none "unable to open 'none': No such file or directory"
head -c 100 w.mxw >cut.mxw
refused cut.mxw "'cut.mxw' is truncated: it ends in tensor 1 of the 8 its header announces"
printf 'MXWT\001\000\000\000\000\000\000\000' >empty.mxw
refused empty.mxw "'empty.mxw' lacks parameter 'conv1.weight'"
refused w.mxw "'w.mxw': tensor 'conv1.weight' is f32 10x1x5x5 in the file, f32 16x3x3x3 in the model" \
	--model resnet_tiny
exit 0
