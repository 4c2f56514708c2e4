/* One (stage, schedule) run of the step benchmark and its measurement.
 *
 * Step time is host time around issuing a step until both streams are done,
 * the maximum over ranks, median over the measured steps (docs/design.md §6).
 * Overlap, exposed comm, compute and comm time come from the trace records
 * each step left on each rank (the comm stream's records are comm). Each
 * measured step is one row of the rank's records (step_gather.h); the
 * summaries are pure functions of every rank's rows after the run's one
 * gather (harness/metrics/step_summary.h). Per step, only what the run
 * itself needs crosses ranks: the loss and the step time (one gather: the
 * progress line, a NaN loss stops every rank, --mode both's stop rule) and
 * the collectives' arrivals (step_wait.c). The device tracer's own losses
 * (CUPTI's dropped records, ...) are what the run added, summed over
 * ranks. A NaN or infinite loss stops the run. */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "comm_hold.h"
#include "mpi_wait.h"
#include "step.h"
#include "step_gather.h"
#include "step_trace.h"

typedef struct per_step {
    zb_step_block *blk;    /* this rank's records (step_gather.h) */
    int sched;             /* this schedule's rows in blk */
    double *step_ms;       /* [cap] each measured step's time, max over ranks (every rank alike) */
    zb_step_trace tr;      /* --trace: this schedule's phase and the steps kept (step_trace.h) */
    int n;                 /* measured steps in the rows (a paired run may stop early or go on) */
} per_step;

/* Trace metrics of one step on this rank; NaN when the device's trace is
 * not recorded (a GPU without CUPTI): reported as not measured, never 0. */
static zb_status measure_trace(zb_bench_ctx *ctx, size_t first_record, const zb_step_result *r,
                               zb_overlap *ov, zb_comm_hold *hold) {
    zb_trace *t = ctx->dev->cfg.trace;
    if (!zb_backends_traced(&ctx->backends)) {
        memset(ov, 0, sizeof *ov);
        ov->overlap_pct = NAN;
        ov->comm_ns = ov->compute_ns = ov->exposed_comm_ns = -1;
        hold->mean_hold_ns = NAN;
        return ZB_OK;
    }
    zb_backends_flush_trace(&ctx->backends);
    size_t n = t->n_records - first_record;
    ZB_TRY(zb_comm_hold_compute(t->records + first_record, n, r->start_ns, r->end_ns + 1, hold));
    return zb_overlap_compute(t->records + first_record, n, r->start_ns, r->end_ns + 1, ov);
}

const char *const zb_step_sample_keys[ZB_STEP_N_SAMPLED] = {
    "step_time_ms", "overlap_pct", "exposed_comm_ms", "compute_ms", "comm_ms", "hidden_pct", "compute_slowdown_pct"};

void zb_step_keep_samples(zb_step_samples *s, const double *v, size_t n) {
    size_t finite = 0;
    for (size_t i = 0; i < n; i++) finite += isfinite(v[i]) != 0;
    size_t keep = finite < ZB_STEP_MAX_SAMPLES ? finite : ZB_STEP_MAX_SAMPLES, seen = 0;
    s->n = 0;
    /* the j-th kept value is the (j * finite / keep)-th finite one */
    for (size_t i = 0; i < n && (size_t)s->n < keep; i++) {
        if (!isfinite(v[i])) continue;
        if (seen++ == (size_t)s->n * finite / keep) s->v[s->n++] = v[i];
    }
}

static const char *mode_name(zb_step_mode m) { return m == ZB_MODE_SYNC ? "sync" : "prefetch"; }

static void progress(const zb_bench_ctx *ctx, const zb_step_plan *plan, zb_step_mode mode, int s, int total,
                     float loss, double ms, bool warmup) {
    if (ctx->topo.rank != 0) return;
    char loss_text[32] = "n/a";
    if (!ctx->simulated) snprintf(loss_text, sizeof loss_text, "%.4f", (double)loss);
    fprintf(stderr, "step %3d/%d  stage %d %-8s loss %s  time %9.3f ms%s%s\n", s + 1, total, plan->engine.stage,
            mode_name(mode), loss_text, ms, warmup ? "  (warm-up)" : "", ctx->simulated ? "  (simulated)" : "");
}

