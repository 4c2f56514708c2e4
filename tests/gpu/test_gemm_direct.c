/* The direct cuBLASLt baseline of gemm --compare-direct
 * (zb_cuda_gemm_direct_time) against the harness's GEMM on the same inputs
 * (label gpu; exit 77 = skipped when no GPU is usable).
 *
 * Per case (fp32, bf16, and bf16 inputs with an fp32 C (c_f32); transposes,
 * padded strides, a pointer off the 256-byte alignment): A and B random,
 * uploaded once; the harness GEMM (dev->ops->gemm, beta 0) writes C1, the
 * direct call (1 warm-up, 3 timed) writes C2; C1 and C2 start as a
 * sentinel in every element, padding included. Checks: both match
 * cblas_dgemm on the same (rounded) inputs (max |C - ref| / max |ref| <=
 * 1e-5 fp32, 1e-2 bf16 C, 1e-4 fp32 C behind bf16 inputs: test_gemm_cuda.c
 * says why), they agree with each other within the same bound (the line
 * says whether they are bitwise equal: the same algorithm should give the
 * same bits), every element written, no
 * padding touched, the time positive and finite, the harness's memory
 * untouched by the direct call (it allocates its own workspace).
 * Then: bad counts and a bad stride are refused naming the shape; a timeout
 * of 1 µs makes the warm-up wait time out with a message naming the shape,
 * and the device's own streams stay healthy afterwards. */
#include <cblas.h>
#include <cuda_runtime_api.h>
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
static unsigned seed = 77;

static float urand(void) {
    seed = seed * 1664525u + 1013904223u;
    return (float)((seed >> 8) & 0xffffff) / 16777216.0f * 2.0f - 1.0f;
}

typedef struct dcase {
    int m, n, k;
    bool ta, tb;
    int pad;    /* extra elements per row */
    int offset; /* elements added to every pointer */
} dcase;

/* 1536 is exact in bf16 and far outside |C| here: marks unwritten output. */
static const float sentinel = 1536.0f;

/* Max |C - ref| / max |ref| over the logical block; counts unwritten
 * elements and touched padding. */
static double rel_err(const void *hc, const double *ref, const dcase *c, int64_t ldc, zb_dtype t,
                      size_t *unwritten, size_t *pad_touched) {
    double worst = 0.0, scale = 0.0;
    *unwritten = *pad_touched = 0;
    for (int i = 0; i < c->m; i++) {
        for (int64_t j = 0; j < ldc; j++) {
            size_t idx = (size_t)(i * ldc + j);
            float v = zb_dtype_load(hc, idx, t);
            if (j >= c->n) {
                *pad_touched += v != sentinel;
                continue;
            }
            if (v == sentinel || !isfinite(v)) {
                (*unwritten)++;
                continue;
            }
            worst = fmax(worst, fabs((double)v - ref[idx]));
            scale = fmax(scale, fabs(ref[idx]));
        }
    }
    return scale > 0 ? worst / scale : worst;
}

