/* Test hook, for tests only: ZB_TEST_DELAY_COMM=R:MS makes rank R arrive
 * MS milliseconds late at every collective it issues (not barriers), so a
 * test knows the arrival skew the step must report (docs/design.md §6, §9).
 *
 * The delay is a host op of its own on the collective's stream, run just
 * before the collective (kind copy, label "test_delay_comm": in neither the
 * comm nor the compute union, visible in the trace): the collective's record
 * then starts MS later on rank R, as if R had reached it late. The variable
 * is read here and nowhere else; main checks its syntax before any work. */
#ifndef ZB_COMM_DELAY_H
#define ZB_COMM_DELAY_H

#include <stdint.h>

#include "comm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_TEST_DELAY_COMM_ENV "ZB_TEST_DELAY_COMM"
#define ZB_TEST_DELAY_COMM_MAX_MS 10000.0

/* Parses "R:MS": a rank R >= 0 and a delay 0 < MS <= ZB_TEST_DELAY_COMM_MAX_MS
 * (a decimal number). ZB_ERR_INVALID naming the variable and the value. */
zb_status zb_comm_delay_parse(const char *value, int *rank, int64_t *delay_ns);
/* Checks the environment's ZB_TEST_DELAY_COMM, if set. */
zb_status zb_comm_delay_check(void);
/* Enqueues the delay on `s` before a collective of rank c->rank, when the
 * hook names that rank; ZB_OK and nothing issued otherwise. */
zb_status zb_comm_delay_issue(zb_comm *c, zb_stream *s, const char *label, int unit);

#ifdef __cplusplus
}
#endif
#endif
