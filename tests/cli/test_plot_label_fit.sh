#!/usr/bin/env bash
# zerobench plot's text fits at any label length the inputs produce (issue
# 22 item 5: wrap or abbreviate, never overlap), and nothing from an input
# reaches gnuplot as an escape. Every figure kind is drawn from inputs
# whose names are as long and as wide as an input can make them (models,
# backends, dtypes, memory tags, a hardware profile's name, a trace's
# process, stream and mode names: 60-130 characters of W's and m's, with
# spaces, quotes, backslashes, \n, @ { } _ ^ & % # $ and backquotes), in 1
# to 40 groups, and from ordinary short ones. Then:
# - each figure's two `# rebuild:` commands (PDF and PNG) run again and
#   gnuplot prints nothing on stderr: no warning ("difficulty fitting plot
#   titles into key", "Skipping data file with no valid points", ...);
# - tests/plot_fit.py checks every label against the room it has, in the
#   font's own advance widths, every legend against gnuplot's column
#   layout, the data strings for escapes and, with pdftotext, that no two
#   words of a PDF overlap and none runs off the page.
# Skipped (77) without gnuplot and its cairo terminals.
set -u
source "$(dirname "$0")/../lib.sh"
if ! gnuplot -e "set terminal pdfcairo; set terminal pngcairo" >/dev/null 2>&1; then
  echo "SKIP: gnuplot with the cairo terminals is not installed (ci/setup installs gnuplot-nox)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A hardware profile with a long name (with a \n in it), beside the real ones.
mkdir -p "$tmp/profiles"
cp -r "$ZB_PROFILES/hw" "$tmp/profiles/"
export ZB_PROFILES="$tmp/profiles"
python3 - "$tmp" <<'PY'
import copy, json, sys
d = sys.argv[1]
hw = json.load(open(f"{d}/profiles/hw/h100_sxm.json"))
hw["name"] = ("H100 \"SXM\" it's \\n @{x}_^& " + "W" * 60)[:63]
json.dump(hw, open(f"{d}/profiles/hw/longhw.json", "w"))
SP = "\"q\" it's a\\b\\n @{x}_y^z&w %s #h $H `c`"

def name(i, n=110):
    return (f"M{i} WWWW mmmm {SP} model_name_" + ("W" if i % 2 else "x") * n)[:n]

def step(model, stage, mode, ranks=2, **kw):
    t = 10.0 + stage + (mode == "sync") * 3
    m = {"step_time_ms": t, "overlap_pct": 40.0 if mode == "prefetch" else 0.0, "mfu_pct": 30.0,
         "tokens_per_s": 1000.0 * ranks / t,
         "peak_mem_by_tag_bytes": {"param_shard": 2**28, "grad_shard": 2**27, "optim_state": 2**29,
                                   "activation": 2**28, "workspace": 2**26}}
    if mode == "prefetch":
        m["paired"] = {"step_diff_lo_ms": -4.0, "step_diff_hi_ms": -1.0, "ci_level": 0.95}
    r = {"bench": "step", "model": model, "stage": stage, "mode": mode, "ranks": ranks, "nodes": 1,
         "param_dtype": "bf16", "recompute": "none", "prefetch_depth": 1, "metrics": m}
    r.update(kw)
    return r

def save(path, runs, **meta):
    m = {"backend": "cpu", "comm": "mpi", "config": {"hw": "cpu"}}
    m.update(meta)
    json.dump({"schema": "zerobench/1", "meta": m, "runs": runs}, open(f"{d}/{path}", "w"))

configs = [(3, "sync"), (3, "prefetch")]
for g in (1, 3, 8, 13, 40):  # long model names in g groups
    save(f"steps_g{g}.json", [step(name(i), s, m) for i in range(g) for s, m in configs])
# Every field differing (model, ranks, backend, dtype, recompute), long each.
for i in range(4):
    save(f"fields{i}.json", [step(name(i), s, m, ranks=2 + i, param_dtype="dt_" + SP + "W" * 40,
                                  recompute="rc_" + SP + str(i)) for s, m in configs],
         backend="cpu_" + SP + "W" * 40, comm="mpi_" + SP + str(i))
# Models differing only at their end, and a long memory tag.
runs = [step("llama3_70b_finetune_variant_" + v, s, m) for v in "AB" for s, m in configs]
for r in runs:
    r["metrics"]["peak_mem_by_tag_bytes"]["a_tag_of_its_own_" + "W" * 50 + "\\n"] = 2**27
save("variants.json", runs)
# Simulated, on the long-named profile: every stage, 3 models x 3 rank counts
# (steps_sim, memory_sim, scaling_sim over two backends).
for b in range(2):
    runs = [step(name(k), s, m, ranks=r, simulated=True) for k in range(3) for r in (8, 16, 32)
            for s, m in [(2, "prefetch"), (3, "sync"), (3, "prefetch")]]
    save(f"sim{b}.json", runs, backend="sim" + "W" * 30 + str(b), comm="sim", simulated=True,
         config={"hw": "longhw"})
# Collectives and GEMMs: long dtypes and backends, the long profile's link.
colls = [{"bench": ["allgather", "reducescatter", "allreduce"][s % 3], "size_bytes": size, "dtype": f"dt{s} {SP}" + "W" * 60,
          "in_place": False, "ranks": ranks, "nodes": 1, "metrics": {"busbw_gbps": 1.0 + s + ranks / 10}}
         for s in range(6) for ranks in (2, 4, 8) for size in (1024, 65536, 1 << 20)]
