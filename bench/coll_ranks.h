/* The collectives' per-rank truth: each rank's time per size and
 * placement, gathered to every rank, in each JSON run's "per_rank" with
 * its stragglers, and the straggler notes under the table
 * (docs/design.md §6 and §7). */
#ifndef ZB_COLL_RANKS_H
#define ZB_COLL_RANKS_H

#include "bench.h"
#include "rank_report.h"
#include "row.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zb_coll_ranks {
    zb_rank_place *places;
    double *rank_us;   /* [2][n_ranks]: out of place, then in place */
    int n_ranks;
    zb_straggler_notes notes;
    json_t *own[4];    /* the JSON the current row's fields point to */
    int n_own;
} zb_coll_ranks;

/* Collective: the ranks' hosts and nodes, and room for their times. */
zb_status zb_coll_ranks_init(zb_bench_ctx *ctx, zb_coll_ranks *cr);
void zb_coll_ranks_free(zb_coll_ranks *cr);

/* Collective: every rank's time in us for placement ip (0 out of place, 1
 * in place) into cr->rank_us. */
zb_status zb_coll_ranks_gather(zb_coll_ranks *cr, const zb_bench_ctx *ctx, int ip, double local_us);

/* The size row's fields: straggler_pct, and per placement (JSON run bit
 * `runs[ip]`) per_rank and stragglers on time_us; the stragglers go to the
 * notes too. At most 5 fields; call zb_coll_ranks_row_done after the row is
 * added. */
zb_status zb_coll_ranks_fields(zb_coll_ranks *cr, const zb_bench_ctx *ctx, uint64_t size_bytes,
                               const unsigned runs[2], zb_field *f, int *n);
void zb_coll_ranks_row_done(zb_coll_ranks *cr);

/* The straggler notes under the table (nothing for one rank). */
void zb_coll_ranks_print(const zb_coll_ranks *cr, FILE *f);

#ifdef __cplusplus
}
#endif
#endif
