# Sync vs prefetch: step time, overlap and MFU as bars (one panel each,
# stacked), sync (light) beside
# prefetch (hatched) in each group of runs, with whiskers for their spread
# (none where the data has NaN). `data` (steps.dat, one row per run, its
# columns named in its header); `note`: what the whiskers show, printed
# under the panels; `mfu`: 0 when no run measured MFU (two panels).
#   gnuplot -e "data='steps.dat'; out='steps.pdf'; note='...'; mfu=1" plots/steps.gp
height = (exists('mfu') && mfu == 0) ? 2.5 : 3.4
d = ARG0; i = strlen(d); while (i > 0 && d[i:i] ne '/') { i = i - 1 }
load (i > 0 ? d[1:i] : '') . 'style.gp'
if (!exists("mfu")) mfu = 1
if (!exists("note")) note = ''
set datafile columnheaders
set boxwidth 0.4
set xtics scale 0 font ',6'
set yrange [0:*]
stats data using 2 nooutput
set xrange [-0.6:STATS_max + 0.6]
set format y '%g'
panels = mfu ? 3 : 2
set multiplot layout panels, 1 margins 0.15, 0.98, (note ne '' ? 0.15 : 0.10), 0.93 spacing 0, 0.035
set key at screen 0.5, screen 0.995 center top horizontal
set label 1 note at screen 0.5, screen 0.03 center font ',5.5'
sync = "lt 1 lc rgb '#000000' fs solid 0.2"
pref = "lt 1 lc rgb '#000000' fs pattern 2"
wh = "lt 1 lc rgb '#000000' pt 0 lw 1.2"
# A round tic step giving about three tics up to x.
nice(x) = (x <= 0 ? 1 : (ex = 10**floor(log10(x)), fr = x / ex, (fr <= 1 ? 1 : fr <= 2 ? 2 : fr <= 5 ? 5 : 10) * ex))
# Column c: the metric; c+1, c+2: its whisker.
do for [p=0:panels-1] {
    c = 5 + 3 * p
    stats data using (valid(c + 2) && column(c + 2) > column(c) ? column(c + 2) : column(c)) nooutput
    set ytics nice(STATS_max / 3)
    set ylabel (p == 0 ? 'step time (ms)' : p == 1 ? 'overlap (%)' : 'MFU (%)')
    set format x ''
    eval "plot data using 2:(NaN)" . (p < panels - 1 ? "" : ":xtic(3)") . " notitle, " . \
         "'' using 1:($4 == 0 ? column(c) : NaN) with boxes " . sync . (p == 0 ? " title 'sync'" : " notitle") . ", " . \
         "'' using 1:($4 != 0 ? column(c) : NaN) with boxes " . pref . (p == 0 ? " title 'prefetch'" : " notitle") . ", " . \
         "'' using 1:c:c+1:c+2 with yerrorbars " . wh . " notitle"
    unset key
    unset label 1
}
unset multiplot
