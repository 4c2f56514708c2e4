#!/usr/bin/env bash
# A trace Holistic Trace Analysis loads (issue 22 item 2; docs/design.md §7):
# `--trace DIR --trace-format kineto` on 2 cpu ranks, read by HTA itself
# (HolisticTraceAnalysis from PyPI, in a venv under the build folder made
# here once and reused; exit 77, skipped, when it cannot be installed):
#   - HTA finds both ranks (not one merged into rank 0) and their steps;
#   - get_comm_comp_overlap per rank equals the overlap zerobench wrote in
#     its JSON within 0.1 point: one measured step (sync and prefetch),
#     where both are that step's |comm ∩ compute| / |comm|; three steps,
#     where HTA's is over the steps it keeps (all with
#     include_last_profiler_step, else all but the last), that is the mean
#     of zerobench's per-step overlaps weighted by each step's comm time
#     (the JSON's samples); and each run's folder of --mode both;
#   - every kernel's name is of the class HTA's rules give its kind;
#   - get_temporal_breakdown and get_idle_time_breakdown run, per rank.
# HTA 0.5 rounds every event inward to whole microseconds unless
# HTA_DISABLE_NS_ROUNDING=1: the comparisons set it (the tiny model's ops
# last microseconds); the rounded figures are printed, not judged.
# Also: stale rank files of a larger run are removed, and bad --trace-format
# input exits 2 with one line.
set -u
source "$(dirname "$0")/../lib.sh"
: "${ZB:?ZB must name the zerobench binary}"
: "${ZB_TEST_BIN_DIR:?ZB_TEST_BIN_DIR must name the tests build folder}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zb_hta.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Bad input first: it needs no HTA.
cd "$tmp"
expect2 fmt "--trace-format 'perfetto': accepted: chrome, kineto" "$ZB" step --trace t --trace-format perfetto
expect2 nodir "--trace-format kineto: needs --trace DIR" "$ZB" step --trace-format kineto
mkdir foreign && echo '{}' >foreign/results.json
expect2 foreign "holds 'results.json', which HTA would read" "$ZB" step --trace foreign --trace-format kineto
ln -s foreign linked
expect2 linked "is a symbolic link" "$ZB" step --trace linked --trace-format kineto
mkdir empty
expect2 jsonin "--json 'empty/r.json': inside the --trace folder" \
    "$ZB" step --trace empty --trace-format kineto --json empty/r.json
check [ -z "$(ls empty)" ]
cd - >/dev/null

# HTA 0.5 in a venv of the build folder. It imports pandas, numpy, plotly,
# PyYAML, networkx and psutil; its declared jupyterlab, pydot and pytest
# serve notebooks and its own tests, so they are left out (--no-deps).
venv="$ZB_TEST_BIN_DIR/hta-venv"
py="$venv/bin/python"
if ! "$py" -c 'import hta, sys; sys.exit(0 if hta.__version__ == "0.5.0" else 1)' 2>/dev/null; then
  rm -rf "$venv"
  if ! python3 -m venv "$venv" >"$tmp/venv.log" 2>&1; then
    echo "test_trace_hta: SKIP: python3 -m venv failed (python3-venv missing?):"; show "$tmp/venv.log"; exit 77
  fi
  export PIP_DISABLE_PIP_VERSION_CHECK=1
  if ! { timeout 300 "$py" -m pip install -q --timeout 30 --retries 1 pandas numpy plotly pyyaml networkx psutil &&
         timeout 120 "$py" -m pip install -q --timeout 30 --retries 1 --no-deps HolisticTraceAnalysis==0.5.0; } \
       >"$tmp/pip.log" 2>&1; then
    echo "test_trace_hta: SKIP: pip could not install HolisticTraceAnalysis 0.5.0 from PyPI:"; show "$tmp/pip.log"
    rm -rf "$venv"
    exit 77
  fi
fi

run() { # NAME ARGS...: a 2-rank cpu step with a kineto trace in $tmp/NAME and results in $tmp/NAME.json
  local name=$1; shift
  timeout 300 mpirun --oversubscribe -np 2 "$ZB" step --backend cpu --trace "$tmp/$name" --trace-format kineto \
      --json "$tmp/$name.json" "$@" >"$tmp/$name.out" 2>&1
  local rc=$?
  check [ $rc -eq 0 ]
  [ $rc -eq 0 ] || show "$tmp/$name.out"
}
mkdir -p "$tmp/pf1" && echo '{}' >"$tmp/pf1/rank-7.pt.trace.json" # a larger run's: removed
run pf1 --mode prefetch --steps 1 --warmup 1
run sy1 --mode sync --steps 1 --warmup 1
run pf3 --mode prefetch --steps 3 --warmup 1
run both --mode both --steps 2 --warmup 1
check [ ! -e "$tmp/pf1/rank-7.pt.trace.json" ]
check [ -f "$tmp/pf1/rank-0.pt.trace.json" ] && check [ -f "$tmp/pf1/rank-1.pt.trace.json" ]
check [ -d "$tmp/both/stage-3-sync" ] && check [ -d "$tmp/both/stage-3-prefetch" ]

