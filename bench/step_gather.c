/* The step's records, its one gather and its stats from the summaries
 * (step_gather.h). */
#include "step_gather.h"

#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_wait.h"

#define ROW_BYTES (sizeof(double) * ZB_STEP_FIELDS)

zb_status zb_step_block_init(zb_step_block *b, int cap, int n_sched) {
    memset(b, 0, sizeof *b);
    b->cap = cap > 0 ? cap : 1;
    b->n_sched = n_sched;
    /* rows start on a double's boundary */
    b->rows_at = (sizeof(zb_step_head) + sizeof(double) - 1) / sizeof(double) * sizeof(double);
    b->bytes_len = b->rows_at + (size_t)n_sched * (size_t)b->cap * ROW_BYTES;
    b->bytes = (unsigned char *)calloc(1, b->bytes_len);
    if (!b->bytes) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for the step's records (%d steps)", cap);
    double *v = (double *)(void *)(b->bytes + b->rows_at);
    size_t n = (size_t)n_sched * (size_t)b->cap * ZB_STEP_FIELDS;
    for (size_t i = 0; i < n; i++) v[i] = NAN;
    return ZB_OK;
}

void zb_step_block_free(zb_step_block *b) {
    free(b->bytes);
    b->bytes = NULL;
}

zb_step_head *zb_step_block_head(zb_step_block *b) { return (zb_step_head *)(void *)b->bytes; }

double *zb_step_block_row(zb_step_block *b, int sched, int s) {
    double *v = (double *)(void *)(b->bytes + b->rows_at);
    return v + ((size_t)sched * (size_t)b->cap + (size_t)s) * ZB_STEP_FIELDS;
}

/* Schedule `sched`'s records in `all` (n blocks of b's layout). */
static zb_step_records records_of(const zb_step_block *b, const unsigned char *all, int n, int sched, int steps) {
    zb_step_records rec;
    rec.n_ranks = n;
    rec.steps = steps;
    rec.rank_stride = b->bytes_len / sizeof(double);
    rec.v = (const double *)(const void *)(all + b->rows_at) + (size_t)sched * (size_t)b->cap * ZB_STEP_FIELDS;
    return rec;
}

/* The samples compare tests: the step times in step order, the trace
 * metrics of every step and rank (rank-major). */
static void keep_samples(const zb_step_records *rec, double *col, zb_step_stats *out) {
    for (int s = 0; s < rec->steps; s++) col[s] = zb_step_rec_step_ms(rec, s);
    zb_step_keep_samples(&out->samples[ZB_SAMPLES_STEP], col, (size_t)rec->steps);
    static const int fields[][2] = {{ZB_SAMPLES_OVERLAP, ZB_SF_OVERLAP_PCT},
                                    {ZB_SAMPLES_EXPOSED, ZB_SF_EXPOSED_MS},
                                    {ZB_SAMPLES_COMPUTE, ZB_SF_COMPUTE_MS},
                                    {ZB_SAMPLES_COMM, ZB_SF_COMM_MS}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        zb_step_rec_column(rec, fields[i][1], col);
        zb_step_keep_samples(&out->samples[fields[i][0]], col, (size_t)rec->n_ranks * (size_t)rec->steps);
    }
}

/* Each rank's own medians as the report's per-rank figures (step.h). */
static zb_status take_ranks(const zb_step_summary *sum, const zb_step_rank_summary *pr, const zb_rank_place *places,
                            zb_step_stats *out) {
    int n = sum->n_ranks;
    free(out->per_rank);
    free(out->places);
    out->per_rank = (double *)calloc((size_t)n * ZB_STEP_RANK_FIGS, sizeof(double));
    out->places = (zb_rank_place *)calloc((size_t)n, sizeof(zb_rank_place));
    out->n_ranks = n;
    if (!out->per_rank || !out->places) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for %d ranks' step figures", n);
    for (int r = 0; r < n; r++) {
        double *f = out->per_rank + (size_t)r * ZB_STEP_RANK_FIGS;
        f[ZB_STEP_RANK_STEP] = pr[r].step_ms;
        f[ZB_STEP_RANK_OVERLAP] = pr[r].overlap_pct;
        f[ZB_STEP_RANK_EXPOSED] = pr[r].exposed_ms;
        f[ZB_STEP_RANK_COMPUTE] = pr[r].compute_ms;
        f[ZB_STEP_RANK_COMM] = pr[r].comm_ms;
        out->places[r] = places[r];
    }
    out->overlap_worst_pct = sum->overlap_worst_pct;
    out->exposed_comm_worst_ms = sum->exposed_worst_ms;
    return ZB_OK;
}

