/* Rotary position embedding on CUDA (rotate-half convention, math_rope.h,
 * shared with the CPU kernels), forward and backward (inverse rotation).
 * Shapes: x, out, dout, dx [B, T, NH, D] with NH = H for q and KVH for k,
 * stored as S (float or zb_bf16; the rotation is fp32); token t sits at
 * position t. One thread per (b, t, head, pair i): it reads x[i] and
 * x[i + D/2] and writes both, so in place (out == x) is safe. */
#include "math_rope.h"
#include "zb_cuda_common.cuh"

template <typename S>
static __global__ void rope_kernel(S *out, const S *x, int B, int T, int NH, int D, float theta,
                                   int inverse) {
    int half = D / 2;
    size_t n_pairs = (size_t)B * (size_t)T * (size_t)NH * (size_t)half;
    for (size_t idx = zb_gs_first(); idx < n_pairs; idx += zb_gs_stride()) {
        int i = (int)(idx % (size_t)half);
        size_t head = idx / (size_t)half; /* (b * T + t) * NH + h */
        int t = (int)((head / (size_t)NH) % (size_t)T);
        size_t off = head * (size_t)D;
        float x0 = zb_ld(x, off + (size_t)i);
        float x1 = zb_ld(x, off + (size_t)(i + half));
        float c, s;
        zb_rope_cos_sin(t, i, D, theta, &c, &s);
        zb_rope_rotate(&x0, &x1, c, s, inverse);
        zb_st(out, off + (size_t)i, x0);
        zb_st(out, off + (size_t)(i + half), x1);
    }
}

template <typename S>
static cudaError_t rope_launch(cudaStream_t stream, void *out, const void *x, int B, int T,
                               int NH, int D, float theta, int inverse) {
    if (B < 0 || T < 0 || NH < 0 || D <= 0 || D % 2 != 0) return cudaErrorInvalidValue;
    size_t n_pairs = (size_t)B * (size_t)T * (size_t)NH * (size_t)(D / 2);
    if (n_pairs == 0) return cudaSuccess;
    rope_kernel<S><<<zb_cuda_blocks(n_pairs), ZB_CUDA_THREADS, 0, stream>>>(
        (S *)out, (const S *)x, B, T, NH, D, theta, inverse);
    return cudaGetLastError();
}

cudaError_t zb_cuda_rope_fwd(cudaStream_t stream, zb_dtype dtype, void *out, const void *x,
                             int B, int T, int NH, int D, float theta) {
    return ZB_CUDA_DISPATCH(dtype, rope_launch, stream, out, x, B, T, NH, D, theta, 0);
}

cudaError_t zb_cuda_rope_bwd(cudaStream_t stream, zb_dtype dtype, void *dx, const void *dout,
                             int B, int T, int NH, int D, float theta) {
    return ZB_CUDA_DISPATCH(dtype, rope_launch, stream, dx, dout, B, T, NH, D, theta, 1);
}
