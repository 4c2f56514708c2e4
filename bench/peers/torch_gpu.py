"""PyTorch peer of zerobench on one GPU: the same bf16 GEMM shapes through
torch.matmul (cuBLAS), the same attention shape through
torch.nn.functional.scaled_dot_product_attention (causal, grouped-query
heads, forward and forward+backward), and the same LLaMA-style training
step (bench/peers/fsdp2_step.py's Model, SDPA attention, bf16 autocast over
fp32 weights, fused AdamW) in plain eager mode. A yardstick for measuring
only: zerobench never imports it. ci/gpu-check runs it on a lent GPU and
ci/gpu-peer-compare.py sets its figures beside zerobench's.

    python3 bench/peers/torch_gpu.py gemm --sizes 1024,2048,4096,8192 --json g.json
    python3 bench/peers/torch_gpu.py attention --batch 4 --heads 16 --kv-heads 8 \\
        --seq 1024 --head-dim 128 --json a.json
    python3 bench/peers/torch_gpu.py step --layers 16 --dim 2048 --heads 16 --kv-heads 8 \\
        --head-dim 128 --ffn-dim 5632 --vocab 32000 --seq 1024 --batch 4 --json s.json

Timing (docs/design.md §10's method): CUDA events around each timed call
after warm-up, every call timed alone, the median and min reported; GEMMs
rotate among several input sets so repeated calls do not read a warm L2;
inputs are random, never zeros. FLOPs: a GEMM 2MNK; attention with the
causal convention (half of the full 4 B H T^2 D forward; the backward 2.5
times the forward, FlashAttention-2's count), and the full count too so it
can be set beside zerobench's trace, which records the full count."""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F


