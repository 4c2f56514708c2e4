# Peak memory per rank by tag, stacked, one bar per step run, the runs
# grouped by what differs besides their configuration (the bar's label,
# the group's label under it; both wrapped by plot to fit), the tags in
# the engine's order with a fill each (the same in every figure), and the
# device's memory per rank from the hardware profile as a dashed line
# (`ref`, memory_ref.dat) when the profile has one. `data` (memory.dat):
# a header row, then one row per run: x, group x, group, config code, bar
# label, each tag's top (stacked) in `yunit`; `tags`: the number of tag
# columns; `fills`: each tag's fill (style.gp's tagfill); `bw`: a bar's
# width; `glines`, `blines`: the most lines of a group label and of a bar's; `offscale`: the device
# memory, in words, when it is too far above the bars to draw; `krows`,
# `kcols`, `kw`: the legend's rows, columns and width increment (style.gp);
# `barnote`, `barnote2`: the bars' configurations, left to right, in words
# under the figure when the bars are too narrow for their labels.
#   gnuplot -e "data='memory.dat'; ref='memory_ref.dat'; out='memory.pdf'; tags=7; yunit='GiB'; fills='0 1 2 3 4 5 6'; bw=0.28; glines=3" plots/memory.gp
# Taller by the legend's rows past four (`krows`), so the plot keeps its height.
height = 2.9 + (exists("krows") && krows > 4 ? (krows - 4) * 8.5 / 72 : 0)
d = ARG0; i = strlen(d); while (i > 0 && d[i:i] ne '/') { i = i - 1 }
load (i > 0 ? d[1:i] : '') . 'style.gp'
if (!exists("tags")) tags = 7
if (!exists("yunit")) yunit = 'MiB'
if (!exists("fills")) fills = '0 1 2 3 4 5 6'
if (!exists("bw")) bw = 0.4
if (!exists("glines")) glines = 3
if (!exists("blines")) blines = 2
if (!exists("offscale")) offscale = ''
if (!exists("barnote")) barnote = ''
if (!exists("barnote2")) barnote2 = ''
notes = (barnote ne '' ? 1 : 0) + (barnote2 ne '' ? 1 : 0)
set datafile columnheaders
stats data using 2 nooutput
set xrange [-0.6:STATS_max + 0.6]
set yrange [0:*]
set xtics scale 0 font ',5.5'
set format x ''
set ylabel 'peak memory per rank ('.yunit.')'
line = 1.0 / (height * 72)
# Bottom: the bars' labels (`blines` lines), then the group labels, then
# the bars named in words when the bars are too narrow for labels; top:
# the legend and the SIMULATED mark, outside the plot.
set lmargin at screen 0.15
set rmargin at screen 0.98
set bmargin at screen (blines * 7 + glines * 7.5 + 6 + notes * 7) * line
if (barnote ne '') set label 4 barnote at screen 0.5, screen (notes * 7 - 2) * line center font ',5.5'
if (barnote2 ne '') set label 5 barnote2 at screen 0.5, screen 5 * line center font ',5.5'
# The legend (the tags, the device memory line): `krows` rows, as plot
# reckons from the longest entry.
if (!exists("krows")) krows = ceil((tags + (exists("ref") ? 1 : 0)) / 2.0)
set tmargin at screen 1 - (krows * 8.5 + 6) * line - mark_h - (offscale ne '' ? 9 * line : 0)
set key at screen 0.5, screen 1 - mark_h - 1 * line center top horizontal font ',6' samplen 1.5
if (origin ne '') set label 2 origin at screen 0.5, screen 1 - 6 * line center font ',6.5' front
if (offscale ne '') set label 3 offscale at graph 0.5, graph 1 center offset 0, 0.6 font ',5.5'
lo(k) = k == 0 ? 0 : column(5 + k)
# The bars' labels from an invisible point per run (fully transparent).
cmd = "plot data using 1:(0):xtic(5) with points lc rgb '#FF000000' notitle"
do for [k=0:tags-1] {
    cmd = cmd . sprintf(", '' using 1:((lo(%d) + column(%d)) / 2):(bw * 0.46):((column(%d) - lo(%d)) / 2) with boxxyerror lt 1 lc rgb '#000000' %s title columnheader(%d)", \
                        k, 6 + k, 6 + k, k, tagfill(int(word(fills, k + 1))), 6 + k)
}
# The group labels under the bars' labels.
cmd = cmd . sprintf(", '' using 2:(0):3 with labels center offset 0, %.2f font ',5.5' notitle", -(0.9 + 0.85 * blines))
if (exists("ref")) cmd = cmd . ", for [k=0:*] ref index k using 1:2 title columnheader(2) with lines lc rgb '#000000' lw 1.2 dt (6*dtu,3*dtu)"
eval cmd
