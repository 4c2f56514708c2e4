/* What the fused attention's forward (fast_attention_fwd.c) and backward
 * (fast_attention_bwd.c) share: tile sizes, a kv head's group of query
 * heads, the row stacking and the vectorised tile loops (fast_attention.c,
 * built with -O3 and AVX-512/AVX2 clones). Private to the cpu device. */
#ifndef ZB_FAST_ATTENTION_TILE_H
#define ZB_FAST_ATTENTION_TILE_H

#include <math.h>
#include <stddef.h>

#include "status.h"

/* Tile sizes. The query heads that share a kv head are stacked into one
 * GEMM of about ZB_ATTN_*_M rows (rep heads x a block of rows each), so
 * each K and V tile is packed once for all of them and a GEMM stays large
 * while a head's block of rows stays small: a block computes up to the end
 * of its diagonal tile, about (rows / T) more than the causal half. Keys
 * come ZB_ATTN_*_BC at a time; score tiles (M x BC floats, one forward, two
 * backward) stay in L2. Picked by timing B1 H4 KVH2 D64 T2048 and B1 H16
 * KVH4 D128 T1024 on one core (bench/attention_vs_torch.py). */
#define ZB_ATTN_FWD_M 256
#define ZB_ATTN_FWD_BC 256
#define ZB_ATTN_BWD_M 256
#define ZB_ATTN_BWD_BC 128
#define ZB_ATTN_MAX_ROWS 128 /* rows per head in a block, at most (MHA) */

/* Rows per head in a block of m stacked rows for rep heads per kv head. */
static inline int zb_attn_rows(int m, int rep) {
    int rows = m / rep;
    return rows > ZB_ATTN_MAX_ROWS ? ZB_ATTN_MAX_ROWS : rows < 16 ? 16 : rows;
}

/* One (batch, kv head) and the rep query heads that read it. */
typedef struct zb_attn_group {
    int T, rep, D, qld, kvld; /* row strides: q-shaped H*D, kv-shaped KVH*D */
    float scale;              /* 1 / sqrt(D) */
    size_t qoff;              /* row 0 of the first query head in q-shaped arrays (head r: + r D) */
    size_t kvoff;             /* row 0 of the kv head in kv-shaped arrays */
    size_t loff;              /* the first head's lse [T] (head r: + r T) */
} zb_attn_group;

static inline zb_attn_group zb_attn_group_at(int b, int g, int T, int H, int KVH, int D) {
    zb_attn_group G;
    G.T = T;
    G.rep = H / KVH;
    G.D = D;
    G.qld = H * D;
    G.kvld = KVH * D;
    G.scale = (float)(1.0 / sqrt((double)D));
    G.qoff = (size_t)b * (size_t)T * (size_t)G.qld + (size_t)(g * G.rep) * (size_t)D;
    G.kvoff = (size_t)b * (size_t)T * (size_t)G.kvld + (size_t)g * (size_t)D;
    G.loff = ((size_t)b * (size_t)H + (size_t)(g * G.rep)) * (size_t)T;
    return G;
}

/* dst [rep * rows, D] = rows [r0, r0 + rows) of the group's heads of the
 * q-shaped x (at G->qoff), head-major: head r's rows start at r * rows. */
void zb_attn_stack(float *dst, const float *x, const zb_attn_group *G, int r0, int rows);
/* The other way: src's stacked rows written into the q-shaped x. */
void zb_attn_unstack(float *x, const float *src, const zb_attn_group *G, int r0, int rows);

/* ZB_ERR_INVALID unless H is a positive multiple of KVH and D > 0. */
zb_status zb_attn_check_heads(int H, int KVH, int D, const char *what);

/* One key tile's online-softmax step: s [rows, cols] (ld cols) holds the
 * scaled scores of query rows r0.. against keys c0.. (diag = r0 - c0) and
 * becomes P = e^(s - m_new), zero where the causal mask hides the key; m
 * and l [rows] move to the new running max and sum; a row of the output
 * accumulator o [rows, D] whose max grew is rescaled by e^(m_old - m_new)
 * (before P V is added to it). m starts at -inf, l and o at 0. */
void zb_attn_online_softmax(float *s, int rows, int cols, int diag, float *m, float *l, float *o, int D);
/* out rows (stride ld) = o / l, lse = m + log l. */
void zb_attn_finish_rows(float *out, int ld, float *lse, const float *o, const float *m, const float *l, int rows,
                         int D);
/* The backward's tile: s [rows, cols] (ld cols) holds the scaled scores of
 * query rows r0.. against keys c0.. (diag = r0 - c0) and becomes
 * P = e^(s - lse); dp holds dO V^T and becomes P (dp - di) (the gradient of
 * the scaled scores). Both zero where the causal mask hides the key. */
void zb_attn_tile_ds(float *s, float *dp, int rows, int cols, int diag, const float *lse, const float *di);
/* di[i] = sum_d a[i, d] b[i, d] over rows of stride ld. */
void zb_attn_rows_dot(float *di, const float *a, const float *b, int rows, int ld, int D);

#endif
