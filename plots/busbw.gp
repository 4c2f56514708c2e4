# Bus bandwidth vs message size: one line per collective and backend from
# `data` (plot busbw.dat: blocks of "size_bytes busbw_gbps", the block's
# title in its header row), and the hardware profile's link bandwidth from
# `ref` when given (busbw_ref.dat).
#   gnuplot -e "data='busbw.dat'; ref='busbw_ref.dat'; out='busbw.pdf'" plots/busbw.gp
# Taller by the legend's rows past two (`krows`, from plot), so the plot
# area keeps its height.
height = 2.4 + (exists("krows") && krows > 2 ? (krows - 2) * 8.5 / 72 : 0)
d = ARG0; i = strlen(d); while (i > 0 && d[i:i] ne '/') { i = i - 1 }
load (i > 0 ? d[1:i] : '') . 'style.gp'
set logscale x 2
set format x '%.0b%BB'
set xlabel 'message size (bytes)'
set ylabel 'bus bandwidth (GB/s)'
set yrange [0:*]
# The legend below the plot, outside it: it covers no data.
set key outside below center horizontal height 1
if (origin ne '') set title origin font ',6.5'
cmd = "plot for [k=0:*] data index k using 1:2 title columnheader(2) with linespoints lt k+1"
if (exists("ref")) cmd = cmd . ", for [k=0:*] ref index k using 1:2 title columnheader(2) with lines " . ref_style . " dt 2 + k % 3"
eval cmd
