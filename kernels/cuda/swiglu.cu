/* SwiGLU gate on CUDA, forward and backward: h = silu(gate) * up,
 * elementwise (math_silu.h, shared with the CPU kernels).
 * Shapes: gate, up, h, dh, dgate, dup [N, F] (N = B*T, F ffn dim), passed
 * as n = N * F elements, stored as S (float or zb_bf16; the math is fp32);
 * one thread per element. */
#include "math_silu.h"
#include "zb_cuda_common.cuh"

/* h [n] = silu(gate) * up */
template <typename S>
static __global__ void swiglu_fwd_kernel(S *h, const S *gate, const S *up, size_t n) {
    for (size_t i = zb_gs_first(); i < n; i += zb_gs_stride()) {
        zb_st(h, i, zb_silu(zb_ld(gate, i)) * zb_ld(up, i));
    }
}

/* dgate = dh * up * silu'(gate), dup = dh * silu(gate). Each element's
 * inputs are read before its outputs are written, so dgate may equal gate
 * or dh and dup may equal up or dh. */
template <typename S>
static __global__ void swiglu_bwd_kernel(S *dgate, S *dup, const S *dh, const S *gate,
                                         const S *up, size_t n) {
    for (size_t i = zb_gs_first(); i < n; i += zb_gs_stride()) {
        float g = zb_ld(gate, i), u = zb_ld(up, i), d = zb_ld(dh, i);
        zb_st(dgate, i, d * u * zb_silu_grad(g));
        zb_st(dup, i, d * zb_silu(g));
    }
}

template <typename S>
static cudaError_t swiglu_fwd(cudaStream_t stream, void *h, const void *gate, const void *up,
                              size_t n) {
    if (n == 0) return cudaSuccess;
    swiglu_fwd_kernel<S><<<zb_cuda_blocks(n), ZB_CUDA_THREADS, 0, stream>>>(
        (S *)h, (const S *)gate, (const S *)up, n);
    return cudaGetLastError();
}

template <typename S>
static cudaError_t swiglu_bwd(cudaStream_t stream, void *dgate, void *dup, const void *dh,
                              const void *gate, const void *up, size_t n) {
    if (n == 0) return cudaSuccess;
    swiglu_bwd_kernel<S><<<zb_cuda_blocks(n), ZB_CUDA_THREADS, 0, stream>>>(
        (S *)dgate, (S *)dup, (const S *)dh, (const S *)gate, (const S *)up, n);
    return cudaGetLastError();
}

cudaError_t zb_cuda_swiglu_fwd(cudaStream_t stream, zb_dtype dtype, void *h, const void *gate,
                               const void *up, size_t n) {
    return ZB_CUDA_DISPATCH(dtype, swiglu_fwd, stream, h, gate, up, n);
}

cudaError_t zb_cuda_swiglu_bwd(cudaStream_t stream, zb_dtype dtype, void *dgate, void *dup,
                               const void *dh, const void *gate, const void *up, size_t n) {
    return ZB_CUDA_DISPATCH(dtype, swiglu_bwd, stream, dgate, dup, dh, gate, up, n);
}
