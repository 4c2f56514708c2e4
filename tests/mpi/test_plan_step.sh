#!/usr/bin/env bash
# zerobench plan predicts what the step measures: on 2 ranks (cpu, float),
# every stage in both schedules, one step, of the tiny profile and of a shape
# given by the model-shape flags (some overriding tiny's fields, with the
# same flags given to step and plan). Each plan figure must equal the step's
# measured per-tag peak (model states, activations, workspace, gathered
# buffers) and its counted comm bytes, exactly: the plan and the step's
# ledger column are one ledger (bench/zero3/engine_ledger.c), and the shape
# flags one description (bench/model_opts.c).
set -u
source "$(dirname "$0")/../lib.sh"
: "${ZB:?ZB must name the zerobench binary}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zb_plan_step.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# NAME and the model flags both commands get.
cases=("tiny --model tiny"
    "shaped --model tiny --layers 3 --dim 96 --heads 6 --kv-heads 3 --ffn-dim 224 --vocab 320 --seq 24 --batch 3")
for c in "${cases[@]}"; do
    read -r -a words <<<"$c"
    name=${words[0]} flags=("${words[@]:1}")
    check timeout 120 mpirun --oversubscribe -np 2 "$ZB" step --backend cpu "${flags[@]}" --stage all --steps 1 \
        --warmup 0 --param-dtype float --prefetch-depth 2 --json "$tmp/$name.step.json" >"$tmp/$name.step.out" 2>&1
    check timeout 60 "$ZB" plan "${flags[@]}" --gpus 2 --hw cpu --param-dtype float --prefetch-depth 2 \
        --json "$tmp/$name.plan.json" >"$tmp/$name.plan.out" 2>&1
    [ "$fail" -eq 0 ] || { show "$tmp/$name.step.out"; show "$tmp/$name.plan.out"; exit 1; }
done

python3 - "$tmp" <<'EOF_PY' || fail=1
import json, sys
from zbcheck import check, finish
tmp = sys.argv[1]
for name in ("tiny", "shaped"):
    step_doc = json.load(open(f"{tmp}/{name}.step.json"))
    step = {(r["stage"], r["mode"]): r for r in step_doc["runs"]}
    plan = {(r["stage"], r["mode"]): r for r in json.load(open(f"{tmp}/{name}.plan.json"))["runs"]}
    check(len(step) == 8 and set(step) == set(plan), f"{name}: 8 runs each: step {sorted(step)}, plan {sorted(plan)}")
    for key in sorted(set(step) & set(plan)):
        sr, pr = step[key], plan[key]
        # One model: the same label and shape on both sides.
        check(pr["model"] == sr["model"], f"{name} {key}: plan model {pr['model']}, step {sr['model']}")
        check(pr["shape"] == sr["shape"], f"{name} {key}: plan shape {pr['shape']}, step {sr['shape']}")
        s, p = sr["metrics"], pr["metrics"]
        t = s["peak_mem_by_tag_bytes"]
        pairs = {
            "model_state_bytes": t["param_shard"] + t["grad_shard"] + t["optim_state"],
            "params_bytes": t["param_shard"], "grads_bytes": t["grad_shard"], "optim_bytes": t["optim_state"],
            "activation_bytes": t["activation"], "workspace_bytes": t["workspace"],
            "gathered_bytes": t["gathered_param"] + t["gathered_grad"],
            "comm_bytes_per_step": s["comm_bytes_per_step"],
        }
        for k, measured in pairs.items():
            check(p[k] == measured, f"{name} stage {key[0]} {key[1]}: plan {k} {p[k]}, step measured {measured}")
shaped = json.load(open(f"{tmp}/shaped.plan.json"))["runs"][0]
check(shaped["model"] == "tiny+batch=3,dim=96,ffn-dim=224,heads=6,kv-heads=3,layers=3,seq=24,vocab=320"
      and shaped["shape"]["head_dim"] == 16, f"shaped: {shaped['model']}, {shaped['shape']} (head_dim: tiny's)")
finish("test_plan_step")
EOF_PY
exit $fail
