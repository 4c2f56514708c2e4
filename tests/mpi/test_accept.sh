#!/usr/bin/env bash
# zerobench accept: cpu-smoke's checks pass with their fractions at the
# loosest (devices not applicable on cpu, every other check PASS; the shipped
# thresholds judge the machine, and tests time nothing), and its JUnit XML and JSON say
# what it printed (each check's verdict, reason and printed lines, the
# threshold with its reference and fraction, the margin); a copy with an
# impossibly high GEMM reference fails (exit 1) naming the check, its
# value, threshold, reference, fraction, margin and source; a devices check that cannot pass fails
# fast (the checks after it are not run); bad profiles (missing field,
# unknown benchmark, unknown metric, arguments the benchmark refuses, no
# such profile) exit 2 with one line naming the file and field and leave no
# output file behind.
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
smoke="$ZB_PROFILES/accept/cpu-smoke.json"

# derive NAME PYTHON: a copy of cpu-smoke changed by PYTHON (p is the profile)
derive() {
  python3 - "$smoke" "$tmp/$1.json" "$2" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(p, open(sys.argv[2], "w"))
PY
}
# Tests time nothing: the shipped thresholds are the machine's acceptance
# (a collective under ctest -j2, its ranks sharing 2 cores with another
# MPI test, can fall to a tenth of its bandwidth), so the pass path runs
# cpu-smoke's checks and references with every fraction at its loosest
# (1/1000 of a minimum's reference, 10x a maximum's: a straggler cannot
# exceed 100 % with 2 ranks).
derive smoke 'p["checks"] = [dict(c, **{k: dict(c[k], fraction=1e-3 if k == "min" else 10) for k in ("min", "max", "max_deviation_pct") if k in c}) for c in p["checks"]]'
timeout 300 "$ZB" accept "$tmp/smoke.json" --junit "$tmp/smoke.xml" --json "$tmp/smoke.out.json" >"$tmp/smoke.out" 2>"$tmp/smoke.err"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: accept cpu-smoke (loosest fractions) exited $rc"; show "$tmp/smoke.out"; show "$tmp/smoke.err"; fail=1; }

# report_matches OUT XML JSON: the files hold what accept printed
report_matches() {
  python3 - "$@" <<'PY'
import json, re, sys
import xml.etree.ElementTree as ET
from zbcheck import check, finish
out, xml, js = sys.argv[1:4]
text = open(out).read()
# each printed check: "VERDICT  name: summary" then indented lines
blocks = re.findall(r"^(PASS|FAIL|SKIP)  ([^:\n]+): .*\n(?:      .*\n)*", text, re.M)
printed = {m.group(2): (m.group(1), m.group(0)) for m in re.finditer(r"^(PASS|FAIL|SKIP)  ([^:\n]+): .*\n(?:      .*\n)*", text, re.M)}
check(len(printed) == len(blocks) and printed, f"printed checks: {list(printed)}")
suite = ET.parse(xml).getroot()
check(suite.tag == "testsuites", "JUnit root")
cases = suite.findall("./testsuite/testcase")
check([c.get("name") for c in cases] == list(printed), f"testcases {[c.get('name') for c in cases]} vs printed {list(printed)}")
fails = skips = 0
for c in cases:
    verdict, block = printed.get(c.get("name"), ("?", ""))
    f, s = c.find("failure"), c.find("skipped")
    got = "FAIL" if f is not None else "SKIP" if s is not None else "PASS"
    fails += got == "FAIL"
    skips += got == "SKIP"
    check(got == verdict, f"{c.get('name')}: JUnit {got}, printed {verdict}")
    check(c.findtext("system-out") == block, f"{c.get('name')}: system-out is the printed block")
    reason = re.search(r"^      reason: (.*)$", block, re.M)
    if got != "PASS":
        check(reason is not None and (f if f is not None else s).get("message") == reason.group(1),
              f"{c.get('name')}: message is the printed reason")
ts = suite.find("testsuite")
check(int(ts.get("tests")) == len(cases) and int(ts.get("failures")) == fails and int(ts.get("skipped")) == skips,
      "testsuite counts")
doc = json.load(open(js))
check(doc["schema"] == "zerobench-accept/1", "accept JSON schema")
check([c["name"] for c in doc["checks"]] == list(printed), "JSON checks in printed order")
for c in doc["checks"]:
    verdict, block = printed.get(c["name"], ("?", ""))
    check(c["verdict"].upper() == verdict, f"{c['name']}: JSON verdict")
    check(c["source"] and f"source: {c['source']}" in block, f"{c['name']}: source printed")
    if c["measured"] is not None and c["kind"] == "metric":
        check(f"{c['metric']} {c['measured']:.4g} " in block, f"{c['name']}: measured value printed")
    if c["kind"] != "devices":
        # the threshold is fraction x reference, printed with both, and the margin
        check(abs(c["threshold"] - c["fraction"] * c["reference"]) <= 1e-12 * c["reference"],
              f"{c['name']}: threshold {c['threshold']} is fraction x reference")
        check(f"threshold {c['op']} {c['threshold']:.4g} " in block, f"{c['name']}: threshold printed")
        check(f"({c['fraction']:.4g} x {c['reference']:.4g} " in block, f"{c['name']}: fraction and reference printed")
    if c["kind"] != "devices" and c["measured"] is not None:
        t, m = c["threshold"], c["measured"]
        want = 100 * (m / t - 1) if c["op"] == ">=" else 100 * (1 - m / t)
        check(abs(c["margin_pct"] - want) < 1e-6 * max(1, abs(want)), f"{c['name']}: margin_pct {c['margin_pct']} vs {want}")
        check(f"margin {c['margin_pct']:+.0f} %" in block, f"{c['name']}: margin printed")
        check((c["margin_pct"] >= 0) == (c["verdict"] == "pass"), f"{c['name']}: margin sign agrees with the verdict")
check(doc["passed"] == (fails == 0), "passed")
finish(out)
PY
}
if [ $rc -eq 0 ]; then
  report_matches "$tmp/smoke.out" "$tmp/smoke.xml" "$tmp/smoke.out.json" || fail=1
  check grep -q "^SKIP  devices: .*" "$tmp/smoke.out"
  check grep -q "not applicable: the cpu backend has one device per rank" "$tmp/smoke.out"
  check [ "$(grep -c '^PASS  ' "$tmp/smoke.out")" -eq "$(python3 -c "import json; print(len(json.load(open('$smoke'))['checks']) - 1)")" ]
