# Shared by the figure scripts (plots/*.gp), which load it first: the
# terminal chosen by the ending of `out` (.pdf: pdfcairo, for papers; .png:
# pngcairo, 300 dpi), sized for one column of a paper (3.3 in wide, `height`
# in high, 7 pt text), and line types told apart by dash and point type as
# well as colour, so a figure printed in greyscale still reads.
if (!exists("data") || !exists("out")) {
    print "usage: gnuplot -e \"data='FILE.dat'; out='FIG.pdf'\" SCRIPT.gp (out='FIG.png' for a PNG)"
    exit status 2
}
if (!exists("height")) height = 2.4
ext = strlen(out) >= 4 ? out[strlen(out)-3:] : ""
# Text at its nominal size in both: the cairo terminals lay text out at 96
# dpi, so pdfcairo (points) draws a font 4/3 its size times its fontscale
# (default 0.5: 7 pt came out 4.7 pt), pngcairo (pixels, 300 a inch here)
# 300/96 of it at fontscale 1. Labels are sized for these sizes (plot's
# C side measures them in em of DejaVu Sans, "Sans" here).
if (ext eq ".pdf") {
    eval sprintf("set terminal pdfcairo size 3.3in,%.2fin font 'Sans,7' fontscale 0.75 linewidth 1 rounded", height)
} else {
    if (ext eq ".png") {
        eval sprintf("set terminal pngcairo size 990,%d font 'Sans,7' fontscale 3.125 linewidth 3 rounded", int(height * 300))
    } else {
        print "out='", out, "': expected a name ending in .pdf or .png"
        exit status 2
    }
}
set output out
# A numeric dash pattern (dt (on,off,...)) comes out in units near 1/300 in
# on both terminals, far finer than their own dt 2-5 (at 1, a (2,2) dot
# pattern drew as a solid line in the PNG): ours are in units of `dtu`.
dtu = 3
set termoption noenhanced
set encoding utf8
set border 3 lw 0.8
set tics nomirror out scale 0.6
set grid ytics lc rgb '#d0d0d0' lw 0.5 dt 1
set key noautotitle samplen 2.5 spacing 1.0 font ',6'
# plot's legend layout (zb_plot_key_layout): at most kcols columns, each
# kw characters wider than gnuplot reckons, so that wide text fits.
if (!exists("kcols")) kcols = 0
if (!exists("kw")) kw = 0
set key maxcols (kcols > 0 ? kcols : 'auto') width kw
set datafile missing 'NaN'
# Okabe-Ito colours (distinct luminance), each with its own dash and point.
# 9-16 and 17-24 take the colours again with other dashes (shifted by 4, by
# 2) and other points (the open and line marks; the filled set shifted
# by 4), so that no two of the 24 share colour and dash, nor (in
# greyscale) dash and point. plot notes a figure with more series.
set linetype 1 lc rgb '#000000' dt 1 pt 7 ps 0.55 lw 1.2
set linetype 2 lc rgb '#d55e00' dt 2 pt 5 ps 0.55 lw 1.2
set linetype 3 lc rgb '#0072b2' dt 3 pt 9 ps 0.65 lw 1.2
set linetype 4 lc rgb '#009e73' dt 4 pt 11 ps 0.65 lw 1.2
set linetype 5 lc rgb '#cc79a7' dt 5 pt 13 ps 0.6 lw 1.2
set linetype 6 lc rgb '#e69f00' dt (8*dtu,3*dtu,2*dtu,3*dtu,2*dtu,3*dtu) pt 4 ps 0.55 lw 1.2
set linetype 7 lc rgb '#56b4e9' dt (2*dtu,2*dtu) pt 6 ps 0.55 lw 1.2
set linetype 8 lc rgb '#7f7f7f' dt (10*dtu,2*dtu) pt 8 ps 0.6 lw 1.2
set linetype 9 lc rgb '#000000' dt 5 pt 1 ps 0.7 lw 1.2
set linetype 10 lc rgb '#d55e00' dt (8*dtu,3*dtu,2*dtu,3*dtu,2*dtu,3*dtu) pt 2 ps 0.7 lw 1.2
set linetype 11 lc rgb '#0072b2' dt (2*dtu,2*dtu) pt 3 ps 0.7 lw 1.2
set linetype 12 lc rgb '#009e73' dt (10*dtu,2*dtu) pt 10 ps 0.65 lw 1.2
set linetype 13 lc rgb '#cc79a7' dt 1 pt 12 ps 0.65 lw 1.2
set linetype 14 lc rgb '#e69f00' dt 2 pt 14 ps 0.65 lw 1.2
set linetype 15 lc rgb '#56b4e9' dt 3 pt 15 ps 0.65 lw 1.2
set linetype 16 lc rgb '#7f7f7f' dt 4 pt 1 ps 0.9 lw 1.2
set linetype 17 lc rgb '#000000' dt 3 pt 13 ps 0.6 lw 1.2
set linetype 18 lc rgb '#d55e00' dt 4 pt 4 ps 0.55 lw 1.2
set linetype 19 lc rgb '#0072b2' dt 5 pt 6 ps 0.55 lw 1.2
set linetype 20 lc rgb '#009e73' dt (8*dtu,3*dtu,2*dtu,3*dtu,2*dtu,3*dtu) pt 8 ps 0.6 lw 1.2
set linetype 21 lc rgb '#cc79a7' dt (2*dtu,2*dtu) pt 7 ps 0.55 lw 1.2
set linetype 22 lc rgb '#e69f00' dt (10*dtu,2*dtu) pt 5 ps 0.55 lw 1.2
set linetype 23 lc rgb '#56b4e9' dt 1 pt 9 ps 0.65 lw 1.2
set linetype 24 lc rgb '#7f7f7f' dt 2 pt 11 ps 0.65 lw 1.2
set linetype cycle 24
# Reference lines (a link's bandwidth, a peak): thin grey, long dashes.
ref_style = "lc rgb '#404040' lw 0.9"
# The configurations (code 3 * stage + 0 sync, 1 prefetch, 2 other, as
# plot writes them): one name and one fill each, the same in every figure,
# told apart in greyscale by luminance and hatching.
cfgname(c) = (int(c) < 3 ? "DDP" : sprintf("ZeRO-%d", int(c) / 3)) . (int(c) % 3 == 0 ? " sync" : \
             int(c) % 3 == 1 ? (int(c) / 3 == 3 ? " prefetch" : "") : " other")
