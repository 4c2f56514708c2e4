/* The step benchmark's outputs: the side-by-side table (one row per stage and
 * schedule, with the change against sync), the memory and traffic table
 * (measured per-tag peaks next to the ledger, counted comm bytes next to the
 * formula), the device tracer's own losses as notes, and one JSON run per
 * row (docs/design.md's metric names); each run described once, as one list
 * of fields (row.h) that both tables and the JSON are written from. */
#include <math.h>
#include <string.h>

#include "kernels.h"
#include "row.h"
#include "step.h"
#include "step_notes.h"

#define MIB (1024.0 * 1024.0)

static const char *mode_name(zb_step_mode m) { return m == ZB_MODE_SYNC ? "sync" : "prefetch"; }

static const zb_step_stats *sync_of(const zb_step_stats *runs, int n_runs, int stage) {
    for (int i = 0; i < n_runs; i++) {
        if (runs[i].stage == stage && runs[i].mode == ZB_MODE_SYNC) return &runs[i];
    }
    return NULL;
}

static double delta_pct(const zb_step_stats *runs, int n_runs, const zb_step_stats *r) {
    const zb_step_stats *s = sync_of(runs, n_runs, r->stage);
    if (!s || s == r) return NAN;
    return 100.0 * (r->step_ms / s->step_ms - 1.0);
}

/* ---- one row per run: both tables and its JSON run (row.h) ----------------- */

#define T_MAIN (1u << 0) /* the side-by-side comparison */
#define T_MEM (1u << 1)  /* memory by tag and traffic */
#define ROW_FIELDS (128 + ZB_STEP_PAIRED_FIELDS)

/* The tags the memory table shows: the step's own device memory, which the
 * ledger predicts; not the comm or bench buffers, nor host staging (host
 * memory, printed on its own line when there is any). */
static bool tag_in_table(int k) {
    return k != ZB_MEM_COMM_BUFFER && k != ZB_MEM_BENCH_BUFFER && !zb_mem_tag_is_host((zb_mem_tag)k);
}

/* A measured metric: JSON real (null when NaN) and, with a header, a main
 * table column ("n/m", not measured, for NaN). */
static zb_field metric(const char *key, const char *header, const char *unit, int decimals, double v) {
    zb_field f = {.key = key, .metric = true, .tables = header ? T_MAIN : 0, .header = header, .unit = unit,
                  .decimals = decimals, .na = "n/m", .kind = ZB_FIELD_REAL, .d = v};
    return f;
}

static zb_field json_int(const char *key, const char *parent, bool in_metrics, int64_t v) {
    zb_field f = {.key = key, .metric = in_metrics, .parent = parent, .kind = ZB_FIELD_INT, .i = v};
    return f;
}

static zb_field json_text(const char *key, const char *v) {
    zb_field f = {.key = key, .kind = ZB_FIELD_TEXT, .s = v};
    return f;
}

/* The attention implementation the device runs for the step's activations
 * (kernels.h attention_impl): "cpu-tiled", "cudnn-sdpa", "cuda-tiled" ... */
static const char *attention_impl(const zb_bench_ctx *ctx, zb_dtype act_dtype) {
    const zb_kernels *k = ctx->dev && ctx->compute ? zb_kernels_for(ctx->dev) : NULL;
    zb_kcall c = {ctx->compute, NULL, -1, act_dtype, 0.0};
    return k && k->attention_impl ? k->attention_impl(&c) : "unknown";
}

/* The run's identity: what it ran, at the JSON run's top level; stage and
 * mode also lead both tables (pinned: the JSON has mode first). */
