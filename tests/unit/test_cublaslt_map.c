/* The plain-C half of the cuBLASLt GEMM (harness/device/cuda/cublaslt_map.h):
 *   - the row-major -> column-major mapping, checked by running the mapped
 *     column-major problem through a naive column-major GEMM (reading each
 *     operand only inside its declared rows x cols layout) and comparing
 *     with the row-major definition, for all four transposes, padded
 *     strides and odd shapes, on random data;
 *   - the argument checks (messages name the shape);
 *   - the dtypes: A/B in dtype, C in dtype or, with c_f32, fp32 (the
 *     mapped c_dtype and the shape text "bf16->f32 gemm ...");
 *   - pointer alignment classes, the cache key, and the algorithm cache
 *     (growth, hits/misses, duplicates, values freed at destroy). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cublaslt_map.h"
#include "zb_test.h"

static double urand(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return ((double)((*s >> 8) & 0xffff) / 65536.0) * 2.0 - 1.0;
}

/* Row-major definition: C[M,N] = alpha op(A) op(B) + beta C. */
static void ref_rowmajor(const zb_gemm_desc *g, const double *A, const double *B, double *C) {
    for (int64_t i = 0; i < g->m; i++) {
        for (int64_t j = 0; j < g->n; j++) {
            double acc = 0.0;
            for (int64_t p = 0; p < g->k; p++) {
                double a = g->trans_a ? A[p * g->lda + i] : A[i * g->lda + p];
                double b = g->trans_b ? B[j * g->ldb + p] : B[p * g->ldb + j];
                acc += a * b;
            }
            C[i * g->ldc + j] = g->alpha * acc + g->beta * C[i * g->ldc + j];
        }
    }
}

static int out_of_layout; /* operand reads outside their declared layout */

static double at(const zb_lt_operand *o, uint64_t r, uint64_t c) {
    if (r >= o->rows || c >= o->cols) out_of_layout++;
    return ((const double *)o->ptr)[c * (uint64_t)o->ld + r];
}

/* Column-major D[m,n] = alpha op(A)[m,k] op(B)[k,n] + beta C, as cuBLASLt. */
static void lt_colmajor(const zb_lt_gemm *l, double alpha, double beta) {
    double *C = (double *)l->c.ptr;
    for (uint64_t i = 0; i < l->m; i++) {
        for (uint64_t j = 0; j < l->n; j++) {
            double acc = 0.0;
            for (uint64_t p = 0; p < l->k; p++) {
                double a = l->a.trans ? at(&l->a, p, i) : at(&l->a, i, p);
                double b = l->b.trans ? at(&l->b, j, p) : at(&l->b, p, j);
                acc += a * b;
            }
            if (i >= l->c.rows || j >= l->c.cols) out_of_layout++;
            C[j * (uint64_t)l->c.ld + i] = alpha * acc + beta * C[j * (uint64_t)l->c.ld + i];
        }
    }
}