/* A and B in t, C in t or (c_f32) fp32. */
static void run_case(const dcase *c, zb_dtype t, bool c_f32) {
    zb_dtype tc = c_f32 ? ZB_DTYPE_F32 : t;
    size_t e = zb_dtype_size(t), ec = zb_dtype_size(tc);
    int64_t lda = (c->ta ? c->m : c->k) + c->pad, ldb = (c->tb ? c->k : c->n) + c->pad;
    int64_t ldc = c->n + c->pad;
    size_t na = (size_t)((c->ta ? c->k : c->m) * lda), nb = (size_t)((c->tb ? c->n : c->k) * ldb);
    size_t nc = (size_t)(c->m * ldc);
    void *ha = malloc(na * e), *hb = malloc(nb * e), *hc = malloc(nc * ec);
    void *h1 = malloc(nc * ec), *h2 = malloc(nc * ec);
    double *ra = (double *)malloc(na * sizeof(double)), *rb = (double *)malloc(nb * sizeof(double));
    double *ref = (double *)calloc(nc, sizeof(double));
    for (size_t i = 0; i < na; i++) {
        zb_dtype_store(ha, i, t, urand());
        ra[i] = zb_dtype_load(ha, i, t);
    }
    for (size_t i = 0; i < nb; i++) {
        zb_dtype_store(hb, i, t, urand());
        rb[i] = zb_dtype_load(hb, i, t);
    }
    for (size_t i = 0; i < nc; i++) zb_dtype_store(hc, i, tc, sentinel);
    char *da = NULL, *db = NULL, *dc1 = NULL, *dc2 = NULL;
    size_t off = (size_t)c->offset * e, offc = (size_t)c->offset * ec;
    ZB_CHECK_OK(zb_dev_alloc(dev, na * e + off, ZB_MEM_BENCH_BUFFER, (void **)&da));
    ZB_CHECK_OK(zb_dev_alloc(dev, nb * e + off, ZB_MEM_BENCH_BUFFER, (void **)&db));
    ZB_CHECK_OK(zb_dev_alloc(dev, nc * ec + offc, ZB_MEM_BENCH_BUFFER, (void **)&dc1));
    ZB_CHECK_OK(zb_dev_alloc(dev, nc * ec + offc, ZB_MEM_BENCH_BUFFER, (void **)&dc2));
    if (!da || !db || !dc1 || !dc2) return;
    ZB_CHECK_OK(dev->ops->memcpy_async(st, da + off, ha, na * e, NULL));
    ZB_CHECK_OK(dev->ops->memcpy_async(st, db + off, hb, nb * e, NULL));
    ZB_CHECK_OK(dev->ops->memcpy_async(st, dc1 + offc, hc, nc * ec, NULL));
    ZB_CHECK_OK(dev->ops->memcpy_async(st, dc2 + offc, hc, nc * ec, NULL));
    zb_gemm_desc g = {c->ta, c->tb, c->m, c->n, c->k, 1.0f, 0.0f, da + off, lda, db + off, ldb,
                      dc1 + offc, ldc, t, c_f32};
    ZB_CHECK_OK(dev->ops->gemm(st, &g, NULL));
    ZB_CHECK_OK(dev->ops->stream_sync(st)); /* nothing pending when the direct call starts */

    zb_mem_stats before, after;
    dev->ops->mem_stats(dev, &before);
    zb_gemm_desc g2 = g;
    g2.c = dc2 + offc;
    double sec = 0.0;
    zb_status s = zb_cuda_gemm_direct_time(dev, &g2, 1, 3, &sec);
    char shape[192];
    zb_gemm_shape_text(&g, shape, sizeof shape);
    ZB_CHECK_MSG(s == ZB_OK, "direct %s: %s", shape, zb_error_message());
    ZB_CHECK_MSG(sec > 0 && isfinite(sec) && sec < 1.0, "direct time %g s", sec);
    dev->ops->mem_stats(dev, &after);
    ZB_CHECK(after.live_total_bytes == before.live_total_bytes &&
             after.peak_total_bytes == before.peak_total_bytes);

    ZB_CHECK_OK(dev->ops->memcpy_async(st, h1, dc1 + offc, nc * ec, NULL));
    ZB_CHECK_OK(dev->ops->memcpy_async(st, h2, dc2 + offc, nc * ec, NULL));
    ZB_CHECK_OK(dev->ops->stream_sync(st));

    cblas_dgemm(CblasRowMajor, c->ta ? CblasTrans : CblasNoTrans, c->tb ? CblasTrans : CblasNoTrans,
                c->m, c->n, c->k, 1.0, ra, (blasint)lda, rb, (blasint)ldb, 0.0, ref, (blasint)ldc);
    double tol = tc == ZB_DTYPE_BF16 ? 1e-2 : t == ZB_DTYPE_BF16 ? 1e-4 : 1e-5;
    size_t unw1, pad1, unw2, pad2, unw12, pad12;
    double e1 = rel_err(h1, ref, c, ldc, tc, &unw1, &pad1);
    double e2 = rel_err(h2, ref, c, ldc, tc, &unw2, &pad2);
    /* Harness vs direct: C1 as the reference for C2. */
    double *c1d = (double *)calloc(nc, sizeof(double));
    size_t differ = 0;
    for (size_t i = 0; i < nc; i++) {
        c1d[i] = zb_dtype_load(h1, i, tc);
        differ += memcmp((char *)h1 + i * ec, (char *)h2 + i * ec, ec) != 0;
    }
    double e12 = rel_err(h2, c1d, c, ldc, tc, &unw12, &pad12);
    printf("%-9s m=%-4d n=%-4d k=%-4d ta=%d tb=%d pad=%d off=%d  harness %.2e  direct %.2e  "
           "direct-vs-harness %.2e (%zu of %zu elements differ bitwise)  direct %.2f us\n",
           c_f32 && t != ZB_DTYPE_F32 ? "bf16->f32" : zb_dtype_name(t), c->m, c->n, c->k, c->ta,
           c->tb, c->pad, c->offset, e1, e2, e12, differ, nc, sec * 1e6);
    ZB_CHECK_MSG(e1 <= tol && unw1 == 0 && pad1 == 0, "harness: rel err %.3g (tol %g), %zu unwritten, "
                 "%zu padding touched", e1, tol, unw1, pad1);
    ZB_CHECK_MSG(e2 <= tol && unw2 == 0 && pad2 == 0, "direct: rel err %.3g (tol %g), %zu unwritten, "
                 "%zu padding touched", e2, tol, unw2, pad2);
    ZB_CHECK_MSG(e12 <= tol, "direct vs harness: rel err %.3g (tol %g)", e12, tol);
    zb_dev_free(dev, da);
    zb_dev_free(dev, db);
    zb_dev_free(dev, dc1);
    zb_dev_free(dev, dc2);
    free(ha);
    free(hb);
    free(hc);
    free(h1);
    free(h2);
    free(ra);
    free(rb);
    free(ref);
    free(c1d);
}

