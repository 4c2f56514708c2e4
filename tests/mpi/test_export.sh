#!/usr/bin/env bash
# zerobench export from results files without a base: a 2-rank step (--mode
# both) and a 2-rank all-gather. github-benchmark writes both of the
# action's files in one command (OUT-smaller.json, OUT-bigger.json): arrays
# of {name, unit, value[, range, extra]}, each metric in the file of its
# direction, every value the results file's figure; bencher writes BMF,
# {benchmark: {measure: {value[, lower_value, upper_value]}}} with the
# bounds around the value, to a file or stdout. A file given twice names
# its second runs " #2". Exit 0 once written; 2 with one line and no file
# for a bad flag or format, no -o for github-benchmark, a missing or broken
# file, nothing to export, an output that is an input.
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpirun --oversubscribe -np 2 "$ZB" step --mode both --steps 3 --warmup 1 --json "$tmp/step.json" >"$tmp/step.out" 2>&1 ||
  { echo "FAIL: step"; show "$tmp/step.out"; exit 1; }
mpirun --oversubscribe -np 2 "$ZB" allgather -b 64K -e 256K -f 4 -n 3 -w 1 --json "$tmp/ag.json" >"$tmp/ag.out" 2>&1 ||
  { echo "FAIL: allgather"; show "$tmp/ag.out"; exit 1; }

# ex EXPECTED_RC NAME ARGS...: export's exit status, output in $tmp/NAME.out/.err
ex() { local want=$1 name=$2; shift 2; expect_rc "$want" "$tmp/$name" "$ZB" export "$@"; }
ex 0 gh --format github-benchmark "$tmp/step.json" "$tmp/ag.json" -o "$tmp/gh"
ex 0 bmf --format bencher "$tmp/step.json" "$tmp/ag.json" -o "$tmp/bmf.json"
ex 0 bmf_stdout --format=bencher "$tmp/ag.json"
ex 0 twice --format bencher "$tmp/ag.json" "$tmp/ag.json" -o "$tmp/twice.json"
python3 - "$tmp" <<'PY' || fail=1
import json, sys
from zbcheck import check, finish
d = sys.argv[1]
SMALLER = {"time_us", "direct_time_us", "wrong", "step_time_ms", "exposed_comm_ms", "compute_ms", "comm_ms",
           "compute_slowdown_pct", "peak_mem_bytes", "device_pool_reserved_high_bytes", "device_used_high_bytes"}
BIGGER = {"algbw_gbps", "busbw_gbps", "tflops", "pct_peak", "tokens_per_s", "tokens_per_s_per_rank", "mfu_pct",
          "hfu_pct", "overlap_pct",
          "overlap_min_pct", "hidden_pct"}
# the figures of the results files, by run label prefix and metric
runs = json.load(open(f"{d}/step.json"))["runs"] + json.load(open(f"{d}/ag.json"))["runs"]
figures = sorted(v for r in runs for k, v in r["metrics"].items()
                 if k in SMALLER | BIGGER and isinstance(v, (int, float)) and not isinstance(v, bool))
small = json.load(open(f"{d}/gh-smaller.json"))
big = json.load(open(f"{d}/gh-bigger.json"))
check(isinstance(small, list) and small and isinstance(big, list) and big, "github-benchmark: two non-empty arrays")
for e in small + big:
    check(isinstance(e.get("name"), str) and isinstance(e.get("unit"), str)
          and isinstance(e.get("value"), (int, float)), f"name/unit/value in {e}")
    check(set(e) <= {"name", "unit", "value", "range", "extra"}, f"only the action's fields: {sorted(e)}")
    check(all(isinstance(e[k], str) for k in ("range", "extra") if k in e), "range and extra are strings")
    check("extra" in e and e["extra"].startswith("git "), f"extra names the run: {e.get('extra')}")
