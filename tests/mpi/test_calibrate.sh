#!/usr/bin/env bash
# zerobench calibrate on a tiny quick sweep (cpu, 2 ranks on one node, and 1
# rank): the profile it writes loads with the profile loader (zerobench plan
# --hw FILE) and carries its sources ("calibrated on HOST at DATE from ..."),
# a GEMM efficiency table in (0, 1] by increasing size, a fitted link with
# its residuals; bad input: exit 2, one line, nothing run, no file.
set -u
source "$(dirname "$0")/../lib.sh"
: "${ZB:?ZB must name the zerobench binary}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zb_calibrate.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export TMPDIR="$tmp"

quick=(--backend cpu --quick --gemm-min 32 --gemm-max 64 --coll-min 4K --coll-max 1M --iters 2 --timeout 120)
check timeout 300 "$ZB" calibrate -o "$tmp/two.json" "${quick[@]}" --gpus-per-node 2 >"$tmp/two.out" 2>&1
check timeout 300 "$ZB" calibrate -o "$tmp/one.json" "${quick[@]}" --gpus-per-node 1 >"$tmp/one.out" 2>&1
[ "$fail" -eq 0 ] || { show "$tmp/two.out"; show "$tmp/one.out"; exit 1; }
check grep -q "one rank: no link to fit" "$tmp/one.out"
# It loads as a hardware profile (the loader of profile.c, through plan --hw).
check timeout 60 "$ZB" plan --params 1B --gpus 2 --hw "$tmp/two.json" >"$tmp/plan.out" 2>&1
check timeout 60 "$ZB" plan --params 1B --gpus 2 --hw "$tmp/one.json" >"$tmp/plan1.out" 2>&1
# The child runs' temporary files are gone.
check [ -z "$(ls -A "$tmp" | grep zb_calibrate)" ]

python3 - "$tmp" <<'PY' || fail=1
import json, sys
from zbcheck import check, finish
tmp = sys.argv[1]
for name, links in (("two", True), ("one", False)):
    p = json.load(open(f"{tmp}/{name}.json"))
    src, sim = p["sources"], p["sim"]
    check(src["fp32_flops"].startswith("calibrated on "), f"{name}: fp32_flops source")
    check(" at 20" in src["fp32_flops"] and " from " in src["fp32_flops"], f"{name}: source names date and run")
    check(p["fp32_flops"] > 0, f"{name}: measured peak")
    table = sim["gemm_efficiency"]
    check([d for d, _ in table] == [32, 64], f"{name}: GEMM sizes {table}")
    check(all(0 < e <= 1 for _, e in table), f"{name}: efficiencies in (0, 1]")
    check(sim["op_overhead_s"] >= 0, f"{name}: op overhead")
    for key in ("gemm_efficiency", "op_overhead_s"):
        check(sim["sources"][key].startswith("calibrated on "), f"{name}: sim source {key}")
    cal = p["calibration"]
    check(cal["peak_flops"] == p["fp32_flops"] and len(cal["gemm"]) == 2, f"{name}: calibration record")
    pooled = cal["collectives"]["pooled"]["intra_node"]
    out = open(f"{tmp}/{name}.out").read()
    if links:
        # A loaded machine can make a sweep unfittable (times not growing with size): then it is said,
        # and the base profile's link stays. Either way the record and the profile agree.
        if "not_fitted" in pooled:
            check("WARNING: the intra_node link was not calibrated" in out, f"{name}: unfitted link said")
            check(not src["nvlink_bytes_per_s"].startswith("calibrated"), f"{name}: base link kept")
        else:
            check(p["nvlink_bytes_per_s"] > 0 and src["nvlink_bytes_per_s"].startswith("calibrated on "),
                  f"{name}: intra-node bandwidth")
            check(sim["link_latency_s"]["intra_node"] >= 0, f"{name}: intra-node latency")
            check(pooled["bandwidth_bytes_per_s"] == p["nvlink_bytes_per_s"], f"{name}: the pooled fit is the profile's")
            check(pooled["points"] >= 3 * 10, f"{name}: pooled over the three sweeps {pooled}")
        for c in ("allgather", "reducescatter", "allreduce"):
            f = cal["collectives"][c]["intra_node"]
            check(f["ranks"] == 2, f"{name}: {c} swept on 2 ranks")
            check("not_fitted" in f or (f["points"] == 10 and f["rms_residual_pct"] >= 0), f"{name}: {c} fit {f}")
        check(cal["collectives"]["allgather"]["inter_node"] is None, f"{name}: one node: no inter-node fit")
    else:
        check(pooled is None and "link_latency_s" not in sim, f"{name}: no link fitted on one rank")
finish("test_calibrate")
PY

expect_bad() { # NEEDLE ARGS...
    local needle=$1
    shift
    local rc=0
    timeout 60 "$ZB" calibrate "$@" >"$tmp/bad.out" 2>"$tmp/bad.err" </dev/null || rc=$?
    if [ "$rc" -ne 2 ] || [ "$(wc -l <"$tmp/bad.err")" -ne 1 ] || ! grep -q -- "$needle" "$tmp/bad.err" ||
        [ -s "$tmp/bad.out" ] || [ -e "$tmp/bad.json" ]; then
        echo "FAIL: zerobench calibrate $*: exit $rc, want 2 with '$needle' and no output"
        show "$tmp/bad.err"
        return 1
    fi
}
check expect_bad "-o PROFILE.json is required" --quick
check expect_bad "folder does not exist" -o "$tmp/no/such/x.json"
check expect_bad "--nodes '0'" -o "$tmp/bad.json" --nodes 0
check expect_bad "--gpus-per-node '-1'" -o "$tmp/bad.json" --gpus-per-node -1
check expect_bad "available" -o "$tmp/bad.json" --hw nope
check expect_bad "--dtype 'fp8'" -o "$tmp/bad.json" --dtype fp8
check expect_bad "--gemm-max" -o "$tmp/bad.json" --gemm-min 64 --gemm-max 64
check expect_bad "at most 16" -o "$tmp/bad.json" --gemm-min 1 --gemm-max 65536
check expect_bad "unknown option" -o "$tmp/bad.json" --bogus
check expect_bad "--backend" -o "$tmp/bad.json" --backend nope --quick
echo "test_calibrate.sh: $passed passed, fail=$fail"
exit $fail
