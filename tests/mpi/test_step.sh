#!/usr/bin/env bash
# The step benchmark end to end on 2 ranks: --mode both prints the side-by-side
# table and writes one JSON run per schedule with every metric of docs/design.md §7;
# sync and prefetch run interleaved on one state (ABBA pairs, --steps per
# schedule; tests/mpi/test_zero3_engine.c checks the bits agree) and the
# prefetch run carries the paired A/B: medians, 95 % intervals whose verdict
# agrees with them, and the reading line; sync shows no overlap; one rank
# (nothing sent) measures and reads nothing about hiding;
# counted comm bytes equal the formula and peak memory equals the ledger;
# --stage all gives 8 runs; --param-dtype bf16 (bf16 activations too, by
# default) names its dtypes, sends half the bytes, keeps the ledger exact and
# trains close to fp32; --act-dtype float keeps fp32 math behind bf16 params;
# bad shapes, bad dtypes, a model too
# large for memory and a non-finite loss end with the documented exit codes
# and one-line messages.
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { mpirun --oversubscribe -np 2 "$ZB" "$@"; }

run --mode both --steps 6 --warmup 1 --json "$tmp/both.json" --csv "$tmp/both.csv" >"$tmp/both.out" 2>"$tmp/both.err"
check [ $? -eq 0 ]
check grep -q "prefetch" "$tmp/both.out"
check grep -q "step  14/14" "$tmp/both.err"
check grep -Eq "^# paired A/B, stage 3: 6 pairs of steps on one state \(ABBA order; as many as --steps\).*prefetch - sync step time .* ms \[.*\]: (significant|no significant difference)" "$tmp/both.out"
run --stage all --steps 2 --warmup 0 --recompute full --json "$tmp/all.json" >"$tmp/all.out" 2>&1
check [ $? -eq 0 ]
run --param-dtype bf16 --mode both --steps 2 --warmup 0 --json "$tmp/bf16.json" >"$tmp/bf16.out" 2>"$tmp/bf16.err"
check [ $? -eq 0 ]
check grep -q "params bf16, activations bf16 (fp32 math), gradients reduced in bf16" "$tmp/bf16.out"
check grep -q "^# paired A/B, stage 3: 2 pairs.*(too few pairs for a 95 % interval)" "$tmp/bf16.out"
run --param-dtype bf16 --act-dtype float --mode sync --steps 2 --warmup 0 --json "$tmp/bf16f.json" >"$tmp/bf16f.out" 2>&1
check [ $? -eq 0 ]
# One rank sends nothing: nothing about hiding is measured or read.
"$ZB" --mode both --steps 6 --warmup 1 --json "$tmp/one.json" >"$tmp/one.out" 2>"$tmp/one.err"
check [ $? -eq 0 ]
check grep -q "^# reading, stage 3: No bytes went between ranks (one rank)" "$tmp/one.out"
check grep -q "hidden not measured; compute slowdown not measured" "$tmp/one.out"
check python3 -c "
import json, sys
for r in json.load(open('$tmp/one.json'))['runs']:
    m = r['metrics']
    bad = [k for k in ('overlap_pct', 'exposed_comm_ms', 'exposed_wait_ms', 'exposed_transfer_ms', 'hidden_pct',
                       'compute_slowdown_pct') if m.get(k) is not None]
    assert m['comm_bytes_per_step'] == 0 and not bad, (r['mode'], bad)
    assert 'hid ' not in r['reading'], r['reading']
"
python3 - "$tmp" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
from zbcheck import check, finish
both = json.load(open(f"{d}/both.json"))["runs"]
check([r["mode"] for r in both] == ["sync", "prefetch"], "one run per schedule")
keys = ("step_time_ms", "tokens_per_s", "mfu_pct", "overlap_pct", "exposed_comm_ms", "compute_ms", "comm_ms",
        "hidden_pct", "compute_slowdown_pct", "peak_mem_bytes", "comm_bytes_per_step", "loss")
for r in both:
    m = r["metrics"]
    check(all(k in m for k in keys), f"metrics keys in {r['mode']}")
    check(r["bench"] == "step" and r["stage"] == 3 and r["ranks"] == 2, "run identity")
    check(m["comm_bytes_per_step"] == m["comm_bytes_formula"], f"comm bytes = formula ({r['mode']})")
    check(m["peak_mem_by_tag_bytes"]["param_shard"] == m["ledger_by_tag_bytes"]["param_shard"], "param ledger")
    check(m["step_time_ms"] > 0 and m["tokens_per_s"] > 0 and m["mfu_pct"] > 0, "positive times")
# cpu stages nothing: the host-staging tag is 0 in the peaks and the ledger,
# and the tables print no host staging line or column.
check(all(r["metrics"]["peak_mem_by_tag_bytes"]["host_staging"] == 0 == r["metrics"]["ledger_by_tag_bytes"]["host_staging"]
          for r in both), "cpu: host_staging is 0")
