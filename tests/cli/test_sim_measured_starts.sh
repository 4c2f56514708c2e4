#!/usr/bin/env bash
# bench/sim_vs_measured.py's account of where prefetch's collectives began
# (comm_starts): on a hand-made trace every case of its rule, then on the
# sim's own Chrome trace, that it reads the prefetch steps' collectives and
# none of sync's. No timing: the trace is made up, the sim's is virtual.
set -u
source "$(dirname "$0")/../lib.sh"
: "${ZB:?ZB must name the zerobench binary}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zb_starts.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The real traces: the tiny model's prefetch alone, and side by side with sync.
for mode in prefetch both; do
    check expect_rc 0 "$tmp/sim_$mode" timeout 120 "$ZB" step --backend sim --hw h100_sxm --nodes 1 \
        --gpus-per-node 2 --model tiny --mode "$mode" --steps 3 --warmup 1 --trace "$tmp/$mode.json"
done
python3 - "$root/bench" "$tmp" <<'PY' || fail=1
import json, os, sys
from zbcheck import check, finish
sys.path.insert(0, sys.argv[1])
from sim_vs_measured import comm_starts, IDLE_GAP_US
tmp = sys.argv[2]

def X(name, cat, ts, dur, **args):
    return {"name": name, "cat": cat, "ph": "X", "pid": 1, "tid": 1 if cat == "compute" else 2, "ts": ts,
            "dur": dur, "args": args}

check(IDLE_GAP_US == 10.0, f"IDLE_GAP_US {IDLE_GAP_US}: the cases below assume 10 us")
events = [
    X("step 1", "step", 0, 1000, mode="prefetch", phase="measured", step=1),
    X("step 2", "step", 2000, 1000, mode="sync", phase="measured", step=2),
    X("a", "compute", 0, 100), X("b", "compute", 102, 98),    # a 2 us hand-off
    X("c", "compute", 300, 100), X("d", "compute", 410, 90),  # a 100 us wait, a 10 us one
    X("g0", "comm", 50, 20),    # inside compute op a: beside compute
    X("g1", "comm", 101, 5),    # in the 2 us hand-off: beside compute
    X("g2", "comm", 201, 149),  # in the 100 us wait, compute resumed at 300: a 99 us stall
    X("g3", "comm", 405, 3),    # in the 10 us wait, ended before compute resumed: neither
    X("g4", "comm", 600, 10),   # after the last compute op: neither
    X("r", "compute", 2000, 500), X("s0", "comm", 2600, 10),  # the sync step's: not counted
]
path = os.path.join(tmp, "made.json")
json.dump({"traceEvents": events}, open(path, "w"))
begun, n, stalls = comm_starts(path)
check((begun, n) == (2, 5), f"made-up trace: {begun} of {n} begun beside compute, want 2 of 5")
check(stalls == [99], f"made-up trace: stalls {stalls}, want [99]")

# The sim's traces: prefetch's collectives are read, the same count whether
# sync ran beside them or not (each step issues the same collectives).
alone, both = comm_starts(os.path.join(tmp, "prefetch.json")), comm_starts(os.path.join(tmp, "both.json"))
check(alone[1] > 0 and 0 <= alone[0] <= alone[1], f"sim prefetch trace: {alone[:2]}")
check(both[1] == alone[1], f"sim --mode both: {both[1]} prefetch collectives, prefetch alone {alone[1]}")
finish()
PY
[ $fail -eq 0 ] && echo "test_sim_measured_starts: $passed checks passed"
exit $fail
