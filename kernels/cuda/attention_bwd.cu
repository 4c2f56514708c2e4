/* Causal GQA attention on CUDA, backward, fused (FlashAttention-2's scheme; tiles and ownership:
 * attention_tile.cuh). q, dout, dq, out [B, T, H, D]; k, v, dk, dv [B, T, KVH, D], storage S;
 * lse [B, H, T] fp32 from the forward. With the probabilities recomputed per tile,
 * P_ij = exp(scale q_i.k_j - lse_i) (j <= i), dP_ij = dout_i . v_j and Di = dout_i . out_i
 * (= sum_j P_ij dP_ij):
 *   dS_ij = P_ij (dP_ij - Di) scale,  dq_i = sum_j dS_ij k_j,
 *   dk_j = sum over the query heads of kv head g and i >= j of dS_ij q_i,
 *   dv_j = the same sum of P_ij dout_i.
 * Two kernels, no atomics and no scratch (every output element has one writer):
 *   dq:     one block per (query tile, h, b), the longest rows first: Q and dout tiles (with Di and
 *           lse per row) staged once, then for each key tile up to the diagonal K and V are staged,
 *           dS goes through shared memory and dq accumulates in registers;
 *   dk, dv: one block per (key tile, kv head g, b), the most queries first: K and V staged once,
 *           then for each query head h of g and each query tile at or after the key tile, Q and
 *           dout (with Di and lse) are staged and dv += P^T dout, dk += dS^T q accumulate in
 *           registers. Di is recomputed per tile: the same code as the dq kernel's, so both see the
 *           same dS.
 * No output may alias an input. */
#include "attention_tile.cuh"

/* P and dS for this thread's score elements, in place: p holds q.k and ds holds dP on entry. Score
 * rows are the a-side of att_dot_tile and columns the b-side: queries are rows in the dq kernel
 * (qrow_is_row) and columns in the dk/dv kernel; L and Di are indexed by the query's place in its
 * tile. Masked: keys after the query, queries >= T. */
template <int RM>
static __device__ inline void bwd_ds(float (&p)[RM][RM], float (&ds)[RM][RM], const float *L,
                                     const float *Di, int r0, int c0, int T, float scale,
                                     bool qrow_is_row) {
    const int ty = (int)threadIdx.x / ATT_TX, tx = (int)threadIdx.x % ATT_TX;
ATT_UNROLL
    for (int i = 0; i < RM; i++) {
ATT_UNROLL
        for (int m = 0; m < RM; m++) {
            const int ri = ty * RM + i, ci = tx + ATT_TX * m;
            const int qi = qrow_is_row ? ri : ci; /* the query's place in its tile */
            const int qg = qrow_is_row ? r0 + ri : c0 + ci, kg = qrow_is_row ? c0 + ci : r0 + ri;
            const float pp = kg <= qg && qg < T ? expf(p[i][m] * scale - L[qi]) : 0.0f;
            ds[i][m] = pp * (ds[i][m] - Di[qi]) * scale;
            p[i][m] = pp;
        }
    }
}

/* Writes this thread's elements of a score tile. */
template <int RM>
static __device__ inline void bwd_put(float *sP, int pld, const float (&x)[RM][RM]) {
    const int ty = (int)threadIdx.x / ATT_TX, tx = (int)threadIdx.x % ATT_TX;
ATT_UNROLL
    for (int i = 0; i < RM; i++) {
ATT_UNROLL
        for (int m = 0; m < RM; m++) {
            sP[(size_t)(ty * RM + i) * (size_t)pld + (size_t)(tx + ATT_TX * m)] = x[i][m];
        }
    }
}

template <int RM, int NDV>
static __device__ inline void bwd_zero(float (&acc)[RM][NDV]) {
ATT_UNROLL
    for (int i = 0; i < RM; i++) {
ATT_UNROLL
        for (int j = 0; j < NDV; j++) acc[i][j] = 0.0f;
    }
}

/* Shared memory of both kernels: four staged tiles, one score tile, L and Di [BT]. */
template <typename S, int BT>
struct bwd_smem {
    S *t0, *t1, *t2, *t3;
    float *sP, *L, *Di;
    __device__ bwd_smem(void *base, int D) {
        const size_t tb = att_tile_bytes<S>(BT, D);
        char *c = (char *)base;
        t0 = (S *)c, t1 = (S *)(c + tb), t2 = (S *)(c + 2 * tb), t3 = (S *)(c + 3 * tb);
        sP = (float *)(c + 4 * tb);
        L = (float *)(c + 4 * tb + att_ptile_bytes(BT));
        Di = L + BT;
    }
    static size_t bytes(int D) {
        return 4 * att_tile_bytes<S>(BT, D) + att_ptile_bytes(BT) +
               att_round16(2 * BT * sizeof(float));
    }
};

