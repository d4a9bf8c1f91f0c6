# container_checks.sh - sourced by container_docker.sh and
# container_podman.sh after container_lib.sh ($rt running, the base image
# imported): what both runtimes must pass.
# An image built from a build: entry on first use, with a marker and the
# engine only it holds.
# Run on its own (make check TESTS=...), it has no runtime and no helpers, and
# its wait loops would never end: refuse at once.
if [ -z "${rt:-}" ] || ! command -v fail > /dev/null 2>&1; then
	echo "container_checks.sh is sourced by container_docker.sh and container_podman.sh;" \
		"run those: make check TESTS='tests/e2e/container_docker.sh tests/e2e/container_podman.sh'" >&2
	exit 99
fi
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
hang) [ -e "${MATRIX_RESULT%/logs/*}/go" ] || sleep 300
    printf 'status=ok\nthroughput=1\nunit=items/s\n' > "$MATRIX_RESULT" ;;
esac
SH
cat > r.yaml <<YAML
name: ctr
engine: command
command: [sh, /engine.sh, "{what}", "{n}"]
# (15 s: a CI run's oom point, its container started while
# container_images.sh built images beside it, was still running at 6 s)
measure: {timeout: 15s, grace: 1s}
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
# env.txt names each container level's runtime, image, id and (what the
# runtime says of it: none for an image built here, under docker) digests
digest=$("$rt" image inspect --format '{{.RepoDigests}}' localhost/matrix-ctr-marked | tr -d '[]')
expect_grep "^container: marked runtime=$rt image=localhost/matrix-ctr-marked id=$id${digest:+ digest=$digest}$" run/env.txt "env.txt's image line"
if [ -n "$digest" ]; then
	expect_eq "$(grep -c "image_digest=$digest" run/results.csv)" 8 "image digests"
else
	grep -q image_digest= run/results.csv && fail "a digest in the rows, none from $rt: $(cat run/results.csv)"
fi
# no container left behind, the timed-out ones included
expect_eq "$("$rt" ps -aq | wc -l)" 0 "containers left"
# the same shape as a local run: the columns, but for the container factor
sed -e '/^  runtime:/d' -e '/^containers:/,/^factors:/{/^factors:/!d}' -e '/container: \[/d' r.yaml > local.yaml
"$MATRIX" run local.yaml --out local --only what=os --no-report > /dev/null 2>&1 && fail "the marker exists on the host"
expect_eq "$(head -n 1 run/results.csv | sed 's/,container,/,/')" "$(head -n 1 local/results.csv)" "columns"

# An image that fails to build fails its points, with the build log's last
# lines; the study goes on with the other containers. `matrix build` says
# the same, and builds what is missing.
mkdir bad
printf 'FROM localhost/debian:bookworm\nRUN echo "matrix-test: no such package" && exit 3\n' > bad/Containerfile
cat > b.yaml <<YAML
name: ctr
engine: command
command: [sh, /engine.sh, "{what}", "{n}"]
containers:
  runtime: $rt
  marked: {build: ctx}
  broken: {build: bad}
factors:
  what: [os]
  n: [1, 2]
  container: [broken, marked]
YAML
expect_status 1 "$MATRIX" run b.yaml --out brun --no-report > bout.txt 2> berr.txt
st_of() { awk -F, -v c="$1" 'NR > 1 && $6 == c { print $7 }' brun/results.csv | sort -u; }
expect_eq "$(st_of marked)" ok "the other container's points"
expect_eq "$(st_of broken)" failed "the points of an image that fails to build"
[ "$(grep -c "container 'broken': no image: '$rt build' of 'bad' failed (exit status [0-9]*; brun/logs/build-broken.log): .*matrix-test: no such package" brun/results.csv)" = 2 ] ||
	fail "failure reasons: $(cat brun/results.csv)"
