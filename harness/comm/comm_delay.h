/* The ZB_TEST_DELAY_COMM test hook's effect (harness/core/test_hook.h reads
 * it): rank R arrives MS milliseconds late at every collective it issues
 * (not barriers), so a test knows the arrival skew the step must report
 * (docs/design.md §6, §8, §9).
 *
 * The delay is a host op of its own on the collective's stream, run just
 * before the collective (kind copy, label "test_delay_comm": in neither the
 * comm nor the compute union, visible in the trace): the collective's record
 * then starts MS later on rank R, as if R had reached it late. */
#ifndef ZB_COMM_DELAY_H
#define ZB_COMM_DELAY_H

#include "comm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueues the delay on `s` before a collective of rank c->rank when the
 * hook names that rank; ZB_OK and nothing issued otherwise (a bad value was
 * refused by main before any work, and reads as unset here). */
zb_status zb_comm_delay_issue(zb_comm *c, zb_stream *s, const char *label, int unit);

#ifdef __cplusplus
}
#endif
#endif
