/* zerobench allgather: nccl-tests' all_gather_perf on the zerobench harness.
 * A sweep size is the gathered (receive) buffer: count per rank = size/(n*e). */
#include "coll_bench.h"

static size_t allgather_count(uint64_t size_bytes, size_t e, int n) {
    return (size_t)(size_bytes / ((uint64_t)e * (uint64_t)n));
}

static void allgather_place(zb_coll_args *a, void *buf_a, void *buf_b) {
    size_t e = zb_dtype_size(a->dtype);
    a->recv = buf_b;
    a->send = a->in_place ? (char *)buf_b + (size_t)a->rank * a->count * e : buf_a;
}

static const zb_coll_def allgather_def = {ZB_COLL_ALLGATHER, allgather_count, allgather_place};

static zb_status allgather_run(zb_bench_ctx *ctx) { return zb_coll_bench_run(ctx, &allgather_def); }

const zb_bench zb_bench_allgather = {ZB_CMD_ALLGATHER, "allgather", allgather_run};
