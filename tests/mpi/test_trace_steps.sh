#!/usr/bin/env bash
# The step-aware trace on 2 ranks (docs/design.md §7): the file is valid JSON
# whose processes are "rank R on HOST", whose step slices (one track per
# rank) match the run's ranks, steps and modes, whose ops all carry the step
# they ran in and lie inside its slice, with live memory counters per rank
# and each collective's last arrival; overlap, exposed comm, compute and comm
# computed here from the exported slices per rank and measured step give the
# reported figures (metrics, and per_rank when the JSON has it), and so do
# the exposed wait and transfer (per_rank entries); the default writes the
# first 10 measured steps and says what it left out; --trace-steps A-B
# writes those; bad --trace-steps values end with one line and exit 2.
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { mpirun --oversubscribe -np 2 "$ZB" "$@"; }

run --mode both --steps 3 --warmup 1 --trace "$tmp/all.json" --trace-steps all --json "$tmp/all.res.json" \
    >"$tmp/all.out" 2>&1
check [ $? -eq 0 ]
run --mode sync --steps 12 --warmup 1 --trace "$tmp/def.json" --json "$tmp/def.res.json" >"$tmp/def.out" 2>&1
check [ $? -eq 0 ]
run --mode prefetch --steps 4 --warmup 1 --trace "$tmp/some.json" --trace-steps 2-3 >"$tmp/some.out" 2>&1
check [ $? -eq 0 ]
[ "$fail" = 0 ] || { show "$tmp/all.out"; show "$tmp/def.out"; show "$tmp/some.out"; }

python3 - "$tmp" "$(hostname)" <<'PY' || fail=1
import json, statistics, sys
from zbcheck import check, finish
d, host = sys.argv[1], sys.argv[2]
STEP_TID = 1000000

def union(iv):
    out = []
    for s, e in sorted(iv):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out

def length(u):
    return sum(e - s for s, e in u)

