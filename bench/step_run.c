/* One (stage, schedule) run of the step benchmark and its measurement.
 *
 * Step time is host time around issuing a step until both streams are done,
 * the maximum over ranks, median over the measured steps (docs/design.md §6).
 * Overlap, exposed comm, compute and comm time come from the trace records
 * each step left on each rank (the comm stream's records are comm), medians
 * over steps and ranks; per rank, each rank's own medians over steps
 * (step_ranks.c). The device tracer's own losses (CUPTI's dropped
 * records, ...) are what the run added, summed over ranks. A NaN or
 * infinite loss stops the run. */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_wait.h"
#include "step.h"
#include "step_trace.h"

typedef struct per_step {
    double *step_ms;                   /* [steps], max over ranks */
    double *local_ms;                  /* [steps] this rank's own step time */
    double *overlap, *exposed, *compute, *comm; /* [steps] this rank */
    zb_step_wait_acc wait; /* arrival skew, wait and transfer (step_wait.h) */
} per_step;

/* Trace metrics of one step on this rank; NaN when the device's trace is
 * not recorded (a GPU without CUPTI): reported as not measured, never 0. */
static zb_status measure_trace(zb_bench_ctx *ctx, size_t first_record, const zb_step_result *r,
                               zb_overlap *ov) {
    zb_trace *t = ctx->dev->cfg.trace;
    if (!zb_backends_traced(&ctx->backends)) {
        memset(ov, 0, sizeof *ov);
        ov->overlap_pct = NAN;
        ov->comm_ns = ov->compute_ns = ov->exposed_comm_ns = -1;
        return ZB_OK;
    }
    zb_backends_flush_trace(&ctx->backends);
    size_t n = t->n_records - first_record;
    return zb_overlap_compute(t->records + first_record, n, r->start_ns, r->end_ns + 1, ov);
}

/* The median over all ranks' values of a per-step array, and their minimum
 * when min_out is given (collective). */
static zb_status median_over_ranks(const zb_bench_ctx *ctx, const double *mine, int steps, const char *what,
                                   double *med_out, double *min_out) {
    int n = ctx->topo.n_ranks;
    double *all = (double *)malloc(sizeof(double) * (size_t)steps * (size_t)n);
    /* Not agreed on: this rank's failure ends the job (main aborts). */
    if (!all) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory gathering %s over %d ranks", what, n);
    ZB_TRY(zb_mpi_allgather_bounded(mine, all, steps, MPI_DOUBLE, MPI_COMM_WORLD, what, ctx->cfg->timeout_s));
    if (min_out) *min_out = zb_min(all, (size_t)steps * (size_t)n);
    *med_out = zb_median(all, (size_t)steps * (size_t)n);
    free(all);
    return ZB_OK;
}

static void progress(const zb_bench_ctx *ctx, const zb_step_plan *plan, int s, int total, float loss,
                     double ms, bool warmup) {
    if (ctx->topo.rank != 0) return;
    char loss_text[32] = "n/a";
    if (!ctx->simulated) snprintf(loss_text, sizeof loss_text, "%.4f", (double)loss);
    fprintf(stderr, "step %3d/%d  stage %d %-8s loss %s  time %9.3f ms%s%s\n", s + 1, total, plan->engine.stage,
            plan->engine.mode == ZB_MODE_SYNC ? "sync" : "prefetch", loss_text, ms, warmup ? "  (warm-up)" : "",
            ctx->simulated ? "  (simulated)" : "");
}

