#!/usr/bin/env bash
# compare on a large results file (issue 24: safe on hostile inputs):
# pairing 10,000 runs must not take quadratic time (it took a minute).
# Nothing is timed: compare runs under a generous timeout(1), which only a
# blow-up reaches (exit 124). The pairing itself is checked on runs whose
# identities repeat, and on a small case whose whole output is known.
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

# Two 10,000-run files: identities 0..8999, the first 1,000 seen twice.
# A run's time_us names its identity and occurrence, so a run paired with
# another occurrence shows as a change; NEW lists them in another order.
python3 - <<'EOF'
import json
def run(k, occ):
    return {"bench": "allgather", "size_bytes": 1024 * (k + 1), "dtype": "float", "in_place": k % 2 == 0,
            "ranks": 2, "nodes": 1, "metrics": {"time_us": 10.0 + k + 100000.0 * occ, "busbw_gbps": 1.0}}
keys = [(i % 9000, i // 9000) for i in range(10000)]
base = [run(k, o) for k, o in keys]
new = [run(k, o) for k, o in sorted(keys, key=lambda ko: (ko[1], -ko[0]))]
for name, runs in (("base.json", base), ("new.json", new)):
    json.dump({"schema": "zerobench/1", "meta": {}, "runs": runs}, open(name, "w"))
EOF
timeout 30 "$ZB" compare base.json new.json >cmp.out 2>cmp.err
rc=$?
check test $rc -eq 0
[ $rc -eq 0 ] || show cmp.err
check grep -q "in 20000 comparison(s) of 10000 matched run(s)" cmp.out
check test "$(grep -c ' +0.00 %' cmp.out)" -eq 20000

# A small case: repeated identities pair in order of appearance (the k-th
# base run of an identity with its k-th new run), the rest listed unmatched.
cat >s_base.json <<'EOF'
{"schema": "zerobench/1", "runs": [
 {"bench": "gemm", "shape": "8x8x8", "metrics": {"tflops": 1.0}},
 {"bench": "allgather", "size_bytes": 4096, "in_place": false, "ranks": 2, "metrics": {"busbw_gbps": 1.0}},
 {"bench": "gemm", "shape": "8x8x8", "metrics": {"tflops": 2.0}},
 {"bench": "gemm", "shape": "8x8x8", "metrics": {"tflops": 3.0}},
 {"bench": "allgather", "size_bytes": 4096, "in_place": true, "ranks": 2, "metrics": {"busbw_gbps": 5.0}}]}
EOF
cat >s_new.json <<'EOF'
{"schema": "zerobench/1", "runs": [
 {"bench": "allgather", "size_bytes": 4096, "in_place": false, "ranks": 2, "metrics": {"busbw_gbps": 1.01}},
 {"bench": "gemm", "shape": "8x8x8", "metrics": {"tflops": 10.0}},
 {"bench": "allgather", "size_bytes": 4096, "in_place": false, "ranks": 4, "metrics": {"busbw_gbps": 1.0}},
 {"bench": "gemm", "shape": "8x8x8", "metrics": {"tflops": 1.0}}]}
EOF
cat >s_want.txt <<'EOF'
# zerobench compare: BASE s_base.json, NEW s_new.json: 3 matched run(s)
# change: % of the base value (pp: points of a percentage); with samples on both sides, a regression is a change beyond the tolerance that the Mann-Whitney U test finds at 5 % (p; x: NEW/BASE with its 95 % interval); derived metrics take their source's verdict
# 3 comparison(s) without samples on both sides: today's rule (the tolerance; noise: worse than it but inside a run's min-max spread)
#  run                                metric      unit     base   new     change  tolerance  verdict     judged by
   gemm 8x8x8                         tflops      TFLOP/s     1    10  +900.00 %        5 %  better      rule (no samples)
   allgather 4K out-of-place ranks=2  busbw_gbps  GB/s        1  1.01    +1.00 %        5 %  ok          rule (no samples)
   gemm 8x8x8                         tflops      TFLOP/s     2     1   -50.00 %        5 %  REGRESSION  rule (no samples)
# only in BASE: gemm 8x8x8
# only in BASE: allgather 4K in-place ranks=2
# only in NEW: allgather 4K out-of-place ranks=4
# 1 regression(s), 0 inside the runs' spread (noise), 1 better, in 3 comparison(s) of 3 matched run(s); 0 judged by the samples' test, 3 by the rule (no samples)
EOF
timeout 30 "$ZB" compare s_base.json s_new.json >s.out 2>s.err
check test $? -eq 1
check diff s_want.txt s.out

[ $fail -eq 0 ] && echo "test_compare_scale: $passed checks passed"
exit $fail
