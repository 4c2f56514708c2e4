/* The sim comm (harness/comm/sim): collectives on sim device streams that
 * move no data and take the time of the alpha-beta model (sim_coll.h) over
 * the cluster it models: virtual_nodes x virtual_gpus_per_node ranks of
 * which this process is rank 0 (ZeRO is symmetric: one rank's timeline is
 * every rank's), or, without a virtual shape, the MPI job it runs in (one
 * node). The front end counts each rank's bytes with that n. */
#include <mpi.h>
#include <stdlib.h>

#include "comm_backend.h"
#include "device_sim.h"
#include "sim_coll.h"

#define SIM_COMM_MAX_STREAMS 8

typedef struct sim_comm {
    zb_comm base;
    int nodes, gpus_per_node;
    int n_streams;
    zb_stream *streams[SIM_COMM_MAX_STREAMS];
} sim_comm;

static zb_status issue(zb_comm *zc, zb_stream *s, zb_coll kind, size_t count, zb_dtype dtype, const char *label,
                       int unit) {
    sim_comm *c = (sim_comm *)zc;
    bool mine = false;
    for (int i = 0; i < c->n_streams; i++) mine = mine || c->streams[i] == s;
    if (!mine) {
        return ZB_FAIL(ZB_ERR_INVALID, "rank %d: %s issued on stream '%s', which this comm was not created for",
                       zc->rank, zb_coll_name(kind), s->name);
    }
    uint64_t sent = kind == ZB_COLL_BARRIER ? 0 : zb_coll_sent_bytes(kind, count, zb_dtype_size(dtype), zc->n_ranks);
    zb_op_info info = {ZB_OP_COMM, label, unit, sent, 0};
    return zb_sim_issue(s, &info, zb_sim_coll_s(zb_sim_hw(zc->dev), kind, sent, c->nodes, c->gpus_per_node));
}

static zb_status sim_allgather(zb_comm *c, zb_stream *s, const void *send, void *recv, size_t count, zb_dtype dtype,
                               const char *label, int unit) {
    return issue(c, s, ZB_COLL_ALLGATHER, count, dtype, label, unit);
}
static zb_status sim_reducescatter(zb_comm *c, zb_stream *s, const void *send, void *recv, size_t count,
                                   zb_dtype dtype, const char *label, int unit) {
    return issue(c, s, ZB_COLL_REDUCESCATTER, count, dtype, label, unit);
}
static zb_status sim_allreduce(zb_comm *c, zb_stream *s, const void *send, void *recv, size_t count, zb_dtype dtype,
                               const char *label, int unit) {
    return issue(c, s, ZB_COLL_ALLREDUCE, count, dtype, label, unit);
}
static zb_status sim_barrier(zb_comm *c, zb_stream *s) { return issue(c, s, ZB_COLL_BARRIER, 0, ZB_DTYPE_F32, "barrier", -1); }

static void sim_destroy(zb_comm *c) { free(c); }

static const zb_comm_ops sim_comm_ops = {
    .name = "sim",
    .destroy = sim_destroy,
    .allgather = sim_allgather,
    .reducescatter = sim_reducescatter,
    .allreduce = sim_allreduce,
    .barrier = sim_barrier,
};

static zb_status sim_create(zb_device *dev, zb_stream *const *streams, int n_streams, const zb_comm_config *cfg,
                            zb_comm **out) {
    *out = NULL;
    if (!zb_sim_is_device(dev)) {
        return ZB_FAIL(ZB_ERR_INVALID, "--comm sim runs on --backend sim only (this run uses --backend %s)",
                       dev->ops->name);
    }
    if (cfg->virtual_nodes < 0 || cfg->virtual_gpus_per_node < 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "sim comm: %d nodes x %d GPUs per node: both must be positive",
                       cfg->virtual_nodes, cfg->virtual_gpus_per_node);
    }
    int nodes = cfg->virtual_nodes, per_node = cfg->virtual_gpus_per_node, rank = 0;
    if (nodes == 0 && per_node == 0) { /* the job it runs in, as one node */
        nodes = 1;
        MPI_Comm_size(MPI_COMM_WORLD, &per_node);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
    if (nodes == 0) nodes = 1;
    if (per_node == 0) per_node = 1;
    if (n_streams < 1 || n_streams > SIM_COMM_MAX_STREAMS) {
        return ZB_FAIL(ZB_ERR_INVALID, "a sim comm takes 1 to %d streams, not %d", SIM_COMM_MAX_STREAMS, n_streams);
    }
    ZB_TRY(zb_hw_sim_require(zb_sim_hw(dev), zb_sim_coll_needs(nodes, per_node)));
    sim_comm *c = (sim_comm *)calloc(1, sizeof *c);
    if (!c) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory creating the sim comm");
    c->base.ops = &sim_comm_ops;
    c->base.dev = dev;
    c->base.cfg = *cfg;
    if (c->base.cfg.timeout_s <= 0) c->base.cfg.timeout_s = 300.0;
    c->base.rank = rank;
    c->base.n_ranks = nodes * per_node;
    c->nodes = nodes;
    c->gpus_per_node = per_node;
    c->n_streams = n_streams;
    for (int i = 0; i < n_streams; i++) c->streams[i] = streams[i];
    *out = &c->base;
    return ZB_OK;
}

const zb_comm_backend zb_comm_backend_sim = {
    .name = "sim",
    .device_only = "sim",
    .create = sim_create,
};
