# matrix run --dry-run of container points (issue 14): it shows each
# container command as the run starts it: the runtime probed as the run
# probes it (auto: the first that works), --user=UID:GID for a user who is not
# root under a rootful docker, GPU pass-through (docker --gpus=all, podman
# --device=nvidia.com/gpu=all) with the CUDA_VISIBLE_DEVICES the point gets;
# a real run then starts the same commands, and records the image's id and
# digest in env.txt and in every row. The runtimes here are stand-ins on PATH
# (bin/docker, bin/podman): they log each call, answer 'info' and 'image
# inspect' as a rootful or rootless daemon would (on cgroups v2, or v1
# where fake/cgroup-version says 1), and 'run' runs the command
# after the image on the host with the --env and --workdir given. Real
# containers run in container_docker.sh and container_podman.sh; this test
# needs neither, nor a GPU.
. "$top_srcdir/tests/setup"
mkdir bin u u/fake
cat > bin/docker <<'EOT'
#!/bin/sh
rt=$(basename "$0")
printf '%s\n' "$*" >> "$FAKE_DIR/calls.$rt"
case $1 in
info)
	[ -e "$FAKE_DIR/$rt-up" ] || { echo "Cannot connect to the $rt daemon: fake $rt is down" >&2; exit 1; }
	case "$*" in *CgroupVersion*) printf '%s ' "$(cat "$FAKE_DIR/cgroup-version" 2>/dev/null || echo 2)" ;; esac
	case "$*" in *SecurityOptions*)
		if [ -e "$FAKE_DIR/rootless" ]; then echo "[name=seccomp,profile=builtin name=rootless]"
		else echo "[name=seccomp,profile=builtin name=cgroupns]"; fi ;;
	esac ;;
image)
	case $4 in
	*Id*) echo "sha256:$(printf %s "$5" | sha256sum | cut -c1-64)" ;;
	*RepoDigests*)
		if [ -e "$FAKE_DIR/no-digest" ]; then echo "[]"
		else echo "[example.org/team/engine@sha256:0123abcd example.org/mirror/engine@sha256:0123abcd]"; fi ;;
	*) exit 3 ;;
	esac ;;
ps | rm | kill) ;;
inspect) echo "false $(cat "$FAKE_DIR/exit.$4" 2>/dev/null || echo 0)" ;;
run)
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		--env=*) export "${1#--env=}" ;;
		--workdir=*) cd "${1#--workdir=}" || exit 125 ;;
		--name=*) name=${1#--name=} ;;
		--*) ;;
		*) shift; break ;;
		esac
		shift
	done
	"$@"
	rc=$?
	echo "$rc" > "$FAKE_DIR/exit.$name"
	exit "$rc" ;;
*) echo "fake $rt: unexpected call: $*" >&2; exit 3 ;;
esac
EOT
cp bin/docker bin/podman
chmod 755 bin/docker bin/podman
PATH=$work/bin:$PATH FAKE_DIR=$work/u/fake CUDA_VISIBLE_DEVICES=3,5
# the containers' cache directory: $XDG_CACHE_HOME/matrix/containers
XDG_CACHE_HOME=$work/u/cache
unset MATRIX_PLAN_CACHE
export PATH FAKE_DIR CUDA_VISIBLE_DEVICES XDG_CACHE_HOME
cat > u/r.yaml <<'YAML'
name: dry
engine: command
command: [sh, -c, 'printf "status=ok\nthroughput=%s\nunit=items/s\n" "$1" > "$MATRIX_RESULT"', engine, "{n}"]
containers:
  runtime: auto
  img: {image: "example.org/team/engine:1.0", cpus: "2", memory: 1g}
factors:
  container: [img]
  device: [cpu, cuda]
  n: [7]
order: given
YAML
# as a user who is not root: 4242 when this is root (setpriv), else oneself
if [ "$(id -u)" = 0 ]; then
	command -v setpriv > /dev/null || { echo "SKIP: root without setpriv cannot run matrix as another user"; exit 77; }
	chmod 711 "$work"
	chown -R 4242:4242 u
	as_user() { setpriv --reuid=4242 --regid=4242 --clear-groups "$@"; }
	user=4242:4242
else
	as_user() { "$@"; }
	user=$(id -u):$(id -g)
