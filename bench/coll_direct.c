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

zb_status zb_coll_direct_open(zb_coll_direct *d, const zb_coll_def *def, const zb_coll_args *a) {
    d->def = def;
    d->comm = MPI_COMM_NULL;
    if (a->dtype != ZB_DTYPE_F32 || a->in_place) {
        return ZB_FAIL(ZB_ERR_UNSUPPORTED, "--compare-direct times out-of-place float only");
    }
    if (MPI_Comm_dup(MPI_COMM_WORLD, &d->comm) != MPI_SUCCESS) {
        d->comm = MPI_COMM_NULL;
        return ZB_FAIL(ZB_ERR_MPI, "rank %d: MPI_Comm_dup for the direct baseline failed", a->rank);
    }
    return ZB_OK;
}

/* Seconds per call over `iters` after `warmup`, ranks started together. */
zb_status zb_coll_direct_time(zb_coll_direct *d, const zb_coll_args *a, bool blocking, int64_t iters,
                              int64_t warmup, double *seconds) {
    int (*call)(const zb_coll_def *, const zb_coll_args *, MPI_Comm) = blocking ? call_blocking : call_nonblocking;
    int rc = MPI_SUCCESS;
    for (int64_t i = 0; i < warmup && rc == MPI_SUCCESS; i++) rc = call(d->def, a, d->comm);
    if (rc == MPI_SUCCESS) rc = MPI_Barrier(d->comm);
    double t0 = MPI_Wtime();
    for (int64_t i = 0; i < iters && rc == MPI_SUCCESS; i++) rc = call(d->def, a, d->comm);
    *seconds = (MPI_Wtime() - t0) / (double)iters;
    if (rc != MPI_SUCCESS) {
        return ZB_FAIL(ZB_ERR_MPI, "rank %d: direct %s %s failed", a->rank,
                       blocking ? "blocking" : "non-blocking", d->def->name);
    }
    return ZB_OK;
}

void zb_coll_direct_close(zb_coll_direct *d) {
    if (d->comm != MPI_COMM_NULL) MPI_Comm_free(&d->comm);
}
