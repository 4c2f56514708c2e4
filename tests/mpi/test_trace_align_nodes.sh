#!/usr/bin/env bash
# Trace alignment across nodes, end to end through the zerobench binary ($ZB)
# on 2 emulated nodes x 2 ranks (one MPMD app context per node, as
# test_launch_layout.sh case a):
#   (a) node 1's clock 5 s ahead (ZB_TEST_CLOCK_SKEW_NS on its ranks), step
#       --mode sync: meta.clock_sync and the trace's otherData.clock_sync give
#       node 0 offset 0 and node 1 an offset within its uncertainty of -5 s;
#       the first all-gather of every rank overlaps the others' in the trace
#       to within the uncertainties plus 2 ms (an all-gather cannot end on any
#       rank before every rank has started it), and is ~5 s apart without the
#       offsets; the step's metrics (each rank's own clock) show no 5 s;
#   (b) no skew: node 1's offset is 0 within its uncertainty;
#   (c) one node: method single_node, every offset 0;
#   (d) a bad ZB_TEST_CLOCK_SKEW_NS is bad input: exit 2, one line naming it;
#   (e) a clock sync that rank 0 never joins ends the job within --timeout
#       with a message naming the clock sync (tests/mpi/prog_clock_sync_timeout.c).
# No check depends on the machine's speed: overlaps are causal (an
# all-gather cannot end before every rank started it), metrics are bounded
# by the job's own wall time, hangs by timeout(1)'s exit status.
set -u
: "${ZB:?set ZB to the path of the zerobench binary}"
bin_dir="${ZB_TEST_BIN_DIR:?ZB_TEST_BIN_DIR not set}"
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run_nodes NAME SKEW_NODE1 ARGS...: 2 emulated nodes x 2 ranks.
run_nodes() {
    local name="$1" skew="$2"
    shift 2
    local args=("$@" --nodes 2 --gpus-per-node 2 --trace "$tmp/$name.trace.json" --json "$tmp/$name.json")
    local t0
    t0=$(date +%s%N)
    timeout 300 mpirun --oversubscribe \
        -np 2 env -u ZB_TEST_CLOCK_SKEW_NS ZB_NODE_ID=0 "$ZB" "${args[@]}" : \
        -np 2 env ZB_NODE_ID=1 ZB_TEST_CLOCK_SKEW_NS="$skew" "$ZB" "${args[@]}" \
        >"$tmp/$name.out" 2>"$tmp/$name.err"
    local rc=$?
    echo $(( ($(date +%s%N) - t0) / 1000000 + 1 )) >"$tmp/$name.wall_ms" # the job's wall time, ms
    if [ $rc -ne 0 ]; then
        echo "FAIL: $name exited $rc"
        show "$tmp/$name.out"
        show "$tmp/$name.err"
        fail=1
    fi
}

run_nodes skew 5000000000 step --mode sync --steps 1 --warmup 0
run_nodes noskew 0 allgather -b 1K -e 1K -n 2 -w 1
timeout 300 mpirun --oversubscribe -np 2 env -u ZB_NODE_ID -u ZB_TEST_CLOCK_SKEW_NS "$ZB" allgather -b 1K -e 1K \
    -n 2 -w 1 --trace "$tmp/one.trace.json" --json "$tmp/one.json" >"$tmp/one.out" 2>&1
check [ $? -eq 0 ]

if [ $fail -eq 0 ]; then
python3 - "$tmp" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
from zbcheck import check, finish
SKEW = 5_000_000_000

def load(name):
    meta = json.load(open(f"{d}/{name}.json"))["meta"]
    trace = json.load(open(f"{d}/{name}.trace.json"))
    return meta, trace

# (a) node 1 is 5 s ahead.
meta, trace = load("skew")
cs = meta.get("clock_sync", {})
check(cs.get("method") == "ping_pong_min_rtt" and cs.get("reference_rank") == 0, f"skew: method {cs.get('method')}")
check(cs.get("round_trips", 0) > 0, "skew: round_trips")
ranks = {r["rank"]: r for r in cs.get("ranks", [])}
check(sorted(ranks) == [0, 1, 2, 3], f"skew: ranks {sorted(ranks)}")
check(trace.get("otherData", {}).get("clock_sync") == cs, "skew: the trace's otherData.clock_sync differs from meta")
for r, e in ranks.items():
    if e["node"] == 0:
        check(e["offset_ns"] == 0 and e["uncertainty_ns"] == 0, f"skew: rank {r} on node 0: {e}")
    else:
        check(abs(e["offset_ns"] + SKEW) <= e["uncertainty_ns"], f"skew: rank {r} offset not -5 s within uncertainty: {e}")
        check(0 <= e["uncertainty_ns"] < 1e9, f"skew: rank {r} uncertainty {e['uncertainty_ns']}")
