/* Causal softmax attention with grouped-query heads (GQA) on CUDA, forward.
 * Shapes: q, out [B, T, H, D]; k, v [B, T, KVH, D]; probs [B, H, T, T]
 * (row i: softmax over keys j <= i, zeros for j > i). Query head h reads kv
 * head h / (H / KVH); scale 1/sqrt(D).
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

static __global__ void attention_fwd_kernel(float *out, float *probs, const float *q,
                                            const float *k, const float *v, int T, int H,
                                            int KVH, int D, float scale) {
    extern __shared__ float smem[]; /* srow [T], then red [ATTN_THREADS] */
    float *srow = smem;
    float *red = smem + T;
    int i = (int)blockIdx.x, h = (int)blockIdx.y, b = (int)blockIdx.z;
    int g = h / (H / KVH);
    int tid = (int)threadIdx.x, lane = tid % ZB_CUDA_WARP, warp = tid / ZB_CUDA_WARP;
    int n_warps = (int)blockDim.x / ZB_CUDA_WARP;
    size_t qrow = (size_t)H * (size_t)D, kvrow = (size_t)KVH * (size_t)D;
    size_t qoff = ((size_t)b * (size_t)T + (size_t)i) * qrow + (size_t)h * (size_t)D;
    const float *qi = q + qoff;
    const float *kb = k + (size_t)b * (size_t)T * kvrow + (size_t)g * (size_t)D;
    const float *vb = v + (size_t)b * (size_t)T * kvrow + (size_t)g * (size_t)D;
    float *prow = probs + (((size_t)b * (size_t)H + (size_t)h) * (size_t)T + (size_t)i) * (size_t)T;

    /* 1. scores (j is warp-uniform, so every lane joins the shuffle) */
    for (int j = warp; j <= i; j += n_warps) {
        const float *kj = kb + (size_t)j * kvrow;
        float acc = 0.0f;
        for (int d = lane; d < D; d += ZB_CUDA_WARP) acc += qi[d] * kj[d];
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
        prow[j] = p;
    }
    __syncthreads();

    /* 4. out_i = P v */
    for (int d = tid; d < D; d += (int)blockDim.x) {
        float acc = 0.0f;
        for (int j = 0; j <= i; j++) acc += srow[j] * vb[(size_t)j * kvrow + (size_t)d];
        out[qoff + (size_t)d] = acc;
    }
}

cudaError_t zb_cuda_attention_fwd(cudaStream_t stream, float *out, float *probs, const float *q,
                                  const float *k, const float *v, int B, int T, int H, int KVH,
                                  int D) {
    if (B < 0 || T < 0 || H <= 0 || KVH <= 0 || H % KVH != 0 || D <= 0) {
        return cudaErrorInvalidValue;
    }
    if (B > 65535 || H > 65535) return cudaErrorInvalidValue; /* grid y, z limits */
    if (B == 0 || T == 0) return cudaSuccess;
    size_t smem = ((size_t)T + ATTN_THREADS) * sizeof(float);
    cudaError_t e = zb_cuda_smem_opt_in((const void *)attention_fwd_kernel, smem);
    if (e != cudaSuccess) return e;
    float scale = (float)(1.0 / sqrt((double)D));
    dim3 grid((unsigned)T, (unsigned)H, (unsigned)B);
    attention_fwd_kernel<<<grid, ATTN_THREADS, smem, stream>>>(out, probs, q, k, v, T, H, KVH, D,
                                                               scale);
    return cudaGetLastError();
}
