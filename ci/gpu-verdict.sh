# shellcheck shell=bash
# Sourced by ci/gpu-check (and tests/cli/test_gpu_check_verdict.sh): how a
# step's exit status and log become PASS, FAIL or NOT RUN. Needs OUT_DIR
# (where the logs are), RC, DT and CAPPED (the step's exit status, seconds,
# and 1 when the budget shortened its limit; set by ci/gpu-check's run) and
# BUDGET_S.
names=() results=() secs=() notes=()
record() { # name result seconds note
  names+=("$1"); results+=("$2"); secs+=("$3"); notes+=("$4")
  printf '%-34s %-8s %5ss  %s\n' "$1" "$2" "$3" "$4"
  if declare -F on_record >/dev/null; then on_record; fi # ci/gpu-check: refresh what comes back
}

# zerobench's one-line refusal: the first "zerobench: ..." line that is not
# the launcher's own chatter. Only zerobench's prefix counts, so the PMIx
# banner of the carried Open MPI ("... a usable compression library") or any
# other library's text is never quoted instead of it.
refusal() {
  grep -E '^zerobench: ' "$OUT_DIR/$1" | grep -vE '^zerobench: (launching:|running .* again)' |
    head -1 | cut -c1-110
}

# The last lines of a failed step's log on stdout, so that the output tail
# of the run alone says why it failed.
fail_tail() { # log
  [ -f "$OUT_DIR/$1" ] || return 0
  echo "---- last 15 lines of $1 ----"
  tail -n 15 "$OUT_DIR/$1"
  echo "---- end of $1 ----"
}

fail() { # name seconds note log
  record "$1" FAIL "$2" "$3"
  fail_tail "$4"
}

# verdict NAME LOG [extra check command...]: PASS when RC is 0 (and the
# extra check passes); NOT RUN only when the time budget was spent before
# the step started (RC 200) or when the budget shortened the step's limit
# and the step then ran out of it (RC 124, or 137 after timeout's -k, with
# CAPPED=1); FAIL otherwise. An exit 2 (zerobench refused the run as bad
# input) is a FAIL too: on a GPU machine ci/gpu-check asks only for runs
# zerobench must be able to do, so a refusal is a defect; its note says
# whether zerobench found no usable GPU although nvidia-smi (step 0) saw
# one (a driver or runtime mismatch) or refused something else.
verdict() {
  local name=$1 log=$2
  shift 2
  if [ "$RC" -eq 200 ]; then record "$name" "NOT RUN" 0 "time budget of ${BUDGET_S}s spent"; return; fi
  if [ "$RC" -eq 201 ]; then record "$name" "NOT RUN" 0 "not selected (ZB_GPU_CHECK_ONLY)"; return; fi
  if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then
    if [ "${CAPPED:-0}" = 1 ]; then
      record "$name" "NOT RUN" "$DT" "cut short by the time budget of ${BUDGET_S}s (log: $log)"
    else
      fail "$name" "$DT" "timed out (log: $log)" "$log"
    fi
    return
  fi
  if [ "$RC" -eq 2 ]; then
    if grep -qiE 'no usable GPU' "$OUT_DIR/$log"; then
      fail "$name" "$DT" "no usable GPU although nvidia-smi saw one: $(refusal "$log")" "$log"
    else
      fail "$name" "$DT" "refused as bad input (exit 2): $(refusal "$log")" "$log"
    fi
    return
  fi
  if [ "$RC" -ne 0 ]; then fail "$name" "$DT" "exit $RC (log: $log)" "$log"; return; fi
  if [ $# -gt 0 ]; then
    local note
    if note=$("$@" 2>&1); then record "$name" PASS "$DT" "$note"; else fail "$name" "$DT" "$note" "$log"; fi
    return
  fi
  record "$name" PASS "$DT" ""
}
