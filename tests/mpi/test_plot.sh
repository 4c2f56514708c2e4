#!/usr/bin/env bash
# zerobench plot over the results of real runs (a 2-rank all-gather and
# reduce-scatter sweep, a 1-rank all-gather sweep, a GEMM sweep, a tiny-model step --mode both on 2
# ranks with --trace, the same on 1 rank for scaling): every figure kind is
# drawn as a PDF and a PNG (checked by their magic bytes), each data file
# holds the rows the runs give, and the rebuild command a data file names
# redraws its figure by hand. Input that holds nothing usable, and bad input
# (a missing file, another schema, not JSON, -o naming a file or a folder
# whose parent is missing, gnuplot not on PATH), exit 2 with one line and
# leave no output; gnuplot failing removes what the run wrote. gnuplot (gnuplot-nox) is installed by ci/setup: the test
# requires it.
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! command -v gnuplot >/dev/null; then
  echo "FAIL: gnuplot is not installed (ci/setup installs gnuplot-nox)"
  exit 1
fi
run() { # NAME CMD...: runs CMD, its output in $tmp/NAME.log; a failure fails the test
  local name=$1; shift
  "$@" >"$tmp/$name.log" 2>&1 || { echo "FAIL: $name exited $?"; show "$tmp/$name.log"; fail=1; }
}
run ag mpirun --oversubscribe -np 2 "$ZB" allgather -b 1K -e 16K -f 4 -n 2 -w 1 --json "$tmp/ag.json"
run rs mpirun --oversubscribe -np 2 "$ZB" reducescatter -b 1K -e 16K -f 4 -n 2 -w 1 --json "$tmp/rs.json"
run ag1 "$ZB" allgather -b 1K -e 16K -f 4 -n 2 -w 1 --json "$tmp/ag1.json"
run gemm "$ZB" gemm -b 32 -e 128 -f 2 -n 2 -w 1 --json "$tmp/gemm.json"
run step2 mpirun --oversubscribe -np 2 "$ZB" step --mode both --steps 3 --warmup 1 \
  --json "$tmp/step2.json" --trace "$tmp/step2.trace.json"
run step1 "$ZB" step --mode both --steps 3 --warmup 1 --json "$tmp/step1.json"
[ $fail -eq 0 ] || exit 1

out="$tmp/figs"
"$ZB" plot "$tmp/ag.json" "$tmp/ag1.json" "$tmp/rs.json" "$tmp/gemm.json" "$tmp/step1.json" "$tmp/step2.json" \
  "$tmp/step2.trace.json" -o "$out" >"$tmp/plot.out" 2>"$tmp/plot.err"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: plot exited $rc"; show "$tmp/plot.err"; fail=1; }
python3 - "$tmp" <<'PY' || fail=1
import json, os, re, sys
from zbcheck import check, finish
d = sys.argv[1]
out = f"{d}/figs"
kinds = ["busbw", "gemm", "timeline", "steps", "memory", "scaling", "busbw_scaling"]
for k in kinds:
    for ext, magic in (("pdf", b"%PDF"), ("png", b"\x89PNG")):
        p = f"{out}/{k}.{ext}"
        ok = os.path.isfile(p) and os.path.getsize(p) > 0
        check(ok, f"{k}.{ext} written")
        if ok:
            check(open(p, "rb").read(4) == magic, f"{k}.{ext} starts with {magic!r}")
    check(os.path.isfile(f"{out}/{k}.dat"), f"{k}.dat written")
check(not [f for f in os.listdir(out) if ".tmp" in f or ".zb-" in f], "no temporary files left")

def blocks(path):
    """Data blocks (split at blank-line pairs): each a list of rows of fields, header row first."""
    text = "".join(l for l in open(path) if not l.startswith("#"))
    out = []
    for b in re.split(r"\n\s*\n\s*\n", text.strip("\n")):
        rows = [re.findall(r'"[^"]*"|\S+', l) for l in b.splitlines() if l.strip()]
        out.append([[f.strip('"') for f in r] for r in rows])
    return out

