/* Causal GQA attention on CUDA, backward. Shapes: q, dout, dq [B, T, H, D];
 * k, v, dk, dv [B, T, KVH, D]; probs [B, H, T, T] saved by the forward; all
 * stored as S (float or zb_bf16, widened on load, rounded on store; the
 * math below is fp32 either way).
 * With P the softmax row of query i, dP_ij = dout_i . v_j and
 * pdp_i = sum_j P_ij dP_ij:
 *   dS_ij = P_ij (dP_ij - pdp_i) * scale
 *   dq_i  = sum_j dS_ij k_j
 *   dk_j  = sum over the query heads h of kv head g, i >= j, of dS_ij q_i
 *   dv_j  = same sum of P_ij dout_i
 * All three outputs are written (no atomics). Three launches in order:
 *   1. row kernel, mode PDP: per (i, h, b), pdp_i, parked as an fp32 in
 *      dq's slot for that row and head (dq is the only output with a slot
 *      per query row and head; see pdp_park);
 *   2. dk/dv kernel: per (j, g, b), one warp per (h, i) term, each lane
 *      summing its d's into the warp's shared-memory row, then the warps'
 *      rows added in order; reads pdp from the dq slots;
 *   3. row kernel, mode DQ: recomputes dP and pdp (the same code, so the
 *      same values) and overwrites dq.
 * When the slot cannot hold an fp32 (bf16 storage with D == 1) step 1 is
 * skipped and the dk/dv kernel recomputes pdp_i for each term itself
 * (O(T) more work per term, the same math in another summation order).
 * Reductions are fp32 (warp shuffles, block trees, sequential loops). No
 * output may alias an input. */
#include <math.h>

#include "zb_cuda_common.cuh"

#define ATTN_THREADS 128

enum { ROW_MODE_PDP = 0, ROW_MODE_DQ = 1 };

/* pdp_i's slot: the first element(s) of dq's row for (b, i, h), at offset
 * off. fp32 storage: dq[off]. bf16 storage: the fp32 bits, low half in
 * dq[off] and high half in dq[off + 1], so pdp is kept exactly (needs
 * D >= 2: pdp_parks). */
static __device__ inline void pdp_park(float *dq, size_t off, float v) { dq[off] = v; }
static __device__ inline void pdp_park(zb_bf16 *dq, size_t off, float v) {
    uint32_t bits = __float_as_uint(v);
    dq[off] = (zb_bf16)(bits & 0xffffu);
    dq[off + 1] = (zb_bf16)(bits >> 16);
}
static __device__ inline float pdp_read(const float *dq, size_t off) { return dq[off]; }
static __device__ inline float pdp_read(const zb_bf16 *dq, size_t off) {
    return __uint_as_float((uint32_t)dq[off] | (uint32_t)dq[off + 1] << 16);
}

/* Whether a row of D elements of S holds an fp32 (the pdp slot). */
template <typename S>
static bool pdp_parks(int D) {
    return sizeof(S) * (size_t)D >= sizeof(float);
}

/* One block per (query row i, head h, batch b); dynamic shared memory:
 * sdp [T], red [ATTN_THREADS]. */
