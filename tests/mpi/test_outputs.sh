#!/usr/bin/env bash
# A 2-rank collective run and a GEMM run (with --compare-direct: the direct
# BLAS columns and JSON fields; a 2-rank reduce-scatter with --compare-direct:
# the plain MPI baseline is the better of blocking and non-blocking) write JSON (zerobench/1 schema, meta
# and one run per size and placement), CSV (the same rows) and a Chrome trace
# (pid = rank + 1, tid = stream + 1, comm records with bytes), and print a table
# whose sizes and bandwidths agree with the JSON; a one-rank collective says
# its busbw is 0 by definition.
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpirun --oversubscribe -np 2 "$ZB" allgather -b 4K -e 64K -f 4 -n 3 -w 1 \
  --json "$tmp/ag.json" --csv "$tmp/ag.csv" --trace "$tmp/ag.trace.json" >"$tmp/ag.out" 2>"$tmp/ag.err"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: allgather exited $rc"; cat "$tmp/ag.err"; fail=1; }
"$ZB" gemm --shape 64x32x16 --shape 7x5x3 -n 2 -w 1 --peak-gflops 10 --compare-direct --direct-rounds 2 --json "$tmp/gemm.json" \
  >"$tmp/gemm.out" 2>"$tmp/gemm.err" || { echo "FAIL: gemm"; cat "$tmp/gemm.err"; fail=1; }
mpirun --oversubscribe -np 2 "$ZB" reducescatter -b 64K -e 64K -n 3 -w 1 --compare-direct --direct-rounds 4 \
  --json "$tmp/rs.json" >"$tmp/rs.out" 2>"$tmp/rs.err" || { echo "FAIL: reducescatter"; cat "$tmp/rs.err"; fail=1; }
"$ZB" allgather -b 4K -e 4K -n 2 -w 1 >"$tmp/one.out" 2>"$tmp/one.err" ||
  { echo "FAIL: one-rank allgather"; cat "$tmp/one.err"; fail=1; }
python3 - "$tmp" <<'PY' || fail=1
import csv, json, sys
d = sys.argv[1]
from zbcheck import check, finish
r = json.load(open(f"{d}/ag.json"))
check(r["schema"] == "zerobench/1", "schema")
meta = r["meta"]
for key in ("hosts", "command_line", "config", "mpi_library", "git_describe", "nccl_env", "cpu_model"):
    check(key in meta, f"meta.{key}")
check(meta["ranks"] == 2, "meta.ranks == 2")
runs = r["runs"]
check(len(runs) == 6, f"6 runs (3 sizes x 2 placements), got {len(runs)}")
check(sorted({x["size_bytes"] for x in runs}) == [4096, 16384, 65536], "sizes")
check({x["in_place"] for x in runs} == {True, False}, "both placements")
for x in runs:
    m = x["metrics"]
    check(x["bench"] == "allgather" and x["ranks"] == 2 and x["nodes"] == 1, "run identity")
    check(m["wrong"] == 0, "no wrong elements")
    check(m["time_us"] > 0, "time positive")
    # busbw = algbw * (n-1)/n and algbw = size / time for all-gather
    check(abs(m["busbw_gbps"] - m["algbw_gbps"] / 2) <= 1e-9 * m["algbw_gbps"], "busbw formula")
    check(abs(m["algbw_gbps"] - x["size_bytes"] / (m["time_us"] * 1e-6) / 1e9) <= 1e-6 * m["algbw_gbps"], "algbw formula")
