#!/usr/bin/env bash
# Per-rank figures and stragglers end to end: with the test hook delaying
# rank 1's compute by 50 ms a step (ZB_TEST_DELAY_RANK, far beyond the tiny
# model's few-ms compute), a 3-rank step run names rank 1 as a straggler in
# the JSON and the table's notes, in both schedules. The JSON's per-rank
# figures agree with the aggregates: one entry per rank in rank order with
# host and node, the worst overlap and exposed comm are the min and max over
# ranks, the step time (max over ranks per step) is no less than any rank's,
# and each straggler's median is the median of its metric over the ranks.
# The step's reading is printed and in the JSON. A collective run carries
# per-rank times whose mean is its time (-a 1); so does a 3-rank gemm run,
# whose hook-delayed rank 1 is named for each shape. Bad --straggler-pct or hook
# values end with exit 2 and no output file. Nothing asserts that a run
# without the hook has no straggler (that is the machine's noise).
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ZB_TEST_DELAY_RANK=1:50 mpirun --oversubscribe -np 3 -x ZB_TEST_DELAY_RANK "$ZB" --mode both --steps 2 --warmup 1 \
  --json "$tmp/d.json" --csv "$tmp/d.csv" >"$tmp/d.out" 2>"$tmp/d.err"
check [ $? -eq 0 ]
check grep -q "^# straggler, stage 3 sync: rank 1 on " "$tmp/d.out"
check grep -q "^# reading, stage 3: " "$tmp/d.out"
mpirun --oversubscribe -np 2 "$ZB" allgather -b 1K -e 4K -f 4 -n 5 -w 1 --straggler-pct 25 \
  --json "$tmp/c.json" >"$tmp/c.out" 2>&1
check [ $? -eq 0 ]
# gemm: the hook adds 40 ms to each of rank 1's timed loops (10 ms an
# iteration against microseconds), so rank 1 is named for every shape.
ZB_TEST_DELAY_RANK=1:40 mpirun --oversubscribe -np 3 -x ZB_TEST_DELAY_RANK "$ZB" gemm --shape 64x64x64 \
  --shape 33x17x9 -n 4 -w 1 -a 1 --json "$tmp/g.json" >"$tmp/g.out" 2>&1
check [ $? -eq 0 ]
check grep -q "^# straggler, shape0 64x64x64: rank 1 on " "$tmp/g.out"
check grep -q "^# straggler, shape1 33x17x9: rank 1 on " "$tmp/g.out"
python3 - "$tmp" <<'PY' || fail=1
import json, statistics, sys
from zbcheck import check, finish
d = sys.argv[1]
runs = json.load(open(f"{d}/d.json"))["runs"]
check([r["mode"] for r in runs] == ["sync", "prefetch"], "one run per schedule")
keys = ("step_time_ms", "overlap_pct", "exposed_comm_ms", "compute_ms", "comm_ms")
for r in runs:
    m, pr, mode = r["metrics"], r["per_rank"], r["mode"]
    check([e["rank"] for e in pr] == [0, 1, 2], f"{mode}: one per_rank entry per rank, in rank order")
    check(all(isinstance(e["host"], str) and e["host"] and e["node"] == 0 for e in pr), f"{mode}: host, node")
    check(all(all(k in e for k in keys) for e in pr), f"{mode}: per_rank keys")
    check(r["straggler_pct"] == 10.0, f"{mode}: default threshold")
    named = [s for s in r["stragglers"] if s["rank"] == 1]
    check(len(named) > 0, f"{mode}: the delayed rank is a straggler: {r['stragglers']}")
    check(any(s["metric"] == "compute_ms" and s["deviation_pct"] > 10 for s in named), f"{mode}: by its compute")
    comp = [e["compute_ms"] for e in pr]
    check(comp[1] == max(comp), f"{mode}: rank 1 computes longest {comp}")
    ov = [e["overlap_pct"] for e in pr]
    ex = [e["exposed_comm_ms"] for e in pr]
    check(m["overlap_worst_pct"] == min(ov), f"{mode}: worst overlap {m['overlap_worst_pct']} = min {ov}")
    check(m["exposed_comm_worst_ms"] == max(ex), f"{mode}: worst exposed {m['exposed_comm_worst_ms']} = max {ex}")
    check(m["overlap_min_pct"] <= m["overlap_worst_pct"], f"{mode}: the min over steps is no more than the worst rank's")
    check(m["step_time_ms"] >= max(e["step_time_ms"] for e in pr), f"{mode}: max over ranks >= each rank")
    for s in r["stragglers"]:
        vals = [e[s["metric"]] for e in pr]
        check(s["median"] == statistics.median(vals), f"{mode}: straggler median = median of per_rank {s}")
        check(s["value"] == vals[s["rank"]] and s["host"] == pr[s["rank"]]["host"], f"{mode}: straggler value, host")
        dev = s["value"] - s["median"] if s["metric"].endswith("_pct") else 100 * (s["value"] / s["median"] - 1)
        check(abs(dev - s["deviation_pct"]) < 1e-9 * max(1, abs(dev)) and abs(dev) > 10, f"{mode}: deviation {s}")
    check(isinstance(r["reading"], str) and r["reading"].startswith(("Prefetch", "No difference", "Too few pairs")),
          f"{mode}: the stage's reading")
