/* The cuda backend's registry entry on a machine without a GPU (or, in a
 * build without CUDA, its "not built" entry), and backend resolution over
 * the registry:
 *   - not built: the entry names why in one line and offers nothing;
 *     creating the device fails naming the rank; --backend cuda is bad
 *     input with that reason; --backend auto picks cpu and says why;
 *   - built, no GPU: the probe answers ZB_ERR_UNSUPPORTED with one line
 *     (cudaGetDeviceCount's reason), creation fails cleanly with no
 *     device, auto picks cpu naming the reason;
 *   - a GPU present (ci/gpu-check runs the unit tests too): the probe
 *     succeeds, a device creates and destroys, auto picks cuda with nccl;
 *   - the memory view refuses a cpu device; an unknown backend names what
 *     is accepted; --comm nccl on cpu needs --backend cuda in every build. */
#include <string.h>

#include "backend_select.h"
#include "device.h"
#include "device_cpu.h"
#include "registry.h"
#include "zb_test.h"
#ifdef ZB_HAVE_CUDA
#include "cuda_backend.h"
#endif

static int one_line(const char *s) { return s[0] != '\0' && strchr(s, '\n') == NULL; }

static void check_auto_falls_to_cpu(const char *reason) {
    zb_backends b;
    ZB_CHECK_OK(zb_backends_resolve("auto", "auto", &b));
    ZB_CHECK(b.device && !strcmp(b.device->name, "cpu") && b.comm && !strcmp(b.comm->name, "mpi"));
    ZB_CHECK(b.auto_chosen);
    ZB_CHECK_MSG(strstr(b.note, "--backend auto chose cpu (") && strstr(b.note, reason), "note '%s'", b.note);
}