HTA_DISABLE_NS_ROUNDING=1 "$py" - "$tmp" <<'PY' || fail=1
import glob, json, logging, math, os, sys, warnings
warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)  # HTA's loader warns at every step it takes
from zbcheck import check, finish
from hta.trace_analysis import TraceAnalysis
from hta.utils.utils import get_kernel_type
tmp = sys.argv[1]

def step_runs(path):
    return {r["mode"]: r for r in json.load(open(path))["runs"] if r.get("bench") == "step"}

def zb_weighted(run, rank, k):
    """zerobench's steps 1..k of `rank`: the mean of the per-step overlaps weighted by comm time."""
    s, n = run["metrics"]["samples"], run["ranks"]
    steps = len(s["overlap_pct"]) // n
    o = s["overlap_pct"][rank * steps:rank * steps + k]
    c = s["comm_ms"][rank * steps:rank * steps + k]
    return sum(a * b for a, b in zip(o, c)) / sum(c)

def hta_overlap(ta):
    df = ta.get_comm_comp_overlap(visualize=False)
    return {int(r): float(v) for r, v in zip(df["rank"], df["comp_comm_overlap_pctg"])}

def judge(name, folder, run, last):
    ta = TraceAnalysis(trace_dir=folder, include_last_profiler_step=last)
    check(ta.t.get_ranks() == [0, 1], f"{name}: HTA read ranks {ta.t.get_ranks()}")
    steps = len(run["metrics"]["samples"]["overlap_pct"]) // run["ranks"]
    k = steps if last or steps == 1 else steps - 1
    got = hta_overlap(ta)
    for r in (0, 1):
        want = run["per_rank"][r]["overlap_pct"] if steps == 1 else zb_weighted(run, r, k)
        ok = r in got and not math.isnan(got[r]) and abs(got[r] - want) <= 0.1
        check(ok, f"{name} rank {r}: HTA overlap {got.get(r)} vs zerobench {want:.4f}")
        print(f"test_trace_hta: {name} rank {r}: HTA {got.get(r)} %, zerobench {want:.4f} % ({k} step(s))")
    tb = ta.get_temporal_breakdown(visualize=False)
    check(sorted(int(r) for r in tb["rank"]) == [0, 1], f"{name}: temporal breakdown ranks {list(tb['rank'])}")
    check(all(v > 0 for v in tb["kernel_time(us)"]), f"{name}: kernel time {list(tb['kernel_time(us)'])}")
    for r in (0, 1):
        idle, _ = ta.get_idle_time_breakdown(ranks=[r], visualize=False)
        check(len(idle) > 0 and set(idle["stream"]) >= {1, 2}, f"{name} rank {r}: idle breakdown {idle}")
    return ta

runs = {n: step_runs(f"{tmp}/{n}.json") for n in ("pf1", "sy1", "pf3", "both")}
judge("prefetch, 1 step", f"{tmp}/pf1", runs["pf1"]["prefetch"], False)
judge("sync, 1 step", f"{tmp}/sy1", runs["sy1"]["sync"], False)
ta = judge("prefetch, 3 steps", f"{tmp}/pf3", runs["pf3"]["prefetch"], False)
# Steps keep zerobench's numbers (warm-up first); HTA leaves out the last by default.
check([int(s) for s in ta.get_profiler_steps()] == [2, 3], f"profiler steps {ta.get_profiler_steps()}")
judge("prefetch, 3 steps, the last included", f"{tmp}/pf3", runs["pf3"]["prefetch"], True)
for mode in ("sync", "prefetch"):
    judge(f"--mode both, {mode}", f"{tmp}/both/stage-3-{mode}", runs["both"][mode], True)

# Every kernel's name is of HTA's class for its kind.
want = {"compute": "COMPUTATION", "comm": "COMMUNICATION", "copy": "MEMORY"}
bad, seen = [], set()
for path in glob.glob(f"{tmp}/*/rank-*.pt.trace.json") + glob.glob(f"{tmp}/both/*/rank-*.pt.trace.json"):
    doc = json.load(open(path))
    check(next(iter(doc)) == "distributedInfo", f"{path}: first key {next(iter(doc))}")
    for e in doc["traceEvents"]:
        if e.get("cat") in ("kernel", "gpu_memcpy"):
            kind = e["args"]["kind"]
            seen.add(kind)
            if get_kernel_type(e["name"]) != want[kind]:
                bad.append((e["name"], kind))
check(not bad, f"names HTA classifies otherwise: {bad[:5]}")
check({"compute", "comm"} <= seen, f"kinds seen {seen}")
finish()
PY

# What HTA's default rounding to whole microseconds makes of the same trace (printed only).
"$py" - "$tmp" <<'PY' 2>/dev/null || true
import logging, sys
logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis
df = TraceAnalysis(trace_dir=f"{sys.argv[1]}/pf1").get_comm_comp_overlap(visualize=False)
print("test_trace_hta: prefetch, 1 step, HTA's default rounding to whole µs:",
      ", ".join(f"rank {int(r)} {v} %" for r, v in zip(df["rank"], df["comp_comm_overlap_pctg"])))
PY
echo "test_trace_hta: $passed passed"
exit $fail
