# Scaling over ranks: step time (left) and tokens/s over all ranks (right)
# per number of ranks, one line per configuration (ZeRO-2, ZeRO-3 sync,
# ZeRO-3 prefetch, ...; and model and backend where they differ), in the
# fixed order, each configuration with its own line type (`lts`, one per
# block); `what`: the model and backend every line shares (the legend's
# title). `data` (scaling.dat): blocks of "ranks step_ms tokens_per_s nodes".
#   gnuplot -e "data='scaling.dat'; out='scaling.pdf'; lts='3 2 1'; what='llama3_70b, sim/sim'" plots/scaling.gp
height = 2.4
d = ARG0; i = strlen(d); while (i > 0 && d[i:i] ne '/') { i = i - 1 }
load (i > 0 ? d[1:i] : '') . 'style.gp'
set logscale x 2
set format x '%.0f'
set xlabel 'ranks'
set yrange [0:*]
if (!exists("lts")) lts = '1 2 3 4 5 6 7 8'
if (!exists("what")) what = ''
lt_of(k) = k < words(lts) ? int(word(lts, k + 1)) : k + 1
# Engineering suffixes (16k) keep the tick labels narrow enough for the
# y labels to fit the column.
set format y '%.0s%c'
set multiplot layout 1, 2 margins 0.15, 0.98, 0.42, 0.97 - mark_h spacing 0.2, 0
if (origin ne '') set label 2 origin at screen 0.5, screen 1 - mark_h / 2 center font ',6.5' front
set ylabel 'step time (ms)' offset 0.5, 0
set key at screen 0.5, screen 0.01 center bottom horizontal maxrows 2 title what
plot for [k=0:*] data index k using 1:2 title columnheader(2) with linespoints lt lt_of(k)
unset key
unset label 2
set ylabel 'tokens/s (all ranks)' offset 0.5, 0
plot for [k=0:*] data index k using 1:3 with linespoints lt lt_of(k)
unset multiplot