out = open(f"{d}/both.out").read()
check("host staging" not in out and "host_staging" not in out, "cpu: no host staging line or column")
sync, pre = both[0]["metrics"], both[1]["metrics"]
check(sync["overlap_pct"] == 0.0, f"sync overlap is {sync['overlap_pct']}")
# Interleaved: sync ran steps 0, 3, 4, 7, ..., prefetch 1, 2, 5, 6, ...: the
# losses are of different steps (the engine test compares the bits).
pa = pre.get("paired") or {}
check(pa.get("pairs") == 6 and pa.get("order") == "ABBA", f"paired: 6 pairs, ABBA: {pa}")
check(pa.get("ci_level") is not None and 0.95 <= pa["ci_level"] < 1, f"ci_level: {pa.get('ci_level')}")
for k in ("step_diff", "hidden", "compute_slowdown"):
    unit = "ms" if k == "step_diff" else "pct"
    lo, hi, med = pa.get(f"{k}_lo_{unit}"), pa.get(f"{k}_hi_{unit}"), pa.get(f"{k}_{unit}")
    if k == "hidden" and med is None:
        continue  # no exposed comm measured in sync: nothing to pair
    check(lo is not None and hi is not None and lo <= med <= hi, f"{k}: {lo} <= {med} <= {hi}")
    if lo is not None and hi is not None:
        check(pa[f"{k}_significant"] == (lo > 0 or hi < 0), f"{k}: verdict agrees with [{lo}, {hi}]")
check(abs(pre["compute_slowdown_pct"] - pa["compute_slowdown_pct"]) < 1e-9, "slowdown column = paired median")
check("paired" not in sync, "sync's run has no paired block")
check(isinstance(pre["hidden_pct"], float) and pre["hidden_pct"] == pre["hidden_pct"],
      "hidden_pct a number (not clamped to 0-100: the paired median as it is)")
check(sync["hidden_pct"] is None, "no hidden_pct for sync")
check(pre["peak_mem_bytes"] > sync["peak_mem_bytes"], "prefetch keeps extra gathered buffers")
runs = json.load(open(f"{d}/all.json"))["runs"]
check([(r["stage"], r["mode"]) for r in runs] == [(s, m) for s in range(4) for m in ("sync", "prefetch")], "8 runs")
by = {(r["stage"], r["mode"]): r["metrics"] for r in runs}
check(by[(0, "sync")]["comm_bytes_per_step"] < by[(3, "sync")]["comm_bytes_per_step"], "DDP sends less than ZeRO-3")
check(by[(3, "sync")]["peak_mem_by_tag_bytes"]["param_shard"] * 2 == by[(0, "sync")]["peak_mem_by_tag_bytes"]["param_shard"], "stage 3 halves params on 2 ranks")
check(all(r["recompute"] == "full" and r["metrics"]["hfu_pct"] > r["metrics"]["mfu_pct"] for r in runs), "HFU > MFU with recompute")
# bf16 params and gradients (p = g = 2): half the bytes of the float run, the
# ledger still exact, sync and prefetch still identical.
bf = json.load(open(f"{d}/bf16.json"))["runs"]
check([(r["param_dtype"], r["grad_reduce_dtype"]) for r in bf] == [("bf16", "bf16")] * 2, "bf16 dtype fields")
check(all((r["param_dtype"], r["grad_reduce_dtype"], r["act_dtype"]) == ("float", "float", "float") for r in both), "float dtype fields")
check(all(r["act_dtype"] == "bf16" for r in bf), "bf16 activations by default with bf16 params")
for r in bf:
    m = r["metrics"]
    check(m["comm_bytes_per_step"] == m["comm_bytes_formula"], f"bf16 comm bytes = formula ({r['mode']})")
    check(m["peak_mem_by_tag_bytes"] == m["ledger_by_tag_bytes"], f"bf16 peaks = ledger ({r['mode']})")
    check(2 * m["comm_bytes_per_step"] == both[0]["metrics"]["comm_bytes_per_step"], "bf16 sends half of float")
bff = json.load(open(f"{d}/bf16f.json"))["runs"][0]
check(bff["act_dtype"] == "float" and bff["param_dtype"] == "bf16", "bf16 params, float activations")
# Same params and data at step 0 (sync ran it in both); only the activations'
# rounding differs: close, never equal.
rel = abs(bf[0]["metrics"]["loss_first"] - bff["metrics"]["loss_first"]) / bff["metrics"]["loss_first"]
check(0 < rel < 2e-3, f"bf16 activations: first loss {bf[0]['metrics']['loss_first']} vs float {bff['metrics']['loss_first']}")
mf = bff["metrics"]
check(mf["peak_mem_by_tag_bytes"] == mf["ledger_by_tag_bytes"], "bf16 params + float acts: peaks = ledger")
check(mf["peak_mem_by_tag_bytes"]["activation"] > bf[0]["metrics"]["peak_mem_by_tag_bytes"]["activation"],
      "float activations take more memory than bf16")
finish()
PY

expect_exit() { # code, pattern, args...
  local code=$1 pattern=$2; shift 2
  run "$@" >"$tmp/bad.out" 2>"$tmp/bad.err"
  local rc=$?
  if [ $rc -ne "$code" ] || ! grep -q -- "$pattern" "$tmp/bad.err"; then
    echo "FAIL: '$*' exited $rc (want $code), stderr:"; cat "$tmp/bad.err"; fail=1
  fi
}
expect_exit 2 "heads" --heads 5 --kv-heads 2 --steps 1
expect_exit 2 "head_dim" --head-dim 7 --steps 1
expect_exit 2 "needs" --model llama3_405b --steps 1
expect_exit 2 "--batch" --batch 0
expect_exit 2 "--stage" --stage 4
expect_exit 2 "--param-dtype" --param-dtype fp16
expect_exit 2 "--grad-reduce-dtype" --grad-reduce-dtype half
expect_exit 2 "--act-dtype" --act-dtype half
expect_exit 2 "--act-dtype bf16 needs --param-dtype bf16" --param-dtype float --act-dtype bf16 --steps 1
expect_exit 1 "loss is .* at step" --lr 1e30 --steps 5 --warmup 0
[ $fail -eq 0 ] && echo "test_step: passed" || exit 1
