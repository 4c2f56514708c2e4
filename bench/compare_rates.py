"""How often `zerobench compare` cries wolf, and how often it catches a real
slowdown, measured on this machine (printed, not a test: nothing here
passes or fails).

Runs the tiny 2-rank step (`zerobench step --model tiny --mode both`), or
with --bench allgather a 2-rank all-gather sweep 1K-16M (-f 4), RUNS
times at the same commit and makes RUNS slowed results, SLOW % slower, by
--inject:

- scale (default): each base run's file with its step times (figure,
  min/max, samples) multiplied by 1 + SLOW/100 and tokens/s, MFU, HFU
  divided by it: real run-to-run noise, an exact slowdown;
- hook: RUNS new runs under the existing test hook ZB_TEST_DELAY_RANK=0:MS
  (rank 0 adds MS of compute to each step; MS starts at SLOW % of the base
  median step and is rescaled by calibration runs until one lands within
  2 points; on an oversubscribed machine the sleep does not add to the
  step time 1:1, so the slowdown reached is printed as measured).

Then it compares every ordered pair of base runs (false alarms, RUNS
(RUNS-1) pairs) and every (base, slowed) pair (detection; with scale, a
run is not paired with its own scaled copy), each twice: as written
(samples: the two-sample test decides) and with the samples stripped (the
rule without samples: tolerance and min-max spread). Per case it prints
the share of pairs compare exits 1 on (the gate, any metric), the share of
step_time_ms rows called REGRESSION (the step time alone), and the
metrics called REGRESSION.
With --bases K (default 3; 0: off) it also judges against several bases
(`compare B1 .. BK -- NEW`): each run as NEW against the K runs after it
(cyclically; false alarms, RUNS comparisons) and each slowed run against
K runs other than its own source (detection).
With --groups K (default 3; a comma list for several K; 0: off) it judges K runs against K runs
(`compare B1 .. BK -- N1 .. NK`, Welch's t over the runs' figures): --splits
random splits of the runs into two disjoint groups (false alarms), and the
same splits with the NEW group's runs slowed (detection). Splits share runs,
so they are fewer independent draws than their number: RUNS // (2 K) per
split are independent.
The issue's targets: false alarms at most 5 % of pairs, a 10 % step
slowdown caught in at least 95 %.

    python3 bench/compare_rates.py --zerobench build/zerobench [--bench step|allgather] [--runs 6] [--steps 20]
        [--warmup 2] [--slow 10] [--bases 3] [--groups 3[,5,..]] [--splits 100] [--pairs N] [--inject scale|hook]
        [--keep DIR]

As root, Open MPI needs OMPI_ALLOW_RUN_AS_ROOT=1 and
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 in the environment (ci/env.sh).
"""
import argparse
import collections
import contextlib
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile


TIME = {"step": "step_time_ms", "allgather": "time_us"}
RATES = {"step": ("tokens_per_s", "mfu_pct", "hfu_pct"), "allgather": ("algbw_gbps", "busbw_gbps")}


def step_run(args, path, delay_ms):
    env = dict(os.environ)
    env.pop("ZB_TEST_DELAY_RANK", None)
    if delay_ms > 0:
        env["ZB_TEST_DELAY_RANK"] = f"0:{delay_ms:.4f}"
    if args.bench == "allgather":
        cmd = ["mpirun", "--oversubscribe", "-np", "2", args.zerobench, "allgather", "-b", "1K", "-e", "16M", "-f", "4",
               "--json", path]
    else:
        cmd = ["mpirun", "--oversubscribe", "-np", "2", args.zerobench, "step", "--model", "tiny", "--mode", "both",
               "--steps", str(args.steps), "--warmup", str(args.warmup), "--json", path]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=600)
    if p.returncode != 0:
        sys.exit(f"compare_rates: {' '.join(cmd)} exited {p.returncode}:\n{p.stdout[-2000:]}")


def strip_samples(src, dst):
    d = json.load(open(src))
    for r in d["runs"]:
        r["metrics"].pop("samples", None)
    json.dump(d, open(dst, "w"))


def compare(args, base, new):
    """compare's exit status, the time verdicts (step_time_ms or time_us,
    one per run: True for REGRESSION) and the metrics called REGRESSION.
    base: one file, or a list of them (several bases)."""
    entries, rc = [], None
    news = [new] if isinstance(new, str) else new
    files = [base, new] if isinstance(base, str) and isinstance(new, str) else list(base) + ["--"] + news
    for tool in ("customSmallerIsBetter", "customBiggerIsBetter"):
        p = subprocess.run([args.zerobench, "compare", *files, "--format", "github-benchmark",
                            "--github-tool", tool], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=120)
        if p.returncode not in (0, 1, 3):
            sys.exit(f"compare_rates: compare {base} {new} exited {p.returncode}: {p.stderr.strip()}")
        rc = p.returncode
        entries += json.loads(p.stdout)
    step = [", REGRESSION" in e["extra"] for e in entries if e["name"].endswith(f"/ {TIME[args.bench]}")]
    bad = [e["name"].split(" / ")[-1] for e in entries if ", REGRESSION" in e["extra"]]
    return rc, step, bad


