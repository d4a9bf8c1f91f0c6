# 'matrix --version' and 'matrix-engine --version' show the build configuration
# (issue 21, item 3): CUDA backend, cuDNN, NCCL, BLAS, MPI and the CPU kernels'
# target, each as configure decided (config.h's MATRIX_BUILD_*), the same in
# both; the engine names the CUDA and MPI modules it would load, which exist
# in the build tree when they were built; matrix names the engine it runs.
. "$top_srcdir/tests/setup"
: "${MATRIX_ENGINE:?}" "${top_builddir:?}"
"$MATRIX" --version > m.txt
"$MATRIX_ENGINE" --version > e.txt
cfg="$top_builddir/config.h"
head -n 1 m.txt | grep -qx 'matrix [0-9][0-9.]*' || fail "matrix --version begins '$(head -n 1 m.txt)'"
head -n 1 e.txt | grep -qx 'matrix-engine [0-9][0-9.]*' || fail "matrix-engine --version begins '$(head -n 1 e.txt)'"
# value LABEL FILE: what FILE says after the label (engine lines may add the module)
value() { sed -n "s/^  $1  *//p" "$2" | sed 's/, loaded for .*//'; }
for item in "CUDA backend:CUDA" "cuDNN:CUDNN" "NCCL:NCCL" "BLAS:BLAS" "MPI:MPI" "CPU kernels:ARCH"; do
	label=${item%%:*} macro=MATRIX_BUILD_${item#*:}
	want=$(sed -n "s/^#define $macro \"\(.*\)\"$/\1/p" "$cfg")
	[ -n "$want" ] || fail "config.h has no $macro"
	expect_eq "$(value "$label" m.txt)" "$want" "matrix --version: $label"
	expect_eq "$(value "$label" e.txt)" "$want" "matrix-engine --version: $label"
done
# the compiler and flags (provenance: env.txt and the native engine's rows say the same)
for item in "compiler:CC" "CFLAGS:CFLAGS"; do
	label=${item%%:*} macro=MATRIX_BUILD_${item#*:}
	want=$(sed -n "s/^#define $macro \"\(.*\)\"$/\1/p" "$cfg")
	[ -n "$want" ] || fail "config.h has no $macro"
	expect_eq "$(value "$label" m.txt)" "$want" "matrix --version: $label"
	expect_eq "$(value "$label" e.txt)" "$want" "matrix-engine --version: $label"
done
# yes/no as the build says
if grep -q '^#define HAVE_CUDA 1' "$cfg"; then
	case $(value "CUDA backend" e.txt) in yes*) ;; *) fail "CUDA is built, the engine says: $(value "CUDA backend" e.txt)" ;; esac
	grep -q "^  CUDA backend .*, loaded for --device cuda from $top_builddir/engine/matrix-engine-cuda.so$" e.txt ||
		fail "the engine does not name its CUDA module in the build tree: $(grep CUDA e.txt)"
	MATRIX_ENGINE_CUDA=/nonexistent/cuda.so "$MATRIX_ENGINE" --version | grep -q "from /nonexistent/cuda.so (missing)$" ||
		fail "a missing CUDA module is not said to be missing"
else
	expect_eq "$(value "CUDA backend" e.txt)" "no" "CUDA not built"
fi
if grep -q '^#define HAVE_CBLAS 1' "$cfg"; then
	case $(value BLAS e.txt) in yes*) ;; *) fail "CBLAS is built, the engine says: $(value BLAS e.txt)" ;; esac
else
	expect_eq "$(value BLAS e.txt)" "no (plain C GEMM)" "BLAS not built"
fi
if grep -q '^#define HAVE_MPI 1' "$cfg"; then
	grep -q "^  MPI .*, loaded for ranks of MATRIX_ENGINE_LAUNCH=mpirun from $top_builddir/engine/matrix-engine-mpi.so$" e.txt ||
		fail "the engine does not name its MPI module in the build tree: $(grep MPI e.txt)"
fi
grep -qx "  native engine $MATRIX_ENGINE (\$MATRIX_ENGINE)" m.txt || fail "matrix --version does not name \$MATRIX_ENGINE: $(grep 'native engine' m.txt)"
grep -qx "  libyaml  *[0-9][0-9.]*" m.txt || fail "matrix --version: no libyaml version"
echo ok
