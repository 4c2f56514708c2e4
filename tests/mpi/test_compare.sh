#!/usr/bin/env bash
# zerobench compare on real results (a 2-rank all-gather, a GEMM, a 2-rank
# step): each file against itself exits 0; a copy doctored to regress one
# direction-aware metric (time and memory up; bandwidth, TFLOP/s, MFU,
# overlap down) exits 1 naming that metric, and improving it exits 0; a
# change inside the step's min-max spread is noise (exit 0); with samples
# the two-sample test decides, derived metrics (bandwidth, TFLOP/s, MFU)
# follow their source, a file without samples is judged by the rule; a tolerance
# wide enough lets a regression pass; github-benchmark output parses with
# name/unit/value per direction; markdown has a row per metric; unmatched
# runs are listed; broken, missing, other-schema and mismatched files, an
# unknown --tolerance metric and bad flags exit 2 with one line naming the
# file or flag, and leave no -o file behind. Several bases (BASE... -- NEW,
# a folder): judged against the base runs' range; B -- N is the two-file
# form; another environment (BLAS core, MPI library) is named and exits 3
# unless --ignore-env. --no-gate writes the same output and exits 0.
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpirun --oversubscribe -np 2 "$ZB" allgather -b 64K -e 256K -f 4 -n 2 -w 1 --json "$tmp/ag.json" >"$tmp/ag.out" 2>&1 ||
  { echo "FAIL: allgather"; show "$tmp/ag.out"; exit 1; }
"$ZB" gemm --shape 64x64x64 -n 2 -w 1 --peak-gflops 10 --json "$tmp/gemm.json" >"$tmp/gemm.out" 2>&1 ||
  { echo "FAIL: gemm"; show "$tmp/gemm.out"; exit 1; }
mpirun --oversubscribe -np 2 "$ZB" step --mode both --steps 3 --warmup 1 --json "$tmp/step.json" >"$tmp/step.out" 2>&1 ||
  { echo "FAIL: step"; show "$tmp/step.out"; exit 1; }

# cmp EXPECTED_RC NAME ARGS...: compare's exit status, output kept in $tmp/NAME.out
cmp() { local want=$1 name=$2; shift 2; expect_rc "$want" "$tmp/$name" "$ZB" compare "$@"; }
for f in ag gemm step; do cmp 0 self_$f "$tmp/$f.json" "$tmp/$f.json"; done

# doctor SRC DST BENCH METRIC FACTOR [MODE]: DST.base is SRC with the metric's
# min-max spread (if any) narrowed to its value, DST the same with the metric
# and its samples (if any) multiplied: a change no spread covers and the
# two-sample test finds
doctor() {
  python3 - "$@" <<'PY'
import json, sys
src, dst, bench, key, factor = sys.argv[1:6]
mode = sys.argv[6] if len(sys.argv) > 6 else None
spread = [key.replace("_ms", s) for s in ("_min_ms", "_max_ms")] if key.endswith("_ms") else []
for out, f in ((dst + ".base", 1.0), (dst, float(factor))):
    d = json.load(open(src))
    n = 0
    for r in d["runs"]:
        m = r["metrics"]
        if r["bench"] == bench and (mode is None or r.get("mode") == mode) and m.get(key) is not None:
            m[key] *= f
            if key in m.get("samples", {}):
                m["samples"][key] = [v * f for v in m["samples"][key]]
            for k in spread:
                if k in m:
                    m[k] = m[key]
            n += 1
    assert n, f"no {bench} run has {key}"
    json.dump(d, open(out, "w"))
PY
}
# each direction-aware metric: worse is 1 (the table names it), better is 0
while read -r file bench key worse better mode; do
  doctor "$tmp/$file.json" "$tmp/w.json" "$bench" "$key" "$worse" $mode || fail=1
  cmp 1 worse_$key "$tmp/w.json.base" "$tmp/w.json"
  check grep -q "$key .*REGRESSION" "$tmp/worse_$key.out"
  doctor "$tmp/$file.json" "$tmp/b.json" "$bench" "$key" "$better" $mode || fail=1
  cmp 0 better_$key "$tmp/b.json.base" "$tmp/b.json"
  check grep -q "$key .*better" "$tmp/better_$key.out"
