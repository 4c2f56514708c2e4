/* Tiles shared by the fused attention kernels (attention_fwd.cu, attention_bwd.cu):
 * FlashAttention-2's scheme on CUDA cores, fp32 math, no buffer of T x T elements and no global
 * scratch.
 *
 * A block is ATT_THREADS = 16 x 16 threads (ty = tid / 16, tx = tid % 16) and works on square
 * tiles of BT query rows by BT keys (BT = att_cfg<NDV>::BT: 64 for head dims D <= 128, 32 up to
 * 256, 16 up to 512; NDV = att_ndv(D): ceil(D / 16) rounded up to 4, 8, 16 or 32). Ownership in
 * a thread:
 *   - score tile [BT x BT]: rows ty*RM + i (RM = BT / 16), columns tx + 16*m (m < RM): the 16
 *     lanes of a half warp share a row, so row reductions are 4 xor shuffles (att_group_max,
 *     att_group_sum);
 *   - output tile [BT x D]: the same rows, columns 4*tx + 64*j + e (j < NDV / 4, e < 4): four
 *     neighbours, read from shared memory as one vector (att_ld4).
 * Tiles of q, k, v, dout are staged in their storage type S (bf16 halves the shared memory) with
 * rows of ld = att_ld<S>(D) elements: D rounded up to 4 (zero-filled), padded so that the 16 rows
 * a half warp reads at once fall on distinct banks. Score tiles are fp32, rows of att_pld(BT).
 * Dot products run over d = 0 .. D-1 in order with fmaf, sums over keys in key order; every value
 * both backward kernels recompute (P, dP, Di) comes from the same code, so they agree bit for
 * bit. */
#ifndef ZB_ATTENTION_TILE_CUH
#define ZB_ATTENTION_TILE_CUH

#include <math.h>

#include "zb_cuda_common.cuh"

/* Fully unrolled loops keep the per-thread tiles in registers; host compilers (the emulator) do
 * without. */
#ifdef __CUDACC__
#define ATT_UNROLL _Pragma("unroll")
#else
#define ATT_UNROLL
#endif

#define ATT_TX 16
#define ATT_THREADS (ATT_TX * ATT_TX)
#define ATT_MAX_D 512

template <int NDV>
struct att_cfg {
    static_assert(NDV == 4 || NDV == 8 || NDV == 16 || NDV == 32, "head dim bucket");
    /* tile rows: 64 while the accumulators fit registers, then smaller */
    static constexpr int BT = NDV <= 8 ? 64 : NDV == 16 ? 32 : 16;
    static constexpr int RM = BT / ATT_TX;
};

/* The head-dim bucket of D (4, 8, 16 or 32), or 0 when D > ATT_MAX_D. */
static inline int att_ndv(int D) {
    int n = (D + ATT_TX - 1) / ATT_TX;
    for (int b = 4; b <= ATT_MAX_D / ATT_TX; b *= 2) {
        if (n <= b) return b;
    }
    return 0;
}

/* Row stride (elements) of a staged tile: D rounded up to 4, then up to 4 elements past a
 * multiple of 128 bytes, so that 16 rows read as 16-byte (fp32) or 8-byte (bf16) vectors hit
 * distinct banks. */
template <typename S>
static __host__ __device__ inline int att_ld(int D) {
    const int per128 = 128 / (int)sizeof(S), d4 = (D + 3) / 4 * 4;
    int ld = d4 / per128 * per128 + 4;
    return ld < d4 ? ld + per128 : ld;
}

/* Row stride (floats) of a score tile: RM * pld = 16 mod 32, so the two rows a warp writes at
 * once fall on different banks, and a multiple of 4 for vector reads. */
static __host__ __device__ inline int att_pld(int BT) { return BT == 64 ? 68 : BT == 32 ? 40 : 16; }

static __host__ __device__ inline size_t att_round16(size_t n) { return (n + 15) / 16 * 16; }

/* Bytes of one staged tile of BT rows and of one score tile. */
template <typename S>
static __host__ __device__ inline size_t att_tile_bytes(int BT, int D) {
    return att_round16((size_t)BT * (size_t)att_ld<S>(D) * sizeof(S));
}
static __host__ __device__ inline size_t att_ptile_bytes(int BT) {
    return att_round16((size_t)BT * (size_t)att_pld(BT) * sizeof(float));
}

