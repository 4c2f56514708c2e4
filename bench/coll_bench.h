/* The shared machinery of the collective benchmarks (nccl-tests style).
 *
 * A collective plugs in with its record (coll.h) and a benchmark entry made
 * by ZB_COLL_BENCH. coll_bench.c does the rest: the size sweep, out-of-place
 * and in-place runs, warm-up and timed loops on the comm stream, the check
 * from seeded data outside the timed loop, bandwidth by nccl-tests'
 * conventions (docs/design.md), the table and the JSON rows. */
#ifndef ZB_COLL_BENCH_H
#define ZB_COLL_BENCH_H

#include "bench.h"
#include "coll.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs the collective of ctx->bench->coll. */
zb_status zb_coll_bench_run(zb_bench_ctx *ctx);
/* Its largest buffers per rank (bench.h's memory_need). */
zb_status zb_coll_memory_need(const zb_bench_ctx *ctx, zb_mem_need *out);

/* Every collective's options: the sweep, with -i/--stepbytes in it, then
 * nccl-tests' other flags (below). */
extern const zb_opt_group *const zb_coll_opt_groups[];
/* nccl-tests' flags taken as no-ops, refused with what zerobench does
 * instead, or mapped (-J: --json) (coll_compat.c). */
extern const zb_opt_group zb_coll_opts_nccl_tests;

/* The benchmark entry of the collective record `def` named `name`. */
#define ZB_COLL_BENCH(name_, def_)                                                                  \
    {.name = name_, .groups = zb_coll_opt_groups, .flags = ZB_BENCH_SWEEP_HEADER,                  \
     .run = zb_coll_bench_run, .memory_need = zb_coll_memory_need, .coll = &def_}

/* The plain MPI call from this thread (coll_direct.c), the baseline
 * --compare-direct times: def->direct (blocking) or def->direct_start with
 * MPI_Wait (non-blocking), on a communicator of its own. open and close
 * are collective. */
typedef struct zb_coll_direct {
    const zb_coll_def *def;
    MPI_Comm comm;
} zb_coll_direct;

zb_status zb_coll_direct_open(zb_coll_direct *d, const zb_coll_def *def, const zb_coll_args *a);
/* This rank's seconds per call over `iters` after `warmup`. */
zb_status zb_coll_direct_time(zb_coll_direct *d, const zb_coll_args *a, bool blocking, int64_t iters,
                              int64_t warmup, double *seconds);
void zb_coll_direct_close(zb_coll_direct *d);

#ifdef __cplusplus
}
#endif
#endif
