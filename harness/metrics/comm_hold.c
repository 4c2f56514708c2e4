/* The hold at a collective's start (comm_hold.h). */
#include "comm_hold.h"

#include <math.h>
#include <stdlib.h>

typedef struct span {
    int64_t start_ns, end_ns;
} span;

static int by_start(const void *a, const void *b) {
    int64_t x = ((const span *)a)->start_ns, y = ((const span *)b)->start_ns;
    return (x > y) - (x < y);
}

zb_status zb_comm_hold_compute(const zb_trace_record *recs, size_t n, int64_t t0_ns, int64_t t1_ns,
                               zb_comm_hold *out) {
    out->n_beside = out->n_held = 0;
    out->held_ns = 0;
    out->mean_hold_ns = NAN;
    if (n > 0 && !recs) return ZB_FAIL(ZB_ERR_INVALID, "comm hold: no records for a count of %zu", n);
    size_t n_comp = 0;
    for (size_t i = 0; i < n; i++) {
        if (recs[i].end_ns < recs[i].start_ns) {
            return ZB_FAIL(ZB_ERR_INVALID, "comm hold: record %zu ends (%lld ns) before it starts (%lld ns)", i,
                           (long long)recs[i].end_ns, (long long)recs[i].start_ns);
        }
        n_comp += recs[i].kind == ZB_OP_COMPUTE;
    }
    span *c = (span *)malloc(sizeof(span) * (n_comp + 1));
    int64_t *reach = (int64_t *)malloc(sizeof(int64_t) * (n_comp + 1)); /* latest end of c[0..i] */
    if (!c || !reach) {
        free(c);
        free(reach);
        return ZB_FAIL(ZB_ERR_NOMEM, "comm hold: out of host memory for %zu compute records", n_comp);
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (recs[i].kind == ZB_OP_COMPUTE) c[k++] = (span){recs[i].start_ns, recs[i].end_ns};
    }
    qsort(c, n_comp, sizeof *c, by_start);
    for (size_t i = 0; i < n_comp; i++) reach[i] = i && reach[i - 1] > c[i].end_ns ? reach[i - 1] : c[i].end_ns;
    for (size_t i = 0; i < n; i++) {
        const zb_trace_record *m = &recs[i];
        if (m->kind != ZB_OP_COMM || m->start_ns < t0_ns || m->start_ns >= t1_ns) continue;
        size_t lo = 0, hi = n_comp; /* the first compute op starting after the collective's start */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (c[mid].start_ns <= m->start_ns) lo = mid + 1;
            else hi = mid;
        }
        bool before = lo > 0, after = lo < n_comp;
        int64_t last_end = before ? reach[lo - 1] : 0, next = after ? c[lo].start_ns : 0;
        if (before && (last_end > m->start_ns || (after && next - last_end < ZB_HOLD_HANDOFF_NS))) {
            out->n_beside++;
        } else if (after && next < m->end_ns) {
            out->n_held++;
            out->held_ns += next - m->start_ns;
        }
    }
    free(c);
    free(reach);
    size_t counted = out->n_beside + out->n_held;
    if (counted) out->mean_hold_ns = (double)out->held_ns / (double)counted;
    return ZB_OK;
}
