/* The cuda backend's registry entry (device_backend.h): probe, create, the
 * CUDA kernel table, the GPU's hardware profile and meta, the CUPTI tracer
 * and its own losses, the pool's memory view and the direct cuBLASLt GEMM
 * baseline. Built without CUDA, this file alone is compiled, with
 * ZB_BACKEND_OFF saying why. */
#include "device_backend.h"

/* --backend auto tries cuda before cpu (1). */
#define CUDA_AUTO_PRIORITY 2

#ifdef ZB_BACKEND_OFF

const zb_device_backend zb_device_backend_cuda = ZB_DEVICE_BACKEND_OFF("cuda", ZB_BACKEND_OFF, CUDA_AUTO_PRIORITY);

#else

#include <stdio.h>
#include <string.h>

#include "cuda_backend.h"
#include "cupti_tracer.h"

static zb_status cuda_probe(char *why, size_t n) {
    int count = 0;
    ZB_TRY(zb_cuda_probe(&count, why, n));
    if (why && n) snprintf(why, n, "a usable GPU was found");
    return ZB_OK;
}

static zb_status cuda_count_devices(int *count, char *why, size_t n) { return zb_cuda_probe(count, why, n); }

/* The profile named after the GPU, for the profiles zerobench ships. */
static const char *cuda_default_hw(int local_rank) {
    char name[128] = "";
    int n = 0;
    char why[64];
    if (zb_cuda_probe(&n, why, sizeof why) != ZB_OK || n < 1) return NULL;
    if (zb_cuda_describe(local_rank % n, name, sizeof name, NULL, NULL, NULL) != ZB_OK) return NULL;
    if (strstr(name, "H200")) return "h200_sxm";
    if (strstr(name, "H100")) return "h100_sxm";
    if (strstr(name, "A100")) return "a100_sxm";
    if (strstr(name, "B200")) return "b200";
    return NULL;
}

static void cuda_meta(int local_rank, json_t *meta) {
    char name[128] = "";
    int driver = 0, runtime = 0, n = 0;
    double mem = 0;
    char why[64];
    if (zb_cuda_probe(&n, why, sizeof why) == ZB_OK && n > 0 &&
        zb_cuda_describe(local_rank % n, name, sizeof name, &driver, &runtime, &mem) == ZB_OK) {
        json_object_set_new(meta, "gpu_model", json_string(name));
        json_object_set_new(meta, "gpu_memory_bytes", json_real(mem));
        json_object_set_new(meta, "cuda_driver_version", json_integer(driver));
        json_object_set_new(meta, "cuda_runtime_version", json_integer(runtime));
    }
}

static zb_status cuda_tracer_start(zb_trace *t) { return zb_cupti_start(t, -1); }
static void cuda_tracer_flush(void) { (void)zb_cupti_flush(); }
static void cuda_tracer_finish(void) { (void)zb_cupti_stop(); }
static zb_status cuda_tracer_stats(zb_tracer_stats *out) {
    zb_cupti_stats s;
    ZB_TRY(zb_cupti_get_stats(&s));
    zb_cupti_tracer_stats(&s, out);
    snprintf(out->note, sizeof out->note, "%s", zb_cupti_clock_note());
    return ZB_OK;
}

static zb_status cuda_mem_view(zb_device *dev, zb_dev_mem_view *out) {
    memset(out, 0, sizeof *out);
    zb_cuda_meminfo mi;
    ZB_TRY(zb_device_cuda_meminfo(dev, &mi));
    out->pool_reserved_high_bytes = mi.pool_reserved_high_bytes;
    out->device_used_high_bytes = mi.used_high_bytes;
    out->library_bytes = mi.other_bytes;
    snprintf(out->device_id, sizeof out->device_id, "%s", mi.uuid);
    return ZB_OK;
}

const zb_device_backend zb_device_backend_cuda = {
    .name = "cuda",
    .probe = cuda_probe,
    .create = zb_device_cuda_create,
    .kernels = zb_kernels_cuda,
    .default_comm = "nccl",
    .default_param_dtype = ZB_DTYPE_BF16, /* mixed precision: bf16 params, fp32 master and AdamW */
    .auto_priority = CUDA_AUTO_PRIORITY,
    .default_hw = cuda_default_hw,
    .meta = cuda_meta,
    .tracer_start = cuda_tracer_start,
    .tracer_flush = cuda_tracer_flush,
    .tracer_finish = cuda_tracer_finish,
    .tracer_meta_key = "cupti_active",
    .tracer_stats = cuda_tracer_stats,
    .mem_view = cuda_mem_view,
    .gemm_direct_name = "direct cuBLASLt",
    .gemm_direct_time = zb_cuda_gemm_direct_time,
    .count_devices = cuda_count_devices,
};

#endif
