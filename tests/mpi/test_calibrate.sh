#!/usr/bin/env bash
# zerobench calibrate on a tiny quick sweep (cpu, 2 ranks on one node with
# h100_sxm as the base, and 1 rank on cpu's): the profile it writes loads
# with the profile loader (zerobench plan --hw FILE) and carries its sources
# ("calibrated on HOST at DATE from ..."), a GEMM efficiency table in (0, 1]
# by increasing size from 0, the element-wise bandwidth, the per-op
# overhead (the step's idle time over its ops), each element-wise kernel's own efficiency, the fitted links (pooled and per collective) with their
# residuals, and a marker per parameter: what the 2-rank run could not fit
# (the inter-node link) is the base's, marked from_base with a source
# naming it; the sim step then runs on the profile alone (structure, not
# speed). Bad input: exit 2, one line, nothing run, no file.
set -u
source "$(dirname "$0")/../lib.sh"
: "${ZB:?ZB must name the zerobench binary}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zb_calibrate.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export TMPDIR="$tmp"

quick=(--backend cpu --quick --gemm-min 32 --gemm-max 64 --coll-min 4K --coll-max 1M --iters 2 --timeout 120)
check timeout 300 "$ZB" calibrate -o "$tmp/two.json" "${quick[@]}" --gpus-per-node 2 --base h100_sxm >"$tmp/two.out" 2>&1
check timeout 300 "$ZB" calibrate -o "$tmp/one.json" "${quick[@]}" --gpus-per-node 1 >"$tmp/one.out" 2>&1
[ "$fail" -eq 0 ] || { show "$tmp/two.out"; show "$tmp/one.out"; exit 1; }
check grep -q "one rank: no link to fit" "$tmp/one.out"
# It loads as a hardware profile (the loader of profile.c, through plan --hw).
check timeout 60 "$ZB" plan --params 1B --gpus 2 --hw "$tmp/two.json" >"$tmp/plan.out" 2>&1
check timeout 60 "$ZB" plan --params 1B --gpus 2 --hw "$tmp/one.json" >"$tmp/plan1.out" 2>&1
# calibrate -> sim: the 2-rank profile is all the sim needs for the step on 2 ranks of one node.
check timeout 120 "$ZB" step --backend sim --hw "$tmp/two.json" --gpus-per-node 2 --mode both --steps 2 \
  --json "$tmp/sim.json" >"$tmp/sim.out" 2>&1