rows = list(csv.DictReader(open(f"{d}/ag.csv")))
check(len(rows) == 6, "csv rows")
check(rows and float(rows[0]["metrics.busbw_gbps"]) == runs[0]["metrics"]["busbw_gbps"], "csv matches json")
t = json.load(open(f"{d}/ag.trace.json"))
ev = [e for e in t["traceEvents"] if e.get("ph") == "X"]
check({e["pid"] for e in ev} == {1, 2}, "trace has both ranks (pid = rank + 1)")
comm = [e for e in ev if e["cat"] == "comm" and e["name"] == "allgather"]
check(len(comm) > 0 and all(e["args"]["bytes"] > 0 for e in comm), "comm records with bytes")
check(all(e["dur"] >= 0 for e in ev), "durations")
table = open(f"{d}/ag.out").read()
check("65536" in table and "Avg bus bandwidth" in table and "nodes 1" in table, "table")
check("one rank:" not in table, "no one-rank note with 2 ranks")
one = open(f"{d}/one.out").read()
check("one rank: no byte crosses a link, so busbw is 0 by definition" in one, "one-rank busbw note")
g = json.load(open(f"{d}/gemm.json"))
shapes = [x["shape"] for x in g["runs"]]
check(shapes == ["64x32x16", "7x5x3"], f"gemm shapes {shapes}")
for x in g["runs"]:
    m = x["metrics"]
    M, N, K = map(int, x["shape"].split("x"))
    check(m["wrong"] == 0, "gemm wrong")
    check(abs(m["tflops"] - 2 * M * N * K / (m["time_us"] * 1e-6) / 1e12) <= 1e-6 * m["tflops"], "tflops formula")
    check(abs(m["pct_peak"] - 100 * m["tflops"] * 1e12 / 10e9) <= 1e-6 * m["pct_peak"], "pct of --peak-gflops")
    check(m["direct_time_us"] > 0, "gemm direct_time_us")
    check(abs(m["harness_overhead_pct"] - 100 * (m["time_us"] - m["direct_time_us"]) / m["direct_time_us"])
          <= 1e-6 * max(1.0, abs(m["harness_overhead_pct"])), "gemm harness_overhead_pct formula")
check("direct BLAS" in open(f"{d}/gemm.out").read(), "gemm table's direct group title on cpu")
rs = [x for x in json.load(open(f"{d}/rs.json"))["runs"] if not x["in_place"]]
check(len(rs) == 1, "one out-of-place reduce-scatter run")
for x in rs:
    m = x["metrics"]
    b, nb = m["direct_blocking_time_us"], m["direct_nonblocking_time_us"]
    check(b > 0 and nb > 0, "both plain MPI baselines timed")
    check(m["direct_time_us"] == min(b, nb), "direct_time_us is the better plain call")
    check(abs(m["harness_overhead_pct"] - 100 * (m["time_us"] - m["direct_time_us"]) / m["direct_time_us"])
          <= 1e-6 * max(1.0, abs(m["harness_overhead_pct"])), "collective harness_overhead_pct formula")
    # Each side's figure is its best of the alternated rounds; the median
    # overhead is the median over the rounds' paired overheads.
    rounds = x["direct_rounds_us"]
    check(x["direct_rounds"] == 4 and len(rounds) == 4, "4 rounds of --direct-rounds 4")
    def close(a, b): return abs(a - b) <= 1e-6 * max(1.0, abs(b))
    check(close(m["time_us"], min(q["comm"] for q in rounds)), "time_us is the best comm round")
    check(close(b, min(q["blocking"] for q in rounds)), "blocking: its best round")
    check(close(nb, min(q["nonblocking"] for q in rounds)), "non-blocking: its best round")
    paired = sorted(100 * (q["comm"] - min(q["blocking"], q["nonblocking"])) / min(q["blocking"], q["nonblocking"])
                    for q in rounds)
    check(close(m["harness_overhead_median_pct"], (paired[1] + paired[2]) / 2), "median paired overhead")
    check(x["per_rank"][0]["time_us"] >= 0 and len(x["per_rank"]) == 2, "per_rank of the compared run")
finish("test_outputs")
PY
[ $fail -eq 0 ] && echo "test_outputs: passed" || { echo "--- stdout"; cat "$tmp/ag.out"; exit 1; }
