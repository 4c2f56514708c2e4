/* Row-major -> column-major GEMM mapping and the algorithm cache for the
 * cuBLASLt GEMM (see cublaslt_map.h). */
#include "cublaslt_map.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The C dtype of a desc: its dtype, or fp32 when c_f32. */
static zb_dtype c_dtype_of(const zb_gemm_desc *g) {
    return g->c_f32 ? ZB_DTYPE_F32 : g->dtype;
}

void zb_gemm_shape_text(const zb_gemm_desc *g, char *buf, size_t n) {
    /* "bf16->f32" when C's dtype differs from the inputs' */
    bool mixed = c_dtype_of(g) != g->dtype;
    snprintf(buf, n, "%s%s gemm m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld trans_a=%d "
             "trans_b=%d", zb_dtype_name(g->dtype), mixed ? "->f32" : "", (long long)g->m,
             (long long)g->n, (long long)g->k, (long long)g->lda, (long long)g->ldb,
             (long long)g->ldc, (int)g->trans_a, (int)g->trans_b);
}

zb_status zb_lt_map_gemm(const zb_gemm_desc *g, zb_lt_gemm *out) {
    char shape[192];
    zb_gemm_shape_text(g, shape, sizeof shape);
    if ((int)g->dtype < 0 || g->dtype >= ZB_DTYPE_COUNT) {
        return ZB_FAIL(ZB_ERR_INVALID, "GEMM dtype %d is not a zerobench dtype", (int)g->dtype);
    }
    if (g->m <= 0 || g->n <= 0 || g->k <= 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s: every dimension must be positive", shape);
    }
    /* Row strides: op(A) is [M,K], so A is stored [M,K] or, transposed, [K,M]. */
    int64_t a_row = g->trans_a ? g->m : g->k;
    int64_t b_row = g->trans_b ? g->k : g->n;
    if (g->lda < a_row || g->ldb < b_row || g->ldc < g->n) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s: a row stride is shorter than its row (need lda >= %lld, "
                       "ldb >= %lld, ldc >= %lld)", shape, (long long)a_row, (long long)b_row,
                       (long long)g->n);
    }
    if (!g->a || !g->b || !g->c) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s: a matrix pointer is NULL", shape);
    }
    memset(out, 0, sizeof *out);
    out->m = (uint64_t)g->n;
    out->n = (uint64_t)g->m;
    out->k = (uint64_t)g->k;
    out->dtype = g->dtype;
    out->c_dtype = c_dtype_of(g);
    /* Lt's A = the caller's B. Row-major [K,N] (or [N,K] when trans_b) is
     * column-major [N,K] (or [K,N]); Lt wants op(A) = [N,K] = op(B)^T. */
    out->a.ptr = g->b;
    out->a.trans = g->trans_b;
    out->a.rows = g->trans_b ? (uint64_t)g->k : (uint64_t)g->n;
    out->a.cols = g->trans_b ? (uint64_t)g->n : (uint64_t)g->k;
    out->a.ld = g->ldb;
    /* Lt's B = the caller's A: row-major [M,K] (or [K,M]) is column-major
     * [K,M] (or [M,K]); Lt wants op(B) = [K,M] = op(A)^T. */
    out->b.ptr = g->a;
    out->b.trans = g->trans_a;
    out->b.rows = g->trans_a ? (uint64_t)g->m : (uint64_t)g->k;
    out->b.cols = g->trans_a ? (uint64_t)g->k : (uint64_t)g->m;
    out->b.ld = g->lda;
    /* C row-major [M,N] is column-major [N,M]. */
    out->c.ptr = g->c;
    out->c.trans = false;
    out->c.rows = (uint64_t)g->n;
    out->c.cols = (uint64_t)g->m;
    out->c.ld = g->ldc;
    return ZB_OK;
}

uint32_t zb_ptr_alignment(const void *p) {
    uintptr_t x = (uintptr_t)p;
    if (x == 0) return 256;
    uint32_t a = 1;
    while (a < 256 && (x & (uintptr_t)a) == 0) a <<= 1;
    return a;
}

void zb_gemm_key_of(const zb_gemm_desc *g, zb_gemm_key *out) {
    memset(out, 0, sizeof *out);
    out->m = g->m;
    out->n = g->n;
    out->k = g->k;
    out->lda = g->lda;
    out->ldb = g->ldb;
    out->ldc = g->ldc;
    out->trans_a = g->trans_a ? 1 : 0;
    out->trans_b = g->trans_b ? 1 : 0;
    out->dtype = (int32_t)g->dtype;
    /* c_f32 changes nothing behind fp32 inputs: one plan for both */
    out->c_f32 = g->c_f32 && g->dtype != ZB_DTYPE_F32 ? 1 : 0;
    out->align_a = zb_ptr_alignment(g->a);
    out->align_b = zb_ptr_alignment(g->b);
    out->align_c = zb_ptr_alignment(g->c);
}

bool zb_gemm_key_equal(const zb_gemm_key *x, const zb_gemm_key *y) {
    return x->m == y->m && x->n == y->n && x->k == y->k && x->lda == y->lda &&
           x->ldb == y->ldb && x->ldc == y->ldc && x->trans_a == y->trans_a &&
           x->trans_b == y->trans_b && x->dtype == y->dtype && x->c_f32 == y->c_f32 &&
           x->align_a == y->align_a &&
           x->align_b == y->align_b && x->align_c == y->align_c;
}

