#!/usr/bin/env bash
# zerobench plan ($ZB): the ZeRO paper's Figure 1 from --params, the JSON's
# documented keys (one run per cluster size, stage and schedule), a model
# whose model states alone exceed the device reported as not fitting with
# exit code 0, columns per --nodes value, and bad input: exit 2, one line on
# stderr naming the flag, nothing on stdout, no --json file left behind.
set -u
source "$(dirname "$0")/../lib.sh"
: "${ZB:?ZB must name the zerobench binary}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zb_plan.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

run_ok() { # run_ok NAME ARGS...: exit 0, JSON written
    local name=$1
    shift
    local rc=0
    timeout 60 "$ZB" plan "$@" --json "$tmp/$name.json" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
    if [ "$rc" -ne 0 ] || [ ! -s "$tmp/$name.json" ]; then
        echo "FAIL: zerobench plan $*: exit $rc"
        show "$tmp/$name.err"
        return 1
    fi
}

check run_ok fig1 --params 7.5B --gpus 64
check run_ok fig1e --params 7.5e9 --gpus 64
check run_ok big --params 70B --gpus 8
check run_ok l70 --model llama3_70b --nodes 1,2,4 --hw h100_sxm
check run_ok tiny --model tiny --gpus 1,2 --hw cpu --param-dtype float --recompute full --prefetch-depth 2

check grep -q "only the model-state rows" "$tmp/fig1.out"
check grep -q "fits" "$tmp/l70.out"

python3 - "$tmp" <<'EOF' || fail=1
import json, sys
from zbcheck import check, finish
tmp = sys.argv[1]
def load(name):
    d = json.load(open(f"{tmp}/{name}.json"))
    check(d.get("schema") == "zerobench/1", f"{name}: schema")
    check(d["meta"].get("config", {}).get("command") == "plan", f"{name}: meta.config.command")
    for key in ("zerobench_version", "git_describe", "command_line", "date_utc"):
        check(key in d["meta"], f"{name}: meta.{key}")
    for r in d["runs"]:
        check(r.get("bench") == "plan", f"{name}: bench")
        for key in ("stage", "mode", "ranks", "nodes", "gpus_per_node", "params", "hw"):
            check(key in r, f"{name}: run key {key}")
        for key in ("model_state_bytes", "activation_bytes", "total_bytes", "fits", "params_bytes",
                    "grads_bytes", "optim_bytes", "gathered_bytes", "device_mem_bytes", "headroom_bytes",
                    "comm_bytes_per_step"):
            check(key in r["metrics"], f"{name}: metrics.{key}")
    return d["runs"]

for name in ("fig1", "fig1e"):
    runs = load(name)
    check(len(runs) == 4, f"{name}: {len(runs)} runs, want 4 (one per stage)")
    gb = {r["stage"]: round(r["metrics"]["model_state_bytes"] / 1e9, 1) for r in runs}
    check(gb == {0: 120.0, 1: 31.4, 2: 16.6, 3: 1.9}, f"{name}: Figure 1 {gb}")
    for r in runs:
        m = r["metrics"]
        check(r["mode"] is None and m["activation_bytes"] is None, f"{name}: no shapes, activations null")
        check(m["total_bytes"] == m["model_state_bytes"], f"{name}: total = model states")
        check(m["fits"] == (m["total_bytes"] <= m["device_mem_bytes"]), f"{name}: fits")
        check(m["headroom_bytes"] == m["device_mem_bytes"] - m["total_bytes"], f"{name}: headroom")
    check(not runs[0]["metrics"]["fits"] and runs[3]["metrics"]["fits"], f"{name}: stage 0 does not fit, 3 does")

# 70B: model states 16 x 70e9 = 1120 GB, 140 GB per GPU at stage 3 on 8: fits nowhere on 80 GB.
runs = load("big")
check([r["metrics"]["model_state_bytes"] for r in runs][3] == 140 * 10**9, "70B stage 3 on 8: 140 GB")
check(all(r["metrics"]["fits"] is False for r in runs), "70B on 8 x 80 GB: fits false at every stage")

