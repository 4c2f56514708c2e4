/* Writes every rank's trace records as one Chrome trace-event JSON file
 * (opens in Perfetto and chrome://tracing): pid = rank, tid = stream,
 * ts/dur in microseconds from the earliest record, args carry unit, op kind,
 * bytes and flops (DESIGN.md §5). */
#ifndef ZB_TRACE_EXPORT_H
#define ZB_TRACE_EXPORT_H

#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Collective: gathers the records to rank 0, which writes `path` atomically. */
zb_status zb_trace_export_chrome(const zb_trace *t, const char *path);

#ifdef __cplusplus
}
#endif
#endif
