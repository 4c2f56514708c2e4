#!/usr/bin/env bash
# The CPU peak holds still (harness/cli/peak_cache.h): the first run on a
# host measures it and caches it, a later run with another --blas-core
# reuses that figure (so a slower kernel cannot raise MFU), compare with
# --ignore-env blas_core judges MFU and names the cores, runs against different peaks
# get "not comparable (different peaks)" without failing compare; another
# BLAS core is not comparable at all (exit 3) unless --ignore-env blas_core.
# --peak-measure replaces the cache; a cache behind a symbolic link or a
# malformed one is a note, never a failure nor a write through the link.
# Nothing here is timed: only which figure each run used. The first run asks
# for auto, not keep: on some VMs OpenBLAS itself picks Prescott.
set -u
source "$(dirname "$0")/../lib.sh"
unset OPENBLAS_CORETYPE
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cache="$tmp/cache/peak.json" # in a folder that does not exist yet
S=(--model tiny --nodes 1 --gpus-per-node 2 --steps 2 --warmup 1)
G=(gemm --shape 32x32x32 -n 1 -w 0 --nodes 1 --gpus-per-node 2)

# run NAME CACHE ARGS...: zerobench ARGS with ZB_PEAK_CACHE=CACHE, JSON to $tmp/NAME.json
run() {
  local name=$1 c=$2; shift 2
  ZB_PEAK_CACHE="$c" timeout 180 "$ZB" "$@" --json "$tmp/$name.json" >"$tmp/$name.out" 2>"$tmp/$name.err"
  local rc=$?
  [ $rc -eq 0 ] || { echo "FAIL: $name exited $rc"; show "$tmp/$name.out"; show "$tmp/$name.err"; fail=1; }
}

run first "$cache" "${S[@]}" --blas-core auto
run prescott "$cache" "${S[@]}" --blas-core Prescott
run fresh off "${S[@]}" --blas-core auto
# 4 ranks: on a node with fewer cores than their threads, each rank's peak
# is its share of the cores, and the source says so
run share "$cache" --model tiny --nodes 1 --gpus-per-node 4 --steps 2 --warmup 1 --blas-core auto
# 2 emulated nodes x 2 ranks on this one machine: its cores are shared by
# all 4 ranks (by the kernel's boot id), not 2 per node
run share_emu "$cache" --model tiny --nodes 2 --gpus-per-node 2 --emulate-nodes --steps 2 --warmup 1 --blas-core auto
check test -f "$cache"
check grep -q "^# peak: measured now and cached in $cache" "$tmp/first.out"
check grep -q "^# peak: the cached measurement of .* from $cache (--peak-measure times it again)" "$tmp/prescott.out"
check grep -q "^# peak: measured now, not cached (ZB_PEAK_CACHE=off)" "$tmp/fresh.out"

python3 - "$tmp" "$cache" <<'PY' || fail=1
import json, sys
from zbcheck import check, finish
d, cache = sys.argv[1], sys.argv[2]
first, presc, fresh = (json.load(open(f"{d}/{n}.json")) for n in ("first", "prescott", "fresh"))
c = json.load(open(cache))
for key in ("host", "cpu_model", "cores", "isa", "runs", "best_gflops_per_core", "min_gflops_per_core",
            "median_gflops_per_core", "max_gflops_per_core", "date"):
    check(key in c, f"cache has {key}: {c}")
check(c["schema"] == "zerobench-peak/1", "cache schema")
pf, pp = first["meta"]["peak"], presc["meta"]["peak"]
check(pf["gflops_per_rank"] == pp["gflops_per_rank"] and pf["basis"] == pp["basis"],
      f"--blas-core Prescott reuses the pinned peak: {pf} vs {pp}")
check(pf["gflops_per_rank"] == c["best_gflops_per_core"] * first["meta"]["config"]["blas_threads"],
      "the cached figure is the one used")
check(presc["meta"]["peak_measure"]["cached"] is True and first["meta"]["peak_measure"]["cached"] is False,
      "cached flags")
check(presc["meta"]["peak_measure"]["date"] == c["date"] and c["date"] in pp["source"],
      f"the source names the measurement's date: {pp['source']}")
check(first["meta"]["blas_core"]["ran"] != presc["meta"]["blas_core"]["ran"], "the BLAS cores differ")
check(fresh["meta"]["peak_measure"]["cached"] is False and fresh["meta"]["peak"]["basis"] != pf["basis"],
      "ZB_PEAK_CACHE=off measures again")