static void test_agreement(void) {
    static const dcase cases[] = {
        {256, 384, 128, false, false, 0, 0}, {256, 384, 128, false, true, 0, 0},
        {128, 96, 64, true, true, 0, 0},     {37, 53, 29, false, true, 3, 0},
        {37, 53, 29, false, true, 1, 1},     {1024, 1024, 1024, false, true, 0, 0},
    };
    for (int t = 0; t < 3; t++) {
        zb_dtype dt = t ? ZB_DTYPE_BF16 : ZB_DTYPE_F32;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i], dt, t == 2);
    }
}

static void test_errors_and_timeout(void) {
    const int64_t n = 4096;
    size_t bytes = (size_t)(n * n) * sizeof(float);
    void *a = NULL, *b = NULL, *c = NULL;
    ZB_CHECK_OK(zb_dev_alloc(dev, bytes, ZB_MEM_BENCH_BUFFER, &a));
    ZB_CHECK_OK(zb_dev_alloc(dev, bytes, ZB_MEM_BENCH_BUFFER, &b));
    ZB_CHECK_OK(zb_dev_alloc(dev, bytes, ZB_MEM_BENCH_BUFFER, &c));
    if (!a || !b || !c) return;
    zb_gemm_desc g = {false, false, n, n, n, 1.0f, 0.0f, a, n, b, n, c, n, ZB_DTYPE_F32};
    double sec = 1.0;
    ZB_CHECK(zb_cuda_gemm_direct_time(dev, &g, 0, 0, &sec) == ZB_ERR_INVALID && sec == 0.0);
    ZB_CHECK_MSG(strstr(zb_error_message(), "float gemm m=4096 n=4096 k=4096"), "'%s'",
                 zb_error_message());
    zb_gemm_desc bad = g;
    bad.lda = 8;
    ZB_CHECK(zb_cuda_gemm_direct_time(dev, &bad, 1, 1, &sec) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(strstr(zb_error_message(), "lda=8"), "'%s'", zb_error_message());

    /* Four 4096^3 fp32 GEMMs (0.5 TFLOP) take well over 1 us: the warm-up
     * wait times out, naming the shape and what was waited for. */
    double saved = dev->cfg.timeout_s;
    dev->cfg.timeout_s = 1e-6;
    zb_status s = zb_cuda_gemm_direct_time(dev, &g, 4, 1, &sec);
    dev->cfg.timeout_s = saved;
    const char *msg = zb_error_message();
    ZB_CHECK_MSG(s == ZB_ERR_TIMEOUT && sec == 0.0 && strstr(msg, "rank 0") &&
                 strstr(msg, "direct cuBLASLt warm-up") && strstr(msg, "m=4096 n=4096 k=4096") &&
                 strstr(msg, "left allocated"), "status %d '%s'", (int)s, msg);
    printf("timeout: %s\n", msg);
    /* The timed-out GEMMs still run on the GPU: wait for them before the
     * buffers go back to the pool. */
    cudaError_t e = cudaDeviceSynchronize();
    ZB_CHECK_MSG(e == cudaSuccess, "cudaDeviceSynchronize: %s", cudaGetErrorString(e));
    /* The device's own stream is unaffected. */
    ZB_CHECK_OK(dev->ops->gemm(st, &g, NULL));
    ZB_CHECK_OK(dev->ops->stream_sync(st));
    /* And a direct call runs again afterwards. */
    ZB_CHECK_OK(zb_cuda_gemm_direct_time(dev, &g, 1, 2, &sec));
    ZB_CHECK(sec > 0);
    printf("f32 4096^3: direct %.1f us = %.1f TFLOP/s\n", sec * 1e6,
           2.0 * (double)n * (double)n * (double)n / sec / 1e12);
    zb_dev_free(dev, a);
    zb_dev_free(dev, b);
    zb_dev_free(dev, c);
}

int main(void) {
    int n = 0;
    char why[256];
    if (zb_cuda_probe(&n, why, sizeof why) != ZB_OK) {
        printf("test_gemm_direct: skipped: %s\n", why);
        return SKIP;
    }
    zb_device_config cfg = {0, 0, 1, 60.0, NULL};
    ZB_CHECK_OK(zb_device_create("cuda", &cfg, &dev));
    if (!dev) return zb_test_finish("test_gemm_direct");
    ZB_CHECK_OK(dev->ops->stream_create(dev, "gemm", &st));
    test_agreement();
    test_errors_and_timeout();
    dev->ops->stream_destroy(st);
    zb_dev_destroy(dev);
    return zb_test_finish("test_gemm_direct");
}