static int identity_fields(zb_field *f, const zb_bench_ctx *ctx, const zb_step_plan *plan, const zb_step_stats *r) {
    const zb_engine_cfg *e = &plan->engine;
    const zb_model_cfg *mc = &e->model;
    int n = 0;
    f[n++] = json_text("bench", "step");
    f[n++] = (zb_field){.key = "mode", .tables = T_MAIN | T_MEM, .header = "mode", .left = true, .at = 2,
                        .kind = ZB_FIELD_TEXT, .s = mode_name(r->mode)};
    f[n++] = (zb_field){.key = "stage", .tables = T_MAIN | T_MEM, .header = "stage", .at = 1, .kind = ZB_FIELD_INT,
                        .i = r->stage};
    f[n++] = json_int("ranks", NULL, false, ctx->world_ranks);
    f[n++] = json_int("nodes", NULL, false, ctx->world_nodes);
    f[n++] = (zb_field){.key = "simulated", .kind = ZB_FIELD_BOOL, .b = ctx->simulated};
    f[n++] = json_text("model", plan->model_label);
    f[n++] = json_text("dtype", zb_dtype_name(e->act_dtype));
    f[n++] = json_text("act_dtype", zb_dtype_name(e->act_dtype));
    f[n++] = json_text("param_dtype", zb_dtype_name(e->param_dtype));
    f[n++] = json_text("grad_reduce_dtype", zb_dtype_name(e->grad_dtype));
    f[n++] = json_text("recompute", e->recompute ? "full" : "none");
    f[n++] = json_text("attention", attention_impl(ctx, e->act_dtype));
    f[n++] = json_int("prefetch_depth", NULL, false, e->prefetch_depth);
    f[n++] = json_text("flops_convention", zb_flops_convention_name(plan->convention));
    f[n++] = json_text("peak_source", ctx->peak_source);
    const struct { const char *key; int v; } dims[] = {
        {"layers", mc->layers}, {"dim", mc->dim}, {"heads", mc->heads}, {"kv_heads", mc->kv_heads},
        {"head_dim", mc->head_dim}, {"ffn_dim", mc->ffn_dim}, {"vocab", mc->vocab}, {"seq", mc->seq},
        {"batch", mc->batch}};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) f[n++] = json_int(dims[i].key, "shape", false, dims[i].v);
    return n;
}

/* Time, throughput and overlap: the main table and "metrics". */
static int time_fields(zb_field *f, const zb_step_plan *plan, const zb_step_stats *runs, int n_runs,
                       const zb_step_stats *r, int ranks) {
    int n = 0;
    f[n] = metric("step_time_ms", "step", "ms", 3, r->step_ms);
    f[n++].na = NULL; /* printed as is */
    f[n++] = metric("step_time_min_ms", NULL, NULL, 0, r->step_min_ms);
    f[n++] = metric("step_time_max_ms", NULL, NULL, 0, r->step_max_ms);
    f[n] = metric("step_time_vs_sync_pct", "vs sync", "%", 1, delta_pct(runs, n_runs, r));
    f[n].sign = true;
    if (r->mode == ZB_MODE_SYNC) f[n].cell = "-";
    n++;
    f[n] = metric("tokens_per_s", "tokens/s", "total", 0, r->tokens_per_s); /* all ranks together */
    f[n++].na = NULL; /* printed as is */
    f[n] = metric("tokens_per_s_per_rank", "tokens/s", "per rank", 0, r->tokens_per_s / ranks);
    f[n++].na = NULL;
    f[n++] = metric("mfu_pct", "MFU", "%", 2, r->mfu_pct);
    f[n] = metric("hfu_pct", "HFU", "%", 2, r->hfu_pct);
    if (!plan->engine.recompute) f[n].cell = "-"; /* no recomputation: HFU = MFU */
    n++;
    f[n++] = metric("overlap_pct", "overlap", "%", 1, r->overlap_pct);
    f[n++] = metric("overlap_min_pct", NULL, NULL, 0, r->overlap_min_pct);
    f[n++] = metric("overlap_worst_pct", "worst", "%", 1, r->overlap_worst_pct); /* the worst rank's */
    f[n++] = metric("exposed_comm_ms", "exposed comm", "ms", 3, r->exposed_comm_ms);
    f[n++] = metric("exposed_comm_worst_ms", "worst", "ms", 3, r->exposed_comm_worst_ms);
    /* exposed comm split: waiting for the last rank to arrive, and the rest (step_wait.h) */
    f[n++] = metric("exposed_wait_ms", "exp wait", "ms", 3, r->wait.measured ? r->wait.exposed_wait_ms : NAN);
    f[n++] = metric("exposed_transfer_ms", "exp xfer", "ms", 3, r->wait.measured ? r->wait.exposed_transfer_ms : NAN);
    f[n++] = metric("compute_ms", "compute", "ms", 3, r->compute_ms);
    f[n++] = metric("comm_ms", "comm", "ms", 3, r->comm_ms);
    f[n++] = metric("idle_ms", NULL, NULL, 0, r->idle_ms); /* JSON only: host time between ops */
    f[n++] = metric("ops_per_step", NULL, NULL, 0, r->ops_per_step);
    f[n++] = metric("comm_hold_ms", NULL, NULL, 0, r->comm_hold_ms); /* JSON only: compute held at a collective's start */
    f[n++] = metric("hidden_pct", "hidden", "%", 1, r->hidden_pct);
    f[n] = metric("compute_slowdown_pct", "slowdown", "%", 1, r->compute_slowdown_pct);
    f[n++].sign = true;
    return n;
}

