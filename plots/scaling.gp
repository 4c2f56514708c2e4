# Scaling over ranks: step time (left) and tokens/s over all ranks (right)
# per number of ranks, one line per configuration (ZeRO-2, ZeRO-3 sync,
# ZeRO-3 prefetch, ...; and model and backend where they differ), in the
# fixed order, each configuration with its own line type (`lts`, one per
# block); `what`: the model and backend every line shares (the legend's
# title). `data` (scaling.dat): blocks of "ranks step_ms tokens_per_s nodes".
# `krows`, `kcols`, `kw`: the legend's rows, columns and width increment
# (style.gp): the legend spans the canvas under both panels, in a panel of
# its own, and the figure grows by its rows.
#   gnuplot -e "data='scaling.dat'; out='scaling.pdf'; lts='3 2 1'; what='llama3_70b, sim/sim'; krows=2; kcols=2; kw=0" plots/scaling.gp
if (!exists("krows")) krows = 2
if (!exists("what")) what = ''
# The legend's height (pt): its rows and its title's.
key_pt = (krows + (what ne '' ? 1 : 0)) * 8.5 + 4
height = 1.75 + key_pt / 72.0
d = ARG0; i = strlen(d); while (i > 0 && d[i:i] ne '/') { i = i - 1 }
load (i > 0 ? d[1:i] : '') . 'style.gp'
line = 1.0 / (height * 72)
if (!exists("lts")) lts = '1 2 3 4 5 6 7 8'
lt_of(k) = k < words(lts) ? int(word(lts, k + 1)) : k + 1
set multiplot
if (origin ne '') set label 2 origin at screen 0.5, screen 1 - mark_h / 2 center font ',6.5' front
# The two panels above the legend (the x label and tics take 26 pt).
set bmargin at screen (key_pt + 26) * line
set tmargin at screen 0.97 - mark_h
set logscale x 2
set format x '%.0f'
set xlabel 'ranks'
set yrange [0:*]
# Engineering suffixes (16k) keep the tick labels narrow enough for the
# y labels to fit the column, from 10000 up, where gnuplot's tics fall on
# whole thousands; below it %.0s%c would print 1500 as "2k" beside 2000's
# "2k", and 0.5 ms as "500m", so plain numbers (at most 4 digits) there.
yfmt(col) = (stats_max(col) >= 10000 ? '%.0s%c' : '%g')
stats_max(col) = (col == 2 ? max2 : max3)
stats data using 2:3 nooutput
max2 = STATS_max_x
max3 = STATS_max_y
unset key
set lmargin at screen 0.15
set rmargin at screen 0.465
set ylabel 'step time (ms)' offset 0.5, 0
set format y yfmt(2)
plot for [k=0:*] data index k using 1:2 with linespoints lt lt_of(k)
unset label 2
set lmargin at screen 0.665
set rmargin at screen 0.98
set ylabel 'tokens/s (all ranks)' offset 0.5, 0
set format y yfmt(3)
plot for [k=0:*] data index k using 1:3 with linespoints lt lt_of(k)
# The legend: a panel across the canvas with nothing but the key. Its
# series' one point each (a plot with none in range draws no key entry) is
# at the centre, under the key, which is opaque: drawn last, on white. The
# title is in the terminal's 7 pt (a title font of its own makes gnuplot 5.4
# lay the key out in the wrong font and warn).
unset logscale x
unset xlabel
unset ylabel
unset tics
unset border
unset grid
set xrange [0:1]
set yrange [0:1]
set lmargin at screen 0.02
set rmargin at screen 0.98
set bmargin at screen 0
set tmargin at screen key_pt * line
set key on inside center center horizontal opaque title what
plot for [k=0:*] data index k using (0.5):(0.5) title columnheader(2) with linespoints lt lt_of(k)
unset multiplot
