/* zerobench allreduce: nccl-tests' all_reduce_perf on the zerobench harness.
 * A sweep size is the whole buffer: count = size/e. */
#include "coll_bench.h"

static size_t allreduce_count(uint64_t size_bytes, size_t e, int n) {
    (void)n;
    return (size_t)(size_bytes / e);
}

static void allreduce_place(zb_coll_args *a, void *buf_a, void *buf_b) {
    a->recv = buf_b;
    a->send = a->in_place ? buf_b : buf_a;
}

static const zb_coll_def allreduce_def = {ZB_COLL_ALLREDUCE, allreduce_count, allreduce_place};

static zb_status allreduce_run(zb_bench_ctx *ctx) { return zb_coll_bench_run(ctx, &allreduce_def); }

const zb_bench zb_bench_allreduce = {ZB_CMD_ALLREDUCE, "allreduce", allreduce_run};
