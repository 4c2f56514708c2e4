#!/usr/bin/env python3
"""Reads a simulated sync-vs-prefetch step (zerobench step --backend sim
--mode both --json FILE) and prints its reading: one sentence computed from
the figures of the two runs, never written by hand. Used by ci/demo."""
import json
import sys


def reading(doc):
    runs = {r["mode"]: r for r in doc["runs"] if r.get("bench") == "step"}
    if "sync" not in runs or "prefetch" not in runs:
        raise ValueError("needs a sync and a prefetch run of one stage (--mode both)")
    s, p = runs["sync"]["metrics"], runs["prefetch"]["metrics"]
    r = runs["prefetch"]
    mem_gib = p["peak_mem_bytes"] / 2**30
    faster = 100.0 * (1.0 - p["step_time_ms"] / s["step_time_ms"])
    bound = "communication" if p["comm_ms"] > p["compute_ms"] else "compute"
    hidden = p.get("hidden_pct")
    hidden_text = f"hides {hidden:.0f}% of the {s['exposed_comm_ms']:.0f} ms sync leaves exposed" \
        if hidden is not None else "hides none of the exposed communication"
    return (f"Simulated {r['model']} at ZeRO-{r['stage']} on {r['nodes']} node(s), {r['ranks']} GPUs: prefetch "
            f"takes {p['step_time_ms']:.0f} ms per step against {s['step_time_ms']:.0f} ms in sync "
            f"({faster:.0f}% less), {hidden_text} (overlap {p['overlap_pct']:.0f}%, "
            f"{p['exposed_comm_ms']:.0f} ms still exposed), MFU {s['mfu_pct']:.1f}% -> {p['mfu_pct']:.1f}% at "
            f"{p['tokens_per_s']:.0f} tokens/s; compute runs {p['compute_slowdown_pct']:.0f}% slower beside the "
            f"collectives, and with {p['comm_ms']:.0f} ms of communication against {p['compute_ms']:.0f} ms of "
            f"compute the step is {bound}-bound; prefetch peaks at {mem_gib:.1f} GiB per GPU.")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: ci/sim-reading.py STEP.json")
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    if not doc.get("meta", {}).get("simulated"):
        sys.exit(f"{sys.argv[1]}: not a simulated run (meta.simulated is not true)")
    print(reading(doc))