def rates(args, pairs):
    gate = rows = flagged = 0
    by_metric = collections.Counter()
    for b, n in pairs:
        rc, regs, bad = compare(args, b, n)
        gate += rc == 1
        rows += len(regs)
        flagged += sum(regs)
        by_metric.update(bad)
    return gate, len(pairs), flagged, rows, by_metric


def step_median(path):
    return statistics.median(r["metrics"]["step_time_ms"] for r in json.load(open(path))["runs"])


def scale_step(src, dst, factor, key="step_time_ms", rates=RATES["step"]):
    """src `factor` times slower: the time (figure, min/max, samples) x
    factor, the rates derived from it / factor."""
    d = json.load(open(src))
    stem = key.rsplit("_", 1)
    for r in d["runs"]:
        m = r["metrics"]
        for k in (key, f"{stem[0]}_min_{stem[1]}", f"{stem[0]}_max_{stem[1]}"):
            if m.get(k) is not None:
                m[k] *= factor
        for k in rates:
            if m.get(k) is not None:
                m[k] /= factor
        if key in m.get("samples", {}):
            m["samples"][key] = [v * factor for v in m["samples"][key]]
    json.dump(d, open(dst, "w"))


def group_splits(args, n, k):
    """--splits seeded random (base, new) index groups of k runs each, disjoint."""
    import random
    rng = random.Random(20261206 + k)
    out = []
    for _ in range(args.splits):
        idx = rng.sample(range(n), 2 * k)
        out.append((idx[:k], idx[k:]))
    return out


def run_spread(args, base):
    """Per run identity (the step's mode, the collective's size and
    placement): the spread of the runs' figures, which is what bounds
    detection across runs (the steps' own spread does not)."""
    import math
    key = TIME[args.bench]
    figs = collections.defaultdict(list)
    for p in base:
        for r in json.load(open(p))["runs"]:
            v = r["metrics"].get(key)
            if v and v > 0:
                name = r.get("mode") if args.bench == "step" else f"{r['size_bytes']}{' in' if r.get('in_place') else ''}"
                figs[name].append(v)
    parts = []
    for name, v in figs.items():
        if len(v) < 2:
            continue
        sd = statistics.stdev(math.log(x) for x in v)
        parts.append(f"{name} {100 * (math.exp(sd) - 1):.1f} % ({min(v):.4g}..{max(v):.4g})")
    print(f"# run-to-run spread of {key} (sd of the runs' log figures, min..max over {len(base)} runs): "
          + "; ".join(parts))


def report(args, base, slow, exclude_same):
    run_spread(args, base)
    for p in base + slow:
        strip_samples(p, p + ".nosamples")
    same = list(itertools.permutations(base, 2))
    cross = [(b, s) for i, b in enumerate(base) for j, s in enumerate(slow) if not (exclude_same and i == j)]
    if args.pairs and len(same) > args.pairs:  # a seeded sample: all n (n - 1) pairs of 40 runs take an hour
        import random
        rng = random.Random(20261207)
        same, cross = rng.sample(same, args.pairs), rng.sample(cross, args.pairs)
    n, k = len(base), args.bases
    many_same = [([base[(i + j) % n] for j in range(1, k + 1)], base[i]) for i in range(n)] if 0 < k < n else []
    many_cross = [([base[(i + j) % n] for j in range(1, k + 1)], slow[i]) for i in range(n)] if 0 < k < n else []
    group_cases = []
    for g in args.groups:
        if 0 < g and 2 * g <= n:
            splits = group_splits(args, n, g)
            group_cases += [(f"false, {g} vs {g}", [([base[i] for i in b], [base[i] for i in w]) for b, w in splits]),
                            (f"detect, {g} vs {g}", [([base[i] for i in b], [slow[i] for i in w]) for b, w in splits])]
    print(f"# judged by           case            pairs  gate exit 1        {TIME[args.bench]} REGRESSION")
    for label, suffix in (("samples (U test)", ""), ("rule (no samples)", ".nosamples")):
        cases = [("false alarms", same), ("detection", cross)]
        if suffix == "":
            cases += [(f"false, {k} bases", many_same), (f"detect, {k} bases", many_cross)]
            cases += group_cases
        for case, pairs in cases:
            if not pairs:
                continue
            g, m, f, r, by = rates(args, [(b + suffix if isinstance(b, str) else b, x + suffix if isinstance(x, str) else x)
                                          for b, x in pairs])
            print(f"  {label:18s}  {case:16s}  {m:5d}  {g:4d} ({100 * g / m:5.1f} %)  "
                  f"{f:4d} of {r:3d} rows ({100 * f / max(r, 1):5.1f} %)")
            print(f"#   REGRESSION rows by metric: {dict(sorted(by.items())) or 'none'}")


