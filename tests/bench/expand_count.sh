# `matrix expand --count` on a grid of 2^20 points (20 factors of 2 levels,
# one exclusion): time and peak memory, against the same command on 2^10
# points (the peer: memory must stay flat). Target: under 1 s.
set -eu
: "${MATRIX:?}"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
mk() {
	echo "name: big"; echo "engine: command"; echo "command: [true]"; echo "factors:"
	i=0; while [ $i -lt "$1" ]; do echo "  f$i: [a, b]"; i=$((i + 1)); done
	echo "exclude:"; echo "  - {f0: b, f1: b}"
}
mk 20 > big.yaml
mk 10 > small.yaml
for r in small big; do
	out=$( { /usr/bin/time -f '%e %M' "$MATRIX" expand $r.yaml --count > $r.count; } 2>&1 )
	set -- $out
	printf '%s: %s points in %s s, peak RSS %s KiB\n' "$r" "$(cat $r.count)" "$1" "$2"
done
