"""PyTorch peer of `zerobench attention` on the CPU: causal grouped-query
attention through torch.nn.functional.scaled_dot_product_attention
(is_causal=True, enable_gqa=True; PyTorch runs its fused CPU flash kernel),
fp32, on a given number of threads (default one). A yardstick for measuring
only: zerobench never imports it. bench/attention_vs_torch.py runs it
alternately with zerobench.

    python3 bench/peers/torch_cpu_attention.py --batch 1 --heads 4 --kv-heads 2 \\
        --seq 2048 --head-dim 64 [--iters 5] [--warmup 2] [--threads 1] [--json out.json]

Timing as zerobench's: every call timed alone (time.perf_counter around it)
after the warm-up calls; the median and the min reported. Forward: with
autograd recording, as a training step runs it (the flash kernel saves its
log-sum-exp either way). Backward alone: each timed call gets a fresh
forward outside the timing, and backward(dout) is timed. Two layouts of
the same tensors: "bthd", the [B, T, H, D] memory zerobench reads, passed
as the transposed views a model makes (q.view(B, T, H, D).transpose(1, 2)),
and "bhtd", contiguous [B, H, T, D], which SDPA may prefer. Inputs are
uniform in [-1, 1) like zerobench's. Prints one JSON object (also written
to --json)."""
import argparse
import json
import os
import statistics
import sys
import time

try:
    import torch
    import torch.nn.functional as F
except ImportError as e:  # a peer, never a dependency
    sys.exit("torch_cpu_attention.py: PyTorch is not installed (%s); nothing to time" % e)


def summary(ms):
    return {"median_ms": statistics.median(ms), "min_ms": min(ms), "max_ms": max(ms), "samples": len(ms)}


def inputs(a, layout):
    """q, k, v (requiring grad) and dout as SDPA takes them, [B, H, T, D]."""
    def make(heads, grad=True):
        if layout == "bthd":
            x = torch.rand(a.batch, a.seq, heads, a.head_dim) * 2 - 1
            x = x.transpose(1, 2)
        else:
            x = torch.rand(a.batch, heads, a.seq, a.head_dim) * 2 - 1
        return x.requires_grad_(grad)
    return make(a.heads), make(a.kv_heads), make(a.kv_heads), make(a.heads, grad=False)


def time_layout(a, layout):
    q, k, v, dout = inputs(a, layout)

    def fwd():
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=a.kv_heads != a.heads)

    fwd_ms, bwd_ms = [], []
    for i in range(a.warmup + a.iters):
        t0 = time.perf_counter()
        fwd()
        if i >= a.warmup:
            fwd_ms.append((time.perf_counter() - t0) * 1e3)
    for i in range(a.warmup + a.iters):
        q.grad = k.grad = v.grad = None
        o = fwd()
        t0 = time.perf_counter()
        o.backward(dout)
        if i >= a.warmup:
            bwd_ms.append((time.perf_counter() - t0) * 1e3)
    return {"fwd": summary(fwd_ms), "bwd": summary(bwd_ms)}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in (("batch", 1), ("heads", 4), ("kv-heads", 2), ("seq", 2048), ("head-dim", 64),
                          ("iters", 5), ("warmup", 2), ("threads", 1)):
        p.add_argument("--" + name, type=int, default=default)
    p.add_argument("--layouts", default="bthd,bhtd", help="comma-separated: bthd, bhtd")
    p.add_argument("--json")
    a = p.parse_args()
    layouts = [x for x in a.layouts.split(",") if x]
    if any(x not in ("bthd", "bhtd") for x in layouts) or not layouts:
        p.error("--layouts %s: accepted are bthd and bhtd, comma-separated" % a.layouts)
    if min(a.batch, a.heads, a.kv_heads, a.seq, a.head_dim, a.iters, a.threads) < 1 or a.warmup < 0 \
            or a.heads % a.kv_heads:
        p.error("sizes, --iters and --threads must be positive, --heads a multiple of --kv-heads")
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    full = 4.0 * a.batch * a.heads * a.seq * a.seq * a.head_dim  # zerobench's count; causal is half
    res = {"peer": "torch sdpa", "device": "cpu", "dtype": "float32", "causal": True, "threads": a.threads,
           "shape": {"batch": a.batch, "heads": a.heads, "kv_heads": a.kv_heads, "seq": a.seq,
                     "head_dim": a.head_dim},
           "flops_full_fwd": full, "torch": torch.__version__,
           "cpu_capability": torch.backends.cpu.get_cpu_capability(), "layouts": {}}
    for layout in layouts:
        res["layouts"][layout] = time_layout(a, layout)
    if a.json:
        tmp = a.json + ".part"
        with open(tmp, "w") as f:
            json.dump(res, f, indent=1)
        os.replace(tmp, a.json)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
