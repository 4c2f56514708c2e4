#!/usr/bin/env bash
# nccl-tests parity: command lines from nccl-tests' README and from scripts
# that paste them (sizes cut down, -n/-w small) run on the collectives
# (exit 0); every other nccl-tests flag value is refused with exit 2 and one
# line saying what zerobench does instead; the table's data rows have
# nccl-tests' 13 fields in its order (size count type redop root, then time
# algbw busbw #wrong out of place and in place), count per rank for
# all-gather and reduce-scatter; the closing lines are nccl-tests' with a
# bare number, so a script written for nccl-tests' output reads them.
set -u
source "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
small=(-n 2 -w 1)

# ---- accepted: nccl-tests' command lines, run on 2 ranks -----------------
run_ok() { # NAME CMD...: exit 0
  local name=$1; shift
  timeout 120 mpirun --oversubscribe -np 2 "$ZB" "$@" >"$name.out" 2>"$name.err"
  local rc=$?
  check test $rc -eq 0
  [ $rc -eq 0 ] || { echo "  ($name: exit $rc)"; show "$name.err"; }
}
# README: all_reduce_perf -b 8 -e 128M -f 2 -g 8 (here one GPU per rank)
run_ok ar allreduce -b 8 -e 4K -f 2 -g 1 "${small[@]}"
# all_gather_perf -b 8 -e 128M -f 2 -g 1, with -J FILE and -T S
run_ok ag allgather -b 8 -e 4K -f 2 -g 1 "${small[@]}" -J ag.json -T 60
# scripts' usual line: -t 1 -g 1 -b 2M -e 32M -d float -o sum
run_ok rs reducescatter -t 1 -g 1 -b 2K -e 8K -d float -o sum "${small[@]}"
# nccl-tests' defaults spelled out, long forms, -i instead of -f
run_ok long allreduce --nthreads 1 --ngpus 1 --minbytes 1K --maxbytes 3K --stepbytes 1K --iters 2 \
  --warmup_iters 1 --agg_iters 1 --run_cycles 1 --parallel_init 0 --check 1 --op sum --datatype bfloat16 \
  --root 0 --blocking 0 --stream_null 0 --timeout 60 --cudagraph 0 --report_cputime 0 --report_timestamps 0 \
  --average 1 --local_register 0 --device_implementation 0 --memory 0 --unalign 0 --per_iter_timing 0 \
  --output_file=long.json
run_ok short allreduce -b 1K -e 1K -c 0 -a 3 -r 0 -z 0 -y 0 -G 0 -C 0 -S 0 -R 0 -D 0 -M 0 -u 0 -I 0 -m 1 -N 1 -p 0 \
  "${small[@]}"
check test -s ag.json
check test -s long.json

# ---- refused: exit 2, one line naming the flag and what to do instead -----
w=(allreduce -b 1K -e 1K "${small[@]}")
mpirun_note="zerobench runs one GPU per rank: launch N ranks with mpirun instead"
expect2 g8 "-g/--ngpus '8': $mpirun_note" "$ZB" "${w[@]}" -g 8          # README: -g 8
expect2 t2 "-t/--nthreads '2': $mpirun_note" "$ZB" "${w[@]}" -t 2
expect2 ngpus "-g/--ngpus '4': $mpirun_note" "$ZB" "${w[@]}" --ngpus=4
expect2 omax "-o/--op 'max': zerobench's collectives sum" "$ZB" "${w[@]}" -o max
expect2 oall "-o/--op 'all': zerobench's collectives sum" "$ZB" "${w[@]}" --op all
expect2 r1 "-r/--root '1': allgather, reducescatter and allreduce have no root" "$ZB" "${w[@]}" -r 1
expect2 z1 "-z/--blocking '1': zerobench issues the -n collectives back to back" "$ZB" "${w[@]}" -z 1
expect2 y1 "-y/--stream_null '1': zerobench issues collectives on its own comm stream" "$ZB" "${w[@]}" -y 1
expect2 G "-G/--cudagraph '10': zerobench launches every collective from the host" "$ZB" "${w[@]}" -G 10
expect2 N "-N/--run_cycles '0': zerobench sweeps the sizes once" "$ZB" "${w[@]}" -N 0
expect2 m "-m/--agg_iters '4': zerobench issues one collective per iteration: raise -n/--iters" "$ZB" "${w[@]}" -m 4
expect2 R "-R/--local_register '2': zerobench does not register its buffers" "$ZB" "${w[@]}" -R 2
expect2 C "-C/--report_cputime '1': zerobench reports the time to completion" "$ZB" "${w[@]}" -C 1
expect2 p "-p/--parallel_init '1': zerobench initializes one comm per rank" "$ZB" "${w[@]}" -p 1
expect2 S "-S/--report_timestamps '1': zerobench prints no timestamp per row" "$ZB" "${w[@]}" -S 1
expect2 x "-x/--cta_policy '0': zerobench leaves NCCL's CTA policy unset; leave the flag out" "$ZB" "${w[@]}" -x 0
expect2 D "-D/--device_implementation '1': zerobench calls the comm's host API only" "$ZB" "${w[@]}" -D 1
expect2 V "-V/--device_cta_count '16': zerobench has no device implementation" "$ZB" "${w[@]}" -V 16
expect2 M "-M/--memory '1': zerobench prints no memory report" "$ZB" "${w[@]}" -M 1
expect2 u "-u/--unalign '4': zerobench's buffers start where the allocator aligns them" "$ZB" "${w[@]}" -u 4
expect2 I "-I/--per_iter_timing '1': zerobench times the -n iterations as one loop" "$ZB" "${w[@]}" -I 1
expect2 c5 "-c/--check '5': expected an integer from 0 to 1" "$ZB" "${w[@]}" -c 5
expect2 d "-d/--datatype 'half': accepted: float, bf16" "$ZB" "${w[@]}" -d half
expect2 J "-J/--output_file needs a value" "$ZB" "${w[@]}" -J
# the nccl-tests flags are the collectives' only: gemm refuses them as such
expect2 gemm "-g/--ngpus is not an option of 'gemm'" "$ZB" gemm --shape 8x8x8 -g 1