fi

# impossibly high: the GEMM must reach half of 2e9 TFLOP/s (one run, the other checks left out)
derive high 'p["checks"] = [p["checks"][0], dict(p["checks"][1], min={"reference": 2e9, "unit": "TFLOP/s", "fraction": 0.5}, repeat=1)]'
timeout 120 "$ZB" accept "$tmp/high.json" --junit "$tmp/high.xml" --json "$tmp/high.out.json" >"$tmp/high.out" 2>&1
check [ $? -eq 1 ]
check grep -q "^FAIL  gemm_256_gflops: tflops .* TFLOP/s, threshold >= 1e+09 TFLOP/s (0.5 x 2e+09 TFLOP/s), margin -100 % (best of 1: .*) at gemm shape0 256x256x256" "$tmp/high.out"
check grep -q "reason: 1 of 1 judged run(s) below the threshold" "$tmp/high.out"
check grep -q "^# FAILED: 1 of 2 check(s) failed" "$tmp/high.out"
report_matches "$tmp/high.out" "$tmp/high.xml" "$tmp/high.out.json" || fail=1

# fail fast: a node that shows the wrong number of devices runs nothing else
derive degraded 'p["checks"] = [{"name": "gpus", "kind": "devices", "backend": "cuda", "per_node": 1024, "source": "test"}] + [c for c in p["checks"] if c.get("bench") == "gemm"]'
timeout 120 "$ZB" accept "$tmp/degraded.json" --junit "$tmp/degraded.xml" --json "$tmp/degraded.out.json" >"$tmp/degraded.out" 2>&1
check [ $? -eq 1 ]
check grep -q "^FAIL  gpus: " "$tmp/degraded.out"
check grep -q "^SKIP  gemm_256_gflops: .*" "$tmp/degraded.out"
check grep -q "reason: not run: the devices check 'gpus' failed" "$tmp/degraded.out"
report_matches "$tmp/degraded.out" "$tmp/degraded.xml" "$tmp/degraded.out.json" || fail=1

# a rank slowed on purpose (the test hook adds compute to rank 1's steps) is
# named by the straggler check
derive stragglers 'p["checks"] = [dict(c, repeat=1) for c in p["checks"] if c["kind"] == "straggler"]'
ZB_TEST_DELAY_RANK=1:50 timeout 120 "$ZB" accept "$tmp/stragglers.json" --json "$tmp/stragglers.out.json" \
  >"$tmp/stragglers.out" 2>&1