/* One schedule's stats from its records. */
static zb_status take_schedule(const zb_bench_ctx *ctx, const zb_step_plan *plan, const zb_step_records *rec,
                               const zb_rank_place *places, double *col, zb_step_stats *out) {
    int n = rec->n_ranks;
    zb_step_summary sum;
    zb_step_rank_summary *pr = (zb_step_rank_summary *)calloc((size_t)n, sizeof *pr);
    if (!pr) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for %d ranks' step figures", n);
    zb_status st = zb_step_summarize(rec, &sum, pr);
    if (st == ZB_OK) st = take_ranks(&sum, pr, places, out);
    if (st == ZB_OK) st = zb_step_wait_take(&sum, pr, &out->wait);
    free(pr);
    ZB_TRY(st);
    out->steps = sum.steps;
    out->step_ms = sum.step_ms;
    out->step_min_ms = sum.step_min_ms;
    out->step_max_ms = sum.step_max_ms;
    out->overlap_pct = sum.overlap_pct;
    out->overlap_min_pct = sum.overlap_min_pct;
    out->exposed_comm_ms = sum.exposed_ms;
    out->compute_ms = sum.compute_ms;
    out->comm_ms = sum.comm_ms;
    out->idle_ms = sum.idle_ms;
    out->ops_per_step = sum.ops;
    out->comm_hold_ms = sum.hold_ms;
    keep_samples(rec, col, out);
    double t = out->step_ms / 1e3;
    int world = ctx->world_ranks;
    out->tokens_per_s = plan->tokens_global / t;
    out->mfu_pct = zb_mfu_pct(plan->flops.model_flops, plan->tokens_global, t, world, ctx->peak_flops);
    out->hfu_pct = zb_mfu_pct(plan->flops.hardware_flops, plan->tokens_global, t, world, ctx->peak_flops);
    out->hidden_pct = NAN;
    out->compute_slowdown_pct = NAN;
    return ZB_OK;
}

/* --mode both: the pairs' statistics into the prefetch run. */
static zb_status take_pairs(const zb_step_records *sync, const zb_step_records *pf, double *col, zb_step_stats *out) {
    zb_step_pairs p;
    double *hidden = col, *slow = col + (size_t)sync->steps;
    ZB_TRY(zb_step_pair(sync, pf, &p, hidden, slow));
    out->paired = true;
    out->pairs = p.pairs;
    out->step_diff_ms = p.step_diff_ms;
    out->hidden = p.hidden;
    out->slowdown = p.slowdown;
    zb_step_keep_samples(&out->samples[ZB_SAMPLES_HIDDEN], hidden, (size_t)sync->steps);
    zb_step_keep_samples(&out->samples[ZB_SAMPLES_SLOWDOWN], slow, (size_t)sync->steps);
    /* The table's figures: the paired medians, as they are (a hidden %
     * above 100 or below 0 says something too: the reading words it). */
    out->hidden_pct = p.hidden.median;
    out->compute_slowdown_pct = p.slowdown.median;
    return ZB_OK;
}

/* The tracer's losses summed over the gathered heads: null only where no
 * rank's tracer ran. */
