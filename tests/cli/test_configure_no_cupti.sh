#!/usr/bin/env bash
# A CUDA toolkit without CUPTI's headers still configures and builds the
# cuda backend, without the tracer: configures the project with
# -DZB_WITH_CUPTI=OFF (the path a missing cupti.h takes) into a scratch
# folder, checks CMake says so, and compiles the cuda backend's sources that
# use the tracer's interface (objects only: no link, no kernels), so its
# no-op fallback is what they compile against. Skipped (77) without nvcc.
set -u
cd "$(dirname "$0")/../.." || exit 1
export PATH="$PATH:/usr/local/cuda/bin"
command -v nvcc >/dev/null 2>&1 || { echo "test_configure_no_cupti: skipped: no nvcc"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zb_nocupti.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { failures=$((failures + 1)); echo "FAIL: $*"; }

timeout 300 cmake -S . -B "$tmp" -DZB_WITH_CUDA=ON -DZB_WITH_CUPTI=OFF -DZB_BUILD_TESTS=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=90 >"$tmp/configure.log" 2>&1 || fail "configure failed: $(tail -n 5 "$tmp/configure.log")"
grep -q "without the CUPTI tracer" "$tmp/configure.log" || fail "CMake did not say the tracer is left out"
grep -q "ZB_HAVE_CUPTI" "$tmp/CMakeFiles/zb_device_cuda.dir/flags.make" 2>/dev/null &&
    fail "ZB_HAVE_CUPTI is defined without CUPTI"
grep -q "cupti_tracer.c" "$tmp/CMakeFiles/zb_device_cuda.dir/build.make" 2>/dev/null &&
    fail "cupti_tracer.c is still built"
for obj in backend_cuda device_cuda; do
    timeout 300 make -C "$tmp" "harness/device/cuda/$obj.c.o" >"$tmp/$obj.log" 2>&1 ||
        fail "$obj.c does not compile without CUPTI: $(grep -m3 error "$tmp/$obj.log")"
done
echo "test_configure_no_cupti: $failures failed"
[ "$failures" -eq 0 ]