expect_grep "matrix-test: no such package" brun/logs/build-broken.log "the build log"
expect_grep "building 'localhost/matrix-ctr-broken' from 'bad' with $rt; log in" bout.txt "the build announced"
expect_status 1 "$MATRIX" build b.yaml > build1.txt 2> build1.err
# a line per level: name, runtime, image, id, digest (env.txt's, the rows'),
# status; the digest as env.txt has it (podman: its own, docker: none)
expect_grep "^container	runtime	image	id	digest	status$" build1.txt "build: the header"
expect_grep "^marked	$rt	localhost/matrix-ctr-marked	$id	${digest:-no digest: local build}	present$" build1.txt "build: a present image"
expect_grep "^broken	$rt	localhost/matrix-ctr-broken	-	-	FAILED$" build1.txt "build: a failed one"
expect_grep "matrix: build: 1 of 2 images could not be had" build1.err "build: the verdict"
"$MATRIX" build b.yaml container=marked --rebuild > build2.txt 2> build2.err || fail "rebuild: $(cat build2.err)"
expect_grep "^marked	$rt	localhost/matrix-ctr-marked	\(sha256:\)\{0,1\}[0-9a-f]\{64\}	[^	]*	built$" build2.txt "build --rebuild"
# what a run records of the rebuilt image is what the build printed
"$MATRIX" run r.yaml --out run2 --only what=os,n=1 --no-report > /dev/null 2>&1 || fail "a run after the rebuild"
awk -F'\t' '$1 == "marked" { d = $5 ~ /^no digest/ ? "" : " digest=" $5
	print "container: marked runtime=" $2 " image=" $3 " id=" $4 d }' build2.txt > want_env.txt
grep '^container: ' run2/env.txt > got_env.txt
diff want_env.txt got_env.txt || fail "env.txt's image line (+) differs from matrix build's (-)"

# A container the runtime cannot start (on a network that does not exist):
# the point fails with the runtime's error as its reason (the client's last
# line may be a hint only, such as "Run 'docker run --help'")
sed 's/^  memory: 64m$/  network: matrix-no-such-network/' r.yaml > c.yaml
expect_status 1 "$MATRIX" run c.yaml --out crun --only what=os,n=1 --no-report > cout.txt 2>&1
expect_eq "$(csv_col crun/results.csv status)" failed "a container the runtime cannot start"
grep -q "exit status 125: matrix: $rt could not start the container: .*rror.*matrix-no-such-network" crun/results.csv ||
	fail "its reason: $(cat crun/results.csv crun/logs/*.log)"
expect_eq "$("$rt" ps -aq | wc -l)" 0 "containers left"

# A runner killed by SIGKILL mid-point leaves its container running (nobody
# is left to remove it): resuming the directory removes it first.
cat > k.yaml <<YAML
name: ctr
engine: command
command: [sh, /engine.sh, "{what}", "{n}"]
measure: {timeout: 5m}
containers:
  runtime: $rt
  marked: {build: ctx}
factors:
  what: [hang]
  n: [1]
  container: [marked]
YAML
"$MATRIX" run k.yaml --out krun --no-report > kout.txt 2>&1 &
runner=$!
i=0
until [ -n "$("$rt" ps -q --filter label=matrix.point)" ]; do
	i=$((i + 1))
	[ $i -lt 300 ] && alive "$runner" || fail "no container started: $(cat kout.txt)"
	sleep 0.2
done
kill -9 "$runner"
wait "$runner" 2>/dev/null || true
expect_eq "$("$rt" ps -aq --filter "label=matrix.run" | wc -l)" 1 "the killed runner's container"
touch krun/go
"$MATRIX" run --resume krun --no-report > kout2.txt 2>&1 || fail "resume: $(cat kout2.txt)"
expect_grep "removed 1 $rt container that an earlier runner of this directory left" kout2.txt "stale containers removed"
expect_eq "$(csv_col krun/results.csv status)" ok "the resumed point"
expect_eq "$("$rt" ps -aq | wc -l)" 0 "containers left after resume"