static void check_mapping(int64_t m, int64_t n, int64_t k, bool ta, bool tb, int pad, unsigned seed) {
    zb_gemm_desc g;
    memset(&g, 0, sizeof g);
    g.trans_a = ta;
    g.trans_b = tb;
    g.m = m;
    g.n = n;
    g.k = k;
    g.alpha = 0.75f;
    g.beta = -0.5f;
    g.lda = (ta ? m : k) + pad;
    g.ldb = (tb ? k : n) + pad;
    g.ldc = n + pad;
    g.dtype = ZB_DTYPE_F32;
    size_t na = (size_t)((ta ? k : m) * g.lda), nb = (size_t)((tb ? n : k) * g.ldb);
    size_t nc = (size_t)(m * g.ldc);
    double *A = (double *)malloc(na * sizeof *A), *B = (double *)malloc(nb * sizeof *B);
    double *C1 = (double *)malloc(nc * sizeof *C1), *C2 = (double *)malloc(nc * sizeof *C2);
    for (size_t i = 0; i < na; i++) A[i] = urand(&seed);
    for (size_t i = 0; i < nb; i++) B[i] = urand(&seed);
    for (size_t i = 0; i < nc; i++) C1[i] = C2[i] = urand(&seed);
    g.a = A;
    g.b = B;
    g.c = C2;
    ref_rowmajor(&g, A, B, C1);
    zb_lt_gemm l;
    ZB_CHECK_OK(zb_lt_map_gemm(&g, &l));
    /* The layouts are valid column-major descriptions of the operands. */
    ZB_CHECK(l.m == (uint64_t)n && l.n == (uint64_t)m && l.k == (uint64_t)k);
    ZB_CHECK((l.a.trans ? l.a.cols : l.a.rows) == l.m && (l.a.trans ? l.a.rows : l.a.cols) == l.k);
    ZB_CHECK((l.b.trans ? l.b.cols : l.b.rows) == l.k && (l.b.trans ? l.b.rows : l.b.cols) == l.n);
    ZB_CHECK(l.c.rows == l.m && l.c.cols == l.n && !l.c.trans);
    ZB_CHECK((uint64_t)l.a.ld >= l.a.rows && (uint64_t)l.b.ld >= l.b.rows &&
             (uint64_t)l.c.ld >= l.c.rows);
    ZB_CHECK(l.a.ptr == B && l.b.ptr == A && l.c.ptr == C2 && l.dtype == ZB_DTYPE_F32 &&
             l.c_dtype == ZB_DTYPE_F32);
    out_of_layout = 0;
    lt_colmajor(&l, g.alpha, g.beta);
    ZB_CHECK_MSG(out_of_layout == 0, "%d reads outside the layouts (m=%lld n=%lld k=%lld ta=%d tb=%d)",
                 out_of_layout, (long long)m, (long long)n, (long long)k, ta, tb);
    double worst = 0.0;
    for (size_t i = 0; i < nc; i++) worst = fmax(worst, fabs(C1[i] - C2[i]));
    ZB_CHECK_MSG(worst < 1e-12, "mapped GEMM differs by %g (m=%lld n=%lld k=%lld ta=%d tb=%d pad=%d)",
                 worst, (long long)m, (long long)n, (long long)k, ta, tb, pad);
    free(A);
    free(B);
    free(C1);
    free(C2);
}

static void test_mapping(void) {
    static const int64_t shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {37, 53, 29}, {64, 16, 96}, {2, 130, 1}};
    unsigned seed = 7;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        for (int t = 0; t < 4; t++) {
            for (int pad = 0; pad <= 3; pad += 3) {
                check_mapping(shapes[s][0], shapes[s][1], shapes[s][2], t & 1, (t >> 1) & 1, pad,
                              seed++);
            }
        }
    }
}

static void test_bad_arguments(void) {
    float x[64];
    zb_gemm_desc g = {false, false, 4, 4, 4, 1.0f, 0.0f, x, 4, x, 4, x, 4, ZB_DTYPE_BF16};
    zb_lt_gemm l;
    ZB_CHECK_OK(zb_lt_map_gemm(&g, &l));
    ZB_CHECK(l.dtype == ZB_DTYPE_BF16 && l.c_dtype == ZB_DTYPE_BF16);
    g.k = 0;
    ZB_CHECK(zb_lt_map_gemm(&g, &l) == ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "bf16 gemm m=4 n=4 k=0") != NULL);
    g.k = 4;
    g.lda = 3;
    ZB_CHECK(zb_lt_map_gemm(&g, &l) == ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "lda=3") != NULL);
    g.lda = 4;
    g.trans_b = true;
    g.n = 8; /* B stored [N,K] = [8,4]: ldb 4 is enough; C needs ldc >= 8 */
    ZB_CHECK(zb_lt_map_gemm(&g, &l) == ZB_ERR_INVALID);
    g.ldc = 8;
    ZB_CHECK_OK(zb_lt_map_gemm(&g, &l));
    g.c = NULL;
    ZB_CHECK(zb_lt_map_gemm(&g, &l) == ZB_ERR_INVALID);
    g.c = x;
    g.dtype = ZB_DTYPE_COUNT;
    ZB_CHECK(zb_lt_map_gemm(&g, &l) == ZB_ERR_INVALID);
}

