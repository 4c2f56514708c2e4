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
    zb_step_trace tr;      /* --trace: this schedule's phase and the steps kept (step_trace.h) */
    int n;                 /* measured steps in the arrays (a paired run may stop early or go on) */
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

/* The median over all ranks' values of a per-step array, and their minimum
 * when min_out is given (collective); the values kept as `keep`'s samples. */
static zb_status median_over_ranks(const zb_bench_ctx *ctx, const double *mine, int steps, const char *what,
                                   double *med_out, double *min_out, zb_step_samples *keep) {
    int n = ctx->topo.n_ranks;
    double *all = (double *)malloc(sizeof(double) * (size_t)steps * (size_t)n);
    /* Not agreed on: this rank's failure ends the job (main aborts). */
    if (!all) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory gathering %s over %d ranks", what, n);
    ZB_TRY(zb_mpi_allgather_bounded(mine, all, steps, MPI_DOUBLE, MPI_COMM_WORLD, what, ctx->cfg->timeout_s));
    if (min_out) *min_out = zb_min(all, (size_t)steps * (size_t)n);
    zb_step_keep_samples(keep, all, (size_t)steps * (size_t)n);
    *med_out = zb_median(all, (size_t)steps * (size_t)n);
    free(all);
    return ZB_OK;
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
    float loss = 0;
    ZB_TRY(zb_mpi_allreduce_bounded(&r.loss, &loss, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                                    "summing the step's loss", cfg->timeout_s));
    loss /= (float)ctx->topo.n_ranks;
    double local_ms = (double)(r.end_ns - r.start_ns) / 1e6, ms = 0;
    ZB_TRY(zb_mpi_allreduce_bounded(&local_ms, &ms, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD,
                                    "taking the step's maximum time", cfg->timeout_s));
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
    ZB_TRY(measure_trace(ctx, first_record, &r, &ov));
    ZB_TRY(zb_step_wait_measure(ctx, first_record, &r, &ps->wait, m));
    if (r.sent_bytes == 0) ps->wait.exp_wait[m] = ps->wait.exp_xfer[m] = NAN; /* nothing to expose */
    zb_step_trace_end_step(ctx, &ps->tr, index, false, first_record, &r);
    /* Without --trace the records are only for these metrics: drop them
     * so a long run's memory stays bounded. */
    if (!cfg->trace_path[0]) zb_trace_clear(ctx->dev->cfg.trace);
    ps->step_ms[m] = ms;
    ps->local_ms[m] = local_ms;
    bool measured = ov.comm_ns >= 0;
    /* No byte sent (one rank): the one-rank collectives are local copies,
     * there is nothing to hide, so neither overlap nor exposed comm is a
     * figure of communication (nor hidden % or slowdown, which follow). */
    bool sent = r.sent_bytes > 0;
    ps->overlap[m] = sent ? ov.overlap_pct : NAN;
    ps->exposed[m] = measured && sent ? (double)ov.exposed_comm_ns / 1e6 : NAN;
    ps->compute[m] = measured ? (double)ov.compute_ns / 1e6 : NAN;
    ps->comm[m] = measured ? (double)ov.comm_ns / 1e6 : NAN;
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

/* The run's tracer losses over all ranks (collective: every rank takes
 * part, a rank without a tracer with zeros): null only where none ran.
 * The harness trace's dropped records (out->dropped_records, this rank's
 * on entry) are summed over the ranks too. */
static zb_status tracer_window(zb_bench_ctx *ctx, bool ran, const zb_tracer_stats *before, zb_step_stats *out) {
    zb_tracer_stats after, w;
    memset(&w, 0, sizeof w);
    if (ran && zb_step_tracer_read(&ctx->backends, &after)) zb_tracer_stats_window(before, &after, &w);
    else ran = false;
    uint64_t mine[6] = {ran ? 1u : 0u, w.records_dropped, w.zero_timestamps, w.inverted, w.buffer_errors,
                        (uint64_t)out->dropped_records};
    uint64_t all[6];
    ZB_TRY(zb_mpi_allreduce_bounded(mine, all, 6, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD,
                                    "summing the trace's losses", ctx->cfg->timeout_s));
    out->dropped_records = (size_t)all[5];
    out->tracer_ran = all[0] > 0;
    out->tracer.name = w.name ? w.name : "the device tracer";
    memcpy(out->tracer.note, w.note, sizeof out->tracer.note); /* this rank's */
    out->tracer.records_dropped = all[1];
    out->tracer.zero_timestamps = all[2];
    out->tracer.inverted = all[3];
    out->tracer.buffer_errors = all[4];
    return ZB_OK;
}

/* zb_median sorts its input: the per-step arrays keep their step order,
 * which the pairs of --mode both are made of, so it gets a copy. */
static double median_of_copy(const double *v, int n) {
    double *c = (double *)malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (!c) return NAN; /* not measured rather than wrong */
    memcpy(c, v, sizeof(double) * (size_t)(n > 0 ? n : 0));
    double m = zb_median(c, (size_t)n);
    free(c);
    return m;
}

static zb_status summarize(zb_bench_ctx *ctx, const zb_step_plan *plan, per_step *ps, zb_step_stats *out) {
    int steps = ps->n, n = ctx->world_ranks;
    ps->wait.used = steps;
    out->steps = steps;
    out->step_min_ms = zb_min(ps->step_ms, (size_t)steps);
    out->step_max_ms = zb_max(ps->step_ms, (size_t)steps);
    out->step_ms = median_of_copy(ps->step_ms, steps);
    zb_step_keep_samples(&out->samples[ZB_SAMPLES_STEP], ps->step_ms, (size_t)steps);
    double t = out->step_ms / 1e3;
    out->tokens_per_s = plan->tokens_global / t;
    out->mfu_pct = zb_mfu_pct(plan->flops.model_flops, plan->tokens_global, t, n, ctx->peak_flops);
    out->hfu_pct = zb_mfu_pct(plan->flops.hardware_flops, plan->tokens_global, t, n, ctx->peak_flops);
    out->hidden_pct = NAN;
    out->compute_slowdown_pct = NAN;
    /* Each rank's own medians over its steps (per_rank), then those over all ranks. */
    const double *const figs[ZB_STEP_RANK_FIGS] = {ps->local_ms, ps->overlap, ps->exposed, ps->compute, ps->comm};
    ZB_TRY(zb_step_gather_ranks(ctx, figs, steps, out));
    ZB_TRY(zb_step_wait_summarize(ctx, &ps->wait, &out->wait));
    ZB_TRY(median_over_ranks(ctx, ps->overlap, steps, "gathering the overlap per step", &out->overlap_pct,
                             &out->overlap_min_pct, &out->samples[ZB_SAMPLES_OVERLAP]));
    ZB_TRY(median_over_ranks(ctx, ps->exposed, steps, "gathering the exposed comm per step",
                             &out->exposed_comm_ms, NULL, &out->samples[ZB_SAMPLES_EXPOSED]));
    ZB_TRY(median_over_ranks(ctx, ps->compute, steps, "gathering the compute time per step", &out->compute_ms,
                             NULL, &out->samples[ZB_SAMPLES_COMPUTE]));
    return median_over_ranks(ctx, ps->comm, steps, "gathering the comm time per step", &out->comm_ms, NULL,
                             &out->samples[ZB_SAMPLES_COMM]);
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

/* The per-step arrays (one block, returned) and the wait accumulator;
 * NULL when out of memory. per_step_free releases both. */
static double *per_step_alloc(per_step *ps, int steps) {
    memset(ps, 0, sizeof *ps);
    ps->n = steps;
    double *block = (double *)calloc(6 * (size_t)steps, sizeof(double));
    if (!block) return NULL;
    if (zb_step_wait_init(&ps->wait, steps) != ZB_OK) {
        free(block);
        return NULL;
    }
    ps->step_ms = block;
    ps->overlap = block + steps;
    ps->exposed = block + 2 * steps;
    ps->compute = block + 3 * steps;
    ps->comm = block + 4 * steps;
    ps->local_ms = block + 5 * steps;
    return block;
}

static void per_step_free(per_step *ps, double *block) {
    zb_step_wait_acc_free(&ps->wait);
    free(block);
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
    double *block = per_step_alloc(&ps, (int)ctx->cfg->steps);
    if (!block) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for step statistics");
    zb_step_trace_begin(ctx, plan->engine.mode, plan->engine.stage, &ps.tr);
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
    per_step_free(&ps, block);
    return st;
}

/* ---- the paired A/B (--mode both) -------------------------------------------- */

/* Each step's median over ranks of a per-step array (collective). */
static zb_status per_step_median(const zb_bench_ctx *ctx, const double *mine, int steps, const char *what,
                                 double *out) {
    int n = ctx->topo.n_ranks;
    /* all: [n][steps] as gathered, then one step's column of n values. */
    double *all = (double *)malloc(sizeof(double) * ((size_t)steps * (size_t)n + (size_t)n));
    /* Not agreed on: this rank's failure ends the job (main aborts). */
    if (!all) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory gathering %s over %d ranks", what, n);
    ZB_TRY(zb_mpi_allgather_bounded(mine, all, steps, MPI_DOUBLE, MPI_COMM_WORLD, what, ctx->cfg->timeout_s));
    double *col = all + (size_t)steps * (size_t)n;
    for (int s = 0; s < steps; s++) {
        for (int r = 0; r < n; r++) col[r] = all[(size_t)r * (size_t)steps + (size_t)s];
        out[s] = zb_median(col, (size_t)n);
    }
    free(all);
    return ZB_OK;
}

/* The paired statistics of prefetch against sync, pair by pair (collective:
 * the trace metrics are per rank, each step's median over ranks is paired). */
static zb_status paired_stats(zb_bench_ctx *ctx, const per_step *sync, const per_step *pf, zb_step_stats *out) {
    int steps = sync->n;
    double *buf = (double *)malloc(sizeof(double) * 5 * (size_t)steps);
    if (!buf) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for the paired statistics");
    double *s_exp = buf, *s_comp = buf + steps, *p_comp = buf + 2 * steps;
    double *hidden = buf + 3 * steps, *slow = buf + 4 * steps;
    zb_status st = per_step_median(ctx, sync->exposed, steps, "gathering sync's exposed comm per step", s_exp);
    if (st == ZB_OK) st = per_step_median(ctx, sync->compute, steps, "gathering sync's compute per step", s_comp);
    if (st == ZB_OK) st = per_step_median(ctx, pf->compute, steps, "gathering prefetch's compute per step", p_comp);
    if (st == ZB_OK) {
        for (int i = 0; i < steps; i++) {
            hidden[i] = s_exp[i] > 0 ? 100.0 * (sync->step_ms[i] - pf->step_ms[i]) / s_exp[i] : NAN;
            /* Slowdown beside communication: none to measure where sync's
             * exposed comm is not (nothing sent, or not traced). */
            slow[i] = s_comp[i] > 0 && isfinite(s_exp[i]) ? 100.0 * (p_comp[i] / s_comp[i] - 1.0) : NAN;
        }
        out->paired = true;
        out->pairs = steps;
        out->step_diff_ms = zb_paired_diff(sync->step_ms, pf->step_ms, (size_t)steps);
        out->hidden = zb_paired_median_ci(hidden, (size_t)steps);
        out->slowdown = zb_paired_median_ci(slow, (size_t)steps);
        zb_step_keep_samples(&out->samples[ZB_SAMPLES_HIDDEN], hidden, (size_t)steps);
        zb_step_keep_samples(&out->samples[ZB_SAMPLES_SLOWDOWN], slow, (size_t)steps);
        /* The table's figures: the paired medians, as they are (a hidden %
         * above 100 or below 0 says something too: the reading words it). */
        out->hidden_pct = out->hidden.median;
        out->compute_slowdown_pct = out->slowdown.median;
    }
    free(buf);
    return st;
}

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
    int steps = zb_step_max_pairs(ctx->cfg);
    per_step ps[2];
    double *block[2] = {per_step_alloc(&ps[0], steps), per_step_alloc(&ps[1], steps)};
    zb_status st = block[0] && block[1] ? ZB_OK : ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for step statistics");
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
        /* One run for both: its trace losses are counted once, on each row. */
        out[m]->dropped_records = ctx->dev->cfg.trace->n_dropped - dropped_before;
        st = mem_view(ctx, out[m]);
    }
    if (st == ZB_OK) st = tracer_window(ctx, tracer_ran, &tracer_before, sync_out);
    if (st == ZB_OK) {
        prefetch_out->tracer_ran = sync_out->tracer_ran;
        prefetch_out->tracer = sync_out->tracer;
        prefetch_out->dropped_records = sync_out->dropped_records; /* the one run's, summed */
        st = summarize(ctx, plan, &ps[0], sync_out);
    }
    if (st == ZB_OK) st = summarize(ctx, plan, &ps[1], prefetch_out);
    if (st == ZB_OK) st = paired_stats(ctx, &ps[0], &ps[1], prefetch_out);
    zb_engine_destroy(e);
    if (block[0]) per_step_free(&ps[0], block[0]);
    if (block[1]) per_step_free(&ps[1], block[1]);
    return st;
}
