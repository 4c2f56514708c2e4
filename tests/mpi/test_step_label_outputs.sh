#!/usr/bin/env bash
# The step names its model honestly: the profile alone when no shape flag is
# given, the profile plus the shape flags given ("tiny+dim=32,layers=1"),
# "custom" when every shape flag is given; the same label in the table's
# model line, the JSON runs' "model" and meta, and the trace's otherData.
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
S=(--mode sync --steps 1 --warmup 0)
"$ZB" "${S[@]}" --json "$tmp/plain.json" >"$tmp/plain.out" 2>&1
check [ $? -eq 0 ]
"$ZB" "${S[@]}" --layers 1 --dim 32 --json "$tmp/over.json" --trace "$tmp/over.trace.json" >"$tmp/over.out" 2>&1
check [ $? -eq 0 ]
"$ZB" "${S[@]}" --layers 1 --dim 32 --heads 2 --kv-heads 1 --head-dim 16 --ffn-dim 64 --vocab 64 --seq 8 \
  --batch 1 --json "$tmp/custom.json" --trace "$tmp/custom.trace.json" >"$tmp/custom.out" 2>&1
check [ $? -eq 0 ]
check grep -q "^# model tiny: " "$tmp/plain.out"
check grep -q "^# model tiny+dim=32,layers=1: 1 layers, dim 32" "$tmp/over.out"
check grep -q "^# model custom: 1 layers, dim 32, heads 2/1 kv" "$tmp/custom.out"
python3 - "$tmp" <<'PY' || fail=1
import json, sys
from zbcheck import check, finish
d = sys.argv[1]
for name, want in (("plain", "tiny"), ("over", "tiny+dim=32,layers=1"), ("custom", "custom")):
    r = json.load(open(f"{d}/{name}.json"))
    check(r["meta"].get("model") == want, f"{name}: meta.model {r['meta'].get('model')}")
    check(all(x["model"] == want for x in r["runs"]) and r["runs"], f"{name}: runs' model")
    if name != "plain":
        t = json.load(open(f"{d}/{name}.trace.json"))
        check(t["otherData"].get("model") == want, f"{name}: trace otherData.model {t['otherData'].get('model')}")
        check(t["otherData"].get("command") == "step", f"{name}: trace otherData.command")
finish("test_step_label_outputs")
PY
echo "test_step_label_outputs: $passed shell checks passed"
exit $fail
