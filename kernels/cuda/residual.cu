/* Residual add and gradient accumulate on CUDA, elementwise.
 * Shapes: a, b, out, dst, src [N, C] (N = B*T), passed as n = N * C
 * elements, stored as S (float or zb_bf16; the sum is fp32, rounded once
 * when stored); one thread per element. The residual backward is two
 * accumulates (the caller issues them), as in the CPU kernels. */
#include "zb_cuda_common.cuh"

/* out [n] = a + b; out may equal a or b. */
template <typename S>
static __global__ void residual_fwd_kernel(S *out, const S *a, const S *b, size_t n) {
    for (size_t i = zb_gs_first(); i < n; i += zb_gs_stride()) {
        zb_st(out, i, zb_ld(a, i) + zb_ld(b, i));
    }
}

/* dst [n] += src */
template <typename S>
static __global__ void accumulate_kernel(S *dst, const S *src, size_t n) {
    for (size_t i = zb_gs_first(); i < n; i += zb_gs_stride()) {
        zb_st(dst, i, zb_ld(dst, i) + zb_ld(src, i));
    }
}

template <typename S>
static cudaError_t residual_fwd(cudaStream_t stream, void *out, const void *a, const void *b,
                                size_t n) {
    if (n == 0) return cudaSuccess;
    residual_fwd_kernel<S><<<zb_cuda_blocks(n), ZB_CUDA_THREADS, 0, stream>>>(
        (S *)out, (const S *)a, (const S *)b, n);
    return cudaGetLastError();
}

template <typename S>
static cudaError_t accumulate(cudaStream_t stream, void *dst, const void *src, size_t n) {
    if (n == 0) return cudaSuccess;
    accumulate_kernel<S><<<zb_cuda_blocks(n), ZB_CUDA_THREADS, 0, stream>>>(
        (S *)dst, (const S *)src, n);
    return cudaGetLastError();
}

cudaError_t zb_cuda_residual_fwd(cudaStream_t stream, zb_dtype dtype, void *out, const void *a,
                                 const void *b, size_t n) {
    return ZB_CUDA_DISPATCH(dtype, residual_fwd, stream, out, a, b, n);
}

cudaError_t zb_cuda_accumulate(cudaStream_t stream, zb_dtype dtype, void *dst, const void *src,
                               size_t n) {
    return ZB_CUDA_DISPATCH(dtype, accumulate, stream, dst, src, n);
}
