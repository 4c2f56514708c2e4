#!/usr/bin/env bash
# ci/gpu-check's verdict logic (ci/gpu-verdict.sh) on canned logs, so that
# the one GPU run a session may get cannot be misread: exit 0 is PASS (or
# FAIL when the step's own check fails), a spent time budget is NOT RUN, a
# timeout or any other exit is FAIL, but a timeout of a step whose limit
# the budget shortened is NOT RUN; exit 2 (zerobench refused the run as bad
# input) is FAIL too, with or without "no usable GPU" in the log, and the
# refusal quoted is zerobench's line, never the PMIx banner around it; a
# FAIL prints the last lines of the step's log.
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT_DIR=$(mktemp -d "${TMPDIR:-/tmp}/zb_gpu_verdict.XXXXXX")
trap 'rm -rf "$OUT_DIR"' EXIT
BUDGET_S=470
# shellcheck source=../../ci/gpu-verdict.sh
source ci/gpu-verdict.sh >/dev/null
failures=0
checks=0

# expect RESULT NOTE_NEEDLE RC LOG_TEXT [extra check...]; CAPPED from the caller.
expect() {
    local want=$1 needle=$2
    RC=$3 DT=4
    printf '%s\n' "$4" >"$OUT_DIR/step.log"
    shift 4
    verdict "case $checks" step.log "$@" >"$OUT_DIR/stdout"
    checks=$((checks + 1))
    local got=${results[-1]} note=${notes[-1]}
    if [ "$got" != "$want" ] || [[ "$note" != *"$needle"* ]]; then
        failures=$((failures + 1))
        echo "FAIL: rc $RC: got '$got' ('$note'), want '$want' with '$needle'"
    fi
}
passes() { echo "all good"; }
fails() { echo "loss differs"; return 1; }

CAPPED=0
expect PASS "" 0 "# zerobench step"
expect PASS "all good" 0 "# zerobench step" passes
expect FAIL "loss differs" 0 "# zerobench step" fails
expect "NOT RUN" "time budget" 200 ""
expect FAIL "timed out" 124 "ci/gpu-check: timed out after 120s"
expect FAIL "exit 1" 1 "zerobench: rank 0: cuda kernels: attention_fwd launch failed"
expect FAIL "refused as bad input (exit 2): zerobench: --comm mpi" 2 \
    "zerobench: --comm mpi on --backend cuda: this device cannot run MPI in stream order"
expect FAIL "no usable GPU although nvidia-smi saw one" 2 \
    "zerobench: --backend cuda: no usable GPU or driver was found (cudaGetDeviceCount: ...)"
# The budget shortened the limit and the step ran out of it: not the step's fault.
CAPPED=1
expect "NOT RUN" "cut short by the time budget" 124 "ci/gpu-check: timed out after 31s (budget)"
expect "NOT RUN" "cut short by the time budget" 137 ""
expect FAIL "exit 1" 1 "zerobench: rank 0: step failed"
CAPPED=0
expect FAIL "timed out" 137 ""

# The PMIx banner of the carried Open MPI comes before zerobench's refusal.
pmix="--------------------------------------------------------------------------
PMIx was unable to find a usable compression library
on the system. We will therefore be unable to compress
--------------------------------------------------------------------------"
expect FAIL "refused as bad input (exit 2): zerobench: --dim 7" 2 \
    "$pmix
zerobench: launching: mpirun -np 2 zerobench step
zerobench: --dim 7: needs a multiple of --heads"
# A FAIL shows the end of its log on stdout; a PASS shows none.
checks=$((checks + 1))
RC=1 DT=1
printf 'line %s\n' $(seq 1 40) >"$OUT_DIR/long.log"
verdict "tail" long.log >"$OUT_DIR/stdout"
if ! grep -q "^line 40$" "$OUT_DIR/stdout" || ! grep -q "^line 26$" "$OUT_DIR/stdout" ||
   grep -q "^line 25$" "$OUT_DIR/stdout"; then
    failures=$((failures + 1))
    echo "FAIL: a failed step's stdout lacks its log's last 15 lines: $(cat "$OUT_DIR/stdout")"
fi
checks=$((checks + 1))
RC=0
verdict "no tail" long.log >"$OUT_DIR/stdout"
if grep -q "^line" "$OUT_DIR/stdout"; then
    failures=$((failures + 1))
    echo "FAIL: a passing step printed its log"
fi

# An exit 2 is never excused: no case above may read NOT RUN but the budget.
for i in "${!results[@]}"; do
    checks=$((checks + 1))
    if [ "${results[$i]}" = "NOT RUN" ] && [[ "${notes[$i]}" != *"time budget"* ]]; then
        failures=$((failures + 1))
        echo "FAIL: case $i is NOT RUN: ${notes[$i]}"
    fi
done

echo "test_gpu_check_verdict: $checks checks, $failures failed"
[ "$failures" -eq 0 ]
