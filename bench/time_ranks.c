/* Per-rank benchmark times and their stragglers (time_ranks.h). */
#include "time_ranks.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_wait.h"

zb_status zb_time_ranks_init(zb_bench_ctx *ctx, zb_time_ranks *cr, int n_runs) {
    memset(cr, 0, sizeof *cr);
    cr->n_runs = n_runs < 1 ? 1 : n_runs > ZB_TIME_RANKS_MAX_RUNS ? ZB_TIME_RANKS_MAX_RUNS : n_runs;
    zb_straggler_notes_init(&cr->notes, ctx->cfg->straggler_pct);
    cr->n_ranks = ctx->topo.n_ranks;
    ZB_TRY(zb_rank_places_gather(ctx, &cr->places));
    cr->rank_us = (double *)calloc((size_t)cr->n_runs * (size_t)cr->n_ranks, sizeof(double));
    /* Not agreed on: this rank's failure ends the job (main aborts). */
    if (!cr->rank_us) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for %d ranks' times", cr->n_ranks);
    return ZB_OK;
}

void zb_time_ranks_free(zb_time_ranks *cr) {
    zb_time_ranks_row_done(cr);
    free(cr->places);
    free(cr->rank_us);
    cr->places = NULL;
    cr->rank_us = NULL;
}

zb_status zb_time_ranks_gather(zb_time_ranks *cr, const zb_bench_ctx *ctx, int run, double local_us) {
    return zb_mpi_allgather_bounded(&local_us, cr->rank_us + (size_t)run * (size_t)cr->n_ranks, 1, MPI_DOUBLE,
                                    MPI_COMM_WORLD, "gathering each rank's time", ctx->cfg->timeout_s);
}

static const char *const time_key[] = {"time_us"};

zb_status zb_time_ranks_fields(zb_time_ranks *cr, const zb_bench_ctx *ctx, const unsigned *runs,
                               const char *const *what, zb_field *f, int *n) {
    int k = 0;
    f[k++] = (zb_field){.key = "straggler_pct", .kind = ZB_FIELD_REAL, .d = ctx->cfg->straggler_pct};
    for (int ip = 0; ip < cr->n_runs; ip++) {
        const double *us = cr->rank_us + (size_t)ip * (size_t)cr->n_ranks;
        zb_straggler s[ZB_RUN_STRAGGLERS_MAX];
        int n_s = 0;
        zb_stragglers_find("time_us", us, cr->n_ranks, ZB_DEVIATION_RELATIVE, ZB_WORSE_HIGHER, ctx->cfg->straggler_pct, s,
                           ZB_RUN_STRAGGLERS_MAX, &n_s);
        zb_rank_figs figs = {cr->n_ranks, 1, time_key, us, cr->places};
        json_t *per_rank = zb_rank_figs_json(&figs), *strag = zb_stragglers_json(s, n_s, cr->places);
        cr->own[cr->n_own++] = per_rank;
        cr->own[cr->n_own++] = strag;
        if (!per_rank || !strag) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory for the per-rank times");
        f[k++] = (zb_field){.key = "stragglers", .runs = runs[ip], .kind = ZB_FIELD_JSON, .j = strag};
        f[k++] = (zb_field){.key = "per_rank", .runs = runs[ip], .kind = ZB_FIELD_JSON, .j = per_rank};
        zb_straggler_notes_add(&cr->notes, what[ip], s, n_s, cr->places);
    }
    *n = k;
    return ZB_OK;
}

void zb_time_ranks_row_done(zb_time_ranks *cr) {
    for (int i = 0; i < cr->n_own; i++) json_decref(cr->own[i]);
    cr->n_own = 0;
}

void zb_time_ranks_print(const zb_time_ranks *cr, FILE *f) {
    zb_straggler_notes_print(&cr->notes, f, cr->n_ranks, "time", NULL);
}
