/* Causal GQA attention on CUDA, forward, fused (FlashAttention-2's scheme; tiles and ownership:
 * attention_tile.cuh). q, out [B, T, H, D]; k, v [B, T, KVH, D], storage S (float or zb_bf16);
 * lse [B, H, T] fp32. Query head h reads kv head h / (H / KVH); scale 1/sqrt(D).
 *
 * One block per (query tile of BT rows, head h, batch b), the tiles with the most keys first. The Q
 * tile stays in shared memory; for each key tile up to the diagonal the K and V tiles are staged,
 * the scores s = scale q.k computed into registers (keys after the query masked), and the online
 * softmax updates each row's running max m and partial sum l (per thread; the 16 threads of a row
 * agree on m through a shuffle max, and their l are added at the end): acc and l are rescaled by
 * exp(m_old - m), p = exp(s - m) goes through shared memory, acc += p V. At the end
 * out = acc / l (rounded once to S) and lse = m + log l. Nothing of T x T is stored. */
#include "attention_tile.cuh"

/* Online-softmax step for this thread's score rows: masks keys after the query (and so keys >= T
 * for live rows), updates m and l, rescales acc and writes p into the score tile sP. */
template <int RM, int NDV>
static __device__ inline void fwd_softmax_step(float (&s)[RM][RM], float (&m_run)[RM],
                                               float (&l_run)[RM], float (&acc)[RM][NDV],
                                               float *sP, int pld, int i0, int j0, float scale) {
    const int ty = (int)threadIdx.x / ATT_TX, tx = (int)threadIdx.x % ATT_TX;
ATT_UNROLL
    for (int i = 0; i < RM; i++) {
        const int row = i0 + ty * RM + i;
        float mx = -INFINITY;
ATT_UNROLL
        for (int m = 0; m < RM; m++) {
            const int col = j0 + tx + ATT_TX * m;
            s[i][m] = col <= row ? s[i][m] * scale : -INFINITY;
            mx = fmaxf(mx, s[i][m]);
        }
        /* finite: the first key tile holds key 0 <= row, and m only grows */
        const float m_new = fmaxf(m_run[i], att_group_max(mx));
        const float alpha = expf(m_run[i] - m_new); /* 0 on the first tile */
        m_run[i] = m_new;
        l_run[i] *= alpha;
ATT_UNROLL
        for (int j = 0; j < NDV; j++) acc[i][j] *= alpha;
ATT_UNROLL
        for (int m = 0; m < RM; m++) {
            const float p = expf(s[i][m] - m_new);
            l_run[i] += p;
            sP[(size_t)(ty * RM + i) * (size_t)pld + (size_t)(tx + ATT_TX * m)] = p;
        }
    }
}

/* out = acc / l and lse = m + log l for this thread's live rows (l summed over the row's 16
 * threads first). */
template <int RM, int NDV, typename S>
static __device__ inline void fwd_finish(S *ob, size_t qrow, float *lse_bh, int i0, int T, int D,
                                         const float (&m_run)[RM], const float (&l_run)[RM],
                                         float (&acc)[RM][NDV]) {
    const int ty = (int)threadIdx.x / ATT_TX, tx = (int)threadIdx.x % ATT_TX;
ATT_UNROLL
    for (int i = 0; i < RM; i++) {
        const float l = att_group_sum(l_run[i]); /* every lane: shuffles */
ATT_UNROLL
        for (int j = 0; j < NDV; j++) acc[i][j] /= l;
        const int row = i0 + ty * RM + i;
        if (tx == 0 && row < T) lse_bh[row] = m_run[i] + logf(l);
    }
    att_store_rows<RM, NDV>(ob, qrow, i0, T, D, acc);
}

