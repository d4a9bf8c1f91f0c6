# style.gp - the look shared by every figure of `matrix report`. Included at
# the top of each generated script, before the figure's own template.
# Colours: Okabe & Ito's colour-blind-safe palette, in the order of
# matrix/report/plot.c (series are coloured there, explicitly, by level).
set encoding utf8
set border 3 lw 1.2 lc rgb "#333333"
set tics nomirror out scale 0.6 textcolor rgb "#222222"
set grid back lw 0.8 lc rgb "#dddddd"
set key noautotitle textcolor rgb "#222222" spacing 1.15
set title font ",15" textcolor rgb "#111111"
set xlabel textcolor rgb "#222222"
set ylabel textcolor rgb "#222222"
set datafile separator "\t"
set datafile missing "NaN"
set linetype 1 lc rgb "#0072B2" lw 2 pt 7
set linetype 2 lc rgb "#E69F00" lw 2 pt 5
set linetype 3 lc rgb "#009E73" lw 2 pt 9
set linetype 4 lc rgb "#D55E00" lw 2 pt 11
set linetype 5 lc rgb "#CC79A7" lw 2 pt 13
set linetype 6 lc rgb "#56B4E9" lw 2 pt 15
set linetype 7 lc rgb "#000000" lw 2 pt 7
set linetype 8 lc rgb "#F0E442" lw 2 pt 5
set linetype cycle 8