def runs(name):
    return json.load(open(f"{d}/{name}.json"))["runs"]

# busbw: one block per collective, the out-of-place rows of the sweep.
bb = blocks(f"{out}/busbw.dat")
check([b[0][1] for b in bb] == ["allgather cpu/mpi, 2 ranks", "allgather cpu/mpi, 1 rank",
                                 "reducescatter cpu/mpi, 2 ranks"], f"busbw blocks: {[b[0][1] for b in bb]}")
for b, name in zip(bb, ("ag", "ag1", "rs")):
    want = sorted((r["size_bytes"], r["metrics"]["busbw_gbps"]) for r in runs(name) if not r["in_place"])
    got = [(int(float(r[0])), float(r[1])) for r in b[1:]]
    check(got == want, f"{name} busbw rows {got} == {want}")
# gemm: one block, x = M for the square sweep, y in GFLOP/s; the peak line.
gb = blocks(f"{out}/gemm.dat")
want = sorted((int(r["shape"].split("x")[0]), r["metrics"]["tflops"] * 1000) for r in runs("gemm"))
got = [(round(float(r[0])), float(r[1])) for r in gb[0][1:]]
check(len(gb) == 1 and len(got) == 3, f"gemm: one block of 3 rows ({len(gb)} blocks)")
check(all(g[0] == w[0] and abs(g[1] - w[1]) <= 1e-9 * w[1] for g, w in zip(got, want)), f"gemm rows {got} ~ {want}")
r0 = runs("gemm")[0]["metrics"]
peak = blocks(f"{out}/gemm_ref.dat")
check(len(peak) == 1 and len(peak[0]) == 3, "one peak line of two points")
check(abs(float(peak[0][1][1]) - r0["tflops"] / r0["pct_peak"] * 100 * 1000) <= 1e-6 * float(peak[0][1][1]),
      "peak = tflops / pct_peak * 100")
# timeline: sync above prefetch, compute and comm rows, every op inside its step.
tl = blocks(f"{out}/timeline.dat")
check([r[1] for r in tl[3][1:]] == ["sync compute", "sync comm", "prefetch compute", "prefetch comm"],
      f"timeline rows {[r[1] for r in tl[3][1:]]}")
check(len(tl[0]) > 10 and len(tl[1]) > 2, "compute and comm records in the timeline")
steps = {r["mode"]: r["metrics"] for r in runs("step2")}
for rows in tl[:2]:
    for r in rows[1:]:
        y, s, e = int(r[0]), float(r[1]), float(r[2])
        mode = "sync" if y >= 3 else "prefetch"
        check(0 <= s <= e <= steps[mode]["step_time_max_ms"] * 1.05 + 0.05, f"op {r} inside its {mode} step")
# steps: one row per step run, the JSON's figures.
sb = blocks(f"{out}/steps.dat")[0]
allsteps = runs("step1") + runs("step2")
check(len(sb) == 1 + len(allsteps) == 5, f"steps rows {len(sb) - 1}")
for r, j in zip(sb[1:], allsteps):
    m = j["metrics"]
    check(abs(float(r[4]) - m["step_time_ms"]) <= 1e-9 * m["step_time_ms"], "step time")
    check(r[3] == ("9" if j["mode"] == "sync" else "10"), "configuration column: ZeRO-3 sync 9, prefetch 10")
    check(r[2] == f"{j['ranks']} rank{'s' if j['ranks'] > 1 else ''}", f"group {r[2]}")
    check(r[5] == "NaN", "no whisker: 3 pairs give no paired interval")
# memory: per-tag MiB rows, stacked (each column the top of its tag), equal
# the JSON's peaks.
mb = blocks(f"{out}/memory.dat")[0]
tags = [t.replace(" ", "_") for t in mb[0][5:]]
check("param_shard" in tags and "host_staging" not in tags, f"memory tags {tags}")
for r, j in zip(mb[1:], allsteps):
    by = j["metrics"]["peak_mem_by_tag_bytes"]
    tops, sum_ = [], 0.0
    for t in tags:
        sum_ += by.get(t, 0) / 1048576
        tops.append(sum_)
    check(all(abs(float(v) - w) < 1e-9 * max(w, 1) for v, w in zip(r[5:], tops)), f"memory row {r[0]}")
