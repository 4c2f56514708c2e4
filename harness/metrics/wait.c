/* Wait and transfer parts of a rank's collectives (see wait.h). |W \ C| is
 * overlap.h's exposed comm of a record set made of the rank's compute
 * records and one comm record per wait part, so the interval arithmetic is
 * overlap.c's, not a second copy. */
#include "wait.h"

#include <stdlib.h>
#include <string.h>

#include "overlap.h"

static int64_t clip(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

zb_status zb_wait_split_compute(const zb_trace_record *recs, size_t n, int64_t t0_ns, int64_t t1_ns,
                                const size_t *coll_idx, const int64_t *last_arrival_ns, size_t n_coll,
                                zb_wait_split *out) {
    memset(out, 0, sizeof *out);
    zb_overlap all;
    ZB_TRY(zb_overlap_compute(recs, n, t0_ns, t1_ns, &all));
    out->exposed_comm_ns = all.exposed_comm_ns;
    for (size_t k = 0; k < n_coll; k++) {
        if (coll_idx[k] >= n) {
            return ZB_FAIL(ZB_ERR_INVALID, "zb_wait_split_compute: collective %zu is record %zu of %zu", k,
                           coll_idx[k], n);
        }
    }
    zb_trace_record *mix = (zb_trace_record *)malloc((n + n_coll + 1) * sizeof *mix);
    if (!mix) return ZB_FAIL(ZB_ERR_NOMEM, "zb_wait_split_compute: scratch for %zu records", n + n_coll);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (recs[i].kind == ZB_OP_COMPUTE) mix[m++] = recs[i];
    }
    for (size_t k = 0; k < n_coll; k++) {
        const zb_trace_record *r = &recs[coll_idx[k]];
        int64_t split = clip(last_arrival_ns[k], r->start_ns, r->end_ns);
        /* Inside the window, as every figure of a step is. */
        int64_t s = clip(r->start_ns, t0_ns, t1_ns), w = clip(split, t0_ns, t1_ns), e = clip(r->end_ns, t0_ns, t1_ns);
        out->wait_ns += w - s;
        out->transfer_ns += e - w;
        if (w > s) {
            zb_trace_record wr = *r;
            wr.kind = ZB_OP_COMM;
            wr.start_ns = s;
            wr.end_ns = w;
            mix[m++] = wr;
        }
    }
    zb_overlap wait;
    zb_status st = zb_overlap_compute(mix, m, t0_ns, t1_ns, &wait);
    free(mix);
    ZB_TRY(st);
    out->exposed_wait_ns = wait.exposed_comm_ns;
    out->exposed_transfer_ns = out->exposed_comm_ns - out->exposed_wait_ns;
    return ZB_OK;
}
