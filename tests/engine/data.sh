#!/bin/sh
# data.sh - real input data (--data DIR, issue 19 item 5): the native
# engine on a small MNIST-like IDX set that tests/engine/mkidx.py writes
# (64 images): the data keys of the record, training that learns it (the
# loss after 80 steps below the first step's), .gz read as the plain files,
# hostile files (exact messages, exit 2; sizes checked from the headers
# before the data is read), models and batches that cannot
# take it (exit 3), and a recipe with a data factor through the runner (a
# level that is no directory stops the run before any point).
. "$top_srcdir/tests/setup"
E=${MATRIX_ENGINE:?}
PY=python3
mk() { $PY "$top_srcdir/tests/engine/mkidx.py" "$@"; }
key() { sed -n "s/^$1=//p" "$2"; }
run() { "$E" --model mnist_cnn --task train --batch 8 --threads 1 --warmup 0 --eval on "$@"; }

mk ok
mk gz --gz
run --data ok --steps 1 --result r1 2>err1
run --data ok --steps 80 --result r80 2>/dev/null
expect_eq "$(key status r80)" ok "status"
expect_eq "$(key data r80)" ok "data key"
expect_eq "$(key data_images_file r80)" ok/train-images-idx3-ubyte "images file"
expect_eq "$(key data_images r80)" 64 "images"
expect_eq "$(key epoch_steps r80)" 8 "steps per epoch"
expect_eq "$(key data_batches r80)" 80 "batches taken"
expect_eq "$(key data_epochs_started r80)" 10 "epochs"
expect_grep "^epoch_s=" r80 "epoch time"
expect_grep "^matrix-engine: data: 64 images of 28x28 from 'ok/train-images-idx3-ubyte'" err1 "data log line"
l1=$(key loss r1) l80=$(key loss r80)
awk -v a="$l1" -v b="$l80" 'BEGIN { exit !(b < a / 4) }' || fail "loss after 80 steps $l80, after 1 step $l1: not learning"
echo "ok   loss $l1 after 1 step, $l80 after 80"
# the upload knob (MATRIX_ENGINE_DATA_UPLOAD, a device's): the cpu copies
# nothing and says so; a bad value is exit 2 before any step
expect_eq "$(key data_upload r80)" none "cpu: data_upload"
MATRIX_ENGINE_DATA_UPLOAD=pageable run --data ok --steps 1 --result rup 2>eup
expect_eq "$(key loss rup)" "$l1" "cpu: the loss with MATRIX_ENGINE_DATA_UPLOAD=pageable"
expect_grep "MATRIX_ENGINE_DATA_UPLOAD=pageable changes nothing on the cpu" eup "cpu: the knob logged"
set +e; MATRIX_ENGINE_DATA_UPLOAD=fast run --data ok --steps 1 --result rbad >/dev/null 2>ebad; rc=$?; set -e
expect_eq "$rc" 2 "MATRIX_ENGINE_DATA_UPLOAD=fast: exit status"
expect_eq "$(cat ebad)" "matrix-engine: MATRIX_ENGINE_DATA_UPLOAD='fast' is not one of pinned, pageable (default pinned)" \
	"MATRIX_ENGINE_DATA_UPLOAD=fast: message"
# the synthetic default says so
"$E" --batch 4 --threads 1 --steps 1 --warmup 0 --result rs 2>/dev/null
expect_eq "$(key data rs)" synthetic "synthetic data key"
if "$E" --version | grep -q "idx.gz (zlib)"; then
	run --data gz --steps 80 --result rgz 2>/dev/null
	expect_eq "$(key loss rgz)" "$l80" ".gz: the loss of the plain files"
	expect_eq "$(key data_images_file rgz)" gz/train-images-idx3-ubyte.gz ".gz file named"
else
	echo "note: built without zlib, .gz not checked"
fi

