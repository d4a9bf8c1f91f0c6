# best.gp - baseline vs optimal: for each group (model), the baseline
# configuration's value and the best measured one with whiskers (their 95%
# confidence intervals), the gain and its interval printed above.
# Keys: @TITLE@ @XLABEL@ @YLABEL@ @EXTRA@ @PLOT@
set title "@TITLE@"
set xlabel "@XLABEL@"
set ylabel "@YLABEL@"
set style data histograms
set style histogram errorbars gap 1.2 lw 1.2
set style fill solid 0.9 border rgb "#333333"
set boxwidth 0.95
set logscale y
set format y "%h"
set grid noxtics ytics mytics
set xtics scale 0 noenhanced
set offsets 0, 0, graph 0.08, 0
set key outside right top vertical Left reverse
@EXTRA@
plot @PLOT@