template <typename S, int NDV>
static __global__ void __launch_bounds__(ATT_THREADS, 1)
    attention_bwd_dq_kernel(S *dq, const S *dout, const S *q, const S *k, const S *v, const S *out,
                            const float *lse, int T, int H, int KVH, int D, float scale) {
    constexpr int BT = att_cfg<NDV>::BT, RM = att_cfg<NDV>::RM;
    extern __shared__ float4 att_smem[];
    bwd_smem<S, BT> sm(att_smem, D);
    S *sQ = sm.t0, *sdO = sm.t1, *sK = sm.t2, *sV = sm.t3;
    const int pld = att_pld(BT);

    const int qt = (int)gridDim.x - 1 - (int)blockIdx.x;
    const int h = (int)blockIdx.y, b = (int)blockIdx.z, g = h / (H / KVH);
    const int i0 = qt * BT;
    const size_t qrow = (size_t)H * (size_t)D, kvrow = (size_t)KVH * (size_t)D;
    const size_t qbase = (size_t)b * (size_t)T * qrow + (size_t)h * (size_t)D;
    const size_t kvbase = (size_t)b * (size_t)T * kvrow + (size_t)g * (size_t)D;
    const float *lse_bh = lse + ((size_t)b * (size_t)H + (size_t)h) * (size_t)T;

    att_load_tile(sQ, q + qbase, qrow, i0, BT, T, D);
    att_load_dout(sdO, sm.Di, sm.L, dout + qbase, out + qbase, lse_bh, qrow, i0, BT, T, D);
    float acc[RM][NDV];
    bwd_zero(acc);
    for (int kt = 0; kt <= qt; kt++) {
        const int j0 = kt * BT;
        __syncthreads(); /* the last tile's reads of sK and sP are done */
        att_load_tile(sK, k + kvbase, kvrow, j0, BT, T, D);
        att_load_tile(sV, v + kvbase, kvrow, j0, BT, T, D);
        __syncthreads();
        float p[RM][RM], ds[RM][RM];
        att_dot_tile<RM>(p, sQ, sK, D);   /* q.k */
        att_dot_tile<RM>(ds, sdO, sV, D); /* dP */
        bwd_ds<RM>(p, ds, sm.L, sm.Di, i0, j0, T, scale, true);
        bwd_put<RM>(sm.sP, pld, ds);
        __syncthreads();
        const int n = T - j0 < BT ? T - j0 : BT;
        att_acc_tile<RM, NDV>(acc, sm.sP, pld, sK, n, D);
    }
    att_store_rows<RM, NDV>(dq + qbase, qrow, i0, T, D, acc);
}

template <typename S, int NDV>
static __global__ void __launch_bounds__(ATT_THREADS, 1)
    attention_bwd_dkv_kernel(S *dk, S *dv, const S *dout, const S *q, const S *k, const S *v,
                             const S *out, const float *lse, int T, int H, int KVH, int D,
                             float scale) {
    constexpr int BT = att_cfg<NDV>::BT, RM = att_cfg<NDV>::RM;
    extern __shared__ float4 att_smem[];
    bwd_smem<S, BT> sm(att_smem, D);
    S *sK = sm.t0, *sV = sm.t1, *sQ = sm.t2, *sdO = sm.t3;
    const int pld = att_pld(BT);

    const int kt = (int)blockIdx.x, n_tiles = (int)gridDim.x; /* key tile 0 has the most queries */
    const int g = (int)blockIdx.y, b = (int)blockIdx.z, rep = H / KVH;
    const int j0 = kt * BT;
    const size_t qrow = (size_t)H * (size_t)D, kvrow = (size_t)KVH * (size_t)D;
    const size_t kvbase = (size_t)b * (size_t)T * kvrow + (size_t)g * (size_t)D;

    att_load_tile(sK, k + kvbase, kvrow, j0, BT, T, D);
    att_load_tile(sV, v + kvbase, kvrow, j0, BT, T, D);
    float acc_k[RM][NDV], acc_v[RM][NDV];
    bwd_zero(acc_k);
    bwd_zero(acc_v);
    for (int hr = 0; hr < rep; hr++) {
        const int h = g * rep + hr;
        const size_t qbase = (size_t)b * (size_t)T * qrow + (size_t)h * (size_t)D;
        const float *lse_bh = lse + ((size_t)b * (size_t)H + (size_t)h) * (size_t)T;
        for (int qt = kt; qt < n_tiles; qt++) {
            const int i0 = qt * BT;
            __syncthreads(); /* the last tile's reads of sQ, sdO, sP, L and Di are done */
            att_load_tile(sQ, q + qbase, qrow, i0, BT, T, D);
            att_load_dout(sdO, sm.Di, sm.L, dout + qbase, out + qbase, lse_bh, qrow, i0, BT, T, D);
            __syncthreads();
            float p[RM][RM], ds[RM][RM];
            att_dot_tile<RM>(p, sK, sQ, D);   /* k.q: the same products as the dq kernel's */
            att_dot_tile<RM>(ds, sV, sdO, D); /* dP^T */
            bwd_ds<RM>(p, ds, sm.L, sm.Di, j0, i0, T, scale, false);
            const int n = T - i0 < BT ? T - i0 : BT;
            bwd_put<RM>(sm.sP, pld, p);
            __syncthreads();
            att_acc_tile<RM, NDV>(acc_v, sm.sP, pld, sdO, n, D);
            __syncthreads(); /* one score tile: P^T is read before dS^T replaces it */
            bwd_put<RM>(sm.sP, pld, ds);
            __syncthreads();
            att_acc_tile<RM, NDV>(acc_k, sm.sP, pld, sQ, n, D);
        }
    }
    att_store_rows<RM, NDV>(dk + kvbase, kvrow, j0, T, D, acc_k);
    att_store_rows<RM, NDV>(dv + kvbase, kvrow, j0, T, D, acc_v);
}