/* The device's own memory view, sampled after a step (outside its timed
 * window): the cuda device samples the GPU's used memory only when it is
 * asked or allocates, and a step allocates nothing of the harness's, so
 * what NCCL, cuBLASLt or CUPTI took during the steps would go unseen
 * (device_used_high_bytes). Best effort: the report's view comes later. */
static void sample_device_view(zb_bench_ctx *ctx) {
    if (!ctx->backends.device->mem_view) return;
    zb_dev_mem_view mv;
    if (ctx->backends.device->mem_view(ctx->dev, &mv) != ZB_OK) zb_error_clear();
}

/* The step's loss (mean over ranks) and time (maximum over ranks) from one
 * bounded gather of every rank's pair (collective). */
static zb_status loss_and_time(const zb_bench_ctx *ctx, float loss, double local_ms, float *loss_out, double *ms_out) {
    int n = ctx->topo.n_ranks;
    double mine[2] = {(double)loss, local_ms}, few[2 * 16];
    double *all = n <= 16 ? few : (double *)malloc(sizeof(double) * 2 * (size_t)n);
    /* Not agreed on: this rank's failure ends the job (main aborts). */
    if (!all) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory gathering %d ranks' step times", n);
    zb_status st = zb_mpi_allgather_bounded(mine, all, 2, MPI_DOUBLE, MPI_COMM_WORLD,
                                            "gathering the step's loss and time", ctx->cfg->timeout_s);
    if (st != ZB_OK) return st; /* a timeout: the buffer may still be MPI's (mpi_wait.h) */
    double sum = 0, mx = all[1];
    for (int r = 0; r < n; r++) {
        sum += all[2 * r];
        if (all[2 * r + 1] > mx) mx = all[2 * r + 1];
    }
    if (all != few) free(all);
    *loss_out = (float)(sum / n);
    *ms_out = mx;
    return ZB_OK;
}

/* Runs step `s` (its data) in the engine's current schedule `mode`; a
 * measured step (m >= 0) goes into ps[m]. `first`: the schedule's first
 * step (its loss_first). `index`: the step's number within its schedule,
 * from 1, warm-up steps first (the trace's step index). */
static zb_status one_step(zb_bench_ctx *ctx, const zb_step_plan *plan, zb_engine *e, zb_step_mode mode, int s,
                          int total, int m, bool first, int index, per_step *ps, zb_step_stats *out) {
    const zb_config *cfg = ctx->cfg;
    size_t first_record = ctx->dev->cfg.trace->n_records;
    zb_step_result r;
    ZB_TRY(zb_engine_step(e, s, &r));
    sample_device_view(ctx);
    double local_ms = (double)(r.end_ns - r.start_ns) / 1e6, ms = 0;
    float loss = 0;
    ZB_TRY(loss_and_time(ctx, r.loss, local_ms, &loss, &ms));
    if (ctx->simulated) loss = NAN; /* no data: never a number */
    progress(ctx, plan, mode, s, total, loss, ms, m < 0);
    if (!ctx->simulated && !isfinite(loss)) {
        return ZB_FAIL(ZB_ERR_WRONG, "the loss is %g at step %d (stage %d, %s): stopping", (double)loss,
                       s + 1, plan->engine.stage, mode_name(mode));
    }
    if (first) out->loss_first = loss;
    out->loss_last = loss;
    if (m < 0) {
        zb_step_trace_end_step(ctx, &ps->tr, index, true, first_record, &r);
        return ZB_OK;
    }
    zb_overlap ov;
    zb_comm_hold hold;
    ZB_TRY(measure_trace(ctx, first_record, &r, &ov, &hold));
    double *row = zb_step_block_row(ps->blk, ps->sched, m);
    ZB_TRY(zb_step_wait_measure(ctx, first_record, &r, row));
    if (r.sent_bytes == 0) row[ZB_SF_EXP_WAIT_MS] = row[ZB_SF_EXP_XFER_MS] = NAN; /* nothing to expose */
    zb_step_trace_end_step(ctx, &ps->tr, index, false, first_record, &r);
    /* Without --trace the records are only for these metrics: drop them
     * so a long run's memory stays bounded. */
    if (!cfg->trace_path[0]) zb_trace_clear(ctx->dev->cfg.trace);
    ps->step_ms[m] = ms;
    row[ZB_SF_LOCAL_MS] = local_ms;
    bool measured = ov.comm_ns >= 0;
    /* No byte sent (one rank): the one-rank collectives are local copies,
     * there is nothing to hide, so neither overlap nor exposed comm is a
     * figure of communication (nor hidden % or slowdown, which follow). */
    bool sent = r.sent_bytes > 0;
    row[ZB_SF_OVERLAP_PCT] = sent ? ov.overlap_pct : NAN;
    row[ZB_SF_EXPOSED_MS] = measured && sent ? (double)ov.exposed_comm_ns / 1e6 : NAN;
    row[ZB_SF_COMPUTE_MS] = measured ? (double)ov.compute_ns / 1e6 : NAN;
    row[ZB_SF_COMM_MS] = measured ? (double)ov.comm_ns / 1e6 : NAN;
    /* the step's time outside every op: the host's between them (calibrate spreads it over the ops) */
    row[ZB_SF_IDLE_MS] = measured ? local_ms - (double)ov.busy_ns / 1e6 : NAN;
    row[ZB_SF_OPS] = measured ? (double)(ov.n_comm_records + ov.n_compute_records) : NAN;
    row[ZB_SF_HOLD_MS] = measured && sent ? hold.mean_hold_ns / 1e6 : NAN;
    out->comm_bytes_per_step = r.sent_bytes;
    return ZB_OK;
}

