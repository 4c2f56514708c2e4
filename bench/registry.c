/* The benchmark registry and helpers every plug-in shares. */
#include <mpi.h>

#include "bench.h"
#include "mpi_wait.h"

static const zb_bench *const zb_benches[] = {
    &zb_bench_allgather,
    &zb_bench_reducescatter,
    &zb_bench_allreduce,
    &zb_bench_gemm,
    &zb_bench_step,
};

const zb_bench *zb_bench_find(zb_command cmd) {
    for (size_t i = 0; i < sizeof zb_benches / sizeof zb_benches[0]; i++) {
        if (zb_benches[i]->command == cmd) return zb_benches[i];
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
