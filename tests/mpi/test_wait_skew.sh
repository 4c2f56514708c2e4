#!/usr/bin/env bash
# Waiting told apart from transfer (docs/design.md §6) on 2 ranks, with the
# test hook ZB_TEST_DELAY_COMM=1:100 making rank 1 reach every collective
# 100 ms late: in both schedules each collective kind's arrival skew is
# within [0.6, 1.5] x 100 ms, its transfer stays below half the delay (the delay is
# not counted as transfer), rank 1 is the rank that arrives last, rank 0's
# exposed wait holds the delay of nearly every collective while rank 1's is
# far smaller, and the trace's last-arrival instants name rank 1 with the
# same skew. Margins are wide on purpose: the machine is loaded, so only
# what a 100 ms delay must produce is asserted (a transfer of a tiny
# collective measured up to ~50 ms here when the scheduler stalled a
# polling thread under a parallel ctest: hence the large delay). A bad hook value ends with
# one line and exit 2.
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ZB_TEST_DELAY_COMM=1:100 mpirun --oversubscribe -np 2 "$ZB" --mode both --layers 1 --steps 3 --warmup 1 \
    --json "$tmp/d.json" --trace "$tmp/d.trace.json" >"$tmp/d.out" 2>&1
check [ $? -eq 0 ]
check grep -q "rank 1 arrived last" "$tmp/d.out"
[ "$fail" = 0 ] || show "$tmp/d.out"
python3 - "$tmp" <<'PY' || fail=1
import json, sys
from zbcheck import check, finish
d = sys.argv[1]
D = 100.0  # ms, the hook's delay
runs = json.load(open(f"{d}/d.json"))["runs"]
check([r["mode"] for r in runs] == ["sync", "prefetch"], "two runs")
for r in runs:
    m, mode = r["metrics"], r["mode"]
    by = m["by_collective"]
    check(set(by) == {"allgather", "reducescatter"}, f"{mode}: kinds {sorted(by)}")
    n_coll = sum(k["count_per_step"] for k in by.values())
    print(f"{mode}: " + "; ".join(f"{kind} skew {k['arrival_skew_ms']:.1f} ms, transfer {k['transfer_ms']:.2f} ms"
                                  for kind, k in sorted(by.items())))
    for kind, k in by.items():
        check(0.6 * D <= k["arrival_skew_ms"] <= 1.5 * D, f"{mode} {kind}: arrival skew {k['arrival_skew_ms']} ms for a {D} ms delay")
        check(k["transfer_ms"] < 0.5 * D, f"{mode} {kind}: transfer {k['transfer_ms']} ms is inflated by the {D} ms delay")
    w = {x["rank"]: x for x in r["wait_per_rank"]}
    check(w[1]["last_arrival_pct"] > 50 and w[1]["last_arrival_pct"] > w[0]["last_arrival_pct"],
          f"{mode}: rank 1 arrives last ({w[1]['last_arrival_pct']} % vs {w[0]['last_arrival_pct']} %)")
    check(w[0]["exposed_wait_ms"] >= 0.6 * D * (n_coll - 1), f"{mode}: rank 0 exposed wait {w[0]['exposed_wait_ms']} ms over {n_coll} collectives")
    check(w[1]["exposed_wait_ms"] < 0.25 * w[0]["exposed_wait_ms"], f"{mode}: rank 1 exposed wait {w[1]['exposed_wait_ms']} ms")
tr = json.load(open(f"{d}/d.trace.json"))
steps = {(e["pid"], e["args"]["mode"], e["args"]["step"]): e for e in tr["traceEvents"] if e.get("cat") == "step"}
inst = [e for e in tr["traceEvents"] if e["ph"] == "i" and e["name"] == "last arrival" and e["pid"] == 0
        and e["args"]["step"] is not None and e["args"]["step"] > 1]
check(len(inst) > 0, "last-arrival instants in the measured steps")
late = [e for e in inst if e["args"]["last_rank"] == 1 and 0.6 * D <= e["args"]["arrival_skew_us"] / 1e3 <= 1.5 * D]
check(len(late) >= 0.8 * len(inst), f"{len(late)} of {len(inst)} last arrivals name rank 1 about {D} ms late")
finish()
PY

# A bad hook value: one line naming the variable, exit 2.
for v in abc 1 1:0 1:-5 x:5 1:99999 -1:5 "1: 5"; do
  ZB_TEST_DELAY_COMM="$v" "$ZB" --steps 1 >"$tmp/bad.out" 2>"$tmp/bad.err"
  check [ $? -eq 2 ]
  check [ "$(wc -l <"$tmp/bad.err")" -eq 1 ]
  check grep -q "ZB_TEST_DELAY_COMM" "$tmp/bad.err"
done
[ "$fail" = 0 ] || show "$tmp/bad.err"
echo "test_wait_skew: $passed passed"
exit $fail
