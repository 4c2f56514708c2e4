#!/usr/bin/env bash
# Control-plane collectives (topology discovery, meta, the NCCL id broadcast,
# the trace gather; harness/control/mpi_wait.c) that a peer never joins end the
# whole job within --timeout, with one line naming the rank, the op and
# --timeout: never a hang. Each case runs tests/mpi/prog_control_timeout.c
# on 2 ranks with a 1 s timeout; the last runs the zerobench binary ($ZB)
# itself next to a rank that never joins anything, so main's own handling
# (MPI_Abort on a timeout) is what ends the job.
set -u
bin="${ZB_TEST_BIN_DIR:?ZB_TEST_BIN_DIR not set}/prog_control_timeout"
: "${ZB:?set ZB to the path of the zerobench binary}"
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect NAME CODE MESSAGE -- COMMAND...: the job ends by itself with CODE
# (timeout(1) gives up at 60 s: 124 means it hung), and its output has
# MESSAGE on exactly one line.
expect() {
    local name="$1" code="$2" msg="$3"
    shift 4
    local out="$tmp/$name.out" rc
    timeout 60 "$@" >"$out" 2>&1
    rc=$?
    local before=$fail
    check [ "$rc" -eq "$code" ]
    check [ "$rc" -ne 124 ]
    check [ "$(grep -cF -- "$msg" "$out")" -eq 1 ]
    if [ $fail -ne $before ]; then
        echo "--- $name: exit $rc, output:"
        sed 's/^/   | /' "$out" | head -40
    fi
}

for c in topology:1:"agreeing on ZB_NODE_ID" \
         meta:1:"meta: agreeing on memory for the host names" \
         nccl_id:1:"broadcasting the NCCL unique id" \
         trace:0:"gathering the trace record counts" \
         wait:1:"the test's barrier"; do
    name=${c%%:*}
    rest=${c#*:}
    rank=${rest%%:*}
    what=${rest#*:}
    expect "$name" 3 "zerobench: rank $rank: $what did not complete within 1 s (--timeout)" -- \
        mpirun --oversubscribe -np 2 "$bin" "$name"
done

# zerobench itself: rank 0 runs the benchmark, rank 1 only idles, so the
# first collective (comparing the ranks' configurations, config_agree.c)
# times out and main aborts the job.
expect zerobench 1 "zerobench: rank 0: comparing the ranks' configurations did not complete within 1 s (--timeout)" -- \
    mpirun --oversubscribe -np 1 "$ZB" allgather -b 1K -e 1K --timeout 1 : -np 1 "$bin" idle

if [ $fail -ne 0 ]; then
    echo "test_control_timeout: FAILED"
    exit 1
fi
echo "test_control_timeout: $passed passed, 0 failed"