/* Four neighbouring elements p[0..3] widened to fp32; p is 4-element aligned. */
static __device__ inline void att_ld4(const float *p, float (&x)[4]) {
#ifdef ZB_CUDA_EMU
    if ((uintptr_t)p % 16u) __builtin_trap(); /* a GPU faults on a misaligned vector load */
    for (int e = 0; e < 4; e++) x[e] = p[e];
#else
    float4 v = *(const float4 *)p;
    x[0] = v.x, x[1] = v.y, x[2] = v.z, x[3] = v.w;
#endif
}
static __device__ inline void att_ld4(const zb_bf16 *p, float (&x)[4]) {
#ifdef ZB_CUDA_EMU
    if ((uintptr_t)p % 8u) __builtin_trap();
    for (int e = 0; e < 4; e++) x[e] = zb_bf16_to_f32(p[e]);
#else
    uint2 v = *(const uint2 *)p; /* little endian: element 0 in the low half */
    x[0] = __uint_as_float(v.x << 16), x[1] = __uint_as_float(v.x & 0xffff0000u);
    x[2] = __uint_as_float(v.y << 16), x[3] = __uint_as_float(v.y & 0xffff0000u);
#endif
}

/* Reductions over the 16 lanes of a half warp (one score row); every lane gets the result. All 32
 * lanes must call them. */
