# container_rootless.sh - rootless podman (issue 14): a point run by a user
# who is not root, podman in that user's own user namespace (sub-ids from
# /etc/subuid and /etc/subgid, newuidmap from uidmap), its storage (overlay,
# else vfs) and runtime directory in the test's work directory. The test
# makes that user (matrix-rootless, no home, no login shell) and removes it
# at the end, one run of this test at a time on the machine (flock). Checks: the dry run's
# command has no --user; the point runs inside the image as the container's
# root, which is the user outside, so the files it writes into the run
# directory are the user's; env.txt and the row name the image; no container
# is left; and where podman runs rootless on cgroups v1 (it ignores --cpus
# and --memory there, with a warning only) a container with a memory limit
# is an error before any point runs (exit 2).
. "$top_srcdir/tests/setup"
rt=podman base_only=1
. "$top_srcdir/tests/e2e/container_lib.sh"
for p in newuidmap newgidmap setpriv useradd userdel flock; do
	command -v $p > /dev/null || skip "$p is not installed (tests/install-deps.sh installs uidmap, podman)"
done
user=matrix-rootless
lock=/run/lock/matrix-rootless-test.lock
[ -d /run/lock ] || lock=/tmp/matrix-rootless-test.lock
exec 8> "$lock"
flock 8
# the user's processes (podman's pause process, which keeps its user
# namespace), then the user
cleanup() {
	if id "$user" > /dev/null 2>&1; then
		for pid in $(ps -o pid= -u "$user"); do kill "$pid" 2> /dev/null || true; done
		i=0
		while [ -n "$(ps -o pid= -u "$user")" ] && [ $i -lt 50 ]; do i=$((i + 1)); sleep 0.1; done
		userdel "$user" > /dev/null 2>&1 || echo "container_rootless: userdel $user failed" >&2
	fi
	rm -rf "$work"
}
trap cleanup EXIT
# one that a killed run of this test left is used again (and removed)
id "$user" > /dev/null 2>&1 ||
	useradd -M -d /nonexistent -s /usr/sbin/nologin "$user" 2> useradd.err || skip "useradd: $(cat useradd.err)"
grep -q "^$user:" /etc/subuid 2> /dev/null && grep -q "^$user:" /etc/subgid 2> /dev/null ||
	skip "useradd gave $user no sub-ids in /etc/subuid and /etc/subgid (SUB_UID_COUNT in /etc/login.defs)"
