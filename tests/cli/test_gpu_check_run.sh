#!/usr/bin/env bash
# ci/gpu-check's plumbing without a GPU: run (ci/gpu-run.sh) caps a step's
# limit by the budget and says so, so that a step the budget cut short is
# NOT RUN and one that overran its own limit is FAIL; zerobench's --timeout
# sits inside each limit; and the whole script, with a fake nvidia-smi and
# no budget left, or with no GPU at all, leaves in $OUT only the three files
# that come back (archive, summary, entry), the archive holding the logs.
set -u
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zb_gpu_run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
checks=0
want() { # what condition...
    checks=$((checks + 1))
    local what=$1
    shift
    if ! "$@"; then failures=$((failures + 1)); echo "FAIL: $what"; fi
}

OUT_DIR=$tmp/logs
mkdir -p "$OUT_DIR"
# shellcheck source=../../ci/gpu-verdict.sh
source ci/gpu-verdict.sh
# shellcheck source=../../ci/gpu-run.sh
source ci/gpu-run.sh
RUN_MIN_S=1 RUN_KILL_S=1
SECONDS=0

# The budget (2 s left) is shorter than the step's 60 s: capped, then NOT RUN.
BUDGET_S=2
run slow 60 slow.log sleep 30
[ "$RC" -eq 124 ] && [ "$CAPPED" = 1 ]
want "capped step: RC $RC, CAPPED $CAPPED" [ $? -eq 0 ]
verdict "slow" slow.log >/dev/null
want "capped step reads NOT RUN, not '${results[-1]}'" [ "${results[-1]}" = "NOT RUN" ]
want "the log says the budget's limit" grep -q "budget's limit" "$OUT_DIR/slow.log"
# The step's own limit (1 s) is the shorter: a timeout is the step's FAIL.
BUDGET_S=$((SECONDS + 100))
run own 1 own.log sleep 30
[ "$RC" -eq 124 ] && [ "$CAPPED" = 0 ]
want "own limit: RC $RC, CAPPED $CAPPED" [ $? -eq 0 ]
verdict "own" own.log >/dev/null
want "own timeout reads FAIL, not '${results[-1]}'" [ "${results[-1]}" = FAIL ]
# A command that ignores SIGTERM is killed by timeout's -k.
run stubborn 1 stubborn.log bash -c 'trap "" TERM; sleep 30' 2>/dev/null
want "stubborn step killed: RC $RC" [ "$RC" -eq 137 ]
# Nothing left: not started.
BUDGET_S=$SECONDS
run late 60 late.log true
want "no budget: RC $RC" [ "$RC" -eq 200 ]
# ZB_GPU_CHECK_ONLY: a step it does not match is not started (NOT RUN, not
# selected); one it matches runs; the build always runs.
BUDGET_S=$((SECONDS + 100))
ZB_GPU_CHECK_ONLY='^peer_|^step_np2'
run gemm 60 gemm.log false
want "unselected: RC $RC" [ "$RC" -eq 201 ]
verdict "gemm" gemm.log >/dev/null
want "unselected reads NOT RUN (not selected), not '${results[-1]} ${notes[-1]}'" \
    [ "${results[-1]}" = "NOT RUN" ] && [[ "${notes[-1]}" == *"not selected"* ]]
run step_np2_mpi_float 60 sel.log true
want "selected: RC $RC" [ "$RC" -eq 0 ]
run build 60 build.log true
want "build always runs: RC $RC" [ "$RC" -eq 0 ]
unset ZB_GPU_CHECK_ONLY
# A step still running RUN_STACKS_S before its limit gets its processes'
# threads dumped (ci/gpu-stacks.sh; here a process named like a test);
# one that ends in time gets none and is not held up by the watcher.
RUN_STACKS_S=2
cp "$(command -v sleep)" "$tmp/test_hang"
run hang 5 hang.log "$tmp/test_hang" 30
want "hung step: RC $RC" [ "$RC" -eq 124 ]
want "hung step: its threads dumped" grep -q "^==== pid .* (test_hang)" "$OUT_DIR/hang.stacks.txt"
want "hung step: a thread's state listed" grep -qE "^  tid [0-9]+ +test_hang" "$OUT_DIR/hang.stacks.txt"
want "hung step: the log points to the dump" grep -q "threads in hang.stacks.txt" "$OUT_DIR/hang.log"
t0=$SECONDS
run quick 20 quick.log true
want "quick step: no dump" [ ! -e "$OUT_DIR/quick.stacks.txt" ]
want "quick step: not held by the watcher ($((SECONDS - t0)) s)" [ $((SECONDS - t0)) -lt 10 ]
RUN_STACKS_S=30
[ "$(zb_timeout 120)" -lt 120 ] && [ "$(zb_timeout 40)" -lt 40 ]
want "zerobench's --timeout inside the limit" [ $? -eq 0 ]

# The whole script, with no budget: every step is recorded, nothing runs.
mkdir -p "$tmp/bin"
printf '#!/bin/sh\necho "NVIDIA H200, 580.00, 143771 MiB, Default"\n' >"$tmp/bin/nvidia-smi"
chmod +x "$tmp/bin/nvidia-smi"
PATH="$tmp/bin:$PATH" OUT=$tmp/out1 ZB_GPU_CHECK_SCRATCH=$tmp/scratch1 ZB_GPU_CHECK_BUDGET_S=0 \
    ci/gpu-check >"$tmp/stdout1" 2>&1
rc=$?
want "fake GPU, no budget: exit $rc, not 0" [ "$rc" -eq 0 ]
want "fake GPU: \$OUT holds the three files: $(ls "$tmp/out1" | tr '\n' ' ')" \
    [ "$(ls "$tmp/out1" | tr '\n' ' ')" = "gpu-check-logs.tar.gz gpu-validation-entry.md summary.txt " ]
want "fake GPU: every step recorded" [ "$(grep -c "NOT RUN" "$tmp/out1/summary.txt")" -ge 16 ]
want "fake GPU: the archive holds the logs" \
    bash -c "tar -tzf '$tmp/out1/gpu-check-logs.tar.gz' | grep -q 'scratch1/gpu.txt'"

# No GPU: FAIL, exit 1, the same three files.
printf '#!/bin/sh\nexit 9\n' >"$tmp/bin/nvidia-smi"
PATH="$tmp/bin:$PATH" OUT=$tmp/out2 ZB_GPU_CHECK_SCRATCH=$tmp/scratch2 ci/gpu-check >"$tmp/stdout2" 2>&1
rc=$?
want "no GPU: exit $rc, not 1" [ "$rc" -eq 1 ]
want "no GPU: the summary says so" grep -q "nvidia-smi found no GPU" "$tmp/out2/summary.txt"
want "no GPU: three files in \$OUT" [ "$(ls "$tmp/out2" | wc -l)" -eq 3 ]

# Every gpu-labelled test of this build has a timeout of at most 90 s
# (ctest --timeout would not override a longer one).
if [ -n "${ZB_TEST_BIN_DIR:-}" ]; then
    long=$(cd "$ZB_TEST_BIN_DIR" && ctest -L gpu --show-only=json-v1 | python3 -c '
import json, sys
for t in json.load(sys.stdin)["tests"]:
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    if float(props.get("TIMEOUT", 1e9)) > 90: print(t["name"], props.get("TIMEOUT"))')
    want "gpu tests with a timeout over 90 s: $long" [ -z "$long" ]
fi

echo "test_gpu_check_run: $checks checks, $failures failed"
[ "$failures" -eq 0 ]
