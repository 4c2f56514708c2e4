/* Residual add and gradient accumulate on CUDA, elementwise.
 * Shapes: a, b, out, dst, src [N, C] (N = B*T), passed as n = N * C
 * elements; one thread per element. The residual backward is two
 * accumulates (the caller issues them), as in the CPU kernels. */
#include "zb_cuda_common.cuh"

/* out [n] = a + b; out may equal a or b. */
static __global__ void residual_fwd_kernel(float *out, const float *a, const float *b, size_t n) {
    for (size_t i = zb_gs_first(); i < n; i += zb_gs_stride()) out[i] = a[i] + b[i];
}

/* dst [n] += src */
static __global__ void accumulate_kernel(float *dst, const float *src, size_t n) {
    for (size_t i = zb_gs_first(); i < n; i += zb_gs_stride()) dst[i] += src[i];
}

cudaError_t zb_cuda_residual_fwd(cudaStream_t stream, float *out, const float *a, const float *b,
                                 size_t n) {
    if (n == 0) return cudaSuccess;
    residual_fwd_kernel<<<zb_cuda_blocks(n), ZB_CUDA_THREADS, 0, stream>>>(out, a, b, n);
    return cudaGetLastError();
}

cudaError_t zb_cuda_accumulate(cudaStream_t stream, float *dst, const float *src, size_t n) {
    if (n == 0) return cudaSuccess;
    accumulate_kernel<<<zb_cuda_blocks(n), ZB_CUDA_THREADS, 0, stream>>>(dst, src, n);
    return cudaGetLastError();
}