uid=$(id -u "$user")
gid=$(id -g "$user")
u=$work/u
mkdir -p "$u/home" "$u/xdg"
cat > "$u/containers.conf" << CONF
[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
events_logger = "file"
CONF
cat > "$u/storage.conf" << CONF
[storage]
driver = "overlay"
runroot = "$u/xdg/storage"
graphroot = "$u/home/storage"
CONF
chown -R "$uid:$gid" "$u"
chmod 700 "$u/xdg"
chmod 711 "$work"
as_user() {
	setpriv --reuid="$uid" --regid="$gid" --init-groups env HOME="$u/home" XDG_RUNTIME_DIR="$u/xdg" XDG_CACHE_HOME="$u/home/.cache" \
		XDG_CONFIG_HOME="$u/home/.config" XDG_DATA_HOME="$u/home/.local/share" \
		CONTAINERS_CONF="$u/containers.conf" CONTAINERS_STORAGE_CONF="$u/storage.conf" "$@"
}
cd "$u"
# overlay (unprivileged overlayfs: Linux 5.13 on), else vfs (copies)
as_user podman info > info.txt 2>&1 || {
	sed -i 's/^driver = "overlay"$/driver = "vfs"/' storage.conf
	as_user podman info > info.txt 2>&1 || skip "rootless podman does not start: $(tail -n 3 info.txt)"
}
expect_eq "$(as_user podman info --format '{{.Host.Security.Rootless}}' 2> /dev/null)" true "podman rootless"
as_user podman import - localhost/debian:bookworm < "$base_tar" > import.txt 2>&1 ||
	fail "rootless podman import: $(tail -n 3 import.txt)"

# inside the image (podman's /run/.containerenv), as the container's root
cat > r.yaml << 'YAML'
name: rootless
engine: command
command: [sh, -c, '[ -e /run/.containerenv ] || exit 9; id -u > "$MATRIX_RESULT.uid"; printf "status=ok\nthroughput=%s\nunit=items/s\n" "$1" > "$MATRIX_RESULT"', engine, "{n}"]
containers:
  runtime: podman
  deb: localhost/debian:bookworm
factors:
  container: [deb]
  n: [1]
YAML
chown "$uid:$gid" r.yaml
as_user "$MATRIX" run r.yaml --out run --dry-run > dry.txt 2> dryerr.txt || fail "dry run: $(cat dryerr.txt)"
expect_grep "^podman run --name=matrix-[0-9a-f]* --network=none --volume=$u/run:$u/run --workdir=$u " dry.txt "the command"
grep -q -- --user= dry.txt && fail "a --user under rootless podman: $(cat dry.txt)"
as_user "$MATRIX" run r.yaml --out run --no-report > out.txt 2>&1 || fail "the run: $(cat out.txt)"
expect_eq "$(csv_col run/results.csv status)" ok "the point's status"
expect_eq "$(cat run/logs/*.result.uid)" 0 "the uid inside"
expect_eq "$(stat -c %u:%g run/logs/*.result)" "$uid:$gid" "the owner of the engine's result file"
id=$(as_user podman image inspect --format '{{.Id}}' localhost/debian:bookworm 2> /dev/null)
expect_grep "^container: deb runtime=podman image=localhost/debian:bookworm id=$id\( digest=[^ ]*\)\{0,1\}$" run/env.txt \
	"env.txt's image line"
expect_eq "$(grep -c "image_id=$id" run/results.csv)" 1 "the row's image id"
expect_eq "$(as_user podman ps -aq 2> /dev/null | wc -l)" 0 "containers left"

# an image with a USER of its own: as that user (a sub-id outside) the point
# could not write its result; it runs with --user=0:0, the user outside
mkdir uctx
printf 'FROM localhost/debian:bookworm\nUSER 4343:4343\n' > uctx/Containerfile
sed -e 's/^  deb: localhost\/debian:bookworm$/  deb: {build: uctx}/' r.yaml > ru.yaml
chown -R "$uid:$gid" uctx ru.yaml
as_user "$MATRIX" run ru.yaml --out urun --no-report > uout.txt 2>&1 || fail "an image with its own USER: $(cat uout.txt urun/logs/*.log)"
expect_eq "$(csv_col urun/results.csv status)" ok "the point in an image with its own USER"
expect_eq "$(cat urun/logs/*.result.uid)" 0 "the uid inside: the container's root"
expect_eq "$(stat -c %u:%g urun/logs/*.result)" "$uid:$gid" "the owner of its result file"
expect_grep ' user=0:0 image_user=4343:4343$' urun/env.txt "env.txt names both users"

# a memory limit that rootless podman on cgroups v1 would ignore
cgv=$(as_user podman info --format '{{.Host.CgroupsVersion}}' 2> /dev/null)
if [ "$cgv" = v1 ]; then
	sed 's/^  runtime: podman$/  runtime: podman\n  memory: 64m/' r.yaml > m.yaml
	chown "$uid:$gid" m.yaml
	expect_status 2 as_user "$MATRIX" run m.yaml --out mrun > mout.txt 2> merr.txt
	expect_grep "^matrix: container 'deb': memory: 64m cannot be enforced: podman runs rootless on cgroups v1 here, where it ignores --cpus and --memory; run as root, boot with cgroups v2" merr.txt "the limits error"
	[ -e mrun/results.csv ] && fail "a point ran: $(cat mrun/results.csv)"
	echo "rootless podman: a point as uid $uid, the memory limit refused on cgroups v1"
else
	echo "rootless podman: a point as uid $uid (cgroups $cgv: the cgroups v1 limits check does not apply)"
fi