[ "$fail" -eq 0 ] || { show "$tmp/sim.out"; exit 1; }
check grep -q "from the base profile (not calibrated here): " "$tmp/two.out"
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
    dims = [d for d, _ in table]
    check(dims[0] == 0 and 64 in dims and dims == sorted(set(dims)), f"{name}: GEMM sizes {table}")
    check(all(0 < e <= 1 for _, e in table), f"{name}: efficiencies in (0, 1]")
    check(sim["op_overhead_s"] >= 0, f"{name}: op overhead")
    for key in ("gemm_efficiency", "op_overhead_s"):
        check(sim["sources"][key].startswith("calibrated on "), f"{name}: sim source {key}")
    cal = p["calibration"]
    check(cal["peak_flops"] == p["fp32_flops"] and len(cal["gemm"]) == len(table), f"{name}: calibration record")
    # the tiny model's own GEMMs (64 tokens, dim 64, kv 32: smallest dimensions 32 and 64) in the table
    gm = cal["gemm_model"]
    if "not_fitted" not in gm:
        model_dims = [e["dim"] for e in cal["gemm"] if e["from_model_shapes"]]
        check(model_dims and gm["rms_residual_pct"] >= 0, f"{name}: model GEMMs {gm} {cal['gemm']}")
        check("the model's own GEMMs" in sim["sources"]["gemm_efficiency"], f"{name}: GEMM source")
    check(cal["threads_per_rank"] >= 1, f"{name}: threads per rank")
    params = cal["parameters"]
    for key, e in params.items():
        check(e["status"] in ("calibrated", "from_base", "missing"), f"{name}: {key} marked {e}")
        if e["status"] == "calibrated" and "rms_residual_pct" in e:
            check(e["rms_residual_pct"] is None or e["rms_residual_pct"] >= 0, f"{name}: {key} residual")
    check(params["sim.gemm_efficiency"]["status"] == "calibrated", f"{name}: GEMM table calibrated")
    check("rms_pct" in cal["gemm_residual"], f"{name}: GEMM residual")
    for key in ("sim.mem_efficiency", "hbm_bytes_per_s", "sim.op_overhead_s", "sim.attention_fwd_efficiency"):
        # a noisy sweep may leave one to the base: then it is marked so, never silently
        check(key in params, f"{name}: {key} has a marker")
    mem = cal["memory"]
    check("not_fitted" in mem or (mem["bandwidth_bytes_per_s"] > 0 and mem["rms_residual_pct"] >= 0),
          f"{name}: memory fit {mem}")
    if params["hbm_bytes_per_s"]["status"] == "calibrated":
        check(p["hbm_bytes_per_s"] == mem["bandwidth_bytes_per_s"] and sim["mem_efficiency"] == 1.0,
              f"{name}: element-wise bandwidth is hbm_bytes_per_s")
    # each element-wise kernel's own efficiency, from its two shapes, within the profile's bounds
    kern = cal["kernels"]
    if params["hbm_bytes_per_s"]["status"] == "calibrated":
        check(params["sim.kernel_efficiency"]["status"] == "calibrated", f"{name}: kernel efficiencies calibrated")
        effs = sim["kernel_efficiency"]
        check(kern["device_times"] is True, f"{name}: the cpu backend's traced kernels report device times")
        check(len(effs) == 15 and all(0 < e <= 10 for e in effs.values()), f"{name}: kernel efficiencies {effs}")
        for op, e in effs.items():
            k = kern[op]
            check(k["efficiency"] == e and len(k["points"]) == 2, f"{name}: {op} record {k}")
            pts = k["points"]
            # at twice the batch each kernel moves more, but AdamW, fill and cast, which run on the shard
            shard = op in ("adamw", "fill", "cast")
            check(pts[1]["bytes"] == pts[0]["bytes"] if shard else pts[1]["bytes"] > 1.9 * pts[0]["bytes"],
                  f"{name}: {op} at twice the batch {pts}")
            if not k["clamped"]:
                # the stated residuals are those of the model it fitted: overhead + bytes / (hbm x eff), the
                # overhead none over the calls' device records (traced children), else the element-wise intercept
                over = kern["fit_overhead_s"]
                check(over == (0 if kern["device_times"] else mem["overhead_s"]), f"{name}: kernel fit overhead")
                res = [100 * (over + q["bytes"] / (p["hbm_bytes_per_s"] * e) - q["time_s"]) / q["time_s"] for q in pts]
                check(abs(max(abs(x) for x in res) - k["max_residual_pct"]) <= 1e-6 * max(1, k["max_residual_pct"]),
                      f"{name}: {op} residual {res} against {k['max_residual_pct']}")
        check(sim["sources"]["kernel_efficiency"].startswith("calibrated on "), f"{name}: kernel source")
    else:
        check("not_fitted" in kern, f"{name}: kernels not fitted without the element-wise fit")
    pooled = cal["collectives"]["pooled"]["intra_node"]
    out = open(f"{tmp}/{name}.out").read()
    gap = cal["op_gap"]
    if links:
        # the per-op overhead is the sync step's idle time over its ops (the step run's own figures)
        check("not_fitted" not in gap and gap["ops_per_step"] >= 50 and gap["idle_ms"] >= 0, f"{name}: op gap {gap}")
        check(abs(sim["op_overhead_s"] - gap["idle_ms"] * 1e-3 / gap["ops_per_step"]) <= 1e-12,
              f"{name}: op_overhead_s is the step's gap {gap}")
        check("idle_ms" in sim["sources"]["op_overhead_s"] and "per-op overhead in the step" in out,
              f"{name}: op gap source and printout")
    else:
        check("not_fitted" in gap, f"{name}: one rank: no step run, no op gap {gap}")
    if links:
        # A loaded machine can make a sweep unfittable (times not growing with size): then it is said,
        # and the base profile's link stays. Either way the record and the profile agree.
        if "not_fitted" in pooled:
            check("not fitted" in out, f"{name}: unfitted link said")
            check(src["nvlink_bytes_per_s"].startswith("from base profile"), f"{name}: base link kept, marked")
        else:
            check(p["nvlink_bytes_per_s"] > 0 and src["nvlink_bytes_per_s"].startswith("calibrated on "),
                  f"{name}: intra-node bandwidth")
            check(sim["link_latency_s"]["intra_node"] >= 0, f"{name}: intra-node latency")
            check(pooled["bandwidth_bytes_per_s"] == p["nvlink_bytes_per_s"], f"{name}: the pooled fit is the profile's")
            check(pooled["points"] >= 3 * 5, f"{name}: pooled over the three sweeps {pooled}")
            # a fitted bandwidth is the rate measured: no protocol share taken off it again
            check(sim["link_efficiency"]["intra_node"] == 1 and
                  "intra_node: 1, calibrated" in sim["sources"]["link_efficiency"], f"{name}: intra-node efficiency")
        for c in ("allgather", "reducescatter", "allreduce"):
            f = cal["collectives"][c]["intra_node"]
            check(f["ranks"] == 2, f"{name}: {c} swept on 2 ranks")
            # one point a size (5 sizes): the out-of-place runs, as the step places its collectives
            check("not_fitted" in f or (f["points"] == 5 and f["rms_residual_pct"] >= 0), f"{name}: {c} fit {f}")
        # over buffers the size of the step's per-rank peak memory (the tiny step's: a few MB)
        rot = int(cal["coll_command"].split("--rotate-bytes ")[1].split(" ")[0])
        check(1e6 < rot < 64e6 and "(out of place" in cal["coll_command"], f"{name}: rotation {cal['coll_command']}")
        check(cal["collectives"]["allgather"]["inter_node"] is None, f"{name}: one node: no inter-node fit")
        # not fittable on one node: the base's (h100_sxm), marked so in the markers and the sources
        check(params["sim.link_latency_s.inter_node"]["status"] == "from_base", f"{name}: inter-node latency borrowed")
        check(params["nic_bytes_per_s"]["status"] == "from_base", f"{name}: NIC borrowed")
        check(src["nic_bytes_per_s"].startswith("from base profile H100"), f"{name}: borrowed source {src['nic_bytes_per_s']}")
        check("inter_node: from base profile" in sim["sources"]["link_latency_s"], f"{name}: latency source")
        check(sim["link_efficiency"]["inter_node"] == 0.96 and
              "inter_node: from base profile" in sim["sources"]["link_efficiency"], f"{name}: NIC efficiency borrowed")
        for c in ("allgather", "reducescatter", "allreduce"):
            f = cal["collectives"][c]["intra_node"]
            if "not_fitted" not in f:
                check(sim["collectives"][c]["intra_node"]["bandwidth_bytes_per_s"] == f["bandwidth_bytes_per_s"],
                      f"{name}: {c}'s own fit in sim.collectives")
        for k in ("compute_beside_comm", "comm_beside_compute"):
            s = cal[k]
            check("not_fitted" in s or (s["factor"] >= 0 and s["pairs"] >= 2), f"{name}: {k} {s}")
        check(params["sim.interference"]["status"] in ("calibrated", "from_base"), f"{name}: interference")
        check(params["sim.comm_interference"]["status"] in ("calibrated", "from_base", "missing"), f"{name}: comm")
        # the hold at a collective's start: the prefetch step's own comm_hold_ms, or said why not
        hold = cal["comm_hold"]
        if "not_fitted" in hold:
            check("hold at a collective's start: not measured" in out and
                  params["sim.comm_hold_s"]["status"] in ("from_base", "missing"), f"{name}: hold not fitted {hold}")
        else:
            check(0 <= hold["comm_hold_s"] < 1 and sim["comm_hold_s"] == hold["comm_hold_s"] and
                  params["sim.comm_hold_s"]["status"] == "calibrated" and "comm_hold_ms" in sim["sources"]["comm_hold_s"]
                  and "hold at a collective's start:" in out, f"{name}: hold {hold}")
    else:
        check(pooled is None and "link_latency_s" not in sim, f"{name}: no link fitted on one rank")
sim = json.load(open(f"{tmp}/sim.json"))
check(sim["meta"]["simulated"] is True and len(sim["runs"]) == 2, "the sim step ran on the calibrated profile")
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
