# Peak memory per rank by tag, stacked, one bar per step run (its label two
# lines: the mode, then what differs between the runs, e.g. the stage).
# `data` (memory.dat): a header row ("run" and the tags), then one row per
# run in MiB; `tags`: the number of tag columns.
#   gnuplot -e "data='memory.dat'; out='memory.pdf'; tags=7" plots/memory.gp
height = 2.8
d = ARG0; i = strlen(d); while (i > 0 && d[i:i] ne '/') { i = i - 1 }
load (i > 0 ? d[1:i] : '') . 'style.gp'
if (!exists("tags")) tags = 7
set style data histograms
set style histogram rowstacked
set boxwidth 0.6
set xtics scale 0 font ',5.5'
set ylabel 'peak memory per rank (MiB)'
set yrange [0:*]
set key outside top center horizontal maxrows 3 font ',6'
set bmargin 3.5
# Tag k: a fill of its own that reads in greyscale (patterns, then greys).
pat = "1 4 3 5 2 6 7"
fill(k) = k < 7 ? sprintf("fs pattern %s", word(pat, k + 1)) : sprintf("fs solid %.2f", 0.15 + 0.2 * ((k - 7) % 4))
cmd = "plot"
do for [k=0:tags-1] {
    cmd = cmd . sprintf("%s data using %d:xtic(1) title columnheader(%d) lt 1 lc rgb '#000000' %s", k ? "," : "", k + 2, k + 2, fill(k))
}
eval cmd
