#!/usr/bin/env bash
# The sim backend through the real binary ($ZB): Llama 3 70B on 4 nodes x 8
# modelled in one process, twice, with identical output but for the date
# (table, JSON, trace); every output marked simulated, the loss null; per-tag
# memory equal to the ledger; the scaling table (zerobench scale) internally
# consistent; bad input (a profile missing a sim parameter, zero or negative
# nodes, lists where one count is taken, a real backend for scale, a comm
# that needs data) refused with one line and exit code 2.
set -u
source "$(dirname "$0")/../lib.sh"
: "${ZB:?ZB must name the zerobench binary}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zb_sim.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

run70() { # run70 TAG: step of Llama 3 70B, stage 3, both schedules (the same paths each time)
    timeout 120 "$ZB" step --backend sim --model llama3_70b --nodes 4 --gpus-per-node 8 --stage 3 \
        --recompute full --steps 2 --warmup 1 --json "$tmp/run.json" --trace "$tmp/run.trace.json" \
        >"$tmp/$1.out" 2>"$tmp/$1.err" &&
        mv "$tmp/run.json" "$tmp/$1.json" && mv "$tmp/run.trace.json" "$tmp/$1.trace.json"
}
check run70 a
check run70 b
# The table differs in nothing (no date in it); the JSON only in meta.date_utc.
check cmp -s "$tmp/a.out" "$tmp/b.out"
check cmp -s "$tmp/a.trace.json" "$tmp/b.trace.json"
check grep -q "^# SIMULATED" "$tmp/a.out"
python3 - "$tmp" <<'EOF' || fail=1
import json, sys
from zbcheck import check, finish
d = sys.argv[1]
a, b = (json.load(open(f"{d}/{x}.json")) for x in "ab")
for doc in (a, b):
    doc["meta"].pop("date_utc", None)
check(a == b, "two sim runs differ in more than meta.date_utc")
check(a["meta"]["simulated"] is True, "meta.simulated is not true")
runs = a["runs"]
check(len(runs) == 2, f"{len(runs)} runs, want sync and prefetch")
for r in runs:
    m = r["metrics"]
    check(r["simulated"] is True and r["ranks"] == 32 and r["nodes"] == 4, f"run identity {r['ranks']} {r['nodes']}")
    check(m["loss"] is None and m["loss_first"] is None, "a simulated loss is not null")
    check(m["peak_mem_by_tag_bytes"] == m["ledger_by_tag_bytes"], f"{r['mode']}: memory by tag is not the ledger's")
    check(m["comm_bytes_per_step"] == m["comm_bytes_formula"], f"{r['mode']}: comm bytes differ from the formula")
    check(m["fits"] is True, f"{r['mode']}: 70B at stage 3 with recomputation does not fit 80 GB on 32 GPUs")
sync, pre = runs
check(sync["mode"] == "sync" and sync["metrics"]["overlap_pct"] == 0, "sync overlap is not 0")
check(pre["metrics"]["overlap_pct"] > 50, "prefetch hides little of 70B's comm on 4 nodes")
t = json.load(open(f"{d}/a.trace.json"))
check(t["otherData"]["simulated"] is True and "virtual" in t["otherData"]["clock"], "trace not marked simulated")
finish()
EOF

# Without recomputation 70B's activations do not fit 80 GB: the sim still
# predicts the step, warns, and says fits: false.
check timeout 120 "$ZB" step --backend sim --model llama3_70b --nodes 4 --gpus-per-node 8 --stage 3 --mode prefetch \
    --steps 1 --warmup 0 --json "$tmp/nofit.json" >"$tmp/nofit.out" 2>"$tmp/nofit.err"
check grep -q "WARNING: stage 3 prefetch needs" "$tmp/nofit.out"
check python3 -c 'import json, sys; m = json.load(open(sys.argv[1]))["runs"][0]["metrics"]; sys.exit(m["fits"] is not False)' \
    "$tmp/nofit.json"

# ci/demo's reading: the sentence under the simulated step's tables, with
# its figures.
python3 - "$tmp" <<'EOF' || fail=1
import json, sys
from zbcheck import check, finish
d = sys.argv[1]
runs = {r["mode"]: r["metrics"] for r in json.load(open(f"{d}/a.json"))["runs"]}
lines = [l for l in open(f"{d}/a.out") if l.startswith("# reading, stage 3:")]
check(len(lines) == 1, f"{len(lines)} reading lines for stage 3")
text = "".join(lines)
for figure in (f"{runs['sync']['step_time_ms']:.3f} -> {runs['prefetch']['step_time_ms']:.3f} ms",):
    check(figure in text, f"the reading lacks '{figure}': {text}")