template <typename S, int NDV>
static __global__ void __launch_bounds__(ATT_THREADS, 1)
    attention_fwd_kernel(S *out, float *lse, const S *q, const S *k, const S *v, int T, int H,
                         int KVH, int D, float scale) {
    constexpr int BT = att_cfg<NDV>::BT, RM = att_cfg<NDV>::RM;
    extern __shared__ float4 att_smem[];
    const size_t tb = att_tile_bytes<S>(BT, D);
    S *sQ = (S *)att_smem;
    S *sK = (S *)((char *)att_smem + tb);
    S *sV = (S *)((char *)att_smem + 2 * tb);
    float *sP = (float *)((char *)att_smem + 3 * tb);
    const int pld = att_pld(BT);

    const int qt = (int)gridDim.x - 1 - (int)blockIdx.x; /* the longest rows first */
    const int h = (int)blockIdx.y, b = (int)blockIdx.z, g = h / (H / KVH);
    const int i0 = qt * BT;
    const size_t qrow = (size_t)H * (size_t)D, kvrow = (size_t)KVH * (size_t)D;
    const size_t qbase = (size_t)b * (size_t)T * qrow + (size_t)h * (size_t)D;
    const size_t kvbase = (size_t)b * (size_t)T * kvrow + (size_t)g * (size_t)D;

    att_load_tile(sQ, q + qbase, qrow, i0, BT, T, D);
    float m_run[RM], l_run[RM], acc[RM][NDV];
ATT_UNROLL
    for (int i = 0; i < RM; i++) {
        m_run[i] = -INFINITY;
        l_run[i] = 0.0f;
ATT_UNROLL
        for (int j = 0; j < NDV; j++) acc[i][j] = 0.0f;
    }
    for (int kt = 0; kt <= qt; kt++) {
        const int j0 = kt * BT;
        __syncthreads(); /* the last tile's reads of sK, sV and sP are done */
        att_load_tile(sK, k + kvbase, kvrow, j0, BT, T, D);
        att_load_tile(sV, v + kvbase, kvrow, j0, BT, T, D);
        __syncthreads();
        float s[RM][RM];
        att_dot_tile<RM>(s, sQ, sK, D);
        fwd_softmax_step<RM, NDV>(s, m_run, l_run, acc, sP, pld, i0, j0, scale);
        __syncthreads();
        const int n = T - j0 < BT ? T - j0 : BT;
        att_acc_tile<RM, NDV>(acc, sP, pld, sV, n, D);
    }
    fwd_finish<RM, NDV>(out + qbase, qrow, lse + ((size_t)b * (size_t)H + (size_t)h) * (size_t)T,
                        i0, T, D, m_run, l_run, acc);
}

template <typename S, int NDV>
static cudaError_t attention_fwd_launch(cudaStream_t stream, void *out, float *lse, const void *q,
                                        const void *k, const void *v, int B, int T, int H,
                                        int KVH, int D) {
    constexpr int BT = att_cfg<NDV>::BT;
    const size_t smem = 3 * att_tile_bytes<S>(BT, D) + att_ptile_bytes(BT);
    cudaError_t e = zb_cuda_smem_opt_in((const void *)attention_fwd_kernel<S, NDV>, smem);
    if (e != cudaSuccess) return e;
    const float scale = (float)(1.0 / sqrt((double)D));
    dim3 grid((unsigned)((T + BT - 1) / BT), (unsigned)H, (unsigned)B);
    attention_fwd_kernel<S, NDV><<<grid, ATT_THREADS, smem, stream>>>(
        (S *)out, lse, (const S *)q, (const S *)k, (const S *)v, T, H, KVH, D, scale);
    return cudaGetLastError();
}

template <typename S>
static cudaError_t attention_fwd(cudaStream_t stream, void *out, float *lse, const void *q,
                                 const void *k, const void *v, int B, int T, int H, int KVH,
                                 int D) {
    if (B < 0 || T < 0 || H <= 0 || KVH <= 0 || H % KVH != 0 || D <= 0) {
        return cudaErrorInvalidValue;
    }
    if (B > 65535 || H > 65535) return cudaErrorInvalidValue; /* grid y, z limits */
    if (D > ATT_MAX_D) return cudaErrorInvalidValue;
    if (B == 0 || T == 0) return cudaSuccess;
    switch (att_ndv(D)) {
    case 4: return attention_fwd_launch<S, 4>(stream, out, lse, q, k, v, B, T, H, KVH, D);
    case 8: return attention_fwd_launch<S, 8>(stream, out, lse, q, k, v, B, T, H, KVH, D);
    case 16: return attention_fwd_launch<S, 16>(stream, out, lse, q, k, v, B, T, H, KVH, D);
    default: return attention_fwd_launch<S, 32>(stream, out, lse, q, k, v, B, T, H, KVH, D);
    }
}

cudaError_t zb_cuda_attention_fwd(cudaStream_t stream, zb_dtype dtype, void *out, float *lse,
                                  const void *q, const void *k, const void *v, int B, int T,
                                  int H, int KVH, int D) {
    return ZB_CUDA_DISPATCH(dtype, attention_fwd, stream, out, lse, q, k, v, B, T, H, KVH, D);
}
