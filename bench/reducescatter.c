/* zerobench reducescatter: nccl-tests' reduce_scatter_perf on the zerobench
 * harness. A sweep size is the input buffer: count per rank = size/(n*e). */
#include "coll_bench.h"

static size_t reducescatter_count(uint64_t size_bytes, size_t e, int n) {
    return (size_t)(size_bytes / ((uint64_t)e * (uint64_t)n));
}

static void reducescatter_place(zb_coll_args *a, void *buf_a, void *buf_b) {
    size_t e = zb_dtype_size(a->dtype);
    a->send = buf_a;
    a->recv = a->in_place ? (char *)buf_a + (size_t)a->rank * a->count * e : buf_b;
}

static const zb_coll_def reducescatter_def = {ZB_COLL_REDUCESCATTER, reducescatter_count,
                                              reducescatter_place};

static zb_status reducescatter_run(zb_bench_ctx *ctx) {
    return zb_coll_bench_run(ctx, &reducescatter_def);
}

const zb_bench zb_bench_reducescatter = {ZB_CMD_REDUCESCATTER, "reducescatter", reducescatter_run};
