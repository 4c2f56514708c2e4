#!/usr/bin/env bash
# Outputs on hostile paths (issue: safe on hostile inputs): a planted link
# at an output path is refused and its victim left as it was; two outputs of
# one command on one path, or an output onto its input, are refused with
# exit 2 and one line before any work (the benchmarks' --json/--csv/--trace,
# plan, compare, accept, calibrate, plot); paths that gnuplot would read as
# pipes ('<cmd', '|cmd') run nothing; a plot that fails, or is killed with
# SIGTERM, leaves the figures of an earlier plot in the same folder as they
# were and no staging folder behind.
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

# A link at the output path: refused, the victim keeps its bytes.
echo precious >victim
ln -s victim r.json
expect2 link "--json 'r.json': is a symbolic link" "$ZB" gemm --shape 32x32x32 -n 1 -w 0 --json r.json
check test "$(cat victim)" = precious
check test -L r.json
# Links planted at the old guessable temporary names are never opened.
for p in $(seq $$ $(($$ + 400))); do ln -s victim "out.json.tmp.$p"; done
check "$ZB" gemm --shape 32x32x32 -n 1 -w 0 --json out.json
check test "$(cat victim)" = precious
check python3 -c 'import json; json.load(open("out.json"))'
rm -f out.json.tmp.*
check test -z "$(ls -A | grep -E '\.zb-')"

# Two outputs on one path, an output onto an input.
expect2 same "--json 'x' and --csv 'x' are the same file" "$ZB" gemm --shape 32x32x32 -n 1 -w 0 --json x --csv x
check test ! -e x
expect2 same3 "are the same file" "$ZB" gemm --shape 32x32x32 -n 1 -w 0 --json x --trace ./x
check test ! -e x
cp "$ZB_TESTS_DIR/../profiles/hw/cpu.json" my.json
check test -f my.json
if [ -f my.json ]; then
  sum=$(md5sum <my.json)
  expect2 planself "--json 'my.json' is the input --hw 'my.json'" "$ZB" plan --hw my.json --json my.json
  check test "$(md5sum <my.json)" = "$sum"
  expect2 stepself "--json './my.json' is the input --hw 'my.json'" "$ZB" gemm --hw my.json --json ./my.json
  check test "$(md5sum <my.json)" = "$sum"
  expect2 calself "-o 'my.json' is the input --hw 'my.json'" "$ZB" calibrate --hw my.json -o my.json --quick
  check test "$(md5sum <my.json)" = "$sum"
fi
expect2 cmpself "--output 'out.json' is the input BASE 'out.json'" "$ZB" compare out.json out.json -o out.json
check python3 -c 'import json; json.load(open("out.json"))'
expect2 accsame "--junit 'v' and --json 'v' are the same file" "$ZB" accept cpu-smoke --junit v --json v
check test ! -e v

# gnuplot: paths starting with '<' or '|' run nothing.
if command -v gnuplot >/dev/null; then
  "$ZB" plot out.json -o '<touch PWNED;' >lt.out 2>&1
  check test $? -eq 0
  "$ZB" plot out.json -o '|touch PWNED2;' >pipe.out 2>&1
  check test $? -eq 0
  mkdir q
  "$ZB" plot out.json -o 'q/$(touch PWNED3)`touch PWNED4`x' >sub.out 2>&1
  check test $? -eq 0
  d=$(ls -d q/*)
  cmd=$(sed -n 's/^# rebuild: //p' "$d/gemm.dat")
  rm -f "$d/gemm.pdf"
  bash -c "$cmd" >rebuild.log 2>&1
  check test "$(head -c 4 "$d/gemm.pdf" 2>/dev/null)" = "%PDF"
  check test -z "$(find . -name 'PWNED*')"
  expect2 ctrl "control characters in a path" "$ZB" plot out.json -o "$(printf 'a\nb')"

  # A failed plot keeps the earlier figures: a broken script fails the
  # second figure of the second run.
  "$ZB" gemm -b 32 -e 64 -f 2 -n 1 -w 0 --json g2.json >/dev/null 2>&1
  "$ZB" step --steps 2 --warmup 1 --json s.json >/dev/null 2>&1
  check "$ZB" plot g2.json -o figs
  sum=$(cat figs/* | md5sum)
  mkdir scripts
  cp "$ZB_TESTS_DIR"/../plots/*.gp scripts/
  echo "this is not gnuplot" >>scripts/steps.gp
  "$ZB" plot g2.json s.json -o figs --scripts scripts >fail.out 2>fail.err
  check test $? -eq 1
  check grep -q "gnuplot failed on steps.gp" fail.err
  check test "$(cat figs/* | md5sum)" = "$sum"
  check test -z "$(ls -A figs | grep -v -E '^gemm(_ref)?\.(dat|pdf|png)$')"

  # Killed while drawing (a script that waits): no staging folder, the
  # earlier figures as they were.
  cp "$ZB_TESTS_DIR"/../plots/*.gp scripts/
  sed -i '1i pause 20' scripts/gemm.gp
  "$ZB" plot g2.json -o figs --scripts scripts >kill.out 2>&1 &
  pid=$!
  for _ in $(seq 100); do ls -A figs | grep -q zerobench-plot && break; sleep 0.1; done
  check bash -c 'ls -A figs | grep -q zerobench-plot'
  kill -TERM $pid
  wait $pid
  check test $? -eq 143
  check test -z "$(ls -A figs | grep zerobench-plot)"
  check test "$(cat figs/* | md5sum)" = "$sum"
  pkill -f "scripts/gemm.gp" 2>/dev/null
fi

echo "test_output_safety: $passed checks, fail=$fail"
exit $fail
