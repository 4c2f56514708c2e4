# Sourced by ci/gpu-check (and tests/cli/test_gpu_check_verdict.sh): how a
# step's exit status and log become PASS, FAIL or NOT RUN. Needs OUT_DIR
# (where the logs are), RC and DT (the step's exit status and seconds, set
# by ci/gpu-check's run) and BUDGET_S.
names=() results=() secs=() notes=()
record() { # name result seconds note
  names+=("$1"); results+=("$2"); secs+=("$3"); notes+=("$4")
  printf '%-34s %-8s %5ss  %s\n' "$1" "$2" "$3" "$4"
}

# The first line of a log that reads like zerobench's one-line refusal.
refusal() { grep -m1 -iE 'accepted|cannot|not (yet )?(supported|available)|needs|usable' "$OUT_DIR/$1" | cut -c1-110; }

# verdict NAME LOG [extra check command...]: PASS when RC is 0 (and the
# extra check passes); NOT RUN only when the time budget was spent; FAIL
# otherwise. An exit 2 (zerobench refused the run as bad input) is a FAIL
# too: on a GPU machine ci/gpu-check asks only for runs zerobench must be
# able to do, so a refusal is a defect; its note says whether zerobench
# found no usable GPU although nvidia-smi (step 0) saw one (a driver or
# runtime mismatch) or refused something else.
verdict() {
  local name=$1 log=$2
  shift 2
  if [ "$RC" -eq 200 ]; then record "$name" "NOT RUN" 0 "time budget of ${BUDGET_S}s spent"; return; fi
  if [ "$RC" -eq 124 ]; then record "$name" FAIL "$DT" "timed out (log: $log)"; return; fi
  if [ "$RC" -eq 2 ]; then
    if grep -qiE 'no usable GPU' "$OUT_DIR/$log"; then
      record "$name" FAIL "$DT" "no usable GPU although nvidia-smi saw one: $(refusal "$log")"
    else
      record "$name" FAIL "$DT" "refused as bad input (exit 2): $(refusal "$log")"
    fi
    return
  fi
  if [ "$RC" -ne 0 ]; then record "$name" FAIL "$DT" "exit $RC (log: $log)"; return; fi
  if [ $# -gt 0 ]; then
    local note
    if note=$("$@" 2>&1); then record "$name" PASS "$DT" "$note"; else record "$name" FAIL "$DT" "$note"; fi
    return
  fi
  record "$name" PASS "$DT" ""
}

