/* The fused attention's forward, FlashAttention-2's scheme on the CPU
 * (cpu_fast.h; the backward: fast_attention_bwd.c; the tile loops:
 * fast_attention.c), checked against kernels/cpu/attention.c
 * (tests/unit/test_cpu_fast.c).
 *
 * Shapes: q, out [B, T, H, D]; k, v [B, T, KVH, D]; lse [B, H, T]. Query
 * head h reads kv head g = h / (H / KVH). K and V are read in place as
 * matrices with leading dimension KVH*D (one row per token): GQA repeats
 * nothing. The rep = H / KVH query heads of a kv head are stacked, a block
 * of rows of each, into one [rep * rows, D] scratch (fast_attention_tile.h),
 * so one GEMM serves all of them.
 *
 * Per (batch, kv head) and block of query rows, key tiles of
 * ZB_ATTN_FWD_BC up to the block's last row: S = scale Q K^T is one sgemm
 * into a score tile; the online softmax keeps each row's running max m and
 * sum l, masks keys after the row (only in tiles that cross the diagonal)
 * and rescales the row's output accumulator when m grows; O += P V is one
 * sgemm. At the end out = O / l and lse = m + log l. Scratch: the stacked
 * rows, a score tile and an output tile, never T x T. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_fast.h"
#include "fast_attention_tile.h"

/* The forward's scratch, each of M = rep x rows rows: the stacked query
 * rows, the score tile, the output tile, the running max and sum. */
typedef struct fwd_scratch {
    float *q, *s, *o, *m, *l;
} fwd_scratch;

/* Query rows [r0, r0 + rows) of the group's heads: one S = scale Q K^T and
 * one O += P V per key tile for all of them, the softmax head by head (each
 * head's rows are one tile of the stack). */
static void fwd_block(const zb_attn_group *G, const float *q, const float *k, const float *v, float *out, float *lse,
                      int r0, int rows, const fwd_scratch *w) {
    int D = G->D, M = G->rep * rows;
    zb_attn_stack(w->q, q, G, r0, rows);
    for (int i = 0; i < M; i++) w->m[i] = -INFINITY, w->l[i] = 0.0f;
    memset(w->o, 0, sizeof(float) * (size_t)M * (size_t)D);
    const float *kg = k + G->kvoff, *vg = v + G->kvoff;
    for (int c0 = 0; c0 < r0 + rows; c0 += ZB_ATTN_FWD_BC) {
        int cols = r0 + rows - c0 < ZB_ATTN_FWD_BC ? r0 + rows - c0 : ZB_ATTN_FWD_BC;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, cols, D, G->scale, w->q, D,
                    kg + (size_t)c0 * (size_t)G->kvld, G->kvld, 0.0f, w->s, cols);
        for (int r = 0; r < G->rep; r++) {
            size_t at = (size_t)r * (size_t)rows;
            zb_attn_online_softmax(w->s + at * (size_t)cols, rows, cols, r0 - c0, w->m + at, w->l + at,
                                   w->o + at * (size_t)D, D);
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, D, cols, 1.0f, w->s, cols,
                    vg + (size_t)c0 * (size_t)G->kvld, G->kvld, 1.0f, w->o, D);
    }
    for (int r = 0; r < G->rep; r++) {
        size_t at = (size_t)r * (size_t)rows;
        zb_attn_finish_rows(out + G->qoff + (size_t)r0 * (size_t)G->qld + (size_t)r * (size_t)D, G->qld,
                            lse + G->loff + (size_t)r * (size_t)G->T + (size_t)r0, w->o + at * (size_t)D, w->m + at,
                            w->l + at, rows, D);
    }
}

zb_status zb_cpu_attention_fwd_fast(float *out, float *lse, const float *q, const float *k, const float *v, int B,
                                    int T, int H, int KVH, int D) {
    ZB_TRY(zb_attn_check_heads(H, KVH, D, "attention"));
    if (B == 0 || T == 0) return ZB_OK;
    int br = zb_attn_rows(ZB_ATTN_FWD_M, H / KVH);
    size_t M = (size_t)(H / KVH) * (size_t)br;
    fwd_scratch w;
    w.q = (float *)malloc(sizeof(float) * M * (2 * (size_t)D + ZB_ATTN_FWD_BC + 2));
    if (!w.q) {
        return ZB_FAIL(ZB_ERR_NOMEM, "attention: out of memory for its %zu x %d score tile and %zu x %d row tiles", M,
                       ZB_ATTN_FWD_BC, M, D);
    }
    w.o = w.q + M * (size_t)D;
    w.s = w.o + M * (size_t)D;
    w.m = w.s + M * ZB_ATTN_FWD_BC;
    w.l = w.m + M;
    for (int b = 0; b < B; b++) {
        for (int g = 0; g < KVH; g++) {
            zb_attn_group G = zb_attn_group_at(b, g, T, H, KVH, D);
            for (int r0 = 0; r0 < T; r0 += br) fwd_block(&G, q, k, v, out, lse, r0, T - r0 < br ? T - r0 : br, &w);
        }
    }
    free(w.q);
    return ZB_OK;
}
