# Scaling over ranks: step time (left) and tokens/s over all ranks (right)
# per number of ranks, one line per mode, stage, model and backend.
# `data` (scaling.dat): blocks of "ranks step_ms tokens_per_s nodes".
#   gnuplot -e "data='scaling.dat'; out='scaling.pdf'" plots/scaling.gp
height = 2.0
d = ARG0; i = strlen(d); while (i > 0 && d[i:i] ne '/') { i = i - 1 }
load (i > 0 ? d[1:i] : '') . 'style.gp'
set logscale x 2
set format x '%.0f'
set xlabel 'ranks'
set yrange [0:*]
# Engineering suffixes (16k) keep the tick labels narrow enough for the
# y labels to fit the column.
set format y '%.0s%c'
set multiplot layout 1, 2 margins 0.15, 0.98, 0.34, 0.97 spacing 0.2, 0
set ylabel 'step time (ms)' offset 0.5, 0
set key at screen 0.5, screen 0.01 center bottom horizontal maxrows 2
plot for [k=0:*] data index k using 1:2 title columnheader(2) with linespoints lt k+1
unset key
set ylabel 'tokens/s (all ranks)' offset 0.5, 0
plot for [k=0:*] data index k using 1:3 with linespoints lt k+1
unset multiplot
