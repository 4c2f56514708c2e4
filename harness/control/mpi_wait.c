/* Bounded waits on MPI requests and bounded collectives (see mpi_wait.h). */
#include "mpi_wait.h"

#include <sched.h>
#include <stdio.h>

#include "trace.h"

/* The rank messages name: this rank in MPI_COMM_WORLD, whatever comm the op
 * ran on (every comm here is a subset or copy of it). */
static int world_rank(void) {
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

int64_t zb_mpi_deadline_ns(double timeout_s) {
    if (!(timeout_s > 0)) timeout_s = ZB_MPI_WAIT_DEFAULT_S; /* also NaN */
    /* Saturate: 1e9 s is ~31 years, and ns past it would overflow int64. */
    if (timeout_s > 1e9) timeout_s = 1e9;
    return zb_now_ns() + (int64_t)(timeout_s * 1e9);
}

zb_mpi_poll zb_mpi_poll_until(MPI_Request *req, int64_t deadline_ns, int *mpi_rc) {
    int done = 0;
    for (;;) {
        int rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            if (mpi_rc) *mpi_rc = rc;
            return ZB_MPI_POLL_FAILED;
        }
        if (done) return ZB_MPI_POLL_DONE;
        if (zb_now_ns() > deadline_ns) return ZB_MPI_POLL_TIMED_OUT;
        /* Give the core to a runnable thread (a compute stream) between
         * polls: when ranks outnumber cores, a spinning poll would starve
         * the very compute it is meant to overlap. Free when nothing waits. */
        sched_yield();
    }
}

zb_status zb_mpi_call_failed(int mpi_rc, const char *call, const char *what) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(mpi_rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "MPI error %d", mpi_rc);
    return ZB_FAIL(ZB_ERR_MPI, "rank %d: %s for %s failed: %s", world_rank(), call, what, text);
}

zb_status zb_mpi_wait(MPI_Request *req, const char *what, double timeout_s) {
    int rc = MPI_SUCCESS;
    switch (zb_mpi_poll_until(req, zb_mpi_deadline_ns(timeout_s), &rc)) {
    case ZB_MPI_POLL_DONE: return ZB_OK;
    case ZB_MPI_POLL_FAILED: return zb_mpi_call_failed(rc, "MPI_Test", what);
    case ZB_MPI_POLL_TIMED_OUT: break;
    }
    return ZB_FAIL(ZB_ERR_TIMEOUT, "rank %d: %s did not complete within %g s (--timeout)", world_rank(), what,
                   timeout_s > 0 ? timeout_s : ZB_MPI_WAIT_DEFAULT_S);
}

/* The second half of every bounded collective: the start's code, then the wait. */
static zb_status started(int rc, const char *call, MPI_Request *req, const char *what, double timeout_s) {
    if (rc != MPI_SUCCESS) return zb_mpi_call_failed(rc, call, what);
    return zb_mpi_wait(req, what, timeout_s);
}

zb_status zb_mpi_allreduce_bounded(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                                   MPI_Comm comm, const char *what, double timeout_s) {
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_Iallreduce(send, recv, count, type, op, comm, &req);
    return started(rc, "MPI_Iallreduce", &req, what, timeout_s);
}

zb_status zb_mpi_bcast_bounded(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                               const char *what, double timeout_s) {
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_Ibcast(buf, count, type, root, comm, &req);
    return started(rc, "MPI_Ibcast", &req, what, timeout_s);
}

zb_status zb_mpi_allgather_bounded(const void *send, void *recv, int count, MPI_Datatype type, MPI_Comm comm,
                                   const char *what, double timeout_s) {
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_Iallgather(send, count, type, recv, count, type, comm, &req);
    return started(rc, "MPI_Iallgather", &req, what, timeout_s);
}

zb_status zb_mpi_gather_bounded(const void *send, void *recv, int count, MPI_Datatype type, int root,
                                MPI_Comm comm, const char *what, double timeout_s) {
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_Igather(send, count, type, recv, count, type, root, comm, &req);
    return started(rc, "MPI_Igather", &req, what, timeout_s);
}

zb_status zb_mpi_gatherv_bounded(const void *send, int send_count, void *recv, const int *recv_counts,
                                 const int *displs, MPI_Datatype type, int root, MPI_Comm comm,
                                 const char *what, double timeout_s) {
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_Igatherv(send, send_count, type, recv, recv_counts, displs, type, root, comm, &req);
    return started(rc, "MPI_Igatherv", &req, what, timeout_s);
}
