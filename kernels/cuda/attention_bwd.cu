/* Causal GQA attention on CUDA, backward. Shapes: q, dout, dq [B, T, H, D];
 * k, v, dk, dv [B, T, KVH, D]; probs [B, H, T, T] saved by the forward.
 * With P the softmax row of query i, dP_ij = dout_i . v_j and
 * pdp_i = sum_j P_ij dP_ij:
 *   dS_ij = P_ij (dP_ij - pdp_i) * scale
 *   dq_i  = sum_j dS_ij k_j
 *   dk_j  = sum over the query heads h of kv head g, i >= j, of dS_ij q_i
 *   dv_j  = same sum of P_ij dout_i
 * All three outputs are written (no atomics). Three launches in order:
 *   1. row kernel, mode PDP: per (i, h, b), pdp_i, parked in dq[b, i, h, 0]
 *      (dq is the only output with a slot per query row and head);
 *   2. dk/dv kernel: per (j, g, b), one warp per (h, i) term, each lane
 *      summing its d's into the warp's shared-memory row, then the warps'
 *      rows added in order; reads pdp from the dq slots;
 *   3. row kernel, mode DQ: recomputes dP and pdp (the same code, so the
 *      same values) and overwrites dq.
 * Reductions are fp32 (warp shuffles, block trees, sequential loops). No
 * output may alias an input. */
#include <math.h>

#include "zb_cuda_common.cuh"

#define ATTN_THREADS 128

enum { ROW_MODE_PDP = 0, ROW_MODE_DQ = 1 };

/* One block per (query row i, head h, batch b); dynamic shared memory:
 * sdp [T], red [ATTN_THREADS]. */
static __global__ void attention_bwd_row_kernel(float *dq, const float *dout, const float *k,
                                                const float *v, const float *probs, int T, int H,
                                                int KVH, int D, float scale, int mode) {
    extern __shared__ float smem[];
    float *sdp = smem;
    float *red = smem + T;
    int i = (int)blockIdx.x, h = (int)blockIdx.y, b = (int)blockIdx.z;
    int g = h / (H / KVH);
    int tid = (int)threadIdx.x, lane = tid % ZB_CUDA_WARP, warp = tid / ZB_CUDA_WARP;
    int n_warps = (int)blockDim.x / ZB_CUDA_WARP;
    size_t qrow = (size_t)H * (size_t)D, kvrow = (size_t)KVH * (size_t)D;
    size_t qoff = ((size_t)b * (size_t)T + (size_t)i) * qrow + (size_t)h * (size_t)D;
    const float *doi = dout + qoff;
    const float *kb = k + (size_t)b * (size_t)T * kvrow + (size_t)g * (size_t)D;
    const float *vb = v + (size_t)b * (size_t)T * kvrow + (size_t)g * (size_t)D;
    const float *prow =
        probs + (((size_t)b * (size_t)H + (size_t)h) * (size_t)T + (size_t)i) * (size_t)T;

    /* dP_ij for j <= i, one warp per j (warp-uniform loop) */
    for (int j = warp; j <= i; j += n_warps) {
        const float *vj = vb + (size_t)j * kvrow;
        float acc = 0.0f;
        for (int d = lane; d < D; d += ZB_CUDA_WARP) acc += doi[d] * vj[d];
        acc = zb_warp_sum(acc);
        if (lane == 0) sdp[j] = acc;
    }
    __syncthreads();
    float part = 0.0f;
    for (int j = tid; j <= i; j += (int)blockDim.x) part += prow[j] * sdp[j];
    float pdp = zb_block_sum(part, red);

    if (mode == ROW_MODE_PDP) {
        if (tid == 0) dq[qoff] = pdp;
        return;
    }
    for (int j = tid; j <= i; j += (int)blockDim.x) sdp[j] = (prow[j] * (sdp[j] - pdp)) * scale;
    __syncthreads();
    for (int d = tid; d < D; d += (int)blockDim.x) {
        float acc = 0.0f;
        for (int j = 0; j <= i; j++) acc += sdp[j] * kb[(size_t)j * kvrow + (size_t)d];
        dq[qoff + (size_t)d] = acc;
    }
}

/* One block per (key row j, kv head g, batch b); dynamic shared memory:
 * dk and dv partial rows [n_warps][D] each. Lane l of warp w owns
 * elements d = l, l + 32, ... of row w, so no two threads touch one slot. */
