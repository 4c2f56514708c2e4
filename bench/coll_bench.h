/* The shared machinery of the collective benchmarks (nccl-tests style).
 *
 * A collective plugs in with a small table (zb_coll_def): how a size in
 * bytes becomes element counts, and how to issue it. coll_bench.c does the
 * rest: the size sweep, out-of-place and in-place runs, warm-up and timed
 * loops on the comm stream, the check from seeded data outside the timed
 * loop, bandwidth by DESIGN.md §4, the table and the JSON rows. */
#ifndef ZB_COLL_BENCH_H
#define ZB_COLL_BENCH_H

#include "bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One collective call's buffers, in the comm.h conventions. */
typedef struct zb_coll_args {
    void *send;
    void *recv;
    size_t count; /* per rank (all-gather, reduce-scatter) or total (all-reduce) */
    zb_dtype dtype;
    int rank, n_ranks;
    bool in_place;
    uint64_t seed;
} zb_coll_args;

typedef struct zb_coll_def {
    zb_coll kind;
    /* `count` for a sweep size (total bytes, as nccl-tests counts them). */
    size_t (*count_for)(uint64_t size_bytes, size_t elem_bytes, int n_ranks);
    /* Points send/recv into the two buffers, for out-of-place or in-place. */
    void (*place)(zb_coll_args *a, void *buf_a, void *buf_b);
} zb_coll_def;

zb_status zb_coll_bench_run(zb_bench_ctx *ctx, const zb_coll_def *def);

/* Seeded input data and its check (coll_data.c). */
void zb_coll_init_input(const zb_coll_def *def, const zb_coll_args *a);
int64_t zb_coll_count_wrong(const zb_coll_def *def, const zb_coll_args *a);

/* The same collective through MPI directly, blocking, from this thread
 * (coll_direct.c): the baseline --compare-direct times. */
zb_status zb_coll_direct_time(const zb_coll_def *def, const zb_coll_args *a, int64_t iters,
                              int64_t warmup, double *seconds);

#ifdef __cplusplus
}
#endif
#endif
