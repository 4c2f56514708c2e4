#!/usr/bin/env bash
# Ranks started with different configurations (an MPMD mpirun, `-np 1 A :
# -np 1 B`) end at start-up with exit 2 and one line naming the first rank
# that differs from rank 0 and the flag (or command) it differs in
# (harness/cli/config_agree.c), never with an MPI error or a timeout later;
# an MPMD job whose parts agree runs as before.
set -u
source "$(dirname "$0")/../lib.sh"
: "${ZB:?ZB must name the zerobench binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# differs NAME NEEDLE MPIRUN-ARGS...: exit 2 within 60 s (timeout 124 would
# mean a hang), one zerobench line on stderr, containing NEEDLE, nothing
# of the run on stdout.
differs() {
    local name=$1 needle=$2
    shift 2
    local rc=0
    timeout 60 mpirun "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" </dev/null || rc=$?
    local lines
    lines=$(grep -c '^zerobench: ' "$tmp/$name.err")
    if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q "^zerobench: $needle" "$tmp/$name.err" \
        || grep -q "MPI_ERR" "$tmp/$name.err" || [ -s "$tmp/$name.out" ]; then
        echo "FAIL: $name: exit $rc (want 2), $lines zerobench line(s); want one starting '$needle'"
        show "$tmp/$name.err"
        show "$tmp/$name.out"
        return 1
    fi
}

step=(--model tiny --steps 1 --warmup 0 --stage 3 --mode sync)
check differs model "rank 1 was started with a different configuration from rank 0: --model differs" \
    -np 1 "$ZB" "${step[@]}" : -np 1 "$ZB" "${step[@]}" --model llama3_8b --layers 1
check differs layers "rank 1 .*: --layers differs" \
    -np 1 "$ZB" "${step[@]}" --layers 1 : -np 1 "$ZB" "${step[@]}" --layers 2
# The first rank that differs, of several: rank 2.
check differs iters "rank 2 .*: -n/--iters differs" \
    -np 2 "$ZB" allgather -b 1K -e 1K -n 2 : -np 2 "$ZB" allgather -b 1K -e 1K -n 3
check differs command "rank 1 .*: command gemm, not allgather" \
    -np 1 "$ZB" allgather -b 1K -e 1K : -np 1 "$ZB" gemm
# Flags that decide the layout would otherwise fail in the topology check
# on one rank only.
check differs layout "rank 1 .*: --gpus-per-node differs" \
    -np 1 "$ZB" allgather -b 1K -e 1K --gpus-per-node 2 : -np 1 "$ZB" allgather -b 1K -e 1K

# Parts that agree (the same flags, spelled differently) run as one job.
rc=0
timeout 120 mpirun -np 1 "$ZB" allgather -b 1K -e 4K -n 2 -w 1 : -np 1 "$ZB" allgather --minbytes=1K -e4K \
    --iters 2 -w1 >"$tmp/agree.out" 2>"$tmp/agree.err" </dev/null || rc=$?
if [ "$rc" -ne 0 ] || ! grep -q 'ranks 2 nodes 1' "$tmp/agree.out" || ! grep -q 'Out of bounds values : 0 OK' "$tmp/agree.out"; then
    echo "FAIL: agreeing MPMD parts: exit $rc"
    show "$tmp/agree.err"
    show "$tmp/agree.out"
    fail=1
fi

echo "test_config_agree: $passed passed"
exit $fail