static zb_status run_steps(zb_bench_ctx *ctx, const zb_step_plan *plan, zb_engine *e, per_step *ps,
                           zb_step_stats *out) {
    const zb_config *cfg = ctx->cfg;
    int warm = (int)cfg->warmup_steps, total = warm + (int)cfg->steps;
    zb_step_trace tr; /* --trace: which steps the file keeps (step_trace.h) */
    zb_step_trace_begin(ctx, plan->engine.mode, plan->engine.stage, &tr);
    for (int s = 0; s < total; s++) {
        size_t first = ctx->dev->cfg.trace->n_records;
        zb_step_result r;
        ZB_TRY(zb_engine_step(e, s, &r));
        float loss = 0;
        ZB_TRY(zb_mpi_allreduce_bounded(&r.loss, &loss, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                                        "summing the step's loss", cfg->timeout_s));
        loss /= (float)ctx->topo.n_ranks;
        double local_ms = (double)(r.end_ns - r.start_ns) / 1e6, ms = 0;
        ZB_TRY(zb_mpi_allreduce_bounded(&local_ms, &ms, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD,
                                        "taking the step's maximum time", cfg->timeout_s));
        if (ctx->simulated) loss = NAN; /* no data: never a number */
        progress(ctx, plan, s, total, loss, ms, s < warm);
        if (!ctx->simulated && !isfinite(loss)) {
            return ZB_FAIL(ZB_ERR_WRONG, "the loss is %g at step %d (stage %d, %s): stopping", (double)loss,
                           s + 1, plan->engine.stage, plan->engine.mode == ZB_MODE_SYNC ? "sync" : "prefetch");
        }
        if (s == 0) out->loss_first = loss;
        out->loss_last = loss;
        if (s < warm) {
            zb_step_trace_end_step(ctx, &tr, s, first, &r);
            continue;
        }
        int m = s - warm;
        zb_overlap ov;
        ZB_TRY(measure_trace(ctx, first, &r, &ov));
        ZB_TRY(zb_step_wait_measure(ctx, first, &r, &ps->wait, m));
        zb_step_trace_end_step(ctx, &tr, s, first, &r);
        /* Without --trace the records are only for these metrics: drop them
         * so a long run's memory stays bounded. */
        if (!cfg->trace_path[0]) zb_trace_clear(ctx->dev->cfg.trace);
        ps->step_ms[m] = ms;
        ps->local_ms[m] = local_ms;
        bool measured = ov.comm_ns >= 0;
        ps->overlap[m] = ov.overlap_pct;
        ps->exposed[m] = measured ? (double)ov.exposed_comm_ns / 1e6 : NAN;
        ps->compute[m] = measured ? (double)ov.compute_ns / 1e6 : NAN;
        ps->comm[m] = measured ? (double)ov.comm_ns / 1e6 : NAN;
        out->comm_bytes_per_step = r.sent_bytes;
    }
    return ZB_OK;
}

bool zb_step_tracer_read(const zb_backends *b, zb_tracer_stats *out) {
    memset(out, 0, sizeof *out);
    if (!b->tracer_active || !b->device->tracer_stats) return false;
    if (b->device->tracer_stats(out) != ZB_OK) {
        memset(out, 0, sizeof *out);
        return false;
    }
    return true;
}

void zb_tracer_stats_window(const zb_tracer_stats *before, const zb_tracer_stats *after, zb_tracer_stats *out) {
    zb_tracer_stats w;
    memset(&w, 0, sizeof w);
    w.name = after->name;
    memcpy(w.note, after->note, sizeof w.note);
    w.records_dropped = after->records_dropped - before->records_dropped;
    w.zero_timestamps = after->zero_timestamps - before->zero_timestamps;
    w.inverted = after->inverted - before->inverted;
    w.buffer_errors = after->buffer_errors - before->buffer_errors;
    *out = w;
}

/* The run's tracer losses over all ranks (collective: every rank takes
 * part, a rank without a tracer with zeros): null only where none ran. */