fi
cd u
d=$work/u
# the image's own torch/ directory: its id's first 12 hex digits
key=$(printf %s example.org/team/engine:1.0 | sha256sum | cut -c1-12)
# each command up to the image, and after it (the engine's command)
head_re() { # head_re RUNTIME GPU_FLAG USER_FLAG CVD_ENV
	printf '%s\n' "^$1 run --name=matrix-[0-9a-f]\{16\} --network=none --cpus=2 --memory=1g --memory-swap=1g $2$3--volume=$d/run:$d/run --workdir=$d --volume=$d/cache/matrix/containers:/matrix-cache --env=MATRIX_PLAN_CACHE=/matrix-cache/plan --env=TORCHINDUCTOR_CACHE_DIR=/matrix-cache/torch/$key/inductor --env=TRITON_CACHE_DIR=/matrix-cache/torch/$key/triton $4--env=MATRIX_RESULT=run/logs/[0-9a-f]\{16\}\.result --env=MATRIX_POINT_ID=[0-9a-f]\{16\} --label=matrix.run=[0-9a-f]\{16\} --label=matrix.point=[0-9a-f]\{16\} example.org/team/engine:1.0$"
}
tail_sh="sh -c 'printf \"status=ok\\nthroughput=%s\\nunit=items/s\\n\" \"\$1\" > \"\$MATRIX_RESULT\"' engine 7"
# check_dry WHAT RUNTIME GPU_FLAG USER_FLAG: dry.txt holds the cpu point's
# command, then the cuda one's (order: given)
check_dry() {
	[ "$(wc -l < dry.txt)" = 2 ] || fail "$1: not two commands: $(cat dry.txt)"
	sed -e 's/ example\.org\/team\/engine:1\.0 .*$/ example.org\/team\/engine:1.0/' dry.txt > heads.txt
	sed -n 1p heads.txt > head1.txt
	sed -n 2p heads.txt > head2.txt
	expect_grep "$(head_re "$2" "" "$4" "")" head1.txt "$1: the cpu point's command"
	expect_grep "$(head_re "$2" "$3 " "$4" "--env=CUDA_VISIBLE_DEVICES=3 ")" head2.txt "$1: the cuda point's command"
	expect_eq "$(sed 's/^.* example\.org\/team\/engine:1\.0 //' dry.txt | sort -u)" "$tail_sh" "$1: the engine's command"
}

# auto, podman does not start, a rootful docker does: docker, with --user
touch fake/docker-up
as_user "$MATRIX" run r.yaml --out run --dry-run > dry.txt 2> err.txt || fail "dry run: $(cat err.txt)"
check_dry "rootful docker" docker --gpus=all "--user=$user "
expect_grep "^info$" fake/calls.docker "docker probed"
expect_grep "^info$" fake/calls.podman "podman probed first"
[ -e run ] && fail "the dry run made the run directory"

# the run starts the same commands (but for the pid and slot that end the
# container's name and the nonce of the result file's name)
as_user "$MATRIX" run r.yaml --out run --no-report > out.txt 2>&1 || fail "the run: $(cat out.txt)"
grep '^run ' fake/calls.docker | sed -e 's/^/docker /' -e 's/ --name=\(matrix-[0-9a-f]*\)-[0-9]*-0 / --name=\1 /' \
	-e 's/ --env=MATRIX_RESULT=\(run\/logs\/[0-9a-f]*\)\.[0-9a-f]*\.result / --env=MATRIX_RESULT=\1.result /' \
	-e 's/ example\.org\/team\/engine:1\.0 .*$/ example.org\/team\/engine:1.0/' > ran.txt
diff heads.txt ran.txt || fail "the dry run's commands (-) differ from the run's (+)"
expect_eq "$(csv_col run/results.csv status | tr '\n' ' ')" "ok ok " "the points' status"
# a run directory with ':' or ',' cannot be mounted (--volume SRC:DST): the
# run is refused before it makes anything (every point failed at its start,
# "invalid volume specification"), the dry run says it would be
expect_status 2 as_user "$MATRIX" run r.yaml --out 'run:x' > out.txt 2> err.txt
expect_grep "^matrix: run: the containers cannot mount the run directory '$d/run:x': it holds ':' or ','" err.txt "a ':' in the run directory"
[ -e 'run:x' ] && fail "the run directory with a ':' was made"
as_user "$MATRIX" run r.yaml --out 'run,x' --dry-run > dry.txt 2> err.txt || fail "dry run: $(cat err.txt)"
expect_grep "^matrix: dry run: the containers cannot mount the run directory '$d/run,x': .*: the run would stop with this error$" err.txt "the dry run's warning on ','"
# through a link the dry run names the directory as the run mounts it (its
# real path): it printed the link's path
mkdir real && ln -s real lnk
as_user "$MATRIX" run r.yaml --out lnk/x --dry-run > dry.txt 2> err.txt || fail "dry run: $(cat err.txt)"
expect_grep " --volume=$d/real/x:$d/real/x " dry.txt "the dry run's volume through a link"
rm lnk && rmdir real
# the image's id and digests, in env.txt and in every row
id=sha256:$(printf %s example.org/team/engine:1.0 | sha256sum | cut -c1-64)
digest="example.org/team/engine@sha256:0123abcd example.org/mirror/engine@sha256:0123abcd"
expect_grep "^container: img runtime=docker image=example.org/team/engine:1.0 id=$id digest=$digest user=$user$" run/env.txt "env.txt's image line"
expect_eq "$(grep -c "image_id=$id" run/results.csv)" 2 "rows with the image id"
expect_eq "$(grep -c "image_digest=$digest" run/results.csv)" 2 "rows with the image digests"
# matrix build prints the same id and digests
as_user "$MATRIX" build r.yaml > build.txt 2> err.txt || fail "matrix build: $(cat err.txt)"
printf 'container\truntime\timage\tid\tdigest\tstatus\nimg\tdocker\texample.org/team/engine:1.0\t%s\t%s\tpresent\n' \
	"$id" "$digest" > want.txt
