/* The memory check of the benchmarks that allocate buffers sized by their
 * flags (the collectives, gemm): their largest buffers per rank against the
 * memory a rank has, before anything is allocated, so that a size too big
 * for the machine ends with a message instead of the kernel killing a rank
 * minutes into the run. The step checks its own, finer prediction (step.c),
 * against the same host figure. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "mpi_wait.h"
#include "step.h"

zb_status zb_bench_find_device_sharing(zb_bench_ctx *ctx) {
    ctx->device_sharing = 1;
    if (!ctx->backends.device->mem_view || ctx->simulated) return ZB_OK;
    zb_dev_mem_view mv;
    memset(&mv, 0, sizeof mv);
    if (ctx->backends.device->mem_view(ctx->dev, &mv) != ZB_OK) {
        memset(&mv, 0, sizeof mv); /* unknown: this rank shares with no one */
        zb_error_clear();
    }
    mv.device_id[ZB_DEV_ID_BYTES - 1] = '\0';
    int n = ctx->topo.n_ranks;
    char *ids = (char *)calloc((size_t)n, ZB_DEV_ID_BYTES);
    if (!ids) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory gathering %d ranks' device ids", n);
    zb_status st = zb_mpi_allgather_bounded(mv.device_id, ids, ZB_DEV_ID_BYTES, MPI_CHAR, MPI_COMM_WORLD,
                                            "gathering the ranks' device ids", ctx->cfg->timeout_s);
    if (st == ZB_OK) ctx->device_sharing = zb_step_sharing_ranks(ids, ZB_DEV_ID_BYTES, n, ctx->topo.rank);
    free(ids);
    return st;
}

double zb_bench_device_share(const zb_bench_ctx *ctx, double whole) {
    return ctx->device_sharing > 1 ? whole / ctx->device_sharing : whole;
}

double zb_bench_host_memory_per_rank(const zb_bench_ctx *ctx) {
    double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    return phys / (ctx->topo.host_size > 0 ? ctx->topo.host_size : 1); /* emulated nodes share it */
}

/* A rank's device memory as the step counts it (zb_step_memory_per_rank):
 * the hardware profile's when it gives one (on cpu too: --hw then caps the
 * run); 0, not checked, when the profile measures it (cpu: the host check
 * covers it), has none (a GPU zerobench has no profile for), or on the sim
 * (it allocates nothing). */
static double device_memory_per_rank(const zb_bench_ctx *ctx) {
    if (ctx->simulated || ctx->hw.mem_bytes_measure) return 0.0;
    return zb_bench_device_share(ctx, ctx->hw.mem_bytes);
}

static zb_status refuse(const zb_bench_ctx *ctx, const zb_mem_need *need, const char *kind, double bytes,
                        const char *what, double have, const char *where) {
    return ZB_FAIL(ZB_ERR_INVALID, "%s %s: %s needs %.3g GB of %s memory per rank (%s) but a rank has %.3g GB "
                   "(%s); give a smaller %s, or --force to allocate anyway", need->flag, need->value,
                   ctx->bench->name, bytes / 1e9, kind, what, have / 1e9, where, need->flag);
}

/* The device check: only where device memory is known (have > 0). */
static zb_status check_device(const zb_bench_ctx *ctx, const zb_mem_need *need, double have) {
    if (have <= 0 || need->device_bytes <= have) return ZB_OK;
    char where[160];
    if (ctx->device_sharing > 1) {
        snprintf(where, sizeof where, "the device memory of hardware profile %s / %d ranks sharing the device",
                 ctx->hw.name, ctx->device_sharing);
    } else {
        snprintf(where, sizeof where, "the device memory of hardware profile %s", ctx->hw.name);
    }
    return refuse(ctx, need, "device", need->device_bytes, need->device_what, have, where);
}

/* The host check: the host buffers, and the device's too where they are
 * host memory (cpu), against the node's memory per rank. mine: this rank's
 * figure, to show its parts when it is the smallest. */
static zb_status check_host(const zb_bench_ctx *ctx, const zb_mem_need *need, double have, double mine) {
    bool on_host = zb_dev_mem_is_host(ctx->dev) && !ctx->simulated;
    double bytes = need->host_bytes + (on_host ? need->device_bytes : 0.0);
    if (bytes <= have) return ZB_OK;
    char what[200], where[160] = "machine memory / ranks on the machine, on the tightest machine";
    snprintf(what, sizeof what, "%s%s%s", on_host ? need->device_what : "", on_host ? " and " : "",
             need->host_what);
    if (have == mine) {
        snprintf(where, sizeof where, "machine memory %.3g GB / %d rank(s) on the machine",
                 mine * ctx->topo.host_size / 1e9, ctx->topo.host_size);
    }
    return refuse(ctx, need, "host", bytes, what, have, where);
}

zb_status zb_bench_check_memory(const zb_bench_ctx *ctx) {
    if (!ctx->bench->memory_need || ctx->cfg->force) return ZB_OK;
    zb_mem_need need;
    memset(&need, 0, sizeof need);
    ZB_TRY(ctx->bench->memory_need(ctx, &need));
    /* The smallest over ranks, so that every rank gives the same verdict
     * (nodes may differ in memory or in ranks). */
    double mine[2] = {zb_bench_host_memory_per_rank(ctx), device_memory_per_rank(ctx)}, have[2] = {0.0, 0.0};
    ZB_TRY(zb_mpi_allreduce_bounded(mine, have, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD,
                                    "agreeing on the memory a rank has", ctx->cfg->timeout_s));
    ZB_TRY(check_device(ctx, &need, have[1]));
    return check_host(ctx, &need, have[0], mine[0]);
}
