# container_lib.sh - sourced by tests/e2e/container_*.sh after tests/setup:
# a Debian bookworm base image from Debian's mirror (debootstrap, built once
# per build tree and cached in tests/container-cache/) imported as
# localhost/debian:bookworm into a private container runtime (dockerd with
# its own data root and socket, or rootful podman with its own configuration
# and storage) stopped at the end. Skips (77) only where the runtime cannot
# start. The checks both runtimes must pass are container_checks.sh;
# rootless podman is container_rootless.sh's.
skip() { echo "SKIP: $*" >&2; exit 77; }
: "${rt:?set rt=docker or rt=podman before sourcing}"
[ "$(id -u)" = 0 ] || skip "$rt tests run as root (a private rootful $rt)"
command -v "$rt" >/dev/null || skip "$rt is not installed (tests/install-deps.sh installs it)"

# the containers' cache directory (images_cache) in the test's own
# directory, not the user's ~/.cache
XDG_CACHE_HOME=$work/xdg-cache
unset MATRIX_PLAN_CACHE
export XDG_CACHE_HOME

# the base image's rootfs tarball, cached across the test run
cache=${top_builddir:-$top_srcdir}/tests/container-cache
mkdir -p "$cache"
base_tar=$cache/debian-bookworm.tar
(
	flock 9
	"$top_srcdir/containers/debootstrap-base.sh" "$base_tar"
) 9>"$cache/.lock" > "$work/debootstrap.err" 2>&1 ||
	skip "no base image: $(tail -n 3 "$work/debootstrap.err")"
# base_only=1: the tarball ($base_tar) only, no runtime (container_rootless.sh)
[ -z "${base_only:-}" ] || return 0

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
tmp_dir = "$d/tmp"
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
