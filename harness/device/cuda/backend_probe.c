/* Is there a usable GPU? Built in every configuration, so main can ask
 * without #ifdefs: a CUDA build asks the CUDA runtime (harness/device/cuda/
 * probe_cuda.c); a build without CUDA answers ZB_ERR_UNSUPPORTED with one
 * line, and stubs the CUDA device's entry points (and the direct cuBLASLt
 * GEMM timing) the same way. */
#include <stdio.h>
#include <string.h>

#include "cuda_backend.h"

#ifdef ZB_HAVE_CUDA
#include "probe_cuda.h"
#endif

#define ZB_NO_CUDA_WHY "zerobench was built without CUDA (-DZB_WITH_CUDA=OFF)"

zb_status zb_cuda_probe(int *n_devices, char *why, size_t n) {
    if (n_devices) *n_devices = 0;
    if (why && n) why[0] = '\0';
#ifdef ZB_HAVE_CUDA
    return zb_cuda_probe_runtime(n_devices, why, n);
#else
    if (why && n) snprintf(why, n, "%s", ZB_NO_CUDA_WHY);
    return ZB_FAIL(ZB_ERR_UNSUPPORTED, "%s", ZB_NO_CUDA_WHY);
#endif
}

#ifndef ZB_HAVE_CUDA
zb_status zb_cuda_describe(int device, char *name, size_t n, int *driver_version,
                           int *runtime_version, double *mem_bytes) {
    if (name && n) name[0] = '\0';
    if (driver_version) *driver_version = 0;
    if (runtime_version) *runtime_version = 0;
    if (mem_bytes) *mem_bytes = 0.0;
    return ZB_FAIL(ZB_ERR_UNSUPPORTED, "%s", ZB_NO_CUDA_WHY);
}

zb_status zb_device_cuda_create(const zb_device_config *cfg, zb_device **out) {
    *out = NULL;
    return ZB_FAIL(ZB_ERR_UNSUPPORTED, "rank %d: --backend cuda: %s", cfg->rank, ZB_NO_CUDA_WHY);
}

zb_status zb_device_cuda_meminfo(zb_device *dev, zb_cuda_meminfo *out) {
    (void)dev;
    if (out) memset(out, 0, sizeof *out);
    return ZB_FAIL(ZB_ERR_UNSUPPORTED, "%s", ZB_NO_CUDA_WHY);
}

zb_status zb_cuda_gemm_direct_time(zb_device *dev, const zb_gemm_desc *g, int64_t warmup,
                                   int64_t iters, double *seconds) {
    (void)dev;
    (void)g;
    (void)warmup;
    (void)iters;
    if (seconds) *seconds = 0.0;
    return ZB_FAIL(ZB_ERR_UNSUPPORTED, "direct cuBLASLt: %s", ZB_NO_CUDA_WHY);
}
#endif
