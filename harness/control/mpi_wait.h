/* Bounded waits on MPI requests, and the bounded collectives built on them.
 *
 * Communication never hangs forever (docs/design.md §8), and a blocking MPI call
 * cannot be bounded: so every collective the harness makes (bench/
 * coll_direct.c's timed baseline aside) is started non-blocking and polled
 * here with MPI_Test until it completes or its timeout (--timeout) passes.
 * The poll is what makes progress (Open MPI has no progress thread);
 * sched_yield between polls gives the core to a runnable thread when ranks
 * outnumber cores.
 *
 * Messages are one line and name the rank (in MPI_COMM_WORLD), the op and
 * the timeout: "rank 1: gathering the trace records did not complete within
 * 300 s (--timeout)"; an MPI error: "rank 1: MPI_Igatherv for gathering the
 * trace records failed: <MPI_Error_string>".
 *
 * On a timeout the request is left active (MPI cannot cancel a collective),
 * so its buffers still belong to MPI: callers do not free heap buffers
 * then, and the job must end, as main ends it for ZB_ERR_TIMEOUT (MPI_Abort
 * on every rank, before any other MPI call). */
#ifndef ZB_MPI_WAIT_H
#define ZB_MPI_WAIT_H

#include <stdint.h>

#include <mpi.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --timeout's default (cli.c), for callers that have no run configuration,
 * and what a timeout_s <= 0 (or NaN) means. */
#define ZB_MPI_WAIT_DEFAULT_S 300.0

typedef enum zb_mpi_poll {
    ZB_MPI_POLL_DONE = 0,
    ZB_MPI_POLL_TIMED_OUT,
    ZB_MPI_POLL_FAILED
} zb_mpi_poll;

/* zb_now_ns() + timeout_s (<= 0 or NaN: the default), saturating. */
int64_t zb_mpi_deadline_ns(double timeout_s);

/* Polls `req` (MPI_Test, sched_yield between polls) until it completes or
 * zb_now_ns() passes deadline_ns; on FAILED *mpi_rc is MPI_Test's code.
 * Records no message: for callers with messages of their own (the MPI
 * comm's collectives, whose hot path formats nothing unless it fails). */
zb_mpi_poll zb_mpi_poll_until(MPI_Request *req, int64_t deadline_ns, int *mpi_rc);

/* Waits for `req` at most timeout_s: ZB_OK, ZB_ERR_TIMEOUT or ZB_ERR_MPI,
 * with the message above; `what` names the op ("gathering the trace
 * records"). */
zb_status zb_mpi_wait(MPI_Request *req, const char *what, double timeout_s);

/* Records an MPI failure: "rank R: CALL for WHAT failed: <MPI_Error_string>"
 * and returns ZB_ERR_MPI. */
zb_status zb_mpi_call_failed(int mpi_rc, const char *call, const char *what);

/* Bounded forms of the blocking collectives: the non-blocking call, then
 * zb_mpi_wait. Send and receive share one datatype. Collective over comm. */
zb_status zb_mpi_allreduce_bounded(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                                   MPI_Comm comm, const char *what, double timeout_s);
zb_status zb_mpi_bcast_bounded(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                               const char *what, double timeout_s);
zb_status zb_mpi_allgather_bounded(const void *send, void *recv, int count, MPI_Datatype type, MPI_Comm comm,
                                   const char *what, double timeout_s);
/* `count` elements from each rank, to root's recv (ignored elsewhere). */
zb_status zb_mpi_gather_bounded(const void *send, void *recv, int count, MPI_Datatype type, int root,
                                MPI_Comm comm, const char *what, double timeout_s);
zb_status zb_mpi_gatherv_bounded(const void *send, int send_count, void *recv, const int *recv_counts,
                                 const int *displs, MPI_Datatype type, int root, MPI_Comm comm,
                                 const char *what, double timeout_s);

#ifdef __cplusplus
}
#endif
#endif