gemms = [{"bench": "gemm", "name": "square", "shape": f"{n}x{n}x{n}", "dtype": f"g{s} {SP}" + "W" * 50,
          "ranks": 1, "metrics": {"tflops": 0.5 + s + n / 1000, "pct_peak": 40.0 + s}}
         for s in range(4) for n in (64, 256, 1024)]
save("coll.json", colls + gemms, backend="cpu_" + SP + "W" * 20, comm="mpi_" + SP, config={"hw": "longhw"})
# More series than style.gp has line styles (24): 26 dtypes of collectives,
# 26 models at 2 rank counts (plot notes the repeat; the first 24 differ).
save("many.json", [{"bench": "allgather", "size_bytes": size, "dtype": f"d{s}", "in_place": False, "ranks": ranks,
                    "nodes": 1, "metrics": {"busbw_gbps": 1.0 + s / 4 + ranks / 10 + size / 2**21}}
                   for s in range(26) for ranks in (2, 4) for size in (1024, 1 << 20)] +
     [step(f"m{k}", 3, "prefetch", ranks=r) for k in range(26) for r in (8, 16)])
# Ordinary names: what a demo's inputs hold.
save("short.json", [step("tiny", s, m) for s, m in configs])
save("short_coll.json", [dict(c, dtype="float") for c in colls if c["dtype"].startswith(("dt0", "dt1"))] +
     [dict(g, dtype="bf16") for g in gemms if g["dtype"].startswith("g0")], config={"hw": "h100_sxm"})
# A trace: long process, stream and mode names, a backslash ending op names.
ev = [{"name": "process_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "rank 0 on " + SP + "W" * 100}}]
for tid in (1, 2, 3):
    ev.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": {"name": f"stream {SP}" + "W" * 60 + str(tid)}})
t0 = 0.0
for mode in ("sync_" + SP + "W" * 40, "prefetch_" + SP):
    ev.append({"name": "step", "cat": "step", "ph": "X", "pid": 1, "tid": 1000000, "ts": t0, "dur": 900.0,
               "args": {"step": 1, "phase": "measured", "mode": mode}})
    for k, (cat, tid) in enumerate([("compute", 1), ("comm", 2), ("copy", 3)] * 4):
        ev.append({"name": f"op {k} \\", "cat": cat, "ph": "X", "pid": 1, "tid": tid, "ts": t0 + 70 * k, "dur": 60.0})
    t0 += 1000.0
json.dump({"traceEvents": ev, "otherData": {"simulated": False}}, open(f"{d}/trace.json", "w"))
PY
check test $? -eq 0
mkdir -p "$tmp/out"
sets=(g1 g3 g8 g13 g40 fields variants sim coll many short trace)
declare -A inputs=(
  [g1]="steps_g1.json" [g3]="steps_g3.json" [g8]="steps_g8.json" [g13]="steps_g13.json" [g40]="steps_g40.json"
  [fields]="fields0.json fields1.json fields2.json fields3.json" [variants]="variants.json"
  [sim]="sim0.json sim1.json" [coll]="coll.json" [many]="many.json" [short]="short.json short_coll.json" [trace]="trace.json short.json")
dirs=()
for s in "${sets[@]}"; do
  files=()
  for f in ${inputs[$s]}; do files+=("$tmp/$f"); done
  expect_rc 0 "$tmp/$s" timeout 300 "$ZB" plot "${files[@]}" -o "$tmp/out/$s"
  dirs+=("$tmp/out/$s")
done
# Every kind drawn at least once, measured and simulated.
for k in busbw gemm timeline steps memory busbw_scaling steps_sim memory_sim scaling_sim; do
  ls "$tmp"/out/*/"$k.png" >/dev/null 2>&1 || { echo "FAIL: no $k.png drawn"; fail=1; }
done
# Past 24 series the styles repeat, and plot says so; the first 24 differ.
for kn in busbw:52 busbw_scaling:26 scaling:26; do
  k=${kn%:*} n=${kn#*:}
  check grep -q "note: .*$n series: past 24 they take the first ones' line styles again" \
    <(awk -v k="$k" '$1 == k { getline; print }' "$tmp/many.out")
done
lts=$(sed -n "s/.*lts='\([0-9 ]*\)'.*/\1/p" "$tmp/out/many/scaling.dat" | head -1)
check test "$(echo "$lts" | tr ' ' '\n' | head -24 | sort -u | wc -l)" -eq 24
# Tick labels below 10000 are plain numbers: the sim set's tokens/s reach
# 2667, where %.0s%c printed 1500 and 2500 as "2k" beside 2000's "2k".
if command -v pdftotext >/dev/null; then
  pdftotext "$tmp/out/sim/scaling_sim.pdf" "$tmp/scaling_sim.txt"
  check grep -qx "2500" "$tmp/scaling_sim.txt"
  check bash -c "! grep -qx '2k' '$tmp/scaling_sim.txt'"
fi
# gnuplot's warnings: each figure redrawn by its own rebuild lines.
for dat in "$tmp"/out/*/*.dat; do
  case $dat in *_ref.dat) continue ;; esac
  while IFS= read -r cmd; do
    if ! (eval "$cmd") >/dev/null 2>"$tmp/gp.err" || [ -s "$tmp/gp.err" ]; then
      echo "FAIL: gnuplot on ${dat#"$tmp"/out/}: $(head -3 "$tmp/gp.err")"
      fail=1
    else
      passed=$((passed + 1))
    fi
  done < <(sed -n 's/^# rebuild: //p; s/^#      and //p' "$dat")
done
python3 "$ZB_TESTS_DIR/plot_fit.py" "${dirs[@]}" || fail=1
[ $fail -eq 0 ] && echo "test_plot_label_fit: $passed checks passed"
exit $fail