static void take_totals(const zb_step_block *b, const unsigned char *all, int n, const char *tracer_name,
                        zb_step_stats *out) {
    uint64_t sum[ZB_STEP_TOTALS] = {0};
    for (int r = 0; r < n; r++) {
        const zb_step_head *h = (const zb_step_head *)(const void *)(all + (size_t)r * b->bytes_len);
        for (int i = 0; i < ZB_STEP_TOTALS; i++) sum[i] += h->totals[i];
    }
    const zb_step_head *mine = (const zb_step_head *)(const void *)all;
    out->dropped_records = (size_t)sum[ZB_TOT_HARNESS_DROPPED];
    out->tracer_ran = sum[ZB_TOT_TRACER_RAN] > 0;
    memset(&out->tracer, 0, sizeof out->tracer);
    out->tracer.name = tracer_name ? tracer_name : "the device tracer";
    memcpy(out->tracer.note, mine->tracer_note, sizeof out->tracer.note);
    out->tracer.note[sizeof out->tracer.note - 1] = '\0';
    out->tracer.records_dropped = sum[ZB_TOT_DROPPED];
    out->tracer.zero_timestamps = sum[ZB_TOT_ZERO_TS];
    out->tracer.inverted = sum[ZB_TOT_INVERTED];
    out->tracer.buffer_errors = sum[ZB_TOT_BUF_ERRORS];
}

zb_status zb_step_block_finish(zb_bench_ctx *ctx, const zb_step_plan *plan, zb_step_block *b, int steps,
                               const char *tracer_name, zb_step_stats *const *outs) {
    zb_step_head *head = zb_step_block_head(b);
    memset(&head->place, 0, sizeof head->place);
    head->place.node = ctx->topo.node;
    snprintf(head->place.host, sizeof head->place.host, "%s", ctx->topo.hostname);
    int n = ctx->topo.n_ranks, me = ctx->topo.rank;
    if (b->bytes_len > (size_t)INT32_MAX) {
        return ZB_FAIL(ZB_ERR_INVALID, "the step's records (%zu bytes a rank) are too many for one gather: fewer steps",
                       b->bytes_len);
    }
    int held = me == 0 ? n : 1; /* the blocks this rank summarizes */
    unsigned char *all = me == 0 ? (unsigned char *)malloc(b->bytes_len * (size_t)n) : b->bytes;
    /* Not agreed on: this rank's failure ends the job (main aborts). */
    if (!all) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory gathering %d ranks' step records", n);
    zb_status st = zb_mpi_gather_bounded(b->bytes, me == 0 ? all : NULL, (int)b->bytes_len, MPI_BYTE, 0,
                                         MPI_COMM_WORLD, "gathering the step's records", ctx->cfg->timeout_s);
    if (st != ZB_OK) return st; /* a timeout: the buffer may still be MPI's (mpi_wait.h) */
    zb_rank_place *places = (zb_rank_place *)calloc((size_t)held, sizeof *places);
    double *col = (double *)malloc(sizeof(double) * ((size_t)held * (size_t)(steps > 0 ? steps : 1) * 2 + 1));
    if (!places || !col) st = ZB_FAIL(ZB_ERR_NOMEM, "out of host memory summarizing %d ranks' steps", held);
    for (int r = 0; r < held && st == ZB_OK; r++) {
        places[r] = ((const zb_step_head *)(const void *)(all + (size_t)r * b->bytes_len))->place;
        places[r].host[ZB_RANK_HOST_BYTES - 1] = '\0';
    }
    for (int k = 0; k < b->n_sched && st == ZB_OK; k++) {
        zb_step_records rec = records_of(b, all, held, k, steps);
        take_totals(b, all, held, tracer_name, outs[k]);
        st = take_schedule(ctx, plan, &rec, places, col, outs[k]);
    }
    if (st == ZB_OK && b->n_sched == 2) {
        zb_step_records sync = records_of(b, all, held, 0, steps), pf = records_of(b, all, held, 1, steps);
        st = take_pairs(&sync, &pf, col, outs[1]);
    }
    free(col);
    free(places);
    if (all != b->bytes) free(all);
    return st;
}
