#!/usr/bin/env bash
# zerobench plan predicts what the step measures: the tiny model on 2 ranks
# (cpu, float), every stage in both schedules, one step. Each plan figure
# must equal the step's measured per-tag peak (model states, activations,
# workspace, gathered buffers) and its counted comm bytes, exactly: the plan
# and the step's ledger column are one ledger (bench/zero3/engine_ledger.c).
set -u
source "$(dirname "$0")/../lib.sh"
: "${ZB:?ZB must name the zerobench binary}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zb_plan_step.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

check timeout 120 mpirun --oversubscribe -np 2 "$ZB" step --backend cpu --model tiny --stage all --steps 1 \
    --warmup 0 --param-dtype float --prefetch-depth 2 --json "$tmp/step.json" >"$tmp/step.out" 2>&1
check timeout 60 "$ZB" plan --model tiny --gpus 2 --hw cpu --param-dtype float --prefetch-depth 2 \
    --json "$tmp/plan.json" >"$tmp/plan.out" 2>&1
[ "$fail" -eq 0 ] || { show "$tmp/step.out"; show "$tmp/plan.out"; exit 1; }

python3 - "$tmp" <<'EOF' || fail=1
import json, sys
from zbcheck import check, finish
tmp = sys.argv[1]
step = {(r["stage"], r["mode"]): r["metrics"] for r in json.load(open(f"{tmp}/step.json"))["runs"]}
plan = {(r["stage"], r["mode"]): r["metrics"] for r in json.load(open(f"{tmp}/plan.json"))["runs"]}
check(len(step) == 8 and set(step) == set(plan), f"8 runs each: step {sorted(step)}, plan {sorted(plan)}")
for key in sorted(set(step) & set(plan)):
    s, p = step[key], plan[key]
    t = s["peak_mem_by_tag_bytes"]
    pairs = {
        "model_state_bytes": t["param_shard"] + t["grad_shard"] + t["optim_state"],
        "params_bytes": t["param_shard"], "grads_bytes": t["grad_shard"], "optim_bytes": t["optim_state"],
        "activation_bytes": t["activation"], "workspace_bytes": t["workspace"],
        "gathered_bytes": t["gathered_param"] + t["gathered_grad"],
        "comm_bytes_per_step": s["comm_bytes_per_step"],
    }
    for k, measured in pairs.items():
        check(p[k] == measured, f"stage {key[0]} {key[1]}: plan {k} {p[k]}, step measured {measured}")
finish("test_plan_step")
EOF
exit $fail
