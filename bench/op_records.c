/* Per-call device time from the trace records (op_records.h). */
#include "op_records.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend_select.h"
#include "overlap.h"

size_t zb_op_records_mark(const zb_bench_ctx *ctx) {
    const zb_trace *t = ctx->dev->cfg.trace;
    if (!t || !t->enabled || !zb_backends_traced(&ctx->backends)) return SIZE_MAX;
    zb_backends_flush_trace(&ctx->backends); /* records of earlier work land before the mark */
    return t->n_records;
}

zb_status zb_op_records_median(zb_bench_ctx *ctx, size_t mark, const char *label, double *out_s) {
    double local = NAN;
    zb_trace *t = ctx->dev->cfg.trace;
    if (mark != SIZE_MAX && t) {
        zb_backends_flush_trace(&ctx->backends);
        size_t n = t->n_records > mark ? t->n_records - mark : 0;
        double *v = n ? (double *)malloc(n * sizeof *v) : NULL;
        size_t k = 0;
        for (size_t i = 0; v && i < n; i++) {
            const zb_trace_record *r = &t->records[mark + i];
            if (r->kind == ZB_OP_COMPUTE && !strcmp(r->label, label)) v[k++] = (double)(r->end_ns - r->start_ns) * 1e-9;
        }
        if (k) local = zb_median(v, k);
        free(v);
    }
    int64_t lacking = 0;
    ZB_TRY(zb_bench_sum(ctx, isnan(local) ? 1 : 0, &lacking));
    if (lacking) {
        *out_s = NAN;
        return ZB_OK;
    }
    return zb_bench_reduce_time(ctx, local, out_s);
}
