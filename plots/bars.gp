# bars.gp - grouped bars: one cluster per level of the x factor, one bar per
# level of the group factor, whiskers from the data file's low/high columns.
# Keys: @TITLE@ @XLABEL@ @YLABEL@ @KEYTITLE@ @EXTRA@ @PLOT@
set title "@TITLE@"
set xlabel "@XLABEL@"
set ylabel "@YLABEL@"
set style data histograms
set style histogram errorbars gap 1.5 lw 1.2
set style fill solid 0.9 border rgb "#333333"
set boxwidth 0.95
set yrange [0:*]
set grid noxtics ytics
set xtics scale 0 noenhanced
set key outside right top vertical title "@KEYTITLE@" Left reverse
@EXTRA@
plot @PLOT@
