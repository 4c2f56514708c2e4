#!/usr/bin/env bash
# --rotate-bytes (cold buffers, as a training step's collectives see them;
# calibrate's sweeps use it): on 2 ranks every collective still checks out
# (-c 1: the first part holds the seeded input, the check reads it), the
# run says what it did in a note and in the JSON (rotate_bytes, part of the
# run's identity: compare does not pair a cold run with a warm one), a span
# smaller than -e is one part; --compare-direct with it, bad sizes and a
# span past the rank's memory exit 2 with one line naming the flag.
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for coll in allgather reducescatter allreduce; do
  expect_rc 0 "$tmp/$coll" mpirun --oversubscribe -np 2 "$ZB" "$coll" -b 4K -e 256K -f 4 -n 5 -w 2 -c 1 \
    --rotate-bytes 2M --json "$tmp/$coll.json"
  check grep -q "^# Out of bounds values : 0 OK" "$tmp/$coll.out"
  check grep -q "^# --rotate-bytes: each call on the next part of send and receive buffers of 2M each" "$tmp/$coll.out"
done
# a span below -e: one part, still a cold-buffer run by its flag
expect_rc 0 "$tmp/small" mpirun --oversubscribe -np 2 "$ZB" allgather -b 64K -e 64K -n 3 -w 1 -c 1 \
  --rotate-bytes 4K --json "$tmp/small.json"
check grep -q "^# Out of bounds values : 0 OK" "$tmp/small.out"
expect_rc 0 "$tmp/warm" mpirun --oversubscribe -np 2 "$ZB" allgather -b 4K -e 256K -f 4 -n 5 -w 2 -c 1 \
  --json "$tmp/warm.json"
python3 - "$tmp" <<'PY' || fail=1
import json, sys
from zbcheck import check, finish
d = sys.argv[1]
for coll in ("allgather", "reducescatter", "allreduce"):
    runs = json.load(open(f"{d}/{coll}.json"))["runs"]
    check(len(runs) == 8 and all(r.get("rotate_bytes") == 2 << 20 for r in runs), f"{coll}: rotate_bytes in every run")
    check(all(r["metrics"]["wrong"] == 0 for r in runs), f"{coll}: no wrong element")
check(all(r.get("rotate_bytes") == 4096 for r in json.load(open(f"{d}/small.json"))["runs"]), "small span recorded")
check(all("rotate_bytes" not in r for r in json.load(open(f"{d}/warm.json"))["runs"]), "no key without the flag")
finish("rotate json")
PY
# cold against warm: another measurement, no run matches (exit 2)
expect_rc 2 "$tmp/cmp" "$ZB" compare "$tmp/warm.json" "$tmp/allgather.json"
check grep -q "matches a run of .* rotate_bytes=2097152" "$tmp/cmp.err"
expect_rc 0 "$tmp/cmp_same" "$ZB" compare "$tmp/allgather.json" "$tmp/allgather.json"
cd "$tmp"
expect2 direct "--rotate-bytes and --compare-direct exclude each other" \
  "$ZB" allgather -b 4K -e 4K -n 1 --rotate-bytes 1M --compare-direct
expect2 badsize "--rotate-bytes" "$ZB" allgather -b 4K -e 4K -n 1 --rotate-bytes 12Q
expect2 toobig "--rotate-bytes" "$ZB" allgather -b 4K -e 4K -n 1 --rotate-bytes 1T
[ $fail -eq 0 ] && echo "test_coll_rotate: $passed checks passed"
exit $fail