/* Memory and traffic: the peaks by tag against the ledger (memory table),
 * counted comm bytes against the formula, and the main table's totals. */
static int memory_fields(zb_field *f, const zb_step_stats *r) {
    int n = 0;
    f[n++] = (zb_field){.key = "peak_mem_bytes", .metric = true, .tables = T_MAIN, .header = "peak mem",
                        .unit = "MiB", .div = MIB, .decimals = 2, .kind = ZB_FIELD_INT, .i = (int64_t)r->peak_bytes};
    f[n++] = (zb_field){.key = "fits", .metric = true, .kind = ZB_FIELD_BOOL,
                        .b = (double)r->peak_bytes <= r->mem_per_rank_bytes};
    bool ledger_ok = true;
    for (int k = 0; k < ZB_MEM_TAG_COUNT; k++) {
        const char *tag = zb_mem_tag_name((zb_mem_tag)k);
        f[n] = json_int(tag, "peak_mem_by_tag_bytes", true, (int64_t)r->peak_tag_bytes[k]);
        if (tag_in_table(k)) {
            f[n].tables = T_MEM;
            f[n].header = tag;
            f[n].unit = "MiB";
            f[n].div = MIB;
            f[n].decimals = 3;
            ledger_ok = ledger_ok && r->peak_tag_bytes[k] == r->expected_tag_bytes[k];
        }
        n++;
    }
    for (int k = 0; k < ZB_MEM_TAG_COUNT; k++) {
        f[n++] = json_int(zb_mem_tag_name((zb_mem_tag)k), "ledger_by_tag_bytes", true, (int64_t)r->expected_tag_bytes[k]);
    }
    f[n++] = (zb_field){.tables = T_MEM, .header = "ledger", .kind = ZB_FIELD_TEXT, .s = ledger_ok ? "equal" : "DIFFERS"};
    f[n++] = (zb_field){.key = "comm_bytes_per_step", .metric = true, .tables = T_MEM, .header = "comm counted",
                        .unit = "B/step", .kind = ZB_FIELD_INT, .i = (int64_t)r->comm_bytes_per_step};
    f[n++] = (zb_field){.tables = T_MAIN, .header = "comm/step", .unit = "MiB", .div = MIB, .decimals = 3,
                        .kind = ZB_FIELD_INT, .i = (int64_t)r->comm_bytes_per_step};
    f[n++] = (zb_field){.key = "comm_bytes_formula", .metric = true, .tables = T_MEM, .header = "formula",
                        .unit = "B/step", .kind = ZB_FIELD_INT, .i = (int64_t)r->comm_bytes_formula};
    /* used and library are device-wide: shared when other ranks use the
     * same device, and then not this rank's (docs/design.md §9). Without a
     * device view (cpu, sim) not in the JSON, empty CSV columns. */
    int first = n;
    f[n++] = json_int("device_pool_reserved_high_bytes", NULL, true, (int64_t)r->pool_reserved_high_bytes);
    f[n++] = json_int("device_used_high_bytes", NULL, true, (int64_t)r->device_used_high_bytes);
    f[n++] = json_int("device_library_bytes", NULL, true, (int64_t)r->library_bytes);
    f[n++] = (zb_field){.key = "device_memory_shared", .metric = true, .kind = ZB_FIELD_BOOL,
                        .b = r->device_sharing_ranks > 1};
    f[n++] = json_int("device_sharing_ranks", NULL, true, r->device_sharing_ranks);
    for (int i = first; i < n; i++) f[i].absent = !r->device_view;
    return n;
}