diff want.txt build.txt || fail "matrix build's lines (- expected, + got)"
rm -rf run fake/calls.*
# an image that no registry knows: no digest in env.txt, the rows or the build's line
touch fake/no-digest
as_user "$MATRIX" run r.yaml --out run --no-report > out.txt 2>&1 || fail "the run: $(cat out.txt)"
expect_grep "^container: img runtime=docker image=example.org/team/engine:1.0 id=$id user=$user$" run/env.txt "env.txt without a digest"
grep -q image_digest= run/results.csv && fail "a digest in the rows: $(cat run/results.csv)"
as_user "$MATRIX" build r.yaml > build.txt 2> err.txt || fail "matrix build: $(cat err.txt)"
expect_eq "$(sed -n 2p build.txt)" "$(printf 'img\tdocker\texample.org/team/engine:1.0\t%s\tno digest: local image, not from a registry\tpresent' "$id")" \
	"matrix build's line without a digest"
rm -rf run fake/calls.* fake/no-digest

# a rootless docker: no --user (its root is the user)
touch fake/rootless
as_user "$MATRIX" run r.yaml --out run --dry-run > dry.txt 2> err.txt || fail "dry run: $(cat err.txt)"
check_dry "rootless docker" docker --gpus=all ""
# on cgroups v1, where it would ignore the entry's cpus and memory: an
# error before any point runs (the dry run: a warning)
echo 1 > fake/cgroup-version
expect_status 2 as_user "$MATRIX" run r.yaml --out run > out.txt 2> err.txt
expect_grep "^matrix: container 'img': cpus: 2, memory: 1g cannot be enforced: docker runs rootless on cgroups v1 here, where it ignores --cpus and --memory; run as root, boot with cgroups v2" err.txt "the limits error"
[ -e run ] && fail "the run went on: $(cat out.txt)"
as_user "$MATRIX" run r.yaml --out run --dry-run > dry.txt 2> err.txt || fail "dry run: $(cat err.txt)"
expect_grep "^matrix: dry run: container 'img': cpus: 2, memory: 1g cannot be enforced: .*: the run would stop with this error$" err.txt "the dry run's warning"
check_dry "rootless docker on cgroups v1" docker --gpus=all ""
rm fake/rootless
# a rootful one enforces them on cgroups v1
as_user "$MATRIX" run r.yaml --out run --dry-run > dry.txt 2> err.txt || fail "dry run: $(cat err.txt)"
grep -q "cannot be enforced" err.txt && fail "a rootful docker's limits refused: $(cat err.txt)"
rm fake/cgroup-version

# podman, when it starts: CDI GPU pass-through, never --user
touch fake/podman-up
as_user "$MATRIX" run r.yaml --out run --dry-run > dry.txt 2> err.txt || fail "dry run: $(cat err.txt)"
check_dry "podman" podman --device=nvidia.com/gpu=all ""
# the runtime named is the one probed and used
sed 's/^  runtime: auto$/  runtime: docker/' r.yaml > rd.yaml
as_user "$MATRIX" run rd.yaml --out run --dry-run > dry.txt 2> err.txt || fail "dry run: $(cat err.txt)"
check_dry "runtime docker" docker --gpus=all "--user=$user "

# neither starts: the run stops before any point (exit 2); the dry run says
# so and shows the commands of the first runtime installed
rm fake/podman-up fake/docker-up
expect_status 2 as_user "$MATRIX" run r.yaml --out run > out.txt 2> err.txt
expect_grep "^matrix: container 'img' needs podman or docker, and it does not work here (podman: .*fake podman is down; docker: .*fake docker is down)" err.txt "the run's error"
as_user "$MATRIX" run r.yaml --out run --dry-run > dry.txt 2> err.txt || fail "dry run: $(cat err.txt)"
expect_grep "^matrix: dry run: container 'img' needs podman or docker, and it does not work here (.*): the run would stop with this error; the commands below are podman's once it works$" err.txt "the dry run's warning"
check_dry "no runtime" podman --device=nvidia.com/gpu=all ""

