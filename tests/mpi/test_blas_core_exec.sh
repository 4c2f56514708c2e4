#!/usr/bin/env bash
# --blas-core end to end: zerobench re-executes itself before MPI_Init with
# OPENBLAS_CORETYPE set when another core must run (blas_core.h), alone,
# as ranks of a user's mpirun and as ranks of the --nodes launcher. The
# library's own detection is forced weak with the test hook
# (ZB_TEST_BLAS_DETECTED=Prescott), so auto must pick a stronger core where
# the CPU supports one (skipped where it does not), keep must run Prescott,
# a user's OPENBLAS_CORETYPE is left alone, and every GEMM check finds 0
# wrong entries. Reads which core ran from the JSON meta and the per-rank
# header lines (openblas_get_corename() of each rank's process).
set -u
source "$(dirname "$0")/../lib.sh"
# The runs below set OPENBLAS_CORETYPE themselves where they mean to; one
# inherited from the caller's shell would clash with --blas-core.
unset OPENBLAS_CORETYPE
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
G=(gemm --shape 67x45x53 --shape 128x96x80 -n 2 -w 1 --peak-gflops 10)

# run NAME ENV... -- ARGS...: zerobench ARGS with ENV, JSON to $tmp/NAME.json
run() {
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" "$@" --json "$tmp/$name.json" >"$tmp/$name.out" 2>"$tmp/$name.err"
  local rc=$?
  [ $rc -eq 0 ] || { echo "FAIL: $name exited $rc"; show "$tmp/$name.err"; fail=1; }
}

run auto ZB_TEST_BLAS_DETECTED=Prescott -- "$ZB" "${G[@]}"
run keep ZB_TEST_BLAS_DETECTED=Prescott -- "$ZB" "${G[@]}" --blas-core keep
run user OPENBLAS_CORETYPE=Prescott -- "$ZB" "${G[@]}"
run named -- "$ZB" "${G[@]}" --blas-core prescott
run mpi_keep ZB_TEST_BLAS_DETECTED=Prescott -- mpirun --oversubscribe -np 2 "$ZB" "${G[@]}" --blas-core keep
run mpi_auto ZB_TEST_BLAS_DETECTED=Prescott -- mpirun --oversubscribe -np 2 "$ZB" "${G[@]}"
run nodes_keep ZB_TEST_BLAS_DETECTED=Prescott -- "$ZB" "${G[@]}" --blas-core keep --nodes 2 --gpus-per-node 1 \
  --emulate-nodes

# a named core against the user's variable, and a bad name: one line, exit 2
OPENBLAS_CORETYPE=Prescott "$ZB" "${G[@]}" --blas-core Haswell >"$tmp/clash.out" 2>"$tmp/clash.err"
check [ $? -eq 2 ]
check grep -q "blas-core Haswell: OPENBLAS_CORETYPE=Prescott" "$tmp/clash.err"
check [ "$(wc -l <"$tmp/clash.err")" -eq 1 ]
"$ZB" "${G[@]}" --blas-core fastest >"$tmp/bad.out" 2>"$tmp/bad.err"
check [ $? -eq 2 ]
check grep -q "blas-core 'fastest'" "$tmp/bad.err"
check [ ! -s "$tmp/bad.out" ]

python3 - "$tmp" <<'PY' || fail=1
import json, re, sys
from zbcheck import check, finish
d = sys.argv[1]
def load(name):
    r = json.load(open(f"{d}/{name}.json"))
    for x in r["runs"]:
        check(x["metrics"]["wrong"] == 0, f"{name}: {x['name']} has wrong entries")
    return r["meta"]["blas_core"], open(f"{d}/{name}.out").read()
def ranks_ran(out):
    return re.findall(r"#\s+rank\s+\d+: .* BLAS core (\S+)", out)

RANK = ["Prescott", "Core2", "Nehalem", "Sandybridge", "Haswell", "SkylakeX"]
auto, out = load("auto")
best = auto["best_supported"]
if best in RANK and RANK.index(best) > 0:
    check(auto["library_choice"] == "Prescott", f"auto: library choice {auto['library_choice']}")
    check(auto["ran"] == best, f"auto ran {auto['ran']}, the CPU supports {best}")
    check(auto["changed"] is True and auto["how"] == "auto", f"auto: {auto}")
    check(f"# BLAS core {best}: auto: OpenBLAS chose Prescott" in out, "auto: header line")
    a2, out2 = load("mpi_auto")
    check(a2["ran"] == best and ranks_ran(out2) == [best, best], f"mpirun auto: {ranks_ran(out2)}")
else:
    print(f"auto: skipped, the CPU supports nothing stronger than Prescott ({best})")
keep, out = load("keep")
check(keep["ran"] == "Prescott" and keep["how"] == "keep", f"keep: {keep}")
check("# BLAS core Prescott: keep" in out, "keep: header line")
user, out = load("user")
check(user["ran"] == "Prescott" and user["how"] == "OPENBLAS_CORETYPE" and not user["changed"], f"user: {user}")
check("left alone" in user["reason"], f"user: {user['reason']}")
named, _ = load("named")
check(named["ran"] == "Prescott" and named["how"] == "--blas-core", f"named: {named}")
for name in ("mpi_keep", "nodes_keep"):
    meta, out = load(name)
    check(ranks_ran(out) == ["Prescott", "Prescott"], f"{name}: ranks ran {ranks_ran(out)}")
finish("test_blas_core_exec")
PY
echo "test_blas_core_exec: $passed shell checks passed"
exit $fail