static void test_not_built(const zb_device_backend *cuda) {
    ZB_CHECK_MSG(one_line(cuda->not_built) &&
                 strstr(cuda->not_built, "built without CUDA (-DZB_WITH_CUDA=OFF)"), "'%s'", cuda->not_built);
    ZB_CHECK(!cuda->probe && !cuda->create && !cuda->kernels && !cuda->mem_view && !cuda->gemm_direct_time);
    zb_device_config cfg = {3, 1, 1, 5.0, NULL};
    zb_device *dev = (zb_device *)&cfg; /* must be overwritten with NULL */
    ZB_CHECK(zb_device_create("cuda", &cfg, &dev) == ZB_ERR_UNSUPPORTED);
    ZB_CHECK(dev == NULL);
    const char *msg = zb_error_message();
    ZB_CHECK_MSG(one_line(msg) && strstr(msg, "rank 3") && strstr(msg, "--backend cuda") &&
                 strstr(msg, "built without CUDA"), "create message: '%s'", msg);
    zb_backends b;
    ZB_CHECK(zb_backends_resolve("cuda", "auto", &b) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(strstr(zb_error_message(), "--backend cuda: zerobench was built without CUDA"), "'%s'",
                 zb_error_message());
    check_auto_falls_to_cpu("built without CUDA");
}

#ifdef ZB_HAVE_CUDA
static void test_no_gpu(const zb_device_backend *cuda) {
    int n = -1;
    char why[256];
    memset(why, 'x', sizeof why);
    zb_status st = cuda->probe(why, sizeof why);
    ZB_CHECK(st == ZB_ERR_UNSUPPORTED);
    ZB_CHECK_MSG(one_line(why), "probe reason is not one line: '%s'", why);
    ZB_CHECK_MSG(one_line(zb_error_message()), "message: '%s'", zb_error_message());
    ZB_CHECK_MSG(strstr(why, "no usable GPU or driver was found (cudaGetDeviceCount") != NULL,
                 "reason: '%s'", why);
    ZB_CHECK(zb_cuda_probe(&n, why, sizeof why) == ZB_ERR_UNSUPPORTED && n == 0);
    /* A tiny buffer truncates, never overflows. */
    char tiny[8];
    ZB_CHECK(zb_cuda_probe(&n, tiny, sizeof tiny) == ZB_ERR_UNSUPPORTED);
    ZB_CHECK(strlen(tiny) == sizeof tiny - 1);
    ZB_CHECK(zb_cuda_probe(NULL, NULL, 0) == ZB_ERR_UNSUPPORTED);

    zb_device_config cfg = {3, 1, 1, 5.0, NULL};
    zb_device *dev = (zb_device *)&cfg; /* must be overwritten with NULL */
    st = zb_device_create("cuda", &cfg, &dev);
    const char *msg = zb_error_message();
    ZB_CHECK(st == ZB_ERR_UNSUPPORTED);
    ZB_CHECK(dev == NULL);
    ZB_CHECK_MSG(one_line(msg) && strstr(msg, "rank 3") && strstr(msg, "--backend cuda") &&
                 strstr(msg, "no usable GPU or driver was found"), "create message: '%s'", msg);

    char name[64] = "unchanged";
    int drv = -1, rt = -1;
    double mem = -1.0;
    ZB_CHECK(zb_cuda_describe(0, name, sizeof name, &drv, &rt, &mem) != ZB_OK);
    ZB_CHECK(name[0] == '\0' && mem == 0.0);
    ZB_CHECK_MSG(rt >= 12000, "runtime version %d", rt); /* answers without a GPU */

    zb_backends b;
    ZB_CHECK(zb_backends_resolve("cuda", "auto", &b) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(strstr(zb_error_message(), "--backend cuda: no usable GPU or driver was found"), "'%s'",
                 zb_error_message());
    check_auto_falls_to_cpu("no usable GPU or driver was found");
    ZB_CHECK(cuda->default_hw(0) == NULL); /* no GPU: no profile */
}

static void test_gpu_present(const zb_device_backend *cuda) {
    char why[128];
    ZB_CHECK_OK(cuda->probe(why, sizeof why));
    ZB_CHECK(!strcmp(why, "a usable GPU was found"));
    int n = 0;
    ZB_CHECK_OK(zb_cuda_probe(&n, why, sizeof why));
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
        zb_dev_mem_view mv;
        ZB_CHECK_OK(cuda->mem_view(dev, &mv));
        zb_cuda_meminfo mi;
        ZB_CHECK_OK(zb_device_cuda_meminfo(dev, &mi));
        ZB_CHECK(mi.total_bytes > 0 && mi.used_at_create_bytes > 0);
        /* The GPU's identity, as nvidia-smi prints it, for ranks to compare. */
        ZB_CHECK(strncmp(mv.device_id, "GPU-", 4) == 0 && strlen(mv.device_id) == 40 &&
                 strcmp(mv.device_id, mi.uuid) == 0);
        zb_dev_destroy(dev);
    }
    zb_backends b;
    ZB_CHECK_OK(zb_backends_resolve("auto", "auto", &b));
    ZB_CHECK(b.device == cuda && b.comm && !strcmp(b.comm->name, "nccl"));
    ZB_CHECK_MSG(!strcmp(b.note, "--backend auto chose cuda (a usable GPU was found)"), "'%s'", b.note);
}
#endif

/* The cuda memory view refuses a CPU device; a build without it has none. */
static void test_mem_view_on_cpu(const zb_device_backend *cuda) {
    zb_device_config cfg = {0, 0, 1, 5.0, NULL};
    zb_device *dev = NULL;
    ZB_CHECK_OK(zb_device_cpu_create(&cfg, &dev));
    if (cuda->mem_view) {
        zb_dev_mem_view mv;
        ZB_CHECK(cuda->mem_view(dev, &mv) == ZB_ERR_INVALID);
        ZB_CHECK(mv.pool_reserved_high_bytes == 0 && mv.library_bytes == 0);
    } else {
        ZB_CHECK(cuda->not_built != NULL);
    }
    ZB_CHECK(zb_device_backend_find("cpu")->mem_view == NULL);
    zb_dev_destroy(dev);
}

int main(void) {
    const zb_device_backend *cuda = zb_device_backend_find("cuda");
    ZB_CHECK(cuda != NULL);
    if (!cuda) return zb_test_finish("test_cuda_probe");
    if (cuda->not_built) {
        test_not_built(cuda);
    } else {
#ifdef ZB_HAVE_CUDA
        char why[256];
        if (cuda->probe(why, sizeof why) == ZB_OK) test_gpu_present(cuda);
        else test_no_gpu(cuda);
#else
        ZB_CHECK_MSG(0, "the cuda entry is built but ZB_HAVE_CUDA is not defined");
#endif
    }
    test_mem_view_on_cpu(cuda);
    /* An unknown backend still names what is accepted (the built ones). */
    zb_device_config cfg = {0, 0, 1, 5.0, NULL};
    zb_device *dev = NULL;
    ZB_CHECK(zb_device_create("tpu", &cfg, &dev) == ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "accepted: cpu") != NULL);
    /* The nccl comm runs on cuda devices only, whatever this build has. */
    zb_backends b;
    ZB_CHECK(zb_backends_resolve("cpu", "nccl", &b) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(strstr(zb_error_message(), "--comm nccl: needs --backend cuda (this run uses --backend cpu)"),
                 "'%s'", zb_error_message());
    return zb_test_finish("test_cuda_probe");
}