# scaling: sync and prefetch over 1 and 2 ranks.
sc = blocks(f"{out}/scaling.dat")
check(len(sc) == 2 and all([int(float(r[0])) for r in b[1:]] == [1, 2] for b in sc), "scaling: two lines over 1, 2 ranks")
# busbw_scaling: all-gather at 16 KiB (the largest size of both) over 1 and 2 ranks.
bs = blocks(f"{out}/busbw_scaling.dat")
check(len(bs) == 1 and bs[0][0][1] == "allgather cpu/mpi, 16 KiB", f"busbw_scaling block {bs[0][0]}")
want = [(r["ranks"], r["metrics"]["busbw_gbps"]) for n in ("ag1", "ag") for r in runs(n)
        if not r["in_place"] and r["size_bytes"] == 16384]
check([(int(float(r[0])), float(r[1])) for r in bs[0][1:]] == want, f"busbw_scaling rows == {want}")
finish()
PY
# The data file names the command that redraws its figure.
cmd=$(sed -n 's/^# rebuild: //p' "$out/busbw.dat")
rm -f "$out/busbw.pdf"
bash -c "$cmd" >"$tmp/rebuild.log" 2>&1 || { echo "FAIL: rebuild: $cmd"; show "$tmp/rebuild.log"; fail=1; }
check test "$(head -c 4 "$out/busbw.pdf" 2>/dev/null)" = "%PDF"

# The link reference line: the run's hardware profile's NVLink bandwidth
# within a node, its NIC's across nodes (the meta doctored to name h100_sxm,
# the busbw to what an H100 node measures: a line 8x above every measured
# point is left out, as it would press the curves flat on the axis).
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
for nodes in (1, 2):
    r = json.load(open(f"{d}/ag.json"))
    r["meta"]["config"]["hw"] = "h100_sxm"
    for x in r["runs"]:
        x["nodes"] = nodes
    json.dump(r, open(f"{d}/ag_h100_cpu_{nodes}.json", "w"))
    for x in r["runs"]:
        x["metrics"]["busbw_gbps"] = 40.0 + 300.0 * x["size_bytes"] / 16384 / nodes
    json.dump(r, open(f"{d}/ag_h100_{nodes}.json", "w"))
PY
"$ZB" plot "$tmp/ag_h100_cpu_1.json" -o "$tmp/hc" >"$tmp/hc.out" 2>&1
check test $? -eq 0
check test ! -e "$tmp/hc/busbw_ref.dat"
check grep -q "note: no link-bandwidth reference line: H100 SXM5 80GB NVLink 450 GB/s is off this scale (measured at most" "$tmp/hc.out"
"$ZB" plot "$tmp/ag_h100_1.json" "$tmp/ag_h100_2.json" -o "$tmp/h" >"$tmp/h.out" 2>&1
check test $? -eq 0
check grep -qx '"size_bytes" "H100 SXM5 80GB NVLink 450 GB/s"' "$tmp/h/busbw_ref.dat"
check grep -qx '"size_bytes" "H100 SXM5 80GB NIC 50 GB/s"' "$tmp/h/busbw_ref.dat"
check test "$(grep -c '^1024.0 4.5e+02$\|^16384.0 4.5e+02$' "$tmp/h/busbw_ref.dat")" -eq 2
check grep -q "note: no link-bandwidth reference line: profile 'cpu' gives no NVLink" "$tmp/plot.out"

# Some figures only: the others get one line each, exit 0.
"$ZB" plot "$tmp/gemm.json" -o "$tmp/g" >"$tmp/g.out" 2>&1
check test $? -eq 0
check grep -q "^busbw *not drawn: no allgather" "$tmp/g.out"
check test -s "$tmp/g/gemm.png"
check test ! -e "$tmp/g/busbw.dat"
# A trace alone draws the timeline (of the rank asked for).
"$ZB" plot "$tmp/step2.trace.json" --rank 1 -o "$tmp/t" >"$tmp/t.out" 2>&1
check test $? -eq 0
check test -s "$tmp/t/timeline.pdf"

