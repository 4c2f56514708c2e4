/* Overlap of comm and compute intervals from trace records, and median/min
 * helpers (see overlap.h for the definitions and the empty-comm rule). A
 * record counts by its kind alone: its producer classified it.
 *
 * Method: collect the clipped comm and compute intervals, sort each by start,
 * merge each into a sorted list of disjoint intervals (the unions M and C),
 * then sweep both lists once to measure |M ∩ C|. O(n log n) time. */
#include "overlap.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct zb_interval {
    int64_t start_ns;
    int64_t end_ns;
} zb_interval;

bool zb_overlap_is_comm(const zb_trace_record *r) { return r->kind == ZB_OP_COMM; }

static int zb_interval_cmp(const void *a, const void *b) {
    const zb_interval *x = (const zb_interval *)a;
    const zb_interval *y = (const zb_interval *)b;
    if (x->start_ns != y->start_ns) return x->start_ns < y->start_ns ? -1 : 1;
    if (x->end_ns != y->end_ns) return x->end_ns < y->end_ns ? -1 : 1;
    return 0;
}

/* Sorts iv[0..n) and merges it in place into disjoint intervals (touching
 * intervals join). Returns the merged count; *total_ns gets their length. */
static size_t zb_interval_union(zb_interval *iv, size_t n, int64_t *total_ns) {
    *total_ns = 0;
    if (n == 0) return 0;
    qsort(iv, n, sizeof *iv, zb_interval_cmp);
    size_t m = 0;
    for (size_t i = 1; i < n; i++) {
        if (iv[i].start_ns <= iv[m].end_ns) {
            if (iv[i].end_ns > iv[m].end_ns) iv[m].end_ns = iv[i].end_ns;
        } else {
            iv[++m] = iv[i];
        }
    }
    m++;
    for (size_t i = 0; i < m; i++) *total_ns += iv[i].end_ns - iv[i].start_ns;
    return m;
}

/* |A ∩ B| for two sorted lists of disjoint intervals. */
static int64_t zb_interval_intersection_ns(const zb_interval *a, size_t na, const zb_interval *b,
                                           size_t nb) {
    int64_t total = 0;
    size_t i = 0, j = 0;
    while (i < na && j < nb) {
        int64_t lo = a[i].start_ns > b[j].start_ns ? a[i].start_ns : b[j].start_ns;
        int64_t hi = a[i].end_ns < b[j].end_ns ? a[i].end_ns : b[j].end_ns;
        if (hi > lo) total += hi - lo;
        if (a[i].end_ns < b[j].end_ns) {
            i++;
        } else {
            j++;
        }
    }
    return total;
}

