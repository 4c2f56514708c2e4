/* CUPTI Activity API tracer: GPU kernels, copies and memsets of this process
 * as zerobench trace records (docs/design.md §3, Trace).
 *
 * Plain C header; the implementation is harness/device/cuda/cupti_tracer.c (CUDA
 * builds with CUPTI's headers: ZB_HAVE_CUPTI). Without it every function is
 * a static inline no-op: zb_cupti_start returns ZB_ERR_UNSUPPORTED, so
 * callers compile and run the same way in every build.
 *
 * Life cycle (one tracer per process):
 *   zb_cupti_start(trace, comm_id)  before the first CUDA call of the process
 *                                   (CUPTI must see the context being created
 *                                   to trace it); it loads libcupti at run
 *                                   time, so a machine without CUPTI still
 *                                   runs zerobench.
 *   zb_cupti_register_stream(...)   once per CUDA stream the device creates,
 *                                   naming its zerobench stream id; the comm
 *                                   stream with is_comm = true.
 *   zb_cupti_op_begin / op_end      around the CUDA calls of every harness op,
 *                                   on the thread that issues them (CUPTI's
 *                                   external correlation stack is per thread).
 *   zb_cupti_flush()                at the end of each measured window, after
 *                                   the device is synchronized and with no op
 *                                   in flight: delivers every record into the
 *                                   trace on the harness clock (a forced flush).
 *   zb_cupti_stop()                 at exit: a final forced flush, then CUPTI
 *                                   is disabled and finalized.
 *
 * While the tracer runs, the CUDA device backend must not add its own
 * host-timed records for the same ops (they would be counted twice).
 *
 * Unavailable CUPTI: zb_cupti_start returns ZB_ERR_UNSUPPORTED, with a
 * one-line reason in zb_error_message() (and zb_cupti_unavailable_reason())
 * when libcupti cannot be loaded, its major version differs from the headers
 * zerobench was built with, or CUPTI refuses to subscribe (for example
 * CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED under Nsight Systems or
 * another profiler). The caller prints it as a warning, runs on, and reports
 * its trace-based metrics as "not measured". Every other function is then a
 * no-op.
 *
 * Clock: zb_cupti_start registers CLOCK_MONOTONIC as CUPTI's timestamp
 * source and checks CUPTI's clock against it (zb_clock_map_decide): the
 * same clock within 1 ms; beyond, records are converted through the fitted
 * pairs and zb_cupti_clock_note() says so (the step prints it, the meta has
 * it as tracer_note); a clock that cannot be converted makes the start fail
 * as unavailable CUPTI does.
 *
 * Environment: ZB_CUPTI_LIBRARY (a path to libcupti to load first; the
 * other places tried are in cupti_paths.h; CUDA_HOME moves the toolkit's);
 * ZB_CUPTI_CLOCK=cupti keeps CUPTI's own clock (CLOCK_REALTIME on Linux)
 * instead of registering CLOCK_MONOTONIC as its timestamp source. */
#ifndef ZB_CUPTI_TRACER_H
#define ZB_CUPTI_TRACER_H

#include <stdbool.h>
#include <stdint.h>

#include "cupti_map.h"
#include "status.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef ZB_HAVE_CUPTI

/* Starts tracing into t (kept until zb_cupti_stop; records go in at each
 * flush). comm_cuda_stream_id: the CUPTI id of the comm stream when already
 * known, else -1 (then register it with zb_cupti_register_stream). */
zb_status zb_cupti_start(zb_trace *t, int comm_cuda_stream_id);

/* Names the zerobench stream of a CUDA stream (cudaStream_t passed as a
 * pointer). ZB_ERR_UNSUPPORTED when the tracer is not running. */
zb_status zb_cupti_register_stream(const void *cuda_stream, int zb_stream_id, bool is_comm);

/* Pushes a fresh external correlation id for one op; no-op when not running. */
void zb_cupti_op_begin(const char *label, int unit, zb_op_kind kind, double flops, int stream_id);
/* The same with the op's bytes (info->label is copied). */
void zb_cupti_op_begin_info(const zb_op_info *info, int stream_id);
/* Pops the id zb_cupti_op_begin pushed on this thread (if it pushed one). */
void zb_cupti_op_end(void);

/* Delivers every completed record into the trace (see above). */
zb_status zb_cupti_flush(void);

/* Final flush, then disables and finalizes CUPTI. Safe to call when not
 * running. */
zb_status zb_cupti_stop(void);

/* True between a successful zb_cupti_start and zb_cupti_stop. */
bool zb_cupti_active(void);

/* Counters of the mapping (cupti_map.h); ZB_ERR_UNSUPPORTED when the tracer
 * never started. */
zb_status zb_cupti_get_stats(zb_cupti_stats *out);

/* Why the last zb_cupti_start failed ("" when it did not). */
const char *zb_cupti_unavailable_reason(void);

/* One line when the running (or last) tracer's records are converted from
 * another clock than CLOCK_MONOTONIC, "" otherwise. */
const char *zb_cupti_clock_note(void);

#else /* no CUPTI: every call is a no-op */

#ifdef ZB_HAVE_CUDA
#define ZB_CUPTI_MISSING "built without CUPTI's headers (cupti.h not found or -DZB_WITH_CUPTI=OFF)"
#else
#define ZB_CUPTI_MISSING "built without CUDA"
#endif

static inline zb_status zb_cupti_start(zb_trace *t, int comm_cuda_stream_id) {
    (void)t;
    (void)comm_cuda_stream_id;
    return ZB_FAIL(ZB_ERR_UNSUPPORTED, "CUPTI tracing unavailable: %s", ZB_CUPTI_MISSING);
}
static inline zb_status zb_cupti_register_stream(const void *cuda_stream, int zb_stream_id,
                                                 bool is_comm) {
    (void)cuda_stream;
    (void)zb_stream_id;
    (void)is_comm;
    return ZB_ERR_UNSUPPORTED;
}
static inline void zb_cupti_op_begin(const char *label, int unit, zb_op_kind kind, double flops,
                                     int stream_id) {
    (void)label;
    (void)unit;
    (void)kind;
    (void)flops;
    (void)stream_id;
}
static inline void zb_cupti_op_begin_info(const zb_op_info *info, int stream_id) {
    (void)info;
    (void)stream_id;
}
static inline void zb_cupti_op_end(void) {}
static inline zb_status zb_cupti_flush(void) { return ZB_ERR_UNSUPPORTED; }
static inline zb_status zb_cupti_stop(void) { return ZB_OK; }
static inline bool zb_cupti_active(void) { return false; }
static inline zb_status zb_cupti_get_stats(zb_cupti_stats *out) {
    (void)out;
    return ZB_ERR_UNSUPPORTED;
}
static inline const char *zb_cupti_unavailable_reason(void) { return ZB_CUPTI_MISSING; }
static inline const char *zb_cupti_clock_note(void) { return ""; }

#endif

#ifdef __cplusplus
}
#endif
#endif
