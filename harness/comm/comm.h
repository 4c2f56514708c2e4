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
 * and the total for all-reduce, as in nccl-tests. A collective writes only
 * recv: in place, the parts of send outside recv keep their values.
 *
 * A comm is created collectively for a fixed set of streams: the MPI backend
 * duplicates one communicator per stream, so each MPI communicator is only
 * ever used from one thread. Every collective gives up after the configured
 * timeout with ZB_ERR_TIMEOUT and a message naming the rank, the op and the
 * unit; the caller then ends the job (zb_mpi_abort).
 *
 * Callers use the front end below (zb_comm_allgather ... zb_comm_wait), never
 * the ops table: it checks the arguments, counts the bytes sent, and keeps
 * per stream the last collective issued, so every backend's wait can name
 * it. A backend's ops see only calls the front end has checked. */
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
 * formula (docs/design.md): all-gather and reduce-scatter count*e*(n-1),
 * all-reduce 2*count*e*(n-1)/n. */
uint64_t zb_coll_sent_bytes(zb_coll c, size_t count, size_t elem_bytes, int n_ranks);

/* A backend's entry points. The front end calls them with a non-NULL comm
 * and stream, dtype float or bf16, non-NULL buffers (count > 0) and a
 * byte count that fits size_t; the label is never NULL. */
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
    /* Optional: the bounded wait for everything issued to `s` so far (see
     * zb_comm_wait); NULL: the front end's, zb_comm_wait_stream. */
    zb_status (*wait)(zb_comm *c, zb_stream *s, const char *op, int unit);
} zb_comm_ops;

typedef struct zb_comm_config {
    double timeout_s; /* every collective gives up after this many seconds */
    /* The cluster a simulated comm models (the sim: n_ranks = nodes x
     * gpus_per_node, this process rank 0); 0: the job's own. Real comms
     * ignore them. */
    int virtual_nodes, virtual_gpus_per_node;
} zb_comm_config;

/* The last collective the front end issued on one stream. */
#define ZB_COMM_MAX_STREAMS 8
typedef struct zb_comm_last {
    const zb_stream *stream; /* NULL: slot unused */
    zb_coll kind;
    int unit;
    char label[ZB_LABEL_MAX];
} zb_comm_last;

/* Every backend's comm struct starts with this header. */
struct zb_comm {
    const zb_comm_ops *ops;
    zb_device *dev;
    int rank;
    int n_ranks;
    zb_comm_config cfg;
    /* Bytes this rank has sent, by the formula above, per collective kind;
     * counted by the front end once a backend accepted the collective. */
    uint64_t sent_bytes[ZB_COLL_COUNT];
    /* Kept by the front end, for the timeout messages. */
    zb_comm_last last[ZB_COMM_MAX_STREAMS];
};

static inline void zb_comm_destroy(zb_comm *c) {
    if (c) c->ops->destroy(c);
}

/* ---- the front end (comm.c) ----------------------------------------------
 * Each checks its arguments (ZB_ERR_INVALID, one line naming the collective
 * and the bad value), then issues through the backend; a NULL label reads as
 * the collective's name. */
zb_status zb_comm_allgather(zb_comm *c, zb_stream *s, const void *send, void *recv, size_t count,
                            zb_dtype dtype, const char *label, int unit);
zb_status zb_comm_reducescatter(zb_comm *c, zb_stream *s, const void *send, void *recv,
                                size_t count, zb_dtype dtype, const char *label, int unit);
zb_status zb_comm_allreduce(zb_comm *c, zb_stream *s, const void *send, void *recv, size_t count,
                            zb_dtype dtype, const char *label, int unit);
zb_status zb_comm_barrier(zb_comm *c, zb_stream *s);

/* Waits, bounded by cfg.timeout_s, for everything issued to `s` so far
 * (collectives and any other work); `s` must be one of the comm's streams.
 * On expiry: ZB_ERR_TIMEOUT, "rank R: <collective> '<label>' (unit U) did
 * not complete within T s (--timeout)", naming the collective that is stuck
 * where the backend knows it (nccl), else the last one issued on `s`, or
 * `op`, the stream's name and `unit` when none was. A stream's sticky error
 * is returned as the device reported it. */
zb_status zb_comm_wait(zb_comm *c, zb_stream *s, const char *op, int unit);

/* The front end's wait, for backends whose collectives run in stream order
 * on the device (mpi): the device's stream sync under cfg.timeout_s, the
 * timeout worded as above. */
zb_status zb_comm_wait_stream(zb_comm *c, zb_stream *s, const char *op, int unit);

/* The last collective issued on `s` through the front end, or NULL. */
const zb_comm_last *zb_comm_last_issued(const zb_comm *c, const zb_stream *s);

#ifdef __cplusplus
}
#endif
#endif
