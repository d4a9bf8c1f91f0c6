# container_lib.sh - sourced by tests/e2e/container_*.sh after tests/setup:
# a Debian bookworm base image from Debian's mirror (debootstrap, built once
# per build tree and cached in tests/container-cache/), a private container
# runtime (dockerd with its own data root and socket, or rootful podman with
# its own configuration and storage) stopped at the end, and the checks both
# runtimes must pass. Skips (77) only where the runtime cannot start.
skip() { echo "SKIP: $*" >&2; exit 77; }
: "${rt:?set rt=docker or rt=podman before sourcing}"
[ "$(id -u)" = 0 ] || skip "$rt tests run as root (a private rootful $rt)"
command -v "$rt" >/dev/null || skip "$rt is not installed (tests/install-deps.sh installs it)"

# the base image's rootfs tarball, cached across the test run
cache=${top_builddir:-$top_srcdir}/tests/container-cache
mkdir -p "$cache"
base_tar=$cache/debian-bookworm.tar
(
	flock 9
	"$top_srcdir/containers/debootstrap-base.sh" "$base_tar"
) 9>"$cache/.lock" > "$work/debootstrap.err" 2>&1 ||
	skip "no base image: $(tail -n 3 "$work/debootstrap.err")"

stop_runtime() { :; }
trap 'stop_runtime; rm -rf "$work"' EXIT
case $rt in
docker)
	command -v dockerd >/dev/null || skip "dockerd is not installed (docker.io)"
	d=$work/docker
	mkdir -p "$d"
	DOCKER_HOST=unix://$d/sock
	export DOCKER_HOST
	dockerd --iptables=false --bridge=none --data-root "$d/data" --exec-root "$d/exec" \
		--pidfile "$d/pid" -H "$DOCKER_HOST" > "$d/log" 2>&1 &
	dockerd_pid=$!
	stop_runtime() {
		docker rm -f $(docker ps -aq) > /dev/null 2>&1 || true
		kill "$dockerd_pid" 2>/dev/null || true
		wait "$dockerd_pid" 2>/dev/null || true
		awk -v d="$d/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r | xargs -r umount -l
	}
	i=0
	until docker info > /dev/null 2>&1; do
		i=$((i + 1))
		alive "$dockerd_pid" && [ $i -lt 60 ] || skip "dockerd does not start: $(tail -n 3 "$d/log")"
		sleep 0.5
	done
	;;
podman)
	command -v runc >/dev/null || skip "runc is not installed"
	d=$work/podman
	mkdir -p "$d"
	cat > "$d/containers.conf" <<CONF
[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
events_logger = "file"
CONF
	cat > "$d/storage.conf" <<CONF
[storage]
driver = "overlay"
runroot = "$d/run"
graphroot = "$d/root"
CONF
	CONTAINERS_CONF=$d/containers.conf CONTAINERS_STORAGE_CONF=$d/storage.conf
	export CONTAINERS_CONF CONTAINERS_STORAGE_CONF
	stop_runtime() { podman system reset -f > /dev/null 2>&1 || true; }
	podman info > "$d/info" 2>&1 || skip "podman does not start: $(tail -n 3 "$d/info")"
	;;
esac
"$rt" import "$base_tar" localhost/debian:bookworm > /dev/null 2>"$work/import.err" ||
	fail "$rt import: $(cat "$work/import.err")"

# --- the checks -------------------------------------------------------------------
# An image built from a build: entry on first use, with a marker and the
# engine only it holds.
mkdir ctx
printf 'FROM localhost/debian:bookworm\nRUN echo inside > /matrix-marker\nCOPY engine.sh /engine.sh\n' > ctx/Containerfile
# os: the marker and Debian's os-release, seen from inside; crash: SIGSEGV;
# oom: over the memory limit; sleep: past the timeout
cat > ctx/engine.sh <<'SH'
case $1 in
os) grep -q bookworm /etc/os-release && [ "$(cat /matrix-marker)" = inside ] || exit 9
    printf 'status=ok\nthroughput=%s\nunit=items/s\n' "$2" > "$MATRIX_RESULT" ;;
crash) sh -c 'kill -SEGV $$' ;;
oom) head -c 400000000 /dev/zero | tail -c 400000000 > /dev/null ;;
sleep) sleep 60 ;;
esac
SH
cat > r.yaml <<YAML
name: ctr
engine: command
command: [sh, /engine.sh, "{what}", "{n}"]
measure: {timeout: 6s, grace: 1s}
containers:
  runtime: $rt
  memory: 64m
  marked: {build: ctx}
factors:
  what: [os, crash, oom, sleep]
  n: [1, 2]
  container: [marked]
YAML
# --dry-run shows the full container command
"$MATRIX" run r.yaml --out run --dry-run > dry.txt 2>/dev/null
expect_grep "^$rt run --name=matrix-[0-9a-f]* --network=none --memory=64m --memory-swap=64m --volume=$work/run:$work/run --workdir=$work " dry.txt "container command"
# the os points first (resume skips them later), then the rest
"$MATRIX" run r.yaml --out run --only what=os --no-report > out1.txt 2> err1.txt || fail "os points: $(cat err1.txt out1.txt)"
"$MATRIX" run --resume run --no-report > out2.txt 2> err2.txt && fail "the failing points passed"
expect_grep "running 6 of 8 points" out2.txt "resume skips the finished container points"
st() { awk -F, -v w="$1" 'NR > 1 && $4 == w { print $7 }' run/results.csv | sort -u; }
expect_eq "$(st os)" ok "points inside the image"
expect_eq "$(st crash)" crashed "a crashing container"
expect_eq "$(st oom)" oom "an OOM-killed container"
expect_eq "$(st sleep)" timeout "a container past the timeout"
expect_eq "$(csv_col run/results.csv id | sort | uniq -d | wc -l)" 0 "rows per point"
expect_eq "$(csv_col run/results.csv id | wc -l)" 8 "rows"
# every row names its image's id
id=$("$rt" image inspect --format '{{.Id}}' localhost/matrix-ctr-marked)
expect_eq "$(grep -c "image_id=$id" run/results.csv)" 8 "image ids"
# no container left behind, the timed-out ones included
expect_eq "$("$rt" ps -aq | wc -l)" 0 "containers left"
# the same shape as a local run: the columns, but for the container factor
sed -e '/^  runtime:/d' -e '/^containers:/,/^factors:/{/^factors:/!d}' -e '/container: \[/d' r.yaml > local.yaml
"$MATRIX" run local.yaml --out local --only what=os --no-report > /dev/null 2>&1 && fail "the marker exists on the host"
expect_eq "$(head -n 1 run/results.csv | sed 's/,container,/,/')" "$(head -n 1 local/results.csv)" "columns"
echo "$rt: 8 container points ok"