csv = open(f"{d}/d.csv").read().splitlines()[0].split(",")
check("metrics.overlap_worst_pct" in csv and "metrics.exposed_comm_worst_ms" in csv, "CSV: worst-rank columns")
check("per_rank" not in csv and "stragglers" not in csv, "CSV: per-rank arrays are JSON only")
coll = json.load(open(f"{d}/c.json"))["runs"]
check(len(coll) == 4, "2 sizes x 2 placements")
for r in coll:
    pr = r["per_rank"]
    check([e["rank"] for e in pr] == [0, 1] and all("time_us" in e for e in pr), "collective per_rank")
    mean = sum(e["time_us"] for e in pr) / 2
    check(abs(mean - r["metrics"]["time_us"]) <= 1e-9 * mean, f"time_us {r['metrics']['time_us']} = mean {mean}")
    check(r["straggler_pct"] == 25.0 and isinstance(r["stragglers"], list), "collective straggler fields")
    check(all(s["metric"] == "time_us" and abs(s["deviation_pct"]) > 25 for s in r["stragglers"]), "beyond 25 %")
for r in json.load(open(f"{d}/g.json"))["runs"]:
    pr = r["per_rank"]
    check([e["rank"] for e in pr] == [0, 1, 2], f"gemm {r['shape']}: per_rank")
    mean = sum(e["time_us"] for e in pr) / 3
    check(abs(mean - r["metrics"]["time_us"]) <= 1e-9 * mean, f"gemm time_us {r['metrics']['time_us']} = mean {mean}")
    check(pr[1]["time_us"] > 4 * max(pr[0]["time_us"], pr[2]["time_us"]), f"gemm {r['shape']}: rank 1 delayed {pr}")
    check(any(s["rank"] == 1 and s["metric"] == "time_us" and s["deviation_pct"] > 100 for s in r["stragglers"]),
          f"gemm {r['shape']}: rank 1 named {r['stragglers']}")
finish()
PY

expect_bad() { # pattern, then the command's words (its environment first)
  local pattern=$1; shift
  rm -f "$tmp/bad.json"
  "$@" --json "$tmp/bad.json" >"$tmp/bad.out" 2>"$tmp/bad.err"
  local rc=$?
  if [ $rc -ne 2 ] || ! grep -q -- "$pattern" "$tmp/bad.err" || [ -e "$tmp/bad.json" ]; then
    echo "FAIL: '$*' exited $rc (want 2, no output file), stderr:"; show "$tmp/bad.err"; fail=1
  fi
}
expect_bad "--straggler-pct" "$ZB" --straggler-pct -1 --steps 1
expect_bad "--straggler-pct" "$ZB" allgather --straggler-pct abc
expect_bad "--straggler-pct" "$ZB" --straggler-pct nan --steps 1
expect_bad "ZB_TEST_DELAY_RANK='1:'" env ZB_TEST_DELAY_RANK=1: mpirun --oversubscribe -np 2 -x ZB_TEST_DELAY_RANK "$ZB" --steps 1
[ $fail -eq 0 ] && echo "test_step_stragglers: passed" || exit 1