cfgfill(c) = int(c) == 10 ? "fs solid 0.55" : int(c) == 9 ? "fs solid 0.18" : int(c) == 7 ? "fs pattern 4" : \
             int(c) == 6 ? "fs pattern 5" : int(c) == 4 ? "fs pattern 1" : int(c) == 3 ? "fs empty" : \
             int(c) == 1 ? "fs solid 0.95" : int(c) == 0 ? "fs pattern 2" : "fs solid 0.35"
# Memory tags (the engine's order: param shard, grad shard, optim state,
# gathered param, gathered grad, activation, workspace, comm buffer, bench
# buffer, then others): solid greys alternating with hatches of their own
# direction, so neighbours in a stack never look alike.
tagfill(i) = int(i) == 0 ? "fs solid 0.85" : int(i) == 1 ? "fs pattern 4" : int(i) == 2 ? "fs solid 0.45" : \
             int(i) == 3 ? "fs pattern 5" : int(i) == 4 ? "fs empty" : int(i) == 5 ? "fs pattern 1" : \
             int(i) == 6 ? "fs solid 0.15" : int(i) == 7 ? "fs pattern 2" : int(i) == 8 ? "fs solid 0.65" : \
             sprintf("fs solid %.2f", 0.25 + 0.15 * (int(i) % 4))
# Simulated data: `origin` (set by plot for KIND_sim figures) is written
# across the figure's top edge, above everything else.
if (!exists("origin")) origin = ''
mark_h = origin ne '' ? 0.16 / height : 0.0
