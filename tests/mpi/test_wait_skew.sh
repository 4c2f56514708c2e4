#!/usr/bin/env bash
# Waiting told apart from transfer (docs/design.md §6) on 2 ranks, with the
# test hook ZB_TEST_DELAY_COMM=1:100 making rank 1 reach every collective
# 100 ms late, against a control run without the hook just before it: in
# both schedules each collective kind's arrival skew grows by [0.5, 2] x
# 100 ms; the delay is waiting, not transfer: rank 0's exposed wait holds
# the delay of nearly every collective while rank 1's is far smaller, and
# the two ranks' transfer parts stay close (counted as transfer, the delay
# would put it between them); on a quiet machine (the control's transfers
# under 5 ms) each kind's transfer also stays below half the delay. Rank 1
# is the rank that arrives last, and the trace's last-arrival instants
# name it with about that skew. The control run and the quiet condition
# are there because this machine is loaded: at a load average of 18 on 2
# cores a tiny collective's median transfer measured 20-250 ms with and
# without the delay (the polling threads wait for a core, and the rank
# that spun waiting longest waits longest), so only what the delay must
# change is asserted, with wide margins. A bad hook value ends with one line and
# exit 2.
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=(--mode both --layers 1 --steps 3 --warmup 1)

mpirun --oversubscribe -np 2 "$ZB" "${args[@]}" --json "$tmp/c.json" >"$tmp/c.out" 2>&1
check [ $? -eq 0 ]
ZB_TEST_DELAY_COMM=1:100 mpirun --oversubscribe -np 2 "$ZB" "${args[@]}" \
    --json "$tmp/d.json" --trace "$tmp/d.trace.json" >"$tmp/d.out" 2>&1
check [ $? -eq 0 ]
check grep -q "rank 1 arrived last" "$tmp/d.out"
[ "$fail" = 0 ] || { show "$tmp/c.out"; show "$tmp/d.out"; }
python3 - "$tmp" <<'PY' || fail=1
import json, sys
from zbcheck import check, finish
d = sys.argv[1]
D = 100.0  # ms, the hook's delay
runs = json.load(open(f"{d}/d.json"))["runs"]
control = {r["mode"]: r["metrics"]["by_collective"] for r in json.load(open(f"{d}/c.json"))["runs"]}
check([r["mode"] for r in runs] == ["sync", "prefetch"], "two runs")
for r in runs:
    m, mode = r["metrics"], r["mode"]
    by, base = m["by_collective"], control[mode]
    check(set(by) == set(base) == {"allgather", "reducescatter"}, f"{mode}: kinds {sorted(by)}")
    n_coll = sum(k["count_per_step"] for k in by.values())
    quiet = all(k["transfer_ms"] < 0.05 * D for k in base.values())
    fmt = lambda b: "; ".join(f"{kind} skew {k['arrival_skew_ms']:.1f} ms, transfer {k['transfer_ms']:.2f} ms "
                              f"(min {k['transfer_min_ms']:.2f})" for kind, k in sorted(b.items()))
    print(f"{mode}, delayed: {fmt(by)}\n{mode}, control: {fmt(base)}")
    for kind, k in by.items():
        skew = k["arrival_skew_ms"] - base[kind]["arrival_skew_ms"]
        check(0.5 * D <= skew <= 2 * D, f"{mode} {kind}: arrival skew grew by {skew} ms for a {D} ms delay")
        # On a quiet machine (the control's transfers are small) the
        # delayed run's stay well below the delay; under load they do not
        # (see the top): then only the per-rank split below is asserted.
        if quiet:
            check(k["transfer_ms"] < 0.5 * D, f"{mode} {kind}: transfer {k['transfer_ms']} ms with a {D} ms delay")
    w = {x["rank"]: x for x in r["per_rank"]}
    check(w[1]["last_arrival_pct"] > 50 and w[1]["last_arrival_pct"] > w[0]["last_arrival_pct"],
          f"{mode}: rank 1 arrives last ({w[1]['last_arrival_pct']} % vs {w[0]['last_arrival_pct']} %)")
    check(w[0]["exposed_wait_ms"] >= 0.6 * D * (n_coll - 1), f"{mode}: rank 0 exposed wait {w[0]['exposed_wait_ms']} ms over {n_coll} collectives")
    check(w[1]["exposed_wait_ms"] < 0.25 * w[0]["exposed_wait_ms"], f"{mode}: rank 1 exposed wait {w[1]['exposed_wait_ms']} ms")
    # The delay is rank 0's wait, not its transfer: both ranks' transfer
    # parts run from the same last arrivals to nearly the same ends. Counted
    # as transfer, the delay would put n_coll x D between them.
    check(abs(w[0]["transfer_ms"] - w[1]["transfer_ms"]) < 0.5 * n_coll * D,
          f"{mode}: transfer per step rank 0 {w[0]['transfer_ms']} ms, rank 1 {w[1]['transfer_ms']} ms")
tr = json.load(open(f"{d}/d.trace.json"))
inst = [e for e in tr["traceEvents"] if e["ph"] == "i" and e["name"] == "last arrival" and e["pid"] == 1  # rank 0
        and e["args"]["step"] is not None and e["args"]["step"] > 1]
check(len(inst) > 0, "last-arrival instants in the measured steps")
late = [e for e in inst if e["args"]["last_rank"] == 1 and 0.5 * D <= e["args"]["arrival_skew_us"] / 1e3 <= 2.5 * D]
check(len(late) >= 0.7 * len(inst), f"{len(late)} of {len(inst)} last arrivals name rank 1 about {D} ms late")
finish()
PY

# A bad hook value: one line naming the variable, exit 2.
for v in abc 1 1:0 1:-5 x:5 1:99999 -1:5 1:5x; do
  ZB_TEST_DELAY_COMM="$v" "$ZB" --steps 1 >"$tmp/bad.out" 2>"$tmp/bad.err"
  check [ $? -eq 2 ]
  check [ "$(wc -l <"$tmp/bad.err")" -eq 1 ]
  check grep -q "ZB_TEST_DELAY_COMM" "$tmp/bad.err"
done
[ "$fail" = 0 ] || show "$tmp/bad.err"
echo "test_wait_skew: $passed passed"
exit $fail
