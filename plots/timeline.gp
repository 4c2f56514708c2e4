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
full_title = origin ne '' ? origin . (title ne '' ? "\n" . title : '') : title
if (full_title ne '') set title full_title font ',6'
set yrange [0.5:rows + 0.5]
set ytics () scale 0
set grid noytics xtics lc rgb '#d0d0d0' lw 0.5
set xrange [0:*]
if (!exists("xunit")) xunit = 'ms'
xs = xunit eq 's' ? 1000.0 : 1.0
set xlabel 'time from the step start ('.xunit.')'
set key outside top center horizontal
h = 0.34
plot data index 0 using (($2+$3)/2/xs):1:(($3-$2)/2/xs):(h) with boxxyerror fs solid 0.55 border lc rgb '#000000' lc rgb '#4d4d4d' lw 0.3 title 'compute', \
     data index 1 using (($2+$3)/2/xs):1:(($3-$2)/2/xs):(h) with boxxyerror fs pattern 4 border lc rgb '#000000' lc rgb '#000000' lw 0.3 title 'comm', \
     data index 2 using (($2+$3)/2/xs):1:(($3-$2)/2/xs):(h*0.6) with boxxyerror fs empty border lc rgb '#000000' lc rgb '#000000' lw 0.3 title 'copy', \
     data index 3 using (NaN):1:ytic(2) notitle
