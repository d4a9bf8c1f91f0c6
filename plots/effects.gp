# effects.gp - what each setting buys: one row per factor and level, each dot
# the gain of one matched pair (points equal in every other factor) on a log
# axis, the geometric mean as a black diamond with its 95% interval as
# whiskers, 1 (no change) dashed; the key under the plot (beside it, it took
# half the width from the axis).
# Keys: @TITLE@ @XLABEL@ @YTICS@ @YMAX@ @EXTRA@ @PLOT@
set title "@TITLE@"
set xlabel "@XLABEL@"
set logscale x
set format x "%g×"
set yrange [@YMAX@:-0.6]
set ytics (@YTICS@) scale 0
set grid xtics mxtics noytics
set key outside center bottom horizontal Left reverse
set arrow 1 from 1, graph 0 to 1, graph 1 nohead dt 2 lw 1.2 lc rgb "#555555" back
@EXTRA@
plot @PLOT@
