#!/usr/bin/env bash
# plot's gnuplot dies with zerobench (issue 24: safe on hostile inputs): a
# zerobench killed while gnuplot draws (SIGKILL, which no cleanup handler
# sees, or SIGTERM) must not leave gnuplot running on as an orphan. gnuplot
# is a stand-in here that passes the terminals check, then writes its pid
# and sleeps in its own process (exec), as a slow figure would.
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

mkdir bin
cat >bin/gnuplot <<EOF
#!/usr/bin/env bash
case "\${2:-}" in "set terminal"*) exit 0 ;; esac
echo \$\$ >"$tmp/gnuplot.pid"
exec sleep 300
EOF
chmod +x bin/gnuplot
check "$ZB" gemm --shape 32x32x32 -n 1 -w 0 --json g.json

for sig in KILL TERM; do
  rm -f gnuplot.pid
  PATH="$tmp/bin:$PATH" "$ZB" plot g.json -o "figs_$sig" >"$sig.out" 2>&1 &
  zb=$!
  for _ in $(seq 100); do [ -s gnuplot.pid ] && break; sleep 0.1; done
  check test -s gnuplot.pid
  gp=$(cat gnuplot.pid 2>/dev/null || echo 0)
  check kill -0 "$gp"
  kill -s "$sig" "$zb"
  wait "$zb" 2>/dev/null
  check gone "$gp"
  kill -KILL "$gp" 2>/dev/null # what the test started, should it have stayed
done

[ $fail -eq 0 ] && echo "test_plot_orphan: $passed checks passed"
exit $fail