/* The device tracer's own losses in the run: integers, null where no
 * tracer ran (the cpu device). */
static int tracer_fields(zb_field *f, const zb_step_stats *r) {
    const zb_tracer_stats *t = &r->tracer;
    const struct { const char *key; uint64_t v; } counts[] = {
        {"tracer_records_dropped", t->records_dropped}, {"tracer_zero_timestamps", t->zero_timestamps},
        {"tracer_inverted_records", t->inverted}, {"tracer_buffer_errors", t->buffer_errors}};
    int n = 0;
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        f[n] = json_int(counts[i].key, NULL, true, (int64_t)counts[i].v);
        f[n++].null = !r->tracer_ran;
    }
    return n;
}

static void free_samples(json_t **samples) {
    for (int k = 0; k < ZB_STEP_N_SAMPLED; k++) json_decref(samples[k]);
}

static zb_status add_row(zb_rows *out, const zb_bench_ctx *ctx, const zb_step_plan *plan, const zb_step_stats *runs,
                         int n_runs, const zb_step_stats *r) {
    zb_field f[ROW_FIELDS];
    int n = identity_fields(f, ctx, plan, r);
    n += time_fields(f + n, plan, runs, n_runs, r, ctx->world_ranks);
    /* The values behind each figure: compare's two-sample test reads them. */
    json_t *samples[ZB_STEP_N_SAMPLED] = {NULL};
    for (int k = 0; k < ZB_STEP_N_SAMPLED; k++) {
        const zb_step_samples *sm = &r->samples[k];
        if (!sm->n) continue; /* not measured: no key */
        json_t *a = samples[k] = json_array();
        for (int i = 0; a && i < sm->n; i++) json_array_append_new(a, json_real(sm->v[i]));
        if (!a || (int)json_array_size(a) != sm->n) {
            free_samples(samples);
            return ZB_FAIL(ZB_ERR_NOMEM, "out of memory for the step's samples");
        }
        f[n++] = (zb_field){.key = zb_step_sample_keys[k], .metric = true, .parent = "samples", .kind = ZB_FIELD_JSON,
                            .j = a};
    }
    n += memory_fields(f + n, r);
    f[n++] = metric("model_flops_per_token", NULL, NULL, 0, plan->flops.model_flops);
    f[n++] = json_int("trace_records_dropped", NULL, true, (int64_t)r->dropped_records);
    n += tracer_fields(f + n, r);
    n += zb_step_paired_fields(f + n, r); /* --mode both: the paired A/B (step_paired.c) */
    f[n++] = metric("loss_first", NULL, NULL, 0, r->loss_first);
    f[n] = metric("loss", "loss", NULL, 4, r->loss_last);
    f[n++].na = ctx->simulated ? "n/a" : NULL; /* the sim computes none: JSON null */
    /* Per-rank figures, stragglers and the stage's reading (step_notes.c). */
    char reading[1024];
    zb_step_stage_reading(ctx, runs, n_runs, r->stage, reading, sizeof reading);
    zb_step_notes_json own;
    int k = 0;
    zb_status st = zb_step_notes_fields(ctx, r, reading, f + n, &k, &own);
    if (st != ZB_OK) {
        free_samples(samples);
        return st;
    }
    st = zb_rows_add(out, f, n + k, 1);
    zb_step_notes_json_free(&own);
    free_samples(samples);
    return st;
}

