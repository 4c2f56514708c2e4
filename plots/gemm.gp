# GEMM throughput vs size ((M*N*K)^(1/3): M for square GEMMs), one line per
# backend and dtype from `data` (gemm.dat), and each one's peak from `ref`
# when given (gemm_ref.dat). `yunit`: GFLOP/s or TFLOP/s (the data's unit).
#   gnuplot -e "data='gemm.dat'; ref='gemm_ref.dat'; out='gemm.pdf'; yunit='GFLOP/s'" plots/gemm.gp
# Taller by the legend's rows past two (`krows`, from plot), so the plot
# area keeps its height.
height = 2.4 + (exists("krows") && krows > 2 ? (krows - 2) * 8.5 / 72 : 0)
d = ARG0; i = strlen(d); while (i > 0 && d[i:i] ne '/') { i = i - 1 }
load (i > 0 ? d[1:i] : '') . 'style.gp'
if (!exists("yunit")) yunit = 'TFLOP/s'
set logscale x 2
set format x '%.0f'
set xlabel 'GEMM size (M*N*K)^(1/3)'
set ylabel 'throughput ('.yunit.')'
set yrange [0:*]
# The legend below the plot, outside it: it covers no data.
set key outside below center horizontal height 1
if (origin ne '') set title origin font ',6.5'
cmd = "plot for [k=0:*] data index k using 1:2 title columnheader(2) with linespoints lt k+1"
if (exists("ref")) cmd = cmd . ", for [k=0:*] ref index k using 1:2 title columnheader(2) with lines " . ref_style . " dt 2 + k % 3"
eval cmd
