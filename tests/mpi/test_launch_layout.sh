#!/usr/bin/env bash
# MPI test of the node layout end to end, through the zerobench binary ($ZB):
#   (a) an MPMD job that sets ZB_NODE_ID by hand (2 emulated nodes x 2 ranks)
#       passes --nodes 2 --gpus-per-node 2 and reports 2 nodes;
#   (b) --emulate-nodes outside MPI relaunches zerobench under mpirun, prints
#       the command ("launching: ... ZB_NODE_ID=1 ...") and succeeds;
#   (c) 4 ranks on one real node with --nodes 2 --gpus-per-node 2 exit 2 with
#       a message naming --nodes;
#   (d) a launcher that does not exist (ZB_MPIRUN) fails with a message naming it.
# Every case checks its exit code and output and prints what it saw on failure.
set -u

: "${ZB:?set ZB to the path of the zerobench binary}"
source "$(dirname "$0")/../lib.sh"
MPIRUN="${ZB_TEST_MPIRUN:-mpirun}"
LIMIT_S=300

if [[ ! -x "$ZB" ]]; then
    echo "FAIL: ZB=$ZB is not an executable file" >&2
    exit 1
fi
if ! command -v "$MPIRUN" >/dev/null 2>&1; then
    echo "FAIL: $MPIRUN not found (install openmpi-bin)" >&2
    exit 1
fi

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
failures=0
OUT=""
ERR=""
RC=0

# Runs "$@" with stdout/stderr captured in $TMP/<name>.{out,err}; sets OUT, ERR, RC.
run() {
    local name="$1"
    shift
    OUT="$TMP/$name.out"
    ERR="$TMP/$name.err"
    echo "== $name: $*"
    timeout "$LIMIT_S" "$@" >"$OUT" 2>"$ERR"
    RC=$?
    if [[ $RC -eq 124 ]]; then
        echo "   (timed out after ${LIMIT_S}s)"
    fi
}

# A command prefix that runs outside any MPI job (more env options may follow).
OUTSIDE_MPI=(env -u OMPI_COMM_WORLD_SIZE -u PMIX_RANK -u PMI_RANK -u PMI_SIZE -u ZB_NODE_ID)

show() {
    echo "   --- stdout ($OUT):"
    sed 's/^/   | /' "$OUT" | head -40
    echo "   --- stderr ($ERR):"
    sed 's/^/   | /' "$ERR" | head -40
}

fail() {
    echo "FAIL $*"
    show
    failures=$((failures + 1))
}

expect_rc() {
    local case="$1" want="$2"
    if [[ "$RC" -ne "$want" ]]; then
        fail "$case: exit code $RC, expected $want"
        return 1
    fi
    return 0
}

# expect_grep CASE FILE EXTENDED-REGEX WHAT
expect_grep() {
    local case="$1" file="$2" regex="$3" what="$4"
    if ! grep -Eq -- "$regex" "$file"; then
        fail "$case: $what (no match for /$regex/ in $file)"
        return 1
    fi
    return 0
}

# "nodes 2" as a word of the header ("# ranks 4 nodes 2 ranks-per-node 2"),
# not the echoed flag "--nodes 2".
NODES2='(^|[^-a-z])nodes[ =:]+2([^0-9]|$)'
ARGS=(allgather -b 1K -e 1K -n 2 -w 1 --nodes 2 --gpus-per-node 2)

# (a) two emulated nodes set up by hand: one MPMD app context per node.
run a_mpmd "$MPIRUN" --oversubscribe \
    -np 2 env ZB_NODE_ID=0 "$ZB" "${ARGS[@]}" : \
    -np 2 env ZB_NODE_ID=1 "$ZB" "${ARGS[@]}"
if expect_rc a_mpmd 0; then
    expect_grep a_mpmd "$OUT" "$NODES2" "stdout does not report 2 nodes"
fi

# (b) zerobench relaunches itself with --emulate-nodes.
run b_emulate "${OUTSIDE_MPI[@]}" -u ZB_MPIRUN "$ZB" "${ARGS[@]}" --emulate-nodes
if expect_rc b_emulate 0; then
    expect_grep b_emulate "$ERR" 'launching:' "stderr does not show the launch command"
    expect_grep b_emulate "$ERR" 'ZB_NODE_ID=1' "the launch command does not set ZB_NODE_ID=1"
    expect_grep b_emulate "$OUT" "$NODES2" "stdout does not report 2 nodes"
fi

# (c) 4 ranks on one real node cannot be 2 nodes x 2 ranks: bad input, exit 2.
run c_mismatch "$MPIRUN" --oversubscribe -np 4 "$ZB" "${ARGS[@]}"
if expect_rc c_mismatch 2; then
    cat "$OUT" "$ERR" >"$TMP/c_all.txt"
    expect_grep c_mismatch "$TMP/c_all.txt" '--nodes' "no message naming --nodes"
fi

# (d) a launcher that cannot be executed: non-zero exit, message naming it.
BAD_MPIRUN=/nonexistent/zb-test-mpirun
run d_no_mpirun "${OUTSIDE_MPI[@]}" ZB_MPIRUN="$BAD_MPIRUN" "$ZB" "${ARGS[@]}"
if [[ "$RC" -eq 0 ]]; then
    fail "d_no_mpirun: exit code 0 with ZB_MPIRUN=$BAD_MPIRUN"
else
    cat "$OUT" "$ERR" >"$TMP/d_all.txt"
    expect_grep d_no_mpirun "$TMP/d_all.txt" "$BAD_MPIRUN" "no message naming $BAD_MPIRUN"
    echo "   exit code $RC"
fi

if [[ $failures -ne 0 ]]; then
    echo "test_launch_layout: $failures check(s) failed"
    exit 1
fi
echo "test_launch_layout: all checks passed"
exit 0