static zb_status tracer_window(zb_bench_ctx *ctx, bool ran, const zb_tracer_stats *before, zb_step_stats *out) {
    zb_tracer_stats after, w;
    memset(&w, 0, sizeof w);
    if (ran && zb_step_tracer_read(&ctx->backends, &after)) zb_tracer_stats_window(before, &after, &w);
    else ran = false;
    uint64_t mine[5] = {ran ? 1u : 0u, w.records_dropped, w.zero_timestamps, w.inverted, w.buffer_errors};
    uint64_t all[5];
    ZB_TRY(zb_mpi_allreduce_bounded(mine, all, 5, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD,
                                    "summing the device tracer's losses", ctx->cfg->timeout_s));
    out->tracer_ran = all[0] > 0;
    out->tracer.name = w.name ? w.name : "the device tracer";
    memcpy(out->tracer.note, w.note, sizeof out->tracer.note); /* this rank's */
    out->tracer.records_dropped = all[1];
    out->tracer.zero_timestamps = all[2];
    out->tracer.inverted = all[3];
    out->tracer.buffer_errors = all[4];
    return ZB_OK;
}

static zb_status summarize(zb_bench_ctx *ctx, const zb_step_plan *plan, per_step *ps, zb_step_stats *out) {
    int steps = (int)ctx->cfg->steps, n = ctx->world_ranks;
    out->steps = steps;
    out->step_min_ms = zb_min(ps->step_ms, (size_t)steps);
    out->step_max_ms = zb_max(ps->step_ms, (size_t)steps);
    out->step_ms = zb_median(ps->step_ms, (size_t)steps);
    double t = out->step_ms / 1e3;
    out->tokens_per_s = plan->tokens_global / t;
    out->mfu_pct = zb_mfu_pct(plan->flops.model_flops, plan->tokens_global, t, n, ctx->peak_flops);
    out->hfu_pct = zb_mfu_pct(plan->flops.hardware_flops, plan->tokens_global, t, n, ctx->peak_flops);
    out->hidden_pct = NAN;
    out->compute_slowdown_pct = NAN;
    /* Each rank's own medians over its steps (per_rank), then those over all ranks. */
    const double *const figs[ZB_STEP_RANK_FIGS] = {ps->local_ms, ps->overlap, ps->exposed, ps->compute, ps->comm};
    ZB_TRY(zb_step_gather_ranks(ctx, figs, steps, out));
    ZB_TRY(median_over_ranks(ctx, ps->overlap, steps, "gathering the overlap per step", &out->overlap_pct,
                             &out->overlap_min_pct));
    ZB_TRY(median_over_ranks(ctx, ps->exposed, steps, "gathering the exposed comm per step",
                             &out->exposed_comm_ms, NULL));
    ZB_TRY(median_over_ranks(ctx, ps->compute, steps, "gathering the compute time per step", &out->compute_ms,
                             NULL));
    ZB_TRY(zb_step_wait_summarize(ctx, &ps->wait, &out->wait));
    return median_over_ranks(ctx, ps->comm, steps, "gathering the comm time per step", &out->comm_ms, NULL);
}

int zb_step_sharing_ranks(const char *ids, size_t id_bytes, int n_ranks, int rank) {
    const char *mine = ids + (size_t)rank * id_bytes;
    if (!mine[0]) return 1;
    int n = 0;
    for (int r = 0; r < n_ranks; r++) n += strncmp(ids + (size_t)r * id_bytes, mine, id_bytes) == 0;
    return n;
}

/* The device's memory view and how many ranks share its device. Collective
 * where the backend has a view (the same entry on every rank): a rank whose
 * view failed still joins the gather, with an unknown id. */
