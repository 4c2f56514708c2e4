#!/usr/bin/env bash
# zerobench kernels through the real binary ($ZB): on the cpu backend every
# element-wise kernel the sim prices by its bytes gets one row at the tiny
# model's shapes (bytes moved as kernel_bytes.h counts them, a time, the
# per-call samples, and traced the calls' device time; untraced none); on the sim each row's time is exactly the sim's price,
# per-op overhead + bytes / (hbm_bytes_per_s x efficiency), with
# mem_efficiency for every kernel of h100_sxm and a kernel's own
# sim.kernel_efficiency where a profile gives one (that kernel alone
# changes). Bad input: exit 2, one line.
set -u
source "$(dirname "$0")/../lib.sh"
: "${ZB:?ZB must name the zerobench binary}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zb_kernels.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

check timeout 120 "$ZB" kernels --backend cpu --model tiny -n 5 -w 1 --json "$tmp/cpu.json" --trace "$tmp/cpu.trace.json" \
  >"$tmp/cpu.out" 2>&1
check timeout 60 "$ZB" kernels --backend sim --hw h100_sxm -d bf16 --model llama3_8b -n 2 -w 1 \
  --json "$tmp/sim.json" >"$tmp/sim.out" 2>&1
# the same with rope_fwd's own efficiency: 0.42, half of mem_efficiency
: "${ZB_PROFILES:?ZB_PROFILES must name the profiles folder}"
python3 - "$tmp" <<'PY' || fail=1
import json, sys, os
p = json.load(open(os.path.join(os.environ["ZB_PROFILES"], "hw", "h100_sxm.json")))
p["sim"]["kernel_efficiency"] = {"rope_fwd": 0.42}
p["sim"]["sources"]["kernel_efficiency"] = "test: half of mem_efficiency"
json.dump(p, open(os.path.join(sys.argv[1], "half.json"), "w"))
PY
check timeout 60 "$ZB" kernels --backend sim --hw "$tmp/half.json" -d bf16 --model llama3_8b -n 2 -w 1 \
  --json "$tmp/half.json.out.json" >"$tmp/half.out" 2>&1
[ "$fail" -eq 0 ] || { show "$tmp/cpu.out"; show "$tmp/sim.out"; show "$tmp/half.out"; exit 1; }

python3 - "$tmp" <<'PY' || fail=1
import json, os, sys
from zbcheck import check, finish
tmp = sys.argv[1]
names = ["embedding_fwd", "embedding_bwd", "rmsnorm_fwd", "rmsnorm_bwd", "rope_fwd", "rope_bwd", "swiglu_fwd",
         "swiglu_bwd", "residual_fwd", "accumulate", "cross_entropy_fwd", "cross_entropy_bwd", "adamw", "fill", "cast"]
cpu = json.load(open(f"{tmp}/cpu.json"))["runs"]
check([r["op"] for r in cpu] == names, f"cpu rows {[r['op'] for r in cpu]}")
# tiny: N = 2 x 32 tokens, C = 64, vocab 256, float storage
by = {r["op"]: r for r in cpu}
check(by["residual_fwd"]["metrics"]["bytes_moved"] == 3 * 64 * 64 * 4, "residual bytes")
check(by["cross_entropy_bwd"]["metrics"]["bytes_moved"] == 2 * 64 * 256 * 4 + 4 * 2 * 64, "cross-entropy bytes")
for r in cpu:
    m = r["metrics"]
    check(m["time_us"] > 0 and m["gbps"] > 0 and len(m["samples"]["time_us"]) == 5, f"{r['op']}: {m}")
    # traced: the calls' own records give the time on the device
    check(m["device_time_us"] is not None and m["device_time_us"] > 0, f"{r['op']}: device time {m}")
hw = json.load(open(os.path.join(os.environ["ZB_PROFILES"], "hw", "h100_sxm.json")))
hbm, eff, over = hw["hbm_bytes_per_s"], hw["sim"]["mem_efficiency"], hw["sim"]["op_overhead_s"]
sim = {r["op"]: r["metrics"] for r in json.load(open(f"{tmp}/sim.json"))["runs"]}
half = {r["op"]: r["metrics"] for r in json.load(open(f"{tmp}/half.json.out.json"))["runs"]}
check(all(sim[op]["device_time_us"] is None for op in names), "untraced: no device time")
for op in names:
    want = (over + sim[op]["bytes_moved"] / (hbm * eff)) * 1e6
    check(abs(sim[op]["time_us"] - want) <= 1e-3 * want + 2e-3, f"sim {op}: {sim[op]['time_us']} us, want {want}")
    e = 0.42 if op == "rope_fwd" else eff
    want = (over + half[op]["bytes_moved"] / (hbm * e)) * 1e6
    check(abs(half[op]["time_us"] - want) <= 1e-3 * want + 2e-3, f"half {op}: {half[op]['time_us']} us, want {want}")
finish("test_kernels_bench")
PY

expect2 "$tmp/dtype" "-d/--datatype 'int8'" "$ZB" kernels -d int8
expect2 "$tmp/direct" "kernels --compare-direct" "$ZB" kernels --compare-direct
expect2 "$tmp/shape" "--heads" "$ZB" kernels --heads 0
expect2 "$tmp/check" "kernels -c/--check 1" "$ZB" kernels -c 1
[ "$fail" -eq 0 ] && echo "test_kernels_bench.sh: $passed checks passed"
exit "$fail"
