/* The hold at a collective's start (harness/metrics/comm_hold.h) on
 * hand-made records, one of each case: a collective begun inside a compute
 * op and one in a 2 us hand-off (beside: hold 0), one in a 99 us wait that
 * compute left before the collective ended (held 99 us), one in a 10 us
 * wait that outlasted it and one after the last op (not counted), one
 * outside the window; the mean is over the three counted. */
#include <math.h>
#include <string.h>

#include "comm_hold.h"
#include "zb_test.h"

#define US 1000

static zb_trace_record rec(zb_op_kind kind, int64_t s_us, int64_t e_us) {
    zb_trace_record r;
    memset(&r, 0, sizeof r);
    r.stream = kind == ZB_OP_COMM ? 1 : 0;
    r.kind = kind;
    r.unit = -1;
    r.start_ns = s_us * US;
    r.end_ns = e_us * US;
    strncpy(r.label, kind == ZB_OP_COMM ? "allgather" : "gemm", ZB_LABEL_MAX - 1);
    return r;
}

static void test_cases(void) {
    zb_trace_record r[] = {
        rec(ZB_OP_COMM, 200, 350),    /* in the 99 us wait [200, 299): held 99 us */
        rec(ZB_OP_COMPUTE, 0, 100),  rec(ZB_OP_COMPUTE, 102, 200), rec(ZB_OP_COMPUTE, 299, 400),
        rec(ZB_OP_COMPUTE, 410, 500), rec(ZB_OP_COMPUTE, 600, 700),
        rec(ZB_OP_COMM, 50, 60),      /* inside [0, 100): beside */
        rec(ZB_OP_COMM, 101, 150),    /* in the 2 us hand-off: beside */
        rec(ZB_OP_COMM, 400, 405),    /* in a 10 us wait it ended before: compute waited, not counted */
        rec(ZB_OP_COMM, 700, 800),    /* after the last op: not counted */
        rec(ZB_OP_COMM, 1000, 1100),  /* outside the window */
        rec(ZB_OP_COPY, 210, 220),    /* a copy is neither */
    };
    zb_comm_hold h;
    ZB_CHECK_OK(zb_comm_hold_compute(r, sizeof r / sizeof r[0], 0, 900 * US, &h));
    ZB_CHECK_MSG(h.n_beside == 2 && h.n_held == 1 && h.held_ns == 99 * US && fabs(h.mean_hold_ns - 33.0 * US) < 1e-6,
                 "beside %zu held %zu sum %lld mean %g", h.n_beside, h.n_held, (long long)h.held_ns, h.mean_hold_ns);
    /* A 10 us gap is a wait, a 9 us one a hand-off. */
    zb_trace_record g[] = {rec(ZB_OP_COMPUTE, 0, 10), rec(ZB_OP_COMPUTE, 19, 30), rec(ZB_OP_COMPUTE, 40, 50),
                           rec(ZB_OP_COMM, 12, 100), rec(ZB_OP_COMM, 32, 100)};
    ZB_CHECK_OK(zb_comm_hold_compute(g, 5, 0, 100 * US, &h));
    ZB_CHECK_MSG(h.n_beside == 1 && h.n_held == 1 && h.held_ns == 8 * US, "gaps: beside %zu held %zu sum %lld",
                 h.n_beside, h.n_held, (long long)h.held_ns);
}

static void test_nothing_and_bad(void) {
    zb_comm_hold h;
    ZB_CHECK_OK(zb_comm_hold_compute(NULL, 0, 0, 100, &h));
    ZB_CHECK(h.n_beside == 0 && h.n_held == 0 && isnan(h.mean_hold_ns));
    zb_trace_record only_compute[] = {rec(ZB_OP_COMPUTE, 0, 10)};
    ZB_CHECK_OK(zb_comm_hold_compute(only_compute, 1, 0, 100 * US, &h));
    ZB_CHECK(isnan(h.mean_hold_ns));
    zb_trace_record bad[] = {rec(ZB_OP_COMM, 10, 5)};
    ZB_CHECK(zb_comm_hold_compute(bad, 1, 0, 100 * US, &h) == ZB_ERR_INVALID);
    ZB_CHECK(zb_comm_hold_compute(NULL, 1, 0, 100 * US, &h) == ZB_ERR_INVALID);
}

int main(void) {
    test_cases();
    test_nothing_and_bad();
    return zb_test_finish("test_comm_hold");
}
