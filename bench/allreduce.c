/* zerobench allreduce: nccl-tests' all_reduce_perf on the zerobench harness,
 * as one collective record (coll.h). A sweep size is the whole buffer:
 * count = size/e. */
#include "coll_bench.h"

static double allreduce_busbw_factor(int n) { return 2.0 * ((double)n - 1.0) / (double)n; }

/* The sum of every rank's input. */
static float allreduce_expected(const zb_coll_args *a, size_t j) {
    return zb_coll_sum_value(a->seed, a->n_ranks, j);
}

static zb_status allreduce_issue(zb_comm *c, zb_stream *s, const zb_coll_args *a, const char *label) {
    return zb_comm_allreduce(c, s, a->send, a->recv, a->count, a->dtype, label, -1);
}

static int allreduce_direct(const zb_coll_args *a, MPI_Comm comm) {
    return MPI_Allreduce(a->in_place ? MPI_IN_PLACE : a->send, a->recv, (int)a->count, MPI_FLOAT, MPI_SUM,
                         comm);
}

static int allreduce_direct_start(const zb_coll_args *a, MPI_Comm comm, MPI_Request *req) {
    return MPI_Iallreduce(a->in_place ? MPI_IN_PLACE : a->send, a->recv, (int)a->count, MPI_FLOAT, MPI_SUM, comm,
                          req);
}

static const zb_coll_def allreduce_def = {
    .name = "allreduce",
    .kind = ZB_COLL_ALLREDUCE,
    .redop = "sum",
    .send_per_rank = false,
    .recv_per_rank = false,
    .busbw_factor = allreduce_busbw_factor,
    .sent_bytes = zb_coll_sent_bytes,
    .expected = allreduce_expected,
    .issue = allreduce_issue,
    .direct = allreduce_direct,
    .direct_start = allreduce_direct_start,
};

const zb_bench zb_bench_allreduce = ZB_COLL_BENCH("allreduce", allreduce_def);
