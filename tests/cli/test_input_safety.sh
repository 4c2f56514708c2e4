#!/usr/bin/env bash
# Hostile input files (issue: safe on hostile inputs): a FIFO, a folder or
# an oversized file given as a results file (compare, plot) or a profile
# (--hw) is refused with exit 2 and one line, without blocking (a FIFO with
# no writer would hang a plain open); a value with control characters or a
# terminal escape is shown escaped in the one-line message, never raw.
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

check "$ZB" gemm --shape 32x32x32 -n 1 -w 0 --json good.json
mkfifo fifo
mkdir folder
expect2 cmpfifo "'fifo': not a regular file (a FIFO)" "$ZB" compare fifo good.json
expect2 cmpdir "'folder': a folder with no *.json results file (NEW: a file or a folder of them)" "$ZB" compare good.json -- folder
expect2 plotfifo "'fifo': not a regular file (a FIFO)" "$ZB" plot fifo -o figs
check test ! -e figs
expect2 hwfifo "'./fifo': not a regular file (a FIFO)" "$ZB" gemm --shape 32x32x32 -n 1 -w 0 --hw ./fifo
# A profile over its 1 MiB bound is refused before it is read.
truncate -s 2M big.json
expect2 hwbig "more than the" "$ZB" plan --hw big.json

# Control characters and a terminal escape in a value: escaped, one line.
expect2 esc "'c\\x1b[31mpu'" "$ZB" gemm --backend "$(printf 'c\033[31mpu')"
check test -z "$(tr -d '\n' <esc.err | tr -d '[:print:]')" || show esc.err
expect2 nl "'a\\nb.json'" "$ZB" compare "$(printf 'a\nb.json')" good.json
# Bytes that are not UTF-8 come out as \xHH.
expect2 utf "'\\xff.json'" "$ZB" compare "$(printf '\377.json')" good.json

# A run's identity value with a newline and a terminal escape: compare's
# table shows it escaped, on its row's one line.
printf '{"schema": "zerobench/1", "runs": [{"bench": "gemm", "name": "a\\nb\\u001b[31m", "metrics": {"tflops": 1}}]}' \
  >esc.json
timeout 20 "$ZB" compare esc.json esc.json >cmpesc.out 2>&1
check test $? -eq 0
check grep -qF 'gemm a\nb\x1b[31m  tflops' cmpesc.out
check test -z "$(tr -d '\n' <cmpesc.out | tr -d '[:print:]')"

[ $fail -eq 0 ] && echo "test_input_safety: $passed checks passed"
exit $fail