static __device__ inline float att_group_max(float v) {
    for (int o = ATT_TX / 2; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
static __device__ inline float att_group_sum(float v) {
    for (int o = ATT_TX / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* Stages rows r0 .. r0+BT-1 of a [T, row] matrix (row r at g + r * row, D elements) in tile t:
 * one warp per row, lanes along d (coalesced). Columns D .. d4-1 and rows >= T are zeros, so
 * padded dot products and products with masked probabilities add exact zeros. */
template <typename S>
static __device__ inline void att_load_tile(S *t, const S *g, size_t row, int r0, int BT, int T,
                                            int D) {
    const int ld = att_ld<S>(D), d4 = (D + 3) / 4 * 4;
    const int warp = (int)threadIdx.x / ZB_CUDA_WARP, lane = (int)threadIdx.x % ZB_CUDA_WARP;
    for (int r = warp; r < BT; r += ATT_THREADS / ZB_CUDA_WARP) {
        const int gr = r0 + r;
        const S *src = g + (size_t)gr * row;
        for (int d = lane; d < d4; d += ZB_CUDA_WARP) {
            float x = gr < T && d < D ? zb_ld(src, (size_t)d) : 0.0f;
            zb_st(t + (size_t)r * (size_t)ld, (size_t)d, x);
        }
    }
}

/* att_load_tile for dout, which also leaves per row r of the tile: Di[r] = dout_r . out_r (the
 * rowsum(P * dP) of the backward) and L[r] = its lse (both 0 for rows >= T). The warp that stages a
 * row sums it (lanes in d order, then the warp's shuffle tree). lse holds the head's T values. */
template <typename S>
static __device__ inline void att_load_dout(S *t, float *Di, float *L, const S *dout,
                                            const S *out, const float *lse, size_t row, int r0,
                                            int BT, int T, int D) {
    const int ld = att_ld<S>(D), d4 = (D + 3) / 4 * 4;
    const int warp = (int)threadIdx.x / ZB_CUDA_WARP, lane = (int)threadIdx.x % ZB_CUDA_WARP;
    for (int r = warp; r < BT; r += ATT_THREADS / ZB_CUDA_WARP) {
        const int gr = r0 + r;
        const bool live = gr < T; /* warp-uniform: every lane joins the sum */
        const size_t off = (size_t)gr * row;
        float part = 0.0f;
        for (int d = lane; d < d4; d += ZB_CUDA_WARP) {
            float x = 0.0f;
            if (live && d < D) {
                x = zb_ld(dout, off + (size_t)d);
                part = fmaf(x, zb_ld(out, off + (size_t)d), part);
            }
            zb_st(t + (size_t)r * (size_t)ld, (size_t)d, x);
        }
        float sum = zb_warp_sum(part);
        if (lane == 0) {
            Di[r] = live ? sum : 0.0f;
            L[r] = live ? lse[gr] : 0.0f;
        }
    }
}

/* acc[i][m] = a_row . b_col over d (fp32, fmaf, d in order) for this thread's score rows
 * (ty*RM + i of tile a) and columns (tx + 16*m of tile b); both tiles staged with att_ld<S>(D). */
template <int RM, typename S>
static __device__ inline void att_dot_tile(float (&acc)[RM][RM], const S *a, const S *b, int D) {
    const int ld = att_ld<S>(D), d4 = (D + 3) / 4 * 4;
    const int ty = (int)threadIdx.x / ATT_TX, tx = (int)threadIdx.x % ATT_TX;
    const S *ar = a + (size_t)(ty * RM) * (size_t)ld, *br = b + (size_t)tx * (size_t)ld;
ATT_UNROLL
    for (int i = 0; i < RM; i++) {
ATT_UNROLL
        for (int m = 0; m < RM; m++) acc[i][m] = 0.0f;
    }
    for (int d = 0; d < d4; d += 4) {
        float av[RM][4], bv[RM][4];
ATT_UNROLL
        for (int i = 0; i < RM; i++) att_ld4(ar + (size_t)i * (size_t)ld + d, av[i]);
ATT_UNROLL
        for (int m = 0; m < RM; m++) att_ld4(br + (size_t)(ATT_TX * m) * (size_t)ld + d, bv[m]);
ATT_UNROLL
        for (int e = 0; e < 4; e++) {
ATT_UNROLL
            for (int i = 0; i < RM; i++) {
ATT_UNROLL
                for (int m = 0; m < RM; m++) acc[i][m] = fmaf(av[i][e], bv[m][e], acc[i][m]);
            }
        }
    }
}

/* acc[i][4j+e] += sum over c < n (in order) of w[ty*RM + i][c] * m[c][4*tx + 64*j + e]: a
 * score tile (fp32, rows of pld) times a staged tile, into this thread's output rows and
 * columns. n is rounded up to 4: the extra columns of w meet zero rows of m. Groups of columns
 * past D are skipped. */
template <int RM, int NDV, typename S>
static __device__ inline void att_acc_tile(float (&acc)[RM][NDV], const float *w, int pld,
                                           const S *m, int n, int D) {
    const int ld = att_ld<S>(D), d4 = (D + 3) / 4 * 4;
    const int ty = (int)threadIdx.x / ATT_TX, tx = (int)threadIdx.x % ATT_TX;
    const float *wr = w + (size_t)(ty * RM) * (size_t)pld;
    const int n4 = (n + 3) / 4 * 4;
    for (int c = 0; c < n4; c += 4) {
        float wv[RM][4];
ATT_UNROLL
        for (int i = 0; i < RM; i++) att_ld4(wr + (size_t)i * (size_t)pld + c, wv[i]);
ATT_UNROLL
        for (int e2 = 0; e2 < 4; e2++) {
            const S *mr = m + (size_t)(c + e2) * (size_t)ld;
ATT_UNROLL
            for (int j = 0; j < NDV / 4; j++) {
                const int d = 4 * tx + 4 * ATT_TX * j;
                if (d >= d4) break; /* this thread's later groups are past D too */
                float mv[4];
                att_ld4(mr + d, mv);
ATT_UNROLL
                for (int i = 0; i < RM; i++) {
ATT_UNROLL
                    for (int e = 0; e < 4; e++) {
                        acc[i][4 * j + e] = fmaf(wv[i][e2], mv[e], acc[i][4 * j + e]);
                    }
                }
            }
        }
    }
}

/* Writes this thread's output rows (tile row ty*RM + i is global row r0 + ty*RM + i, at
 * g + row * that), skipping rows >= T and columns >= D. */
template <int RM, int NDV, typename S>
static __device__ inline void att_store_rows(S *g, size_t row, int r0, int T, int D,
                                             const float (&acc)[RM][NDV]) {
    const int ty = (int)threadIdx.x / ATT_TX, tx = (int)threadIdx.x % ATT_TX;
ATT_UNROLL
    for (int i = 0; i < RM; i++) {
        const int gr = r0 + ty * RM + i;
        if (gr >= T) continue;
        S *dst = g + (size_t)gr * row;
ATT_UNROLL
        for (int j = 0; j < NDV / 4; j++) {
ATT_UNROLL
            for (int e = 0; e < 4; e++) {
                const int d = 4 * tx + 4 * ATT_TX * j + e;
                if (d < D) zb_st(dst, (size_t)d, acc[i][4 * j + e]);
            }
        }
    }
}

#endif
