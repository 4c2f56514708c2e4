# shellcheck shell=bash
# Sourced by ci/gpu-check (and tests/cli/test_gpu_check_run.sh): how a step
# runs within the time budget. Needs OUT_DIR (the scratch folder of logs),
# BUDGET_S and bash's SECONDS (zeroed when the check started).
RUN_MIN_S=${RUN_MIN_S:-20} # a step is not started with less than this left
RUN_KILL_S=${RUN_KILL_S:-10} # SIGKILL this long after timeout's SIGTERM
RUN_STACKS_S=${RUN_STACKS_S:-30} # a step still running this long before its limit gets its stacks dumped

# run NAME LIMIT LOG cmd...: runs cmd under `timeout -k`, its limit LIMIT
# seconds or what is left of the budget when that is less; output in
# $OUT_DIR/LOG. Sets RC, DT, and CAPPED (1 when the budget shortened the
# limit: a timeout then is the budget's, not the step's). RC 200 means "not
# started: budget spent"; RC 201 "not selected": ZB_GPU_CHECK_ONLY, when
# set, is a regular expression that NAME must match (a rerun of some steps;
# the build always runs). A step still running RUN_STACKS_S before its
# limit (limits of at least twice that) gets ci/gpu-stacks.sh's dump of its
# processes' threads in $OUT_DIR/NAME.stacks.txt, so a hang says where.
run() {
  local name=$1 limit=$2 log=$3
  shift 3
  local left=$((BUDGET_S - SECONDS))
  CAPPED=0
  if [ -n "${ZB_GPU_CHECK_ONLY:-}" ] && [ "$name" != build ] && ! [[ $name =~ $ZB_GPU_CHECK_ONLY ]]; then
    RC=201; DT=0; return
  fi
  if [ "$left" -lt "$RUN_MIN_S" ]; then RC=200; DT=0; return; fi
  if [ "$limit" -gt "$left" ]; then limit=$left; CAPPED=1; fi
  local t0=$SECONDS
  echo "\$ $*" >"$OUT_DIR/$log"
  timeout -k "$RUN_KILL_S" "$limit" "$@" >>"$OUT_DIR/$log" 2>&1 &
  local pid=$! watcher=""
  if [ "$limit" -ge $((2 * RUN_STACKS_S)) ]; then
    (sleep $((limit - RUN_STACKS_S)) && kill -0 "$pid" 2>/dev/null &&
      "$(dirname "${BASH_SOURCE[0]}")/gpu-stacks.sh" "$pid" >"$OUT_DIR/$name.stacks.txt" 2>&1 &&
      echo "ci/gpu-check: $name still ran ${RUN_STACKS_S}s before its limit: threads in $name.stacks.txt" \
        >>"$OUT_DIR/$log") 2>/dev/null & # (its shell's "Terminated" when its sleep is ended)
    watcher=$!
  fi
  wait "$pid"
  RC=$?
  if [ -n "$watcher" ]; then
    # a dump under way finishes (each attach is bounded); a watcher still asleep goes
    pkill -P "$watcher" sleep 2>/dev/null
    wait "$watcher" 2>/dev/null
  fi
  DT=$((SECONDS - t0))
  if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then
    echo "ci/gpu-check: $name timed out after ${limit}s$([ "$CAPPED" = 1 ] && echo " (the budget's limit)")" >>"$OUT_DIR/$log"
  fi
  return 0
}

# zb_timeout LIMIT: zerobench's --timeout for a step of that limit, well
# inside it, so a stuck wait ends with zerobench's message naming the
# collective or stream before the step is killed from outside.
zb_timeout() { local t=$(($1 / 2)); [ "$t" -lt 15 ] && t=15; echo "$t"; }
