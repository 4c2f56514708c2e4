/* The baseline for --compare-direct: the same collective on the same buffers
 * through plain blocking MPI calls from the main thread (MPI_Allgather,
 * MPI_Reduce_scatter_block, MPI_Allreduce), so the harness's own cost (stream
 * thread, queue, non-blocking start and poll) shows as the difference. */
#include <mpi.h>

#include "coll_bench.h"

static int direct_call(const zb_coll_def *def, const zb_coll_args *a, MPI_Comm comm) {
    int n = (int)a->count;
    switch (def->kind) {
    case ZB_COLL_ALLGATHER:
        return MPI_Allgather(a->in_place ? MPI_IN_PLACE : a->send, n, MPI_FLOAT, a->recv, n,
                             MPI_FLOAT, comm);
    case ZB_COLL_REDUCESCATTER:
        return MPI_Reduce_scatter_block(a->send, a->recv, n, MPI_FLOAT, MPI_SUM, comm);
    case ZB_COLL_ALLREDUCE:
        return MPI_Allreduce(a->in_place ? MPI_IN_PLACE : a->send, a->recv, n, MPI_FLOAT,
                             MPI_SUM, comm);
    case ZB_COLL_BARRIER: return MPI_Barrier(comm);
    case ZB_COLL_COUNT: break;
    }
    return MPI_ERR_OTHER;
}

zb_status zb_coll_direct_time(const zb_coll_def *def, const zb_coll_args *a, int64_t iters,
                              int64_t warmup, double *seconds) {
    if (a->dtype != ZB_DTYPE_F32 || a->in_place) {
        return ZB_FAIL(ZB_ERR_UNSUPPORTED, "--compare-direct times out-of-place float only");
    }
    MPI_Comm comm;
    if (MPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) {
        return ZB_FAIL(ZB_ERR_MPI, "rank %d: MPI_Comm_dup for the direct baseline failed", a->rank);
    }
    int rc = MPI_SUCCESS;
    for (int64_t i = 0; i < warmup && rc == MPI_SUCCESS; i++) rc = direct_call(def, a, comm);
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    for (int64_t i = 0; i < iters && rc == MPI_SUCCESS; i++) rc = direct_call(def, a, comm);
    *seconds = (MPI_Wtime() - t0) / (double)iters;
    MPI_Comm_free(&comm);
    if (rc != MPI_SUCCESS) {
        return ZB_FAIL(ZB_ERR_MPI, "rank %d: direct %s failed", a->rank, zb_coll_name(def->kind));
    }
    return ZB_OK;
}
