#!/usr/bin/env bash
# The memory check of the benchmarks that allocate buffers sized by their
# flags (bench/bench_mem.c): a size whose buffers cannot fit the memory a
# rank has is refused with exit 2 and one line naming the flag, the bytes
# needed and the memory a rank has, before anything is allocated (run under
# `ulimit -v`, an allocation attempt would fail with exit 1 instead: shown
# by --force); --force lets a run the check refuses through; runs that fit
# are unaffected. Sizes come from this machine's memory, so the refusals
# hold on any machine; the two reproductions of issue 24 run as given
# where they cannot fit.
set -u
source "$(dirname "$0")/../lib.sh"
: "${ZB:?ZB must name the zerobench binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mem_kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
mem_bytes=$((mem_kb * 1024))
# A virtual-memory cap below any refused size: an allocation of it fails.
cap_kb=$((4 * 1024 * 1024))
# -e of a whole number of GiB at least the machine's memory: its three
# buffers per rank cannot fit.
too_big_g=$(((mem_kb + 1048575) / 1048576))G

# refused NAME NEEDLE CMD...: exit 2 within 60 s under the cap, and exactly
# one zerobench line on stderr naming NEEDLE, the need and the memory.
refused() {
    local name=$1 needle=$2
    shift 2
    local rc=0
    (ulimit -v "$cap_kb"; timeout 60 "$@") >"$tmp/$name.out" 2>"$tmp/$name.err" </dev/null || rc=$?
    local lines
    lines=$(grep -c '^zerobench: ' "$tmp/$name.err")
    if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q "^zerobench: $needle: .* needs .* GB of .* memory per rank .* but a rank has .* GB .*--force" "$tmp/$name.err"; then
        echo "FAIL: $name: exit $rc (want 2), $lines zerobench line(s), want one naming '$needle'"
        show "$tmp/$name.err"
        return 1
    fi
    if grep -q '^# zerobench' "$tmp/$name.out"; then
        echo "FAIL: $name: refused after the run's header (want before any work)"
        return 1
    fi
}

ran() { # ran NAME CMD...: exit 0 within 120 s
    local name=$1
    shift
    local rc=0
    timeout 120 "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" </dev/null || rc=$?
    [ "$rc" -eq 0 ] || { echo "FAIL: $name: exit $rc"; show "$tmp/$name.err"; return 1; }
}

# Each collective, 2 ranks sharing the node's memory, and gemm.
for c in allgather reducescatter allreduce; do
    check refused "$c" "-e/--maxbytes $too_big_g" mpirun -np 2 "$ZB" "$c" --backend cpu -b 1K -e "$too_big_g"
done
# M=N=K so that gemm's buffers cannot fit: on cpu 6 float matrices (A, B, C
# and their host copies), on the sim the 3 host copies (it allocates no
# device memory).
side() { python3 -c "import math; print(math.ceil(math.sqrt($mem_bytes / $1)) + 1)"; }
dim=$(side 24)
sim_dim=$(side 12)
check refused gemm "--shape ${dim}x${dim}x${dim}" "$ZB" gemm --backend cpu --shape "${dim}x${dim}x${dim}"
check refused gemm_sweep "-e/--maxbytes $dim" "$ZB" gemm --backend cpu -b "$dim" -e "$dim"
# (the sim reserves address space for the memory it models: no cap)
cap_kb=unlimited check refused gemm_sim "--shape ${sim_dim}x${sim_dim}x${sim_dim}" "$ZB" gemm --backend sim --hw h100_sxm \
    --shape "${sim_dim}x${sim_dim}x${sim_dim}"
grep -q 'of host memory per rank (float host copies of A, B and C)' "$tmp/gemm_sim.err" \
    || { echo "FAIL: gemm on the sim: its host copies, not its (simulated) device buffers"; fail=1; }
# The message's figures: 3 x -e per rank against the node's memory / 2.
python3 - "$tmp/allgather.err" "$too_big_g" "$mem_bytes" <<'PY' || fail=1
import re, sys
from zbcheck import check, finish
line = open(sys.argv[1]).read().splitlines()[0]
e = int(sys.argv[2][:-1]) * 2**30
m = re.search(r"needs ([0-9.e+]+) GB of host memory per rank .* a rank has ([0-9.e+]+) GB "
              r"\(machine memory ([0-9.e+]+) GB / 2 rank\(s\) on the machine\)", line)
