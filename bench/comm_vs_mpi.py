"""The mpi comm against plain MPI: zerobench's collectives and the same calls
made directly (blocking, and non-blocking waited on), printed (not a test:
nothing here passes or fails).

Runs `zerobench COLL --compare-direct --direct-rounds R` REPEATS times for
each collective, the collectives alternated, and prints per size over the
repeats: the comm's and the better plain call's time (medians), the
best-round ratio (comm time / better plain call, each side its best round
of the run) as median and range, and the paired ratio (the median of a
run's rounds, each round's comm loop against the plain loops next to it)
as median and range. A ratio below 1 is the comm faster than MPI; the
issue target "at least 0.95x MPI's speed" is a ratio of at most 1.053.

    python3 bench/comm_vs_mpi.py --zerobench build/zerobench --ranks 2 --repeats 5 \\
        [--colls allgather,reducescatter,allreduce] [--min 1M] [--max 256M] [--iters 10] [--rounds 3]

As root, Open MPI needs OMPI_ALLOW_RUN_AS_ROOT=1 and
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 in the environment.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

COLLS = ("allgather", "reducescatter", "allreduce")


def run(cmd, timeout):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    if p.returncode != 0:
        sys.exit(f"comm_vs_mpi: {' '.join(cmd[:8])} ... exited {p.returncode}:\n{p.stdout[-2000:]}")


def paired_ratio(run_json):
    """The median over a size's rounds of comm / better plain call."""
    ratios = [q["comm"] / min(q["blocking"], q["nonblocking"]) for q in run_json["direct_rounds_us"]]
    return statistics.median(ratios)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--zerobench", required=True)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--colls", default=",".join(COLLS))
    ap.add_argument("--min", default="1M")
    ap.add_argument("--max", default="256M")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per zerobench run")
    a = ap.parse_args()
    colls = [c for c in a.colls.split(",") if c]
    bad = [c for c in colls if c not in COLLS]
    if bad:
        ap.error(f"--colls {a.colls}: accepted are {', '.join(COLLS)}, comma-separated")
    if a.repeats < 1 or a.ranks < 2 or a.iters < 1 or a.rounds < 1:
        ap.error(f"--repeats {a.repeats}, --iters {a.iters}, --rounds {a.rounds}: each at least 1; "
                 f"--ranks {a.ranks}: at least 2")
    rows = {c: {} for c in colls}  # coll -> size -> [run JSON]
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.repeats):
            for c in colls:
                out = os.path.join(tmp, f"{c}.{r}.json")
                run(["mpirun", "--oversubscribe", "-np", str(a.ranks), a.zerobench, c, "-b", a.min, "-e", a.max,
                     "-f", "4", "-n", str(a.iters), "-w", "3", "--compare-direct", "--direct-rounds",
                     str(a.rounds), "--nodes", "1", "--gpus-per-node", str(a.ranks), "--json", out], a.timeout)
                for x in json.load(open(out))["runs"]:
                    if not x["in_place"]:
                        rows[c].setdefault(x["size_bytes"], []).append(x)
    print(f"# comm vs plain MPI: {a.ranks} ranks, {a.repeats} runs, -n {a.iters}, {a.rounds} rounds each; "
          "ratio = comm time / the better of blocking and non-blocking")
    print(f"# {'collective':14s} {'size':>10s} {'comm us':>10s} {'MPI us':>10s}  "
          f"{'best-round ratio: med [min, max]':34s}  paired ratio: med [min, max]")
    for c in colls:
        for size, xs in sorted(rows[c].items()):
            best = [x["metrics"]["time_us"] / x["metrics"]["direct_time_us"] for x in xs]
            paired = [paired_ratio(x) for x in xs]
            comm = statistics.median(x["metrics"]["time_us"] for x in xs)
            mpi = statistics.median(x["metrics"]["direct_time_us"] for x in xs)
            print(f"  {c:14s} {size:10d} {comm:10.1f} {mpi:10.1f}  "
                  f"{statistics.median(best):6.3f} [{min(best):.3f}, {max(best):.3f}]{'':14s}  "
                  f"{statistics.median(paired):6.3f} [{min(paired):.3f}, {max(paired):.3f}]")


if __name__ == "__main__":
    main()
