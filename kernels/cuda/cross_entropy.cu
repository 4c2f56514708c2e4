/* Softmax cross-entropy over the vocabulary on CUDA, forward and backward.
 * Shapes: logits, dlogits [N, V] (N = B*T tokens, V vocab); targets [N];
 * lse [N] (log-sum-exp of each row, saved for the backward); loss [1], the
 * mean over the N tokens. logits and dlogits are stored as S (float or
 * zb_bf16, widened on load, rounded on store); lse and loss are fp32.
 * Forward: one block per row, fp32 tree reductions (row max, then sum of
 * exp) in shared memory; each row adds its term
 * (lse - logits[target]) / N to loss with atomicAdd after loss was zeroed
 * in the same stream. Backward: one thread per element. A target outside
 * [0, V) contributes no loss and no onehot term, as on the CPU, and is
 * reported through err_word when not NULL. */
#include <math.h>

#include "zb_cuda_common.cuh"

template <typename S>
static __global__ void cross_entropy_fwd_kernel(float *loss, float *lse, const S *logits,
                                                const int32_t *targets, int N, int V,
                                                int32_t *err_word) {
    __shared__ float red[ZB_CUDA_ROW_THREADS];
    const S *row = logits + (size_t)blockIdx.x * (size_t)V;
    float mx = -INFINITY;
    for (int j = (int)threadIdx.x; j < V; j += (int)blockDim.x) {
        mx = fmaxf(mx, zb_ld(row, (size_t)j));
    }
    mx = zb_block_max(mx, red);
    float sum = 0.0f;
    for (int j = (int)threadIdx.x; j < V; j += (int)blockDim.x) {
        sum += expf(zb_ld(row, (size_t)j) - mx);
    }
    sum = zb_block_sum(sum, red);
    if (threadIdx.x == 0) {
        float l = mx + logf(sum);
        lse[blockIdx.x] = l;
        int32_t tgt = targets[blockIdx.x];
        if (tgt >= 0 && tgt < V) {
            atomicAdd(loss, (l - zb_ld(row, (size_t)tgt)) / (float)N);
        } else {
            zb_report_bad_id(err_word, tgt);
        }
    }
}

/* dlogits [i, j] = scale * (exp(logits[i, j] - lse[i]) - (j == target_i)),
 * scale = dloss / N. dlogits may equal logits (read before written). */
template <typename S>
static __global__ void cross_entropy_bwd_kernel(S *dlogits, const S *logits, const float *lse,
                                                const int32_t *targets, int N, int V,
                                                float scale, int32_t *err_word) {
    size_t n = (size_t)N * (size_t)V;
    for (size_t idx = zb_gs_first(); idx < n; idx += zb_gs_stride()) {
        size_t i = idx / (size_t)V;
        int j = (int)(idx % (size_t)V);
        float p = expf(zb_ld(logits, idx) - lse[i]);
        int32_t tgt = targets[i];
        float onehot = (j == tgt) ? 1.0f : 0.0f;
        if (j == 0 && (tgt < 0 || tgt >= V)) zb_report_bad_id(err_word, tgt);
        zb_st(dlogits, idx, scale * (p - onehot));
    }
}

template <typename S>
static cudaError_t cross_entropy_fwd(cudaStream_t stream, float *loss, float *lse,
                                     const void *logits, const int32_t *targets, int N, int V,
                                     int32_t *err_word) {
    if (N < 0 || V <= 0) return cudaErrorInvalidValue;
    cudaError_t e = cudaMemsetAsync(loss, 0, sizeof(float), stream);
    if (e != cudaSuccess || N == 0) return e;
    cross_entropy_fwd_kernel<S><<<(unsigned)N, ZB_CUDA_ROW_THREADS, 0, stream>>>(
        loss, lse, (const S *)logits, targets, N, V, err_word);
    return cudaGetLastError();
}

template <typename S>
static cudaError_t cross_entropy_bwd(cudaStream_t stream, void *dlogits, const void *logits,
                                     const float *lse, const int32_t *targets, int N, int V,
                                     float dloss, int32_t *err_word) {
    if (N < 0 || V <= 0) return cudaErrorInvalidValue;
    size_t n = (size_t)N * (size_t)V;
    if (n == 0) return cudaSuccess;
    float scale = (float)((double)dloss / (double)N); /* as the CPU kernel's scale */
    cross_entropy_bwd_kernel<S><<<zb_cuda_blocks(n), ZB_CUDA_THREADS, 0, stream>>>(
        (S *)dlogits, (const S *)logits, lse, targets, N, V, scale, err_word);
    return cudaGetLastError();
}

cudaError_t zb_cuda_cross_entropy_fwd(cudaStream_t stream, zb_dtype dtype, float *loss,
                                      float *lse, const void *logits, const int32_t *targets,
                                      int N, int V, int32_t *err_word) {
    return ZB_CUDA_DISPATCH(dtype, cross_entropy_fwd, stream, loss, lse, logits, targets, N, V,
                            err_word);
}

cudaError_t zb_cuda_cross_entropy_bwd(cudaStream_t stream, zb_dtype dtype, void *dlogits,
                                      const void *logits, const float *lse,
                                      const int32_t *targets, int N, int V, float dloss,
                                      int32_t *err_word) {
    return ZB_CUDA_DISPATCH(dtype, cross_entropy_bwd, stream, dlogits, logits, lse, targets, N,
                            V, dloss, err_word);
}
