# scaling.gp - throughput against the number of GPUs, one line per series,
# the ideal (linear from the smallest count) dashed in the same colour, the
# scale efficiency (the seeds' scale factor) printed at each measured count.
# Keys: @TITLE@ @XLABEL@ @YLABEL@ @XTICS@ @XMIN@ @XMAX@ @EXTRA@ @PLOT@
set title "@TITLE@"
set xlabel "@XLABEL@"
set ylabel "@YLABEL@"
set xrange [@XMIN@:@XMAX@]
set xtics (@XTICS@)
set yrange [0:*]
set format y "%g"
set key outside right top vertical Left reverse
@EXTRA@
plot @PLOT@
