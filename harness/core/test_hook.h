/* Test hooks: environment variables that make a run misbehave on purpose so
 * that tests can check what the report says about it, each read here and
 * nowhere else (docs/design.md §8, "Test hooks"). No benchmark figure may
 * be taken from a run that uses one.
 *
 * ZB_TEST_DELAY_RANK=R:MS  rank R adds MS milliseconds of compute to each
 *     step (the step's engine issues a sleeping op on its compute stream,
 *     recorded as compute) and to each timed loop of gemm: a straggler the
 *     report must name. Unset or empty: no delay.
 * ZB_TEST_DELAY_COMM=R:MS  rank R reaches every collective it issues (not
 *     barriers) MS milliseconds late: the comm front end enqueues a sleeping
 *     op (kind copy, label "test_delay_comm") on the collective's stream
 *     just before it (harness/comm/comm_delay.h), so the arrival skew the
 *     step reports is known. Unset or empty: no delay. */
#ifndef ZB_TEST_HOOK_H
#define ZB_TEST_HOOK_H

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_TEST_DELAY_ENV "ZB_TEST_DELAY_RANK"
#define ZB_TEST_DELAY_MAX_MS 60000.0

/* Parses a ZB_TEST_DELAY_RANK value "R:MS" (R an integer >= 0, MS a real in
 * (0, ZB_TEST_DELAY_MAX_MS]); ZB_ERR_INVALID with a one-line message naming
 * the variable, the value and what is accepted. */
zb_status zb_test_delay_parse(const char *value, int *rank, double *ms);

/* The delay in ms this rank's steps take from ZB_TEST_DELAY_RANK (0 when it
 * is unset, empty or names another rank); ZB_ERR_INVALID on a bad value. */
zb_status zb_test_delay_ms(int rank, double *ms);

/* Sleeps *(const double *)ms_ptr milliseconds (signals do not cut it
 * short): the host op the hooks enqueue, so the delay lands in the stream's
 * order as a slow op would. Always ZB_OK. */
zb_status zb_test_delay_sleep(void *ms_ptr);

#define ZB_TEST_DELAY_COMM_ENV "ZB_TEST_DELAY_COMM"
/* ZB_TEST_DELAY_COMM's rank and delay, the same syntax as ZB_TEST_DELAY_RANK;
 * *rank = -1 when it is unset or empty; ZB_ERR_INVALID on a bad value. */
zb_status zb_test_delay_comm(int *rank, double *ms);

#ifdef __cplusplus
}
#endif
#endif
