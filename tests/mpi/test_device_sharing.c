/* MPI test of device sharing (bench/bench_mem.c), run at 2 and 4 ranks: a
 * fake device backend whose memory view names rank r's device "gpu-<r/2>"
 * (ranks 0 and 1 on one device, 2 and 3 on the next) or, for the last rank
 * of an odd count, nothing. Each rank must find how many ranks share its
 * device, take that share of the profile's memory (zb_step_memory_per_rank,
 * what `fits` and the memory checks use) and of a FLOP figure (the peak
 * MFU divides by), and a backend without a memory view must give 1. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "mpi_boot.h"
#include "step.h"
#include "zb_test.h"

static int my_rank;

static zb_status fake_view(zb_device *dev, zb_dev_mem_view *out) {
    (void)dev;
    memset(out, 0, sizeof *out);
    snprintf(out->device_id, sizeof out->device_id, "gpu-%d", my_rank / 2);
    return ZB_OK;
}

static zb_status failing_view(zb_device *dev, zb_dev_mem_view *out) {
    (void)dev;
    (void)out;
    return ZB_FAIL(ZB_ERR_UNSUPPORTED, "no view on this rank");
}

int main(int argc, char **argv) {
    if (zb_mpi_init(&argc, &argv) != ZB_OK) {
        fprintf(stderr, "zb_mpi_init: %s\n", zb_error_message());
        zb_mpi_abort(1);
    }
    zb_topology t;
    memset(&t, 0, sizeof t);
    ZB_CHECK_OK(zb_topology_discover(&t, 60.0));
    my_rank = t.rank;
    zb_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.timeout_s = 30.0;
    zb_device_backend backend;
    memset(&backend, 0, sizeof backend);
    backend.name = "fake";
    backend.mem_view = fake_view;
    zb_bench_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.cfg = &cfg;
    ctx.topo = t;
    ctx.backends.device = &backend;
    ctx.hw.mem_bytes = 80e9;

    /* Pairs of ranks share a device; a rank left alone does not. */
    ZB_CHECK_OK(zb_bench_find_device_sharing(&ctx));
    int want = (t.rank / 2) * 2 + 1 < t.n_ranks ? 2 : 1;
    ZB_CHECK_MSG(ctx.device_sharing == want, "rank %d of %d: sharing %d, want %d", t.rank, t.n_ranks,
                 ctx.device_sharing, want);
    ZB_CHECK(zb_bench_device_share(&ctx, 990e12) == 990e12 / want);
    ZB_CHECK_MSG(zb_step_memory_per_rank(&ctx) == 80e9 / want, "rank %d: memory per rank %.4g", t.rank,
                 zb_step_memory_per_rank(&ctx));

    /* A rank whose view fails joins with no id: it shares with no one, and
     * the others still find each other. */
    backend.mem_view = t.rank == 0 ? failing_view : fake_view;
    ZB_CHECK_OK(zb_bench_find_device_sharing(&ctx));
    want = t.rank == 0 ? 1 : (t.rank == 1 ? 1 : ((t.rank / 2) * 2 + 1 < t.n_ranks ? 2 : 1));
    ZB_CHECK_MSG(ctx.device_sharing == want, "rank %d, rank 0 without a view: sharing %d, want %d", t.rank,
                 ctx.device_sharing, want);

    /* No memory view (the cpu device): alone, and the whole figures. */
    backend.mem_view = NULL;
    ZB_CHECK_OK(zb_bench_find_device_sharing(&ctx));
    ZB_CHECK(ctx.device_sharing == 1 && zb_step_memory_per_rank(&ctx) == 80e9);

    int mine = zb_test_failures, total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    zb_test_failures = total;
    zb_mpi_finalize();
    if (t.rank != 0) return total == 0 ? 0 : 1;
    return zb_test_finish("test_device_sharing");
}
