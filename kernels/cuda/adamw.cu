/* AdamW on CUDA over a contiguous fp32 segment (the sharded optimizer's
 * step), with an optional bf16 copy-out of the updated parameters (the
 * compute copy the next all-gather sends). Shapes: params, grads, m, v,
 * params_bf16 [n]: one rank's slice of a flat parameter unit; one thread per
 * element. Per-element math and weight-decay order in math_adamw.h (shared
 * with the CPU kernel); the bias corrections are computed once on the host
 * by the same function the CPU kernel uses. */
#include "math_adamw.h"
#include "zb_cuda_common.cuh"

static __global__ void adamw_kernel(float *params, const float *grads, float *m, float *v,
                                    size_t n, float lr, float b1, float b2, float eps, float wd,
                                    float bc1, float bc2, zb_bf16 *params_bf16) {
    for (size_t i = zb_gs_first(); i < n; i += zb_gs_stride()) {
        float p = params[i], mi = m[i], vi = v[i];
        zb_adamw_update(&p, &mi, &vi, grads[i], lr, b1, b2, eps, wd, bc1, bc2);
        params[i] = p;
        m[i] = mi;
        v[i] = vi;
        if (params_bf16) params_bf16[i] = zb_f32_to_bf16(p);
    }
}

cudaError_t zb_cuda_adamw(cudaStream_t stream, float *params, const float *grads, float *m,
                          float *v, size_t n, int t, float lr, float beta1, float beta2, float eps,
                          float weight_decay, bool apply_weight_decay, zb_bf16 *params_bf16) {
    if (t < 1) return cudaErrorInvalidValue;
    if (n == 0) return cudaSuccess;
    float bc1 = zb_adamw_bias_correction(beta1, t);
    float bc2 = zb_adamw_bias_correction(beta2, t);
    float wd = apply_weight_decay ? weight_decay : 0.0f;
    adamw_kernel<<<zb_cuda_blocks(n), ZB_CUDA_THREADS, 0, stream>>>(
        params, grads, m, v, n, lr, beta1, beta2, eps, wd, bc1, bc2, params_bf16);
    return cudaGetLastError();
}