check({e["name"].split(" / ")[-1] for e in small} <= SMALLER, "smaller: lower-is-better metrics only")
check({e["name"].split(" / ")[-1] for e in big} <= BIGGER, "bigger: higher-is-better metrics only")
names = [e["name"] for e in small + big]
check(len(names) == len(set(names)), "github-benchmark names are unique")
check(sorted(e["value"] for e in small + big) == figures, "every figure of both files, as it is, once")
check(any(e["name"].startswith("allgather ") and e["name"].endswith("/ busbw_gbps") for e in big), "all-gather busbw")
check(any(e["name"].startswith("step ") and e["name"].endswith("/ step_time_ms") and "range" in e for e in small),
      "step time with its min..max range")
# BMF
bmf = json.load(open(f"{d}/bmf.json"))
check(isinstance(bmf, dict) and bmf, "BMF: an object")
n = 0
for bench, measures in bmf.items():
    check(isinstance(measures, dict) and measures, f"BMF {bench}: measures")
    for key, m in measures.items():
        n += 1
        check(key in SMALLER | BIGGER, f"BMF measure {key}")
        check(set(m) <= {"value", "lower_value", "upper_value"} and isinstance(m.get("value"), (int, float)),
              f"BMF {bench}/{key}: {m}")
        if "lower_value" in m or "upper_value" in m:
            check(m["lower_value"] <= m["value"] <= m["upper_value"], f"BMF bounds around the value: {m}")
check(n == len(small) + len(big), f"BMF holds the same figures ({n} vs {len(small) + len(big)})")
check({e["name"].rsplit(" / ", 1)[0] for e in small + big} == set(bmf), "one benchmark name per run in both")
check(json.load(open(f"{d}/bmf_stdout.out")) == {k: v for k, v in bmf.items() if k.startswith("allgather")},
      "bencher on stdout: the same object")
twice = json.load(open(f"{d}/twice.json"))
check(len(twice) == 2 * len(json.load(open(f"{d}/ag.json"))["runs"]) and
      sum(k.endswith(" #2") for k in twice) == len(twice) // 2, "a file given twice: its second runs ' #2'")
finish("test_export formats")
PY

# Bad input: one line, exit 2, nothing written.
expect2 "$tmp/e_fmt" "--format 'xml' (accepted: github-benchmark, bencher)" "$ZB" export --format xml "$tmp/ag.json" -o "$tmp/x"
expect2 "$tmp/e_nofmt" "--format: required" "$ZB" export "$tmp/ag.json" -o "$tmp/x"
expect2 "$tmp/e_noout" "needs -o OUT" "$ZB" export --format github-benchmark "$tmp/ag.json"
expect2 "$tmp/e_nofile" "expected one or more results files" "$ZB" export --format bencher -o "$tmp/x"
expect2 "$tmp/e_missing" "missing.json" "$ZB" export --format bencher "$tmp/missing.json" -o "$tmp/x"
echo '{"schema": "other/2", "runs": []}' >"$tmp/other.json"
expect2 "$tmp/e_schema" "schema 'other/2'" "$ZB" export --format github-benchmark "$tmp/other.json" -o "$tmp/x"
echo '{"schema": "zerobench/1", "meta": {}, "runs": [{"bench": "step", "metrics": {"loss": 2.0}}]}' >"$tmp/none.json"
expect2 "$tmp/e_none" "nothing to export" "$ZB" export --format bencher "$tmp/none.json" -o "$tmp/x"
expect2 "$tmp/e_inout" "may not overwrite an input" "$ZB" export --format bencher "$tmp/ag.json" -o "$tmp/ag.json"
expect2 "$tmp/e_opt" "unknown option '--base'" "$ZB" export --format bencher --base "$tmp/ag.json"
check test ! -e "$tmp/x" -a ! -e "$tmp/x-smaller.json" -a ! -e "$tmp/x-bigger.json"
"$ZB" export --help | grep -q "customSmallerIsBetter" || { echo "FAIL: export --help"; fail=1; }
[ $fail -eq 0 ] && echo "test_export: passed ($passed checks)" || exit 1
