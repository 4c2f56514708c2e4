/* The plain-C half of the cuBLASLt GEMM: the row-major -> column-major
 * argument mapping and the per-shape algorithm cache (no CUDA needed, so
 * both are unit-tested on CPU).
 *
 * Mapping. zb_gemm_desc is row-major: C[M,N] = alpha op(A)[M,K] op(B)[K,N]
 * + beta C, with row strides lda/ldb/ldc. A row-major matrix with row stride
 * ld is, read column-major with leading dimension ld, its transpose. So
 * cuBLASLt (column-major) computes C^T[N,M] = op(B)^T[N,K] op(A)^T[K,M]:
 *   Lt's A is the caller's B, Lt's B is the caller's A, Lt's (m, n, k) is
 *   (N, M, K), and the transposes carry over unchanged: op(B)^T with B
 *   row-major [K,N] is the column-major [N,K] read as is (no transpose);
 *   with trans_b, B is stored row-major [N,K] = column-major [K,N] and must
 *   be transposed. Likewise for A. Each Lt matrix layout is described as
 *   stored (before its op): rows x cols with leading dimension ld.
 *
 * Dtypes. A and B are g->dtype; C (and D, in place) is g->dtype too, or
 * fp32 when g->c_f32 (bf16 inputs, fp32 output: mixed-precision weight
 * gradients). The mapped problem carries both: dtype (A, B) and c_dtype.
 *
 * Cache. Algorithms from cuBLASLt's heuristic are kept per key (shape,
 * strides, transposes, dtype, c_f32 and the pointers' alignments, since the
 * heuristic filters algorithms by alignment) in an open-addressing hash
 * table that grows; the value is an opaque pointer owned by the cache.
 *
 * Direct baseline. The argument checks and the arithmetic of the direct
 * cuBLASLt timing (harness/device/cuda/gemm_direct.c, zb_cuda_gemm_direct_time in
 * cuda_backend.h), which uses the same mapping but none of the cache. */
#ifndef ZB_CUBLASLT_MAP_H
#define ZB_CUBLASLT_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One column-major operand as cuBLASLt sees it. */
typedef struct zb_lt_operand {
    const void *ptr;
    bool trans;    /* Lt's op on it */
    uint64_t rows; /* as stored */
    uint64_t cols;
    int64_t ld;
} zb_lt_operand;

typedef struct zb_lt_gemm {
    uint64_t m, n, k; /* Lt's problem: D[m,n] = op(A)[m,k] op(B)[k,n] */
    zb_lt_operand a;  /* = the caller's B */
    zb_lt_operand b;  /* = the caller's A */
    zb_lt_operand c;  /* = the caller's C (also D, in place) */
    zb_dtype dtype;   /* of A and B */
    zb_dtype c_dtype; /* of C and D: dtype, or fp32 when the desc's c_f32 */
} zb_lt_gemm;

/* Maps a row-major GEMM; ZB_ERR_INVALID, naming the shape, when a dimension
 * is not positive, a stride is smaller than its row, or a pointer is NULL. */
zb_status zb_lt_map_gemm(const zb_gemm_desc *g, zb_lt_gemm *out);

/* "bf16 gemm m=64 n=96 k=32 lda=32 ldb=32 ldc=96 trans_a=0 trans_b=1";
 * with c_f32 and bf16 inputs "bf16->f32 gemm m=...". */
void zb_gemm_shape_text(const zb_gemm_desc *g, char *buf, size_t n);

/* The largest power of two dividing the address, capped at 256 (cuBLASLt's
 * default minimum alignment); 256 for NULL. */
uint32_t zb_ptr_alignment(const void *p);

typedef struct zb_gemm_key {
    int64_t m, n, k, lda, ldb, ldc;
    int32_t trans_a, trans_b, dtype, c_f32;
    uint32_t align_a, align_b, align_c;
} zb_gemm_key;

void zb_gemm_key_of(const zb_gemm_desc *g, zb_gemm_key *out);
bool zb_gemm_key_equal(const zb_gemm_key *x, const zb_gemm_key *y);
uint64_t zb_gemm_key_hash(const zb_gemm_key *k);

typedef struct zb_gemm_cache_slot {
    bool used;
    zb_gemm_key key;
    void *value;
} zb_gemm_cache_slot;

typedef struct zb_gemm_cache {
    zb_gemm_cache_slot *slots;
    size_t capacity; /* a power of two, or 0 */
    size_t count;
    uint64_t hits, misses;
    void (*free_value)(void *ctx, void *value); /* may be NULL */
    void *free_ctx;
} zb_gemm_cache;

void zb_gemm_cache_init(zb_gemm_cache *c, void (*free_value)(void *ctx, void *value),
                        void *free_ctx);
/* Frees every value through free_value, then the table. */
void zb_gemm_cache_destroy(zb_gemm_cache *c);
/* The value cached for `key`, or NULL; counts a hit or a miss. */
void *zb_gemm_cache_find(zb_gemm_cache *c, const zb_gemm_key *key);
/* Caches `value` (non-NULL) for a key not yet present; ZB_ERR_INVALID when
 * present, ZB_ERR_NOMEM when the table cannot grow (the value is not taken). */
zb_status zb_gemm_cache_insert(zb_gemm_cache *c, const zb_gemm_key *key, void *value);

/* ---- the direct cuBLASLt baseline -------------------------------------------- */

/* Checks a direct timing's counts and maps g (zb_lt_map_gemm):
 * ZB_ERR_INVALID, naming the shape, when warmup < 0, iters < 1, or the
 * mapping refuses g. */
zb_status zb_gemm_direct_prepare(const zb_gemm_desc *g, int64_t warmup, int64_t iters,
                                 zb_lt_gemm *out);

/* Seconds per GEMM from cudaEventElapsedTime's milliseconds over `iters`
 * back-to-back GEMMs. ZB_ERR_INTERNAL, naming `shape`, when elapsed_ms is
 * not a positive finite number (no GPU work takes no time); ZB_ERR_INVALID
 * when iters < 1. *seconds is 0 on failure. */
zb_status zb_gemm_direct_seconds(double elapsed_ms, int64_t iters, const char *shape,
                                 double *seconds);

#ifdef __cplusplus
}
#endif
#endif
