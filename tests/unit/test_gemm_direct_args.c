/* The plain-C half of gemm --compare-direct's cuBLASLt baseline, without a
 * GPU (the GPU half: tests/gpu/test_gemm_direct.c):
 *   - zb_gemm_direct_prepare: counts and shape refused naming the shape;
 *     a valid GEMM maps exactly as zb_lt_map_gemm maps it;
 *   - zb_gemm_direct_seconds: milliseconds over n GEMMs -> seconds per GEMM,
 *     refusing a zero, negative or non-finite elapsed time;
 *   - the registry entries' gemm_direct_name: the table's group title per
 *     backend (none for a backend not built);
 *   - zb_cuda_gemm_direct_time on a cpu device (CUDA builds): refused
 *     before any CUDA call (ZB_ERR_INVALID, "not a CUDA device"), *seconds
 *     0; the cpu baseline refuses a bf16 GEMM. */
#include <math.h>
#include <string.h>

#include "cublaslt_map.h"
#ifdef ZB_HAVE_CUDA
#include "cuda_backend.h"
#endif
#include "device.h"
#include "registry.h"
#include "device_cpu.h"
#include "zb_test.h"

static float buf[64];

static zb_gemm_desc valid_desc(void) {
    zb_gemm_desc g;
    memset(&g, 0, sizeof g);
    g.trans_b = true;
    g.m = 4;
    g.n = 3;
    g.k = 2;
    g.alpha = 1.0f;
    g.a = buf;
    g.lda = 2;
    g.b = buf + 16;
    g.ldb = 2;
    g.c = buf + 32;
    g.ldc = 3;
    g.dtype = ZB_DTYPE_BF16;
    return g;
}

