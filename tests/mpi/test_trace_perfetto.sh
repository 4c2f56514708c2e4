#!/usr/bin/env bash
# Traces that Perfetto reads as written (issue 22; docs/design.md §7): a
# 2-rank cpu step trace, a 2-rank all-gather trace and a sim step trace,
# each checked against the rules of Perfetto's JSON importer
# (tests/trace_rules.py): no pid or tid 0, every process and track named
# and sorted, each track's slices disjoint or nested as the importer stacks
# them, no compute slice under a comm slice, a live-memory counter in every
# process (the sim's on its virtual clock). A real trace processor is not
# run: the perfetto package fetches its binary at run time, which these
# machines cannot. A trace in the old layout (tid 0 for compute) must fail
# the same check, so the check can see what the ids fix.
set -u
source "$(dirname "$0")/../lib.sh"
: "${ZB:?ZB must name the zerobench binary}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zb_perfetto.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

timeout 300 mpirun --oversubscribe -np 2 "$ZB" step --mode both --steps 2 --warmup 1 --trace "$tmp/cpu.json" \
    --trace-steps all >"$tmp/cpu.out" 2>&1
check [ $? -eq 0 ]
timeout 300 mpirun --oversubscribe -np 2 "$ZB" allgather -b 4K -e 4K -n 2 -w 1 \
    --trace "$tmp/ag.json" >"$tmp/ag.out" 2>&1
check [ $? -eq 0 ]
timeout 120 "$ZB" step --backend sim --model llama3_8b --nodes 1 --gpus-per-node 2 --stage 3 --steps 2 --warmup 1 \
    --trace "$tmp/sim.json" >"$tmp/sim.out" 2>&1
check [ $? -eq 0 ]
[ "$fail" = 0 ] || { show "$tmp/cpu.out"; show "$tmp/ag.out"; show "$tmp/sim.out"; }

echo "test_trace_perfetto: no trace processor here (fetched at run time); checking the importer's rules"
python3 - "$tmp" <<'PY' || fail=1
import sys
from zbcheck import check, finish
from trace_rules import load, problems, to_ns
d = sys.argv[1]

for name, pids in (("cpu", {1, 2}), ("ag", {1, 2}), ("sim", {1})):
    doc = load(f"{d}/{name}.json")
    errs = problems(doc, want_pids=pids)
    check(not errs, f"{name}: " + "; ".join(errs[:5]))
    ev = doc["traceEvents"]
    names = {(int(e["pid"]), int(e["tid"])): e["args"]["name"] for e in ev
             if e["ph"] == "M" and e["name"] == "thread_name"}
    for p in pids:
        by_kind = {}
        for e in ev:
            if e["ph"] == "X" and int(e["pid"]) == p and e.get("cat") in ("compute", "comm"):
                by_kind.setdefault(e["cat"], set()).add(names.get((p, int(e["tid"]))))
        if name != "ag":  # the all-gather bench runs no compute
            check(by_kind.get("compute") == {"compute"}, f"{name} pid {p}: compute slices on {by_kind.get('compute')}")
        if name != "sim" or "comm" in by_kind:  # the sim costs its collectives on the comm stream
            check(by_kind.get("comm") == {"comm"}, f"{name} pid {p}: comm slices on {by_kind.get('comm')}")
    mem = [e for e in ev if e["ph"] == "C" and e["name"] == "live memory"]
    if name == "sim":  # on the records' virtual clock: a wall-clock sample would lie far past every slice
        ends = [to_ns(e["ts"]) + to_ns(e["dur"]) for e in ev if e["ph"] == "X"]
        check(mem and max(to_ns(e["ts"]) for e in mem) <= max(ends), "sim: live memory samples past the last slice")
    check(any(int(v) > 0 for e in mem for v in e["args"].values()), f"{name}: live memory never above 0")

# The layout before issue 22: rank 1 (pid 1) ran compute on tid 0, which the
# importer reads as tid 1, its comm stream: the check must say so.
old = {"traceEvents": [
    {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "rank 1 on h"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 0, "args": {"name": "compute"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "comm"}},
    {"ph": "X", "cat": "comm", "name": "allgather", "pid": 1, "tid": 1, "ts": "1.0", "dur": "10.0"},
    {"ph": "X", "cat": "compute", "name": "gemm", "pid": 1, "tid": 0, "ts": "2.0", "dur": "3.0"},
    {"ph": "C", "name": "live memory", "pid": 1, "tid": 1, "ts": "1.0", "args": {"x": "1"}}]}
errs = problems(old)
check(any("want both 1 or more" in e for e in errs), f"old layout: tid 0 not flagged: {errs}")
check(any("nested under comm" in e for e in errs), f"old layout: compute under comm not seen: {errs}")
check(to_ns("1.0009999999999999") == 1000 and to_ns("2.5e-3") == 2 and to_ns("7") == 7000, "to_ns truncates as the importer")
finish()
PY
echo "test_trace_perfetto: $passed passed"
exit $fail
