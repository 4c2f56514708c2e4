/* zerobench reducescatter: nccl-tests' reduce_scatter_perf on the zerobench
 * harness, as one collective record (coll.h). A sweep size is the input
 * buffer: count per rank = size/(n*e). */
#include "coll_bench.h"

static double reducescatter_busbw_factor(int n) { return ((double)n - 1.0) / (double)n; }

/* This rank's block of the sum of every rank's input. */
static float reducescatter_expected(const zb_coll_args *a, size_t j) {
    return zb_coll_sum_value(a->seed, a->n_ranks, (size_t)a->rank * a->count + j);
}

static zb_status reducescatter_issue(zb_comm *c, zb_stream *s, const zb_coll_args *a, const char *label) {
    return zb_comm_reducescatter(c, s, a->send, a->recv, a->count, a->dtype, label, -1);
}

static int reducescatter_direct(const zb_coll_args *a, MPI_Comm comm) {
    return MPI_Reduce_scatter_block(a->send, a->recv, (int)a->count, MPI_FLOAT, MPI_SUM, comm);
}

static int reducescatter_direct_start(const zb_coll_args *a, MPI_Comm comm, MPI_Request *req) {
    return MPI_Ireduce_scatter_block(a->send, a->recv, (int)a->count, MPI_FLOAT, MPI_SUM, comm, req);
}

static const zb_coll_def reducescatter_def = {
    .name = "reducescatter",
    .kind = ZB_COLL_REDUCESCATTER,
    .redop = "sum",
    .send_per_rank = true,
    .recv_per_rank = false,
    .busbw_factor = reducescatter_busbw_factor,
    .sent_bytes = zb_coll_sent_bytes,
    .expected = reducescatter_expected,
    .issue = reducescatter_issue,
    .direct = reducescatter_direct,
    .direct_start = reducescatter_direct_start,
};

const zb_bench zb_bench_reducescatter = ZB_COLL_BENCH("reducescatter", reducescatter_def);
