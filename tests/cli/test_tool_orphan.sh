#!/usr/bin/env bash
# A tool's child runs die with it (issue 24: a killed zerobench takes its
# children with it): calibrate runs zerobench itself as children
# (tools/tool_run.c, each in its own process group, so a kill of the
# tool's group does not reach them); killed by SIGKILL, which no cleanup
# handler sees, or SIGTERM, while a child sweep runs, the tool must leave
# no child zerobench behind.
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for sig in KILL TERM; do
  # A GEMM sweep long enough to be caught running (the child's -n is --iters).
  "$ZB" calibrate -o "$tmp/p_$sig.json" --backend cpu --gemm-min 512 --gemm-max 1024 --iters 2000 \
    >"$tmp/$sig.out" 2>&1 &
  tool=$!
  child=""
  for _ in $(seq 200); do
    child=$(pgrep -P "$tool" | head -1)
    [ -n "$child" ] && break
    sleep 0.05
  done
  check test -n "$child"
  kill -s "$sig" "$tool"
  wait "$tool" 2>/dev/null
  [ -n "$child" ] && check gone "$child"
  [ -n "$child" ] && kill -KILL "$child" 2>/dev/null # what the test started, should it have stayed
  check test ! -e "$tmp/p_$sig.json"
done

[ $fail -eq 0 ] && echo "test_tool_orphan: $passed checks passed"
exit $fail
