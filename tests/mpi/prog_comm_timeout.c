/* Helper program for test_comm_timeout.sh (not a test by itself): rank 0
 * issues the collective named by argv[1] (allgather, the default,
 * reducescatter or allreduce) that rank 1 never joins. Rank 0's collective must
 * give up after the comm timeout with a message naming the rank, the op and
 * the unit, and the job must then end on every rank (zb_mpi_abort), the way
 * zerobench's main handles it. Rank 1 sleeps far longer than the test
 * allows, so only the abort can end it in time. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "comm.h"
#include "comm_mpi.h"
#include "mpi_boot.h"
#include "device_cpu.h"

int main(int argc, char **argv) {
    if (zb_mpi_init(&argc, &argv) != ZB_OK) return 1;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    zb_device_config dc = {rank, rank, 1, 30, NULL};
    zb_device *dev = NULL;
    zb_stream *s = NULL;
    zb_comm *comm = NULL;
    if (zb_device_cpu_create(&dc, &dev) != ZB_OK || dev->ops->stream_create(dev, "comm", &s) != ZB_OK) {
        return 1;
    }
    zb_comm_config cc = {1.0};
    if (zb_comm_mpi_create(dev, &s, 1, &cc, &comm) != ZB_OK) return 1;
    if (rank != 0) {
        sleep(120);
        return 0;
    }
    /* Big enough for every path: 1 Mi floats (the all-reduce's ring and
     * the all-gather's own-block copy run before the peer is needed). */
    static float send[1 << 20], recv[1 << 21];
    const char *kind = argc > 1 ? argv[1] : "allgather";
    zb_status st;
    if (!strcmp(kind, "reducescatter")) {
        st = zb_comm_reducescatter(comm, s, send, recv, 1 << 19, ZB_DTYPE_F32, "layer7.reducescatter", 7);
    } else if (!strcmp(kind, "allreduce")) {
        st = zb_comm_allreduce(comm, s, send, recv, 1 << 20, ZB_DTYPE_F32, "layer7.allreduce", 7);
    } else {
        st = zb_comm_allgather(comm, s, send, recv, 1 << 20, ZB_DTYPE_F32, "layer7.allgather", 7);
    }
    if (st == ZB_OK) st = zb_comm_wait(comm, s, "the test's wait", -1);
    fprintf(stderr, "zerobench: %s\n", st == ZB_OK ? "collective completed (unexpected)" : zb_error_message());
    zb_mpi_abort(st == ZB_ERR_TIMEOUT ? 3 : 4);
}
