#!/usr/bin/env python3
"""ci/gpu-check's CUPTI trace check (section 6), apart so that it is tested
on canned JSON (tests/cli/test_gpu_trace_check.sh).

Usage: gpu-trace-check.py TRACE.json STEP.json
TRACE.json is the step's --trace export, STEP.json its --json document.
Passes (exit 0, one summary line) when the trace has compute and comm
records, every step run of 2 or more ranks measured its overlap (with one
rank no bytes go between ranks and overlap is null by design), the harness's
trace buffer
dropped nothing, and the device tracer reported its own losses
(docs/design.md §7, the tracer_* metrics) and every one is zero; a null
tracer count means no tracer ran, which on cuda is a failure too.
Otherwise exits with that line on stderr (status 1)."""
import json
import sys

TRACER_KEYS = ("tracer_records_dropped", "tracer_zero_timestamps", "tracer_inverted_records",
               "tracer_buffer_errors")


def check(trace_path, step_path):
    events = [e for e in json.load(open(trace_path))["traceEvents"] if e.get("ph") == "X"]
    kinds = {}
    for e in events:
        kinds[e.get("cat")] = kinds.get(e.get("cat"), 0) + 1
    runs = [r for r in json.load(open(step_path))["runs"] if r.get("bench") == "step"]
    if not runs:
        return False, "no step runs in %s" % step_path
    dropped = sum(r["metrics"].get("trace_records_dropped") or 0 for r in runs)
    overlap = [r["metrics"].get("overlap_pct") for r in runs]
    unmeasured = [r for r in runs if (r.get("ranks") or 1) > 1 and r["metrics"].get("overlap_pct") is None]
    missing = sorted({k for r in runs for k in TRACER_KEYS if r["metrics"].get(k) is None})
    losses = {k[len("tracer_"):]: sum(r["metrics"].get(k) or 0 for r in runs) for k in TRACER_KEYS}
    msg = "records %s, dropped %d, CUPTI losses %s, overlap %s%%" % (
        dict(sorted(kinds.items())), dropped, ", ".join("%s %d" % kv for kv in losses.items()), overlap)
    if missing:
        msg += "; no tracer counts (%s null)" % ", ".join(missing)
    ok = (kinds.get("compute") and kinds.get("comm") and not dropped and not unmeasured
          and not missing and not any(losses.values()))
    return bool(ok), msg


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: gpu-trace-check.py TRACE.json STEP.json")
    ok, msg = check(argv[1], argv[2])
    if not ok:
        sys.exit(msg)  # stderr, status 1
    print(msg)


if __name__ == "__main__":
    main(sys.argv)
