#!/usr/bin/env bash
# The cluster in a box (ci/cluster), small: 2 emulated nodes of 1 rank joined
# by 200 Mbit/s links. Checks that zerobench sees 2 nodes (per_rank host and
# node), that the all-gather's busbw does not exceed the shaped rate (the
# physical limit, so a measurement above it is wrong), that a tiny ZeRO-3
# step runs across the nodes, that calibrate there writes a profile the sim
# runs a 2-node step on without a borrowed one, and that a link taken down
# mid-run ends the job on its own (not killed by timeout(1): 124) with
# zerobench's message naming the rank and the collective. Exit 77 (skipped)
# without root or network namespaces. Nothing here times anything but the
# bandwidth bounds (the busbw's and the fitted links').
set -u
source "$(dirname "$0")/../lib.sh"
zb="${ZB:?ZB not set (the zerobench binary)}"
cluster="$ZB_TESTS_DIR/../ci/cluster"
prefix=zbt$$
prefix=${prefix:0:8}

if [ "$(id -u)" -ne 0 ]; then echo "test_cluster: SKIP: needs root (network namespaces)"; exit 77; fi
for tool in ip tc unshare flock; do
  command -v "$tool" >/dev/null || { echo "test_cluster: SKIP: no $tool"; exit 77; }
done
if ! ip netns add "$prefix-probe" 2>/dev/null; then echo "test_cluster: SKIP: cannot make a network namespace"; exit 77; fi
ip netns del "$prefix-probe"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; "$cluster" --prefix "$prefix" down >/dev/null 2>&1 || true' EXIT
box() { timeout 100 "$cluster" --prefix "$prefix" --rate 200mbit "$@"; }

# 1. all-gather across 2 nodes: 4 MiB gathered, 2 MiB each way per call.
box run --timeout 60 -- "$zb" allgather -b 4M -e 4M -n 3 -w 1 --nodes 2 --gpus-per-node 1 \
  --json "$tmp/ag.json" >"$tmp/ag.out" 2>&1
rc=$?
check [ "$rc" -eq 0 ]
check python3 - "$tmp/ag.json" "$prefix" <<'EOF'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
prefix = sys.argv[2]
rate = 200e6 / 8 / 1e9  # GB/s (1e9 B/s), as busbw
ok = bool(runs)
for r in runs:
    hosts = sorted({p["host"] for p in r["per_rank"]})
    nodes = sorted({p["node"] for p in r["per_rank"]})
    ok &= hosts == [prefix + "-node0", prefix + "-node1"] and nodes == [0, 1] and r["nodes"] == 2
    busbw = r["metrics"]["busbw_gbps"]
    # 1 rank per node: busbw is what each rank sends, at most the rate.
    ok &= 0 < busbw <= rate * 1.05
    print(f"in_place={r['in_place']} hosts={hosts} nodes={nodes} busbw={busbw:.4f} GB/s (rate {rate:.4f})")
sys.exit(0 if ok else 1)
EOF
[ $fail -eq 0 ] || show "$tmp/ag.out"

# 2. a tiny ZeRO-3 step across the nodes.
box run --timeout 60 -- "$zb" step --mode sync --steps 2 --warmup 0 --nodes 2 --gpus-per-node 1 \
  --json "$tmp/step.json" >"$tmp/step.out" 2>&1
rc=$?
check [ "$rc" -eq 0 ]
check python3 -c '
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
sys.exit(0 if runs and all(sorted({p["node"] for p in r["per_rank"]}) == [0, 1] for r in runs) else 1)' "$tmp/step.json"
[ $fail -eq 0 ] || show "$tmp/step.out"

# 2b. calibrate across the nodes, then the sim on that profile alone (no
# --base: every parameter a 2-node x 1-rank sim needs is fitted here). Each
# collective's inter-node bandwidth is at most the shaped rate (the physical
# limit, within the fit's noise) and above half of it (at 256K-1M a call sends 128-512K each way,
# past the shaper's 25K burst). The sweeps and steps kept small.
box run --timeout 90 -- "$zb" calibrate -o "$tmp/cal.json" --quick --coll-min 256K --coll-max 1M \
  --gemm-max 64 --nodes 2 --gpus-per-node 1 >"$tmp/cal.out" 2>&1
rc=$?
check [ "$rc" -eq 0 ]
check python3 - "$tmp/cal.json" <<'EOF'
import json, sys
prof = json.load(open(sys.argv[1]))
rate = 200e6 / 8  # bytes/s
nic = prof.get("nic_bytes_per_s", 0)
colls = prof["calibration"]["collectives"]
inter = [colls[k]["inter_node"] for k in ("allgather", "reducescatter", "allreduce")]
# a fitted slope, not a measurement: 10 % over the rate allowed for the fit's
# noise (a loaded machine slows the small sizes, the intercept takes it, the
# slope steepens: 1.07x seen on CI), where two NICs' worth would be 2x
ok = 0.5 * rate < nic <= 1.10 * rate
ok &= all(c and 0.5 * rate < c["bandwidth_bytes_per_s"] <= 1.10 * rate for c in inter)
# the fit is the bus bandwidth measured, the node's NICs included: counted as one
ok &= prof.get("nics_per_node") == 1 and prof["sources"]["nics_per_node"].startswith("calibrated")
print(f"nic {nic / 1e6:.2f} MB/s (rate {rate / 1e6:.2f}); inter-node", [c and round(c["bandwidth_bytes_per_s"] / 1e6, 2) for c in inter])
sys.exit(0 if ok else 1)
EOF
"$zb" step --backend sim --hw "$tmp/cal.json" --nodes 2 --gpus-per-node 1 --mode both --steps 2 --warmup 0 \
  --json "$tmp/sim.json" >"$tmp/sim.out" 2>&1
rc=$?
check [ "$rc" -eq 0 ]
check python3 -c '
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
sys.exit(0 if len(runs) == 2 and all(r["simulated"] and r["metrics"]["comm_ms"] > 0 for r in runs) else 1)' "$tmp/sim.json"
[ $fail -eq 0 ] || { show "$tmp/cal.out"; show "$tmp/sim.out"; }

# 3. node 1's link down 3 s into a long all-gather (each call 1.3 s at this
# rate): rank 0 gives up after --timeout 5 naming itself and the collective
# it was in, and the job ends by itself (exit 1; 124 would be a hang).
box run --timeout 80 --fault link-down:1 --fault-after 3 -- "$zb" allgather -b 64M -e 64M -n 50 -w 0 \
  --nodes 2 --gpus-per-node 1 --timeout 5 >"$tmp/down.out" 2>&1
rc=$?
check [ "$rc" -ne 0 ]
check [ "$rc" -ne 124 ]
check grep -q "cluster: fault link-down on node 1" "$tmp/down.out"
check grep -Eq "rank 0: (allgather|barrier) '[a-z]+' \(unit -?[0-9]+\) did not complete within 5 s \(--timeout\)" "$tmp/down.out"
[ $fail -eq 0 ] || { echo "(link-down: exit $rc)"; show "$tmp/down.out"; }

# Nothing of the box is left.
check [ -z "$(ip netns list | grep "^$prefix-" || true)" ]
check [ ! -e "/run/zbc-$prefix" ]
check [ ! -e "/etc/netns/$prefix-n0" ]
[ $fail -eq 0 ] && echo "test_cluster: $passed passed, 0 failed"
exit $fail
