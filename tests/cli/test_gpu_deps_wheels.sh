#!/usr/bin/env bash
# ci/gpu-deps finds CUPTI and NCCL in Python's nvidia-* wheels whatever
# their layout: CUDA 12 wheels keep nvidia/cuda_cupti/lib/libcupti.so.12,
# CUDA 13 wheels nvidia/cu13/lib/libcupti.so.13; NCCL nvidia/nccl/lib. And
# the toolkit's own libcupti is exported by its exact file.
# Fake wheel trees on PYTHONPATH, no real library needed.
set -u
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zb_wheels.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
checks=0
expect() { # name pythonpath glob want
    checks=$((checks + 1))
    local got
    got=$(PYTHONPATH=$2 ci/gpu-deps wheel-file "$3")
    if [ "$got" != "$4" ]; then
        failures=$((failures + 1))
        echo "FAIL: $1: got '$got', want '$4'"
    fi
}
mkdir -p "$tmp/cu13/nvidia/cu13/lib" "$tmp/cu13/nvidia/nccl/lib" "$tmp/cu12/nvidia/cuda_cupti/lib"
touch "$tmp/cu13/nvidia/cu13/lib/libcupti.so.13" "$tmp/cu13/nvidia/nccl/lib/libnccl.so.2" \
      "$tmp/cu12/nvidia/cuda_cupti/lib/libcupti.so.12"
expect "CUDA 13 wheel" "$tmp/cu13" 'libcupti.so*' "$tmp/cu13/nvidia/cu13/lib/libcupti.so.13"
expect "CUDA 12 wheel" "$tmp/cu12" 'libcupti.so*' "$tmp/cu12/nvidia/cuda_cupti/lib/libcupti.so.12"
expect "NCCL wheel" "$tmp/cu13" 'libnccl.so*' "$tmp/cu13/nvidia/nccl/lib/libnccl.so.2"
# Nothing found where no wheel is (unless this machine has real ones).
if [ -z "$(ci/gpu-deps wheel-file 'libcupti.so*')" ]; then
    expect "no wheel" "$tmp/none" 'libcupti.so*' ""
fi
# Both trees on the path: the first one's wins, as Python's import order says.
expect "path order" "$tmp/cu12:$tmp/cu13" 'libcupti.so*' "$tmp/cu12/nvidia/cuda_cupti/lib/libcupti.so.12"
# The toolkit's CUPTI: the exact file is exported, the versioned one where
# no unversioned link exists, in lib64 or in extras/CUPTI/lib64.
cupti_env() { # cuda_home
    ZB_CUPTI_LIBRARY= ZB_CUDA_HOME=$1 PYTHONPATH=$tmp/none ci/gpu-deps env 2>/dev/null |
        sed -n 's/^export ZB_CUPTI_LIBRARY=//p'
}
mkdir -p "$tmp/cudaA/extras/CUPTI/lib64" "$tmp/cudaB/lib64"
touch "$tmp/cudaA/extras/CUPTI/lib64/libcupti.so.13" "$tmp/cudaB/lib64/libcupti.so.13"
checks=$((checks + 3))
got=$(cupti_env "$tmp/cudaA")
[ "$got" = "$tmp/cudaA/extras/CUPTI/lib64/libcupti.so.13" ] ||
    { failures=$((failures + 1)); echo "FAIL: extras/CUPTI, versioned only: got '$got'"; }
got=$(cupti_env "$tmp/cudaB")
[ "$got" = "$tmp/cudaB/lib64/libcupti.so.13" ] ||
    { failures=$((failures + 1)); echo "FAIL: lib64, versioned only: got '$got'"; }
got=$(ZB_CUPTI_LIBRARY=/given ZB_CUDA_HOME=$tmp/cudaB ci/gpu-deps env 2>/dev/null | grep ZB_CUPTI_LIBRARY)
[ -z "$got" ] || { failures=$((failures + 1)); echo "FAIL: a given ZB_CUPTI_LIBRARY was replaced: '$got'"; }

echo "test_gpu_deps_wheels: $checks checks, $failures failed"
[ "$failures" -eq 0 ]
