# One rank's step as a Gantt chart: a row per mode and stream (sync above
# prefetch), each op a box from its start to its end, in ms from its step's
# start (`xunit` 's': in seconds). `data` (timeline.dat): blocks 0 compute, 1 comm, 2 copy records
# ("y start_ms end_ms op"), 3 the rows' labels ("y row"); `rows`: how many.
#   gnuplot -e "data='timeline.dat'; out='timeline.pdf'; rows=4" plots/timeline.gp
if (!exists("rows")) rows = 4
height = 0.75 + 0.32 * rows
d = ARG0; i = strlen(d); while (i > 0 && d[i:i] ne '/') { i = i - 1 }
load (i > 0 ? d[1:i] : '') . 'style.gp'
if (!exists("title")) title = ''
# Across the top, centred on the canvas (a title would be centred on the
# plot area, right of the rows' labels, and run off the canvas): the
# legend, the SIMULATED mark, the title; the plot below them.
line = 1.0 / (height * 72)
tlines = (origin ne '' ? 1 : 0) + (title ne '' ? 1 : 0)
set tmargin at screen 1 - (12 + tlines * 8.5 + 3) * line
set key at screen 0.5, screen 1 - 1 * line center top horizontal
if (origin ne '') set label 11 origin at screen 0.5, screen 1 - 17 * line center font ',6.5'
if (title ne '') set label 12 title at screen 0.5, screen 1 - (17 + (origin ne '' ? 8.5 : 0)) * line center font ',6'
set yrange [0.5:rows + 0.5]
set ytics () scale 0
set grid noytics xtics lc rgb '#d0d0d0' lw 0.5
set xrange [0:*]
if (!exists("xunit")) xunit = 'ms'
xs = xunit eq 's' ? 1000.0 : 1.0
set xlabel 'time from the step start ('.xunit.')'
h = 0.34
# `lm`: the left margin plot reckons from the rows' labels (gnuplot's own
# is too narrow for wide text); `kinds`: which of compute, comm, copy have
# records (an empty block is a gnuplot warning).
if (exists("lm")) set lmargin at screen lm
if (!exists("kinds")) kinds = '1 1 1'
box(k) = sprintf("data index %d using (($2+$3)/2/xs):1:(($3-$2)/2/xs):(h%s) with boxxyerror ", k, k == 2 ? "*0.6" : "") . \
         (k == 0 ? "fs solid 0.55 border lc rgb '#000000' lc rgb '#4d4d4d'" : k == 1 ? \
          "fs pattern 4 border lc rgb '#000000' lc rgb '#000000'" : "fs empty border lc rgb '#000000' lc rgb '#000000'") . \
         " lw 0.3 title '" . (k == 0 ? "compute" : k == 1 ? "comm" : "copy") . "', "
cmd = "plot "
do for [k=0:2] { if (int(word(kinds, k + 1))) { cmd = cmd . box(k) } }
# The rows' labels from an invisible point per row (fully transparent).
cmd = cmd . "data index 3 using (0):1:ytic(2) with points lc rgb '#FF000000' notitle"
eval cmd
