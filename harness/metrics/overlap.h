/* Compute/communication overlap from trace records (Holistic Trace
 * Analysis's definition; docs/design.md, "Metrics"), and the median/min
 * helpers reports use to summarize per-step, per-rank values.
 *
 * For one rank and a time window [t0_ns, t1_ns):
 *   M = union of comm intervals: records of kind ZB_OP_COMM;
 *   C = union of compute intervals: records of kind ZB_OP_COMPUTE.
 * Copies (ZB_OP_COPY) are in neither. The kind is all that is read: records
 * are classified where they are produced (the issuer's zb_op_info.kind; for
 * GPU records the CUPTI map, harness/device/cuda/cupti_map.h, which makes
 * NCCL kernels, work on the comm stream and copies of a collective comm).
 * Every interval is clipped to the window first.
 *   comm_ns = |M|, compute_ns = |C|, overlap_ns = |M ∩ C|,
 *   exposed_comm_ns = |M| - |M ∩ C|, busy_ns = |M ∪ C|,
 *   overlap_pct = 100 * |M ∩ C| / |M|.
 *
 * No communication in the window (|M| = 0): overlap_pct is NaN and
 * comm_measured is false. A ratio over nothing is undefined, and 0 would read
 * as "nothing was hidden"; reports must print "not measured" (JSON null) for
 * it. zb_median and zb_min skip NaN entries, so a step without communication
 * drops out of the summary instead of pulling it to 0. */
#ifndef ZB_OVERLAP_H
#define ZB_OVERLAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zb_overlap {
    int64_t comm_ns;         /* |M| */
    int64_t compute_ns;      /* |C| */
    int64_t overlap_ns;      /* |M ∩ C| */
    int64_t exposed_comm_ns; /* |M| - |M ∩ C| */
    int64_t busy_ns;         /* |M ∪ C| */
    double overlap_pct;      /* 100 * |M ∩ C| / |M|; NaN when |M| = 0 */
    bool comm_measured;      /* |M| > 0: overlap_pct is a number */
    size_t n_comm_records;    /* records counted as comm (non-empty after clipping) */
    size_t n_compute_records; /* records counted as compute (likewise) */
} zb_overlap;

/* True when the record counts as communication (its kind is ZB_OP_COMM). */
bool zb_overlap_is_comm(const zb_trace_record *r);

/* Overlap of the n records `recs` (all of one rank; mixed ranks are
 * ZB_ERR_INVALID) inside [t0_ns, t1_ns), from each record's kind alone
 * (what is comm was decided where the record was made, trace.h). The input
 * is never modified; scratch is allocated and freed here (O(n) memory,
 * O(n log n) time). t1_ns < t0_ns, a record with end_ns < start_ns, or NULL
 * recs with n > 0 is ZB_ERR_INVALID.
 * An empty window or no records gives zeros and comm_measured = false. */
zb_status zb_overlap_compute(const zb_trace_record *recs, size_t n, int64_t t0_ns, int64_t t1_ns,
                             zb_overlap *out);

/* The same over only the records whose rank is `rank` (a trace that holds
 * several ranks' records). */
zb_status zb_overlap_compute_rank(const zb_trace_record *recs, size_t n, int rank, int64_t t0_ns,
                                  int64_t t1_ns, zb_overlap *out);

/* Median of v[0..n): sorts v in place (NaN entries last) and ignores NaN
 * entries; an even count gives the mean of the two middle values. NaN when
 * n = 0 or every entry is NaN. */
double zb_median(double *v, size_t n);

/* Smallest non-NaN value of v[0..n) (v is not modified); NaN when none. */
double zb_min(const double *v, size_t n);

/* Largest non-NaN value of v[0..n) (v is not modified); NaN when none. */
double zb_max(const double *v, size_t n);

#ifdef __cplusplus
}
#endif
#endif
