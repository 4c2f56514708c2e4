/* The baseline for --compare-direct: the same collective on the same buffers
 * through its record's plain blocking MPI call from the main thread, so the
 * harness's own cost (stream thread, queue, non-blocking start and poll)
 * shows as the difference. */
#include "coll_bench.h"

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
    for (int64_t i = 0; i < warmup && rc == MPI_SUCCESS; i++) rc = def->direct(a, comm);
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    for (int64_t i = 0; i < iters && rc == MPI_SUCCESS; i++) rc = def->direct(a, comm);
    *seconds = (MPI_Wtime() - t0) / (double)iters;
    MPI_Comm_free(&comm);
    if (rc != MPI_SUCCESS) {
        return ZB_FAIL(ZB_ERR_MPI, "rank %d: direct %s failed", a->rank, def->name);
    }
    return ZB_OK;
}