/* c_f32: A and B stay in dtype, C (and D) is fp32; the shape text says so. */
static void test_c_f32(void) {
    float x[64];
    char text[192];
    zb_gemm_desc g = {false, true, 4, 8, 4, 1.0f, 1.0f, x, 4, x, 4, x, 8, ZB_DTYPE_BF16, true};
    zb_lt_gemm l;
    ZB_CHECK_OK(zb_lt_map_gemm(&g, &l));
    ZB_CHECK(l.dtype == ZB_DTYPE_BF16 && l.c_dtype == ZB_DTYPE_F32);
    zb_gemm_shape_text(&g, text, sizeof text);
    ZB_CHECK_MSG(!strcmp(text, "bf16->f32 gemm m=4 n=8 k=4 lda=4 ldb=4 ldc=8 trans_a=0 trans_b=1"),
                 "'%s'", text);
    g.k = 0; /* refusals name the mixed shape */
    ZB_CHECK(zb_lt_map_gemm(&g, &l) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(strstr(zb_error_message(), "bf16->f32 gemm m=4 n=8 k=0") != NULL, "'%s'",
                 zb_error_message());
    g.k = 4;
    g.c_f32 = false;
    ZB_CHECK_OK(zb_lt_map_gemm(&g, &l));
    ZB_CHECK(l.c_dtype == ZB_DTYPE_BF16);
    zb_gemm_shape_text(&g, text, sizeof text);
    ZB_CHECK_MSG(!strncmp(text, "bf16 gemm m=4", 13), "'%s'", text);
    /* fp32 inputs: c_f32 changes nothing but the flag */
    g.dtype = ZB_DTYPE_F32;
    g.c_f32 = true;
    ZB_CHECK_OK(zb_lt_map_gemm(&g, &l));
    ZB_CHECK(l.dtype == ZB_DTYPE_F32 && l.c_dtype == ZB_DTYPE_F32);
    zb_gemm_shape_text(&g, text, sizeof text);
    ZB_CHECK_MSG(!strncmp(text, "float gemm m=4", 14), "'%s'", text);
    /* the key tells c_f32 apart: a bf16 C and an fp32 C need two plans */
    zb_gemm_key k1, k2;
    g.dtype = ZB_DTYPE_BF16;
    zb_gemm_key_of(&g, &k1);
    g.c_f32 = false;
    zb_gemm_key_of(&g, &k2);
    ZB_CHECK(k1.c_f32 == 1 && k2.c_f32 == 0);
    ZB_CHECK(!zb_gemm_key_equal(&k1, &k2) && zb_gemm_key_hash(&k1) != zb_gemm_key_hash(&k2));
    /* ... but behind fp32 inputs c_f32 changes nothing: one plan */
    g.dtype = ZB_DTYPE_F32;
    zb_gemm_key_of(&g, &k1);
    g.c_f32 = true;
    zb_gemm_key_of(&g, &k2);
    ZB_CHECK(zb_gemm_key_equal(&k1, &k2) && zb_gemm_key_hash(&k1) == zb_gemm_key_hash(&k2));
}

static void test_alignment_and_key(void) {
    ZB_CHECK(zb_ptr_alignment(NULL) == 256);
    ZB_CHECK(zb_ptr_alignment((const void *)(uintptr_t)0x1000) == 256);
    ZB_CHECK(zb_ptr_alignment((const void *)(uintptr_t)0x1080) == 128);
    ZB_CHECK(zb_ptr_alignment((const void *)(uintptr_t)0x1002) == 2);
    ZB_CHECK(zb_ptr_alignment((const void *)(uintptr_t)0x1001) == 1);
    char buf[8];
    zb_gemm_desc g = {false, true, 8, 16, 32, 1.0f, 0.0f, (void *)(uintptr_t)0x10000, 32,
                      (void *)(uintptr_t)0x20000, 32, buf, 16, ZB_DTYPE_F32};
    g.c = (void *)(uintptr_t)0x30004;
    zb_gemm_key k1, k2;
    zb_gemm_key_of(&g, &k1);
    ZB_CHECK(k1.align_a == 256 && k1.align_b == 256 && k1.align_c == 4 && k1.trans_b == 1);
    zb_gemm_key_of(&g, &k2);
    ZB_CHECK(zb_gemm_key_equal(&k1, &k2) && zb_gemm_key_hash(&k1) == zb_gemm_key_hash(&k2));
    /* Changing any one field gives a different key. */
    for (int f = 0; f < 13; f++) {
        k2 = k1;
        switch (f) {
        case 0: k2.m++; break;
        case 1: k2.n++; break;
        case 2: k2.k++; break;
        case 3: k2.lda++; break;
        case 4: k2.ldb++; break;
        case 5: k2.ldc++; break;
        case 6: k2.trans_a ^= 1; break;
        case 7: k2.trans_b ^= 1; break;
        case 8: k2.dtype ^= 1; break;
        case 9: k2.align_a = 2; break;
        case 10: k2.align_b = 2; break;
        case 11: k2.c_f32 ^= 1; break;
        default: k2.align_c = 2; break;
        }
        ZB_CHECK_MSG(!zb_gemm_key_equal(&k1, &k2), "field %d ignored by the key", f);
        ZB_CHECK_MSG(zb_gemm_key_hash(&k1) != zb_gemm_key_hash(&k2), "field %d not hashed", f);
    }
}

static int n_freed;
static void count_free(void *ctx, void *value) {
    (void)ctx;
    n_freed++;
    free(value);
}

static void test_cache(void) {
    zb_gemm_cache c;
    zb_gemm_cache_init(&c, count_free, NULL);
    zb_gemm_key key;
    memset(&key, 0, sizeof key);
    ZB_CHECK(zb_gemm_cache_find(&c, &key) == NULL); /* empty table: a miss */
    const int n = 1000;
    for (int i = 0; i < n; i++) {
        key.m = i % 37;
        key.n = i / 37;
        key.k = 64;
        key.trans_a = i & 1;
        int *v = (int *)malloc(sizeof *v);
        *v = i;
        ZB_CHECK_OK(zb_gemm_cache_insert(&c, &key, v));
    }
    ZB_CHECK(c.count == (size_t)n && c.capacity * 3 >= c.count * 4);
    int found = 0;
    for (int i = 0; i < n; i++) {
        key.m = i % 37;
        key.n = i / 37;
        key.trans_a = i & 1;
        int *v = (int *)zb_gemm_cache_find(&c, &key);
        found += v && *v == i;
    }
    ZB_CHECK(found == n);
    key.k = 65; /* absent */
    ZB_CHECK(zb_gemm_cache_find(&c, &key) == NULL);
    ZB_CHECK(c.hits == (uint64_t)n && c.misses == 2);
    key.k = 64;
    key.m = 0;
    key.n = 0;
    key.trans_a = 0;
    int dummy = 0;
    ZB_CHECK(zb_gemm_cache_insert(&c, &key, &dummy) == ZB_ERR_INVALID); /* present */
    ZB_CHECK(zb_gemm_cache_insert(&c, &key, NULL) == ZB_ERR_INVALID);
    n_freed = 0;
    zb_gemm_cache_destroy(&c);
    ZB_CHECK(n_freed == n && c.count == 0 && c.slots == NULL);
}

int main(void) {
    test_mapping();
    test_bad_arguments();
    test_c_f32();
    test_alignment_and_key();
    test_cache();
    return zb_test_finish("test_cublaslt_map");
}
