# translate.sed - a CUDA source of engine/cuda/ as C++ for the simulator
# (cudasim.h): a launch "k<<<cfg>>>(" becomes "cudasim::launch(cudasim::Cfg(cfg),
# k, "k")(", an "extern __shared__ T name[];" a pointer to the launch's dynamic
# shared memory, a "__shared__" array the block's own (NaN-filled) copy,
# cub's header the simulator's (cub.h), and NULL nullptr (a
# launch's arguments pass through a template, where NULL would be a long).
# Lines keep their numbers (a launch over several lines is joined, its line
# breaks moved after it), so compiler messages name the source's lines.
:a
/<<<[^>]*$/{
N
s/\n\(.*\)/ \1@@NL@@/
ba
}
s/\([A-Za-z_][A-Za-z0-9_]*\(<[^<>]*>\)\{0,1\}\)<<<\(.*\)>>>(/cudasim::launch(cudasim::Cfg(\3), \1, "\1")(/
s/@@NL@@/\n/g
s/extern __shared__ \([A-Za-z_][A-Za-z0-9_ ]*\) \([A-Za-z_][A-Za-z0-9_]*\)\[\];/\1 *\2 = static_cast<\1 *>(cudasim::dyn_smem);/
# "__shared__ T a[..][..];" (and "__shared__ T a[..], b[..];") a reference to
# the block's own copy, filled with 0xff bytes (NaN) at the block's start
s/__shared__ \([A-Za-z_][A-Za-z0-9_]*\) \([A-Za-z_][A-Za-z0-9_]*\)\(\(\[[^];]*\]\)\{1,\}\), \([A-Za-z_][A-Za-z0-9_]*\)\(\(\[[^];]*\]\)\{1,\}\);/static char cudasim_k_\2, cudasim_k_\5; auto \&\2 = cudasim::shared_var<\1\3>(\&cudasim_k_\2, "\2"); auto \&\5 = cudasim::shared_var<\1\6>(\&cudasim_k_\5, "\5");/
s/__shared__ \([A-Za-z_][A-Za-z0-9_]*\) \([A-Za-z_][A-Za-z0-9_]*\)\(\(\[[^];]*\]\)\{1,\}\);/static char cudasim_k_\2; auto \&\2 = cudasim::shared_var<\1\3>(\&cudasim_k_\2, "\2");/
s|#include <cub/cub.cuh>|#include "cub.h"|
s/\bNULL\b/nullptr/g
