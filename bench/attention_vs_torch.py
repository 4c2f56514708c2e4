"""zerobench's CPU attention against PyTorch's fused CPU SDPA, one thread
each, printed (not a test: nothing here passes or fails).

For each shape, REPEATS rounds, in each round `zerobench attention` and
the peer bench/peers/torch_cpu_attention.py run one after the other (the
order alternates between rounds), each timing -n calls of the forward and
of the backward alone and reporting their medians. Per shape and pass
(fwd, bwd, fwd+bwd: the sum of the two medians) it prints both sides'
median over the rounds and the ratio zerobench time / torch time as the
min, median and max over the rounds. A ratio at or below 1 is zerobench at
least as fast. The torch time of a round is the faster of its two layouts
(bthd: the [B, T, H, D] memory zerobench reads, as transposed views;
bhtd: contiguous [B, H, T, D]), so torch gets its best case.

    python3 bench/attention_vs_torch.py --zerobench build/zerobench \\
        [--shapes B1H4KVH2D64T2048,B1H16KVH4D128T1024] [--repeats 5] [--iters 5] [--warmup 2]

PyTorch is a peer, never a dependency: without it this script says so and
exits (status 1). zerobench runs with --threads 1, the peer with
torch.set_num_threads(1); both on an otherwise idle machine for figures
worth quoting."""
import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "torch_cpu_attention.py")
SHAPES = "B1H4KVH2D64T2048,B1H16KVH4D128T1024,B1H16KVH4D128T2048"
SHAPE_RE = re.compile(r"^B(\d+)H(\d+)KVH(\d+)D(\d+)T(\d+)$")


def run(cmd, timeout, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout, env=env)
    if p.returncode != 0:
        sys.exit(f"attention_vs_torch: {' '.join(cmd[:4])} ... exited {p.returncode}:\n{(p.stdout + p.stderr)[-2000:]}")
    return p.stdout


def parse_shapes(text):
    shapes = []
    for item in (s for s in text.split(",") if s):
        m = SHAPE_RE.match(item)
        if not m:
            sys.exit(f"attention_vs_torch: --shapes item {item!r}: expected BnHnKVHnDnTn, e.g. B1H4KVH2D64T2048")
        b, h, kvh, d, t = map(int, m.groups())
        if min(b, h, kvh, d, t) < 1 or h % kvh:
            sys.exit(f"attention_vs_torch: --shapes item {item!r}: sizes >= 1, H a multiple of KVH")
        shapes.append({"name": item, "batch": b, "heads": h, "kv_heads": kvh, "head_dim": d, "seq": t})
    return shapes


def shape_flags(s):
    return ["--batch", str(s["batch"]), "--heads", str(s["heads"]), "--kv-heads", str(s["kv_heads"]),
            "--head-dim", str(s["head_dim"]), "--seq", str(s["seq"])]


def zerobench_ms(a, s, check, tmp):
    """{fwd, bwd}: zerobench's median ms of one run."""
    out = os.path.join(tmp, "zb.json")
    run([a.zerobench, "attention", "--threads", "1", "-n", str(a.iters), "-w", str(a.warmup), "-c", str(int(check)),
         "--json", out] + shape_flags(s), a.timeout)
    with open(out) as f:
        runs = [r for r in json.load(f)["runs"] if r.get("bench") == "attention"]
    if check and any(r["metrics"]["wrong"] for r in runs):
        sys.exit(f"attention_vs_torch: zerobench attention {s['name']}: wrong sampled elements")
    return {r["pass"]: r["metrics"]["time_us"] / 1e3 for r in runs}


def torch_ms(a, s):
    """{fwd, bwd}: the peer's median ms of one run, each the faster layout's."""
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    cmd = [sys.executable, PEER, "--iters", str(a.iters), "--warmup", str(a.warmup), "--threads", "1"]
    res = json.loads(run(cmd + shape_flags(s), a.timeout, env).strip().splitlines()[-1])
    lay = res["layouts"].values()
    return {p: min(x[p]["median_ms"] for x in lay) for p in ("fwd", "bwd")}, res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--zerobench", required=True)
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per run")
    a = ap.parse_args()
    if a.repeats < 1 or a.iters < 1 or a.warmup < 0:
        ap.error(f"--repeats {a.repeats}, --iters {a.iters}: at least 1; --warmup {a.warmup}: at least 0")
    if importlib.util.find_spec("torch") is None:
        sys.exit("attention_vs_torch: PyTorch is not installed for this Python (a peer, not a dependency: "
                 "`pip install torch` to compare); nothing compared")
    shapes = parse_shapes(a.shapes)
    peer_info = None
    print(f"# zerobench attention vs torch SDPA (CPU, 1 thread, fp32, causal): {a.repeats} alternated rounds, "
          f"-n {a.iters} -w {a.warmup}; ratio = zerobench time / torch time (<= 1: zerobench at least as fast)")
    print(f"# {'shape':22s} {'pass':8s} {'zerobench ms':>12s} {'torch ms':>10s}   ratio min / median [max]")
    with tempfile.TemporaryDirectory() as tmp:
        for s in shapes:
            zb, th = [], []
            for r in range(a.repeats):
                if r % 2 == 0:
                    zb.append(zerobench_ms(a, s, r == 0, tmp))
                    t, peer_info = torch_ms(a, s)
                else:
                    t, peer_info = torch_ms(a, s)
                    zb.append(zerobench_ms(a, s, False, tmp))
                th.append(t)
            for p in ("fwd", "bwd", "fwd+bwd"):
                z = [x["fwd"] + x["bwd"] if p == "fwd+bwd" else x[p] for x in zb]
                t = [x["fwd"] + x["bwd"] if p == "fwd+bwd" else x[p] for x in th]
                ratios = sorted(zi / ti for zi, ti in zip(z, t))
                print(f"  {s['name']:22s} {p:8s} {statistics.median(z):12.1f} {statistics.median(t):10.1f}   "
                      f"{ratios[0]:.3f} / {statistics.median(ratios):.3f} [{ratios[-1]:.3f}]", flush=True)
    print(f"# torch {peer_info['torch']}, CPU capability {peer_info['cpu_capability']}")


if __name__ == "__main__":
    main()