static void print_tables(zb_bench_ctx *ctx, const zb_step_plan *plan, const zb_step_stats *runs, int n_runs,
                         const zb_rows *rows) {
    FILE *f = ctx->out;
    const zb_model_cfg *m = &plan->engine.model;
    fprintf(f, "# model %s: %d layers, dim %d, heads %d/%d kv, head dim %d, ffn %d, vocab %d, seq %d, "
               "micro-batch %d per rank; %.4g M parameters\n",
            plan->model_label, m->layers, m->dim, m->heads, m->kv_heads, m->head_dim, m->ffn_dim, m->vocab,
            m->seq, m->batch, zb_model_total_params(m) / 1e6);
    fprintf(f, "# %d measured steps after %lld warm-up; recompute %s; fused attention %s; prefetch depth %d; "
               "AdamW lr %g; params %s, activations %s (fp32 math), gradients reduced in %s, fp32 master weights "
               "and AdamW states\n",
            runs[0].steps, (long long)ctx->cfg->warmup_steps, plan->engine.recompute ? "full" : "none",
            attention_impl(ctx, plan->engine.act_dtype),
            plan->engine.prefetch_depth, (double)plan->engine.opt.lr, zb_dtype_name(plan->engine.param_dtype),
            zb_dtype_name(plan->engine.act_dtype), zb_dtype_name(plan->engine.grad_dtype));
    fprintf(f, "# MFU: %.4g model FLOPs per token (%s attention convention) against %.4g GFLOP/s per rank (%s)\n",
            plan->flops.model_flops, zb_flops_convention_name(plan->convention), ctx->peak_flops / 1e9,
            ctx->peak_source);
    if (ctx->simulated) {
        fprintf(f, "# SIMULATED step: virtual time from the cost model and the %s profile (docs/design.md §6), "
                   "%d ranks on %d node(s) modelled in one process; the loss is not computed (n/a)\n",
                ctx->hw.name, ctx->world_ranks, ctx->world_nodes);
    }
    fprintf(f, "# step time: median over steps of the max over ranks; overlap = |comm ∩ compute| / |comm| "
               "from the trace; hidden = (T_sync - T_prefetch) / exposed comm of sync\n");
    fprintf(f, "# exp wait: exposed comm spent waiting for the last rank to reach a collective; exp xfer: the "
               "rest of it, after the last arrival (docs/design.md §6)\n");
    zb_rows_print(rows, 0, f, "#");
    for (int i = 0; i < n_runs; i++) { /* --mode both: the paired A/B, in words (step_paired.c) */
        char reading[1024];
        zb_step_paired_reading(&runs[i], reading, sizeof reading);
        if (reading[0]) fprintf(f, "# %s\n", reading);
    }
    fprintf(f, "#\n# peak memory per rank by tag, against the ledger; bytes each rank sends per step, against "
               "the formula (docs/design.md §6)\n");
    zb_rows_print(rows, 1, f, "#");
    for (int i = 0; i < n_runs; i++) {
        if (runs[i].device_view && runs[i].device_sharing_ranks > 1) {
            /* Device-wide figures of a shared GPU are not this rank's: say whose they are. */
            fprintf(f, "# device view, stage %d %s: pool reserved high %.2f MiB (this rank's pool); device-wide "
                       "figures include %d ranks on the same GPU: GPU memory used high %.2f MiB, outside this "
                       "rank's pool (contexts, other ranks' pools, NCCL, cuBLASLt, CUPTI) %.2f MiB\n",
                    runs[i].stage, mode_name(runs[i].mode), (double)runs[i].pool_reserved_high_bytes / MIB,
                    runs[i].device_sharing_ranks, (double)runs[i].device_used_high_bytes / MIB,
                    (double)runs[i].library_bytes / MIB);
        } else if (runs[i].device_view) {
            fprintf(f, "# device view, stage %d %s: pool reserved high %.2f MiB, GPU memory used high %.2f MiB, "
                       "outside the pool (context, NCCL, cuBLASLt, CUPTI) %.2f MiB\n",
                    runs[i].stage, mode_name(runs[i].mode), (double)runs[i].pool_reserved_high_bytes / MIB,
                    (double)runs[i].device_used_high_bytes / MIB, (double)runs[i].library_bytes / MIB);
        }
    }
    for (int i = 0; i < n_runs; i++) {
        size_t staged = runs[i].peak_tag_bytes[ZB_MEM_HOST_STAGING];
        if (staged) { /* host memory: not in peak mem, which is device memory (docs/design.md §6) */
            fprintf(f, "# host staging, stage %d %s: pinned host memory high %.2f MiB (not in peak mem)\n",
                    runs[i].stage, mode_name(runs[i].mode), (double)staged / MIB);
        }
    }
    for (int i = 0; i < n_runs; i++) {
        if (runs[i].dropped_records) {
            fprintf(f, "# WARNING: %zu trace records dropped in stage %d %s: its trace metrics are incomplete\n",
                    runs[i].dropped_records, runs[i].stage, mode_name(runs[i].mode));
        }
    }
    for (int i = 0; i < n_runs; i++) {
        const zb_tracer_stats *t = &runs[i].tracer;
        if (!runs[i].tracer_ran) continue;
        bool lost = t->records_dropped || t->zero_timestamps || t->inverted || t->buffer_errors;
        fprintf(f, "# %s%s's own losses in stage %d %s: %llu records dropped, %llu without timestamps, "
                   "%llu inverted, %llu buffer errors%s\n",
                lost ? "WARNING: " : "", t->name, runs[i].stage, mode_name(runs[i].mode),
                (unsigned long long)t->records_dropped, (unsigned long long)t->zero_timestamps,
                (unsigned long long)t->inverted, (unsigned long long)t->buffer_errors,
                lost ? ": its trace metrics are incomplete" : "");
    }
    for (int i = 0; i < n_runs; i++) zb_step_wait_print(f, runs[i].stage, mode_name(runs[i].mode), &runs[i].wait);
    /* The tracer's clock, said once: its records were converted to the harness clock. */
    for (int i = 0; i < n_runs; i++) {
        if (runs[i].tracer_ran && runs[i].tracer.note[0]) {
            fprintf(f, "# %s\n", runs[i].tracer.note);
            break;
        }
    }
    zb_step_notes_print(f, ctx, runs, n_runs);
}

zb_status zb_step_report(zb_bench_ctx *ctx, const zb_step_plan *plan, const zb_step_stats *runs, int n_runs) {
    zb_rows *rows = zb_rows_new(ctx->report, 2);
    zb_status st = rows ? ZB_OK : ZB_FAIL(ZB_ERR_NOMEM, "out of memory for the step's tables");
    for (int i = 0; i < n_runs && st == ZB_OK; i++) {
        st = add_row(rows, ctx, plan, runs, n_runs, &runs[i]);
        json_t *run = zb_report_last_run(ctx->report);
        if (st == ZB_OK && run) zb_step_wait_json(&runs[i].wait, run); /* per collective kind and per rank */
        if (st == ZB_OK && ctx->report) st = zb_step_wait_csv_columns(ctx->report);
    }
    if (st == ZB_OK && ctx->out) print_tables(ctx, plan, runs, n_runs, rows);
    zb_rows_free(rows);
    return st;
}