template <typename S>
static __global__ void attention_bwd_row_kernel(S *dq, const S *dout, const S *k, const S *v,
                                                const S *probs, int T, int H, int KVH, int D,
                                                float scale, int mode) {
    extern __shared__ float smem[];
    float *sdp = smem;
    float *red = smem + T;
    int i = (int)blockIdx.x, h = (int)blockIdx.y, b = (int)blockIdx.z;
    int g = h / (H / KVH);
    int tid = (int)threadIdx.x, lane = tid % ZB_CUDA_WARP, warp = tid / ZB_CUDA_WARP;
    int n_warps = (int)blockDim.x / ZB_CUDA_WARP;
    size_t qrow = (size_t)H * (size_t)D, kvrow = (size_t)KVH * (size_t)D;
    size_t qoff = ((size_t)b * (size_t)T + (size_t)i) * qrow + (size_t)h * (size_t)D;
    const S *doi = dout + qoff;
    const S *kb = k + (size_t)b * (size_t)T * kvrow + (size_t)g * (size_t)D;
    const S *vb = v + (size_t)b * (size_t)T * kvrow + (size_t)g * (size_t)D;
    const S *prow =
        probs + (((size_t)b * (size_t)H + (size_t)h) * (size_t)T + (size_t)i) * (size_t)T;

    /* dP_ij for j <= i, one warp per j (warp-uniform loop) */
    for (int j = warp; j <= i; j += n_warps) {
        const S *vj = vb + (size_t)j * kvrow;
        float acc = 0.0f;
        for (int d = lane; d < D; d += ZB_CUDA_WARP) {
            acc += zb_ld(doi, (size_t)d) * zb_ld(vj, (size_t)d);
        }
        acc = zb_warp_sum(acc);
        if (lane == 0) sdp[j] = acc;
    }
    __syncthreads();
    float part = 0.0f;
    for (int j = tid; j <= i; j += (int)blockDim.x) part += zb_ld(prow, (size_t)j) * sdp[j];
    float pdp = zb_block_sum(part, red);

    if (mode == ROW_MODE_PDP) {
        if (tid == 0) pdp_park(dq, qoff, pdp);
        return;
    }
    for (int j = tid; j <= i; j += (int)blockDim.x) {
        sdp[j] = (zb_ld(prow, (size_t)j) * (sdp[j] - pdp)) * scale;
    }
    __syncthreads();
    zb_causal_row_combine(dq, qoff, sdp, kb, kvrow, i, D);
}

/* One block per (key row j, kv head g, batch b); dynamic shared memory:
 * dk and dv partial rows [n_warps][D] each. Lane l of warp w owns
 * elements d = l, l + 32, ... of row w, so no two threads touch one slot.
 * pdp_i comes from the slots in pdp_slots (= dq) or, with recompute_pdp,
 * is recomputed by the term's warp. */
template <typename S>
static __global__ void attention_bwd_kv_kernel(S *dk, S *dv, const S *dout, const S *q,
                                               const S *v, const S *probs, const S *pdp_slots,
                                               int T, int H, int KVH, int D, float scale,
                                               int recompute_pdp) {
    extern __shared__ float smem[];
    int j = (int)blockIdx.x, g = (int)blockIdx.y, b = (int)blockIdx.z;
    int rep = H / KVH;
    int tid = (int)threadIdx.x, lane = tid % ZB_CUDA_WARP, warp = tid / ZB_CUDA_WARP;
    int n_warps = (int)blockDim.x / ZB_CUDA_WARP;
    float *dkp = smem + (size_t)warp * (size_t)D;
    float *dvp = smem + ((size_t)n_warps + (size_t)warp) * (size_t)D;
    size_t qrow = (size_t)H * (size_t)D, kvrow = (size_t)KVH * (size_t)D;
    size_t kvoff = ((size_t)b * (size_t)T + (size_t)j) * kvrow + (size_t)g * (size_t)D;
    const S *vb = v + (size_t)b * (size_t)T * kvrow + (size_t)g * (size_t)D;
    const S *vj = v + kvoff;

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
        const S *doi = dout + qoff, *qi = q + qoff;
        const S *prow =
            probs + (((size_t)b * (size_t)H + (size_t)h) * (size_t)T + (size_t)i) * (size_t)T;
        float p = zb_ld(prow, (size_t)j);
        float acc = 0.0f;
        for (int d = lane; d < D; d += ZB_CUDA_WARP) {
            acc += zb_ld(doi, (size_t)d) * zb_ld(vj, (size_t)d);
        }
        float dp = zb_warp_sum(acc);
        float pdp;
        if (recompute_pdp) { /* kernel argument: uniform, every lane joins the sum */
            float part = 0.0f;
            for (int jj = lane; jj <= i; jj += ZB_CUDA_WARP) {
                const S *vjj = vb + (size_t)jj * kvrow;
                float dpj = 0.0f;
                for (int d = 0; d < D; d++) dpj += zb_ld(doi, (size_t)d) * zb_ld(vjj, (size_t)d);
                part += zb_ld(prow, (size_t)jj) * dpj;
            }
            pdp = zb_warp_sum(part);
        } else {
            pdp = pdp_read(pdp_slots, qoff);
        }
        float ds = (p * (dp - pdp)) * scale;
        for (int d = lane; d < D; d += ZB_CUDA_WARP) {
            dkp[d] += ds * zb_ld(qi, (size_t)d);
            dvp[d] += p * zb_ld(doi, (size_t)d);
        }
    }
    __syncthreads();
    for (int d = tid; d < D; d += (int)blockDim.x) {
        float sk = 0.0f, sv = 0.0f;
        for (int w = 0; w < n_warps; w++) {
            sk += smem[(size_t)w * (size_t)D + (size_t)d];
            sv += smem[((size_t)n_warps + (size_t)w) * (size_t)D + (size_t)d];
        }
        zb_st(dk, kvoff + (size_t)d, sk);
        zb_st(dv, kvoff + (size_t)d, sv);
    }
}

