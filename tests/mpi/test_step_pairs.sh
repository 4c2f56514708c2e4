#!/usr/bin/env bash
# --mode both's adaptive pairs (bench/step_pairs.c, zb_paired_stop): --steps
# alone runs exactly that many pairs ("fixed"); with --precision the pairs go
# on until the step-time interval is within +-P % of sync's step
# ("precision"), or --max-steps pairs ("max-steps"), or --max-time seconds of
# measured steps ("max-time"), and the JSON and the reading say which ended
# them. The sim (no noise: a zero-width interval) stops at --steps on
# precision. --max-steps below --steps is bad input (exit 2, one line).
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { mpirun --oversubscribe -np 2 "$ZB" --model tiny --mode both --warmup 1 "$@"; }
# pairs FILE: "<pairs> <stopped_by> <precision_pct>" of the prefetch run
pairs() {
    python3 -c 'import json,sys
r=[x for x in json.load(open(sys.argv[1]))["runs"] if x["mode"]=="prefetch"][0]["metrics"]["paired"]
print(r["pairs"], r["stopped_by"], r["precision_pct"])' "$1"
}

run --steps 7 --json "$tmp/fixed.json" >"$tmp/fixed.out" 2>&1
check [ $? -eq 0 ]
check [ "$(pairs "$tmp/fixed.json")" = "7 fixed 0.0" ]
check grep -q "7 pairs of steps on one state (ABBA order; as many as --steps)" "$tmp/fixed.out"

# A precision no real run reaches: the pair budget ends it.
run --steps 6 --precision 0.0001 --max-steps 9 --json "$tmp/cap.json" >"$tmp/cap.out" 2>&1
check [ $? -eq 0 ]
check [ "$(pairs "$tmp/cap.json")" = "9 max-steps 0.0001" ]
check grep -q "9 pairs of steps on one state (ABBA order; stopped by --max-steps before +-0.0001 % was reached)" \
    "$tmp/cap.out"

# ... or the time budget, checked after each pair once --steps ran.
run --steps 6 --precision 0.0001 --max-steps 1000 --max-time 0.000001 --json "$tmp/time.json" >"$tmp/time.out" 2>&1
check [ $? -eq 0 ]
check [ "$(pairs "$tmp/time.json")" = "6 max-time 0.0001" ]

# The sim's steps are identical: the interval has no width, precision is met at --steps.
timeout 120 "$ZB" step --backend sim --hw h100_sxm --model tiny --mode both --steps 6 --warmup 1 --precision 1 \
    --json "$tmp/sim.json" >"$tmp/sim.out" 2>&1
check [ $? -eq 0 ]
check [ "$(pairs "$tmp/sim.json")" = "6 precision 1.0" ]

expect2 "$tmp/bad" "--max-steps 3: expected at least --steps (5)" "$ZB" --model tiny --mode both --steps 5 --max-steps 3
expect2 "$tmp/badp" "--precision" "$ZB" --model tiny --mode both --precision 101
[ $fail -eq 0 ] && echo "test_step_pairs: $passed checks passed" || exit 1
