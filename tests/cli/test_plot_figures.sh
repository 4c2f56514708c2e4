#!/usr/bin/env bash
# What zerobench plot's figures promise a paper (issue 22 item 5), asserted
# on the data files and scripts, nothing timed: measured and simulated runs
# are drawn as separate figures (KIND and KIND_sim), the simulated one
# marked SIMULATED in the figure itself; configurations named as the scale
# table names them (ZeRO-2, not "prefetch, stage 2") in one fixed order;
# the steps whisker is the paired interval the verdict used (sync's median
# plus the prefetch - sync interval, read against a dash at sync's median);
# memory in the tables' unit (GiB from 1 GiB, else MiB) with the device's
# memory as a line when the hardware profile has one; every group label
# wrapped to the width its group has, legend entries cut in the middle;
# every legend outside the plot area. gnuplot (gnuplot-nox, ci/setup)
# draws the figures: the PNGs must exist.
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! command -v gnuplot >/dev/null; then
  echo "FAIL: gnuplot is not installed (ci/setup installs gnuplot-nox)"
  exit 1
fi
plots="$(dirname "$0")/../../plots"
# A measured paired run (1 rank, 8 pairs: an interval), a simulated 8B on
# 2 simulated H100s at every stage, the same with a long model name (for
# the labels), and the tiny model simulated (KiB under 80 GB: off scale).
"$ZB" step --model tiny --mode both --steps 8 --warmup 1 --json "$tmp/cpu.json" >"$tmp/cpu.log" 2>&1 ||
  { echo "FAIL: cpu step"; show "$tmp/cpu.log"; exit 1; }
"$ZB" step --backend sim --hw h100_sxm --model llama3_8b --nodes 1 --gpus-per-node 2 --stage all --mode both \
  --recompute full --steps 2 --warmup 1 --json "$tmp/sim.json" >"$tmp/sim.log" 2>&1 ||
  { echo "FAIL: sim step"; show "$tmp/sim.log"; exit 1; }
