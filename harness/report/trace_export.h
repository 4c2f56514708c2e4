/* Writes every rank's trace as one Chrome trace-event JSON file (opens in
 * Perfetto and chrome://tracing): pid = rank + 1 ("rank R on HOST"), tid =
 * stream + 1 (no id 0: trace_events.h), ts/dur in microseconds from the earliest event; the steps marked
 * as slices on a track of their own, every op's args with its step, each
 * collective's last arrival, live memory as counters (trace_events.h,
 * docs/design.md §7).
 *
 * Ranks on other nodes than rank 0's have clocks of their own origin: each
 * rank's records are shifted by its measured offset (clock_sync.h) onto rank
 * 0's clock, so the ranks' timelines line up to within the offsets'
 * uncertainty. The offsets and uncertainties are written in the file's
 * "otherData" (the format's trace-level metadata) as "clock_sync". The
 * records themselves are left as they are: metrics use each rank's own
 * clock. */
#ifndef ZB_TRACE_EXPORT_H
#define ZB_TRACE_EXPORT_H

#include <jansson.h>

#include "clock_sync.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Collective: gathers the records to rank 0, which writes `path` atomically.
 * `sync` NULL: no shift and no clock_sync metadata. Each wait ends after
 * timeout_s (--timeout; <= 0: the default of mpi_wait.h) with
 * ZB_ERR_TIMEOUT, which must end the job. */
zb_status zb_trace_export_chrome(const zb_trace *t, const zb_clock_sync *sync, const char *path,
                                 double timeout_s);
/* The same with `info`'s keys (the run's command, model label...) copied
 * into the trace's otherData; info NULL: none. */
zb_status zb_trace_export_chrome_info(const zb_trace *t, const zb_clock_sync *sync, const char *path,
                                      double timeout_s, const json_t *info);

#ifdef __cplusplus
}
#endif
#endif
