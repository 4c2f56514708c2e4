/* The events of the Chrome trace (docs/design.md §7), built on rank 0 from
 * every rank's gathered trace, already on rank 0's clock (trace_export.c):
 *   - processes "rank R on HOST" (pid R + 1), threads named after the
 *     streams (tid = stream id + 1), each with its sort index; no id is 0,
 *     which Perfetto's importer would rewrite (an explicit tid 0 becomes
 *     the pid), and a tid names the same track in every process (importers
 *     name threads by tid alone);
 *   - one complete event per record, its args carrying unit, op, kind,
 *     bytes, flops, the collective and its step (null outside any step),
 *     and the step's mode and stage when the trace holds several runs;
 *   - each marked step as a slice on the rank's "steps" track
 *     (tid ZB_TRACE_STEP_TID): step index, warm-up or measured, mode, stage;
 *   - each collective instance's last arrival as an instant event on every
 *     rank's track of that collective (the latest start over ranks);
 *   - live memory as counter events per rank ("live memory": one series
 *     per device tag; host tags on "live host memory"), on every backend;
 *   - otherData: which steps were written and which left out, per phase. */
#ifndef ZB_TRACE_EVENTS_H
#define ZB_TRACE_EVENTS_H

#include <jansson.h>

#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_TRACE_HOST_MAX 64
/* pid = rank + ZB_TRACE_PID_BASE, tid = stream id + ZB_TRACE_TID_BASE: ids
 * of 1 and up (see above). A process's own events (names, counters) carry
 * tid = pid, the importers' default. */
#define ZB_TRACE_PID_BASE 1
#define ZB_TRACE_TID_BASE 1
/* The steps track's tid: above any stream's (CUPTI's foreign streams start at 100). */
#define ZB_TRACE_STEP_TID 1000000

typedef struct zb_trace_export_input {
    const zb_trace *trace; /* rank 0's own: stream, phase and tag names, the step rule */
    int n_ranks;
    zb_trace_record *records;
    size_t n_records;
    zb_trace_step *steps;
    int *step_rank; /* [n_steps] the rank each step mark came from */
    size_t n_steps;
    zb_trace_mem_sample *mem;
    int *mem_rank;  /* [n_mem] */
    size_t n_mem;
    char *hosts;    /* [n_ranks][ZB_TRACE_HOST_MAX] */
    size_t mem_dropped, records_dropped; /* summed over ranks */
} zb_trace_export_input;

/* Each rank's step marks are contiguous and in time order (gathered rank by
 * rank, marked step by step): [begin[r], end[r]) of in->steps. */
typedef struct zb_trace_step_index {
    size_t *begin, *end;
} zb_trace_step_index;

/* False when out of memory (free it anyway). */
bool zb_trace_step_index_build(const zb_trace_export_input *in, zb_trace_step_index *ix);
void zb_trace_step_index_free(zb_trace_step_index *ix);
/* The step mark whose window [start_ns, end_ns] holds `ns` on `rank`, or NULL. */
const zb_trace_step *zb_trace_step_at(const zb_trace_export_input *in, const zb_trace_step_index *ix, int rank,
                                      int64_t ns);
/* The earliest time of any record, step or sample: the files' time 0. */
int64_t zb_trace_origin(const zb_trace_export_input *in);
/* otherData.trace_steps: the rule, and per run the steps written and left
 * out (a new reference). */
json_t *zb_trace_steps_meta(const zb_trace_export_input *in);

/* The document {"traceEvents": [...], "displayTimeUnit": "ns", "otherData":
 * {...}}: a new reference, NULL when out of memory. */
json_t *zb_trace_events_doc(const zb_trace_export_input *in);

#ifdef __cplusplus
}
#endif
#endif
