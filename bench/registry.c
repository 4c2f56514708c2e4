/* The benchmark registry (its entries: bench_list.h), the lookups over it,
 * and helpers every plug-in shares. */
#include <mpi.h>

#include "bench.h"
#include "coll.h"
#include "mpi_wait.h"

#define ZB_BENCH_ENTRY(id, name) &zb_bench_##name,
static const zb_bench *const zb_benches[ZB_CMD_COUNT] = {ZB_BENCH_LIST(ZB_BENCH_ENTRY)};
#undef ZB_BENCH_ENTRY

const zb_bench *zb_bench_find(zb_command cmd) {
    return (cmd >= 0 && cmd < ZB_CMD_COUNT) ? zb_benches[cmd] : NULL;
}

const char *zb_command_name(zb_command c) {
    const zb_bench *b = zb_bench_find(c);
    return b ? b->name : "unknown";
}

const zb_coll_def *zb_coll_find(zb_coll kind) {
    for (int c = 0; c < ZB_CMD_COUNT; c++) {
        if (zb_benches[c]->coll && zb_benches[c]->coll->kind == kind) return zb_benches[c]->coll;
    }
    return NULL;
}

zb_status zb_bench_reduce_time(const zb_bench_ctx *ctx, double seconds, double *out) {
    double t = ctx->cfg->timeout_s, v = seconds;
    zb_status st = ZB_OK;
    switch (ctx->cfg->average) {
    case ZB_AVERAGE_RANK0:
        st = zb_mpi_bcast_bounded(&v, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, "broadcasting rank 0's time", t);
        break;
    case ZB_AVERAGE_MEAN:
        st = zb_mpi_allreduce_bounded(&seconds, &v, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                                      "summing the ranks' times", t);
        v /= ctx->topo.n_ranks;
        break;
    case ZB_AVERAGE_MIN:
        st = zb_mpi_allreduce_bounded(&seconds, &v, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD,
                                      "taking the ranks' minimum time", t);
        break;
    case ZB_AVERAGE_MAX:
        st = zb_mpi_allreduce_bounded(&seconds, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD,
                                      "taking the ranks' maximum time", t);
        break;
    }
    *out = v;
    return st;
}

zb_status zb_bench_sum(const zb_bench_ctx *ctx, int64_t v, int64_t *out) {
    *out = 0;
    return zb_mpi_allreduce_bounded(&v, out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, "summing the ranks' counts",
                                    ctx->cfg->timeout_s);
}
