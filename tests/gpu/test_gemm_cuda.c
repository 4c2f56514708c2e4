/* cuBLASLt GEMM on the CUDA device against cblas (label gpu; exit 77 =
 * skipped when no GPU is usable). Fresh random inputs per case, in four
 * type configurations: fp32; bf16 inputs and output (fp32 accumulate);
 * bf16 inputs with an fp32 C (the desc's c_f32: mixed-precision weight
 * gradients); fp32 with c_f32 set (must change nothing). All four
 * transposes; odd shapes, padded strides and pointers off the 256-byte
 * alignment; beta 0 (C pre-filled with a sentinel, so every element must
 * be written) and beta != 0 (C read in its own type).
 * The reference is cblas_dgemm on the same inputs widened exactly to
 * double (bf16 inputs: the rounded values the GPU reads); the error is
 * max |C - ref| / max |ref|, at most 1e-5 for fp32, 1e-2 for a bf16 C, and
 * 1e-4 for an fp32 C behind bf16 inputs (tensor-core accumulation may
 * truncate rather than round its partial sums, so fp32 SIMT's 1e-5 is not
 * promised; a C rounded to bf16 by mistake would be off by ~1e-3).
 * Padding between rows of C must stay untouched. Also: the algorithm cache
 * misses once and then hits on a repeated GEMM, keeps a bf16 C and an
 * fp32 C (c_f32) apart, and a bad shape is refused naming the shape. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bf16.h"
#include "cublaslt_map.h"
#include "cuda_backend.h"
#include "backend_select.h"
#include "device.h"
#include "zb_test.h"
#include "dtype_access.h"

#define SKIP 77

static zb_device *dev;
static zb_stream *st;
static unsigned seed = 2024;

static float urand(void) {
    seed = seed * 1664525u + 1013904223u;
    return (float)((seed >> 8) & 0xffffff) / 16777216.0f * 2.0f - 1.0f;
}

typedef struct gcase {
    int m, n, k;
    bool ta, tb;
    int pad;    /* extra elements per row of A, B and C */
    int offset; /* elements added to every pointer (alignment) */
    float beta;
} gcase;

/* Fills a host matrix (rows x ld) with random values in dtype t, and the
 * same values as doubles. */
static void fill(void *h, double *ref, size_t n, zb_dtype t) {
    for (size_t i = 0; i < n; i++) {
        zb_dtype_store(h, i, t, urand());
        ref[i] = (double)zb_dtype_load(h, i, t);
    }
}

