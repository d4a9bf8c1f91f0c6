# lines.gp - bars on a numeric factor (batch, threads, gpus): the factor's
# values on a sorted numeric x axis (log when they span more than 100x), one
# line per level of the group factor through the geometric mean at each
# value, whiskers from the data file's low/high columns.
# Keys: @TITLE@ @XLABEL@ @YLABEL@ @XTICS@ @XMIN@ @XMAX@ @KEYTITLE@ @EXTRA@ @PLOT@
set title "@TITLE@"
set xlabel "@XLABEL@"
set ylabel "@YLABEL@"
set xrange [@XMIN@:@XMAX@]
set xtics (@XTICS@)
set grid xtics ytics
set key outside right top vertical title "@KEYTITLE@" Left reverse
@EXTRA@
plot @PLOT@