/* filter_rank == INT_MIN: use every record, which must all share one rank. */
static zb_status zb_overlap_run(const zb_trace_record *recs, size_t n, int filter_rank,
                                int64_t t0_ns, int64_t t1_ns, zb_overlap *out) {
    if (!out) return ZB_FAIL(ZB_ERR_INVALID, "zb_overlap_compute: out is NULL");
    memset(out, 0, sizeof *out);
    out->overlap_pct = NAN;
    if (n > 0 && !recs) return ZB_FAIL(ZB_ERR_INVALID, "zb_overlap_compute: %zu records at NULL", n);
    if (t1_ns < t0_ns) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "zb_overlap_compute: window end %lld ns is before its start %lld ns",
                       (long long)t1_ns, (long long)t0_ns);
    }
    for (size_t i = 0; i < n; i++) {
        if (recs[i].end_ns < recs[i].start_ns) {
            return ZB_FAIL(ZB_ERR_INVALID,
                           "zb_overlap_compute: record %zu (%.*s) ends at %lld ns before it "
                           "starts at %lld ns",
                           i, ZB_LABEL_MAX, recs[i].label, (long long)recs[i].end_ns,
                           (long long)recs[i].start_ns);
        }
        if (filter_rank == INT_MIN && recs[i].rank != recs[0].rank) {
            return ZB_FAIL(ZB_ERR_INVALID,
                           "zb_overlap_compute: records of ranks %d and %d mixed; overlap is "
                           "per rank (use zb_overlap_compute_rank)",
                           recs[0].rank, recs[i].rank);
        }
    }
    if (n == 0 || t1_ns == t0_ns) return ZB_OK;

    zb_interval *comm = (zb_interval *)malloc(n * sizeof *comm);
    zb_interval *comp = (zb_interval *)malloc(n * sizeof *comp);
    if (!comm || !comp) {
        free(comm);
        free(comp);
        return ZB_FAIL(ZB_ERR_NOMEM, "zb_overlap_compute: scratch for %zu records", n);
    }
    size_t n_comm = 0, n_comp = 0;
    for (size_t i = 0; i < n; i++) {
        const zb_trace_record *r = &recs[i];
        if (filter_rank != INT_MIN && r->rank != filter_rank) continue;
        bool is_comm = zb_overlap_is_comm(r);
        if (!is_comm && r->kind != ZB_OP_COMPUTE) continue; /* copies: neither */
        zb_interval iv;
        iv.start_ns = r->start_ns > t0_ns ? r->start_ns : t0_ns;
        iv.end_ns = r->end_ns < t1_ns ? r->end_ns : t1_ns;
        if (iv.end_ns <= iv.start_ns) continue; /* outside the window or empty */
        if (is_comm) {
            comm[n_comm++] = iv;
        } else {
            comp[n_comp++] = iv;
        }
    }
    out->n_comm_records = n_comm;
    out->n_compute_records = n_comp;
    size_t m_comm = zb_interval_union(comm, n_comm, &out->comm_ns);
    size_t m_comp = zb_interval_union(comp, n_comp, &out->compute_ns);
    out->overlap_ns = zb_interval_intersection_ns(comm, m_comm, comp, m_comp);
    free(comm);
    free(comp);

    out->exposed_comm_ns = out->comm_ns - out->overlap_ns;
    out->busy_ns = out->comm_ns + out->compute_ns - out->overlap_ns;
    out->comm_measured = out->comm_ns > 0;
    if (out->comm_measured) out->overlap_pct = 100.0 * (double)out->overlap_ns / (double)out->comm_ns;
    return ZB_OK;
}

zb_status zb_overlap_compute(const zb_trace_record *recs, size_t n, int64_t t0_ns, int64_t t1_ns,
                             zb_overlap *out) {
    return zb_overlap_run(recs, n, INT_MIN, t0_ns, t1_ns, out);
}

zb_status zb_overlap_compute_rank(const zb_trace_record *recs, size_t n, int rank, int64_t t0_ns,
                                  int64_t t1_ns, zb_overlap *out) {
    if (rank == INT_MIN) return ZB_FAIL(ZB_ERR_INVALID, "zb_overlap_compute_rank: rank %d", rank);
    return zb_overlap_run(recs, n, rank, t0_ns, t1_ns, out);
}

/* Ascending, NaN last. */
static int zb_double_cmp_nan_last(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    int xn = isnan(x), yn = isnan(y);
    if (xn || yn) return xn - yn;
    return (x > y) - (x < y);
}

double zb_median(double *v, size_t n) {
    if (!v || n == 0) return NAN;
    qsort(v, n, sizeof *v, zb_double_cmp_nan_last);
    size_t m = n;
    while (m > 0 && isnan(v[m - 1])) m--;
    if (m == 0) return NAN;
    if (m % 2 == 1) return v[m / 2];
    return 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

double zb_min(const double *v, size_t n) {
    double best = NAN;
    for (size_t i = 0; v && i < n; i++) {
        if (!isnan(v[i]) && (isnan(best) || v[i] < best)) best = v[i];
    }
    return best;
}

double zb_max(const double *v, size_t n) {
    double best = NAN;
    for (size_t i = 0; v && i < n; i++) {
        if (!isnan(v[i]) && (isnan(best) || v[i] > best)) best = v[i];
    }
    return best;
}
