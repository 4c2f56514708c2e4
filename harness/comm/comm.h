/* The comm interface: all-gather, reduce-scatter, all-reduce and barrier, each
 * issued on a stream and run in that stream's order (like NCCL).
 *
 * Buffer conventions are NCCL's, whatever the backend:
 *   all-gather      send: count elems; recv: count * n elems, rank r's block at
 *                   recv + r*count. In place when send == recv + rank*count.
 *   reduce-scatter  send: count * n elems; recv: count elems (the sum of every
 *                   rank's block `rank`). In place when recv == send + rank*count.
 *   all-reduce      send and recv: count elems. In place when send == recv.
 * Reductions are sums. `count` is per rank for all-gather and reduce-scatter
 * and the total for all-reduce, as in nccl-tests.
 *
 * A comm is created collectively for a fixed set of streams: the MPI backend
 * duplicates one communicator per stream, so each MPI communicator is only
 * ever used from one thread. Every collective gives up after the configured
 * timeout with ZB_ERR_TIMEOUT and a message naming the rank, the op and the
 * unit; the caller then ends the job (zb_mpi_abort). */
#ifndef ZB_COMM_H
#define ZB_COMM_H

#include <stdint.h>

#include "device.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zb_comm zb_comm;

typedef enum zb_coll {
    ZB_COLL_ALLGATHER = 0,
    ZB_COLL_REDUCESCATTER,
    ZB_COLL_ALLREDUCE,
    ZB_COLL_BARRIER,
    ZB_COLL_COUNT
} zb_coll;

const char *zb_coll_name(zb_coll c);

/* Bytes one rank sends for one collective, counted by the algorithm-free
 * formula (DESIGN.md §4): all-gather and reduce-scatter count*e*(n-1),
 * all-reduce 2*count*e*(n-1)/n. */
uint64_t zb_coll_sent_bytes(zb_coll c, size_t count, size_t elem_bytes, int n_ranks);

typedef struct zb_comm_ops {
    const char *name;
    void (*destroy)(zb_comm *c);
    zb_status (*allgather)(zb_comm *c, zb_stream *s, const void *send, void *recv, size_t count,
                           zb_dtype dtype, const char *label, int unit);
    zb_status (*reducescatter)(zb_comm *c, zb_stream *s, const void *send, void *recv,
                               size_t count, zb_dtype dtype, const char *label, int unit);
    zb_status (*allreduce)(zb_comm *c, zb_stream *s, const void *send, void *recv, size_t count,
                           zb_dtype dtype, const char *label, int unit);
    zb_status (*barrier)(zb_comm *c, zb_stream *s);
} zb_comm_ops;

typedef struct zb_comm_config {
    double timeout_s; /* every collective gives up after this many seconds */
} zb_comm_config;

/* Every backend's comm struct starts with this header. */
struct zb_comm {
    const zb_comm_ops *ops;
    zb_device *dev;
    int rank;
    int n_ranks;
    zb_comm_config cfg;
    /* Bytes this rank has sent, by the formula above, per collective kind. */
    uint64_t sent_bytes[ZB_COLL_COUNT];
};

static inline void zb_comm_destroy(zb_comm *c) {
    if (c) c->ops->destroy(c);
}

#ifdef __cplusplus
}
#endif
#endif
