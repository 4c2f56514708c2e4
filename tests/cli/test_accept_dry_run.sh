#!/usr/bin/env bash
# accept --dry-run refuses what the real run refuses (issue 24: safe on
# hostile inputs): an unknown flag on accept's own command line, and a
# profile whose checks hand a benchmark a flag or value it refuses, exit 2
# with one line naming it, as the real run does, and print no plan. A
# valid profile still prints its plan, each check's threshold as fraction x
# reference, and runs nothing.
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

smoke="$ZB_TESTS_DIR/../profiles/accept/cpu-smoke.json"
expect2 flag "unknown option '--bogus'" "$ZB" accept --dry-run --bogus
expect2 flag2 "unknown option '--bogus'" "$ZB" accept cpu-smoke --dry-run --bogus

# The same profile with a flag no benchmark has, in one check's args or in
# the args of every check, and with a value --shape refuses.
python3 - "$smoke" <<'EOF'
import json, sys
src = json.load(open(sys.argv[1]))
def variant(name, edit):
    p = json.loads(json.dumps(src))
    edit(p)
    json.dump(p, open(name, "w"))
variant("check_flag.json", lambda p: p["checks"][2]["args"].append("--bogus"))
variant("profile_flag.json", lambda p: p["args"].append("--bogus"))
variant("bad_value.json", lambda p: p["checks"][1]["args"].__setitem__(1, "abc"))
EOF
expect2 check_flag "checks[2] (allgather_busbw_4M): zerobench allgather refused its arguments: zerobench: unknown option '--bogus'" \
  "$ZB" accept check_flag.json --dry-run
expect2 profile_flag "checks[1] (gemm_256_gflops): zerobench gemm refused its arguments: zerobench: unknown option '--bogus'" \
  "$ZB" accept profile_flag.json --dry-run
expect2 bad_value "zerobench gemm refused its arguments: zerobench: --shape 'abc'" "$ZB" accept bad_value.json --dry-run
for name in flag flag2 check_flag profile_flag bad_value; do check test ! -s "$name.out"; done # no plan printed

# The valid profile: its plan, exit 0, no result files left in TMPDIR.
mkdir t
TMPDIR="$tmp/t" timeout 60 "$ZB" accept cpu-smoke --dry-run >ok.out 2>ok.err
check test $? -eq 0
check grep -q "not run (--dry-run)" ok.out
# each check's line ends with its threshold, fraction x reference
python3 - "$smoke" ok.out <<'PY' || fail=1
import json, sys
from zbcheck import check, finish
p, out = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
for c in p["checks"]:
    if c["kind"] == "devices":
        continue
    t = c.get("min") or c.get("max") or c.get("max_deviation_pct")
    op = ">=" if "min" in c else "<="
    want = f"{op} {t['fraction'] * t['reference']:.4g} {t['unit']} ({t['fraction']:.4g} x {t['reference']:.4g} {t['unit']})\n"
    check(f"{c['name']}: " in out and want in out, f"{c['name']}: '{want.strip()}' in the plan")
finish("dry-run thresholds")
PY
check test ! -s ok.err
check test -z "$(ls -A t)"

[ $fail -eq 0 ] && echo "test_accept_dry_run: $passed checks passed"
exit $fail