static zb_status run_steps(zb_bench_ctx *ctx, const zb_step_plan *plan, zb_engine *e, per_step *ps,
                           zb_step_stats *out) {
    int warm = (int)ctx->cfg->warmup_steps, total = warm + (int)ctx->cfg->steps;
    for (int s = 0; s < total; s++) {
        ZB_TRY(one_step(ctx, plan, e, plan->engine.mode, s, total, s < warm ? -1 : s - warm, s == 0, s + 1, ps, out));
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

/* What the run added to this rank's tracer losses and the harness trace's
 * dropped records, into the block's head (summed over ranks at the end). */
static void tracer_window(zb_bench_ctx *ctx, bool ran, const zb_tracer_stats *before, size_t dropped,
                          zb_step_block *blk, const char **name) {
    zb_tracer_stats after, w;
    memset(&w, 0, sizeof w);
    if (ran && zb_step_tracer_read(&ctx->backends, &after)) zb_tracer_stats_window(before, &after, &w);
    else ran = false;
    zb_step_head *h = zb_step_block_head(blk);
    h->totals[ZB_TOT_TRACER_RAN] = ran ? 1u : 0u;
    h->totals[ZB_TOT_DROPPED] = w.records_dropped;
    h->totals[ZB_TOT_ZERO_TS] = w.zero_timestamps;
    h->totals[ZB_TOT_INVERTED] = w.inverted;
    h->totals[ZB_TOT_BUF_ERRORS] = w.buffer_errors;
    h->totals[ZB_TOT_HARNESS_DROPPED] = (uint64_t)dropped;
    memcpy(h->tracer_note, w.note, sizeof h->tracer_note);
    *name = w.name;
}

/* zb_median sorts its input: the per-step times keep their step order,
 * which the pairs of --mode both are made of, so it gets a copy. */
static double median_of_copy(const double *v, int n) {
    double *c = (double *)malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (!c) return NAN; /* not measured rather than wrong */
    memcpy(c, v, sizeof(double) * (size_t)(n > 0 ? n : 0));
    double m = zb_median(c, (size_t)n);
    free(c);
    return m;
}

int zb_step_sharing_ranks(const char *ids, size_t id_bytes, int n_ranks, int rank) {
    const char *mine = ids + (size_t)rank * id_bytes;
    if (!mine[0]) return 1;
    int n = 0;
    for (int r = 0; r < n_ranks; r++) n += strncmp(ids + (size_t)r * id_bytes, mine, id_bytes) == 0;
    return n;
}

/* The device's memory view, and how many ranks share its device (found
 * once at start-up, zb_bench_find_device_sharing). */
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
        zb_error_clear(); /* the view is optional: the run goes on without it */
    }
    out->device_sharing_ranks = ctx->device_sharing > 1 ? ctx->device_sharing : 1;
    return ZB_OK;
}

/* The schedules' records (one block for all, gathered once) and each
 * schedule's agreed step times; ZB_ERR_NOMEM. per_step_free releases both. */
