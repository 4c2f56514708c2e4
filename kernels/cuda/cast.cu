/* fp32 <-> bf16 casts on CUDA (bf16.h, shared with the CPU kernels:
 * round-to-nearest-even, NaN stays a quiet NaN; widening is exact).
 * Shapes: src, dst [n], any tensor flattened; one thread per element. */
#include "zb_cuda_common.cuh"

static __global__ void f32_to_bf16_kernel(zb_bf16 *dst, const float *src, size_t n) {
    for (size_t i = zb_gs_first(); i < n; i += zb_gs_stride()) dst[i] = zb_f32_to_bf16(src[i]);
}

static __global__ void bf16_to_f32_kernel(float *dst, const zb_bf16 *src, size_t n) {
    for (size_t i = zb_gs_first(); i < n; i += zb_gs_stride()) dst[i] = zb_bf16_to_f32(src[i]);
}

cudaError_t zb_cuda_f32_to_bf16(cudaStream_t stream, zb_bf16 *dst, const float *src, size_t n) {
    if (n == 0) return cudaSuccess;
    f32_to_bf16_kernel<<<zb_cuda_blocks(n), ZB_CUDA_THREADS, 0, stream>>>(dst, src, n);
    return cudaGetLastError();
}

cudaError_t zb_cuda_bf16_to_f32(cudaStream_t stream, float *dst, const zb_bf16 *src, size_t n) {
    if (n == 0) return cudaSuccess;
    bf16_to_f32_kernel<<<zb_cuda_blocks(n), ZB_CUDA_THREADS, 0, stream>>>(dst, src, n);
    return cudaGetLastError();
}
