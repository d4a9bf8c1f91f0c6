# tests/cudasim/setup.sh - sourced by the simulator's scripts (after
# `set -u`, with NAME set to the script's name): B the build tree, M the
# simulated module, E the engine, P ops_check, X matrix; SKIP (exit 77)
# where the build has no CUDA; W a work directory removed at exit (kept
# with CUDASIM_KEEP=1), which also holds the plan cache (MATRIX_PLAN_CACHE:
# no test reads another's choices, none writes ~/.cache); rc 0, fail
# MESSAGE (a FAIL line, rc 1); has / hasnt LOG PATTERN WHAT: a FAIL unless
# LOG has / has no line matching PATTERN.
B=${top_builddir:?}
M=$B/tests/cudasim/matrix-engine-cudasim.so
E=$B/engine/matrix-engine
P=$B/tests/gpu/ops_check
X=$B/matrix/matrix
if [ ! -f "$M" ] || [ ! -x "$P" ] || [ ! -x "$E" ]; then
  echo "SKIP: built without CUDA (no $M or $P)"
  exit 77
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/$NAME.XXXXXX")
if [ -n "${CUDASIM_KEEP:-}" ]; then echo "logs kept in $W"; else trap 'rm -rf "$W"' EXIT; fi
MATRIX_PLAN_CACHE=$W/plan-cache
export MATRIX_PLAN_CACHE
rc=0
fail() { echo "FAIL: $*"; rc=1; }
has() { grep -q -e "$2" "$1" || fail "$3: no line matching '$2' in its log"; }
hasnt() { ! grep -q -e "$2" "$1" || fail "$3: a line matching '$2': $(grep -m1 -e "$2" "$1")"; }