static zb_status per_step_alloc(zb_step_block *blk, per_step *ps, int n_sched, int steps) {
    memset(ps, 0, sizeof *ps * (size_t)n_sched);
    ZB_TRY(zb_step_block_init(blk, steps, n_sched));
    for (int k = 0; k < n_sched; k++) {
        ps[k].blk = blk;
        ps[k].sched = k;
        ps[k].n = steps;
        ps[k].step_ms = (double *)calloc((size_t)(steps > 0 ? steps : 1), sizeof(double));
        if (!ps[k].step_ms) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for step statistics");
    }
    return ZB_OK;
}

static void per_step_free(zb_step_block *blk, per_step *ps, int n_sched) {
    for (int k = 0; k < n_sched; k++) free(ps[k].step_ms);
    zb_step_block_free(blk);
}

static void start_stats(zb_step_stats *out, const zb_step_plan *plan, zb_step_mode mode) {
    memset(out, 0, sizeof *out);
    out->device_sharing_ranks = 1;
    out->stage = plan->engine.stage;
    out->mode = mode;
}

zb_status zb_step_run(zb_bench_ctx *ctx, const zb_step_plan *plan, zb_step_stats *out) {
    start_stats(out, plan, plan->engine.mode);
    per_step ps;
    zb_step_block blk;
    zb_status st = per_step_alloc(&blk, &ps, 1, (int)ctx->cfg->steps);
    zb_step_trace_begin(ctx, plan->engine.mode, plan->engine.stage, &ps.tr);
    size_t dropped_before = ctx->dev->cfg.trace->n_dropped;
    zb_tracer_stats tracer_before;
    bool tracer_ran = zb_step_tracer_read(&ctx->backends, &tracer_before);
    ctx->dev->ops->mem_reset_peak(ctx->dev);
    zb_engine *e = NULL;
    if (st == ZB_OK) st = zb_engine_create(&plan->engine, ctx->dev, ctx->comm, ctx->compute, ctx->comm_stream, &e);
    if (st == ZB_OK) st = run_steps(ctx, plan, e, &ps, out);
    if (st == ZB_OK) {
        zb_mem_stats mem;
        ctx->dev->ops->mem_stats(ctx->dev, &mem);
        out->peak_bytes = mem.peak_total_bytes;
        out->mem_per_rank_bytes = zb_step_memory_per_rank(ctx);
        memcpy(out->peak_tag_bytes, mem.peak_bytes, sizeof out->peak_tag_bytes);
        zb_engine_expected_peaks(e, out->expected_tag_bytes);
        out->comm_bytes_formula = zb_engine_expected_comm_bytes(e);
        st = mem_view(ctx, out);
    }
    if (st == ZB_OK) {
        const char *tracer = NULL;
        tracer_window(ctx, tracer_ran, &tracer_before, ctx->dev->cfg.trace->n_dropped - dropped_before, &blk,
                      &tracer);
        zb_step_stats *outs[1] = {out};
        st = zb_step_block_finish(ctx, plan, &blk, ps.n, tracer, outs);
    }
    zb_engine_destroy(e);
    per_step_free(&blk, &ps, 1);
    return st;
}

/* ---- the paired A/B (--mode both) -------------------------------------------- */

/* A measured step's peaks (reset before it) into its schedule's maxima. */
static void keep_peaks(zb_device *dev, zb_step_stats *out) {
    zb_mem_stats mem;
    dev->ops->mem_stats(dev, &mem);
    if (mem.peak_total_bytes > out->peak_bytes) out->peak_bytes = mem.peak_total_bytes;
    for (int t = 0; t < ZB_MEM_TAG_COUNT; t++) {
        if (mem.peak_bytes[t] > out->peak_tag_bytes[t]) out->peak_tag_bytes[t] = mem.peak_bytes[t];
    }
}

/* After measured pair n: whether to run another (every rank decides alike:
 * step_ms is the maximum over ranks, the same everywhere). */
static zb_pairs_stop pairs_enough(const zb_config *cfg, const per_step *ps, int n) {
    zb_paired d = zb_paired_diff(ps[ZB_MODE_SYNC].step_ms, ps[ZB_MODE_PREFETCH].step_ms, (size_t)n);
    double elapsed_ms = 0.0;
    for (int i = 0; i < n; i++) elapsed_ms += ps[ZB_MODE_SYNC].step_ms[i] + ps[ZB_MODE_PREFETCH].step_ms[i];
    double ref = median_of_copy(ps[ZB_MODE_SYNC].step_ms, n);
    return zb_paired_stop(&d, (size_t)n, (size_t)cfg->steps, (size_t)zb_step_max_pairs(cfg), ref,
                          cfg->precision_pct, elapsed_ms / 1e3, cfg->max_time_s);
}