done <<'EOF'
ag allgather time_us 1.5 0.5
gemm gemm time_us 1.5 0.5
step step step_time_ms 2 0.5 prefetch
step step peak_mem_bytes 1.5 0.5 prefetch
EOF
# a diagnostic (the step's breakdown) is judged and shown, but gates only
# when --gate names it (or all)
doctor "$tmp/step.json" "$tmp/w.json" step compute_ms 2 prefetch || fail=1
cmp 0 diag_compute_ms "$tmp/w.json.base" "$tmp/w.json"
check grep -q "compute_ms .*worse (not gated)" "$tmp/diag_compute_ms.out"
check grep -q "1 worse in metrics that do not gate" "$tmp/diag_compute_ms.out"
cmp 1 gate_compute_ms "$tmp/w.json.base" "$tmp/w.json" --gate compute_ms
check grep -q "compute_ms .*REGRESSION" "$tmp/gate_compute_ms.out"
cmp 1 gate_all "$tmp/w.json.base" "$tmp/w.json" --gate all
cmp 2 gate_bad "$tmp/w.json.base" "$tmp/w.json" --gate speed
check grep -q "gate: unknown metric 'speed' (accepted: all, time_us" "$tmp/gate_bad.err"
# derived metrics take their source's verdict: bandwidth and TFLOP/s follow
# time_us (moved alone, they are ok; with the time, they regress with it)
for key in busbw_gbps tflops; do
  file=ag; bench=allgather
  [ $key = tflops ] && file=gemm && bench=gemm
  doctor "$tmp/$file.json" "$tmp/d.json" $bench $key 0.5 || fail=1
  cmp 0 alone_$key "$tmp/d.json.base" "$tmp/d.json"
  check grep -q "$key .*ok .*as time_us" "$tmp/alone_$key.out"
done
doctor "$tmp/ag.json" "$tmp/d.json" allgather time_us 1.5 || fail=1
cmp 1 with_time "$tmp/d.json.base" "$tmp/d.json"
check grep -q "busbw_gbps .*+0.00 % .*REGRESSION .*as time_us" "$tmp/with_time.out"
# the step's runs carry their samples; a file without them is judged by the rule, and says so
python3 - "$tmp" <<'PY' || fail=1
import json, sys
from zbcheck import check, finish
d = sys.argv[1]
doc = json.load(open(f"{d}/step.json"))
for r in doc["runs"]:
    s = r["metrics"]["samples"]
    check(len(s["step_time_ms"]) == 3 and all(v > 0 for v in s["step_time_ms"]), "3 step time samples")
    check(len(s["compute_ms"]) == 6, "compute samples: 3 steps x 2 ranks")
    check(min(s["step_time_ms"]) == r["metrics"]["step_time_min_ms"], "the samples hold the min")
    del r["metrics"]["samples"]
json.dump(doc, open(f"{d}/nosamples.json", "w"))
finish("samples")
PY
# the collectives and GEMM carry their per-iteration times (-n 2: two each)
python3 - "$tmp" <<'PY' || fail=1
import json, sys
from zbcheck import check, finish
d = sys.argv[1]
for f in ("ag", "gemm"):
    for r in json.load(open(f"{d}/{f}.json"))["runs"]:
        s = r["metrics"]["samples"]["time_us"]
        check(len(s) == 2 and all(v > 0 for v in s), f"{f}: 2 time_us samples, got {s}")
finish("iteration samples")
PY
cmp 0 nosamples "$tmp/nosamples.json" "$tmp/step.json"
check grep -q "without samples on both sides: today's rule" "$tmp/nosamples.out"
check grep -q "step_time_ms .*ok .*rule (no samples)" "$tmp/nosamples.out"
# percentages in points (MFU, overlap): prefetch's set 30 points below or above 50
python3 - "$tmp" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
for key in ("overlap_pct", "mfu_pct"):
    for name, value in (("base", 50.0), ("worse", 20.0), ("better", 80.0)):
        doc = json.load(open(f"{d}/step.json"))
        for r in doc["runs"]:
            if r["mode"] == "prefetch":
                r["metrics"][key] = value
                if key == "overlap_pct":
                    r["metrics"]["overlap_min_pct"] = value  # its spread moves with it
                    r["metrics"]["samples"][key] = [value] * 6  # and its samples (3 steps x 2 ranks)
        json.dump(doc, open(f"{d}/{key}_{name}.json", "w"))
