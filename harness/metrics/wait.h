/* Waiting told apart from transfer in one rank's communication
 * (docs/design.md §6).
 *
 * A collective instance starts on each rank when its record starts: when
 * the rank's comm stream reaches it (arrival). It cannot finish anywhere
 * before its last rank arrived, so on each rank its record splits at the
 * last arrival (over ranks, clocks aligned) into
 *   wait     = [start, min(last_arrival, end))   waiting for a peer to arrive
 *   transfer = [max(start, last_arrival), end)   moving data after everyone came.
 * For one rank and window, with M and C the comm and compute unions of
 * overlap.h and W the union of the wait parts (W is inside M):
 *   exposed_wait_ns     = |W \ C|
 *   exposed_transfer_ns = |M \ C| - |W \ C| = |M \ (C ∪ W)|
 * so the two add up to overlap.h's exposed_comm_ns exactly. */
#ifndef ZB_WAIT_H
#define ZB_WAIT_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zb_wait_split {
    int64_t wait_ns;             /* sum of the collectives' wait parts (inside the window) */
    int64_t transfer_ns;         /* sum of their transfer parts */
    int64_t exposed_comm_ns;     /* |M \ C|, as overlap.h */
    int64_t exposed_wait_ns;     /* |W \ C| */
    int64_t exposed_transfer_ns; /* exposed_comm_ns - exposed_wait_ns */
} zb_wait_split;

/* One rank's split in [t0_ns, t1_ns): recs[0..n) are the rank's records
 * (one rank, as zb_overlap_compute), coll_idx[0..n_coll) the indices of its
 * collective records and last_arrival_ns[k] the last arrival of the
 * collective coll_idx[k] over all ranks, on this rank's clock. A last
 * arrival before a record's start (this rank was last) gives it no wait.
 * ZB_ERR_INVALID for what zb_overlap_compute refuses or an index out of range. */
zb_status zb_wait_split_compute(const zb_trace_record *recs, size_t n, int64_t t0_ns, int64_t t1_ns,
                                const size_t *coll_idx, const int64_t *last_arrival_ns, size_t n_coll,
                                zb_wait_split *out);

#ifdef __cplusplus
}
#endif
#endif
