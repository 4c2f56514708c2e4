/* The CUPTI mapping's counters (zb_cupti_stats, cupti_map.h) as the
 * registry's backend-neutral tracer losses (zb_tracer_stats,
 * device_backend.h), which the step reports (docs/design.md §7). Plain C,
 * built everywhere; kept apart from cupti_map.c so that file need not see
 * the device interface. */
#include <string.h>

#include "cupti_map.h"
#include "device_backend.h"

void zb_cupti_tracer_stats(const zb_cupti_stats *s, zb_tracer_stats *out) {
    memset(out, 0, sizeof *out);
    out->name = "CUPTI";
    out->records_dropped = s->n_dropped;
    out->zero_timestamps = s->n_zero_timestamp;
    out->inverted = s->n_inverted;
    out->buffer_errors = s->n_buffer_errors;
}