/* The pairs: ABBA order, every step its own data index; warm-up pairs,
 * then measured ones until pairs_enough says stop. */
static zb_status run_pairs(zb_bench_ctx *ctx, const zb_step_plan *plan, zb_engine *e, per_step *ps,
                           zb_step_stats **out) {
    int warm = (int)ctx->cfg->warmup_steps, cap = warm + zb_step_max_pairs(ctx->cfg), s = 0;
    bool seen[2] = {false, false};
    zb_pairs_stop stop = ZB_PAIRS_CONTINUE;
    for (int i = 0; i < cap && stop == ZB_PAIRS_CONTINUE; i++) {
        bool sync_first = i % 2 == 0;
        for (int k = 0; k < 2; k++, s++) {
            zb_step_mode mode = (k == 0) == sync_first ? ZB_MODE_SYNC : ZB_MODE_PREFETCH;
            int m = i < warm ? -1 : i - warm;
            ZB_TRY(zb_engine_set_mode(e, mode));
            ctx->dev->ops->mem_reset_peak(ctx->dev);
            ZB_TRY(one_step(ctx, plan, e, mode, s, 2 * cap, m, !seen[mode], i + 1, &ps[mode], out[mode]));
            seen[mode] = true;
            if (m >= 0) keep_peaks(ctx->dev, out[mode]);
        }
        if (i >= warm) {
            ps[0].n = ps[1].n = i - warm + 1;
            stop = pairs_enough(ctx->cfg, ps, ps[0].n);
        }
    }
    out[ZB_MODE_PREFETCH]->stopped_by = zb_pairs_stop_name(stop == ZB_PAIRS_CONTINUE ? ZB_PAIRS_MAX_PAIRS : stop);
    out[ZB_MODE_PREFETCH]->precision_pct = ctx->cfg->precision_pct;
    return ZB_OK;
}

zb_status zb_step_run_paired(zb_bench_ctx *ctx, const zb_step_plan *plan, zb_step_stats *sync_out,
                             zb_step_stats *prefetch_out) {
    zb_step_stats *out[2] = {sync_out, prefetch_out}; /* indexed by zb_step_mode */
    start_stats(sync_out, plan, ZB_MODE_SYNC);
    start_stats(prefetch_out, plan, ZB_MODE_PREFETCH);
    per_step ps[2];
    zb_step_block blk;
    zb_status st = per_step_alloc(&blk, ps, 2, zb_step_max_pairs(ctx->cfg));
    /* Two phases in the trace, one per schedule, each numbering its steps from 1. */
    for (int m = 0; m < 2; m++) zb_step_trace_begin(ctx, (zb_step_mode)m, plan->engine.stage, &ps[m].tr);
    size_t dropped_before = ctx->dev->cfg.trace->n_dropped;
    zb_tracer_stats tracer_before;
    bool tracer_ran = zb_step_tracer_read(&ctx->backends, &tracer_before);
    zb_engine_cfg ec = plan->engine;
    ec.mode = ZB_MODE_SYNC;
    zb_engine *e = NULL;
    if (st == ZB_OK) st = zb_engine_create(&ec, ctx->dev, ctx->comm, ctx->compute, ctx->comm_stream, &e);
    if (st == ZB_OK) st = run_pairs(ctx, plan, e, ps, out);
    for (int m = 0; m < 2 && st == ZB_OK; m++) {
        st = zb_engine_set_mode(e, (zb_step_mode)m);
        if (st != ZB_OK) break;
        zb_engine_expected_peaks(e, out[m]->expected_tag_bytes);
        out[m]->mem_per_rank_bytes = zb_step_memory_per_rank(ctx);
        out[m]->comm_bytes_formula = zb_engine_expected_comm_bytes(e);
        st = mem_view(ctx, out[m]);
    }
    /* One run for both: its trace losses are counted once, on each row. */
    if (st == ZB_OK) {
        const char *tracer = NULL;
        tracer_window(ctx, tracer_ran, &tracer_before, ctx->dev->cfg.trace->n_dropped - dropped_before, &blk,
                      &tracer);
        st = zb_step_block_finish(ctx, plan, &blk, ps[0].n, tracer, out);
    }
    zb_engine_destroy(e);
    per_step_free(&blk, ps, 2);
    return st;
}