# Nothing usable, and bad input: exit 2, one line on stderr, no output.
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["runs"]=[]; json.dump(d,open(sys.argv[2],"w"))' \
  "$tmp/gemm.json" "$tmp/none.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["schema"]="zerobench/9"; json.dump(d,open(sys.argv[2],"w"))' \
  "$tmp/gemm.json" "$tmp/other.json"
echo '{"schema": "zerobench/1", "runs": [' >"$tmp/broken.json"
touch "$tmp/afile"
expect2() { # NAME WANT-IN-MESSAGE ARGS...: exit 2, one line naming WANT, no -o folder left
  local name=$1 want=$2; shift 2
  rm -rf "$tmp/bad"
  "$ZB" plot "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  local rc=$?
  check test $rc -eq 2 || echo "  ($name: exit $rc)"
  check test "$(wc -l <"$tmp/$name.err")" -eq 1 || show "$tmp/$name.err"
  check grep -q -- "$want" "$tmp/$name.err" || show "$tmp/$name.err"
  check test ! -e "$tmp/bad"
}
expect2 none "nothing to plot" "$tmp/none.json" -o "$tmp/bad"
expect2 missing "nope.json" "$tmp/nope.json" -o "$tmp/bad"
expect2 schema "zerobench/9" "$tmp/other.json" -o "$tmp/bad"
expect2 broken "broken.json': not JSON" "$tmp/broken.json" -o "$tmp/bad"
expect2 mixed "nope.json" "$tmp/gemm.json" "$tmp/nope.json" -o "$tmp/bad"
expect2 nodir "no -o DIR" "$tmp/gemm.json"
expect2 badrank "--rank 'x'" "$tmp/gemm.json" -o "$tmp/bad" --rank x
expect2 option "unknown option '--colour'" "$tmp/gemm.json" -o "$tmp/bad" --colour
expect2 twotraces "a second trace" "$tmp/step2.trace.json" "$tmp/step2.trace.json" -o "$tmp/bad"
expect2 outfile "afile': not a folder" "$tmp/gemm.json" -o "$tmp/afile"
expect2 outparent "parent is not a writable folder" "$tmp/gemm.json" -o "$tmp/no/such/dir"
rm -rf "$tmp/bad"
PATH=/nonexistent "$ZB" plot "$tmp/gemm.json" -o "$tmp/bad" >/dev/null 2>"$tmp/nognuplot.err"
check test $? -eq 2
check grep -q "gnuplot was not found on PATH: install the Debian package gnuplot-nox" "$tmp/nognuplot.err"
check test "$(wc -l <"$tmp/nognuplot.err")" -eq 1
check test ! -e "$tmp/bad"
# gnuplot failing on one figure (a script broken on purpose): exit 1, one
# line naming the script, and what the run had written is gone.
mkdir "$tmp/scripts"
cp "$(dirname "$0")/../../plots/"*.gp "$tmp/scripts/"
echo "this is not gnuplot" >>"$tmp/scripts/steps.gp"
"$ZB" plot "$tmp/ag.json" "$tmp/step1.json" -o "$tmp/broken_out" --scripts "$tmp/scripts" >/dev/null 2>"$tmp/gp.err"
check test $? -eq 1
check grep -q "gnuplot failed on steps.gp" "$tmp/gp.err"
check test "$(wc -l <"$tmp/gp.err")" -eq 1
check test ! -e "$tmp/broken_out"
# An existing folder is left as it was.
mkdir "$tmp/keep"
"$ZB" plot "$tmp/none.json" -o "$tmp/keep" >/dev/null 2>&1
check test $? -eq 2
check test -z "$(ls -A "$tmp/keep")"
[ $fail -eq 0 ] && echo "test_plot: $passed checks passed"
exit $fail