# Run by a user who is not root, a rootful docker's containers run as that
# user (--user=UID:GID): the files the engine writes into the run directory
# are the user's. (Rootful podman is root's only: a user's podman is
# rootless, and its containers' root is the user already.)
if [ "$rt" = docker ] && command -v setpriv > /dev/null; then
	chmod 711 "$work"
	chmod 666 "${DOCKER_HOST#unix://}"
	mkdir u
	cp r.yaml u/
	chown -R 4242:4242 u
	(cd u && HOME=$work/u XDG_CACHE_HOME= setpriv --reuid=4242 --regid=4242 --clear-groups \
		"$MATRIX" run r.yaml --out urun --only what=os,n=1 --no-report) > uout.txt 2>&1 ||
		fail "a run by uid 4242: $(cat uout.txt)"
	expect_eq "$(csv_col u/urun/results.csv status)" ok "the point run by uid 4242"
	expect_eq "$(stat -c %u:%g u/urun/logs/*.result)" 4242:4242 "the owner of the engine's result file"
fi
# An image with a USER of its own (not root), run by root: its user could
# write neither the run directory nor the cache (every point failed,
# 'Permission denied' on its result file), so the container runs with
# --user=0:0, the runner on the host; the dry run shows it, the point's log
# and env.txt say so
mkdir uctx
printf 'FROM localhost/debian:bookworm\nRUN echo "app:x:4343:4343::/tmp:/bin/sh" >> /etc/passwd && echo "app:x:4343:" >> /etc/group\nUSER app\n' > uctx/Containerfile
cat > user.yaml <<YAML
name: ctr
engine: command
command: [sh, -c, 'echo "uid \$(id -u)"; echo x > "\$MATRIX_PLAN_CACHE/user-test" || exit 7;
  printf "status=ok\\nthroughput=1\\nunit=items/s\\n" > "\$MATRIX_RESULT"']
containers:
  runtime: $rt
  app: {build: uctx}
factors:
  container: [app]
YAML
"$MATRIX" run user.yaml --out urun2 --no-report > uout2.txt 2>&1 || fail "a point in an image with its own USER: $(cat uout2.txt urun2/logs/*.log)"
expect_eq "$(csv_col urun2/results.csv status)" ok "the point in an image with its own USER"
expect_grep '^uid 0$' urun2/logs/*[0-9a-f].log "the point ran as the container's root"
expect_grep "^matrix: container user: --user=0:0, not the image's USER 'app'" urun2/logs/*[0-9a-f].log "the log says the user changed"
expect_grep '^container: app runtime=[a-z]* image=localhost/matrix-ctr-app id=[0-9a-f:sha]* .*user=0:0 image_user=app$' urun2/env.txt "env.txt names both users"
"$MATRIX" run user.yaml --out urun3 --dry-run > udry.txt 2>/dev/null
expect_grep "^$rt run --name=matrix-[0-9a-f]* --network=none --user=0:0 " udry.txt "the dry run shows --user=0:0"
# an image without a USER of its own gets no --user (root as it was)
"$MATRIX" run r.yaml --out run-nouser --dry-run > ndry.txt 2>/dev/null
grep -q -- '--user' ndry.txt && fail "a --user for an image without a USER: $(grep -m1 -- --user ndry.txt)"

# The cache directory: every container gets $XDG_CACHE_HOME/matrix/containers
# mounted read-write at /matrix-cache, MATRIX_PLAN_CACHE pointed at its plan/
# (shared by the images) and the PyTorch caches at torch/ID (the image's
# own). What the first point's container writes there, the second one reads
# (order: given, one point at a time); containers.cache: off mounts nothing,
# containers.cache: DIR mounts DIR.
cat > cache.yaml <<YAML
name: ctr
engine: command
command: [sh, -c, 'case \$1 in
  write) [ "\$MATRIX_PLAN_CACHE" = /matrix-cache/plan ] || exit 7;
    echo "\$MATRIX_POINT_ID" > "\$MATRIX_PLAN_CACHE/plans-test";
    mkdir -p "\$TORCHINDUCTOR_CACHE_DIR" "\$TRITON_CACHE_DIR" || exit 7;
    echo "\$MATRIX_POINT_ID" > "\$TORCHINDUCTOR_CACHE_DIR/fx" ;;
  read) p=\$(cat "\$MATRIX_PLAN_CACHE/plans-test") && f=\$(cat "\$TORCHINDUCTOR_CACHE_DIR/fx") || exit 8;
    echo "read \$p \$f" ;;
  off) [ -z "\${MATRIX_PLAN_CACHE:-}\${TORCHINDUCTOR_CACHE_DIR:-}\${TRITON_CACHE_DIR:-}" ] && [ ! -e /matrix-cache ] || exit 9 ;;
  esac;
  printf "status=ok\\nthroughput=1\\nunit=items/s\\n" > "\$MATRIX_RESULT"', engine, "{step}"]
containers:
  runtime: $rt
  marked: {build: ctx}
factors:
  step: [write, read]
  container: [marked]
order: given
YAML
host=$XDG_CACHE_HOME/matrix/containers
key=$("$rt" image inspect --format '{{.Id}}' localhost/matrix-ctr-marked | sed 's/^sha256://' | cut -c1-12)
[ -e "$host/plan/plans-test" ] && fail "a cache file before the run"
"$MATRIX" run cache.yaml --out cache --no-report > cout.txt 2>&1 || fail "the cache points: $(cat cout.txt)"
step_id() { awk -F, -v s="$1" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$c["step"] == s { print $c["id"] }' cache/results.csv; }
wid=$(step_id write)
rid=$(step_id read)
[ -n "$wid" ] && [ -n "$rid" ] || fail "the cache points' rows: $(cat cache/results.csv)"
expect_grep "^read $wid $wid$" "cache/logs/$rid.log" "the second container reads what the first wrote"
expect_eq "$(cat "$host/plan/plans-test")" "$wid" "the plan cache file on the host"
expect_eq "$(cat "$host/torch/$key/inductor/fx")" "$wid" "the image's inductor cache on the host"
[ -d "$host/torch/$key/triton" ] || fail "no Triton cache directory on the host: $(ls -R "$host")"
expect_eq "$(stat -c %a "$host")" 700 "the cache directory's mode"
expect_eq "$(head -n 1 "cache/logs/$wid.log")" "matrix: container cache: $host mounted read-write at /matrix-cache; MATRIX_PLAN_CACHE=/matrix-cache/plan TORCHINDUCTOR_CACHE_DIR=/matrix-cache/torch/$key/inductor TRITON_CACHE_DIR=/matrix-cache/torch/$key/triton" "the point's log on the cache"
expect_grep "^container_cache: $host mounted at /matrix-cache$" cache/env.txt "env.txt's cache line"
"$MATRIX" run cache.yaml containers.cache=off factors.step=off --out cache-off --no-report > cout.txt 2>&1 ||
	fail "a point with containers.cache: off: $(cat cout.txt cache-off/logs/*.log)"
expect_grep "^container_cache: none (containers.cache: off)$" cache-off/env.txt "env.txt without a cache"
"$MATRIX" run cache.yaml containers.cache="$work/named" factors.step=write --out cache-named --no-report > cout.txt 2>&1 ||
	fail "a point with containers.cache: DIR: $(cat cout.txt cache-named/logs/*.log)"
[ -s "$work/named/plan/plans-test" ] || fail "nothing in the named cache directory: $(ls -R "$work/named")"
expect_eq "$("$rt" ps -aq | wc -l)" 0 "containers left"
echo "$rt: container points, a failed build, matrix build, a killed runner, --user and the cache ok"