import os
cores = os.sysconf("SC_NPROCESSORS_ONLN")
for name in ("share", "share_emu"):
    share = json.load(open(f"{d}/{name}.json"))
    threads, ps = share["meta"]["config"]["blas_threads"], share["meta"]["peak"]
    check(threads == max(1, cores // 4), f"{name}: default threads {threads} = {cores} cores // 4 ranks")
    if 4 * threads > cores:
        check(abs(ps["gflops_per_rank"] - c["best_gflops_per_core"] * cores / 4) < 1e-9 * ps["gflops_per_rank"]
              and f"4 ranks on {cores} cores: {cores / 4:.3g} core(s) each" in ps["source"]
              and "core(s) each" in ps["basis"], f"{name}: 4 ranks share {cores} cores: {ps}")
    else:
        check(ps["gflops_per_rank"] == c["best_gflops_per_core"] * threads and "each" not in ps["source"],
              f"{name}: 4 ranks on {cores} cores: no share {ps}")
for doc in (first, presc):
    for r in doc["runs"]:
        check(r["peak_source"] == doc["meta"]["peak"]["source"], "runs name the peak the meta records")
# A copy of the first run against another peak, MFU 10 points lower and
# nothing else changed: compare must not call that a regression.
other = json.loads(json.dumps(first))
other["meta"]["peak"] = fresh["meta"]["peak"]
for r in other["runs"]:
    for k in ("mfu_pct", "hfu_pct"):
        if isinstance(r["metrics"].get(k), (int, float)):
            r["metrics"][k] -= 10
json.dump(other, open(f"{d}/other.json", "w"))
finish()
PY

# Same peak, other BLAS core: the core named, nothing comparable (exit 3).
timeout 60 "$ZB" compare "$tmp/first.json" "$tmp/prescott.json" >"$tmp/core.out" 2>"$tmp/core.err"
check test $? -eq 3
check grep -q "^# not comparable: blas_core: BASE .*, NEW Prescott" "$tmp/core.out"
check grep -q "mfu_pct .*not comparable (environment)" "$tmp/core.out"
# --ignore-env blas_core: MFU judged. The step may be slower (exit 1 on a
# time regression): only the lines are checked.
timeout 60 "$ZB" compare "$tmp/first.json" "$tmp/prescott.json" --ignore-env blas_core >"$tmp/same.out" 2>"$tmp/same.err"
check test $? -le 1
check grep -q "^# judged anyway: blas_core: BASE .*, NEW Prescott" "$tmp/same.out"
check grep -q "mfu_pct" "$tmp/same.out"
check bash -c "! grep -q 'different peaks' '$tmp/same.out'"
check bash -c "! grep -q 'not comparable (environment)' '$tmp/same.out'"
# Different peaks: named, MFU not judged, and no failure.
timeout 60 "$ZB" compare "$tmp/first.json" "$tmp/other.json" >"$tmp/diff.out" 2>"$tmp/diff.err"
rc=$?
check test $rc -eq 0
check grep -q "^# different peaks: BASE [0-9.e+]* GFLOP/s per rank (measured once on node 0.*; NEW [0-9.e+]* GFLOP/s per rank (measured once on node 0" "$tmp/diff.out"
check grep -q "mfu_pct .*not comparable (different peaks)" "$tmp/diff.out"
check grep -q "hfu_pct .*not comparable (different peaks)" "$tmp/diff.out"
check bash -c "! grep -q REGRESSION '$tmp/diff.out'"
[ $rc -eq 0 ] || { show "$tmp/diff.out"; show "$tmp/diff.err"; }

# --peak-measure times it again and replaces the cache.
before=$(cat "$cache")
run again "$cache" "${G[@]}" --peak-measure
check grep -q "^# peak: measured now and cached in $cache" "$tmp/again.out"
python3 -c "import json,sys; a=json.loads(sys.argv[1]); b=json.load(open(sys.argv[2])); \
  m=json.load(open(sys.argv[3]))['meta']['peak_measure']; \
  sys.exit(0 if m['cached'] is False and b['best_gflops_per_core']==m['best_gflops_per_core'] and b!=a else 1)" \
  "$before" "$cache" "$tmp/again.json"
check test $? -eq 0
# A symbolic link at the cache's path: not read, not written through.
echo '{"keep": "me"}' >"$tmp/target.json"
ln -s "$tmp/target.json" "$tmp/peak-link.json"
run link "$tmp/peak-link.json" "${G[@]}"
check grep -q "^# peak: ignored the peak cache '.*peak-link.json': a symbolic link" "$tmp/link.out"
check grep -q "not cached: cannot write .*peak-link.json: it is a symbolic link" "$tmp/link.out"
check test -L "$tmp/peak-link.json"
check grep -qx '{"keep": "me"}' "$tmp/target.json"
# A malformed cache: a note, a fresh measurement, the file replaced by a good one.
echo '{"schema": "zerobench-peak/1", "host": ' >"$tmp/peak-bad.json"
run bad "$tmp/peak-bad.json" "${G[@]}"
check grep -q "^# peak: ignored the peak cache '.*peak-bad.json': malformed" "$tmp/bad.out"
check grep -q '"schema": "zerobench-peak/1"' "$tmp/peak-bad.json"
check python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/peak-bad.json"
# --peak-gflops replaces the measurement: --peak-measure with it is bad input.
expect2 "$tmp/both" "--peak-measure: not with --peak-gflops" "$ZB" "${G[@]}" --peak-gflops 10 --peak-measure

[ $fail -eq 0 ] || { show "$tmp/first.out"; show "$tmp/prescott.out"; exit 1; }
echo "test_peak_pinned: $passed passed, 0 failed"
