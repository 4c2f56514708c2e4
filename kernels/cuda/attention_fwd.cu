/* Causal softmax attention with grouped-query heads (GQA) on CUDA, forward.
 * Shapes: q, out [B, T, H, D]; k, v [B, T, KVH, D]; probs [B, H, T, T]
 * (row i: softmax over keys j <= i, zeros for j > i). Query head h reads kv
 * head h / (H / KVH); scale 1/sqrt(D). q, k, v, out and probs are stored
 * as S (float or zb_bf16, widened on load, rounded on store); everything in
 * shared memory and registers is fp32, and out is computed from the fp32
 * probabilities (as the CPU reference does), not from the rounded probs.
 *
 * One block of ATTN_THREADS (4 warps) per (query row i, head h, batch b):
 *   1. scores s_j = scale * q_i . k_j for j <= i, one warp per key (lanes
 *      split D, shuffle sum), into shared memory (T floats, dynamic);
 *   2. row max and sum of exp(s_j - max): fp32 block tree reductions;
 *   3. p_j = exp(s_j - max) / sum written to probs (zeros above the
 *      diagonal) and kept in shared memory;
 *   4. out_i[d] = sum_j p_j v_j[d]: one thread per d, j in order.
 * Straightforward, not fast: O(T^2 D) work per head with no tiling. */
#include <math.h>

#include "zb_cuda_common.cuh"

#define ATTN_THREADS 128

template <typename S>
static __global__ void attention_fwd_kernel(S *out, S *probs, const S *q, const S *k, const S *v,
                                            int T, int H, int KVH, int D, float scale) {
    extern __shared__ float smem[]; /* srow [T], then red [ATTN_THREADS] */
    float *srow = smem;
    float *red = smem + T;
    int i = (int)blockIdx.x, h = (int)blockIdx.y, b = (int)blockIdx.z;
    int g = h / (H / KVH);
    int tid = (int)threadIdx.x, lane = tid % ZB_CUDA_WARP, warp = tid / ZB_CUDA_WARP;
    int n_warps = (int)blockDim.x / ZB_CUDA_WARP;
    size_t qrow = (size_t)H * (size_t)D, kvrow = (size_t)KVH * (size_t)D;
    size_t qoff = ((size_t)b * (size_t)T + (size_t)i) * qrow + (size_t)h * (size_t)D;
    const S *qi = q + qoff;
    const S *kb = k + (size_t)b * (size_t)T * kvrow + (size_t)g * (size_t)D;
    const S *vb = v + (size_t)b * (size_t)T * kvrow + (size_t)g * (size_t)D;
    S *prow = probs + (((size_t)b * (size_t)H + (size_t)h) * (size_t)T + (size_t)i) * (size_t)T;

    /* 1. scores (j is warp-uniform, so every lane joins the shuffle) */
    for (int j = warp; j <= i; j += n_warps) {
        const S *kj = kb + (size_t)j * kvrow;
        float acc = 0.0f;
        for (int d = lane; d < D; d += ZB_CUDA_WARP) {
            acc += zb_ld(qi, (size_t)d) * zb_ld(kj, (size_t)d);
        }
        acc = zb_warp_sum(acc);
        if (lane == 0) srow[j] = acc * scale;
    }
    __syncthreads();

    /* 2. max, then exp and sum */
    float mx = -INFINITY;
    for (int j = tid; j <= i; j += (int)blockDim.x) mx = fmaxf(mx, srow[j]);
    mx = zb_block_max(mx, red);
    float sum = 0.0f;
    for (int j = tid; j <= i; j += (int)blockDim.x) {
        float e = expf(srow[j] - mx);
        srow[j] = e;
        sum += e;
    }
    sum = zb_block_sum(sum, red); /* its barriers publish srow */

    /* 3. normalize; the whole probs row is written */
    for (int j = tid; j < T; j += (int)blockDim.x) {
        float p = 0.0f;
        if (j <= i) {
            p = srow[j] / sum;
            srow[j] = p;
        }
        zb_st(prow, (size_t)j, p);
    }
    __syncthreads();

    /* 4. out_i = P v (the fp32 P of srow) */
    zb_causal_row_combine(out, qoff, srow, vb, kvrow, i, D);
}

template <typename S>
static cudaError_t attention_fwd(cudaStream_t stream, void *out, void *probs, const void *q,
                                 const void *k, const void *v, int B, int T, int H, int KVH,
                                 int D) {
    if (B < 0 || T < 0 || H <= 0 || KVH <= 0 || H % KVH != 0 || D <= 0) {
        return cudaErrorInvalidValue;
    }
    if (B > 65535 || H > 65535) return cudaErrorInvalidValue; /* grid y, z limits */
    if (B == 0 || T == 0) return cudaSuccess;
    size_t smem = ((size_t)T + ATTN_THREADS) * sizeof(float);
    cudaError_t e = zb_cuda_smem_opt_in((const void *)attention_fwd_kernel<S>, smem);
    if (e != cudaSuccess) return e;
    float scale = (float)(1.0 / sqrt((double)D));
    dim3 grid((unsigned)T, (unsigned)H, (unsigned)B);
    attention_fwd_kernel<S><<<grid, ATTN_THREADS, smem, stream>>>(
        (S *)out, (S *)probs, (const S *)q, (const S *)k, (const S *)v, T, H, KVH, D, scale);
    return cudaGetLastError();
}

cudaError_t zb_cuda_attention_fwd(cudaStream_t stream, zb_dtype dtype, void *out, void *probs,
                                  const void *q, const void *k, const void *v, int B, int T,
                                  int H, int KVH, int D) {
    return ZB_CUDA_DISPATCH(dtype, attention_fwd, stream, out, probs, q, k, v, B, T, H, KVH, D);
}