check(m is not None, "figures in: " + line)
if m:
    need, have, node = (float(x) * 1e9 for x in m.groups())
    check(abs(need - 3 * e) <= 0.01 * need, f"need {need} vs 3 x {e}")
    check(abs(node - int(sys.argv[3])) <= 0.01 * node, f"node memory {node} vs {sys.argv[3]}")
    check(abs(have - node / 2) <= 0.01 * have, f"per rank {have} vs {node} / 2")
finish()
PY

# The reproductions of issue 24 (24 GiB machine), where they cannot fit.
if [ "$mem_bytes" -lt $((6 * 16 * 1024 * 1024 * 1024)) ]; then
    check refused repro_allgather "-e/--maxbytes 16G" mpirun -np 2 "$ZB" allgather --backend cpu -b 16G -e 16G
fi
if [ "$mem_bytes" -lt 38400000000 ]; then
    check refused repro_gemm "--shape 40000x40000x40000" "$ZB" gemm --backend cpu --shape 40000x40000x40000
fi

# --force skips the check: the refused allgather now tries to allocate, and
# fails under the cap (exit 1, out of host memory) instead of exit 2.
rc=0
(ulimit -v "$cap_kb"; timeout 60 mpirun -np 2 "$ZB" allgather --backend cpu -b 1K -e "$too_big_g" --force) \
    >"$tmp/force_big.out" 2>"$tmp/force_big.err" </dev/null || rc=$?
if [ "$rc" -ne 1 ] || ! grep -q 'out of host memory' "$tmp/force_big.err"; then
    echo "FAIL: --force with -e $too_big_g: exit $rc, want 1 from the allocation"
    show "$tmp/force_big.err"
    fail=1
fi

# A hardware profile of 1 MB per rank: small runs are refused (the device
# memory of the profile), and run with --force.
python3 - "$ZB_TESTS_DIR/../profiles/hw/cpu.json" "$tmp/small.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["name"], d["mem_bytes"] = "cpu-1MB", 1000000
d["sources"]["mem_bytes"] = "test: 1 MB per rank"
json.dump(d, open(sys.argv[2], "w"))
PY
check refused small_ag "-e/--maxbytes 1M" mpirun -np 2 "$ZB" allgather --backend cpu -b 1M -e 1M -n 2 -w 1 \
    --hw "$tmp/small.json"
grep -q 'device memory of hardware profile cpu-1MB' "$tmp/small_ag.err" \
    || { echo "FAIL: the 1 MB profile is not named"; fail=1; }
check refused small_gemm "--shape 512x512x512" "$ZB" gemm --backend cpu --shape 512x512x512 -n 1 -w 0 \
    --hw "$tmp/small.json"
check ran force_ag mpirun -np 2 "$ZB" allgather --backend cpu -b 1M -e 1M -n 2 -w 1 --hw "$tmp/small.json" \
    --force --json "$tmp/force.json"
check ran force_gemm "$ZB" gemm --backend cpu --shape 512x512x512 -n 1 -w 0 --hw "$tmp/small.json" --force

# Runs that fit are unaffected, and the JSON says whether --force was given.
check ran fits_ag mpirun -np 2 "$ZB" allgather --backend cpu -b 1K -e 64K -n 2 -w 1 --json "$tmp/fits.json"
check ran fits_gemm "$ZB" gemm --backend cpu -n 1 -w 0
python3 - "$tmp" <<'PY' || fail=1
import json, sys
from zbcheck import check, finish
d = sys.argv[1]
fits, forced = json.load(open(f"{d}/fits.json")), json.load(open(f"{d}/force.json"))
check(fits["meta"]["config"]["force"] is False, "fits.json: config.force false")
check(forced["meta"]["config"]["force"] is True, "force.json: config.force true")
check(len(fits["runs"]) == 14 and all(r["metrics"]["wrong"] == 0 for r in fits["runs"]), "fits.json runs")
check(len(forced["runs"]) == 2 and all(r["metrics"]["wrong"] == 0 for r in forced["runs"]), "force.json runs")
finish()
PY

echo "test_mem_check: $passed passed"
exit $fail
