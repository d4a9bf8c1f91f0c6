# scatter.gp - one dot per point: a factor on x (categorical, or numeric with a
# line through the geometric means), each dot with its 95% interval as
# whiskers (columns 4 and 5 of the data), moved
# sideways by a deterministic jitter (hash of the point id), the metric on a
# log y axis, coloured by the level of another factor (one data block each).
# Keys: @TITLE@ @XLABEL@ @YLABEL@ @XTICS@ @XMIN@ @XMAX@ @KEYTITLE@ @EXTRA@ @PLOT@
set title "@TITLE@"
set xlabel "@XLABEL@"
set ylabel "@YLABEL@"
set logscale y
set format y "%h"
set xrange [@XMIN@:@XMAX@]
set xtics (@XTICS@)
set grid noxtics ytics mytics
set key outside right top vertical title "@KEYTITLE@" Left reverse
@EXTRA@
plot @PLOT@
