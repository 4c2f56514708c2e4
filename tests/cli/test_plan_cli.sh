#!/usr/bin/env bash
# zerobench plan ($ZB): the ZeRO paper's Figure 1 from --params, the JSON's
# documented keys (one run per cluster size, stage and schedule), a model
# whose model states alone exceed the device reported as not fitting with
# exit code 0, columns per --nodes value, the step's model-shape flags
# (--layers ... --batch: over the tiny profile without --model, overriding
# the --model profile's fields with it, the step's model label), and bad
# input: exit 2, one line on stderr naming the flag, nothing on stdout, no
# --json file left behind; a bad shape value gets the step's own message.
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
# Shape flags: alone (over tiny, the step's default), over a profile, equal
# to the profile's own values, and all of them ("custom", as the step says).
check run_ok shaped --layers 4 --dim=128 --gpus 1,2 --hw cpu --param-dtype float
check run_ok over8b --model llama3_8b --layers 2 --seq 512 --batch 1 --gpus 8
check run_ok same --model tiny --layers 2 --dim 64 --gpus 1,2 --hw cpu --param-dtype float --recompute full \
    --prefetch-depth 2
check run_ok custom --layers 3 --dim 96 --heads 6 --kv-heads 2 --head-dim 16 --ffn-dim 256 --vocab 512 \
    --seq 48 --batch 3 --model llama3_70b --gpus 2 --hw cpu

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

TINY = dict(layers=2, dim=64, heads=4, kv_heads=2, head_dim=16, ffn_dim=176, vocab=256, seq=32, batch=2)
def shape(r):
    check(r["seq"] == r["shape"]["seq"] and r["batch"] == r["shape"]["batch"], "seq, batch as in shape")
    return r["shape"]

shaped = load("shaped")
check(len(shaped) == 2 * 4 * 2, f"shaped: {len(shaped)} runs, want 16")
check(all(r["model"] == "tiny+dim=128,layers=4" for r in shaped), f"shaped: model {shaped[0]['model']}")
check(all(shape(r) == dict(TINY, layers=4, dim=128) for r in shaped), f"shaped: shape {shape(shaped[0])}")
key = lambda r: (r["ranks"], r["stage"], r["mode"])
tiny = {key(r): r["metrics"] for r in runs}
for r in shaped:
    check(r["metrics"]["model_state_bytes"] > tiny[key(r)]["model_state_bytes"], f"shaped {key(r)}: more state")
# Flags equal to the profile's own fields change nothing but the label.
same = load("same")
check({key(r) for r in same} == set(tiny), "same: the grid of tiny")
for r in same:
    check(r["model"] == "tiny+dim=64,layers=2" and shape(r) == TINY, f"same: {r['model']} {shape(r)}")
    check(r["metrics"] == tiny.get(key(r)), f"same {key(r)}: figures differ from --model tiny's")

runs = load("over8b")
check(all(r["model"] == "llama3_8b+batch=1,layers=2,seq=512" for r in runs), f"over8b: {runs[0]['model']}")
# The flags given replace the profile's fields; the rest stay llama3_8b's.
want = dict(layers=2, dim=4096, heads=32, kv_heads=8, head_dim=128, ffn_dim=14336, vocab=128256, seq=512, batch=1)
check(all(shape(r) == want for r in runs), f"over8b: shape {shape(runs[0])}")

runs = load("custom")
want = dict(layers=3, dim=96, heads=6, kv_heads=2, head_dim=16, ffn_dim=256, vocab=512, seq=48, batch=3)
check(all(r["model"] == "custom" and shape(r) == want for r in runs), f"custom: {runs[0]['model']} {shape(runs[0])}")
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
check expect_bad "--seq with --params" --params 7B --seq 4096
check expect_bad "--layers with --params" --params 7B --layers 4
check expect_bad "--layers '0': expected an integer from 1 to" --layers 0 --gpus 2
check expect_bad "--dim 'abc'" --model tiny --dim abc
check expect_bad "--vocab '1'" --vocab 1
check expect_bad "--kv-heads '-2'" --model llama3_8b --kv-heads=-2
check expect_bad "model 'tiny+heads=3': model config: heads 3 is not a multiple of kv_heads 2" --heads 3
check expect_bad "model 'llama3_8b+head-dim=15'" --model llama3_8b --head-dim 15
check expect_bad "fewer than the" --layers 1 --dim 2 --heads 2 --kv-heads 2 --head-dim 2 --ffn-dim 2 --vocab 2 \
    --gpus 4096
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
for flag in layers dim heads kv-heads head-dim ffn-dim vocab seq batch; do
    check grep -q -- "--$flag N " "$tmp/help.out"
done

# A bad shape value: plan says exactly what the step says (one description,
# one parser: bench/model_opts.c, zb_opt_set).
same_message() { # same_message ARGS...: step's stderr and exit code = plan's
    local rs=0 rp=0
    timeout 60 "$ZB" step "$@" >/dev/null 2>"$tmp/step.err" </dev/null || rs=$?
    timeout 60 "$ZB" plan "$@" --gpus 2 >/dev/null 2>"$tmp/plan.err" </dev/null || rp=$?
    if [ "$rs" -ne 2 ] || [ "$rp" -ne 2 ] || ! cmp -s "$tmp/step.err" "$tmp/plan.err"; then
        echo "FAIL: step/plan $*: exit $rs/$rp, messages differ"
        show "$tmp/step.err"
        show "$tmp/plan.err"
        return 1
    fi
}
check same_message --layers 0
check same_message --dim 2x
check same_message --head-dim 99999999
check same_message --batch=-1
check same_message --vocab 1
check same_message --recompute partial
check same_message --prefetch-depth 65
check same_message --param-dtype fp16

echo "test_plan_cli.sh: $passed passed, fail=$fail"
exit $fail
