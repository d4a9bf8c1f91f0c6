#!/bin/sh
# outputs.sh - the files matrix-engine writes (--result, --save-weights,
# --dump, --profile; engine/outfile.c), given paths a user or a script may
# give (issue 22's spirit, on the engine):
#   - a path that cannot be written (a directory, a missing directory, an
#     empty name, a file where a directory is expected) is exit 2 before
#     anything runs, naming the flag and what is wrong; it was found after
#     the whole run (exit 1), or not at all;
#   - a FIFO or a character device is written in place: a FIFO a script
#     reads stays a FIFO and the reader gets the record (the engine renamed
#     a regular file over it: the reader waited forever, and as root
#     '--result /dev/null' replaced /dev/null with a regular file);
#   - a FIFO that no process reads is exit 1 with the reason, no hang;
#   - through a symbolic link, the target is replaced and the link kept;
#   - a weights file is refused for a pipe (it is completed at its start),
#     and a write that fails (/dev/full) is exit 1 with the reason;
#   - a run that fails or is killed leaves no earlier run's record at
#     --result: the old status=ok stayed, as if it were this run's;
#   - two outputs at one file (--result x --profile ./x, or through a link)
#     are exit 2: the profile was replaced by the record, silently.
. "$top_srcdir/tests/setup"
E=${MATRIX_ENGINE:?}
key() { sed -n "s/^$1=//p" "$2"; }
P="--device cpu --model mnist_cnn --batch 2 --threads 1 --steps 1 --warmup 0"

# refused FLAG PATH MESSAGE: exit 2, exactly MESSAGE, and quickly (before the run:
# --min-time 30s would make a run last 30 s)
refused() {
	flag=$1 path=$2 msg=$3
	set +e; timeout 20 "$E" --device cpu --model mnist_cnn --batch 2 --threads 1 --warmup 0 --min-time 30s \
		"$flag" "$path" >out 2>err; rc=$?; set -e
	expect_eq "$rc" 2 "$flag '$path': exit status"
	printf '%s\n' "matrix-engine: $msg" | cmp -s - err || fail "$flag '$path': stderr is '$(cat err)', expected 'matrix-engine: $msg'"
}
mkdir adir
: >afile
refused --result adir "--result: 'adir' is a directory (expected a file to write)"
refused --result "$work/none/r" "--result: the directory '$work/none' does not exist"
refused --result afile/r "--result: 'afile/r': Not a directory"
refused --result "" "--result: an empty name (expected a file to write)"
refused --save-weights "$work/none/w" "--save-weights: the directory '$work/none' does not exist"
refused --dump adir "--dump: 'adir' is a directory (expected a file to write)"
# --profile makes one missing level (the run directory's profiles/), not two
refused --profile "$work/none/deeper/p.csv" "--profile: the directory '$work/none' does not exist"
"$E" $P --profile "$work/made/p.csv" --result r >out 2>err || fail "--profile into a missing directory: $(cat err)"
[ -s made/p.csv ] || fail "--profile made/p.csv: not written"

# two outputs, one file
refused_pair() {
	set +e; "$E" $P "$@" >out 2>err; rc=$?; set -e
	expect_eq "$rc" 2 "$*: exit status"
	expect_grep "^matrix-engine: --.* and --.* name the same file '.*': one would replace the other$" err "$*"
}
refused_pair --result same --profile ./same
: >tgt
ln -s tgt tlink
refused_pair --result tgt --save-weights tlink
[ ! -s tgt ] || fail "outputs at one file: tgt was written"
"$E" $P --result /dev/null --profile /dev/null >out 2>err || fail "/dev/null twice: $(cat err)"

# a FIFO a reader reads: written in place, still a FIFO after
mkfifo fifo
cat fifo >got &
reader=$!
timeout 60 "$E" $P --result fifo >out 2>err || fail "--result FIFO: exit $?: $(cat err)"
wait $reader
[ -p fifo ] || fail "--result FIFO: the FIFO was replaced by $(ls -l fifo)"
expect_eq "$(key status got)" ok "--result FIFO: the reader's status"
# nobody reads it: exit 1, the reason, no hang
set +e; timeout 60 "$E" $P --result fifo >out 2>err; rc=$?; set -e
expect_eq "$rc" 1 "--result FIFO without a reader: exit status"
expect_grep "unable to write the result file: 'fifo': a FIFO that no process reads" err "--result FIFO without a reader"
[ -p fifo ] || fail "--result FIFO without a reader: the FIFO was replaced"

