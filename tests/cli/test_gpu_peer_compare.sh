#!/usr/bin/env bash
# ci/gpu-check's side-by-side with PyTorch (ci/gpu-peer-compare.py) on
# canned JSON, since it runs only on a lent GPU: the ratios are computed
# from the inputs (GEMM TFLOP/s, attention per call from the trace's sync
# ops with each op's kernels summed, the peer's MFU from zerobench's own
# FLOPs per token and peak), a missed target is said, not failed, and a
# missing or mismatched input exits 1 with one line.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=../lib.sh
source tests/lib.sh
D=$(mktemp -d "${TMPDIR:-/tmp}/zb_peer_cmp.XXXXXX")
trap 'rm -rf "$D"' EXIT
cmp() { python3 ci/gpu-peer-compare.py "$@" 2>&1; }
has() { # NEEDLE TEXT
    if [[ "$2" == *"$1"* ]]; then passed=$((passed + 1)); else echo "FAIL: '$1' not in '$2'"; fail=1; fi
}

# ---- gemm: 500/520 = 0.962 (missed), 790/800 = 0.988 -----------------------------
cat >"$D/zb_gemm.json" <<'EOF'
{"runs": [{"bench": "gemm", "shape": "4096x4096x4096", "metrics": {"tflops": 500.0}},
          {"bench": "gemm", "shape": "8192x8192x8192", "metrics": {"tflops": 790.0}}]}
EOF
cat >"$D/peer_gemm.json" <<'EOF'
{"rows": [{"shape": "4096x4096x4096", "tflops": 520.0}, {"shape": "8192x8192x8192", "tflops": 800.0},
          {"shape": "1024x1024x1024", "tflops": 300.0}]}
EOF
out=$(cmp gemm "$D/zb_gemm.json" "$D/peer_gemm.json")
check test $? -eq 0
has "4096 500/520 (0.962)" "$out"
has "8192 790/800 (0.988)" "$out"
has "lowest ratio 0.962, target >= 0.97 NOT met" "$out"
echo '{"rows": [{"shape": "2x2x2", "tflops": 1}]}' >"$D/peer_other.json"
out=$(cmp gemm "$D/zb_gemm.json" "$D/peer_other.json")
check test $? -eq 1
has "no shape in both" "$out"

# ---- attention: B1 H2 T4 D8: full fwd = 4*1*2*16*8 = 1024 FLOPs -------------------
# sync fwd calls: unit 0 step 2 (two kernels 3 + 1 us), unit 1 step 2 (5 us),
# unit 0 step 3 (6 us): median 5 us; prefetch records (100 us) are left out.
python3 - "$D/trace.json" <<'PY'
import json, sys
ev = []
def op(name, mode, step, unit, dur, flops):
    ev.append({"ph": "X", "name": name, "dur": dur, "pid": 1, "tid": 1,  # rank 0, stream 0 (ids from 1)
               "args": {"mode": mode, "step": step, "unit": unit, "flops": flops}})
for name, fl in (("fwd.attention", 1024.0), ("bwd.attention", 2048.0)):
    # a call's first record may carry no FLOPs (cuDNN's 4-byte copy)
    op(name, "sync", 2, 0, 1.0, 0.0); op(name, "sync", 2, 0, 3.0, fl)
    op(name, "sync", 2, 1, 5.0, fl); op(name, "sync", 3, 0, 6.0, fl)
    op(name, "prefetch", 2, 0, 100.0, fl)
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY
cat >"$D/peer_attn.json" <<'EOF'
{"shape": {"batch": 1, "heads": 2, "kv_heads": 1, "seq": 4, "head_dim": 8}, "kernel": "flash_fwd",
 "fwd": {"median_ms": 0.01, "tflops_causal": 5.12e-05}, "bwd": {"median_ms": 0.02, "tflops_causal": 6.4e-05}}
EOF
out=$(cmp attention "$D/trace.json" "$D/peer_attn.json")
check test $? -eq 0
has "fwd zerobench 0.005 ms" "$out"       # the median of 4, 5, 6 us
has "zerobench/sdpa speed 2.000" "$out"   # 0.01 ms / 0.005 ms
has "bwd zerobench 0.005 ms" "$out"
has "zerobench/sdpa speed 4.000" "$out"   # 0.02 ms / 0.005 ms
has "sdpa kernel flash_fwd" "$out"
sed 's/"seq": 4/"seq": 8/' "$D/peer_attn.json" >"$D/peer_attn8.json"
out=$(cmp attention "$D/trace.json" "$D/peer_attn8.json")
check test $? -eq 1
has "is not this shape" "$out"

# ---- step: zerobench 1000 tok/s at 40 % MFU; torch 1250 tok/s -> 50 % ------------
cat >"$D/zb_step.json" <<'EOF'
{"runs": [{"bench": "step", "mode": "sync", "param_dtype": "bf16", "flops_convention": "full",
           "shape": {"layers": 2, "seq": 16, "batch": 4},
           "metrics": {"tokens_per_s": 900.0, "mfu_pct": 36.0, "step_time_ms": 71.1, "model_flops_per_token": 1e9}},
          {"bench": "step", "mode": "prefetch", "param_dtype": "bf16", "flops_convention": "full",
           "shape": {"layers": 2, "seq": 16, "batch": 4},
           "metrics": {"tokens_per_s": 1000.0, "mfu_pct": 40.0, "step_time_ms": 64.0, "model_flops_per_token": 1e9}}]}
EOF
echo '{"shape": {"layers": 2, "seq": 16, "batch": 4}, "tokens_per_s": 1250.0, "step_time_ms": 51.2}' \
    >"$D/peer_step.json"
out=$(cmp step "$D/zb_step.json" "$D/peer_step.json")
check test $? -eq 0
has "zerobench prefetch 1000 tokens/s, MFU 40.0%" "$out"
has "torch eager 1250 tokens/s, MFU 50.0%" "$out"
has "zerobench/torch 0.800; target MFU >= torch's NOT met" "$out"
echo '{"shape": {"layers": 3, "seq": 16, "batch": 4}, "tokens_per_s": 1.0, "step_time_ms": 1}' \
    >"$D/peer_step3.json"
out=$(cmp step "$D/zb_step.json" "$D/peer_step3.json")
check test $? -eq 1
has "shapes differ at layers" "$out"
out=$(cmp step "$D/missing.json" "$D/peer_step.json")
check test $? -eq 1

echo "test_gpu_peer_compare: $passed checks passed"
[ "$fail" -eq 0 ]