PY
cmp 1 overlap_pct_worse "$tmp/overlap_pct_base.json" "$tmp/overlap_pct_worse.json" --gate overlap_pct
# judged by the test against one base run: the line that points to several
check grep -q "^# one base run: its steps' spread does not hold how a rerun moves" "$tmp/overlap_pct_worse.out"
check test "$(grep -c '^# one base run' "$tmp/nosamples.out")" -eq 0
check grep -q "overlap_pct .*-30.00 pp .*REGRESSION .*U p=" "$tmp/overlap_pct_worse.out"
cmp 0 overlap_pct_better "$tmp/overlap_pct_base.json" "$tmp/overlap_pct_better.json"
check grep -q "overlap_pct .*+30.00 pp .*better" "$tmp/overlap_pct_better.out"
# MFU is a function of the step time: moved alone it takes the step time's verdict
cmp 0 mfu_pct_worse "$tmp/mfu_pct_base.json" "$tmp/mfu_pct_worse.json"
check grep -q "mfu_pct .*-30.00 pp .*ok .*as step_time_ms" "$tmp/mfu_pct_worse.out"
# the figure moved beyond the tolerance, its samples did not: not detectable, exit 0
python3 - "$tmp" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
doc = json.load(open(f"{d}/step.json"))
for r in doc["runs"]:
    r["metrics"]["compute_ms"] *= 1.5
json.dump(doc, open(f"{d}/undetected.json", "w"))
PY
cmp 0 undetected "$tmp/step.json" "$tmp/undetected.json"
check grep -q "compute_ms .*+50.00 % .*no difference detectable .*U p=1" "$tmp/undetected.out"
# a tolerance wider than the change lets it pass; the last one given wins
doctor "$tmp/ag.json" "$tmp/t.json" allgather time_us 1.5 || fail=1
cmp 0 tol_wide "$tmp/ag.json" "$tmp/t.json" --tolerance time_us=60,busbw_gbps=60 --tolerance algbw_gbps=60
cmp 1 tol_last "$tmp/ag.json" "$tmp/t.json" --tolerance time_us=60,busbw_gbps=60,algbw_gbps=60 --tolerance time_us=5
# noise: the step time moved inside the base's own min-max spread
python3 - "$tmp" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
doc = json.load(open(f"{d}/step.json"))
for r in doc["runs"]:
    m = r["metrics"]
    m["step_time_min_ms"], m["step_time_max_ms"] = m["step_time_ms"] * 0.8, m["step_time_ms"] * 1.3
json.dump(doc, open(f"{d}/spread.json", "w"))
for r in doc["runs"]:
    m = r["metrics"]
    m["step_time_ms"] *= 1.2
    m["step_time_min_ms"] = m["step_time_max_ms"] = m["step_time_ms"]