# a weights file cannot go through a pipe: refused, the FIFO left alone.
# The reader is this shell, the FIFO open read-write on fd 3 before the
# engine starts (a background `cat fifo` could open it after the engine had
# looked, then block in open() for ever: `wait` hung a CI run for 20 minutes)
exec 3<>fifo
set +e; timeout 60 "$E" $P --save-weights fifo --result r >out 2>err; rc=$?; set -e
exec 3<&-
expect_eq "$rc" 1 "--save-weights FIFO: exit status"
expect_grep "'fifo' is not seekable (a pipe?)" err "--save-weights FIFO"
[ -p fifo ] || fail "--save-weights FIFO: the FIFO was replaced"

# a symbolic link: its target gets the record, the link stays
echo old >target
ln -s target link
"$E" $P --result link >out 2>err || fail "--result link: $(cat err)"
[ -L link ] || fail "--result link: the link was replaced"
expect_eq "$(key status target)" ok "--result link: the target's status"
ls | grep -q '\.tmp\.' && fail "a temporary file was left: $(ls)"

# an earlier run's record is gone when this run fails: a refused knob, a bad
# flag after --result, a kill during the timed steps
"$E" $P --result old >out 2>err || fail "a first run: $(cat err)"
expect_eq "$(sed -n 's/^status=//p' old)" ok "a first run's status"
cp old keep
set +e; MATRIX_ENGINE_SDPA=bogus "$E" $P --result old >out 2>err; rc=$?; set -e
expect_eq "$rc" 2 "a refused knob: exit status"
[ ! -e old ] || fail "a refused knob left the earlier record: $(head -1 old)"
cp keep old
set +e; "$E" --result old --batch 0 >out 2>err; rc=$?; set -e
expect_eq "$rc" 2 "--batch 0 after --result: exit status"
[ ! -e old ] || fail "a bad flag left the earlier record: $(head -1 old)"
cp keep old
"$E" --device cpu --model mnist_cnn --batch 2 --threads 1 --warmup 0 --min-time 60s --result old >out 2>err &
pid=$!
for i in $(seq 1 100); do [ -e old ] || break; sleep 0.1; done
kill -9 $pid
wait $pid || :
[ ! -e old ] || fail "a killed run left the earlier record: $(head -1 old)"
cp keep old
"$E" --result old --help >out
expect_eq "$(sed -n 's/^status=//p' old)" ok "--help: the record left alone"

# data-parallel ranks: rank 0 alone writes the weights, as the result (every
# rank wrote the whole file and renamed it over the others'); seen by strace
if command -v strace >/dev/null 2>&1 && strace -f -qq -e trace=rename -o /dev/null true 2>/dev/null; then
	# (LeakSanitizer does not work under ptrace: off for this run in a sanitizer build)
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -e trace=rename -o st.txt "$E" $P --gpus 2 --save-weights ranks.mxw --result r >out 2>err ||
		fail "--gpus 2 --save-weights: $(cat err)"
	expect_eq "$(grep -c 'rename("ranks.mxw.tmp.[0-9]*", "ranks.mxw"' st.txt)" 1 "--gpus 2: writes of the weights"
	[ -s ranks.mxw ] || fail "--gpus 2: no weights written"
else
	echo "no strace here: the ranks' writes of --save-weights not counted"
fi

# a character device: written in place (a failing one: the reason, exit 1)
if [ -c /dev/full ]; then
	set +e; timeout 60 "$E" $P --result /dev/full >out 2>err; rc=$?; set -e
	expect_eq "$rc" 1 "--result /dev/full: exit status"
	expect_grep "unable to write the result file: '/dev/full': No space left on device" err "--result /dev/full"
	[ -c /dev/full ] || fail "--result /dev/full: /dev/full is no longer a character device"
fi
if [ -c /dev/null ]; then
	"$E" $P --result /dev/null --save-weights /dev/null >out 2>err || fail "--result /dev/null: $(cat err)"
	[ -c /dev/null ] || fail "--result /dev/null: /dev/null is no longer a character device"
fi
exit 0
