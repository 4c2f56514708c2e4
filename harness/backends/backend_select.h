/* Choosing and building the backends a run uses, from the registry
 * (registry.h): --backend auto takes the usable device backend of highest
 * auto priority (cuda when a usable GPU is found, else cpu) and its default
 * comm; an explicit choice that cannot work here is bad input (exit 2). A
 * device tracer (CUPTI on cuda) starts before the device's first call. */
#ifndef ZB_BACKEND_SELECT_H
#define ZB_BACKEND_SELECT_H

#include <jansson.h>
#include <stdbool.h>

#include "comm.h"
#include "comm_backend.h"
#include "device.h"
#include "device_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zb_backends {
    const zb_device_backend *device;
    const zb_comm_backend *comm;
    bool auto_chosen;    /* --backend auto decided */
    bool tracer_active;  /* the device's tracer runs (CUPTI), so its work is traced */
    char note[256];      /* why auto chose, or why the tracer is off */
} zb_backends;

/* Resolves the flags' values ("auto" or a registry name) on this process's
 * machine. ZB_ERR_INVALID, one line naming the flag, for a backend that is
 * not built or not usable here (--backend cuda without a usable GPU), or a
 * comm that needs another device (--comm nccl without cuda). */
zb_status zb_backends_resolve(const char *backend_flag, const char *comm_flag, zb_backends *out);

/* After every rank resolved --backend auto on its own machine: when some
 * rank could only use a backend of lower auto priority (no GPU there), all
 * take that one. `lowest` is the minimum over ranks of
 * b->device->auto_priority. */
zb_status zb_backends_fall_back(zb_backends *b, int lowest, const char *comm_flag);

/* Creates a device by name: ZB_ERR_INVALID for a name the registry does not
 * know, ZB_ERR_UNSUPPORTED (naming the rank) for one not in this build. */
zb_status zb_device_create(const char *backend, const zb_device_config *cfg, zb_device **out);

/* Whether zb_backends_create starts the device's tracer: the backend has
 * one, the run's trace is enabled (a disabled trace, as the microbenchmarks
 * have without --trace, records nothing, so a tracer would only slow them)
 * and --gpu-trace is on. */
bool zb_backends_tracer_wanted(const zb_device_backend *d, const zb_trace *t, bool device_trace);

/* Creates the device (streams "compute" and "comm") and the comm over both
 * streams (collective), the comm with `cc`. Starts the device's tracer first when
 * zb_backends_tracer_wanted (a failure only turns trace metrics off, with
 * b->note saying why). */
zb_status zb_backends_create(zb_backends *b, const zb_device_config *dc, const zb_comm_config *cc,
                             bool device_trace, zb_device **dev, zb_stream **compute,
                             zb_stream **comm_stream, zb_comm **comm);

/* Whether the device's work reaches the trace: the device records its ops
 * itself, or its tracer runs. */
bool zb_backends_traced(const zb_backends *b);

/* The hardware profile describing this rank's device, or NULL (unknown
 * hardware: no peaks). */
const char *zb_backends_default_hw(const zb_backends *b, int local_rank);

/* backend, comm, the note and each backend's facts (GPU, driver, NCCL
 * versions, whether the tracer ran, tracer_note when its records were
 * converted from another clock) into the meta. */
void zb_backends_meta(const zb_backends *b, int local_rank, json_t *meta);

/* Makes the trace records of everything finished so far available (the
 * tracer's flush; nothing where the device records its own). */
void zb_backends_flush_trace(const zb_backends *b);
/* Stops the tracer at exit. */
void zb_backends_finish(const zb_backends *b);

#ifdef __cplusplus
}
#endif
#endif
