#!/usr/bin/env python3
"""ci/gpu-check's side-by-side of zerobench and its PyTorch peer on one GPU
(bench/peers/torch_gpu.py), apart so that it is tested on canned JSON
(tests/cli/test_gpu_peer_compare.sh). Needs no torch.

Usage: gpu-peer-compare.py gemm ZB_GEMM.json PEER_GEMM.json
       gpu-peer-compare.py attention ZB_STEP.trace.json PEER_ATTN.json
       gpu-peer-compare.py step ZB_STEP.json PEER_STEP.json

gemm: per shape both medians' TFLOP/s and zerobench / torch (target >= 0.97).
attention: zerobench's attention per call from its CUPTI trace (the sync
run's fwd.attention and bwd.attention ops: each op's kernels summed, the
median over calls; prefetch is left out so comm kernels cannot slow it),
against SDPA's forward and backward on the same shape, with TFLOP/s under
the causal convention for both.
step: tokens/s and MFU side by side; the peer's MFU uses zerobench's own
model FLOPs per token and peak (the JSON's model_flops_per_token, and the
peak implied by its mfu_pct), so the two differ only by time (target:
zerobench's MFU >= the peer's).
One line per comparison on stdout; a target missed is said, not failed:
exit 1 only when an input is missing or malformed (the message on stderr)."""
import json
import statistics
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def gemm(zb_path, peer_path):
    zb = {r["shape"]: r["metrics"] for r in load(zb_path)["runs"] if r.get("bench") == "gemm"}
    peer = {r["shape"]: r for r in load(peer_path)["rows"]}
    common = [s for s in zb if s in peer]
    if not common:
        raise ValueError("no shape in both: zerobench %s, torch %s" % (sorted(zb), sorted(peer)))
    parts, worst = [], None
    for s in common:
        ratio = zb[s]["tflops"] / peer[s]["tflops"]
        worst = ratio if worst is None else min(worst, ratio)
        parts.append("%s %.0f/%.0f (%.3f)" % (s.split("x")[0], zb[s]["tflops"], peer[s]["tflops"], ratio))
    return ("bf16 GEMM TFLOP/s zerobench/torch.matmul: " + ", ".join(parts) +
            "; lowest ratio %.3f, target >= 0.97 %s" % (worst, "met" if worst >= 0.97 else "NOT met"))


def op_calls(trace, name, mode):
    """Per call of op `name` in run `mode`: (summed µs of its records, the op's flops).

    An op may leave several records (cuDNN's attention: its kernel and a
    4-byte copy of its own); the FLOPs sit on the compute record, so the
    call's count is the largest any of its records carries."""
    calls = {}
    for e in trace["traceEvents"]:
        a = e.get("args") or {}
        if e.get("ph") != "X" or e.get("name") != name or a.get("mode") != mode:
            continue
        key = (e.get("pid"), a.get("step"), a.get("unit"))
        dur, flops = calls.get(key, (0.0, 0.0))
        calls[key] = (dur + float(e["dur"]), max(flops, a.get("flops") or 0.0))
    return list(calls.values())


def attention(trace_path, peer_path):
    trace, peer = load(trace_path), load(peer_path)
    sh = peer["shape"]
    full = 4.0 * sh["batch"] * sh["heads"] * sh["seq"] ** 2 * sh["head_dim"]
    parts = []
    for op, side, mult in (("fwd.attention", "fwd", 1.0), ("bwd.attention", "bwd", 2.5)):
        calls = op_calls(trace, op, "sync")
        if not calls:
            raise ValueError("no %s records of the sync run in %s" % (op, trace_path))
        us = statistics.median(c[0] for c in calls)
        rec = calls[0][1]  # the op's own count: the full forward 4 B H T^2 D (bench/zero3)
        if side == "fwd" and abs(rec - full) > 1e-6 * full:
            raise ValueError("the trace's %s is not this shape: %.4g FLOPs, the peer's shape %.4g" % (op, rec, full))
        causal = full / 2 * mult
        zb_tf = causal / (us * 1e-6) / 1e12
        pm = peer[side]["median_ms"]
        parts.append("%s zerobench %.3f ms (%.1f TFLOP/s), sdpa %.3f ms (%.1f TFLOP/s), zerobench/sdpa speed %.3f"
                     % (side, us / 1e3, zb_tf, pm, peer[side]["tflops_causal"], pm / (us / 1e3)))
    return ("attention B%d H%d/%d T%d D%d bf16 causal (TFLOP/s causal count; sdpa kernel %s): "
            % (sh["batch"], sh["heads"], sh["kv_heads"], sh["seq"], sh["head_dim"], peer.get("kernel", "?"))
            + "; ".join(parts))


def step(zb_path, peer_path):
    peer = load(peer_path)
    runs = [r for r in load(zb_path)["runs"] if r.get("bench") == "step"]
    if not runs:
        raise ValueError("no step runs in %s" % zb_path)
    best = max(runs, key=lambda r: r["metrics"]["tokens_per_s"] or 0)
    m = best["metrics"]
    shape = best["shape"]
    for k, v in peer["shape"].items():
        if shape.get(k) != v:
            raise ValueError("shapes differ at %s: zerobench %s, torch %s" % (k, shape.get(k), v))
    fpt = m["model_flops_per_token"]
    peak = m["tokens_per_s"] * fpt / (m["mfu_pct"] / 100.0)  # the peak zerobench divided by
    peer_mfu = 100.0 * peer["tokens_per_s"] * fpt / peak
    return ("step (%s, %s): zerobench %s %.0f tokens/s, MFU %.1f%% (%.1f ms); torch eager %.0f tokens/s, "
            "MFU %.1f%% (%.1f ms); zerobench/torch %.3f; target MFU >= torch's %s"
            % (best["param_dtype"], best["flops_convention"], best["mode"], m["tokens_per_s"], m["mfu_pct"],
               m["step_time_ms"], peer["tokens_per_s"], peer_mfu, peer["step_time_ms"],
               m["tokens_per_s"] / peer["tokens_per_s"], "met" if m["mfu_pct"] >= peer_mfu else "NOT met"))


def main(argv):
    cmds = {"gemm": gemm, "attention": attention, "step": step}
    if len(argv) != 4 or argv[1] not in cmds:
        sys.exit("usage: gpu-peer-compare.py gemm|attention|step ZEROBENCH.json PEER.json")
    try:
        print(cmds[argv[1]](argv[2], argv[3]))
    except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError) as e:
        sys.exit("gpu-peer-compare.py %s: %s: %s" % (argv[1], type(e).__name__, e))


if __name__ == "__main__":
    main(sys.argv)