def runs_list(text):
    """--groups: a comma list of runs per side, e.g. 3,5,8."""
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': expected runs per side, a comma list of integers (e.g. 3,5,8)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--zerobench", default="build/zerobench")
    ap.add_argument("--bench", choices=("step", "allgather"), default="step")
    ap.add_argument("--bases", type=int, default=3, help="base files for the several-bases cases (0: off)")
    ap.add_argument("--groups", type=runs_list, default=[3],
                    help="runs per side for the several-NEW-files cases, a comma list (e.g. 3,5,8; 0: off)")
    ap.add_argument("--pairs", type=int, default=0,
                    help="judge a seeded sample of this many pairs in the one-base cases (0: all RUNS (RUNS-1))")
    ap.add_argument("--splits", type=int, default=100, help="random splits judged with --groups")
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--slow", type=float, default=10.0, help="injected slowdown, %% of the base step time")
    ap.add_argument("--inject", choices=("scale", "hook"), default="scale",
                    help="scale: the slowed runs are the base runs' files with step times scaled (real noise, an "
                         "exact slowdown); hook: new runs under ZB_TEST_DELAY_RANK")
    ap.add_argument("--keep", help="keep the results files in this folder (default: a temporary one); base runs "
                                   "already there are reused, so that other --bases judge the same runs")
    args = ap.parse_args()
    if args.pairs < 0:
        ap.error(f"--pairs {args.pairs}: expected a count >= 0 (0: all pairs)")
    if any(g < 0 for g in args.groups):
        ap.error(f"--groups {','.join(map(str, args.groups))}: expected runs per side >= 0 (0: off)")
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    with (contextlib.nullcontext(args.keep) if args.keep else tempfile.TemporaryDirectory()) as d:
        base = [os.path.join(d, f"base{i}.json") for i in range(args.runs)]
        for p in base:
            if not (args.keep and os.path.exists(p)):  # a kept folder's runs are reused (other --bases)
                step_run(args, p, 0.0)
        if args.bench == "allgather" and args.inject != "scale":
            sys.exit("compare_rates: --bench allgather takes --inject scale only")
        if args.bench == "allgather":
            slow = [os.path.join(d, f"slow{i}.json") for i in range(args.runs)]
            for src, dst in zip(base, slow):
                scale_step(src, dst, 1 + args.slow / 100.0, "time_us", RATES["allgather"])
            print(f"# {args.runs} runs of `zerobench allgather -b 1K -e 16M -f 4` on 2 ranks (7 sizes x 2 placements); "
                  f"slowed: time_us (figure, samples) x{1 + args.slow / 100.0:.3f}, bandwidths / the same")
            report(args, base, slow, exclude_same=True)
            return
        ref = statistics.median(step_median(p) for p in base)
        if args.inject == "scale":
            slow = [os.path.join(d, f"slow{i}.json") for i in range(args.runs)]
            for src, dst in zip(base, slow):
                scale_step(src, dst, 1 + args.slow / 100.0)
            print(f"# {args.runs} runs of `zerobench step --model tiny --mode both --steps {args.steps} --warmup "
                  f"{args.warmup}` on 2 ranks, base median step {ref:.3f} ms; slowed: each run's step times "
                  f"(figure, spread, samples) x{1 + args.slow / 100.0:.3f}, tokens/s, MFU, HFU / the same")
            report(args, base, slow, exclude_same=True)
            return
        delay = ref * args.slow / 100.0
        # The hook's sleep does not add 1:1 to the step time (a sleep this
        # short overshoots, and part of it can overlap): scale the delay by
        # what a calibration run measured until it lands within 2 points.
        probe = os.path.join(d, "probe.json")
        for _ in range(6):
            step_run(args, probe, delay)
            got = 100 * (step_median(probe) / ref - 1)
            if abs(got - args.slow) <= 2.0:
                break
            delay *= min(4.0, max(0.25, args.slow / max(got, 1.0)))
        slow = [os.path.join(d, f"slow{i}.json") for i in range(args.runs)]
        for p in slow:
            step_run(args, p, delay)
        got = statistics.median(step_median(p) for p in slow)
        print(f"# {args.runs} runs each of `zerobench step --model tiny --mode both --steps {args.steps} --warmup "
              f"{args.warmup}` on 2 ranks; base median step {ref:.3f} ms; slowed by ZB_TEST_DELAY_RANK=0:{delay:.3f} "
              f"ms: median {got:.3f} ms ({100 * (got / ref - 1):+.1f} %)")
        report(args, base, slow, exclude_same=False)


if __name__ == "__main__":
    main()
