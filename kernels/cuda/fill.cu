/* Fill on CUDA: dst [n] = value, any tensor flattened; one thread per
 * element. Zero (+0 or -0) is a cudaMemsetAsync to all-zero bytes, as the
 * CPU kernel's memset. */
#include "zb_cuda_common.cuh"

static __global__ void fill_kernel(float *dst, float value, size_t n) {
    for (size_t i = zb_gs_first(); i < n; i += zb_gs_stride()) dst[i] = value;
}

cudaError_t zb_cuda_fill(cudaStream_t stream, float *dst, float value, size_t n) {
    if (n == 0) return cudaSuccess;
    if (value == 0.0f) return cudaMemsetAsync(dst, 0, n * sizeof(float), stream);
    fill_kernel<<<zb_cuda_blocks(n), ZB_CUDA_THREADS, 0, stream>>>(dst, value, n);
    return cudaGetLastError();
}
