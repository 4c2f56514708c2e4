/* The fused attention's tile loops (fast_attention_tile.h), used by the
 * forward (fast_attention_fwd.c) and the backward (fast_attention_bwd.c):
 * the online softmax of a score tile, the rows' final scaling, the
 * backward's probabilities and dS, rowsum(dO * O), and the stacking of a
 * kv head's query heads. This file builds with -O3 and each tile loop is
 * compiled for AVX-512, AVX2 and the baseline (ZB_VEC_CLONES), with a
 * polynomial exp, so the softmax stays small next to the GEMMs. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu_fast.h"
#include "fast_attention_tile.h"
#include "vec_clones.h"
#include "vexp.h"

#if defined(__GNUC__)
#define ZB_INLINE static inline __attribute__((always_inline))
#else
#define ZB_INLINE static inline
#endif

#define ZB_LANES 16

/* e^x for x <= 0.5 (scores minus a row's max or its lse; the max's own
 * rounding can push the argument slightly above 0): vexp.h's polynomial. */
ZB_INLINE float exp_nonpos(float x) { return zb_vexpf_inline(x); }

/* Keys of tile row i that row may see: query r0 + i sees keys <= r0 + i,
 * the tile's column 0 is key c0, so diag = r0 - c0. */
ZB_INLINE int visible(int i, int diag, int cols) {
    int n = i + diag + 1;
    return n < 0 ? 0 : n < cols ? n : cols;
}

/* A float's bits mapped to an int32 in the same order (and back: the map
 * is its own inverse): negative floats get their magnitude bits flipped.
 * GCC vectorises an int max over lanes, not a float one without
 * fast-math (the float compare is not associative for NaN). */
ZB_INLINE int32_t order_key(int32_t bits) {
    int32_t neg = -(int32_t)((uint32_t)bits >> 31); /* all ones when the sign is set */
    return bits ^ (neg & INT32_MAX);
}

ZB_INLINE int32_t bits_of(const float *x) {
    int32_t b;
    memcpy(&b, x, sizeof b);
    return b;
}

ZB_INLINE float row_max(const float *p, int n) {
    int32_t acc[ZB_LANES];
    for (int l = 0; l < ZB_LANES; l++) acc[l] = INT32_MIN;
    int j = 0;
    for (; j + ZB_LANES <= n; j += ZB_LANES) {
        for (int l = 0; l < ZB_LANES; l++) {
            int32_t key = order_key(bits_of(p + j + l));
            acc[l] = key > acc[l] ? key : acc[l];
        }
    }
    int32_t mx = INT32_MIN;
    for (int l = 0; l < ZB_LANES; l++) mx = acc[l] > mx ? acc[l] : mx;
    for (; j < n; j++) mx = order_key(bits_of(p + j)) > mx ? order_key(bits_of(p + j)) : mx;
    int32_t top = order_key(mx);
    float out;
    memcpy(&out, &top, sizeof out);
    return out;
}

/* p[j] = e^(p[j] - mx) for j < n, 0 for n <= j < cols; returns the sum. */
ZB_INLINE float exp_row(float *p, int n, int cols, float mx) {
    float acc[ZB_LANES] = {0};
    int j = 0;
    for (; j + ZB_LANES <= n; j += ZB_LANES) {
        for (int l = 0; l < ZB_LANES; l++) {
            p[j + l] = exp_nonpos(p[j + l] - mx);
            acc[l] += p[j + l];
        }
    }
    float sum = 0.0f;
    for (int l = 0; l < ZB_LANES; l++) sum += acc[l];
    for (; j < n; j++) {
        p[j] = exp_nonpos(p[j] - mx);
        sum += p[j];
    }
    for (; j < cols; j++) p[j] = 0.0f;
    return sum;
}

/* fast_attention_tile.h says what each exported loop computes. */

