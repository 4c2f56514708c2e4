/* Compute/communication overlap from trace records (DESIGN.md §4, Holistic
 * Trace Analysis's definition), and the median/min helpers reports use to
 * summarize per-step, per-rank values.
 *
 * For one rank and a time window [t0_ns, t1_ns):
 *   M = union of comm intervals: records whose kind is ZB_OP_COMM, or that ran
 *       on the designated comm stream, or whose label names an NCCL kernel
 *       ("ncclDevKernel", "ncclSymkDevKernel", "ncclKernel", "oneRankReduce");
 *   C = union of compute intervals: kind ZB_OP_COMPUTE and not comm by the
 *       rule above. Copies (ZB_OP_COPY off the comm stream) are in neither.
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

/* Pass as comm_stream when no stream is designated the comm stream. */
#define ZB_OVERLAP_NO_COMM_STREAM (-1)

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

/* True when `label` (at most ZB_LABEL_MAX bytes, need not be terminated)
 * names an NCCL kernel, which always counts as communication. */
bool zb_overlap_is_nccl_label(const char *label);

/* True when the record counts as communication under the rule above. */
bool zb_overlap_is_comm(const zb_trace_record *r, int comm_stream);

/* Overlap of the n records `recs` (all of one rank; mixed ranks are
 * ZB_ERR_INVALID) inside [t0_ns, t1_ns). `comm_stream` is the comm stream's
 * id or ZB_OVERLAP_NO_COMM_STREAM. The input is never modified; scratch is
 * allocated and freed here (O(n) memory, O(n log n) time). t1_ns < t0_ns, a
 * record with end_ns < start_ns, or NULL recs with n > 0 is ZB_ERR_INVALID.
 * An empty window or no records gives zeros and comm_measured = false. */
zb_status zb_overlap_compute(const zb_trace_record *recs, size_t n, int comm_stream,
                             int64_t t0_ns, int64_t t1_ns, zb_overlap *out);

/* The same over only the records whose rank is `rank` (a trace that holds
 * several ranks' records). */
zb_status zb_overlap_compute_rank(const zb_trace_record *recs, size_t n, int rank,
                                  int comm_stream, int64_t t0_ns, int64_t t1_ns,
                                  zb_overlap *out);

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
