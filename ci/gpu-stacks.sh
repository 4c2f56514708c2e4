#!/usr/bin/env bash
# ci/gpu-stacks.sh PID: what every zerobench or test process under PID (PID
# included) is doing, for ci/gpu-check when a step is about to run out of
# its limit: per process its threads' names, states and kernel wait
# channels (/proc), then, where cuda-gdb is on the PATH (the GPU image has
# it, and no gdb), every thread's backtrace. The processes are attached
# one after another, each under a bound (ZB_STACKS_GDB_S, default 25 s), so
# the whole dump costs at most that per process. Writes to stdout.
set -u
root=${1:?usage: gpu-stacks.sh PID}
gdb_s=${ZB_STACKS_GDB_S:-25}

descendants() { # PID: it and all below it
    echo "$1"
    local c
    for c in $(pgrep -P "$1" 2>/dev/null); do descendants "$c"; done
}

for p in $(descendants "$root"); do
    [ -r "/proc/$p/comm" ] || continue
    name=$(cat "/proc/$p/comm" 2>/dev/null)
    case "$name" in zerobench | test_*) ;; *) continue ;; esac
    echo "==== pid $p ($name): $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-200)"
    for t in /proc/"$p"/task/*; do
        printf '  tid %-7s %-16s %s wchan=%s\n' "${t##*/}" "$(cat "$t/comm" 2>/dev/null)" \
            "$(awk '{print $3}' "$t/stat" 2>/dev/null)" "$(cat "$t/wchan" 2>/dev/null)"
    done
    if command -v cuda-gdb >/dev/null 2>&1; then
        timeout -k 5 "$gdb_s" cuda-gdb -q -nx -batch -p "$p" -ex "set pagination off" \
            -ex "thread apply all bt 25" 2>&1 | grep -E '^(Thread|#)' | cut -c1-220
    fi
done