template <typename S>
static cudaError_t attention_bwd(cudaStream_t stream, void *dq_v, void *dk, void *dv,
                                 const void *dout, const void *q, const void *k, const void *v,
                                 const void *probs, int B, int T, int H, int KVH, int D) {
    if (B < 0 || T < 0 || H <= 0 || KVH <= 0 || H % KVH != 0 || D <= 0) {
        return cudaErrorInvalidValue;
    }
    if (B > 65535 || H > 65535) return cudaErrorInvalidValue; /* grid y, z limits */
    if (B == 0 || T == 0) return cudaSuccess;
    float scale = (float)(1.0 / sqrt((double)D));
    size_t row_smem = ((size_t)T + ATTN_THREADS) * sizeof(float);
    size_t kv_smem = 2u * (size_t)(ATTN_THREADS / ZB_CUDA_WARP) * (size_t)D * sizeof(float);
    cudaError_t e = zb_cuda_smem_opt_in((const void *)attention_bwd_row_kernel<S>, row_smem);
    if (e != cudaSuccess) return e;
    e = zb_cuda_smem_opt_in((const void *)attention_bwd_kv_kernel<S>, kv_smem);
    if (e != cudaSuccess) return e;
    dim3 qgrid((unsigned)T, (unsigned)H, (unsigned)B);
    dim3 kvgrid((unsigned)T, (unsigned)KVH, (unsigned)B);
    S *dq = (S *)dq_v;
    const S *dout_s = (const S *)dout, *q_s = (const S *)q, *k_s = (const S *)k;
    const S *v_s = (const S *)v, *p_s = (const S *)probs;
    int park = pdp_parks<S>(D);

    if (park) {
        attention_bwd_row_kernel<S><<<qgrid, ATTN_THREADS, row_smem, stream>>>(
            dq, dout_s, k_s, v_s, p_s, T, H, KVH, D, scale, ROW_MODE_PDP);
        if ((e = cudaGetLastError()) != cudaSuccess) return e;
    }
    attention_bwd_kv_kernel<S><<<kvgrid, ATTN_THREADS, kv_smem, stream>>>(
        (S *)dk, (S *)dv, dout_s, q_s, v_s, p_s, dq, T, H, KVH, D, scale, !park);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    attention_bwd_row_kernel<S><<<qgrid, ATTN_THREADS, row_smem, stream>>>(
        dq, dout_s, k_s, v_s, p_s, T, H, KVH, D, scale, ROW_MODE_DQ);
    return cudaGetLastError();
}

cudaError_t zb_cuda_attention_bwd(cudaStream_t stream, zb_dtype dtype, void *dq, void *dk,
                                  void *dv, const void *dout, const void *q, const void *k,
                                  const void *v, const void *probs, int B, int T, int H, int KVH,
                                  int D) {
    return ZB_CUDA_DISPATCH(dtype, attention_bwd, stream, dq, dk, dv, dout, q, k, v, probs, B, T,
                            H, KVH, D);
}