"$ZB" step --backend sim --hw h100_sxm --model tiny --nodes 1 --gpus-per-node 2 --mode both --steps 2 --warmup 1 \
  --json "$tmp/simtiny.json" >"$tmp/simtiny.log" 2>&1 || { echo "FAIL: sim tiny"; show "$tmp/simtiny.log"; exit 1; }
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
r = json.load(open(f"{d}/sim.json"))
for i, run in enumerate(r["runs"]):
    run["model"] = "an_untrusted_model_name_" + "x" * 60 + " with words and a \\n backslash %d" % (i // 2)
json.dump(r, open(f"{d}/long.json", "w"))
# A noisy sync step: the interval's low end below -sync (the whisker would
# end below 0).
c = json.load(open(f"{d}/cpu.json"))
t = [x for x in c["runs"] if x["mode"] == "sync"][0]["metrics"]["step_time_ms"]
p = [x for x in c["runs"] if x["mode"] == "prefetch"][0]["metrics"]["paired"]
p["step_diff_lo_ms"], p["step_diff_hi_ms"], p["step_diff_significant"] = -2 * t, 0.5 * t, False
json.dump(c, open(f"{d}/noisy.json", "w"))
PY
"$ZB" plot "$tmp/noisy.json" -o "$tmp/noisy" >"$tmp/noisy.out" 2>&1 || { echo "FAIL: plot noisy"; show "$tmp/noisy.out"; fail=1; }
check test -s "$tmp/noisy/steps.png"
"$ZB" plot "$tmp/cpu.json" "$tmp/sim.json" -o "$tmp/f" >"$tmp/plot.out" 2>"$tmp/plot.err"
check test $? -eq 0
"$ZB" plot "$tmp/long.json" -o "$tmp/long" >"$tmp/long.out" 2>"$tmp/long.err"
check test $? -eq 0
"$ZB" plot "$tmp/simtiny.json" -o "$tmp/tiny" >"$tmp/tiny.out" 2>"$tmp/tiny.err"
check test $? -eq 0
for f in plot long tiny; do [ -s "$tmp/$f.err" ] && show "$tmp/$f.err"; done
check grep -q "^  *note: no device-memory line: device memory 76293.9 MiB (off this scale)" "$tmp/tiny.out"
check test ! -e "$tmp/tiny/memory_sim_ref.dat"
check grep -q "offscale='device memory 76293.9 MiB (off this scale)'" "$tmp/tiny/memory_sim.dat"
for f in steps memory steps_sim memory_sim; do check test -s "$tmp/f/$f.png"; done
check grep -q "^  *note: no device-memory line: profile 'cpu' has no device memory" "$tmp/plot.out"
python3 - "$tmp" "$plots" <<'PY' || fail=1
import json, re, sys
from zbcheck import check, finish
d, plots = sys.argv[1], sys.argv[2]

def rows(path):
    """The data rows (header first) of a data file's first block, fields unquoted."""
    out = []
    for line in open(path):
        if line.startswith("#") or not line.strip():
            if out and not line.strip():
                break
            continue
        out.append([f.strip('"') for f in re.findall(r'"[^"]*"|\S+', line)])
    return out

def rebuild(path):
    return [l for l in open(path) if l.startswith("# rebuild:")][0]

cpu = json.load(open(f"{d}/cpu.json"))["runs"]
sim = json.load(open(f"{d}/sim.json"))["runs"]
# Separate figures: the measured runs in steps.dat, the simulated ones in
# steps_sim.dat, and only the simulated one marked.
st, ss = rows(f"{d}/f/steps.dat"), rows(f"{d}/f/steps_sim.dat")
check(len(st) - 1 == len(cpu) and len(ss) - 1 == len(sim), f"steps rows {len(st) - 1} measured, {len(ss) - 1} simulated")
check("origin='SIMULATED" in rebuild(f"{d}/f/steps_sim.dat"), "steps_sim is marked SIMULATED")
check("origin=" not in rebuild(f"{d}/f/steps.dat"), "steps (measured) carries no mark")
check("origin='SIMULATED" in rebuild(f"{d}/f/memory_sim.dat"), "memory_sim is marked SIMULATED")
# Configurations by code (3 * stage + 0 sync, 1 prefetch) in the fixed
# order: DDP sync, DDP, ZeRO-1 sync .. ZeRO-3 prefetch, left to right in each group.
h = st[0]
codes = [int(r[h.index("config")]) for r in ss[1:]]
check(sorted(set(codes)) == [0, 1, 3, 4, 6, 7, 9, 10], f"sim configs {sorted(set(codes))}")
xs = {c: float(r[0]) for c, r in zip(codes, ss[1:])}
check(sorted(xs, key=xs.get) == sorted(xs), f"bars left to right in the fixed order {xs}")
check("configs='0 1 3 4 6 7 9 10'" in rebuild(f"{d}/f/steps_sim.dat"), "the legend's configurations, in order")
# The paired whisker: on the prefetch bar, sync's median + the interval.
sync = [r for r in cpu if r["mode"] == "sync"][0]["metrics"]
pre = [r for r in cpu if r["mode"] == "prefetch"][0]["metrics"]
p = pre["paired"]
row = [r for r in st[1:] if r[h.index("config")] == "10"][0]
srow = [r for r in st[1:] if r[h.index("config")] == "9"][0]
col = lambda r, k: float(r[h.index(k)])
check(p["step_diff_lo_ms"] is not None, "8 pairs give an interval")
if p["step_diff_lo_ms"] is not None:
    t = sync["step_time_ms"]
    check(abs(col(row, "step_lo") - (t + p["step_diff_lo_ms"])) < 1e-9 and
          abs(col(row, "step_hi") - (t + p["step_diff_hi_ms"])) < 1e-9, f"whisker {row[5:7]} = sync + [lo, hi]")
    check(abs(col(row, "step_ref") - t) < 1e-12, "the dash at sync's median")
    check(f"paired {100 * p['ci_level']:.1f}% interval" in rebuild(f"{d}/f/steps.dat"), "the note gives the interval's level")
    crosses = col(row, "step_lo") <= t <= col(row, "step_hi")
    check(crosses == (not p["step_diff_significant"]), "the whisker crosses the dash exactly when not significant")
    check(abs(col(row, "ref_x0") - float(srow[0])) < 1e-9, "the dash starts at the sync bar")
# The noisy one: the whisker as measured (below 0, drawn to the axis); MFU
# unbounded above, so no MFU whisker.
n = rows(f"{d}/noisy/steps.dat")
nrow = [r for r in n[1:] if r[h.index("config")] == "10"][0]
t = sync["step_time_ms"]
check(abs(float(nrow[h.index("step_lo")]) - (-t)) < 1e-9 and abs(float(nrow[h.index("step_hi")]) - 1.5 * t) < 1e-9,
      f"noisy whisker {nrow[5:7]} = sync + [-2, 0.5] sync")
check(nrow[h.index("mfu_lo")] == "NaN" and nrow[h.index("mfu_hi")] == "NaN", "no MFU whisker when unbounded")
check(all(r[h.index("step_lo")] == "NaN" for r in ss[1:]), "no whiskers on simulated steps")
check(re.search(r"note='no whiskers: simulated", rebuild(f"{d}/f/steps_sim.dat")), "the sim figure's note says why")
# Memory: MiB for the tiny model's KiB (the step table's unit), GiB when a
# bar reaches 1 GiB (the scale table's); the device's memory (80e9 B) as a
# line on the sim one.
check("yunit='MiB'" in rebuild(f"{d}/f/memory.dat"), "memory in MiB below 1 GiB")
check("yunit='GiB'" in rebuild(f"{d}/f/memory_sim.dat"), "memory in GiB from 1 GiB")
ref = rows(f"{d}/f/memory_sim_ref.dat")
check(len(ref) == 3 and ref[0][1].startswith("device memory"), f"device memory line {ref[:1]}")
check(abs(float(ref[1][1]) - 80e9 / 2**30) < 1e-9 * 80e9, f"at 80e9 bytes in GiB ({ref[1][1]})")
m = rows(f"{d}/f/memory.dat")
tags = m[0][5:]
check(tags[:3] == ["param shard", "grad shard", "optim state"], f"tags in the engine's order {tags}")
by = [r for r in cpu][0]["metrics"]["peak_mem_by_tag_bytes"]
top = sum(v for k, v in by.items() if k != "host_staging") / 2**20
check(abs(float(m[1][-1]) - top) < 1e-9 * top, "the stack's top is the run's device peak")
# Long labels: at most 3 lines, no input backslash, every line within its
# group's share of the axis (0.81 of the canvas, 6 pt) in the font's own
# widths (tests/plot_fit.py; test_plot_label_fit checks every figure).
import plot_fit
ttf = plot_fit.font_file()
ls = rows(f"{d}/long/steps_sim.dat")
groups = {int(r[1]) for r in ls[1:]}
share = 0.81 * plot_fit.CANVAS / (len(groups) + 0.2)
for r in ls[1:]:
    lines = r[2].split("\\n")
    check(len(lines) <= 3 and "\\" not in r[2].replace("\\n", ""), f"group label {r[2]!r}: 3 lines, no backslash")
    if ttf:
        plot_fit.EM = plot_fit.advances(ttf)
        w = plot_fit.width_pt(r[2], 6)
        check(w <= share, f"group label {r[2]!r} is {w:.1f} pt, its group {share:.1f} pt")
# Legends outside the plot area in every script: below the line figures,
# above the bar figures and the timeline, in a panel of its own under the
# scaling figure's two.
for k in ("busbw", "gemm", "busbw_scaling"):
    check(re.search(r"set key outside", open(f"{plots}/{k}.gp").read()), f"{k}: legend outside")
for k in ("steps", "memory", "timeline"):
    check(re.search(r"set key at screen", open(f"{plots}/{k}.gp").read()), f"{k}: legend placed outside the plot")
sc = open(f"{plots}/scaling.gp").read()
check(re.search(r"set tmargin at screen key_pt \* line\nset key on inside", sc), "scaling: the legend's own panel")
finish()
PY
# Legend entries (series labels) cut in the middle: the start and the end
# (", 2 ranks") stay.
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
runs = [{"bench": "allgather", "size_bytes": s, "dtype": "d" * 90, "in_place": False, "ranks": 2, "nodes": 1,
         "metrics": {"busbw_gbps": 1.0}} for s in (1024, 2048)]
json.dump({"schema": "zerobench/1", "meta": {"backend": "cpu", "comm": "mpi"}, "runs": runs}, open(f"{d}/bw.json", "w"))
PY
"$ZB" plot "$tmp/bw.json" -o "$tmp/bw" >/dev/null 2>&1
check test $? -eq 0
label=$(sed -n 's/^"size_bytes" "\(.*\)"$/\1/p' "$tmp/bw/busbw.dat")
check test "${#label}" -le 56
check test "${label:0:17}" = "allgather cpu/mpi"
check test "${label: -9}" = ", 2 ranks"
case $label in *...*) passed=$((passed + 1)) ;; *) echo "FAIL: '$label' not cut"; fail=1 ;; esac
[ $fail -eq 0 ] && echo "test_plot_figures: $passed checks passed"
exit $fail
