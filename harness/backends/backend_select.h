/* Choosing and building the backends a run uses: --backend auto takes cuda
 * with nccl when a usable GPU is found and cpu with mpi otherwise; an
 * explicit choice that cannot work here is bad input (exit 2). On cuda the
 * CUPTI tracer starts before the device makes its first CUDA call. */
#ifndef ZB_BACKEND_SELECT_H
#define ZB_BACKEND_SELECT_H

#include <jansson.h>
#include <stdbool.h>

#include "comm.h"
#include "device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zb_backends {
    char device[16];     /* "cpu" or "cuda" */
    char comm[16];       /* "mpi" or "nccl" */
    bool auto_chosen;    /* --backend auto decided */
    bool cupti_active;   /* cuda: the tracer runs; trace metrics are measured */
    char note[256];      /* why auto chose, or why CUPTI is off */
} zb_backends;

/* Creates a device by name ("cpu"; "cuda" where built). */
zb_status zb_device_create(const char *backend, const zb_device_config *cfg, zb_device **out);

/* Resolves the flags' values ("auto", "cpu", "cuda"; "auto", "mpi", "nccl")
 * on this process's machine. ZB_ERR_INVALID, one line naming the flag, for
 * --backend cuda without a usable GPU or driver, or --comm nccl without cuda. */
zb_status zb_backends_resolve(const char *backend_flag, const char *comm_flag, zb_backends *out);

/* Creates the device (streams "compute" and "comm") and the comm over both
 * streams (collective). On cuda starts CUPTI first unless gpu_trace is
 * false (a failure only turns trace metrics off, with b->note saying why). */
zb_status zb_backends_create(zb_backends *b, const zb_device_config *dc, double timeout_s, bool gpu_trace,
                             zb_device **dev, zb_stream **compute, zb_stream **comm_stream, zb_comm **comm);

/* Default hardware profile for the device: "cpu", or the GPU's profile when
 * its name is one zerobench has (H200, H100, A100, B200), else NULL. */
const char *zb_backends_default_hw(const zb_backends *b, int local_rank);

/* GPU name, driver and runtime versions, NCCL version into the meta. */
void zb_backends_meta(const zb_backends *b, int local_rank, json_t *meta);

/* Makes the trace records of everything finished so far available (CUPTI
 * flush on cuda; nothing on cpu). */
void zb_backends_flush_trace(const zb_backends *b);
/* Stops the tracer at exit. */
void zb_backends_finish(const zb_backends *b);

#ifdef __cplusplus
}
#endif
#endif
