/* Bandwidth and FLOP formulas (docs/design.md), checked against values
 * worked out by hand through the collective records (bench/coll.h), and the
 * comm-volume formula each rank's sent bytes follow. */
#include <math.h>

#include "coll.h"
#include "comm.h"
#include "metrics.h"
#include "zb_test.h"

static int near(double a, double b) { return fabs(a - b) <= 1e-12 * fmax(1.0, fabs(b)); }

/* A collective's algorithm and bus bandwidth, as coll_bench.c works them out. */
static double algbw_of(zb_coll kind, size_t count, size_t e, int n, double seconds) {
    const zb_coll_def *def = zb_coll_find(kind);
    return zb_gbps((double)zb_coll_size_bytes(def, count, e, n), seconds);
}
static double busbw_of(zb_coll kind, size_t count, size_t e, int n, double seconds) {
    return algbw_of(kind, count, e, n, seconds) * zb_coll_find(kind)->busbw_factor(n);
}

int main(void) {
    /* all-gather, 4 ranks, 1 Mi floats per rank, 1 ms: 16 MiB moved. */
    size_t count = 1u << 20;
    double algbw = algbw_of(ZB_COLL_ALLGATHER, count, 4, 4, 1e-3);
    ZB_CHECK(near(algbw, 4.0 * 4.0 * 1048576.0 / 1e-3 / 1e9));
    ZB_CHECK(near(busbw_of(ZB_COLL_ALLGATHER, count, 4, 4, 1e-3), algbw * 3.0 / 4.0));
    /* reduce-scatter: the same conventions as all-gather. */
    ZB_CHECK(near(busbw_of(ZB_COLL_REDUCESCATTER, count, 2, 8, 2e-3),
                  (double)count * 2 * 8 / 2e-3 / 1e9 * 7.0 / 8.0));
    /* all-reduce: count is the total; busbw = algbw * 2(n-1)/n. */
    double ar = algbw_of(ZB_COLL_ALLREDUCE, 1000, 4, 2, 1e-6);
    ZB_CHECK(near(ar, 4000.0 / 1e-6 / 1e9));
    ZB_CHECK(near(busbw_of(ZB_COLL_ALLREDUCE, 1000, 4, 2, 1e-6), ar * 2.0 * 1.0 / 2.0));
    ZB_CHECK(near(busbw_of(ZB_COLL_ALLREDUCE, 1000, 4, 8, 1e-6), 4.0 * 2.0 * 7.0 / 8.0));
    /* One rank moves nothing over the bus. */
    ZB_CHECK(busbw_of(ZB_COLL_ALLGATHER, count, 4, 1, 1e-3) == 0.0);
    ZB_CHECK(algbw_of(ZB_COLL_ALLGATHER, count, 4, 4, 0.0) == 0.0);
    /* GEMM: 2MNK. */
    ZB_CHECK(zb_gemm_flops(2048, 2048, 2048) == 2.0 * 2048.0 * 2048.0 * 2048.0);
    /* Sent bytes per rank. */
    ZB_CHECK(zb_coll_sent_bytes(ZB_COLL_ALLGATHER, 100, 4, 4) == 1200);
    ZB_CHECK(zb_coll_sent_bytes(ZB_COLL_REDUCESCATTER, 100, 2, 8) == 1400);
    ZB_CHECK(zb_coll_sent_bytes(ZB_COLL_ALLREDUCE, 400, 4, 4) == 2400);
    ZB_CHECK(zb_coll_sent_bytes(ZB_COLL_BARRIER, 0, 4, 4) == 0);
    /* The records count sent bytes by the same formula. */
    ZB_CHECK(zb_coll_find(ZB_COLL_ALLGATHER)->sent_bytes(ZB_COLL_ALLGATHER, 100, 4, 4) == 1200);
    ZB_CHECK(zb_coll_find(ZB_COLL_ALLREDUCE)->sent_bytes(ZB_COLL_ALLREDUCE, 400, 4, 4) == 2400);
    ZB_CHECK(zb_gbps(1e9, 2.0) == 0.5 && zb_gbps(1e9, -1.0) == 0.0);
    return zb_test_finish("test_metrics");
}