ZB_VEC_CLONES
void zb_attn_online_softmax(float *s, int rows, int cols, int diag, float *m, float *l, float *o, int D) {
    for (int i = 0; i < rows; i++) {
        float *p = s + (size_t)i * (size_t)cols;
        int n = visible(i, diag, cols);
        if (n == 0) { /* no key of this tile is visible yet: nothing changes */
            memset(p, 0, (size_t)cols * sizeof *p);
            continue;
        }
        float mx = row_max(p, n), m_new = mx > m[i] ? mx : m[i];
        float sum = exp_row(p, n, cols, m_new);
        /* m = -inf before the row's first visible key: o and l are 0 */
        float corr = m[i] == -INFINITY ? 0.0f : exp_nonpos(m[i] - m_new);
        l[i] = l[i] * corr + sum;
        m[i] = m_new;
        if (corr != 1.0f) {
            float *orow = o + (size_t)i * (size_t)D;
            for (int d = 0; d < D; d++) orow[d] *= corr;
        }
    }
}

/* out rows = o / l, lse = m + log l (every row saw key 0, so l >= 1). */
ZB_VEC_CLONES
void zb_attn_finish_rows(float *out, int ld, float *lse, const float *o, const float *m, const float *l, int rows,
                         int D) {
    for (int i = 0; i < rows; i++) {
        float inv = 1.0f / l[i];
        float *orow = out + (size_t)i * (size_t)ld;
        const float *src = o + (size_t)i * (size_t)D;
        for (int d = 0; d < D; d++) orow[d] = src[d] * inv;
        lse[i] = m[i] + logf(l[i]);
    }
}

ZB_VEC_CLONES
void zb_attn_tile_ds(float *s, float *dp, int rows, int cols, int diag, const float *lse, const float *di) {
    for (int i = 0; i < rows; i++) {
        float *p = s + (size_t)i * (size_t)cols, *d = dp + (size_t)i * (size_t)cols;
        int n = visible(i, diag, cols), j = 0;
        float li = lse[i], dii = di[i];
        for (; j < n; j++) {
            p[j] = exp_nonpos(p[j] - li);
            d[j] = p[j] * (d[j] - dii);
        }
        for (; j < cols; j++) p[j] = d[j] = 0.0f;
    }
}

ZB_VEC_CLONES
void zb_attn_rows_dot(float *di, const float *a, const float *b, int rows, int ld, int D) {
    for (int i = 0; i < rows; i++) {
        const float *x = a + (size_t)i * (size_t)ld, *y = b + (size_t)i * (size_t)ld;
        float acc[ZB_LANES] = {0};
        int d = 0;
        for (; d + ZB_LANES <= D; d += ZB_LANES) {
            for (int l = 0; l < ZB_LANES; l++) acc[l] += x[d + l] * y[d + l];
        }
        float s = 0.0f;
        for (int l = 0; l < ZB_LANES; l++) s += acc[l];
        for (; d < D; d++) s += x[d] * y[d];
        di[i] = s;
    }
}

zb_status zb_attn_check_heads(int H, int KVH, int D, const char *what) {
    if (H <= 0 || KVH <= 0 || H % KVH != 0 || D <= 0) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "%s: query heads %d must be a positive multiple of kv heads %d (head dim %d > 0)", what, H, KVH,
                       D);
    }
    return ZB_OK;
}

void zb_attn_stack(float *dst, const float *x, const zb_attn_group *G, int r0, int rows) {
    size_t n = sizeof(float) * (size_t)G->D;
    for (int r = 0; r < G->rep; r++) {
        const float *head = x + G->qoff + (size_t)r * (size_t)G->D;
        for (int i = 0; i < rows; i++) {
            memcpy(dst + (size_t)(r * rows + i) * (size_t)G->D, head + (size_t)(r0 + i) * (size_t)G->qld, n);
        }
    }
}

void zb_attn_unstack(float *x, const float *src, const zb_attn_group *G, int r0, int rows) {
    size_t n = sizeof(float) * (size_t)G->D;
    for (int r = 0; r < G->rep; r++) {
        float *head = x + G->qoff + (size_t)r * (size_t)G->D;
        for (int i = 0; i < rows; i++) {
            memcpy(head + (size_t)(r0 + i) * (size_t)G->qld, src + (size_t)(r * rows + i) * (size_t)G->D, n);
        }
    }
}