# the containers' cache directory cannot be made (a file in its way): the
# run stops before any point (exit 2); the dry run says so and goes on
touch fake/docker-up notdir
(
	XDG_CACHE_HOME=$d/notdir
	expect_status 2 as_user "$MATRIX" run r.yaml --out run > out.txt 2> err.txt
	expect_grep "^matrix: containers.cache: cannot make or write '$d/notdir/matrix/containers': Not a directory; name a directory this user can write" err.txt "the cache error"
	[ -e run ] && fail "the run went on: $(cat out.txt)"
	as_user "$MATRIX" run r.yaml --out run --dry-run > dry.txt 2> err.txt || fail "dry run: $(cat err.txt)"
	expect_grep "^matrix: dry run: containers.cache: cannot make or write .*: the run would stop with this error$" err.txt "the dry run's cache warning"
)
# containers.cache: off mounts nothing and sets no variable; the point's log
# and env.txt say so
as_user "$MATRIX" run r.yaml containers.cache=off --out run --only device=cpu --no-report > out.txt 2>&1 ||
	fail "the run without a cache: $(cat out.txt)"
grep '^run ' fake/calls.docker > off.txt
grep -q "matrix-cache\|MATRIX_PLAN_CACHE\|TORCHINDUCTOR\|TRITON" off.txt && fail "a cache with containers.cache: off: $(cat off.txt)"
expect_grep "^container_cache: none (containers.cache: off)$" run/env.txt "env.txt without a cache"
expect_eq "$(head -n 1 run/logs/*.log)" "matrix: container cache: none mounted (containers.cache: off)" "the point's log without a cache"
rm -rf run fake/calls.* fake/docker-up

# without containers too: a CUDA point's CUDA_VISIBLE_DEVICES (its `gpus`
# level's count of the runner's GPUs), a CPU point's none
cat > l.yaml <<'YAML'
name: dryl
engine: command
command: [sh, -c, 'echo status=ok > "$MATRIX_RESULT"']
factors:
  device: [cpu, cuda]
  gpus: [1, 2]
order: given
YAML
# (a command engine runs in the recipe's directory: "cd DIR && " first)
"$MATRIX" run l.yaml --out lrun --dry-run 2> /dev/null > ldry0.txt
expect_eq "$(grep -c "^cd $d && \(CUDA_VISIBLE_DEVICES=[^ ]* \)\{0,1\}MATRIX_RESULT=[^ ]* sh -c 'echo status=ok > \"\$MATRIX_RESULT\"'$" ldry0.txt)" 4 "the local commands"
sed -e 's/^cd [^ ]* && //' -e 's/ .*//' ldry0.txt > ldry.txt
printf "MATRIX_RESULT=$d/lrun/logs/%s.result\\n" $("$MATRIX" expand l.yaml --format csv | sed -n '2,3s/,.*//p') > lwant.txt
printf 'CUDA_VISIBLE_DEVICES=3\nCUDA_VISIBLE_DEVICES=3,5\n' >> lwant.txt
diff lwant.txt ldry.txt || fail "the dry run's environment of local points (- expected, + got)"

# a helper matrix runs (here a runtime's 'info', elsewhere a build, squeue,
# git) ends when matrix does: killed by a SIGTERM it did not handle, matrix
# left a long `podman build` running
mkdir "$work/bin2"
cat > "$work/bin2/podman" <<'EOT'
#!/bin/sh
echo $$ > "$FAKE_DIR/info.pid"
exec sleep 60
EOT
chmod 755 "$work/bin2/podman"
sed 's/^  runtime: auto$/  runtime: podman/' r.yaml > rp.yaml
rm -f "$FAKE_DIR/info.pid"
PATH=$work/bin2:$PATH "$MATRIX" run rp.yaml --out prun --dry-run > /dev/null 2>&1 &
mpid=$!
i=0; while [ ! -s "$FAKE_DIR/info.pid" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -s "$FAKE_DIR/info.pid" ] || fail "the stand-in podman's info never ran"
kill -TERM $mpid
wait $mpid 2>/dev/null || true
hp=$(cat "$FAKE_DIR/info.pid")
i=0; while kill -0 "$hp" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kill -0 "$hp" 2>/dev/null && { kill "$hp"; fail "the runtime's 'info' outlived matrix"; }
echo ok