# hostile files: exit 2, the file named and what was expected
mk magic_i --magic images
mk magic_l --magic labels
mk s32 --size 32x32
mk cnt --labels 63
mk trunc_i --truncate images
mk trunc_l --truncate labels
mk extra --extra labels
mk lab --label 5=10
mk huge --huge
mk nolab && rm nolab/train-labels-idx1-ubyte
mkdir -p isdir/train-images-idx3-ubyte
mk gzbad && rm gzbad/train-images-idx3-ubyte && printf 'not gzip' >gzbad/train-images-idx3-ubyte.gz
bad() {
	dir=$1 msg=$2
	set +e; run --data "$dir" --steps 1 --result rb >/dev/null 2>eb; rc=$?; set -e
	expect_eq "$rc" 2 "exit status for $dir"
	expect_eq "$(cat eb)" "matrix-engine: --data: $msg" "message for $dir"
	[ ! -e rb ] || fail "$dir: a result file was written"
}
bad magic_i "'magic_i/train-images-idx3-ubyte': not an IDX file of unsigned bytes with 3 dimensions (magic 00 00 08 01, expected 00 00 08 03)"
bad magic_l "'magic_l/train-labels-idx1-ubyte': not an IDX file of unsigned bytes with 1 dimension (magic 00 00 0d 01, expected 00 00 08 01)"
bad s32 "'s32/train-images-idx3-ubyte': images of 32x32 pixels; model mnist_cnn takes 28x28"
bad cnt "'cnt/train-labels-idx1-ubyte': 63 labels for the 64 images of 'cnt/train-images-idx3-ubyte'"
bad trunc_i "'trunc_i/train-images-idx3-ubyte': truncated: the header announces 50176 bytes of data, the file has 50076"
bad trunc_l "'trunc_l/train-labels-idx1-ubyte': truncated: the header announces 64 bytes of data, the file has 61"
bad extra "'extra/train-labels-idx1-ubyte': 16 bytes after the 64 bytes of data its header announces"
bad lab "'lab/train-labels-idx1-ubyte': label 10 of image 5 is not a class of model mnist_cnn (0 to 9)"
bad huge "'huge/train-images-idx3-ubyte': the header announces more than 17179869184 bytes of data (dimension 2 is 65536): not an MNIST file"
bad nolab "'nolab/train-labels-idx1-ubyte' not found (nor 'train-labels-idx1-ubyte.gz'): MNIST's training labels are expected there"
bad isdir "'isdir/train-images-idx3-ubyte': not a regular file"
bad nowhere "'nowhere': No such file or directory (a directory with MNIST's train-images-idx3-ubyte and train-labels-idx1-ubyte is expected)"
bad ok/train-images-idx3-ubyte "'ok/train-images-idx3-ubyte': not a directory (a directory with MNIST's train-images-idx3-ubyte and train-labels-idx1-ubyte is expected)"
if "$E" --version | grep -q "idx.gz (zlib)"; then
	bad gzbad "'gzbad/train-images-idx3-ubyte.gz': not an IDX file of unsigned bytes with 3 dimensions (magic 6e 6f 74 20, expected 00 00 08 03)"
	head -c 300 gz/train-images-idx3-ubyte.gz >cut.gz && mkdir -p gzcut && mv cut.gz gzcut/train-images-idx3-ubyte.gz
	cp ok/train-labels-idx1-ubyte gzcut/
	set +e; run --data gzcut --steps 1 --result rb >/dev/null 2>eb; rc=$?; set -e
	expect_eq "$rc" 2 "exit status for a cut .gz"
	expect_grep "^matrix-engine: --data: 'gzcut/train-images-idx3-ubyte.gz': " eb "cut .gz named"
fi

