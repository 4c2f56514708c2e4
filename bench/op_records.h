/* The device's own time per call of a benchmark's timed op, from the trace
 * records (when the run is traced: --trace, or a bench that always traces):
 * the span each call ran on the stream, without the gaps between calls that
 * a back-to-back loop's event-to-event time also holds. The step's compute
 * figures are sums of such records, so zerobench calibrate fits its
 * per-kernel and GEMM costs from these (docs/design.md §6): on the cpu
 * backend a loop of microsecond calls keeps waking the stream's thread, and
 * its event-to-event time was 1.5-2 us a call above the records (the tiny
 * model's kernels, 2026-12-07). */
#ifndef ZB_OP_RECORDS_H
#define ZB_OP_RECORDS_H

#include <stddef.h>

#include "bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where this rank's trace stands now: the first record a timed loop about
 * to start will add; SIZE_MAX when the device is not traced. */
size_t zb_op_records_mark(const zb_bench_ctx *ctx);

/* Collective: the median duration (seconds) of the compute records labelled
 * `label` this rank added since `mark`, reduced across ranks as -a says
 * (zb_bench_reduce_time); NaN on every rank when any rank has none (not
 * traced, or its tracer lost them). */
zb_status zb_op_records_median(zb_bench_ctx *ctx, size_t mark, const char *label, double *out_s);

#ifdef __cplusplus
}
#endif
#endif
