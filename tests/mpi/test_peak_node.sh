#!/usr/bin/env bash
# The measured CPU peak is taken once per node and shared: on 2 ranks every
# rank's header line shows the same peak, the header names the measurement,
# and the JSON meta carries its spread (min <= median <= max = best, the
# runs counted); --peak-gflops overrides it (nothing measured, meta null).
# Nothing here is timed: only that the figures agree and are recorded.
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
timeout 120 mpirun --oversubscribe -np 2 "$ZB" gemm --shape 32x32x32 -n 1 -w 0 --hw cpu \
  --json "$tmp/m.json" >"$tmp/m.out" 2>"$tmp/m.err"
rc=$?
check [ "$rc" -eq 0 ]
timeout 120 mpirun --oversubscribe -np 2 "$ZB" gemm --shape 32x32x32 -n 1 -w 0 --hw cpu --peak-gflops 123 \
  --json "$tmp/o.json" >"$tmp/o.out" 2>"$tmp/o.err"
rc2=$?
check [ "$rc2" -eq 0 ]
check grep -q "measured once on node 0 before work: .* FMA loop, best of 7 runs" "$tmp/m.out"
check grep -q "^# peak 123.00 GFLOP/s per rank (--peak-gflops)" "$tmp/o.out"
python3 - "$tmp" <<'PY' || fail=1
import json, re, sys
from zbcheck import check, finish
d = sys.argv[1]
lines = [l for l in open(f"{d}/m.out") if l.startswith("#  rank")]
peaks = [re.search(r"peak ([0-9.]+) GFLOP/s", l) for l in lines]
check(len(lines) == 2 and all(peaks), f"both ranks' header lines show a peak: {lines}")
if all(peaks):
    check(len({p.group(1) for p in peaks}) == 1, f"every rank uses the same peak: {lines}")
pm = json.load(open(f"{d}/m.json"))["meta"]["peak_measure"]
for key in ("isa", "runs", "node", "best_gflops_per_core", "min_gflops_per_core",
            "median_gflops_per_core", "max_gflops_per_core"):
    check(key in pm, f"meta.peak_measure.{key}")
check(pm["runs"] == 7 and pm["node"] == 0, f"runs and node: {pm}")
check(0 < pm["min_gflops_per_core"] <= pm["median_gflops_per_core"] <= pm["max_gflops_per_core"],
      f"min <= median <= max: {pm}")
check(pm["best_gflops_per_core"] == pm["max_gflops_per_core"], "the peak used is the best run")
check(json.load(open(f"{d}/o.json"))["meta"]["peak_measure"] is None, "--peak-gflops: nothing measured")
olines = [l for l in open(f"{d}/o.out") if l.startswith("#  rank")]
check(all("peak 123.00 GFLOP/s" in l for l in olines) and len(olines) == 2, f"--peak-gflops on every rank: {olines}")
finish()
PY
if [ $fail -ne 0 ]; then show "$tmp/m.out"; show "$tmp/m.err"; show "$tmp/o.out"; exit 1; fi
echo "test_peak_node: $passed passed, 0 failed"