static __global__ void attention_bwd_kv_kernel(float *dk, float *dv, const float *dout,
                                               const float *q, const float *v,
                                               const float *probs, const float *pdp_slots,
                                               int T, int H, int KVH, int D, float scale) {
    extern __shared__ float smem[];
    int j = (int)blockIdx.x, g = (int)blockIdx.y, b = (int)blockIdx.z;
    int rep = H / KVH;
    int tid = (int)threadIdx.x, lane = tid % ZB_CUDA_WARP, warp = tid / ZB_CUDA_WARP;
    int n_warps = (int)blockDim.x / ZB_CUDA_WARP;
    float *dkp = smem + (size_t)warp * (size_t)D;
    float *dvp = smem + ((size_t)n_warps + (size_t)warp) * (size_t)D;
    size_t qrow = (size_t)H * (size_t)D, kvrow = (size_t)KVH * (size_t)D;
    size_t kvoff = ((size_t)b * (size_t)T + (size_t)j) * kvrow + (size_t)g * (size_t)D;
    const float *vj = v + kvoff;

    for (int d = lane; d < D; d += ZB_CUDA_WARP) {
        dkp[d] = 0.0f;
        dvp[d] = 0.0f;
    }
    int n_rows = T - j; /* queries i = j .. T-1 see key j */
    int n_items = rep * n_rows;
    for (int it = warp; it < n_items; it += n_warps) { /* warp-uniform */
        int h = g * rep + it / n_rows;
        int i = j + it % n_rows;
        size_t qoff = ((size_t)b * (size_t)T + (size_t)i) * qrow + (size_t)h * (size_t)D;
        const float *doi = dout + qoff, *qi = q + qoff;
        float p = probs[(((size_t)b * (size_t)H + (size_t)h) * (size_t)T + (size_t)i) * (size_t)T +
                        (size_t)j];
        float acc = 0.0f;
        for (int d = lane; d < D; d += ZB_CUDA_WARP) acc += doi[d] * vj[d];
        float dp = zb_warp_sum(acc);
        float ds = (p * (dp - pdp_slots[qoff])) * scale;
        for (int d = lane; d < D; d += ZB_CUDA_WARP) {
            dkp[d] += ds * qi[d];
            dvp[d] += p * doi[d];
        }
    }
    __syncthreads();
    for (int d = tid; d < D; d += (int)blockDim.x) {
        float sk = 0.0f, sv = 0.0f;
        for (int w = 0; w < n_warps; w++) {
            sk += smem[(size_t)w * (size_t)D + (size_t)d];
            sv += smem[((size_t)n_warps + (size_t)w) * (size_t)D + (size_t)d];
        }
        dk[kvoff + (size_t)d] = sk;
        dv[kvoff + (size_t)d] = sv;
    }
}

cudaError_t zb_cuda_attention_bwd(cudaStream_t stream, float *dq, float *dk, float *dv,
                                  const float *dout, const float *q, const float *k,
                                  const float *v, const float *probs, int B, int T, int H,
                                  int KVH, int D) {
    if (B < 0 || T < 0 || H <= 0 || KVH <= 0 || H % KVH != 0 || D <= 0) {
        return cudaErrorInvalidValue;
    }
    if (B > 65535 || H > 65535) return cudaErrorInvalidValue; /* grid y, z limits */
    if (B == 0 || T == 0) return cudaSuccess;
    float scale = (float)(1.0 / sqrt((double)D));
    size_t row_smem = ((size_t)T + ATTN_THREADS) * sizeof(float);
    size_t kv_smem = 2u * (size_t)(ATTN_THREADS / ZB_CUDA_WARP) * (size_t)D * sizeof(float);
    cudaError_t e = zb_cuda_smem_opt_in((const void *)attention_bwd_row_kernel, row_smem);
    if (e != cudaSuccess) return e;
    e = zb_cuda_smem_opt_in((const void *)attention_bwd_kv_kernel, kv_smem);
    if (e != cudaSuccess) return e;
    dim3 qgrid((unsigned)T, (unsigned)H, (unsigned)B);
    dim3 kvgrid((unsigned)T, (unsigned)KVH, (unsigned)B);

    attention_bwd_row_kernel<<<qgrid, ATTN_THREADS, row_smem, stream>>>(
        dq, dout, k, v, probs, T, H, KVH, D, scale, ROW_MODE_PDP);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    attention_bwd_kv_kernel<<<kvgrid, ATTN_THREADS, kv_smem, stream>>>(dk, dv, dout, q, v, probs,
                                                                       dq, T, H, KVH, D, scale);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    attention_bwd_row_kernel<<<qgrid, ATTN_THREADS, row_smem, stream>>>(
        dq, dout, k, v, probs, T, H, KVH, D, scale, ROW_MODE_DQ);
    return cudaGetLastError();
}