runs = load("l70")
check(len(runs) == 3 * 4 * 2, f"l70: {len(runs)} runs, want 24")
check(sorted({r["ranks"] for r in runs}) == [8, 16, 32], "l70: columns 8, 16, 32 GPUs")
check(all(r["nodes"] * r["gpus_per_node"] == r["ranks"] for r in runs), "l70: nodes x gpus per node")
for r in runs:
    m = r["metrics"]
    check(m["total_bytes"] == m["model_state_bytes"] + m["activation_bytes"] + m["workspace_bytes"]
          + m["gathered_bytes"], "l70: total is the sum of its terms")
    check(m["model_state_bytes"] == m["params_bytes"] + m["grads_bytes"] + m["optim_bytes"], "l70: model states")
    check(m["fits"] == (m["total_bytes"] <= m["device_mem_bytes"]), "l70: fits")
by = {(r["ranks"], r["stage"], r["mode"]): r["metrics"] for r in runs}
check(by[(32, 3, "prefetch")]["model_state_bytes"] < by[(8, 3, "prefetch")]["model_state_bytes"], "l70: shards shrink")
check(by[(8, 3, "prefetch")]["gathered_bytes"] == 2 * by[(8, 3, "sync")]["gathered_bytes"], "l70: depth 1: 2 slots")
check(by[(8, 0, "sync")]["comm_bytes_per_step"] < by[(8, 3, "sync")]["comm_bytes_per_step"], "l70: ZeRO-3 sends more")

runs = load("tiny")
check(all(r["metrics"]["fits"] for r in runs), "tiny on cpu fits")
check(all(r["recompute"] == "full" and r["prefetch_depth"] == 2 for r in runs), "tiny: recompute, depth echoed")
finish("test_plan_cli")
EOF

# bad input: exit 2, one stderr line naming the flag, nothing on stdout, no file.
expect_bad() {
    local needle=$1
    shift
    local rc=0
    rm -f "$tmp/bad.json"
    timeout 60 "$ZB" plan "$@" --json "$tmp/bad.json" >"$tmp/bad.out" 2>"$tmp/bad.err" </dev/null || rc=$?
    local first
    first=$(head -n 1 "$tmp/bad.err")
    if [ "$rc" -ne 2 ] || [ "$(wc -l <"$tmp/bad.err")" -ne 1 ] || [[ "$first" != "zerobench: "*"$needle"* ]] ||
        [ -s "$tmp/bad.out" ] || [ -e "$tmp/bad.json" ]; then
        echo "FAIL: zerobench plan $*: exit $rc, want 2, one line with '$needle', no output"
        show "$tmp/bad.err"
        return 1
    fi
}
check expect_bad "llama3_70b, llama3_8b" --model nope --gpus 8
check expect_bad "h100_sxm" --model tiny --hw nope
check expect_bad "--gpus '0'" --params 7B --gpus 0
check expect_bad "--gpus '-8'" --params 7B --gpus -8
check expect_bad "--nodes '0'" --params 7B --nodes 0
check expect_bad "--nodes '-1'" --params 7B --nodes -1
check expect_bad "--nodes '1,,2'" --params 7B --nodes 1,,2
check expect_bad "--gpus-per-node '0'" --params 7B --nodes 2 --gpus-per-node 0
check expect_bad "--params" --params abc --gpus 8
check expect_bad "--params" --params -5 --gpus 8
check expect_bad "--params" --params 0 --gpus 8
check expect_bad "--params" --params 7.5X --gpus 8
check expect_bad "--params" --params nan --gpus 8
check expect_bad "--model NAME or --params N" --gpus 8
check expect_bad "not both" --model tiny --params 7B
check expect_bad "--seq needs --model" --params 7B --seq 4096
check expect_bad "--recompute 'some'" --model tiny --recompute some
check expect_bad "--param-dtype 'fp8'" --model tiny --param-dtype fp8
check expect_bad "--gpus and --nodes" --params 7B --gpus 8 --nodes 1
check expect_bad "unknown option '--bogus'" --params 7B --bogus 1
check expect_bad "fewer than the" --model tiny --gpus 100000
rc=0
timeout 60 "$ZB" plan --params 7B --json "$tmp/no/such/dir/x.json" >"$tmp/bad.out" 2>"$tmp/bad.err" || rc=$?
check [ "$rc" -eq 2 ]
check grep -q "folder does not exist" "$tmp/bad.err"
check timeout 60 "$ZB" plan --help >"$tmp/help.out"
check grep -q -- "--prefetch-depth" "$tmp/help.out"

echo "test_plan_cli.sh: $passed passed, fail=$fail"
exit $fail
