#!/usr/bin/env bash
# zerobench attention (bench/attention.c) through the real binary: the cpu
# device's fused attention, fp32 and bf16 storage, on 2 ranks and GQA 4:1 at
# a T that is no multiple of the kernels' tiles: exit 0, every sampled row
# checked in double within its bound ("0 OK"), the JSON rows (fwd and bwd,
# the implementation, the dtype, both FLOP counts); the sim costs without
# data ("not checked"); bad input refused with one line and exit 2.
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
SHAPE=(--heads 8 --kv-heads 2 --head-dim 64 --seq 300 --batch 2 -n 2 -w 1)

for dt in float bf16; do
    timeout 300 mpirun --oversubscribe -np 2 "$ZB" attention -d "$dt" "${SHAPE[@]}" --json "$tmp/$dt.json" \
        >"$tmp/$dt.out" 2>&1
    check [ $? -eq 0 ]
    check grep -q "^# Wrong sampled elements : 0 OK" "$tmp/$dt.out"
    check grep -q "^# attention: causal, cpu-tiled, $dt storage" "$tmp/$dt.out"
    python3 - "$tmp/$dt.json" "$dt" <<'PY' || fail=1
import json, sys
from zbcheck import check, finish
runs = json.load(open(sys.argv[1]))["runs"]
check([r["pass"] for r in runs] == ["fwd", "bwd"], f"passes {[r.get('pass') for r in runs]}")
for r in runs:
    m = r["metrics"]
    check(r["impl"] == "cpu-tiled" and r["dtype"] == sys.argv[2] and r["ranks"] == 2, f"identity {r}")
    check(r["shape"] == {"batch": 2, "seq": 300, "heads": 8, "kv_heads": 2, "head_dim": 64}, f"shape {r['shape']}")
    check(m["wrong"] == 0 and m["time_us"] > 0 and m["best_time_us"] <= m["time_us"], f"metrics {m}")
    # the causal count over the full one: (T+1)/(2T) forward, 2.5 x that over 2 backward
    ratio = m["tflops_causal"] / m["tflops"]
    want = 301 / 600 * (1.0 if r["pass"] == "fwd" else 1.25)
    check(abs(ratio - want) < 1e-9, f"{r['pass']}: causal/full {ratio}, want {want}")
finish("attention " + sys.argv[2])
PY
done

timeout 120 "$ZB" attention --backend sim --hw h100_sxm -d bf16 "${SHAPE[@]}" >"$tmp/sim.out" 2>&1
check [ $? -eq 0 ]
check grep -q "^# Wrong sampled elements : not checked (SIMULATED" "$tmp/sim.out"

expect2 "$tmp/half" "-d/--datatype 'half'" "$ZB" attention -d half
expect2 "$tmp/direct" "attention --compare-direct" "$ZB" attention --compare-direct
expect2 "$tmp/heads" "--heads 6 must be a multiple of --kv-heads 4" "$ZB" attention --heads 6 --kv-heads 4
[ $fail -eq 0 ] && echo "test_attention_bench: $passed checks passed" || exit 1
