/* The gather every trace export starts with (trace_export.c: the Chrome
 * file, trace_kineto.c: one Kineto file per rank): every rank's records,
 * step marks, memory samples, losses and host name brought to rank 0 and
 * put on rank 0's clock (each rank shifted by its clock_sync offset), and
 * the trace-level description both formats carry (the clock, the offsets,
 * simulated, the run's own keys). */
#ifndef ZB_TRACE_GATHER_H
#define ZB_TRACE_GATHER_H

#include <jansson.h>

#include "clock_sync.h"
#include "trace_events.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Collective. On rank 0 *in gets every rank's trace (free it with
 * zb_trace_export_input_free), shifted by `sync` (NULL: no shift); on the
 * other ranks it is zeroed (in->trace NULL). Each wait ends after timeout_s (<= 0: the
 * default of mpi_wait.h) with ZB_ERR_TIMEOUT, which must end the job. */
zb_status zb_trace_gather(const zb_trace *t, const zb_clock_sync *sync, double timeout_s, zb_trace_export_input *in);
void zb_trace_export_input_free(zb_trace_export_input *in);

/* Sets "clock", "clock_sync" (when sync is not NULL), "simulated" and then
 * `info`'s keys (NULL: none) in `obj`. */
void zb_trace_describe(json_t *obj, const zb_trace *t, const zb_clock_sync *sync, const json_t *info);

#ifdef __cplusplus
}
#endif
#endif
