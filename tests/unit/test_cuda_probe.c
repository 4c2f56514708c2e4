/* The no-GPU paths of the CUDA backend: zb_cuda_probe answers
 * ZB_ERR_UNSUPPORTED with one line (naming why: no GPU/driver, or a build
 * without CUDA), zb_device_create("cuda") fails cleanly with a message and
 * no device, and the CUDA-only queries refuse a CPU device. Where a GPU is
 * present (ci/gpu-check runs the unit tests too) it checks the success path
 * instead: a count >= 1, a description, a device that creates and destroys. */
#include <string.h>

#include "cuda_backend.h"
#include "backend_select.h"
#include "device.h"
#include "device_cpu.h"
#include "zb_test.h"

static int one_line(const char *s) { return s[0] != '\0' && strchr(s, '\n') == NULL; }

static void test_no_gpu(void) {
    int n = -1;
    char why[256];
    memset(why, 'x', sizeof why);
    zb_status st = zb_cuda_probe(&n, why, sizeof why);
    ZB_CHECK(st == ZB_ERR_UNSUPPORTED);
    ZB_CHECK(n == 0);
    ZB_CHECK_MSG(one_line(why), "probe reason is not one line: '%s'", why);
    ZB_CHECK_MSG(one_line(zb_error_message()), "message: '%s'", zb_error_message());
#ifdef ZB_HAVE_CUDA
    ZB_CHECK_MSG(strstr(why, "no usable GPU or driver was found (cudaGetDeviceCount") != NULL,
                 "reason: '%s'", why);
#else
    ZB_CHECK_MSG(strstr(why, "built without CUDA (-DZB_WITH_CUDA=OFF)") != NULL, "reason: '%s'",
                 why);
#endif
    /* A tiny buffer truncates, never overflows. */
    char tiny[8];
    ZB_CHECK(zb_cuda_probe(&n, tiny, sizeof tiny) == ZB_ERR_UNSUPPORTED);
    ZB_CHECK(strlen(tiny) == sizeof tiny - 1);
    ZB_CHECK(zb_cuda_probe(NULL, NULL, 0) == ZB_ERR_UNSUPPORTED);

    zb_device_config cfg = {3, 1, 1, 5.0, NULL};
    zb_device *dev = (zb_device *)&cfg; /* must be overwritten with NULL */
    st = zb_device_create("cuda", &cfg, &dev);
    const char *msg = zb_error_message();
#ifdef ZB_HAVE_CUDA
    ZB_CHECK(st == ZB_ERR_UNSUPPORTED);
    ZB_CHECK(dev == NULL);
    ZB_CHECK_MSG(one_line(msg) && strstr(msg, "rank 3") && strstr(msg, "--backend cuda") &&
                 strstr(msg, "no usable GPU or driver was found"), "create message: '%s'", msg);
#else
    ZB_CHECK(st == ZB_ERR_INVALID); /* "cuda" is not a backend of this build */
    ZB_CHECK_MSG(one_line(msg) && strstr(msg, "--backend cuda") && strstr(msg, "accepted: cpu)"),
                 "create message: '%s'", msg);
#endif
    dev = (zb_device *)&cfg;
    st = zb_device_cuda_create(&cfg, &dev);
    ZB_CHECK(st == ZB_ERR_UNSUPPORTED && dev == NULL);

    char name[64] = "unchanged";
    int drv = -1, rt = -1;
    double mem = -1.0;
    ZB_CHECK(zb_cuda_describe(0, name, sizeof name, &drv, &rt, &mem) != ZB_OK);
    ZB_CHECK(name[0] == '\0' && mem == 0.0);
#ifdef ZB_HAVE_CUDA
    ZB_CHECK_MSG(rt >= 12000, "runtime version %d", rt); /* answers without a GPU */
#endif
}

static void test_gpu_present(int n) {
    ZB_CHECK(n >= 1);
    char name[128];
    int drv = 0, rt = 0;
    double mem = 0;
    ZB_CHECK_OK(zb_cuda_describe(0, name, sizeof name, &drv, &rt, &mem));
    ZB_CHECK(name[0] != '\0' && drv > 0 && rt > 0 && mem > 1e9);
    ZB_CHECK(zb_cuda_describe(n, name, sizeof name, NULL, NULL, NULL) == ZB_ERR_INVALID);
    zb_device_config cfg = {0, 0, 1, 30.0, NULL};
    zb_device *dev = NULL;
    ZB_CHECK_OK(zb_device_create("cuda", &cfg, &dev));
    if (dev) {
        ZB_CHECK(strcmp(dev->ops->name, "cuda") == 0);
        zb_cuda_meminfo mi;
        ZB_CHECK_OK(zb_device_cuda_meminfo(dev, &mi));
        ZB_CHECK(mi.total_bytes > 0 && mi.used_at_create_bytes > 0);
        zb_dev_destroy(dev);
    }
}

/* Whatever the build, the CUDA query refuses a CPU device. */
static void test_meminfo_on_cpu(void) {
    zb_device_config cfg = {0, 0, 1, 5.0, NULL};
    zb_device *dev = NULL;
    ZB_CHECK_OK(zb_device_cpu_create(&cfg, &dev));
    zb_cuda_meminfo mi;
    zb_status st = zb_device_cuda_meminfo(dev, &mi);
#ifdef ZB_HAVE_CUDA
    ZB_CHECK(st == ZB_ERR_INVALID);
#else
    ZB_CHECK(st == ZB_ERR_UNSUPPORTED);
#endif
    ZB_CHECK(mi.total_bytes == 0 || st == ZB_ERR_UNSUPPORTED);
    zb_dev_destroy(dev);
}

int main(void) {
    int n = 0;
    char why[256];
    if (zb_cuda_probe(&n, why, sizeof why) == ZB_OK) {
        test_gpu_present(n);
    } else {
        test_no_gpu();
    }
    test_meminfo_on_cpu();
    /* An unknown backend still names what is accepted. */
    zb_device_config cfg = {0, 0, 1, 5.0, NULL};
    zb_device *dev = NULL;
    ZB_CHECK(zb_device_create("tpu", &cfg, &dev) == ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "accepted: cpu") != NULL);
    return zb_test_finish("test_cuda_probe");
}
