"""PyTorch FSDP2 peer of `zerobench step` on the CPU: the same LLaMA-style
model (untied embedding and LM head, RMSNorm, RoPE rotate-half, causal GQA
attention, SwiGLU, cross-entropy, AdamW lr 3e-3), fp32, sharded with
fully_shard per layer and at the root (ZeRO-3: parameters gathered before
use and freed after, gradients reduce-scattered), gloo, one thread per
rank. It is a yardstick for measuring only: zerobench never depends on it.

Run with a Python that has torch (`pip install torch`; not a dependency of
zerobench, nothing else imports it):

    python3 -m torch.distributed.run --nproc-per-node 2 bench/peers/fsdp2_step.py \\
        --layers 4 --dim 512 --heads 8 --kv-heads 4 --head-dim 64 \\
        --ffn-dim 1408 --vocab 8192 --seq 256 --batch 2 --steps 5 --warmup 1

`--batch` is per rank, as zerobench's micro-batch. Step time as zerobench
defines it (docs/design.md §6): per step the maximum over ranks of the time
from issuing the step (ranks aligned by a barrier) until it is done; rank 0
prints one JSON line with the median, min and max over the measured steps
and the losses. bench/peers/cpu_step_figures.py runs it alternately with
zerobench."""
import argparse
import json
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

try:
    from torch.distributed.fsdp import fully_shard
except ImportError:  # torch < 2.6
    from torch.distributed._composable.fsdp import fully_shard


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope(x, theta=10000.0):
    """Rotate-half RoPE on [B, T, NH, D]; token t at position t."""
    T, D = x.shape[1], x.shape[3]
    inv = 1.0 / theta ** (torch.arange(0, D, 2, dtype=torch.float32, device=x.device) / D)
    ang = torch.arange(T, dtype=torch.float32, device=x.device)[:, None] * inv[None, :]
    c, s = ang.cos()[None, :, None, :], ang.sin()[None, :, None, :]
    x0, x1 = x[..., : D // 2], x[..., D // 2 :]
    return torch.cat([x0 * c - x1 * s, x0 * s + x1 * c], dim=-1)


class Block(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.h, self.kvh, self.d = a.heads, a.kv_heads, a.head_dim
        self.attn_norm, self.ffn_norm = RMSNorm(a.dim), RMSNorm(a.dim)
        self.wq = nn.Linear(a.dim, a.heads * a.head_dim, bias=False)
        self.wk = nn.Linear(a.dim, a.kv_heads * a.head_dim, bias=False)
        self.wv = nn.Linear(a.dim, a.kv_heads * a.head_dim, bias=False)
        self.wo = nn.Linear(a.heads * a.head_dim, a.dim, bias=False)
        self.w_gate = nn.Linear(a.dim, a.ffn_dim, bias=False)
        self.w_up = nn.Linear(a.dim, a.ffn_dim, bias=False)
        self.w_down = nn.Linear(a.ffn_dim, a.dim, bias=False)

    def forward(self, x):
        B, T, _ = x.shape
        h = self.attn_norm(x)
        q = rope(self.wq(h).view(B, T, self.h, self.d))
        k = rope(self.wk(h).view(B, T, self.kvh, self.d))
        v = self.wv(h).view(B, T, self.kvh, self.d)
        rep = self.h // self.kvh
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.wo(o.transpose(1, 2).reshape(B, T, self.h * self.d))
        h = self.ffn_norm(x)
        return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h))


class Model(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.embed = nn.Embedding(a.vocab, a.dim)
        self.layers = nn.ModuleList(Block(a) for _ in range(a.layers))
        self.norm = RMSNorm(a.dim)
        self.lm_head = nn.Linear(a.dim, a.vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in (("layers", 4), ("dim", 512), ("heads", 8), ("kv-heads", 4), ("head-dim", 64),
                          ("ffn-dim", 1408), ("vocab", 8192), ("seq", 256), ("batch", 2), ("steps", 5),
                          ("warmup", 1), ("seed", 1)):
        p.add_argument(f"--{name}", type=int, default=default)
    a = p.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(a.seed)
    model = Model(a)
    for layer in model.layers:
        fully_shard(layer)
    fully_shard(model)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(a.seed * 1000 + rank)
    times, losses = [], []
    for step in range(a.warmup + a.steps):
        tokens = torch.randint(0, a.vocab, (a.batch, a.seq + 1), generator=g)
        dist.barrier()
        t0 = time.perf_counter()
        logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, a.vocab), tokens[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        dt = torch.tensor([time.perf_counter() - t0])
        dist.all_reduce(dt, op=dist.ReduceOp.MAX)
        if step >= a.warmup:
            times.append(dt.item() * 1e3)
            losses.append(loss.item())
    if rank == 0:
        print(json.dumps({"peer": "fsdp2", "torch": torch.__version__, "ranks": world, "threads_per_rank": 1,
                          "step_time_ms": statistics.median(times), "step_time_min_ms": min(times),
                          "step_time_max_ms": max(times), "losses": losses}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
