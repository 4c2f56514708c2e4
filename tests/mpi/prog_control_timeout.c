/* Helper program for test_control_timeout.sh (not a test by itself): one
 * rank enters a control-plane collective (argv[1] says which) that the other
 * rank never joins. The waiting rank's collective must give up after 1 s
 * with a message naming the rank, the op and --timeout, and the job must
 * then end on every rank (zb_mpi_abort), the way zerobench's main handles
 * it. The other rank sleeps far longer than the test allows, so only the
 * abort can end it in time.
 *   topology  rank 1: zb_topology_discover     (an all-reduce; mpi_boot.c)
 *   meta      rank 1: zb_meta_collect          (an all-reduce; meta.c)
 *   nccl_id   rank 1: zb_nccl_bcast_id         (a broadcast from rank 0)
 *   trace     rank 0: zb_trace_export_chrome   (a gather to rank 0)
 *   wait      rank 1: zb_mpi_wait on an MPI_Ibarrier
 *   idle      every rank sleeps: the peer of a zerobench rank that waits
 * Exit: 3 when the wait timed out (the code passed to MPI_Abort), 4 when it
 * ended otherwise, 1 on a usage or setup error. */
#include <jansson.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "meta.h"
#include "mpi_boot.h"
#include "mpi_wait.h"
#include "nccl_boot.h"
#include "trace_export.h"

static zb_status fake_id(void *ctx, unsigned char id[ZB_NCCL_ID_BYTES]) {
    (void)ctx;
    memset(id, 7, ZB_NCCL_ID_BYTES);
    return ZB_OK;
}

static zb_status run_case(const char *which) {
    const double timeout_s = 1.0;
    if (!strcmp(which, "topology")) {
        zb_topology t;
        return zb_topology_discover(&t, timeout_s);
    }
    if (!strcmp(which, "meta")) {
        json_t *meta = json_object();
        zb_status st = zb_meta_collect(meta, 0, NULL, NULL, timeout_s);
        json_decref(meta);
        return st;
    }
    if (!strcmp(which, "nccl_id")) {
        unsigned char id[ZB_NCCL_ID_BYTES];
        return zb_nccl_bcast_id(MPI_COMM_WORLD, fake_id, NULL, timeout_s, id);
    }
    if (!strcmp(which, "trace")) {
        zb_trace tr;
        if (zb_trace_init(&tr, 0, true) != ZB_OK) return ZB_ERR_NOMEM;
        /* Never written: rank 1 never sends its records. */
        return zb_trace_export_chrome(&tr, NULL, "/nonexistent/never-written.json", timeout_s);
    }
    MPI_Request req = MPI_REQUEST_NULL;
    if (MPI_Ibarrier(MPI_COMM_WORLD, &req) != MPI_SUCCESS) return ZB_ERR_MPI;
    return zb_mpi_wait(&req, "the test's barrier", timeout_s);
}

int main(int argc, char **argv) {
    if (zb_mpi_init(&argc, &argv) != ZB_OK) return 1;
    const char *which = argc > 1 ? argv[1] : "";
    const char *cases[] = {"topology", "meta", "nccl_id", "trace", "wait", "idle"};
    bool known = false;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) known |= !strcmp(which, cases[i]);
    if (!known) {
        fprintf(stderr, "usage: prog_control_timeout topology|meta|nccl_id|trace|wait|idle\n");
        zb_mpi_abort(1);
    }
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int waiter = !strcmp(which, "trace") ? 0 : 1; /* a gather's root waits; a non-root need not */
    if (!strcmp(which, "idle") || rank != waiter) {
        sleep(120);
        return 0;
    }
    zb_status st = run_case(which);
    fprintf(stderr, "zerobench: %s\n", st == ZB_OK ? "the collective completed (unexpected)" : zb_error_message());
    zb_mpi_abort(st == ZB_ERR_TIMEOUT ? 3 : 4);
}
