/* Backend choice and construction (see backend_select.h). */
#include "backend_select.h"

#include <stdio.h>
#include <string.h>

#include "comm_mpi.h"
#include "comm_nccl.h"
#include "cuda_backend.h"
#include "cupti_tracer.h"
#include "device_cpu.h"
#include "nccl_boot.h"

zb_status zb_backends_resolve(const char *backend_flag, const char *comm_flag, zb_backends *out) {
    memset(out, 0, sizeof *out);
    char why[256] = "";
    int n_gpus = 0;
    bool want_auto = !strcmp(backend_flag, "auto");
    if (want_auto || !strcmp(backend_flag, "cuda")) {
        bool usable = zb_cuda_probe(&n_gpus, why, sizeof why) == ZB_OK && n_gpus > 0;
        if (!usable && !want_auto) return ZB_FAIL(ZB_ERR_INVALID, "--backend cuda: %s", why);
        snprintf(out->device, sizeof out->device, "%s", usable ? "cuda" : "cpu");
        out->auto_chosen = want_auto;
        if (want_auto) {
            snprintf(out->note, sizeof out->note, "--backend auto chose %s (%s)", out->device,
                     usable ? "a usable GPU was found" : why);
        }
    } else {
        snprintf(out->device, sizeof out->device, "%s", backend_flag);
    }
    bool cuda = !strcmp(out->device, "cuda");
    if (!strcmp(comm_flag, "auto")) {
        snprintf(out->comm, sizeof out->comm, "%s", cuda ? "nccl" : "mpi");
    } else {
        snprintf(out->comm, sizeof out->comm, "%s", comm_flag);
    }
    if (!strcmp(out->comm, "nccl") && !cuda) {
        return ZB_FAIL(ZB_ERR_INVALID, "--comm nccl: needs --backend cuda (this run uses --backend %s)",
                       out->device);
    }
    return ZB_OK;
}

zb_status zb_device_create(const char *backend, const zb_device_config *cfg, zb_device **out) {
    if (!strcmp(backend, "cpu")) return zb_device_cpu_create(cfg, out);
#ifdef ZB_HAVE_CUDA
    if (!strcmp(backend, "cuda")) return zb_device_cuda_create(cfg, out);
    return ZB_FAIL(ZB_ERR_INVALID, "--backend %s: not available in this build (accepted: cpu, cuda)",
                   backend);
#else
    return ZB_FAIL(ZB_ERR_INVALID, "--backend %s: not available in this build (accepted: cpu)",
                   backend);
#endif
}

zb_status zb_backends_create(zb_backends *b, const zb_device_config *dc, double timeout_s, bool gpu_trace,
                             zb_device **dev, zb_stream **compute, zb_stream **comm_stream, zb_comm **comm) {
    bool cuda = !strcmp(b->device, "cuda");
    if (cuda && dc->trace && !gpu_trace) {
        snprintf(b->note, sizeof b->note, "trace metrics not measured: --gpu-trace off");
    } else if (cuda && dc->trace) {
        /* Before the device's first CUDA call, so no activity is missed. */
        if (zb_cupti_start(dc->trace, -1) == ZB_OK) {
            b->cupti_active = true;
        } else {
            snprintf(b->note, sizeof b->note, "trace metrics not measured: %s", zb_error_message());
        }
    }
    ZB_TRY(zb_device_create(b->device, dc, dev));
    ZB_TRY((*dev)->ops->stream_create(*dev, "compute", compute));
    ZB_TRY((*dev)->ops->stream_create(*dev, "comm", comm_stream));
    zb_stream *streams[2] = {*comm_stream, *compute};
    zb_comm_config cc = {timeout_s};
    if (!strcmp(b->comm, "nccl")) return zb_comm_nccl_create(*dev, streams, 2, &cc, comm);
    /* The mpi comm runs collectives as host ops, staged through pinned host
     * memory where device memory is not host memory (comm_mpi.c). */
    if (!zb_dev_runs_host_code(*dev)) {
        return ZB_FAIL(ZB_ERR_INVALID, "--comm mpi on --backend %s: this device cannot run MPI in stream order "
                       "(no host ops or host staging); use --comm nccl", b->device);
    }
    return zb_comm_mpi_create(*dev, streams, 2, &cc, comm);
}

const char *zb_backends_default_hw(const zb_backends *b, int local_rank) {
    if (strcmp(b->device, "cuda") != 0) return "cpu";
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

void zb_backends_meta(const zb_backends *b, int local_rank, json_t *meta) {
    json_object_set_new(meta, "backend", json_string(b->device));
    json_object_set_new(meta, "comm", json_string(b->comm));
    if (b->note[0]) json_object_set_new(meta, "backend_note", json_string(b->note));
    if (strcmp(b->device, "cuda") != 0) return;
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
    json_object_set_new(meta, "cupti_active", json_boolean(b->cupti_active));
    if (!strcmp(b->comm, "nccl")) zb_nccl_meta(meta);
}

void zb_backends_flush_trace(const zb_backends *b) {
    if (b->cupti_active) zb_cupti_flush();
}

void zb_backends_finish(const zb_backends *b) {
    if (b->cupti_active) zb_cupti_stop();
}
