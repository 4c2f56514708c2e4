/* A benchmark's per-rank truth: each rank's time per table row and JSON
 * run (collectives: two per size, out of place and in place; gemm: one per
 * shape), gathered to every rank, in each JSON run's "per_rank" with its
 * stragglers, and the straggler notes under the table (docs/design.md §6
 * and §7). */
#ifndef ZB_TIME_RANKS_H
#define ZB_TIME_RANKS_H

#include "bench.h"
#include "rank_report.h"
#include "row.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_TIME_RANKS_MAX_RUNS 2 /* JSON runs per table row */

typedef struct zb_time_ranks {
    zb_rank_place *places;
    double *rank_us;   /* [n_runs][n_ranks] */
    int n_ranks, n_runs;
    zb_straggler_notes notes;
    json_t *own[2 * ZB_TIME_RANKS_MAX_RUNS]; /* the JSON the current row's fields point to */
    int n_own;
} zb_time_ranks;

/* Collective: the ranks' hosts and nodes, and room for n_runs (1 or 2)
 * times per rank. */
zb_status zb_time_ranks_init(zb_bench_ctx *ctx, zb_time_ranks *cr, int n_runs);
void zb_time_ranks_free(zb_time_ranks *cr);

/* Collective: every rank's time in us for run `run` (0 .. n_runs-1) of the
 * current row into cr->rank_us. */
zb_status zb_time_ranks_gather(zb_time_ranks *cr, const zb_bench_ctx *ctx, int run, double local_us);

/* The row's fields: straggler_pct, and per run (JSON run bit `runs[i]`)
 * per_rank and stragglers on time_us; the stragglers go to the notes too,
 * each under the name what[i] ("1048576 B out-of-place", "shape0
 * 256x256x256"). At most 1 + 2 n_runs fields; call zb_time_ranks_row_done
 * after the row is added. */
zb_status zb_time_ranks_fields(zb_time_ranks *cr, const zb_bench_ctx *ctx, const unsigned *runs,
                               const char *const *what, zb_field *f, int *n);
void zb_time_ranks_row_done(zb_time_ranks *cr);

/* The straggler notes under the table (nothing for one rank). */
void zb_time_ranks_print(const zb_time_ranks *cr, FILE *f);

#ifdef __cplusplus
}
#endif
#endif