check [ $? -eq 1 ]
check grep -q "^FAIL  step_stragglers: slowest rank .* above the median compute_ms, threshold <= .* (.* x .* %), margin -.* %" "$tmp/stragglers.out"
check grep -q "failed: rank 1 (host [^)]*): compute_ms .* against the median" "$tmp/stragglers.out"
python3 - "$tmp/stragglers.out.json" <<'PY' || fail=1
import json, sys
from zbcheck import check, finish
c = json.load(open(sys.argv[1]))["checks"][0]
check(c["verdict"] == "fail" and [x["rank"] for x in c["culprits"]] == [1], f"culprits {c['culprits']}")
t = c["threshold"]
check(c["measured"] > t and c["culprits"][0]["deviation_pct"] > t and c["margin_pct"] < 0, "deviation over the threshold")
finish("stragglers")
PY

# bad profiles: exit 2, one line naming the file and the field, no output files
bad() {
  local name=$1 want=$2
  timeout 120 "$ZB" accept "$tmp/$name.json" --junit "$tmp/$name.xml" --json "$tmp/$name.out.json" >"$tmp/$name.out" 2>"$tmp/$name.err"
  local rc=$?
  if [ $rc -ne 2 ] || ! grep -q -- "$want" "$tmp/$name.err" || [ "$(wc -l <"$tmp/$name.err")" -ne 1 ] ||
    [ -e "$tmp/$name.xml" ] || [ -e "$tmp/$name.out.json" ]; then
    echo "FAIL: bad profile $name: exit $rc, expected 2 with '$want' on one line and no output file"
    show "$tmp/$name.err"
    fail=1
  else
    passed=$((passed + 1))
  fi
}
derive no_source 'del p["checks"][1]["source"]'
bad no_source "$tmp/no_source.json': checks\[1\] (gemm_256_gflops): missing field \"source\""
derive no_threshold 'del p["checks"][1]["min"]'
bad no_threshold "checks\[1\] (gemm_256_gflops): expected exactly one of the fields \"min\" and \"max\""
derive typed_threshold 'p["checks"][1]["min"] = 0.001'
bad typed_threshold "checks\[1\] (gemm_256_gflops): field \"min\": 0.001 (accepted: {\"reference\", \"unit\", \"fraction\"}"
derive bad_fraction 'p["checks"][2]["min"]["fraction"] = 2'
bad bad_fraction "checks\[2\] (allgather_busbw_4M): field \"min.fraction\": 2 (accepted: a number in (0, 1\]"
derive no_checks 'del p["checks"]'
bad no_checks "no_checks.json': missing field \"checks\""
derive unknown_bench 'p["checks"][1]["bench"] = "matmul"'
bad unknown_bench "checks\[1\] (gemm_256_gflops): field \"bench\": unknown benchmark 'matmul' (accepted: step, .*gemm"
derive unknown_metric 'p["checks"][1]["metric"] = "gflops"'
bad unknown_metric "field \"metric\": unknown metric 'gflops'"
derive refused_args 'p["checks"] = [dict(p["checks"][1], args=["--shape", "0x1x1"], repeat=1)]'
bad refused_args "checks\[0\] (gemm_256_gflops): zerobench gemm refused its arguments: .*--shape"
printf '{"name": "x", "checks": [' >"$tmp/broken.json"
bad broken "broken.json': not JSON"
bad nosuch "nosuch.json': No such file or directory"
"$ZB" accept no_such_profile >"$tmp/np.out" 2>"$tmp/np.err"
check [ $? -eq 2 ]
check grep -q "no profile 'no_such_profile' in .*/accept (available: .*cpu-smoke" "$tmp/np.err"
"$ZB" accept cpu-smoke --junit /nonexistent/dir/x.xml >"$tmp/nd.out" 2>"$tmp/nd.err"
check [ $? -eq 2 ]
check grep -q "^zerobench accept: --junit '/nonexistent/dir/x.xml': its folder does not exist or is not writable" "$tmp/nd.err"
check [ ! -s "$tmp/nd.out" ]
# under mpirun (rank variables set) it refuses to start: its children are MPI jobs
OMPI_COMM_WORLD_SIZE=2 "$ZB" accept cpu-smoke --junit "$tmp/mpi.xml" >"$tmp/mpi.out" 2>"$tmp/mpi.err"
check [ $? -eq 2 ]
check grep -q "start it outside mpirun/srun (OMPI_COMM_WORLD_SIZE is set)" "$tmp/mpi.err"
check [ ! -e "$tmp/mpi.xml" ]
# the shipped GPU profiles are valid (--dry-run: checked, printed, nothing run)
for hw in h100_sxm_8x h200_sxm_8x; do
  "$ZB" accept $hw --dry-run >"$tmp/$hw.out" 2>&1
  check [ $? -eq 0 ]
  check grep -q "^gpus_per_node: count the cuda devices of this node, expected 8" "$tmp/$hw.out"
  check grep -q "allgather .* --json FILE" "$tmp/$hw.out"
done
[ $fail -eq 0 ] && echo "test_accept: $passed checks passed" || exit 1
