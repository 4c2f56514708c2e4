# Bus bandwidth over ranks: one line per collective and backend, each at
# the largest message size it measured at every rank count (in its title).
# `data` (busbw_scaling.dat): blocks of "ranks busbw_gbps size_bytes nodes".
#   gnuplot -e "data='busbw_scaling.dat'; out='busbw_scaling.pdf'" plots/busbw_scaling.gp
# Taller by the legend's rows past two (`krows`, from plot), so the plot
# area keeps its height.
height = 2.2 + (exists("krows") && krows > 2 ? (krows - 2) * 8.5 / 72 : 0)
d = ARG0; i = strlen(d); while (i > 0 && d[i:i] ne '/') { i = i - 1 }
load (i > 0 ? d[1:i] : '') . 'style.gp'
set logscale x 2
set format x '%.0f'
set xlabel 'ranks'
set ylabel 'bus bandwidth (GB/s)'
set yrange [0:*]
# The legend below the plot, outside it: it covers no data.
set key outside below center horizontal height 1
if (origin ne '') set title origin font ',6.5'
plot for [k=0:*] data index k using 1:2 title columnheader(2) with linespoints lt k+1
