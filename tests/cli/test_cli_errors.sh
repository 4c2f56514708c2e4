#!/usr/bin/env bash
# Runs the real zerobench binary ($ZB) on bad input and checks docs/design.md §8:
# exit code 2, exactly one line on stderr that starts with "zerobench: " and
# names the flag, nothing on stdout, and no output file left behind. Then
# checks that --help exits 0 and lists the flags, and that a valid tiny run
# exits 0 and writes its JSON (schema zerobench/1, runs non-empty) and CSV.
set -u

: "${ZB:?ZB must name the zerobench binary}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zb_cli_errors.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
checks=0

fail() {
    failures=$((failures + 1))
    echo "FAIL: $*"
}

# expect_bad NEEDLE ARGS...: exit 2, one stderr line "zerobench: ..." that
# contains NEEDLE, empty stdout.
expect_bad() {
    local needle=$1
    shift
    checks=$((checks + 1))
    local rc=0
    timeout 60 "$ZB" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
    local lines first
    lines=$(wc -l <"$tmp/err")
    first=$(head -n 1 "$tmp/err")
    local what="zerobench $*"
    if [ "$rc" -ne 2 ]; then
        fail "$what: exit code $rc, want 2"
    elif [ "$lines" -ne 1 ]; then
        fail "$what: $lines line(s) on stderr, want 1"
    elif [ "${first#zerobench: }" = "$first" ]; then
        fail "$what: stderr does not start with 'zerobench: '"
    elif [[ "$first" != *"$needle"* ]]; then
        fail "$what: stderr lacks '$needle'"
    elif [ -s "$tmp/out" ]; then
        fail "$what: wrote to stdout"
    else
        return 0
    fi
    echo "  stdout: $(head -c 400 "$tmp/out")"
    echo "  stderr: $(head -c 800 "$tmp/err")"
    return 1
}

expect_bad "-b/--minbytes"    allgather -b 0
expect_bad "-b/--minbytes"    allgather -b 64M -e 1M
expect_bad "-b/--minbytes"    allgather -b 12Q
expect_bad "-e/--maxbytes"    reducescatter -e junk
expect_bad "-n/--iters"       allreduce -n 0
expect_bad "-d/--datatype"    allgather -d fp8
expect_bad "--timeout"        allgather --timeout -3
expect_bad "--nodes"          allgather --nodes 0
expect_bad "--emulate-nodes"  allgather --emulate-nodes
# --backend cuda is bad input only where no GPU is usable: ask the program
# what --backend auto chooses here (the "# backend NAME," header line).
auto_backend=$(timeout 60 "$ZB" allgather -b 1K -e 1K -n 1 -w 0 --backend auto 2>/dev/null </dev/null \
    | sed -n 's/^# backend \([^,]*\),.*/\1/p' | head -n 1)
if [ "$auto_backend" = cuda ]; then
    echo "test_cli_errors: skipped 'allgather --backend cuda' (a usable GPU is here: --backend auto chose cuda)"
else
    expect_bad "--backend"    allgather --backend cuda
fi
expect_bad "bogus"            bogus
expect_bad "--bogus"          allgather --bogus
expect_bad "--shape"          allgather --shape 1x1x1
expect_bad "-e/--maxbytes"    allgather -b 1K -e
expect_bad "--shape"          gemm --shape 1x2
expect_bad "--json"           allgather -b 1K -e 1K --json "$tmp/nonexistent/dir/x.json"
expect_bad "--csv"            allgather -b 1K -e 1K --csv /nonexistent/dir/x.csv
expect_bad "--hw"             allgather -b 1K -e 1K --hw nosuchgpu
expect_bad "--model"          gemm --model nosuchmodel
expect_bad "--hostfile"       allgather -b 1K -e 1K --hostfile /nonexistent/hostfile
expect_bad "--force"          step --force
expect_bad "--force"          allgather -b 1K -e 1K --force=yes
# Buffers no machine here has memory for (bench/bench_mem.c): refused
# before the header, and without --force only.
expect_bad "-e/--maxbytes 1T" allgather --backend cpu -b 1K -e 1T
expect_bad "--shape 1048576x1048576x1048576" gemm --backend cpu --shape 1048576x1048576x1048576

# No output file from a rejected run: the folder exists, the flags are bad.
checks=$((checks + 1))
expect_bad "-b/--minbytes" allgather -b 0 --json "$tmp/rejected.json" --csv "$tmp/rejected.csv" \
    --trace "$tmp/rejected.trace.json"
if ls "$tmp"/rejected* >/dev/null 2>&1 || [ -e "$tmp/nonexistent" ]; then
    fail "a rejected run left files behind: $(ls "$tmp")"
fi
# A valid command whose --hw is bad also writes nothing.
checks=$((checks + 1))
expect_bad "--hw" allgather -b 1K -e 1K -n 1 -w 0 --hw nosuchgpu --json "$tmp/rejected.json"
if [ -e "$tmp/rejected.json" ]; then
    fail "--hw nosuchgpu left $tmp/rejected.json behind"
fi

# --help: exit 0, usage on stdout with the collective flags.
checks=$((checks + 1))
rc=0
timeout 60 "$ZB" allgather --help >"$tmp/help" 2>"$tmp/help.err" </dev/null || rc=$?
if [ "$rc" -ne 0 ] || ! grep -q -- "-b/--minbytes" "$tmp/help" || ! grep -q -- "-e/--maxbytes" "$tmp/help" \
    || grep -q -- "--shape" "$tmp/help"; then
    fail "allgather --help: exit $rc; stdout:"
    cat "$tmp/help" "$tmp/help.err"
fi
checks=$((checks + 1))
rc=0
timeout 60 "$ZB" gemm -h >"$tmp/help" 2>"$tmp/help.err" </dev/null || rc=$?
if [ "$rc" -ne 0 ] || ! grep -q -- "--shape" "$tmp/help"; then
    fail "gemm -h: exit $rc; stdout:"
    cat "$tmp/help" "$tmp/help.err"
fi

# A valid tiny run writes both files.
checks=$((checks + 1))
rc=0
timeout 120 "$ZB" allgather -b 1K -e 4K -n 2 -w 1 --json "$tmp/out.json" --csv "$tmp/out.csv" \
    >"$tmp/run.out" 2>"$tmp/run.err" </dev/null || rc=$?
if [ "$rc" -ne 0 ]; then
    fail "valid tiny allgather run: exit $rc"
    tail -n 20 "$tmp/run.out" "$tmp/run.err"
else
    if ! python3 - "$tmp/out.json" <<'EOF'
import json, sys
with open(sys.argv[1]) as f:
    doc = json.load(f)
assert doc.get("schema") == "zerobench/1", "schema is %r" % (doc.get("schema"),)
runs = doc.get("runs")
assert isinstance(runs, list) and len(runs) > 0, "runs is %r" % (runs,)
EOF
    then
        fail "out.json is not a zerobench/1 report with runs:"
        head -c 800 "$tmp/out.json"
        echo
    fi
    if [ ! -s "$tmp/out.csv" ] || [ "$(wc -l <"$tmp/out.csv")" -lt 2 ]; then
        fail "out.csv is missing or has no data rows:"
        head -n 5 "$tmp/out.csv" 2>&1
    fi
    if ls -A "$tmp" | grep -qE '\.tmp|\.zb-'; then
        fail "temporary files left behind: $(ls "$tmp")"
    fi
fi

echo "test_cli_errors: $checks checks, $failures failed"
[ "$failures" -eq 0 ]