def events_time_ms(fn, warmup, iters):
    """Each call timed alone between CUDA events; list of ms."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b))
    return out


def summary(ms):
    return {"median_ms": statistics.median(ms), "min_ms": min(ms), "max_ms": max(ms), "samples": len(ms)}


def cmd_gemm(a):
    rows = []
    for n in (int(s) for s in a.sizes.split(",")):
        # about 1 GiB of inputs in rotation, at least 2 sets
        sets = max(2, min(8, (1 << 30) // (2 * 2 * n * n)))
        xs = [torch.randn(n, n, device="cuda", dtype=torch.bfloat16) for _ in range(sets)]
        ys = [torch.randn(n, n, device="cuda", dtype=torch.bfloat16) for _ in range(sets)]
        out = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
        it = [0]

        def call():
            i = it[0] % sets
            it[0] += 1
            torch.matmul(xs[i], ys[i], out=out)

        ms = events_time_ms(call, a.warmup, a.iters)
        s = summary(ms)
        flops = 2.0 * n * n * n
        s.update(shape="%dx%dx%d" % (n, n, n), tflops=flops / (s["median_ms"] * 1e-3) / 1e12,
                 tflops_best=flops / (s["min_ms"] * 1e-3) / 1e12)
        rows.append(s)
        del xs, ys, out
        torch.cuda.empty_cache()
    return {"peer": "torch.matmul", "dtype": "bf16", "rows": rows}


def attention_flops(b, h, t, d):
    full = 4.0 * b * h * t * t * d  # Q K^T and P V over the whole T x T matrix
    return full, full / 2  # the causal convention counts the lower triangle


def cmd_attention(a):
    b, h, kvh, t, d = a.batch, a.heads, a.kv_heads, a.seq, a.head_dim
    q = torch.randn(b, h, t, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(b, kvh, t, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(b, kvh, t, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    dout = torch.randn(b, h, t, d, device="cuda", dtype=torch.bfloat16)

    def fwd():
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=kvh != h)

    with torch.no_grad():
        fwd_ms = events_time_ms(fwd, a.warmup, a.iters)
    holder = {}

    def prep():
        holder["o"] = fwd()

    def bwd():
        holder["o"].backward(dout)

    # the backward alone: each timed call gets a fresh forward outside the events
    bwd_ms = []
    for i in range(a.warmup + a.iters):
        q.grad = k.grad = v.grad = None
        prep()
        torch.cuda.synchronize()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        bwd()
        e1.record()
        e1.synchronize()
        if i >= a.warmup:
            bwd_ms.append(e0.elapsed_time(e1))
    full, causal = attention_flops(b, h, t, d)
    f, bk = summary(fwd_ms), summary(bwd_ms)
    for s, mult in ((f, 1.0), (bk, 2.5)):
        s["flops_causal"], s["flops_full"] = causal * mult, full * mult
        s["tflops_causal"] = causal * mult / (s["median_ms"] * 1e-3) / 1e12
    backend = "unknown"
    try:  # which SDPA kernel ran, from the profiler's kernel names
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            with torch.no_grad():
                fwd()
            torch.cuda.synchronize()
        names = [e.key for e in prof.key_averages()]
        backend = next((n for n in names if "flash" in n.lower() or "fmha" in n.lower() or "cudnn" in n.lower()
                        or "attention" in n.lower()), names[0] if names else "unknown")
    except Exception as e:  # the figures stand without the kernel's name
        backend = "not read (%s)" % type(e).__name__
    return {"peer": "torch sdpa", "dtype": "bf16", "causal": True,
            "shape": {"batch": b, "heads": h, "kv_heads": kvh, "seq": t, "head_dim": d},
            "kernel": backend[:120], "fwd": f, "bwd": bk}


def cmd_step(a):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from fsdp2_step import Model  # the same model the CPU peer trains

    torch.manual_seed(a.seed)
    torch.backends.cuda.matmul.allow_tf32 = True
    t_init = time.perf_counter()
    model = Model(a).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, fused=True)
    init_s = time.perf_counter() - t_init
    g = torch.Generator(device="cuda").manual_seed(a.seed)
    times, losses = [], []
    torch.cuda.reset_peak_memory_stats()
    for step in range(a.warmup + a.steps):
        tokens = torch.randint(0, a.vocab, (a.batch, a.seq + 1), device="cuda", generator=g)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.float().reshape(-1, a.vocab), tokens[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        dt = (time.perf_counter() - t0) * 1e3
        if step >= a.warmup:
            times.append(dt)
            losses.append(loss.item())
    n_params = sum(p.numel() for p in model.parameters())
    med = statistics.median(times)
    return {"peer": "torch eager step", "dtype": "bf16 autocast, fp32 weights, fused AdamW",
            "attention": "scaled_dot_product_attention (causal)", "params": n_params,
            "shape": {k: getattr(a, k.replace("-", "_")) for k in
                      ("layers", "dim", "heads", "kv_heads", "head_dim", "ffn_dim", "vocab", "seq", "batch")},
            "init_s": init_s, "step_time_ms": med, "step_time_min_ms": min(times),
            "step_time_max_ms": max(times), "steps": len(times),
            "tokens_per_s": a.batch * a.seq / (med * 1e-3), "losses": losses,
            "max_memory_allocated_bytes": torch.cuda.max_memory_allocated()}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gemm")
    g.add_argument("--sizes", default="1024,2048,4096,8192")
    at = sub.add_parser("attention")
    st = sub.add_parser("step")
    for sp, iters in ((g, 20), (at, 20), (st, 5)):
        sp.add_argument("--warmup", type=int, default=3 if sp is not st else 2)
        sp.add_argument("--iters" if sp is not st else "--steps", type=int, default=iters)
        sp.add_argument("--json", required=True)
    for name, default in (("batch", 4), ("heads", 16), ("kv-heads", 8), ("seq", 1024), ("head-dim", 128)):
        at.add_argument("--" + name, type=int, default=default)
        st.add_argument("--" + name, type=int, default=default)
    for name, default in (("layers", 16), ("dim", 2048), ("ffn-dim", 5632), ("vocab", 32000), ("seed", 1)):
        st.add_argument("--" + name, type=int, default=default)
    a = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_gpu.py: torch %s sees no CUDA device" % torch.__version__)
    res = {"gemm": cmd_gemm, "attention": cmd_attention, "step": cmd_step}[a.cmd](a)
    try:
        v = torch.cuda.nccl.version()
        nccl = ".".join(map(str, v)) if isinstance(v, tuple) else str(v)
    except Exception as e:  # a version string is not worth failing the figures for
        nccl = "not read (%s)" % type(e).__name__
    res.update(torch=torch.__version__, cuda=torch.version.cuda, device=torch.cuda.get_device_name(0),
               cudnn=torch.backends.cudnn.version(), nccl=nccl)
    tmp = a.json + ".part"
    with open(tmp, "w") as f:
        json.dump(res, f, indent=1)
    os.replace(tmp, a.json)
    print(json.dumps({k: v for k, v in res.items() if k not in ("rows", "losses")})[:600])
    for r in res.get("rows", []):
        print("%-16s %8.3f ms  %6.1f TFLOP/s" % (r["shape"], r["median_ms"], r["tflops"]))


if __name__ == "__main__":
    main()
