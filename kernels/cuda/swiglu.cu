/* SwiGLU gate on CUDA, forward and backward: h = silu(gate) * up,
 * elementwise (math_silu.h, shared with the CPU kernels).
 * Shapes: gate, up, h, dh, dgate, dup [N, F] (N = B*T, F ffn dim), passed
 * as n = N * F elements; one thread per element. */
#include "math_silu.h"
#include "zb_cuda_common.cuh"

/* h [n] = silu(gate) * up */
static __global__ void swiglu_fwd_kernel(float *h, const float *gate, const float *up, size_t n) {
    for (size_t i = zb_gs_first(); i < n; i += zb_gs_stride()) h[i] = zb_silu(gate[i]) * up[i];
}

/* dgate = dh * up * silu'(gate), dup = dh * silu(gate). Each element's
 * inputs are read before its outputs are written, so dgate may equal gate
 * or dh and dup may equal up or dh. */
static __global__ void swiglu_bwd_kernel(float *dgate, float *dup, const float *dh,
                                         const float *gate, const float *up, size_t n) {
    for (size_t i = zb_gs_first(); i < n; i += zb_gs_stride()) {
        float g = gate[i], u = up[i], d = dh[i];
        dgate[i] = d * u * zb_silu_grad(g);
        dup[i] = d * zb_silu(g);
    }
}

cudaError_t zb_cuda_swiglu_fwd(cudaStream_t stream, float *h, const float *gate, const float *up,
                               size_t n) {
    if (n == 0) return cudaSuccess;
    swiglu_fwd_kernel<<<zb_cuda_blocks(n), ZB_CUDA_THREADS, 0, stream>>>(h, gate, up, n);
    return cudaGetLastError();
}

cudaError_t zb_cuda_swiglu_bwd(cudaStream_t stream, float *dgate, float *dup, const float *dh,
                               const float *gate, const float *up, size_t n) {
    if (n == 0) return cudaSuccess;
    swiglu_bwd_kernel<<<zb_cuda_blocks(n), ZB_CUDA_THREADS, 0, stream>>>(dgate, dup, dh, gate, up,
                                                                          n);
    return cudaGetLastError();
}
