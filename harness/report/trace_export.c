/* Chrome trace-event export of the per-rank trace buffers (see trace_export.h):
 * the gather to rank 0 on rank 0's clock is trace_gather.c's, the events
 * are built in trace_events.c; this writes the document. */
#include "trace_export.h"

#include <jansson.h>
#include <stdlib.h>

#include "atomic_file.h"
#include "report.h"
#include "trace_events.h"
#include "trace_gather.h"

zb_status zb_trace_export_chrome(const zb_trace *t, const zb_clock_sync *sync, const char *path,
                                 double timeout_s) {
    return zb_trace_export_chrome_info(t, sync, path, timeout_s, NULL);
}

zb_status zb_trace_export_chrome_info(const zb_trace *t, const zb_clock_sync *sync, const char *path,
                                      double timeout_s, const json_t *info) {
    zb_trace_export_input in;
    ZB_TRY(zb_trace_gather(t, sync, timeout_s, &in));
    if (!in.trace) return ZB_OK; /* not rank 0 */
    json_t *doc = zb_trace_events_doc(&in);
    json_t *other = doc ? json_object_get(doc, "otherData") : NULL;
    if (other) zb_trace_describe(other, t, sync, info);
    zb_trace_export_input_free(&in);
    size_t len = 0;
    char *text = doc ? zb_json_dump(doc, 0, &len) : NULL;
    json_decref(doc);
    if (!text) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory writing the trace %s", path);
    zb_status st = zb_atomic_write(path, text, len);
    free(text);
    return st;
}