static zb_status mem_view(zb_bench_ctx *ctx, zb_step_stats *out) {
    if (!ctx->backends.device->mem_view) return ZB_OK;
    zb_dev_mem_view mv;
    memset(&mv, 0, sizeof mv);
    if (ctx->backends.device->mem_view(ctx->dev, &mv) == ZB_OK) {
        out->device_view = true;
        out->pool_reserved_high_bytes = mv.pool_reserved_high_bytes;
        out->device_used_high_bytes = mv.device_used_high_bytes;
        out->library_bytes = mv.library_bytes;
    } else {
        memset(&mv, 0, sizeof mv);
        zb_error_clear(); /* the view is optional: the run goes on without it */
    }
    mv.device_id[ZB_DEV_ID_BYTES - 1] = '\0';
    int n = ctx->topo.n_ranks;
    char *ids = (char *)calloc((size_t)n, ZB_DEV_ID_BYTES);
    /* Not agreed on: this rank's failure ends the job (main aborts). */
    if (!ids) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory gathering %d ranks' device ids", n);
    zb_status st = zb_mpi_allgather_bounded(mv.device_id, ids, ZB_DEV_ID_BYTES, MPI_CHAR, MPI_COMM_WORLD,
                                            "gathering the ranks' device ids", ctx->cfg->timeout_s);
    if (st == ZB_OK) out->device_sharing_ranks = zb_step_sharing_ranks(ids, ZB_DEV_ID_BYTES, n, ctx->topo.rank);
    free(ids);
    return st;
}

zb_status zb_step_run(zb_bench_ctx *ctx, const zb_step_plan *plan, zb_step_stats *out) {
    memset(out, 0, sizeof *out);
    out->device_sharing_ranks = 1;
    out->stage = plan->engine.stage;
    out->mode = plan->engine.mode;
    int steps = (int)ctx->cfg->steps;
    per_step ps;
    double *block = (double *)calloc(6 * (size_t)steps, sizeof(double));
    if (!block) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for step statistics");
    ps.step_ms = block;
    ps.overlap = block + steps;
    ps.exposed = block + 2 * steps;
    ps.compute = block + 3 * steps;
    ps.comm = block + 4 * steps;
    ps.local_ms = block + 5 * steps;
    zb_status wst = zb_step_wait_init(&ps.wait, steps);
    if (wst != ZB_OK) {
        free(block);
        return wst;
    }
    size_t dropped_before = ctx->dev->cfg.trace->n_dropped;
    zb_tracer_stats tracer_before;
    bool tracer_ran = zb_step_tracer_read(&ctx->backends, &tracer_before);
    ctx->dev->ops->mem_reset_peak(ctx->dev);
    zb_engine *e = NULL;
    zb_status st = zb_engine_create(&plan->engine, ctx->dev, ctx->comm, ctx->compute, ctx->comm_stream, &e);
    if (st == ZB_OK) st = run_steps(ctx, plan, e, &ps, out);
    if (st == ZB_OK) {
        zb_mem_stats mem;
        ctx->dev->ops->mem_stats(ctx->dev, &mem);
        out->peak_bytes = mem.peak_total_bytes;
        out->mem_per_rank_bytes = zb_step_memory_per_rank(ctx);
        memcpy(out->peak_tag_bytes, mem.peak_bytes, sizeof out->peak_tag_bytes);
        zb_engine_expected_peaks(e, out->expected_tag_bytes);
        out->comm_bytes_formula = zb_engine_expected_comm_bytes(e);
        out->dropped_records = ctx->dev->cfg.trace->n_dropped - dropped_before;
        st = mem_view(ctx, out);
        if (st == ZB_OK) st = tracer_window(ctx, tracer_ran, &tracer_before, out);
        if (st == ZB_OK) st = summarize(ctx, plan, &ps, out);
    }
    zb_engine_destroy(e);
    zb_step_wait_acc_free(&ps.wait);
    free(block);
    return st;
}

void zb_step_compare(const zb_step_stats *sync, zb_step_stats *prefetch) {
    double saved = sync->step_ms - prefetch->step_ms;
    double hidden = sync->exposed_comm_ms > 0 ? 100.0 * saved / sync->exposed_comm_ms : NAN;
    if (hidden < 0) hidden = 0;
    if (hidden > 100) hidden = 100;
    prefetch->hidden_pct = hidden;
    prefetch->compute_slowdown_pct =
        sync->compute_ms > 0 ? 100.0 * (prefetch->compute_ms / sync->compute_ms - 1.0) : NAN;
}
