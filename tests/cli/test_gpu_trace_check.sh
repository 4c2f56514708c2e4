#!/usr/bin/env bash
# ci/gpu-check's CUPTI trace check (ci/gpu-trace-check.py) on canned JSON,
# so that the one GPU run a session may get cannot pass with losses: a
# clean traced step passes; any loss of the device tracer (records dropped,
# left without timestamps, inverted, buffer errors), tracer counts that are
# null or absent (no tracer ran), a record the harness's trace buffer
# dropped, a trace without comm records or a run of 2 or more ranks without
# an overlap fails (one rank's overlap is null by design: nothing crosses),
# and through ci/gpu-verdict.sh that is a FAIL whose note names the count.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=../lib.sh
source tests/lib.sh
OUT_DIR=$(mktemp -d "${TMPDIR:-/tmp}/zb_gpu_trace.XXXXXX")
trap 'rm -rf "$OUT_DIR"' EXIT
checks=0

# trace.json: one compute and one comm event (or only compute with "nocomm").
trace() {
    local comm='{"ph": "X", "cat": "comm", "name": "allgather", "ts": 2, "dur": 1},'
    [ "${1:-}" = nocomm ] && comm=''
    printf '{"traceEvents": [%s {"ph": "X", "cat": "compute", "name": "gemm", "ts": 1, "dur": 3}]}\n' \
        "$comm" >"$OUT_DIR/trace.json"
}
# step.json with two step runs; KEY=VALUE arguments (JSON values) replace
# the prefetch run's metrics (ranks= its rank count), KEY=absent removes one.
step() {
    python3 - "$OUT_DIR/step.json" "$@" <<'PY'
import json, sys
def run(mode):
    return {"bench": "step", "mode": mode, "stage": 3, "ranks": 2, "metrics": {
        "overlap_pct": 50.0, "trace_records_dropped": 0, "tracer_records_dropped": 0,
        "tracer_zero_timestamps": 0, "tracer_inverted_records": 0, "tracer_buffer_errors": 0}}
runs = [run("sync"), run("prefetch")]
for kv in sys.argv[2:]:
    k, v = kv.split("=", 1)
    if k == "ranks": runs[1]["ranks"] = json.loads(v)
    elif v == "absent": del runs[1]["metrics"][k]
    else: runs[1]["metrics"][k] = json.loads(v)
json.dump({"schema": "zerobench/1", "meta": {}, "runs": runs}, open(sys.argv[1], "w"))
PY
}
# expect pass|fail NEEDLE: runs the check; its verdict and message must match.
expect() {
    local want=$1 needle=$2 out rc
    out=$(python3 ci/gpu-trace-check.py "$OUT_DIR/trace.json" "$OUT_DIR/step.json" 2>&1)
    rc=$?
    checks=$((checks + 1))
    local got=pass
    [ "$rc" -ne 0 ] && got=fail
    if [ "$got" != "$want" ] || [[ "$out" != *"$needle"* ]]; then
        echo "FAIL: case $checks: got $got (rc $rc: '$out'), want $want with '$needle'"
        fail=1
    else
        passed=$((passed + 1))
    fi
}

trace; step
expect pass "CUPTI losses records_dropped 0, zero_timestamps 0, inverted_records 0, buffer_errors 0"
trace; step tracer_records_dropped=2
expect fail "records_dropped 2"
trace; step tracer_zero_timestamps=5
expect fail "zero_timestamps 5"
trace; step tracer_inverted_records=1
expect fail "inverted_records 1"
trace; step tracer_buffer_errors=1
expect fail "buffer_errors 1"
trace; step tracer_records_dropped=null tracer_zero_timestamps=null tracer_inverted_records=null \
    tracer_buffer_errors=null
expect fail "no tracer counts (tracer_buffer_errors, tracer_inverted_records, tracer_records_dropped"
trace; step tracer_records_dropped=absent
expect fail "no tracer counts (tracer_records_dropped null)"
trace; step trace_records_dropped=3
expect fail "dropped 3"
trace nocomm; step
expect fail "records {'compute': 1}"
trace; step overlap_pct=null
expect fail "None"
trace; step overlap_pct=null ranks=1
expect pass "overlap [50.0, None]%"

# Through ci/gpu-verdict.sh as ci/gpu-check calls it: exit 0 with a tracer
# loss is a FAIL naming it, a clean one a PASS.
BUDGET_S=470
# shellcheck source=../../ci/gpu-verdict.sh
source ci/gpu-verdict.sh >/dev/null
echo "# zerobench step" >"$OUT_DIR/trace.log"
trace_check() { python3 ci/gpu-trace-check.py "$OUT_DIR/trace.json" "$OUT_DIR/step.json"; }
RC=0 DT=1
trace; step tracer_buffer_errors=2
verdict "cupti trace" trace.log trace_check >/dev/null
check test "${results[-1]}" = FAIL
check grep -q "buffer_errors 2" <<<"${notes[-1]}"
trace; step
verdict "cupti trace" trace.log trace_check >/dev/null
check test "${results[-1]}" = PASS

echo "test_gpu_trace_check: $passed checks passed"
[ "$fail" -eq 0 ]
