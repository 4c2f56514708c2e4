/* The benchmark registry and helpers every plug-in shares. */
#include <mpi.h>

#include "bench.h"

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

double zb_bench_reduce_time(const zb_bench_ctx *ctx, double seconds) {
    double out = seconds;
    switch (ctx->cfg->average) {
    case ZB_AVERAGE_RANK0: MPI_Bcast(&out, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
    case ZB_AVERAGE_MEAN:
        MPI_Allreduce(&seconds, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        out /= ctx->topo.n_ranks;
        break;
    case ZB_AVERAGE_MIN: MPI_Allreduce(&seconds, &out, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD); break;
    case ZB_AVERAGE_MAX: MPI_Allreduce(&seconds, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD); break;
    }
    return out;
}

int64_t zb_bench_sum(int64_t v) {
    int64_t out = 0;
    MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    return out;
}