finish()
EOF

# The scaling table: one run per node count and configuration; ZeRO-3 sync
# never overlaps, prefetch does; memory falls with the node count at stage 3
# and is the ledger's; fits says whether the peak is within the profile's.
check timeout 120 "$ZB" scale --model llama3_70b --nodes 1,2,4 --recompute full --steps 1 --warmup 0 \
    --json "$tmp/scale.json" >"$tmp/scale.out" 2>"$tmp/scale.err"
check grep -q "^# SIMULATED scaling table" "$tmp/scale.out"
python3 - "$tmp" <<'EOF' || fail=1
import json, sys
from zbcheck import check, finish
doc = json.load(open(f"{sys.argv[1]}/scale.json"))
runs = doc["runs"]
check([(r["nodes"], r["config"]) for r in runs] ==
      [(n, c) for n in (1, 2, 4) for c in ("ZeRO-2", "ZeRO-3 sync", "ZeRO-3 prefetch")], "scale cells")
for r in runs:
    m = r["metrics"]
    check(r["simulated"] is True and r["ranks"] == 8 * r["nodes"], "scale identity")
    check(m["peak_mem_by_tag_bytes"] == m["ledger_by_tag_bytes"], f"{r['nodes']} {r['config']}: memory != ledger")
    check(m["fits"] == (m["peak_mem_bytes"] <= m["mem_per_gpu_bytes"]), f"{r['nodes']} {r['config']}: fits")
    check(m["comm_bytes_per_step"] == m["comm_bytes_formula"], f"{r['nodes']} {r['config']}: comm bytes")
    if r["config"] == "ZeRO-3 sync":
        check(m["overlap_pct"] == 0, f"{r['nodes']}: ZeRO-3 sync overlaps")
    if r["config"] == "ZeRO-3 prefetch":
        check(m["overlap_pct"] > 50, f"{r['nodes']}: ZeRO-3 prefetch overlap {m['overlap_pct']}")
z3 = [r["metrics"]["peak_mem_bytes"] for r in runs if r["config"] == "ZeRO-3 sync"]
check(z3[0] > z3[1] > z3[2], f"ZeRO-3 memory does not fall with nodes: {z3}")
finish()
EOF

# Bad input: one line on stderr naming what is wrong, exit 2, nothing on stdout.
expect_bad() { # expect_bad NEEDLE ARGS...
    local needle=$1 rc=0
    shift
    timeout 60 "$ZB" "$@" >"$tmp/bad.out" 2>"$tmp/bad.err" </dev/null || rc=$?
    if [ "$rc" -ne 2 ] || [ "$(wc -l <"$tmp/bad.err")" -ne 1 ] || ! grep -q -- "$needle" "$tmp/bad.err" ||
        [ -s "$tmp/bad.out" ]; then
        echo "FAIL: zerobench $* (exit $rc, want 2 and one line naming '$needle')"
        show "$tmp/bad.err"
        return 1
    fi
}
# Profiles written here from the shipped H100 one, each missing one thing.
python3 - "$tmp" "$(dirname "$0")/../../profiles/hw/h100_sxm.json" <<'EOF'
import json, sys
out, h100 = sys.argv[1], sys.argv[2]
p = json.load(open(h100))
del p["sim"]["interference"], p["sim"]["sources"]["interference"]
json.dump(p, open(f"{out}/no_interference.json", "w"))
q = json.load(open(h100))
q["nic_bytes_per_s"] = 0
json.dump(q, open(f"{out}/no_nic.json", "w"))
EOF
check expect_bad "sim.interference" step --backend sim --hw "$tmp/no_interference.json" --model tiny --steps 1
check expect_bad "nic_bytes_per_s" step --backend sim --hw "$tmp/no_nic.json" --nodes 2 --model tiny --steps 1
check expect_bad "gemm_efficiency" step --backend sim --hw cpu --model tiny --steps 1
check expect_bad "--nodes" step --backend sim --nodes 0 --model tiny
check expect_bad "--nodes" step --backend sim --nodes -2 --model tiny
check expect_bad "--nodes" scale --nodes 1,0,4 --model tiny
check expect_bad "--gpus-per-node" step --backend sim --gpus-per-node 0 --model tiny
check expect_bad "scale command only" step --backend sim --nodes 1,2 --model tiny
check expect_bad "simulated backend" scale --backend cpu --nodes 1,2 --model tiny
check expect_bad "--comm mpi" step --backend sim --comm mpi --model tiny
[ "$fail" -eq 0 ] && echo "test_sim: $passed checks passed"
exit "$fail"
