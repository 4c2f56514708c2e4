/* zerobench allgather: nccl-tests' all_gather_perf on the zerobench harness,
 * as one collective record (coll.h). A sweep size is the gathered (receive)
 * buffer: count per rank = size/(n*e). */
#include "coll_bench.h"

static double allgather_busbw_factor(int n) { return ((double)n - 1.0) / (double)n; }

/* Rank r's block of recv is rank r's input. */
static float allgather_expected(const zb_coll_args *a, size_t j) {
    return zb_coll_value(a->seed, (int)(j / a->count), j % a->count);
}

static zb_status allgather_issue(zb_comm *c, zb_stream *s, const zb_coll_args *a, const char *label) {
    return zb_comm_allgather(c, s, a->send, a->recv, a->count, a->dtype, label, -1);
}

static int allgather_direct(const zb_coll_args *a, MPI_Comm comm) {
    int n = (int)a->count;
    return MPI_Allgather(a->in_place ? MPI_IN_PLACE : a->send, n, MPI_FLOAT, a->recv, n, MPI_FLOAT, comm);
}

static int allgather_direct_start(const zb_coll_args *a, MPI_Comm comm, MPI_Request *req) {
    int n = (int)a->count;
    return MPI_Iallgather(a->in_place ? MPI_IN_PLACE : a->send, n, MPI_FLOAT, a->recv, n, MPI_FLOAT, comm, req);
}

static const zb_coll_def allgather_def = {
    .name = "allgather",
    .kind = ZB_COLL_ALLGATHER,
    .redop = "none",
    .send_per_rank = false,
    .recv_per_rank = true,
    .busbw_factor = allgather_busbw_factor,
    .sent_bytes = zb_coll_sent_bytes,
    .expected = allgather_expected,
    .issue = allgather_issue,
    .direct = allgather_direct,
    .direct_start = allgather_direct_start,
};

const zb_bench zb_bench_allgather = ZB_COLL_BENCH("allgather", allgather_def);