json.dump(doc, open(f"{d}/spread_new.json", "w"))
PY
cmp 0 noise "$tmp/spread.json" "$tmp/spread_new.json"
check grep -q "step_time_ms .*noise" "$tmp/noise.out"
# several bases: BASE... -- NEW and a folder of them; the base runs' range widened by the tolerance
mkdir -p "$tmp/bases" "$tmp/empty"
doctor "$tmp/step.json" "$tmp/slow.json" step step_time_ms 2 prefetch || fail=1
for i in 1 2 3; do cp "$tmp/slow.json.base" "$tmp/bases/b$i.json"; done
cmp 1 multi "$tmp/bases/b1.json" "$tmp/bases/b2.json" -- "$tmp/slow.json"
check grep -q "step_time_ms .*REGRESSION .*; 2 base runs" "$tmp/multi.out"
check grep -q "^# 2 base files: base is the median" "$tmp/multi.out"
cmp 1 multi_dir "$tmp/bases" -- "$tmp/slow.json"
check grep -q "3 base files" "$tmp/multi_dir.out"
cmp 0 multi_same "$tmp/bases" -- "$tmp/bases/b1.json"
# several NEW files too: Welch's t over the runs' figures (a folder of them on either side)
mkdir -p "$tmp/news"
for i in 1 2 3; do cp "$tmp/slow.json" "$tmp/news/n$i.json"; done
cmp 1 groups "$tmp/bases" -- "$tmp/news"
check grep -q "^# 3 base and 3 new files: base and new are the medians" "$tmp/groups.out"
check grep -q "step_time_ms .*REGRESSION .*3 vs 3 runs, spread 0/0 %" "$tmp/groups.out"
cmp 0 groups_same "$tmp/bases/b1.json" "$tmp/bases/b2.json" -- "$tmp/bases/b3.json" "$tmp/bases/b1.json"
check grep -q "step_time_ms .*ok .*2 vs 2 runs" "$tmp/groups_same.out"
cmp 1 one_base_dashdash "$tmp/slow.json.base" -- "$tmp/slow.json"
"$ZB" compare "$tmp/slow.json.base" "$tmp/slow.json" >"$tmp/two_form.out" 2>&1
check command cmp -s "$tmp/two_form.out" "$tmp/one_base_dashdash.out"
# another environment: named on one line, nothing comparable, exit 3; --ignore-env judges anyway
python3 - "$tmp" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
doc = json.load(open(f"{d}/step.json"))
doc["meta"]["blas"] = doc["meta"]["blas"].replace(doc["meta"]["blas_core"]["ran"], "Other")  # OpenBLAS names its core
doc["meta"]["blas_core"] = {"ran": "Other"}
doc["meta"]["mpi_library"] = "Another MPI 9"
json.dump(doc, open(f"{d}/otherenv.json", "w"))
PY
cmp 3 env "$tmp/step.json" "$tmp/otherenv.json"
check grep -q "^# not comparable: blas_core: BASE .*, NEW Other" "$tmp/env.out"
check grep -q "^# not comparable: mpi_library: BASE .*, NEW Another MPI 9" "$tmp/env.out"
check grep -q "step_time_ms .*not comparable (environment)" "$tmp/env.out"
cmp 0 env_ignored "$tmp/step.json" "$tmp/otherenv.json" --ignore-env blas_core,mpi_library
check grep -q "^# judged anyway: blas_core" "$tmp/env_ignored.out"
cmp 3 env_multi "$tmp/bases" -- "$tmp/otherenv.json"
cmp 3 groups_env "$tmp/bases" -- "$tmp/otherenv.json" "$tmp/otherenv.json"
# github-benchmark: one direction per array, parsed
cmp 1 gh_small "$tmp/ag.json" "$tmp/t.json" --format github-benchmark --github-tool customSmallerIsBetter -o "$tmp/gh_small.json"
cmp 0 gh_big "$tmp/step.json" "$tmp/step.json" --format github-benchmark --github-tool customBiggerIsBetter
# --no-gate: the same file written, exit 0 in spite of the regression (2 still for bad input)
cmp 0 gh_nogate "$tmp/ag.json" "$tmp/t.json" --format github-benchmark --github-tool customSmallerIsBetter --no-gate \
  -o "$tmp/gh_nogate.json"
check command cmp -s "$tmp/gh_small.json" "$tmp/gh_nogate.json"
cmp 0 text_nogate "$tmp/ag.json" "$tmp/t.json" --no-gate
check grep -q "REGRESSION" "$tmp/text_nogate.out"
cmp 2 nogate_bad "$tmp/ag.json" "$tmp/missing.json" --no-gate
cmp 0 md "$tmp/ag.json" "$tmp/ag.json" --format markdown
python3 - "$tmp" <<'PY' || fail=1
import json, sys
from zbcheck import check, finish
d = sys.argv[1]
small = json.load(open(f"{d}/gh_small.json"))
big = json.load(open(f"{d}/gh_big.out"))
check(isinstance(small, list) and small and isinstance(big, list) and big, "github-benchmark arrays")
for e in small + big:
    check(isinstance(e.get("name"), str) and isinstance(e.get("unit"), str) and isinstance(e.get("value"), (int, float)),
          f"name/unit/value in {e}")
    check(set(e) <= {"name", "unit", "value", "range", "extra"}, f"only the action's fields: {sorted(e)}")
check({e["name"].split(" / ")[1] for e in small} == {"time_us", "wrong"}, "smaller: time and wrong only")
check(all(e["name"].split(" / ")[1] in ("busbw_gbps", "algbw_gbps", "tokens_per_s", "tokens_per_s_per_rank", "mfu_pct", "hfu_pct", "overlap_pct",
                                         "overlap_min_pct", "hidden_pct") for e in big), "bigger: higher-is-better only")
