/* The step's per-rank figures (step.h): each rank's own medians over its
 * measured steps, gathered to every rank, and the worst rank's overlap and
 * exposed comm (docs/design.md §6, "Per-rank figures and stragglers"). */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>

#include "mpi_wait.h"
#include "rank_report.h"
#include "step.h"
#include "stragglers.h"

const char *const zb_step_rank_keys[ZB_STEP_RANK_FIGS] = {"step_time_ms", "overlap_pct", "exposed_comm_ms",
                                                          "compute_ms", "comm_ms"};

zb_status zb_step_gather_ranks(zb_bench_ctx *ctx, const double *const figs[ZB_STEP_RANK_FIGS], int steps,
                               zb_step_stats *out) {
    int n = ctx->topo.n_ranks;
    double mine[ZB_STEP_RANK_FIGS];
    for (int k = 0; k < ZB_STEP_RANK_FIGS; k++) mine[k] = zb_rank_median(figs[k], steps);
    double *all = (double *)calloc((size_t)n * ZB_STEP_RANK_FIGS, sizeof(double));
    /* Not agreed on: this rank's failure ends the job (main aborts). */
    if (!all) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory gathering %d ranks' step figures", n);
    zb_status st = zb_mpi_allgather_bounded(mine, all, ZB_STEP_RANK_FIGS, MPI_DOUBLE, MPI_COMM_WORLD,
                                            "gathering each rank's step figures", ctx->cfg->timeout_s);
    if (st != ZB_OK) return st; /* `all` may still be MPI's (mpi_wait.h): not freed */
    free(out->per_rank);
    out->per_rank = all;
    out->n_ranks = n;
    free(out->places);
    out->places = NULL;
    ZB_TRY(zb_rank_places_gather(ctx, &out->places));
    double worst_overlap = NAN, worst_exposed = NAN;
    for (int r = 0; r < n; r++) {
        double ov = all[(size_t)r * ZB_STEP_RANK_FIGS + ZB_STEP_RANK_OVERLAP];
        double ex = all[(size_t)r * ZB_STEP_RANK_FIGS + ZB_STEP_RANK_EXPOSED];
        if (!isnan(ov) && (isnan(worst_overlap) || ov < worst_overlap)) worst_overlap = ov;
        if (!isnan(ex) && (isnan(worst_exposed) || ex > worst_exposed)) worst_exposed = ex;
    }
    out->overlap_worst_pct = worst_overlap;
    out->exposed_comm_worst_ms = worst_exposed;
    return ZB_OK;
}

void zb_step_stats_release(zb_step_stats *s) {
    free(s->per_rank);
    free(s->places);
    s->per_rank = NULL;
    s->places = NULL;
    s->n_ranks = 0;
    zb_step_wait_free(&s->wait);
}