static void test_prepare(void) {
    zb_gemm_desc g = valid_desc();
    zb_lt_gemm want, got;
    ZB_CHECK_OK(zb_lt_map_gemm(&g, &want));
    memset(&got, 0xab, sizeof got);
    ZB_CHECK_OK(zb_gemm_direct_prepare(&g, 0, 1, &got));
    ZB_CHECK(got.m == want.m && got.n == want.n && got.k == want.k && got.dtype == want.dtype);
    ZB_CHECK(got.a.ptr == g.b && got.b.ptr == g.a && got.c.ptr == g.c && got.a.trans &&
             !got.b.trans && got.a.ld == want.a.ld && got.b.ld == want.b.ld &&
             got.c.ld == want.c.ld && got.a.rows == want.a.rows && got.c.cols == want.c.cols);

    const int64_t bad[][2] = {{0, 0}, {-1, 5}, {3, -2}, {INT64_MIN, 1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ZB_CHECK(zb_gemm_direct_prepare(&g, bad[i][0], bad[i][1], &got) == ZB_ERR_INVALID);
        const char *msg = zb_error_message();
        ZB_CHECK_MSG(strstr(msg, "direct cuBLASLt") && strstr(msg, "bf16 gemm m=4 n=3 k=2") &&
                     strstr(msg, "iterations"), "'%s'", msg);
    }
    g.ldb = 1; /* < k = 2 with trans_b */
    ZB_CHECK(zb_gemm_direct_prepare(&g, 1, 1, &got) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(strstr(zb_error_message(), "m=4 n=3 k=2 lda=2 ldb=1"), "'%s'", zb_error_message());
    g = valid_desc();
    g.c = NULL;
    ZB_CHECK(zb_gemm_direct_prepare(&g, 1, 1, &got) == ZB_ERR_INVALID);
    g = valid_desc();
    g.k = 0;
    ZB_CHECK(zb_gemm_direct_prepare(&g, 1, 1, &got) == ZB_ERR_INVALID);
    /* an fp32 GEMM is named "float" (tests/gpu/test_gemm_direct.c looks for
     * this text on a GPU; its first run looked for "f32" and failed) */
    g = valid_desc();
    g.dtype = ZB_DTYPE_F32;
    ZB_CHECK(zb_gemm_direct_prepare(&g, 0, 0, &got) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(strstr(zb_error_message(), "float gemm m=4 n=3 k=2"), "'%s'", zb_error_message());
}

static void test_seconds(void) {
    double s = -1.0;
    ZB_CHECK_OK(zb_gemm_direct_seconds(10.0, 4, "shape", &s));
    ZB_CHECK(fabs(s - 2.5e-3) <= 1e-15);
    ZB_CHECK_OK(zb_gemm_direct_seconds(1e-3, 1, "shape", &s));
    ZB_CHECK(fabs(s - 1e-6) <= 1e-18);
    const double bad_ms[] = {0.0, -1.0, NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof bad_ms / sizeof bad_ms[0]; i++) {
        s = 1.0;
        ZB_CHECK(zb_gemm_direct_seconds(bad_ms[i], 3, "f32 gemm m=1", &s) == ZB_ERR_INTERNAL);
        ZB_CHECK(s == 0.0);
        ZB_CHECK_MSG(strstr(zb_error_message(), "f32 gemm m=1") &&
                     strstr(zb_error_message(), "cudaEventElapsedTime"), "'%s'", zb_error_message());
    }
    s = 1.0;
    ZB_CHECK(zb_gemm_direct_seconds(5.0, 0, "shape", &s) == ZB_ERR_INVALID && s == 0.0);
}

/* The baseline is a capability of the registry entries: named per backend,
 * absent where a backend has none. */
static void test_baseline(void) {
    const zb_device_backend *cpu = zb_device_backend_find("cpu");
    const zb_device_backend *cuda = zb_device_backend_find("cuda");
    ZB_CHECK(cpu && cpu->gemm_direct_time && cpu->gemm_direct_name &&
             !strcmp(cpu->gemm_direct_name, "direct BLAS"));
    ZB_CHECK(cuda != NULL);
    if (!cuda) return;
#ifdef ZB_HAVE_CUDA
    ZB_CHECK(cuda->gemm_direct_time && cuda->gemm_direct_name &&
             !strcmp(cuda->gemm_direct_name, "direct cuBLASLt"));
#else
    ZB_CHECK(cuda->not_built && !cuda->gemm_direct_time && !cuda->gemm_direct_name);
#endif
}

/* The cuda baseline refuses a cpu device before any CUDA call; the cpu
 * baseline refuses what it cannot time (bf16, no iterations). */
static void test_not_cuda(void) {
    zb_device_config cfg = {0, 0, 1, 10.0, NULL};
    zb_device *dev = NULL;
    ZB_CHECK_OK(zb_device_cpu_create(&cfg, &dev));
    if (!dev) return;
    zb_gemm_desc g = valid_desc();
    double s = 1.0;
    const zb_device_backend *cpu = zb_device_backend_find("cpu");
    ZB_CHECK(cpu->gemm_direct_time(dev, &g, 1, 2, &s) == ZB_ERR_INVALID && s == 0.0);
    ZB_CHECK_MSG(strstr(zb_error_message(), "direct BLAS") && strstr(zb_error_message(), "bf16"), "'%s'",
                 zb_error_message());
#ifdef ZB_HAVE_CUDA
    s = 1.0;
    zb_status st = zb_cuda_gemm_direct_time(dev, &g, 1, 2, &s);
    const char *msg = zb_error_message();
    ZB_CHECK_MSG(st == ZB_ERR_INVALID && strstr(msg, "not a CUDA device") && strstr(msg, "cpu"),
                 "status %d '%s'", (int)st, msg);
    /* Bad counts are refused first, naming the shape. */
    s = 1.0;
    ZB_CHECK(zb_cuda_gemm_direct_time(dev, &g, 0, 0, &s) == ZB_ERR_INVALID && s == 0.0);
    ZB_CHECK_MSG(strstr(zb_error_message(), "m=4 n=3 k=2"), "'%s'", zb_error_message());
#endif
    ZB_CHECK(s == 0.0);
    zb_dev_destroy(dev);
}

int main(void) {
    test_prepare();
    test_seconds();
    test_baseline();
    test_not_cuda();
    return zb_test_finish("test_gemm_direct_args");
}
