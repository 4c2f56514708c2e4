# Helpers shared by the shell tests (tests/cli/*.sh, tests/mpi/*.sh), which
# source it: source "$(dirname "$0")/../lib.sh".
#   check CMD...   runs CMD; counts it in $passed, or prints "FAIL: CMD" and
#                  sets fail=1 (the test keeps going and exits 1 at the end)
#   show FILE      prints FILE indented, at most 40 lines (after a failure)
#   expect2 NAME WANT CMD...
#                  runs CMD (stdout NAME.out, stderr NAME.err) under a 60 s
#                  timeout(1) and checks what bad input gets: exit 2 (124
#                  would mean it hung) and one line on stderr holding WANT
#   expect_rc WANT NAME CMD...
#                  runs CMD (stdout NAME.out, stderr NAME.err) and checks its
#                  exit status is WANT, showing both files when not
#   gone PID       true once PID has exited (or is a zombie), polling up to 10 s
# (a test with its own fail/show, as test_launch_layout.sh, defines them
# after sourcing this)
#   PYTHONPATH     gets tests/, so an embedded Python check can say
#                  `from zbcheck import check, finish` (tests/zbcheck.py)
# A test that must not hang runs its command under timeout(1) and checks the
# exit status (124: it had to be killed); none checks how long anything took.
# Run outside CTest too: Open MPI as root (these machines), 4 ranks on 2 cores.
export OMPI_ALLOW_RUN_AS_ROOT="${OMPI_ALLOW_RUN_AS_ROOT:-1}"
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}"
export OMPI_MCA_rmaps_base_oversubscribe="${OMPI_MCA_rmaps_base_oversubscribe:-1}"
# Outside CTest too, no test reads or writes the user's peak cache.
export ZB_PEAK_CACHE="${ZB_PEAK_CACHE:-off}"
ZB_TESTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export PYTHONPATH="$ZB_TESTS_DIR${PYTHONPATH:+:$PYTHONPATH}"
fail=0
passed=0
check() { if "$@"; then passed=$((passed + 1)); else echo "FAIL: $*"; fail=1; fi; }
show() { echo "--- $1:"; sed 's/^/   | /' "$1" | head -40; }
expect2() {
  local name=$1 want=$2 rc; shift 2
  timeout 60 "$@" >"$name.out" 2>"$name.err"
  rc=$?
  check test $rc -eq 2
  [ $rc -eq 2 ] || echo "  ($name: exit $rc)"
  check test "$(wc -l <"$name.err")" -eq 1
  check grep -qF -- "$want" "$name.err"
  [ "$(wc -l <"$name.err")" -eq 1 ] && grep -qF -- "$want" "$name.err" || show "$name.err"
}
expect_rc() {
  local want=$1 name=$2 rc; shift 2
  "$@" >"$name.out" 2>"$name.err"
  rc=$?
  if [ $rc -ne "$want" ]; then
    echo "FAIL: $* exited $rc, expected $want"
    show "$name.out"
    show "$name.err"
    fail=1
  else
    passed=$((passed + 1))
  fi
}
# gone PID: true once PID has exited (a zombie, reaped by init later, runs
# nothing), polling for at most 10 s.
gone() {
  for _ in $(seq 100); do
    local state
    state=$(ps -o stat= -p "$1" 2>/dev/null) || return 0
    case "$state" in Z*) return 0 ;; esac
    sleep 0.1
  done
  return 1
}
