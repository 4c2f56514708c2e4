/* The fused attention's backward, FlashAttention-2's scheme on the CPU
 * (cpu_fast.h; the forward: fast_attention_fwd.c; the tile loops:
 * fast_attention.c).
 *
 * Per (batch, kv head), the query heads that read it are stacked as in the
 * forward (fast_attention_tile.h). Per block of query rows: the stacked q
 * and dO rows, Di = rowsum(dO * O) per row (what rowsum(P * dP) equals),
 * and a dQ accumulator; then per key tile up to the diagonal, P is
 * recomputed from S and the saved lse (P = e^(S - lse): lse is the row's
 * exact normaliser, no max pass) and
 *   dP = dO V^T,  dS = P (dP - Di),
 *   dV += P^T dO,  dK += scale dS^T Q,  dQ += scale dS K,
 * each product one sgemm with beta = 1; dV and dK go straight into dv and
 * dk through their leading dimensions (zeroed first), so every query head
 * of the group adds into its kv head's rows. Query blocks outside, key
 * tiles inside (FlashAttention-2 on a GPU goes the other way to avoid
 * atomic dQ adds; one thread has none): each block's rows are stacked once
 * and its dQ is written once. Scratch: a few M x D and M x BC tiles (M =
 * the stacked rows), never T x T. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_fast.h"
#include "fast_attention_tile.h"

/* The backward's scratch, each of M stacked rows: q, dO and the dQ
 * accumulator [M, D]; score/probability and dP/dS tiles [M, BC]; Di [M]. */
typedef struct bwd_scratch {
    float *q, *dout, *dq, *s, *dp, *di;
} bwd_scratch;

/* The arrays of one call. */
typedef struct bwd_io {
    const float *dout, *q, *k, *v, *out, *lse;
    float *dq, *dk, *dv;
} bwd_io;

/* Keys [c0, c0 + cols) against the stacked block of query rows r0.. */
static void bwd_tile(const zb_attn_group *G, const bwd_io *io, int r0, int rows, int c0, int cols,
                     const bwd_scratch *w) {
    int D = G->D, M = G->rep * rows, kvld = G->kvld;
    size_t kc = G->kvoff + (size_t)c0 * (size_t)kvld;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, cols, D, G->scale, w->q, D, io->k + kc, kvld, 0.0f, w->s,
                cols);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, cols, D, 1.0f, w->dout, D, io->v + kc, kvld, 0.0f, w->dp,
                cols);
    for (int r = 0; r < G->rep; r++) {
        size_t at = (size_t)r * (size_t)rows;
        zb_attn_tile_ds(w->s + at * (size_t)cols, w->dp + at * (size_t)cols, rows, cols, r0 - c0,
                        io->lse + G->loff + (size_t)r * (size_t)G->T + (size_t)r0, w->di + at);
    }
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, cols, D, M, 1.0f, w->s, cols, w->dout, D, 1.0f, io->dv + kc,
                kvld);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, cols, D, M, G->scale, w->dp, cols, w->q, D, 1.0f, io->dk + kc,
                kvld);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, D, cols, G->scale, w->dp, cols, io->k + kc, kvld, 1.0f,
                w->dq, D);
}

/* Query rows [r0, r0 + rows) of the group's heads against every key tile
 * up to their diagonal; their dq rows written at the end. */
static void bwd_block(const zb_attn_group *G, const bwd_io *io, int r0, int rows, const bwd_scratch *w) {
    int D = G->D, M = G->rep * rows;
    zb_attn_stack(w->q, io->q, G, r0, rows);
    zb_attn_stack(w->dout, io->dout, G, r0, rows);
    for (int r = 0; r < G->rep; r++) {
        size_t head = G->qoff + (size_t)r * (size_t)D + (size_t)r0 * (size_t)G->qld;
        zb_attn_rows_dot(w->di + (size_t)r * (size_t)rows, io->dout + head, io->out + head, rows, G->qld, D);
    }
    memset(w->dq, 0, sizeof(float) * (size_t)M * (size_t)D);
    for (int c0 = 0; c0 < r0 + rows; c0 += ZB_ATTN_BWD_BC) {
        bwd_tile(G, io, r0, rows, c0, r0 + rows - c0 < ZB_ATTN_BWD_BC ? r0 + rows - c0 : ZB_ATTN_BWD_BC, w);
    }
    zb_attn_unstack(io->dq, w->dq, G, r0, rows);
}

zb_status zb_cpu_attention_bwd_fast(float *dq, float *dk, float *dv, const float *dout, const float *q, const float *k,
                                    const float *v, const float *out, const float *lse, int B, int T, int H, int KVH,
                                    int D) {
    ZB_TRY(zb_attn_check_heads(H, KVH, D, "attention backward"));
    if (B == 0 || T == 0) return ZB_OK;
    int br = zb_attn_rows(ZB_ATTN_BWD_M, H / KVH);
    size_t M = (size_t)(H / KVH) * (size_t)br;
    bwd_scratch w;
    w.q = (float *)malloc(sizeof(float) * M * (3 * (size_t)D + 2 * ZB_ATTN_BWD_BC + 1));
    if (!w.q) {
        return ZB_FAIL(ZB_ERR_NOMEM, "attention backward: out of memory for two %zu x %d tiles and three %zu x %d", M,
                       ZB_ATTN_BWD_BC, M, D);
    }
    w.dout = w.q + M * (size_t)D;
    w.dq = w.dout + M * (size_t)D;
    w.s = w.dq + M * (size_t)D;
    w.dp = w.s + M * ZB_ATTN_BWD_BC;
    w.di = w.dp + M * ZB_ATTN_BWD_BC;
    size_t nkv = (size_t)B * (size_t)T * (size_t)KVH * (size_t)D;
    memset(dk, 0, nkv * sizeof *dk);
    memset(dv, 0, nkv * sizeof *dv);
    bwd_io io = {dout, q, k, v, out, lse, dq, dk, dv};
    for (int b = 0; b < B; b++) {
        for (int g = 0; g < KVH; g++) {
            zb_attn_group G = zb_attn_group_at(b, g, T, H, KVH, D);
            for (int r0 = 0; r0 < T; r0 += br) bwd_block(&G, &io, r0, T - r0 < br ? T - r0 : br, &w);
        }
    }
    free(w.q);
    return ZB_OK;
}