template <typename S, int NDV>
static cudaError_t attention_bwd_launch(cudaStream_t stream, void *dq, void *dk, void *dv,
                                        const void *dout, const void *q, const void *k,
                                        const void *v, const void *out, const float *lse, int B,
                                        int T, int H, int KVH, int D) {
    constexpr int BT = att_cfg<NDV>::BT;
    const size_t smem = bwd_smem<S, BT>::bytes(D);
    cudaError_t e = zb_cuda_smem_opt_in((const void *)attention_bwd_dq_kernel<S, NDV>, smem);
    if (e != cudaSuccess) return e;
    e = zb_cuda_smem_opt_in((const void *)attention_bwd_dkv_kernel<S, NDV>, smem);
    if (e != cudaSuccess) return e;
    const float scale = (float)(1.0 / sqrt((double)D));
    const unsigned n_tiles = (unsigned)((T + BT - 1) / BT);
    const S *dout_s = (const S *)dout, *q_s = (const S *)q, *k_s = (const S *)k;
    const S *v_s = (const S *)v, *out_s = (const S *)out;
    attention_bwd_dq_kernel<S, NDV><<<dim3(n_tiles, (unsigned)H, (unsigned)B), ATT_THREADS, smem,
                                      stream>>>((S *)dq, dout_s, q_s, k_s, v_s, out_s, lse, T, H,
                                                KVH, D, scale);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    attention_bwd_dkv_kernel<S, NDV><<<dim3(n_tiles, (unsigned)KVH, (unsigned)B), ATT_THREADS,
                                       smem, stream>>>((S *)dk, (S *)dv, dout_s, q_s, k_s, v_s,
                                                       out_s, lse, T, H, KVH, D, scale);
    return cudaGetLastError();
}

template <typename S>
static cudaError_t attention_bwd(cudaStream_t stream, void *dq, void *dk, void *dv,
                                 const void *dout, const void *q, const void *k, const void *v,
                                 const void *out, const float *lse, int B, int T, int H, int KVH,
                                 int D) {
    if (B < 0 || T < 0 || H <= 0 || KVH <= 0 || H % KVH != 0 || D <= 0) {
        return cudaErrorInvalidValue;
    }
    if (B > 65535 || H > 65535) return cudaErrorInvalidValue; /* grid y, z limits */
    if (D > ATT_MAX_D) return cudaErrorInvalidValue;
    if (B == 0 || T == 0) return cudaSuccess;
#define ATT_BWD(ndv)                                                                               \
    attention_bwd_launch<S, ndv>(stream, dq, dk, dv, dout, q, k, v, out, lse, B, T, H, KVH, D)
    switch (att_ndv(D)) {
    case 4: return ATT_BWD(4);
    case 8: return ATT_BWD(8);
    case 16: return ATT_BWD(16);
    default: return ATT_BWD(32);
    }
#undef ATT_BWD
}

cudaError_t zb_cuda_attention_bwd(cudaStream_t stream, zb_dtype dtype, void *dq, void *dk,
                                  void *dv, const void *dout, const void *q, const void *k,
                                  const void *v, const void *out, const float *lse, int B, int T,
                                  int H, int KVH, int D) {
    return ZB_CUDA_DISPATCH(dtype, attention_bwd, stream, dq, dk, dv, dout, q, k, v, out, lse, B,
                            T, H, KVH, D);
}
