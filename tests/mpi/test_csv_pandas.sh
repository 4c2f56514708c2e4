#!/usr/bin/env bash
# The CSV as pandas reads it: a 2-rank cpu step (--mode both), a 2-rank
# sim step (--mode both), a cpu step of another stage and schedule (stage 0,
# sync), a cpu and a sim all-gather. The step CSVs have one column list, in
# one order, whatever the backend, stage or schedule (the device view, the
# collectives of another stage and the paired figures keep their columns,
# empty); so do the two all-gathers. Every column whose JSON values are
# numbers or booleans reads as int64 or float64, never object (booleans are
# 1/0, so the sync row's empty paired cells stay numeric); a column has one
# dtype in both files wherever both hold a value. The identity columns
# carry the meta's date, git describe, hosts, command line, backend and
# comm. pandas is installed into a venv in the build folder the first time
# (skipped, 77, when that is impossible, e.g. without network).
set -u
source "$(dirname "$0")/../lib.sh"
venv="$ZB_TEST_BIN_DIR/pyenv-pandas"
if ! "$venv/bin/python" -c "import pandas" 2>/dev/null; then
  { python3 -m venv "$venv" && timeout 300 "$venv/bin/pip" install --disable-pip-version-check -q pandas; } \
    >"$ZB_TEST_BIN_DIR/pyenv-pandas.log" 2>&1
  "$venv/bin/python" -c "import pandas" 2>/dev/null ||
    { echo "SKIP: pandas could not be installed into $venv (see $ZB_TEST_BIN_DIR/pyenv-pandas.log)"; exit 77; }
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # NAME ARGS...: a zerobench run writing NAME.csv and NAME.json
  local name=$1
  shift
  "$@" --csv "$tmp/$name.csv" --json "$tmp/$name.json" >"$tmp/$name.out" 2>&1 ||
    { echo "FAIL: $name: $*"; show "$tmp/$name.out"; fail=1; }
}
run cpu mpirun --oversubscribe -np 2 "$ZB" step --mode both --steps 3 --warmup 1
run sim "$ZB" step --backend sim --gpus-per-node 2 --mode both --steps 3 --warmup 1
run cpu0 mpirun --oversubscribe -np 2 "$ZB" step --mode sync --stage 0 --steps 3 --warmup 1
run ag mpirun --oversubscribe -np 2 "$ZB" allgather -b 64K -e 256K -f 4 -n 3 -w 1
run agsim "$ZB" allgather --backend sim --gpus-per-node 2 -b 64K -e 256K -f 4 -n 3 -w 1
[ $fail -eq 0 ] || exit 1
"$venv/bin/python" - "$tmp" <<'PY' || fail=1
import json, sys
import pandas as pd
from pandas.api.types import is_numeric_dtype, is_bool_dtype
from zbcheck import check, finish
d = sys.argv[1]
# git describe and host names are text even when they look like numbers
TEXT = {"meta.git_describe": str, "meta.hosts": str}
IDENTITY = ["meta.date_utc", "meta.git_describe", "meta.hosts", "meta.command_line", "meta.backend", "meta.comm"]

def flat(o, prefix=""):
    for k, v in o.items():
        if isinstance(v, dict):
            yield from flat(v, f"{prefix}{k}.")
        elif not isinstance(v, list):
            yield f"{prefix}{k}", v

def load(name):
    df = pd.read_csv(f"{d}/{name}.csv", dtype=TEXT)
    doc = json.load(open(f"{d}/{name}.json"))
    check(list(df.columns[:6]) == IDENTITY, f"{name}: the identity columns lead")
    meta = doc["meta"]
    want = [meta["date_utc"], meta["git_describe"], " ".join(meta["hosts"]), meta["command_line"], meta["backend"],
            meta["comm"]]
    check(all(list(df[c]) == [w] * len(df) for c, w in zip(IDENTITY, want)), f"{name}: identity cells from the meta")
    check(len(df) == len(doc["runs"]), f"{name}: a line per run")
    numeric = {k for r in doc["runs"] for k, v in flat(r) if isinstance(v, (bool, int, float))}
    for c in df.columns: # text is object (pandas 2) or str (pandas 3); numbers never object
        if c in numeric:
            check(is_numeric_dtype(df[c]) and not is_bool_dtype(df[c]), f"{name}: {c} is {df[c].dtype}, not numeric")
    return df

def same(a, b, what):
    A, B = load(a), load(b)
    check(list(A.columns) == list(B.columns),
          f"{what}: columns differ: only {a} {sorted(set(A.columns) - set(B.columns))}, "
          f"only {b} {sorted(set(B.columns) - set(A.columns))}")
    for c in A.columns:
        if c in B.columns and A[c].notna().any() and B[c].notna().any():
            check(A[c].dtype == B[c].dtype, f"{what}: {c} is {A[c].dtype} in {a}, {B[c].dtype} in {b}")
    return A, B

cpu, sim = same("cpu", "sim", "step cpu vs sim")
same("cpu", "cpu0", "step stage 3 both vs stage 0 sync")
same("ag", "agsim", "allgather cpu vs sim")
for c in ("metrics.paired.step_diff_significant", "metrics.paired.hidden_significant", "metrics.fits", "simulated"):
    check(c in cpu.columns and cpu[c].dtype in ("int64", "float64"), f"{c}: 1/0, numeric")
sig = cpu["metrics.paired.step_diff_significant"]
check(sig[cpu["mode"] == "sync"].isna().all() and sig[cpu["mode"] == "prefetch"].isin([0, 1]).all(),
      "paired significance: empty for sync, 0/1 for prefetch")
for c in ("metrics.device_used_high_bytes", "metrics.by_collective.allreduce.transfer_ms"):
    check(c in cpu.columns and cpu[c].isna().all(), f"{c}: a column, empty where not measured")
check(not any(".samples." in c or c in ("per_rank", "stragglers") for c in cpu.columns), "arrays are JSON only")
finish("test_csv_pandas")
PY
[ $fail -eq 0 ] && echo "test_csv_pandas: passed" || exit 1
