/* Helper program for test_trace_align_nodes.sh (not a test by itself): rank
 * 1 plays a node of its own and starts the clock sync, which rank 0 never
 * joins. Rank 1's wait must give up after the timeout with a message naming
 * the rank, the clock sync and --timeout, and the job must then end on every
 * rank (zb_mpi_abort), the way zerobench's main handles it. Rank 0 sleeps far
 * longer than the test allows, so only the abort can end it in time. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock_sync.h"
#include "mpi_boot.h"

int main(int argc, char **argv) {
    if (zb_mpi_init(&argc, &argv) != ZB_OK) return 1;
    zb_topology t;
    memset(&t, 0, sizeof t);
    MPI_Comm_rank(MPI_COMM_WORLD, &t.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t.n_ranks);
    if (t.rank == 0) {
        sleep(120);
        return 0;
    }
    t.node = 1;
    t.n_nodes = 2;
    zb_clock_sync s;
    zb_status st = zb_clock_sync_run(&t, 1.0, &s);
    fprintf(stderr, "zerobench: %s\n", st == ZB_OK ? "clock sync completed (unexpected)" : zb_error_message());
    zb_mpi_abort(st == ZB_ERR_TIMEOUT ? 3 : 4);
}
