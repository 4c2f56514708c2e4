"""CPU step figures: how fast the cpu device computes a ZeRO-3 step, from
zerobench's own outputs, printed (not a test: nothing here passes or fails).

For one model shape on R ranks, repeated and alternated so that every ratio
comes from neighbouring runs under the same load (min and median over the
repeats are printed):

1. `zerobench step --mode both --trace`: the step times (sync, prefetch)
   and, from the trace's per-op records, attention's share of compute time
   (fwd.attention + bwd.attention over all compute records) and each GEMM's
   time in the step (median over its records);
2. direct cblas_sgemm calls (ctypes, in one child process per rank, run at
   once, whose environment selects the OpenBLAS core and thread count the
   step's meta reports) of
   the step's GEMMs, same (M, N, K) and transposes (fwd Y = X W^T, bwd
   dX = dY W and dW = dY^T X; the shapes are checked against the records'
   FLOPs). Both sides are minima, over as many tries (the step's records of
   a shape per rank; as many direct calls per child): on a loaded machine a mean or median measures
   preemption, a minimum what the code does. `direct / step` is the step's
   GEMM speed as a fraction of plain SGEMM;
3. with --torch PYTHON, the PyTorch FSDP2 peer (bench/peers/fsdp2_step.py,
   gloo, one thread per rank) on the same shape and ranks.

    python3 bench/cpu_step_figures.py --zerobench build/zerobench --ranks 2 --repeats 3 \\
        [--torch /path/to/python-with-torch] -- --layers 4 --dim 512 --heads 8 --kv-heads 4 \\
        --head-dim 64 --ffn-dim 1408 --vocab 8192 --seq 256 --batch 2
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPE_FLAGS = ("layers", "dim", "heads", "kv-heads", "head-dim", "ffn-dim", "vocab", "seq", "batch")


def mpirun(ranks):
    return ["mpirun", "--oversubscribe", "-np", str(ranks)]


def run(cmd, timeout):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    if p.returncode != 0:
        sys.exit(f"cpu_step_figures: {' '.join(cmd[:6])} ... exited {p.returncode}:\n{p.stdout[-2000:]}")
    return p.stdout


def shape_of(flags):
    d = dict(zip(flags[0::2], flags[1::2]))
    missing = [f for f in SHAPE_FLAGS if f"--{f}" not in d]
    if missing:
        sys.exit(f"cpu_step_figures: give every shape flag after --; missing {missing}")
    return {f: int(d[f"--{f}"]) for f in SHAPE_FLAGS}


def gemm_shapes(s):
    """The step's GEMMs by record name (layer prefix dropped): (ta, tb, M, N, K),
    transposed as the engine calls them (weights [out, in])."""
    tok, dim, q, kv = s["batch"] * s["seq"], s["dim"], s["heads"] * s["head-dim"], s["kv-heads"] * s["head-dim"]
    fwd = {"wq": (q, dim), "wk": (kv, dim), "wv": (kv, dim), "wo": (dim, q), "w_gate": (s["ffn-dim"], dim),
           "w_up": (s["ffn-dim"], dim), "w_down": (dim, s["ffn-dim"]), "lm_head": (s["vocab"], dim)}
    out = {}
    for w, (n_out, n_in) in fwd.items():
        out[f"fwd.{w}"] = (0, 1, tok, n_out, n_in)      # Y = X W^T
        out[f"bwd.dx.{w}"] = (0, 0, tok, n_in, n_out)   # dX = dY W
        out[f"bwd.dw.{w}"] = (1, 0, n_out, n_in, tok)   # dW += dY^T X
    return out


def op_name(name):
    return name.split(".", 1)[1] if name.startswith("layer") else name


def step_once(a, flags, tmp):
    trace, js = f"{tmp}/step.trace.json", f"{tmp}/step.json"
    run(mpirun(a.ranks) + [a.zerobench, "step", "--mode", "both", "--steps", str(a.steps), "--warmup", "1",
                           "--trace", trace, "--json", js] + flags, a.timeout)
    doc = json.load(open(js))
    runs = {r["mode"]: r["metrics"] for r in doc["runs"]}
    runs["core"] = doc["meta"]["blas_core"]["ran"]
    runs["threads"] = doc["meta"]["config"]["blas_threads"]
    ev = [e for e in json.load(open(trace))["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "compute"]
    total = sum(e["dur"] for e in ev)
    attn = sum(e["dur"] for e in ev if op_name(e["name"]) in ("fwd.attention", "bwd.attention"))
    per = {}
    for e in ev:
        per.setdefault(op_name(e["name"]), []).append(e)
    return runs, 100.0 * attn / total, per


def blas_library(zerobench):
    """The OpenBLAS zerobench links (ldd), so the direct calls run its code."""
    out = subprocess.run(["ldd", zerobench], stdout=subprocess.PIPE, text=True).stdout
    for line in out.splitlines():
        if "libopenblas" in line and "=>" in line:
            return line.split("=>")[1].split()[0]
    return "libopenblas.so.0"


def direct_child(lib, spec):
    """In a process whose environment chose the core: the minimum time (us)
    of cblas_sgemm for each (ta, tb, m, n, k, reps) over reps calls,
    alternating the shapes."""
    import ctypes
    import time
    blas = ctypes.CDLL(lib)
    blas.cblas_sgemm.argtypes = [ctypes.c_int] * 6 + [ctypes.c_float, ctypes.c_void_p, ctypes.c_int,
                                                      ctypes.c_void_p, ctypes.c_int, ctypes.c_float,
                                                      ctypes.c_void_p, ctypes.c_int]
    blas.openblas_get_corename.restype = ctypes.c_char_p
    row, no, tr = 101, 111, 112
    bufs = []
    for ta, tb, m, n, k, _ in spec:
        a = (ctypes.c_float * (m * k))(*([0.5] * (m * k)))
        b = (ctypes.c_float * (k * n))(*([0.25] * (k * n)))
        c = (ctypes.c_float * (m * n))()
        bufs.append((a, b, c))
    best = [float("inf")] * len(spec)
    for rep in range(max(x[5] for x in spec)):
        for i, (ta, tb, m, n, k, reps) in enumerate(spec):
            if rep >= reps:
                continue
            a, b, c = bufs[i]
            t0 = time.perf_counter()
            blas.cblas_sgemm(row, tr if ta else no, tr if tb else no, m, n, k, 1.0, a, m if ta else k, b,
                             k if tb else n, 0.0, c, n)
            best[i] = min(best[i], (time.perf_counter() - t0) * 1e6)
    print(json.dumps({"core": blas.openblas_get_corename().decode(), "min_us": best}))


def gemm_direct(a, spec, core, threads):
    """One direct child per rank, all at once, as the step's ranks share the
    machine (cores, caches, memory bandwidth); per shape the least of their
    minima."""
    env = dict(os.environ, OPENBLAS_CORETYPE=core, OPENBLAS_NUM_THREADS=str(threads))
    cmd = [sys.executable, os.path.abspath(__file__), "--direct-child", json.dumps(spec), "--zerobench", a.zerobench]
    kids = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env) for _ in range(a.ranks)]
    best = [float("inf")] * len(spec)
    for kid in kids:
        out, _ = kid.communicate(timeout=a.timeout)
        if kid.returncode != 0:
            sys.exit(f"cpu_step_figures: a direct child exited {kid.returncode}")
        r = json.loads(out.splitlines()[-1])
        if r["core"] != core:
            sys.exit(f"cpu_step_figures: the direct calls ran {r['core']}, the step {core}")
        best = [min(x, y) for x, y in zip(best, r["min_us"])]
    return dict(zip([tuple(x[:5]) for x in spec], best))


def fsdp2_once(a, flags):
    out = run([a.torch, "-m", "torch.distributed.run", "--nproc-per-node", str(a.ranks),
               os.path.join(HERE, "peers", "fsdp2_step.py"), "--steps", str(a.steps), "--warmup", "1"] + flags,
              a.timeout)
    line = [x for x in out.splitlines() if x.startswith('{"peer"')]
    return json.loads(line[-1])


def mm(xs):
    return f"min {min(xs):.3g} median {statistics.median(xs):.3g}"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--zerobench", default="build/zerobench")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--timeout", type=float, default=1800)
    p.add_argument("--torch", help="python with torch: also run the FSDP2 peer")
    p.add_argument("--direct-child", help=argparse.SUPPRESS)
    p.add_argument("flags", nargs=argparse.REMAINDER, help="-- then zerobench's shape flags")
    a = p.parse_args()
    if a.direct_child:
        return direct_child(blas_library(a.zerobench), json.loads(a.direct_child))
    flags = [f for f in a.flags if f != "--"]
    shapes = gemm_shapes(shape_of(flags))
    ratios, attn_pct, sync, pre, peer, speedup, overall = {}, [], [], [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(a.repeats):
            runs, pct, per = step_once(a, flags, tmp)
            attn_pct.append(pct)
            sync.append(runs["sync"]["step_time_ms"])
            pre.append(runs["prefetch"]["step_time_ms"])
            for name, recs in per.items():
                if name in shapes:
                    m, n, k = shapes[name][2:]
                    if any(abs(r["args"]["flops"] - 2.0 * m * n * k) > 1e-6 * 2.0 * m * n * k for r in recs):
                        sys.exit(f"cpu_step_figures: {name}: record FLOPs are not 2*{m}*{n}*{k}")
            # as many direct calls per rank as the step made of the shape per rank,
            # so both minima are over the same number of tries
            tries = {}
            for name, recs in per.items():
                if name in shapes:
                    tries[shapes[name]] = tries.get(shapes[name], 0) + len(recs) // a.ranks
            spec = [list(x) + [max(1, tries[x])] for x in sorted(tries)]
            direct = gemm_direct(a, spec, runs["core"], runs["threads"])
            d_sum = s_sum = 0.0
            for name, recs in per.items():
                if name not in shapes:
                    continue
                # minima on both sides: what each path does when not preempted
                step_us = min(r["dur"] for r in recs)
                d = direct[shapes[name]]
                ratios.setdefault(name, []).append(d / step_us)
                d_sum += len(recs) * d
                s_sum += len(recs) * step_us
            overall.append(d_sum / s_sum)
            if a.torch:
                f = fsdp2_once(a, flags)
                peer.append(f["step_time_ms"])
                speedup.append(f["step_time_ms"] / pre[-1])
            print(f"# repeat {rep + 1}/{a.repeats}: sync {sync[-1]:.1f} ms, prefetch {pre[-1]:.1f} ms, "
                  f"attention {pct:.1f} % of compute" + (f", fsdp2 {peer[-1]:.1f} ms" if a.torch else ""),
                  flush=True)
    print(f"# shape {' '.join(flags)}, {a.ranks} ranks, {a.repeats} alternated repeats, {a.steps} steps each")
    print(f"step time sync (ms):      {mm(sync)}")
    print(f"step time prefetch (ms):  {mm(pre)}")
    print(f"attention % of compute:   {mm(attn_pct)}")
    print("step GEMM speed as a fraction of direct cblas_sgemm, same core, threads and transposes "
          "(min direct time / min step record time):")
    for name in sorted(ratios, key=lambda x: -shapes[x][2] * shapes[x][3] * shapes[x][4]):
        m, n, k = shapes[name][2:]
        print(f"  {name:16s} {m:5d}x{n:5d}x{k:5d}  {mm(ratios[name])}")
    # all GEMMs together: the direct times of the step's GEMM calls over their step times
    print(f"  all GEMMs of the step (time-weighted): {mm(overall)}")
    if a.torch:
        print(f"fsdp2 step time (ms):     {mm(peer)}")
        print(f"fsdp2 / zerobench prefetch step time: {mm(speedup)} (> 1: zerobench faster)")


if __name__ == "__main__":
    main()
