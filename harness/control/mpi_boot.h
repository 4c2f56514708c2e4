/* MPI bootstrap: init with MPI_THREAD_MULTIPLE (each stream thread drives its
 * own communicator), node-layout discovery, the --nodes/--gpus-per-node
 * layout check, finalize and abort.
 *
 * A "node" is the set of ranks sharing memory (MPI_COMM_TYPE_SHARED), or,
 * when env ZB_NODE_ID is set (zerobench --emulate-nodes, see launch.h), the
 * set of ranks with the same ZB_NODE_ID. Nodes are numbered 0..n_nodes-1 in
 * the order of their lowest world rank. */
#ifndef ZB_MPI_BOOT_H
#define ZB_MPI_BOOT_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zb_topology {
    int rank, n_ranks;            /* MPI_COMM_WORLD */
    int local_rank, local_size;   /* within this rank's node */
    int node, n_nodes;            /* node index 0..n_nodes-1, ordered by lowest world rank on the node */
    int local_size_min;           /* fewest ranks on any node */
    int local_size_max;           /* most ranks on any node */
    /* Ranks on this rank's machine: the same kernel (boot id), so nodes
     * emulated through ZB_NODE_ID or network namespaces on one machine count
     * together. They share its cores and memory, whatever node they play. */
    int host_size;
    char hostname[256];
    bool node_emulated;           /* node identity came from ZB_NODE_ID */
} zb_topology;

/* MPI_Init_thread asking for MPI_THREAD_MULTIPLE; ZB_ERR_MPI when the call
 * fails or the library provides less (the message names the level it
 * provided). Calling it when MPI is already initialized only checks the level. */
zb_status zb_mpi_init(int *argc, char ***argv);

/* MPI_Finalize when MPI is initialized and not yet finalized. */
void zb_mpi_finalize(void);

/* Ends every rank with `code`: prints nothing itself; flushes stdio, then
 * MPI_Abort(MPI_COMM_WORLD, code) when MPI is initialized and not finalized,
 * else exit(code). Never returns. */
void zb_mpi_abort(int code)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;

/* Parses a ZB_NODE_ID value: a non-negative decimal integer that fits in an
 * int, nothing else. ZB_ERR_INVALID naming ZB_NODE_ID and the value. */
zb_status zb_node_id_parse(const char *value, int *out);

/* Collective over MPI_COMM_WORLD: fills `out` (see zb_topology). Every rank
 * returns the same status: ZB_ERR_INVALID when some rank's ZB_NODE_ID is not a
 * non-negative integer (naming the value) or when ZB_NODE_ID is set on some
 * ranks but not all; ZB_ERR_MPI when an MPI call fails. Each collective
 * waits at most timeout_s (--timeout; <= 0: ZB_MPI_WAIT_DEFAULT_S), else
 * ZB_ERR_TIMEOUT on the ranks that waited (mpi_wait.h): end the job then.
 * The communicator splits have no non-blocking form in MPI 3.1 and block:
 * every rank reaches them unconditionally, right after a bounded all-reduce
 * that every rank has joined. */
zb_status zb_topology_discover(zb_topology *out, double timeout_s);

/* No communication; every rank reaches the same verdict from the same data.
 * nodes <= 0: nothing was asked, ZB_OK. Otherwise the job must span exactly
 * `nodes` nodes and, when per_node > 0, every node must hold exactly
 * `per_node` ranks; else ZB_ERR_INVALID, e.g. "--nodes 2 --gpus-per-node 2
 * asks for 2 nodes x 2 ranks, but the job has 1 node(s) with 4 rank(s) each". */
zb_status zb_topology_check(const zb_topology *t, int nodes, int per_node);

/* One line describing the layout, e.g. "4 ranks on 2 nodes (2 per node, emulated)". */
void zb_topology_describe(const zb_topology *t, char *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