/* One case: A and B in t, C in t or (c_f32) fp32. */
static void run_case(const gcase *c, zb_dtype t, bool c_f32) {
    zb_dtype tc = c_f32 ? ZB_DTYPE_F32 : t;
    size_t e = zb_dtype_size(t), ec = zb_dtype_size(tc);
    int64_t lda = (c->ta ? c->m : c->k) + c->pad, ldb = (c->tb ? c->k : c->n) + c->pad;
    int64_t ldc = c->n + c->pad;
    size_t na = (size_t)((c->ta ? c->k : c->m) * lda), nb = (size_t)((c->tb ? c->n : c->k) * ldb);
    size_t nc = (size_t)(c->m * ldc);
    void *ha = malloc(na * e), *hb = malloc(nb * e), *hc = malloc(nc * ec);
    double *ra = (double *)malloc(na * sizeof(double)), *rb = (double *)malloc(nb * sizeof(double));
    double *rc = (double *)malloc(nc * sizeof(double));
    fill(ha, ra, na, t);
    fill(hb, rb, nb, t);
    fill(hc, rc, nc, tc);
    /* 1536 = 1.5 * 2^10 is exact in bf16 and far outside any |C| here: it
     * marks padding, and with beta 0 the whole of C, so an element left
     * unwritten is caught whether or not cuBLASLt reads C when beta is 0. */
    const float sentinel = 1536.0f;
    for (int i = 0; i < c->m; i++) {
        for (int64_t j = 0; j < ldc; j++) {
            size_t idx = (size_t)(i * ldc + j);
            float v = (j >= c->n || c->beta == 0.0f) ? sentinel : zb_dtype_load(hc, idx, tc);
            zb_dtype_store(hc, idx, tc, v);
            rc[idx] = (j >= c->n || c->beta == 0.0f) ? 0.0 : (double)zb_dtype_load(hc, idx, tc);
        }
    }
    char *da = NULL, *db = NULL, *dc = NULL;
    size_t off = (size_t)c->offset * e, offc = (size_t)c->offset * ec;
    ZB_CHECK_OK(zb_dev_alloc(dev, na * e + off, ZB_MEM_BENCH_BUFFER, (void **)&da));
    ZB_CHECK_OK(zb_dev_alloc(dev, nb * e + off, ZB_MEM_BENCH_BUFFER, (void **)&db));
    ZB_CHECK_OK(zb_dev_alloc(dev, nc * ec + offc, ZB_MEM_BENCH_BUFFER, (void **)&dc));
    if (!da || !db || !dc) return;
    ZB_CHECK_OK(dev->ops->memcpy_async(st, da + off, ha, na * e, NULL));
    ZB_CHECK_OK(dev->ops->memcpy_async(st, db + off, hb, nb * e, NULL));
    ZB_CHECK_OK(dev->ops->memcpy_async(st, dc + offc, hc, nc * ec, NULL));
    const float alpha = 1.25f;
    zb_gemm_desc g = {c->ta, c->tb, c->m, c->n, c->k, alpha, c->beta, da + off, lda, db + off, ldb,
                      dc + offc, ldc, t, c_f32};
    ZB_CHECK_OK(dev->ops->gemm(st, &g, NULL));
    ZB_CHECK_OK(dev->ops->memcpy_async(st, hc, dc + offc, nc * ec, NULL));
    ZB_CHECK_OK(dev->ops->stream_sync(st));

    /* Reference on the logical [M, N] block; beta 0 ignores C. */
    cblas_dgemm(CblasRowMajor, c->ta ? CblasTrans : CblasNoTrans, c->tb ? CblasTrans : CblasNoTrans,
                c->m, c->n, c->k, alpha, ra, (blasint)lda, rb, (blasint)ldb, c->beta, rc,
                (blasint)ldc);
    double worst = 0.0, scale = 0.0;
    size_t unwritten = 0, pad_touched = 0;
    for (int i = 0; i < c->m; i++) {
        for (int64_t j = 0; j < ldc; j++) {
            size_t idx = (size_t)(i * ldc + j);
            float v = zb_dtype_load(hc, idx, tc);
            if (j >= c->n) {
                pad_touched += v != sentinel;
                continue;
            }
            if (v == sentinel || !isfinite(v)) {
                unwritten++;
                continue;
            }
            worst = fmax(worst, fabs((double)v - rc[idx]));
            scale = fmax(scale, fabs(rc[idx]));
        }
    }
    double rel = scale > 0 ? worst / scale : worst;
    double tol = tc == ZB_DTYPE_BF16 ? 1e-2 : t == ZB_DTYPE_BF16 ? 1e-4 : 1e-5;
    char shape[192];
    zb_gemm_shape_text(&g, shape, sizeof shape);
    ZB_CHECK_MSG(unwritten == 0 && pad_touched == 0 && rel <= tol,
                 "%s pad=%d offset=%d beta=%g: rel err %.3g (tol %g), %zu unwritten, %zu "
                 "padding elements touched", shape, c->pad, c->offset, c->beta, rel, tol,
                 unwritten, pad_touched);
    zb_dev_free(dev, da);
    zb_dev_free(dev, db);
    zb_dev_free(dev, dc);
    free(ha);
    free(hb);
    free(hc);
    free(ra);
    free(rb);
    free(rc);
}

static void test_numerics(void) {
    static const gcase cases[] = {
        {128, 96, 64, false, false, 0, 0, 0.0f},  {128, 96, 64, true, false, 0, 0, 0.0f},
        {128, 96, 64, false, true, 0, 0, 0.0f},   {128, 96, 64, true, true, 0, 0, 0.0f},
        {37, 53, 29, false, false, 3, 0, 0.5f},   {37, 53, 29, true, true, 3, 0, 0.0f},
        {37, 53, 29, false, true, 1, 1, 0.0f},    {1, 1, 1, false, false, 0, 0, 0.0f},
        {256, 512, 384, false, true, 8, 0, -1.0f}, {64, 176, 64, false, true, 0, 8, 1.0f},
        {512, 64, 1024, true, false, 0, 2, 0.0f},
    };
    static const struct {
        zb_dtype t;
        bool c_f32;
    } types[] = {
        {ZB_DTYPE_F32, false}, {ZB_DTYPE_BF16, false}, {ZB_DTYPE_BF16, true}, {ZB_DTYPE_F32, true},
    };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            run_case(&cases[i], types[t].t, types[t].c_f32);
        }
    }
}