# what the header announces is checked before the pixels are read: the image
# size against the model's, the bytes against the memory the engine may take
# (here under ulimit -v 1000000: 1 GB). Both files are sparse: a 1.6 GB and
# a 1.5 GB file that take no disk; the engine read them whole (1.5 GB of
# memory for a refusal the header gave; 16 GiB for the largest header it
# takes), and under the limit died "out of host memory", exit 1.
$PY - <<'PY'
import os, struct
def idx(path, head, n):
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(len(head) + n)
os.makedirs("sparse_big", exist_ok=True)
idx("sparse_big/train-images-idx3-ubyte", struct.pack(">BBBBIII", 0, 0, 8, 3, 1, 40000, 40000), 40000 * 40000)
idx("sparse_big/train-labels-idx1-ubyte", struct.pack(">BBBBI", 0, 0, 8, 1, 1), 1)
os.makedirs("sparse_many", exist_ok=True)
n = 2000000
idx("sparse_many/train-images-idx3-ubyte", struct.pack(">BBBBIII", 0, 0, 8, 3, n, 28, 28), n * 784)
idx("sparse_many/train-labels-idx1-ubyte", struct.pack(">BBBBI", 0, 0, 8, 1, n), n)
PY
# (a sanitizer build reserves terabytes of address space: no ulimit -v there,
# and the memory check is left to the plain build)
sanitized=; "$E" --version | grep -q -- '-fsanitize=' && sanitized=1
limited() { if [ -n "$sanitized" ]; then run "$@"; else (ulimit -v 1000000 && run "$@"); fi; }
set +e; limited --data sparse_big --steps 1 --result rb >/dev/null 2>eb; rc=$?; set -e
expect_eq "$rc" 2 "images of another size, 1.6 GB, under 1 GB: exit status"
expect_eq "$(cat eb)" "matrix-engine: --data: 'sparse_big/train-images-idx3-ubyte': images of 40000x40000 pixels; model mnist_cnn takes 28x28" \
	"images of another size, 1.6 GB, under 1 GB: message"
if [ -n "$sanitized" ]; then
	echo "a sanitizer build: the memory check of --data not run (no ulimit -v)"
	rm -rf sparse_big sparse_many
else
set +e; limited --data sparse_many --steps 1 --result rb >/dev/null 2>eb; rc=$?; set -e
expect_eq "$rc" 2 "1.5 GB of images under 1 GB: exit status"
expect_grep "^matrix-engine: --data: 'sparse_many/train-images-idx3-ubyte': the header announces 1568000000 bytes of data, more than the [0-9]* bytes of memory the engine may still take$" \
	eb "1.5 GB of images under 1 GB: message"
rm -rf sparse_big sparse_many
fi

# cannot take it: unsupported (exit 3) with the reason in the record
unsup() {
	reason=$1; shift
	set +e; "$E" --threads 1 --steps 1 --warmup 0 --result ru "$@" >/dev/null 2>&1; rc=$?; set -e
	expect_eq "$rc" 3 "exit status of $*"
	expect_eq "$(key status ru)" unsupported "status of $*"
	expect_eq "$(key reason ru)" "$reason" "reason of $*"
	expect_eq "$(key data ru)" ok "data key of $*"
}
unsup "--data gives grey images with class labels (MNIST); model resnet_tiny takes 3-channel images" --model resnet_tiny --data ok
unsup "'ok/train-images-idx3-ubyte' holds 64 images, less than one batch of 128" --data ok --batch 128

# the runner: a data factor; levels made absolute in the command
cat >d.yaml <<YAML
name: data_test
engine: native
device: cpu
measure: {warmup: 2, min_time: 0.02s, max_time: 0.1s, rel_ci: 0.05, timeout: 60s}
factors:
  model: [mnist_cnn]
  task: [train]
  batch: [8]
  threads: [1]
  data: [synthetic, ok]
YAML
"$MATRIX" run d.yaml --out run1 >out 2>&1 || { cat out; fail "matrix run with a data factor"; }
expect_eq "$(csv_col run1/results.csv data | sort | tr '\n' ' ')" "ok synthetic " "data column"
expect_eq "$(csv_col run1/results.csv status | tr '\n' ' ')" "ok ok " "statuses"
expect_grep " --data $work/ok " run1/plan.csv "absolute data directory in the command"
expect_grep "matrix-engine: data: 64 images" "run1/logs/$(grep ',ok,/' run1/plan.csv | cut -d, -f1).log" "log says the source"
sed 's/data: \[synthetic, ok\]/data: [synthetic, nothere]/' d.yaml >bad.yaml
set +e; "$MATRIX" run bad.yaml --out run2 >out 2>err; rc=$?; set -e
expect_eq "$rc" 2 "a data level that is no directory"
expect_eq "$(cat err)" "matrix: factor data: level 'nothere' is not a directory (expected synthetic, or a directory with MNIST's train-images-idx3-ubyte and train-labels-idx1-ubyte; a relative path is taken from the directory matrix runs in)" "its message"
[ ! -e run2/results.csv ] || fail "a point ran"
echo "ok   data.sh"