def intersect(a, b):
    i = j = 0
    t = 0.0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        t += max(0.0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return t

def load(name):
    doc = json.load(open(f"{d}/{name}"))  # valid JSON, or the test stops here
    ev = doc["traceEvents"]
    # Ids from 1 (Perfetto reads an explicit tid 0 as the pid): pid = rank + 1.
    check(all(e["pid"] >= 1 and e["tid"] >= 1 for e in ev), f"{name}: every pid and tid is 1 or more")
    for e in ev:
        e["rank"] = e["pid"] - 1
    steps = [e for e in ev if e["ph"] == "X" and e.get("cat") == "step"]
    ops = [e for e in ev if e["ph"] == "X" and e.get("cat") != "step"]
    return doc, ev, steps, ops

def step_of(steps, rank, mode, idx):
    m = [s for s in steps if s["rank"] == rank and s["args"]["mode"] == mode and s["args"]["step"] == idx]
    return m[0] if len(m) == 1 else None

# ---- --mode both, every step written ----
doc, ev, steps, ops = load("all.json")
res = json.load(open(f"{d}/all.res.json"))["runs"]
names = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
check(names == {1: f"rank 0 on {host}", 2: f"rank 1 on {host}"}, f"process names {names}")
check({e["pid"] for e in ev if e["ph"] != "M"} == {1, 2}, "pids are the ranks + 1")
tnames = {(e["rank"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
check({tnames.get((p, STEP_TID)) for p in (0, 1)} == {"steps"}, "a steps track per rank")
check({e["tid"] for e in ops} <= {t for (p, t) in tnames} - {STEP_TID}, "every op's tid is a named stream")
check(all(s["tid"] == STEP_TID for s in steps), "step slices on the steps track")
want = {(p, m, i) for p in (0, 1) for m in ("sync", "prefetch") for i in range(1, 5)}
got = {(s["rank"], s["args"]["mode"], s["args"]["step"]) for s in steps}
check(got == want and len(steps) == len(want), f"step slices: {sorted(got)}")
check(all(s["args"]["stage"] == 3 for s in steps), "stage in the step args")
check(all((s["args"]["phase"] == "warm-up") == (s["args"]["step"] == 1) for s in steps), "step 1 is the warm-up")
check(all(s["args"]["mode"] in s["name"] and f"step {s['args']['step']}" in s["name"] for s in steps),
      "step names carry index and mode (the run has two)")
# Every op carries its step and lies inside that step's slice (same rank);
# which mode it belongs to follows from the slice that holds it.
mode_of = {}
bad = 0
for o in ops:
    st = o["args"].get("step", "missing")
    holders = [s for s in steps if s["rank"] == o["rank"] and s["ts"] <= o["ts"] <= s["ts"] + s["dur"]]
    if st is None:
        bad += len(holders) > 0
        continue
    if len(holders) != 1 or holders[0]["args"]["step"] != st or \
            (o["args"].get("mode"), o["args"].get("stage")) != (holders[0]["args"]["mode"], 3):
        bad += 1
        continue
    mode_of[id(o)] = holders[0]["args"]["mode"]
check(bad == 0, f"{bad} ops whose step arg does not match the slice holding them")
check(sum(1 for o in ops if o["args"].get("step") is not None) > 0.95 * len(ops), "ops are inside steps")
# Live memory: counters per rank, one series per device tag; the param
# shard's value inside a step equals the run's peak (allocated once).
mem = [e for e in ev if e["ph"] == "C" and e["name"] == "live memory"]
check({e["rank"] for e in mem} == {0, 1}, "a live-memory counter per rank")
for p in (0, 1):
    s2 = step_of(steps, p, "sync", 2)
    before = [e for e in mem if e["rank"] == p and e["ts"] <= s2["ts"]]
    check(before and before[-1]["args"].get("param_shard") ==
          res[0]["metrics"]["peak_mem_by_tag_bytes"]["param_shard"], f"rank {p}: live param_shard in step 2")
# Last arrivals: an instant per rank and collective record, at the latest start over ranks.
inst = [e for e in ev if e["ph"] == "i" and e["name"] == "last arrival"]
colls = {p: sorted([o for o in ops if o["rank"] == p and "coll" in o["args"]], key=lambda o: o["ts"]) for p in (0, 1)}
check(len(colls[0]) == len(colls[1]) > 0 and len(inst) == 2 * len(colls[0]), "one last-arrival instant per rank and collective")
for a, b in zip(colls[0], colls[1]):
    last = max(a["ts"], b["ts"])
    if not any(abs(i["ts"] - last) < 1e-3 and i["rank"] == 0 for i in inst):
        check(False, f"no last-arrival instant at {last}")
        break

# Overlap from the slices, per rank and measured step, against the report.
def figures(p, s, mode):
    lo, hi = s["ts"], s["ts"] + s["dur"]
    mine = [o for o in ops if o["rank"] == p and mode_of.get(id(o)) == mode and o["args"]["step"] == s["args"]["step"]]
    clip = lambda o: [max(lo, o["ts"]), min(hi, o["ts"] + o["dur"])]
    M = union([clip(o) for o in mine if o["cat"] == "comm"])
    C = union([clip(o) for o in mine if o["cat"] == "compute"])
    inter = intersect(M, C)
    # Waiting: each collective record's part before the last arrival over ranks.
    return M, C, inter

by_rank = {}
for r in res:
    mode = r["mode"]
    vals = {k: [] for k in ("overlap", "exposed", "compute", "comm", "exp_wait", "exp_xfer")}
    per = {p: {k: [] for k in vals} for p in (0, 1)}
    for i in range(2, 5):
        sl = {p: step_of(steps, p, mode, i) for p in (0, 1)}
        cs = {p: sorted([o for o in ops if o["rank"] == p and mode_of.get(id(o)) == mode and o["args"]["step"] == i
                         and "coll" in o["args"]], key=lambda o: o["ts"]) for p in (0, 1)}
        for p in (0, 1):
            M, C, inter = figures(p, sl[p], mode)
            lo, hi = sl[p]["ts"], sl[p]["ts"] + sl[p]["dur"]
            W = union([[max(lo, o["ts"]), min(hi, o["ts"] + o["dur"], max(o["ts"], q["ts"]))]
                       for o, q in zip(cs[p], cs[1 - p])])
            exp = (length(M) - inter) / 1e3
            ew = (length(W) - intersect(W, C)) / 1e3
            v = {"overlap": 100 * inter / length(M), "exposed": exp, "compute": length(C) / 1e3,
                 "comm": length(M) / 1e3, "exp_wait": ew, "exp_xfer": exp - ew}
            for k in v:
                vals[k].append(v[k])
                per[p][k].append(v[k])
    m = r["metrics"]
    tol = 2e-3  # ms: the trace's microsecond timestamps
    for key, k, t in (("overlap_pct", "overlap", 0.05), ("exposed_comm_ms", "exposed", tol),
                      ("compute_ms", "compute", tol), ("comm_ms", "comm", tol),
                      ("exposed_wait_ms", "exp_wait", tol), ("exposed_transfer_ms", "exp_xfer", tol)):
        mine = statistics.median(vals[k])
        check(m[key] is not None and abs(m[key] - mine) <= t, f"{mode} {key}: reported {m[key]}, from the trace {mine}")
    for w in r["per_rank"]:
        p = w["rank"]
        for key, k in (("exposed_wait_ms", "exp_wait"), ("exposed_transfer_ms", "exp_xfer")):
            mine = statistics.median(per[p][k])
            check(abs(w[key] - mine) <= 2e-3, f"{mode} rank {p} {key}: reported {w[key]}, from the trace {mine}")
    # The reports' per-rank figures, where the JSON has them.
    for pr in r.get("per_rank", []):
        p = pr["rank"]
        for key, k, t in (("overlap_pct", "overlap", 0.05), ("exposed_comm_ms", "exposed", tol),
                          ("compute_ms", "compute", tol), ("comm_ms", "comm", tol)):
            if key in pr:
                mine = statistics.median(per[p][k])
                check(abs(pr[key] - mine) <= t, f"{mode} per_rank {p} {key}: reported {pr[key]}, from the trace {mine}")
    check(len(r["per_rank"]) == 2 and all("exposed_wait_ms" in w for w in r["per_rank"]), "per_rank: both ranks, with their wait figures")
    check(set(m["by_collective"]) == {"allgather", "reducescatter"}, f"{mode} by_collective {sorted(m['by_collective'])}")

# ---- the default: the first 10 measured steps, what was left out said ----
doc, ev, steps, ops = load("def.json")
ts = doc["otherData"]["trace_steps"]
run0 = ts["runs"][0]
check(len(ts["runs"]) == 1 and run0["written"] == "2-11" and run0["left_out"] == ["1", "12-13"],
      f"default written {run0}")
check(ts["rule"].startswith("default"), f"rule {ts['rule']}")
check({(s["rank"], s["args"]["step"]) for s in steps} == {(p, i) for p in (0, 1) for i in range(2, 12)}, "default step slices")
check(all(o["args"]["step"] in range(2, 12) for o in ops if o["args"].get("step") is not None), "no op of a left-out step")
check(all(s["args"]["mode"] not in s["name"] for s in steps), "one mode: step names without it")
check(all("mode" not in o["args"] for o in ops), "one run: ops without mode and stage")
step_ops = [o for o in ops if o["args"].get("step") is not None]
per_step = len(step_ops) / 20
check(len(ops) - len(step_ops) < per_step, "records of left-out steps are dropped, not kept without a step")

# ---- --trace-steps 2-3 ----
doc, ev, steps, ops = load("some.json")
check({s["args"]["step"] for s in steps} == {2, 3} and len(steps) == 4, "--trace-steps 2-3: two steps per rank")
check(doc["otherData"]["trace_steps"]["runs"][0]["left_out"] == ["1", "4-5"], "--trace-steps 2-3 left out")
check(all(s["args"]["phase"] == ("warm-up" if s["args"]["step"] == 1 else "measured") for s in steps), "phases")
finish()
PY

# Bad --trace-steps: one line naming the flag, exit 2, no trace written.
for v in 0 3-2 x 1- -1 all2 " 2" 2-3-4 9-12; do
  "$ZB" --steps 4 --warmup 1 --trace "$tmp/bad.json" --trace-steps "$v" >"$tmp/bad.out" 2>"$tmp/bad.err"
  rc=$?
  check [ $rc -eq 2 ]
  check [ "$(wc -l <"$tmp/bad.err")" -eq 1 ]
  check grep -q -- "--trace-steps" "$tmp/bad.err"
  check [ ! -e "$tmp/bad.json" ]
done
"$ZB" --steps 4 --trace-steps 2 >"$tmp/nt.out" 2>"$tmp/nt.err"
check [ $? -eq 2 ]
check grep -q "needs --trace" "$tmp/nt.err"
"$ZB" allgather --trace "$tmp/ag.json" --trace-steps 2 >"$tmp/ag.out" 2>"$tmp/ag.err"
check [ $? -eq 2 ]
check grep -q -- "--trace-steps" "$tmp/ag.err"
[ "$fail" = 0 ] || { show "$tmp/bad.err"; show "$tmp/nt.err"; }
echo "test_trace_steps: $passed passed"
exit $fail
