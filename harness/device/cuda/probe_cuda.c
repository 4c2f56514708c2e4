/* Asking the CUDA runtime whether a GPU is usable (zb_cuda_probe) and what it
 * is (zb_cuda_describe, for the report's meta). Neither creates a context. */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "cuda_backend.h"
#include "cuda_check.h"

zb_status zb_cuda_probe(int *n_devices, char *why, size_t n) {
    if (n_devices) *n_devices = 0;
    if (why && n) why[0] = '\0';
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    char line[ZB_ERROR_MAX];
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(line, sizeof line, "no usable GPU or driver was found (cudaGetDeviceCount: %s)",
                 cudaGetErrorString(e));
    } else if (count < 1) {
        const char *visible = getenv("CUDA_VISIBLE_DEVICES");
        snprintf(line, sizeof line, "no usable GPU or driver was found (cudaGetDeviceCount found "
                 "no device; CUDA_VISIBLE_DEVICES=%s)", visible ? visible : "(unset)");
    } else {
        if (n_devices) *n_devices = count;
        return ZB_OK;
    }
    if (n_devices) *n_devices = 0;
    if (why && n) snprintf(why, n, "%s", line);
    return ZB_FAIL(ZB_ERR_UNSUPPORTED, "%s", line);
}

zb_status zb_cuda_describe(int device, char *name, size_t n, int *driver_version,
                           int *runtime_version, double *mem_bytes) {
    if (name && n) name[0] = '\0';
    if (driver_version) *driver_version = 0;
    if (runtime_version) *runtime_version = 0;
    if (mem_bytes) *mem_bytes = 0.0;
    int rt = 0, drv = 0;
    /* The versions answer even without a GPU (the driver's is 0 then). */
    ZB_CUDA_TRY(-1, cudaRuntimeGetVersion(&rt));
    ZB_CUDA_TRY(-1, cudaDriverGetVersion(&drv));
    if (runtime_version) *runtime_version = rt;
    if (driver_version) *driver_version = drv;
    int count = 0;
    char why[ZB_ERROR_MAX];
    ZB_TRY(zb_cuda_probe(&count, why, sizeof why));
    if (device < 0 || device >= count) {
        return ZB_FAIL(ZB_ERR_INVALID, "GPU %d asked for; %d visible", device, count);
    }
    struct cudaDeviceProp prop;
    ZB_CUDA_TRY(-1, cudaGetDeviceProperties(&prop, device));
    if (name && n) snprintf(name, n, "%s", prop.name);
    if (mem_bytes) *mem_bytes = (double)prop.totalGlobalMem;
    return ZB_OK;
}