check([ranks[r]["node"] for r in sorted(ranks)] == [0, 0, 1, 1], "skew: node of each rank")
first = {}
for e in sorted((e for e in trace["traceEvents"] if e.get("ph") == "X" and e["name"] == "allgather.fwd"),
                key=lambda e: e["ts"]):
    first.setdefault(e["pid"] - 1, e)  # pid = rank + 1
check(sorted(first) == [0, 1, 2, 3], f"skew: ranks with an all-gather: {sorted(first)}")
if sorted(first) == [0, 1, 2, 3] and len(ranks) == 4:
    max_unc = max(e["uncertainty_ns"] for e in ranks.values())
    start = {p: e["ts"] * 1e3 for p, e in first.items()}
    end = {p: (e["ts"] + e["dur"]) * 1e3 for p, e in first.items()}
    gap = max(start.values()) - min(end.values())
    check(gap <= 2 * max_unc + 2e6, f"skew: aligned all-gathers {gap:.0f} ns apart (allowed {2 * max_unc + 2e6:.0f})")
    raw = {p: start[p] - ranks[p]["offset_ns"] for p in first}
    raw_end = {p: end[p] - ranks[p]["offset_ns"] for p in first}
    raw_gap = max(raw.values()) - min(raw_end.values())
    check(raw_gap > 4e9, f"skew: without the offsets the all-gathers are only {raw_gap:.0f} ns apart")
# Each metric is an interval measured inside the job, so it lies between 0
# and the job's own wall time (an ordering, not a speed bound): node 1's
# clock, 5 s ahead, leaking into one would make it negative or longer than
# the job whenever the job took under 5 s.
m = json.load(open(f"{d}/skew.json"))["runs"][0]["metrics"]
wall_ms = float(open(f"{d}/skew.wall_ms").read())
for k in ("step_time_ms", "comm_ms", "exposed_comm_ms", "compute_ms"):
    check(m.get(k) is not None and 0 <= m[k] <= wall_ms,
          f"skew: {k} = {m.get(k)} outside [0, {wall_ms}] (the job's wall time): the skew leaked into a metric")

# (b) no skew: node 1 is rank 0's clock, within the uncertainty.
meta, trace = load("noskew")
cs = meta.get("clock_sync", {})
check(trace.get("otherData", {}).get("clock_sync") == cs, "noskew: trace and meta differ")
for e in cs.get("ranks", []):
    check(abs(e["offset_ns"]) <= e["uncertainty_ns"], f"noskew: rank {e['rank']}: {e}")
check(len(cs.get("ranks", [])) == 4, "noskew: 4 ranks")

# (c) one node: nothing measured.
meta, trace = load("one")
cs = meta.get("clock_sync", {})
check(cs.get("method") == "single_node" and cs.get("round_trips") == 0, f"one: {cs}")
check([(e["offset_ns"], e["uncertainty_ns"]) for e in cs.get("ranks", [])] == [(0, 0), (0, 0)], f"one: {cs}")
check(trace.get("otherData", {}).get("clock_sync") == cs, "one: trace and meta differ")

finish()
PY
fi

# (d) bad input, found before MPI starts.
env -u OMPI_COMM_WORLD_SIZE -u PMIX_RANK -u PMI_RANK -u PMI_SIZE ZB_TEST_CLOCK_SKEW_NS=5s \
    timeout 60 "$ZB" allgather -b 1K -e 1K >"$tmp/bad.out" 2>"$tmp/bad.err"
rc=$?
check [ $rc -eq 2 ]
check grep -q "ZB_TEST_CLOCK_SKEW_NS='5s'" "$tmp/bad.err"
check [ "$(wc -l <"$tmp/bad.err")" -eq 1 ]
[ $rc -eq 2 ] || show "$tmp/bad.err"

# (e) a clock sync rank 0 never joins: the job ends by itself (MPI_Abort's
# code 3; timeout(1) giving up at 60 s would be 124: a hang).
timeout 60 mpirun --oversubscribe -np 2 "$bin_dir/prog_clock_sync_timeout" >"$tmp/to.out" 2>&1
rc=$?
check [ $rc -eq 3 ]
check grep -q "rank 1: clock sync: .* did not complete within 1 s (--timeout)" "$tmp/to.out"
[ $rc -eq 3 ] || show "$tmp/to.out"

if [ $fail -ne 0 ]; then
    echo "test_trace_align_nodes: FAILED"
    exit 1
fi
echo "test_trace_align_nodes: all checks passed"