ag = json.load(open(f"{d}/t.json"))
t = [e for e in small if e["name"].endswith("/ time_us")]
check(len(t) == len(ag["runs"]) and all("REGRESSION" in e["extra"] for e in t), "time_us regressions in extra")
check(all(".." in e["range"] for e in small + big if "range" in e), "range is min..max")
st = [e for e in json.load(open(f"{d}/gh_big.out")) if e["name"].endswith("/ tokens_per_s")]
check(len(st) == 2, "a tokens_per_s entry per step run")
md = open(f"{d}/md.out").read().splitlines()
rows = [l for l in md if l.startswith("| allgather")]
check(len(rows) == 4 * 4, f"markdown: 4 metrics x 4 runs, got {len(rows)}")
finish("github/markdown")
PY
# unmatched runs are listed; no run in common is unusable input
python3 - "$tmp" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
doc = json.load(open(f"{d}/ag.json"))
doc["runs"] = doc["runs"][1:]
json.dump(doc, open(f"{d}/fewer.json", "w"))
doc = json.load(open(f"{d}/ag.json"))
doc["schema"] = "zerobench/2"
json.dump(doc, open(f"{d}/schema2.json", "w"))
PY
cmp 0 fewer "$tmp/ag.json" "$tmp/fewer.json"
check grep -q "only in BASE: allgather 64K out-of-place" "$tmp/fewer.out"
cmp 2 mismatch "$tmp/ag.json" "$tmp/gemm.json" -o "$tmp/never.txt"
check grep -q "no run of '.*ag.json' matches a run of '.*gemm.json'" "$tmp/mismatch.err"
printf '{"schema": "zerobench/1", "runs": [' >"$tmp/broken.json"
cmp 2 broken "$tmp/ag.json" "$tmp/broken.json" -o "$tmp/never.txt"
check grep -q "broken.json': not JSON" "$tmp/broken.err"
cmp 2 missing "$tmp/nope.json" "$tmp/ag.json" -o "$tmp/never.txt"
check grep -q "nope.json': No such file" "$tmp/missing.err"
cmp 2 schema "$tmp/ag.json" "$tmp/schema2.json" -o "$tmp/never.txt"
check grep -q "schema 'zerobench/2' (accepted: zerobench/1)" "$tmp/schema.err"
cmp 2 tolerance "$tmp/ag.json" "$tmp/ag.json" --tolerance speed=5 -o "$tmp/never.txt"
check grep -q "unknown metric 'speed' (accepted: time_us" "$tmp/tolerance.err"
cmp 2 tolerance_value "$tmp/ag.json" "$tmp/ag.json" --tolerance time_us=-1
cmp 2 tolerance_empty "$tmp/ag.json" "$tmp/ag.json" --tolerance
cmp 2 format "$tmp/ag.json" "$tmp/ag.json" --format html
cmp 2 gh_needs_tool "$tmp/ag.json" "$tmp/ag.json" --format github-benchmark
cmp 2 one_file "$tmp/ag.json"
cmp 2 no_base -- "$tmp/ag.json" -o "$tmp/never.txt"
check grep -q "'--': expected at least one BASE before it" "$tmp/no_base.err"
cmp 2 two_new "$tmp/ag.json" -- "$tmp/ag.json" "$tmp/ag.json"
check grep -q "2 NEW files need at least 2 BASE files (got 1)" "$tmp/two_new.err"
cmp 2 empty_dir "$tmp/empty" -- "$tmp/ag.json" -o "$tmp/never.txt"
check grep -q "empty': a folder with no \*.json results file" "$tmp/empty_dir.err"
cmp 2 ignore_env "$tmp/ag.json" "$tmp/ag.json" --ignore-env nope
check grep -q "ignore-env: unknown key 'nope' (accepted: backend, comm, blas_core" "$tmp/ignore_env.err"
for e in mismatch broken missing schema tolerance tolerance_value tolerance_empty format gh_needs_tool one_file \
  no_base two_new empty_dir ignore_env gate_bad; do
  check [ "$(wc -l <"$tmp/$e.err")" -eq 1 ]
  check [ ! -s "$tmp/$e.out" ]
done
check [ ! -e "$tmp/never.txt" ]
[ $fail -eq 0 ] && echo "test_compare: $passed checks passed" || exit 1
