/* MPI test of node-layout discovery (mpi_boot.h), run at 2 and 4 ranks on one
 * machine: without ZB_NODE_ID every rank is on one node, local rank == world
 * rank; the layout check accepts 1 x n and rejects 2 x n/2 on every rank
 * with a message naming --nodes. Emulated nodes (ZB_NODE_ID) are covered by
 * tests/mpi/test_launch_layout.sh. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_boot.h"
#include "zb_test.h"

static void test_single_node(const zb_topology *t) {
    ZB_CHECK_MSG(!t->node_emulated, "node_emulated set without ZB_NODE_ID");
    ZB_CHECK_MSG(t->n_nodes == 1, "rank %d: %d nodes, expected 1", t->rank, t->n_nodes);
    ZB_CHECK(t->node == 0);
    ZB_CHECK_MSG(t->local_rank == t->rank, "rank %d: local rank %d", t->rank, t->local_rank);
    ZB_CHECK(t->local_size == t->n_ranks);
    ZB_CHECK(t->local_size_min == t->n_ranks && t->local_size_max == t->n_ranks);
    ZB_CHECK(t->hostname[0] != '\0');
    ZB_CHECK_MSG(t->host_size == t->n_ranks, "rank %d: %d ranks on its machine, expected %d", t->rank, t->host_size,
                 t->n_ranks);
}

/* Every rank must see the same hostname as rank 0 (one machine). */
static void test_hostnames(const zb_topology *t) {
    char root[sizeof t->hostname];
    memcpy(root, t->hostname, sizeof root);
    ZB_CHECK(MPI_Bcast(root, (int)sizeof root, MPI_CHAR, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
    ZB_CHECK_MSG(strcmp(root, t->hostname) == 0, "rank %d on %s, rank 0 on %s", t->rank, t->hostname, root);
}

static void test_check(const zb_topology *t) {
    int n = t->n_ranks;
    ZB_CHECK_OK(zb_topology_check(t, 1, n));
    ZB_CHECK_OK(zb_topology_check(t, 1, 0));
    ZB_CHECK_OK(zb_topology_check(t, 0, 0));
    zb_status s = zb_topology_check(t, 2, n / 2);
    ZB_CHECK_MSG(s == ZB_ERR_INVALID, "rank %d: 2 x %d accepted on one node", t->rank, n / 2);
    ZB_CHECK_MSG(strstr(zb_error_message(), "--nodes") != NULL, "message does not name --nodes: %s",
                 zb_error_message());
    ZB_CHECK(zb_topology_check(t, 1, n + 1) == ZB_ERR_INVALID);
}

/* Discovery is collective and repeatable: a second call gives the same answer. */
static void test_repeat(const zb_topology *t) {
    zb_topology again;
    ZB_CHECK_OK(zb_topology_discover(&again, 60.0));
    ZB_CHECK(again.node == t->node && again.n_nodes == t->n_nodes && again.local_rank == t->local_rank);
}

int main(int argc, char **argv) {
    unsetenv("ZB_NODE_ID");
    zb_status s = zb_mpi_init(&argc, &argv);
    if (s != ZB_OK) {
        fprintf(stderr, "zb_mpi_init: %s\n", zb_error_message());
        zb_mpi_abort(1);
    }
    ZB_CHECK_OK(zb_mpi_init(&argc, &argv)); /* already initialized: only checks the level */
    zb_topology t;
    memset(&t, 0, sizeof t);
    s = zb_topology_discover(&t, 60.0);
    ZB_CHECK_OK(s);
    if (s == ZB_OK) {
        test_single_node(&t);
        test_hostnames(&t);
        test_check(&t);
        test_repeat(&t);
    }
    /* Every rank's verdict counts: the job fails when any rank failed. */
    int mine = zb_test_failures, total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    zb_test_failures = total;
    int rank = t.rank;
    zb_mpi_finalize();
    if (rank != 0) return total == 0 ? 0 : 1;
    return zb_test_finish("test_topology");
}