static void test_cache_and_errors(void) {
    void *x = NULL;
    ZB_CHECK_OK(zb_dev_alloc(dev, 1 << 16, ZB_MEM_BENCH_BUFFER, &x));
    if (!x) return;
    zb_gemm_desc g = {false, true, 16, 24, 32, 1.0f, 0.0f, x, 32, x, 32, (char *)x + 8192, 24,
                      ZB_DTYPE_F32};
    size_t entries[3] = {0, 0, 0};
    uint64_t hits[3] = {0, 0, 0}, misses[3] = {0, 0, 0};
    zb_device_cuda_gemm_cache_stats(dev, &entries[0], &hits[0], &misses[0]);
    ZB_CHECK_OK(dev->ops->gemm(st, &g, NULL)); /* a new key: a miss, then cached */
    zb_device_cuda_gemm_cache_stats(dev, &entries[1], &hits[1], &misses[1]);
    ZB_CHECK_OK(dev->ops->gemm(st, &g, NULL)); /* the same key: a hit */
    zb_device_cuda_gemm_cache_stats(dev, &entries[2], &hits[2], &misses[2]);
    ZB_CHECK_MSG(entries[1] == entries[0] + 1 && misses[1] == misses[0] + 1 && hits[1] == hits[0] &&
                 entries[2] == entries[1] && misses[2] == misses[1] && hits[2] == hits[1] + 1,
                 "cache: entries %zu %zu %zu, hits %llu %llu %llu, misses %llu %llu %llu",
                 entries[0], entries[1], entries[2], (unsigned long long)hits[0],
                 (unsigned long long)hits[1], (unsigned long long)hits[2],
                 (unsigned long long)misses[0], (unsigned long long)misses[1],
                 (unsigned long long)misses[2]);
    ZB_CHECK(entries[0] >= 20); /* the numerics cases' keys */

    /* the same bf16 shape with a bf16 C and with an fp32 C: two plans */
    zb_gemm_desc gb = g;
    gb.dtype = ZB_DTYPE_BF16;
    gb.m = 24; /* a shape no numerics case used */
    size_t e0 = 0, e1 = 0, e2 = 0;
    uint64_t m0 = 0, m1 = 0, m2 = 0;
    zb_device_cuda_gemm_cache_stats(dev, &e0, NULL, &m0);
    ZB_CHECK_OK(dev->ops->gemm(st, &gb, NULL));
    zb_device_cuda_gemm_cache_stats(dev, &e1, NULL, &m1);
    gb.c_f32 = true;
    ZB_CHECK_OK(dev->ops->gemm(st, &gb, NULL));
    zb_device_cuda_gemm_cache_stats(dev, &e2, NULL, &m2);
    ZB_CHECK_MSG(e1 == e0 + 1 && m1 == m0 + 1 && e2 == e1 + 1 && m2 == m1 + 1,
                 "c_f32 plans: entries %zu %zu %zu, misses %llu %llu %llu", e0, e1, e2,
                 (unsigned long long)m0, (unsigned long long)m1, (unsigned long long)m2);
    gb.lda = 8; /* refused, naming the mixed shape */
    ZB_CHECK(dev->ops->gemm(st, &gb, NULL) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(strstr(zb_error_message(), "bf16->f32 gemm m=24 n=24 k=32 lda=8"), "'%s'",
                 zb_error_message());
    zb_error_clear();

    g.lda = 8; /* < k = 32 */
    ZB_CHECK(dev->ops->gemm(st, &g, NULL) == ZB_ERR_INVALID);
    const char *msg = zb_error_message();
    ZB_CHECK_MSG(strstr(msg, "rank 0") && strstr(msg, "m=16 n=24 k=32 lda=8"), "'%s'", msg);
    ZB_CHECK_OK(dev->ops->stream_sync(st)); /* a refused GEMM leaves the stream healthy */
    zb_dev_free(dev, x);
}

int main(void) {
    int n = 0;
    char why[256];
    if (zb_cuda_probe(&n, why, sizeof why) != ZB_OK) {
        printf("test_gemm_cuda: skipped: %s\n", why);
        return SKIP;
    }
    zb_device_config cfg = {0, 0, 1, 60.0, NULL};
    ZB_CHECK_OK(zb_device_create("cuda", &cfg, &dev));
    if (!dev) return zb_test_finish("test_gemm_cuda");
    ZB_CHECK_OK(dev->ops->stream_create(dev, "gemm", &st));
    test_numerics();
    test_cache_and_errors();
    dev->ops->stream_destroy(st);
    zb_mem_stats ms;
    dev->ops->mem_stats(dev, &ms);
    ZB_CHECK(ms.live_total_bytes == 0 && ms.peak_bytes[ZB_MEM_WORKSPACE] == ((size_t)32 << 20));
    zb_dev_destroy(dev);
    return zb_test_finish("test_gemm_cuda");
}