# ---- the table and the closing lines, as nccl-tests prints them ----------
python3 - <<'PY' || fail=1
import json, re
from zbcheck import check, finish

NCCL_HEADER = "size count type redop root time algbw busbw #wrong time algbw busbw #wrong".split()
RANKS, ELEM = 2, 4  # float

def rows_of(name):
    lines = open(f"{name}.out").read().splitlines()
    header = [l for l in lines if l.startswith("#") and "#wrong" in l]
    check(len(header) == 1 and header[0][1:].split() == NCCL_HEADER, f"{name}: nccl-tests' header: {header}")
    # a data row: what a script for nccl-tests keeps (lines not starting with #)
    rows = [l.split() for l in lines if l.strip() and not l.startswith("#")]
    check(rows and all(len(r) == 13 for r in rows), f"{name}: 13 fields per row: {rows}")
    return lines, rows

for name, redop, per_rank in (("ar", "sum", False), ("ag", "none", True), ("rs", "sum", True)):
    lines, rows = rows_of(name)
    for r in rows:
        size, count = int(r[0]), int(r[1])
        want = size // (ELEM * RANKS) if per_rank else size // ELEM
        check(count == want, f"{name}: count {count} for {size} B (per rank: {per_rank}) want {want}")
        check(r[2] == "float" and r[3] == redop and r[4] == "-1", f"{name}: type redop root {r[2:5]}")
        check(r[8] == "0" and r[12] == "0", f"{name}: #wrong in fields 9 and 13: {r}")
        # busbw, field 8 (and 12): algbw * (n-1)/n or 2(n-1)/n at 2 ranks
        f = 0.5 if per_rank else 1.0
        for t, alg, bus in ((r[5], r[6], r[7]), (r[9], r[10], r[11])):
            check(float(t) > 0 and abs(float(bus) - float(alg) * f) <= 0.0015, f"{name}: busbw field: {r}")
    # closing lines: nccl-tests' text, the number bare, then "#"
    i = next((k for k, l in enumerate(lines) if l.startswith("# Avg bus bandwidth")), None)
    check(i is not None, f"{name}: Avg bus bandwidth line")
    if i is None:
        continue
    check(lines[i - 1] == "# Out of bounds values : 0 OK", f"{name}: out of bounds line {lines[i - 1]!r}")
    m = re.fullmatch(r"# Avg bus bandwidth    : (\S+) ", lines[i])
    check(m is not None, f"{name}: nccl-tests' format {lines[i]!r}")
    check(lines[i + 1] == "#", f"{name}: '#' after it")
    if m:
        avg = float(m.group(1))  # a bare number (GB/s), as nccl-tests prints it
        bus = [float(r[k]) for r in rows for k in (7, 11)]
        check(bus and abs(avg - sum(bus) / len(bus)) <= 0.0015, f"{name}: avg {avg} vs rows {bus}")

# JSON from -J: zerobench's own schema, count per rank as in the table
j = json.load(open("ag.json"))
check(j["schema"] == "zerobench/1", "-J writes zerobench's JSON")
_, rows = rows_of("ag")
tab = {int(r[0]): int(r[1]) for r in rows}
check(all(tab.get(x["size_bytes"]) == x["count"] for x in j["runs"]), "JSON count == table count (per rank)")
finish()
PY
exit $fail
