#!/usr/bin/env bash
# A collective that one rank never joins ends the whole job within the
# timeout, with a message naming the rank, the op and the unit: never a hang
# (timeout(1) kills a hung job at 60 s: exit 124, not MPI_Abort's 3).
set -u
source "$(dirname "$0")/../lib.sh"
bin="${ZB_TEST_BIN_DIR:?ZB_TEST_BIN_DIR not set}/prog_comm_timeout"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# Every collective's path (all-gather: point-to-point; reduce-scatter: the
# ring of point-to-point steps; all-reduce: Open MPI's ring), each ends the job.
for kind in allgather reducescatter allreduce; do
  timeout 60 mpirun --oversubscribe -np 2 "$bin" "$kind" >"$out" 2>&1
  rc=$?
  check [ "$rc" -eq 3 ]            # the code rank 0 passed to MPI_Abort
  check [ "$rc" -ne 124 ]           # 124: timeout(1) had to kill it, i.e. it hung
  check grep -q "rank 0: $kind 'layer7.$kind' (unit 7) did not complete within 1 s" "$out"
  if [ $fail -ne 0 ]; then echo "--- $kind: exit $rc, output:"; cat "$out"; exit 1; fi
done
echo "test_comm_timeout: every job ended with exit 3: $passed passed, 0 failed"
