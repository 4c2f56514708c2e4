/* The baseline for --compare-direct: the same collective on the same buffers
 * through its record's plain MPI calls from the main thread, blocking and
 * non-blocking (started, then MPI_Wait), so the harness's own cost (stream
 * thread, queue, start and poll) shows as the difference from the better
 * of the two. */
#include "coll_bench.h"

static int call_blocking(const zb_coll_def *def, const zb_coll_args *a, MPI_Comm comm) {
    return def->direct(a, comm);
}

static int call_nonblocking(const zb_coll_def *def, const zb_coll_args *a, MPI_Comm comm) {
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = def->direct_start(a, comm, &req);
    return rc == MPI_SUCCESS ? MPI_Wait(&req, MPI_STATUS_IGNORE) : rc;
}

/* Seconds per call of `call` over `iters` after `warmup`, ranks started
 * together. */
static int time_calls(int (*call)(const zb_coll_def *, const zb_coll_args *, MPI_Comm), const zb_coll_def *def,
                      const zb_coll_args *a, MPI_Comm comm, int64_t iters, int64_t warmup, double *seconds) {
    int rc = MPI_SUCCESS;
    for (int64_t i = 0; i < warmup && rc == MPI_SUCCESS; i++) rc = call(def, a, comm);
    if (rc == MPI_SUCCESS) rc = MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    for (int64_t i = 0; i < iters && rc == MPI_SUCCESS; i++) rc = call(def, a, comm);
    *seconds = (MPI_Wtime() - t0) / (double)iters;
    return rc;
}

zb_status zb_coll_direct_time(const zb_coll_def *def, const zb_coll_args *a, int64_t iters,
                              int64_t warmup, double *blocking_s, double *nonblocking_s) {
    if (a->dtype != ZB_DTYPE_F32 || a->in_place) {
        return ZB_FAIL(ZB_ERR_UNSUPPORTED, "--compare-direct times out-of-place float only");
    }
    MPI_Comm comm;
    if (MPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) {
        return ZB_FAIL(ZB_ERR_MPI, "rank %d: MPI_Comm_dup for the direct baseline failed", a->rank);
    }
    int rc = time_calls(call_blocking, def, a, comm, iters, warmup, blocking_s);
    if (rc == MPI_SUCCESS) rc = time_calls(call_nonblocking, def, a, comm, iters, warmup, nonblocking_s);
    MPI_Comm_free(&comm);
    if (rc != MPI_SUCCESS) {
        return ZB_FAIL(ZB_ERR_MPI, "rank %d: direct %s failed", a->rank, def->name);
    }
    return ZB_OK;
}
