/* The compute a collective's start holds back, from one rank's trace
 * records (docs/design.md §6, "The hold at a collective's start").
 *
 * Where a rank's compute and its comm share cores (the cpu backend on one
 * core a rank), the thread that runs a collective takes the core when the
 * collective begins, and the compute stream resumes only when that thread
 * lets it go: a gap in compute at the collective's start, though compute
 * had work. On a GPU the same gap is a compute stream held behind a
 * collective's launch. For each collective starting in the window:
 *   - begun beside compute: its start lies inside a compute op, or in a gap
 *     between two shorter than ZB_HOLD_HANDOFF_NS (the stream's hand-off
 *     between ops): hold 0;
 *   - held: otherwise, when compute's next op starts before the collective
 *     ends (compute did not wait for the collective): the hold is the time
 *     from the collective's start to that op;
 *   - else compute waited for it, or had nothing more: not counted.
 * mean_hold_ns = held_ns / (n_beside + n_held), the hold a collective that
 * compute had work beside costs it; NaN when there is none. */
#ifndef ZB_COMM_HOLD_H
#define ZB_COMM_HOLD_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A compute gap this short is the hand-off between two ops (1-5 us on the
 * cpu backend, a launch on a GPU), not a wait. */
#define ZB_HOLD_HANDOFF_NS 10000

typedef struct zb_comm_hold {
    size_t n_beside, n_held; /* collectives begun beside compute; those that held it */
    int64_t held_ns;         /* the holds' sum */
    double mean_hold_ns;     /* held_ns / (n_beside + n_held); NaN when both are 0 */
} zb_comm_hold;

/* Over the n records `recs` of one rank, the collectives whose start lies
 * in [t0_ns, t1_ns) against every compute record. The input is not
 * modified; scratch is allocated and freed here. NULL recs with n > 0, or
 * a record with end_ns < start_ns, is ZB_ERR_INVALID. */
zb_status zb_comm_hold_compute(const zb_trace_record *recs, size_t n, int64_t t0_ns, int64_t t1_ns,
                               zb_comm_hold *out);

#ifdef __cplusplus
}
#endif
#endif