static uint64_t zb_mix(uint64_t h, uint64_t v) {
    /* FNV-1a over the value's bytes, field by field (no struct padding). */
    for (int i = 0; i < 8; i++) {
        h ^= (v >> (8 * i)) & 0xffu;
        h *= 0x100000001b3ULL;
    }
    return h;
}

uint64_t zb_gemm_key_hash(const zb_gemm_key *k) {
    uint64_t h = 0xcbf29ce484222325ULL;
    h = zb_mix(h, (uint64_t)k->m);
    h = zb_mix(h, (uint64_t)k->n);
    h = zb_mix(h, (uint64_t)k->k);
    h = zb_mix(h, (uint64_t)k->lda);
    h = zb_mix(h, (uint64_t)k->ldb);
    h = zb_mix(h, (uint64_t)k->ldc);
    h = zb_mix(h, (uint64_t)(uint32_t)k->trans_a | (uint64_t)(uint32_t)k->trans_b << 1 |
                      (uint64_t)(uint32_t)k->dtype << 2 | (uint64_t)(uint32_t)k->c_f32 << 34);
    h = zb_mix(h, (uint64_t)k->align_a | (uint64_t)k->align_b << 16 | (uint64_t)k->align_c << 32);
    return h;
}

void zb_gemm_cache_init(zb_gemm_cache *c, void (*free_value)(void *ctx, void *value),
                        void *free_ctx) {
    memset(c, 0, sizeof *c);
    c->free_value = free_value;
    c->free_ctx = free_ctx;
}

void zb_gemm_cache_destroy(zb_gemm_cache *c) {
    for (size_t i = 0; i < c->capacity; i++) {
        if (c->slots[i].used && c->free_value) c->free_value(c->free_ctx, c->slots[i].value);
    }
    free(c->slots);
    c->slots = NULL;
    c->capacity = c->count = 0;
}

/* The key's slot, or the empty slot where it would go (capacity > 0). */
static size_t zb_cache_slot(const zb_gemm_cache_slot *slots, size_t capacity,
                            const zb_gemm_key *key) {
    size_t mask = capacity - 1;
    size_t i = (size_t)zb_gemm_key_hash(key) & mask;
    while (slots[i].used && !zb_gemm_key_equal(&slots[i].key, key)) i = (i + 1) & mask;
    return i;
}

void *zb_gemm_cache_find(zb_gemm_cache *c, const zb_gemm_key *key) {
    if (c->capacity) {
        size_t i = zb_cache_slot(c->slots, c->capacity, key);
        if (c->slots[i].used) {
            c->hits++;
            return c->slots[i].value;
        }
    }
    c->misses++;
    return NULL;
}

zb_status zb_gemm_cache_insert(zb_gemm_cache *c, const zb_gemm_key *key, void *value) {
    if (!value) return ZB_FAIL(ZB_ERR_INVALID, "GEMM cache: NULL value");
    if ((c->count + 1) * 4 > c->capacity * 3) { /* load <= 3/4 */
        size_t cap = c->capacity ? c->capacity * 2 : 16;
        zb_gemm_cache_slot *slots = (zb_gemm_cache_slot *)calloc(cap, sizeof *slots);
        if (!slots) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory growing the GEMM algorithm cache");
        for (size_t i = 0; i < c->capacity; i++) {
            if (c->slots[i].used) slots[zb_cache_slot(slots, cap, &c->slots[i].key)] = c->slots[i];
        }
        free(c->slots);
        c->slots = slots;
        c->capacity = cap;
    }
    size_t i = zb_cache_slot(c->slots, c->capacity, key);
    if (c->slots[i].used) return ZB_FAIL(ZB_ERR_INVALID, "GEMM cache: key already present");
    c->slots[i].used = true;
    c->slots[i].key = *key;
    c->slots[i].value = value;
    c->count++;
    return ZB_OK;
}

zb_status zb_gemm_direct_prepare(const zb_gemm_desc *g, int64_t warmup, int64_t iters,
                                 zb_lt_gemm *out) {
    char shape[192];
    zb_gemm_shape_text(g, shape, sizeof shape);
    if (warmup < 0 || iters < 1) {
        return ZB_FAIL(ZB_ERR_INVALID, "direct cuBLASLt, %s: %lld warm-up and %lld timed "
                       "iterations (need >= 0 and >= 1)", shape, (long long)warmup,
                       (long long)iters);
    }
    return zb_lt_map_gemm(g, out);
}

zb_status zb_gemm_direct_seconds(double elapsed_ms, int64_t iters, const char *shape,
                                 double *seconds) {
    *seconds = 0.0;
    if (iters < 1) {
        return ZB_FAIL(ZB_ERR_INVALID, "direct cuBLASLt, %s: %lld timed iterations (need >= 1)",
                       shape, (long long)iters);
    }
    if (!isfinite(elapsed_ms) || elapsed_ms <= 0.0) {
        return ZB_FAIL(ZB_ERR_INTERNAL, "direct cuBLASLt, %s: cudaEventElapsedTime reported %g ms "
                       "for %lld GEMMs (want a positive time)", shape, elapsed_ms,
                       (long long)iters);
    }
    *seconds = elapsed_ms / 1e3 / (double)iters;
    return ZB_OK;
}
