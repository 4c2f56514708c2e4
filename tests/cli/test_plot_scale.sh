#!/usr/bin/env bash
# plot on large results files (issue 24: safe on hostile inputs): 50,000
# step runs and as many collective series must not take quadratic (or, for
# busbw_scaling's common size, cubic) time. Nothing is timed: plot runs
# under a generous timeout(1), which only a blow-up reaches (exit 124).
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

# 50,000 step runs, each its own configuration (as many series for the
# scaling figure; the bar figures take at most 1,000 runs); 50,000 collective
# runs, each its own dtype (as many busbw series); 20,003 in one series of
# 8 rank counts, for busbw_scaling's largest size common to them (2500 KiB:
# 5000 KiB has 3 of them).
# 1,000 step runs (the most the bar figures take) of 500 configurations,
# numbered in first-seen order. gnuplot is a stand-in that writes the
# figure it is asked for: this is about zerobench's own work.
python3 - <<'EOF'
import json
meta = {"backend": "cpu", "comm": "mpi"}
steps = [{"bench": "step", "mode": ["sync", "prefetch"][i % 2], "stage": 3, "model": "m%d" % (i // 2), "ranks": 2,
          "nodes": 1, "metrics": {"step_time_ms": 1.0 + i % 7, "tokens_per_s": 100.0,
                                  "peak_mem_by_tag_bytes": {"param_shard": 1048576}}} for i in range(50000)]
colls = [{"bench": "allgather", "size_bytes": 4096, "dtype": "d%d" % i, "in_place": False, "ranks": 2, "nodes": 1,
          "metrics": {"busbw_gbps": 1.0}} for i in range(50000)]
colls += [{"bench": "allgather", "size_bytes": 1024 * (1 + i // 8), "dtype": "float", "in_place": False,
           "ranks": 2 + i % 8, "nodes": 1, "metrics": {"busbw_gbps": 1.0 + i % 5}} for i in range(20000)]
colls += [{"bench": "allgather", "size_bytes": 1024 * 5000, "dtype": "float", "in_place": False, "ranks": r,
           "nodes": 1, "metrics": {"busbw_gbps": 1.0}} for r in (2, 3, 4)]
bars = [dict(r, model="m%d" % (999 - i // 2)) for i, r in enumerate(steps[:1000])]
for name, runs in (("steps.json", steps), ("colls.json", colls), ("bars.json", bars)):
    json.dump({"schema": "zerobench/1", "meta": meta, "runs": runs}, open(name, "w"))
EOF
mkdir bin
cat >bin/gnuplot <<'EOF'
#!/usr/bin/env bash
# Stand-in: the terminals check passes; a figure run writes out='...'.
out=$(printf '%s' "${2:-}" | sed -n "s/.*out='\([^']*\)'.*/\1/p")
[ -z "$out" ] || echo figure >"$out"
EOF
chmod +x bin/gnuplot
PATH="$tmp/bin:$PATH" timeout 120 "$ZB" plot steps.json colls.json -o figs >plot.out 2>plot.err
rc=$?
check test $rc -eq 0
[ $rc -eq 0 ] || show plot.err
check grep -q "^steps  *not drawn: 50000 step runs, more than the 1000 bars" plot.out
check grep -q "^scaling  *not drawn: no step runs of one configuration at two or more rank counts" plot.out
check test "$(grep -c '^"size_bytes" "allgather cpu/mpi d' figs/busbw.dat)" -eq 50000
check grep -q '"allgather cpu/mpi, 2500 KiB"' figs/busbw_scaling.dat
check test "$(grep -c '^[0-9]' figs/busbw_scaling.dat)" -eq 8

PATH="$tmp/bin:$PATH" timeout 120 "$ZB" plot bars.json -o bars >bars.out 2>bars.err
check test $? -eq 0
check grep -q "^steps  *bars/steps.pdf" bars.out
# One row per run, its group's x (column 2) the run's configuration, 0 to 499.
check test "$(awk '$1 ~ /^-?[0-9]/ {n++; if ($2 != int((n - 1) / 2)) bad++} END {print n + 0, bad + 0}' \
  bars/steps.dat)" = "1000 0"

[ $fail -eq 0 ] && echo "test_plot_scale: $passed checks passed"
exit $fail
