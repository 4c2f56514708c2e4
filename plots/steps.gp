# Step time, overlap and MFU as bars (one panel each, stacked), one bar per
# configuration (ZeRO-2, ZeRO-3 sync, ZeRO-3 prefetch, ...: one fill each,
# the legend in that order) in each group of runs. A prefetch bar paired
# with sync (--mode both) has a whisker: sync's median plus the paired
# interval of prefetch - sync that the step's verdict used, and a dash at
# sync's median: the whisker crosses the dash exactly when the difference
# is not significant. `data` (steps.dat, one row per run, its columns named
# in its header); `note`: what the whiskers show, printed under the panels;
# `note2`: its second line; `mfu`: 0 when no run measured MFU (two panels); `configs`: the codes
# present; `bw`: a bar's width; `glines`: the most lines of a group label;
# `krows`, `kcols`, `kw`: the legend's rows, columns and width increment
# (style.gp); `whisk`: per panel, how many bars have a whisker.
#   gnuplot -e "data='steps.dat'; out='steps.pdf'; note='...'; mfu=1; configs='9 10'; bw=0.42; glines=3" plots/steps.gp
# Taller by the legend's rows past two (`krows`), so the panels keep theirs.
height = ((exists('mfu') && mfu == 0) ? 2.6 : 3.5) + (exists("krows") && krows > 2 ? (krows - 2) * 8.5 / 72 : 0)
d = ARG0; i = strlen(d); while (i > 0 && d[i:i] ne '/') { i = i - 1 }
load (i > 0 ? d[1:i] : '') . 'style.gp'
if (!exists("mfu")) mfu = 1
if (!exists("note")) note = ''
if (!exists("note2")) note2 = ''
if (!exists("configs")) configs = '9 10'
if (!exists("bw")) bw = 0.4
if (!exists("glines")) glines = 3
if (!exists("whisk")) whisk = '1 1 1'
set datafile columnheaders
set boxwidth bw * 0.92 absolute
set xtics scale 0 font ',6'
set yrange [0:*]
stats data using 2 nooutput
set xrange [-0.6:STATS_max + 0.6]
set format y '%g'
panels = mfu ? 3 : 2
# Screen fractions: the group labels' lines and the note at the bottom, the
# legend (and the SIMULATED mark) at the top, all outside the panels.
line = 1.0 / (height * 72)
bm = (glines * 7.5 + (note ne '' ? 8 : 0) + (note2 ne '' ? 7 : 0) + 8) * line
if (!exists("krows")) krows = 1
tm = 1 - (krows * 8.5 + 6) * line - mark_h
# The left margin holds five-digit tick labels and the y label (plot sizes
# the group labels for 0.17 to 0.98).
set multiplot layout panels, 1 margins 0.17, 0.98, bm, tm spacing 0, 0.035
set key at screen 0.5, screen 1 - mark_h - 1 * line center top horizontal samplen 1.5
if (note ne '') set label 1 note at screen 0.5, screen (note2 ne '' ? 11 : 4) * line center font ',5.5'
if (note2 ne '') set label 3 note2 at screen 0.5, screen 4 * line center font ',5.5'
if (origin ne '') set label 2 origin at screen 0.5, screen 1 - 6 * line center font ',6.5' textcolor rgb '#000000' front
wh = "lt 1 lc rgb '#000000' pt 0 lw 1.2"
dash = "nohead lc rgb '#000000' dt (4*dtu,3*dtu) lw 1.0"
# A round tic step giving about three tics up to x.
nice(x) = (x <= 0 ? 1 : (ex = 10**floor(log10(x)), fr = x / ex, (fr <= 1 ? 1 : fr <= 2 ? 2 : fr <= 5 ? 5 : 10) * ex))
# Column c: the metric; c+1, c+2: its whisker; c+3: the reference (sync's
# median) the whisker is read against, a dash from column 17 (the sync
# bar's x) across the prefetch bar.
do for [p=0:panels-1] {
    c = 5 + 4 * p
    undefine STATS_max
    # stats skips points outside the current range: reset what the panel
    # before set (an empty panel's [0:1] would hide an MFU of 9 %).
    set yrange [0:*]
    stats data using (valid(c + 2) && column(c + 2) > column(c) ? column(c + 2) : column(c)) nooutput
    # A panel with nothing measured (overlap on one rank): an empty 0-1 axis.
    tic = nice(exists("STATS_max") ? STATS_max / 3 : 0.3)
    set ytics tic
    # Six digits and more (100000 ms) as 100k: the left margin holds five.
    set format y (exists("STATS_max") && ceil(STATS_max / tic) * tic >= 99999.5 ? '%.0s%c' : '%g')
    # Up to the tic at or above the highest bar or whisker end (autoscale
    # leaves a whisker's end out).
    if (exists("STATS_max") && STATS_max > 0) { set yrange [0:ceil(STATS_max / tic) * tic] } else { set yrange [0:1] }
    if (!exists("STATS_max")) { set label 4 'not measured' at graph 0.5, graph 0.5 center font ',6' }
    set ylabel (p == 0 ? 'step time (ms)' : p == 1 ? 'overlap (%)' : 'MFU (%)')
    # The group labels from an invisible point per run (fully transparent).
    cmd = "plot data using 2:(0)" . (p < panels - 1 ? "" : ":xtic(3)") . " with points lc rgb '#FF000000' notitle"
    do for [w=1:words(configs)] {
        k = int(word(configs, w))
        cmd = cmd . sprintf(", '' using 1:($4 == %d ? column(%d) : NaN) with boxes lt 1 lc rgb '#000000' %s title '%s'", \
                            k, c, cfgfill(k), p == 0 ? cfgname(k) : "")
    }
    # Whiskers and dashes only in a panel where some bar has one (an
    # all-NaN plot is a gnuplot warning).
    if (int(word(whisk, p + 1)) > 0) {
        cmd = cmd . sprintf(", '' using ($17 - bw / 2):%d:($1 - $17 + bw):(0) with vectors %s notitle", c + 3, dash)
        cmd = cmd . sprintf(", '' using 1:%d:%d:%d with yerrorbars %s notitle", c, c + 1, c + 2, wh)
    }
    set format x ''
    eval cmd
    unset key
    unset label 1
    unset label 2
    unset label 3
    unset label 4
}
unset multiplot
