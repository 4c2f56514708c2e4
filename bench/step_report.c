/* The step benchmark's outputs: the side-by-side table (one row per stage and
 * schedule, with the change against sync), the memory and traffic table
 * (measured per-tag peaks next to the ledger, counted comm bytes next to the
 * formula), and one JSON run per row (DESIGN.md §5 metric names). */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "step.h"
#include "table.h"

#define MIB (1024.0 * 1024.0)

static const char *mode_name(zb_step_mode m) { return m == ZB_MODE_SYNC ? "sync" : "prefetch"; }

/* A number with `decimals` decimals (and a sign when `sign`), or "n/m"
 * (not measured) for NaN. */
static void set_num(zb_table *t, int col, int decimals, bool sign, double v) {
    if (isnan(v)) zb_table_set(t, col, "n/m");
    else if (sign) zb_table_set(t, col, "%+.*f", decimals, v);
    else zb_table_set(t, col, "%.*f", decimals, v);
}

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

static void print_main_table(FILE *f, const zb_step_plan *plan, const zb_step_stats *runs, int n_runs) {
    static const char *const heads[][2] = {
        {"stage", ""}, {"mode", ""}, {"step", "ms"}, {"vs sync", "%"}, {"tokens/s", ""}, {"MFU", "%"},
        {"HFU", "%"}, {"overlap", "%"}, {"exposed comm", "ms"}, {"compute", "ms"}, {"comm", "ms"},
        {"hidden", "%"}, {"slowdown", "%"}, {"peak mem", "MiB"}, {"comm/step", "MiB"}, {"loss", ""}};
    zb_table *t = zb_table_new();
    if (!t) return;
    for (size_t c = 0; c < sizeof heads / sizeof heads[0]; c++) {
        zb_table_add_column(t, heads[c][0], heads[c][1], c == 1 ? ZB_ALIGN_LEFT : ZB_ALIGN_RIGHT);
    }
    for (int i = 0; i < n_runs; i++) {
        const zb_step_stats *r = &runs[i];
        zb_table_add_row(t);
        zb_table_set(t, 0, "%d", r->stage);
        zb_table_set(t, 1, "%s", mode_name(r->mode));
        zb_table_set(t, 2, "%.3f", r->step_ms);
        if (r->mode == ZB_MODE_SYNC) zb_table_set(t, 3, "-");
        else set_num(t, 3, 1, true, delta_pct(runs, n_runs, r));
        zb_table_set(t, 4, "%.0f", r->tokens_per_s);
        set_num(t, 5, 2, false, r->mfu_pct);
        if (plan->engine.recompute) set_num(t, 6, 2, false, r->hfu_pct);
        else zb_table_set(t, 6, "-"); /* no recomputation: HFU = MFU */
        set_num(t, 7, 1, false, r->overlap_pct);
        set_num(t, 8, 3, false, r->exposed_comm_ms);
        set_num(t, 9, 3, false, r->compute_ms);
        set_num(t, 10, 3, false, r->comm_ms);
        set_num(t, 11, 1, false, r->hidden_pct);
        set_num(t, 12, 1, true, r->compute_slowdown_pct);
        zb_table_set(t, 13, "%.2f", (double)r->peak_bytes / MIB);
        zb_table_set(t, 14, "%.3f", (double)r->comm_bytes_per_step / MIB);
        zb_table_set(t, 15, "%.4f", (double)r->loss_last);
    }
    zb_table_print(t, f, "#");
    zb_table_free(t);
}

static void print_memory_table(FILE *f, const zb_step_stats *runs, int n_runs) {
    zb_table *t = zb_table_new();
    if (!t) return;
    zb_table_add_column(t, "stage", "", ZB_ALIGN_RIGHT);
    zb_table_add_column(t, "mode", "", ZB_ALIGN_LEFT);
    static const zb_mem_tag tags[] = {ZB_MEM_PARAM_SHARD, ZB_MEM_GRAD_SHARD, ZB_MEM_OPTIM_STATE,
                                      ZB_MEM_GATHERED_PARAM, ZB_MEM_GATHERED_GRAD, ZB_MEM_ACTIVATION,
                                      ZB_MEM_WORKSPACE};
    const int n_tags = (int)(sizeof tags / sizeof tags[0]);
    for (int k = 0; k < n_tags; k++) zb_table_add_column(t, zb_mem_tag_name(tags[k]), "MiB", ZB_ALIGN_RIGHT);
    zb_table_add_column(t, "ledger", "", ZB_ALIGN_RIGHT);
    zb_table_add_column(t, "comm counted", "B/step", ZB_ALIGN_RIGHT);
    zb_table_add_column(t, "formula", "B/step", ZB_ALIGN_RIGHT);
    for (int i = 0; i < n_runs; i++) {
        const zb_step_stats *r = &runs[i];
        zb_table_add_row(t);
        zb_table_set(t, 0, "%d", r->stage);
        zb_table_set(t, 1, "%s", mode_name(r->mode));
        bool ledger_ok = true;
        for (int k = 0; k < n_tags; k++) {
            zb_table_set(t, 2 + k, "%.3f", (double)r->peak_tag_bytes[tags[k]] / MIB);
        }
        for (int k = 0; k < ZB_MEM_TAG_COUNT; k++) {
            if (k != ZB_MEM_BENCH_BUFFER && k != ZB_MEM_COMM_BUFFER) {
                ledger_ok = ledger_ok && r->peak_tag_bytes[k] == r->expected_tag_bytes[k];
            }
        }
        zb_table_set(t, 2 + n_tags, "%s", ledger_ok ? "equal" : "DIFFERS");
        zb_table_set(t, 3 + n_tags, "%llu", (unsigned long long)r->comm_bytes_per_step);
        zb_table_set(t, 4 + n_tags, "%llu", (unsigned long long)r->comm_bytes_formula);
    }
    zb_table_print(t, f, "#");
    zb_table_free(t);
}

void zb_step_print(zb_bench_ctx *ctx, const zb_step_plan *plan, const zb_step_stats *runs, int n_runs) {
    FILE *f = ctx->out;
    if (!f) return;
    const zb_model_cfg *m = &plan->engine.model;
    fprintf(f, "# model %s: %d layers, dim %d, heads %d/%d kv, head dim %d, ffn %d, vocab %d, seq %d, "
               "micro-batch %d per rank; %.4g M parameters\n",
            plan->model_name, m->layers, m->dim, m->heads, m->kv_heads, m->head_dim, m->ffn_dim, m->vocab,
            m->seq, m->batch, zb_model_total_params(m) / 1e6);
    fprintf(f, "# %d measured steps after %lld warm-up; recompute %s; prefetch depth %d; AdamW lr %g; "
               "params %s, activations %s (fp32 math), gradients reduced in %s, fp32 master weights and AdamW "
               "states\n",
            runs[0].steps, (long long)ctx->cfg->warmup_steps, plan->engine.recompute ? "full" : "none",
            plan->engine.prefetch_depth, (double)plan->engine.opt.lr, zb_dtype_name(plan->engine.param_dtype),
            zb_dtype_name(plan->engine.act_dtype), zb_dtype_name(plan->engine.grad_dtype));
    fprintf(f, "# MFU: %.4g model FLOPs per token (%s attention convention) against %.4g GFLOP/s per rank (%s)\n",
            plan->flops.model_flops, zb_flops_convention_name(plan->convention), ctx->peak_flops / 1e9,
            ctx->peak_source);
    fprintf(f, "# step time: median over steps of the max over ranks; overlap = |comm ∩ compute| / |comm| "
               "from the trace; hidden = (T_sync - T_prefetch) / exposed comm of sync\n");
    print_main_table(f, plan, runs, n_runs);
    fprintf(f, "#\n# peak memory per rank by tag, against the ledger; bytes each rank sends per step, against "
               "DESIGN.md's formula\n");
    print_memory_table(f, runs, n_runs);
    for (int i = 0; i < n_runs; i++) {
        if (runs[i].device_view) {
            fprintf(f, "# device view, stage %d %s: pool reserved high %.2f MiB, GPU memory used high %.2f MiB, "
                       "outside the pool (context, NCCL, cuBLASLt, CUPTI) %.2f MiB\n",
                    runs[i].stage, mode_name(runs[i].mode), (double)runs[i].pool_reserved_high_bytes / MIB,
                    (double)runs[i].device_used_high_bytes / MIB, (double)runs[i].library_bytes / MIB);
        }
    }
    for (int i = 0; i < n_runs; i++) {
        if (runs[i].dropped_records) {
            fprintf(f, "# WARNING: %zu trace records dropped in stage %d %s: its trace metrics are incomplete\n",
                    runs[i].dropped_records, runs[i].stage, mode_name(runs[i].mode));
        }
    }
}

static json_t *tag_bytes_json(const size_t bytes[ZB_MEM_TAG_COUNT]) {
    json_t *o = json_object();
    for (int k = 0; k < ZB_MEM_TAG_COUNT; k++) {
        json_object_set_new(o, zb_mem_tag_name((zb_mem_tag)k), json_integer((json_int_t)bytes[k]));
    }
    return o;
}

static json_t *metrics_json(const zb_step_plan *plan, const zb_step_stats *r, double delta) {
    json_t *m = json_object();
    json_object_set_new(m, "step_time_ms", zb_json_real_or_null(r->step_ms));
    json_object_set_new(m, "step_time_min_ms", zb_json_real_or_null(r->step_min_ms));
    json_object_set_new(m, "step_time_max_ms", zb_json_real_or_null(r->step_max_ms));
    json_object_set_new(m, "step_time_vs_sync_pct", zb_json_real_or_null(delta));
    json_object_set_new(m, "tokens_per_s", zb_json_real_or_null(r->tokens_per_s));
    json_object_set_new(m, "mfu_pct", zb_json_real_or_null(r->mfu_pct));
    json_object_set_new(m, "hfu_pct", zb_json_real_or_null(r->hfu_pct));
    json_object_set_new(m, "overlap_pct", zb_json_real_or_null(r->overlap_pct));
    json_object_set_new(m, "overlap_min_pct", zb_json_real_or_null(r->overlap_min_pct));
    json_object_set_new(m, "exposed_comm_ms", zb_json_real_or_null(r->exposed_comm_ms));
    json_object_set_new(m, "compute_ms", zb_json_real_or_null(r->compute_ms));
    json_object_set_new(m, "comm_ms", zb_json_real_or_null(r->comm_ms));
    json_object_set_new(m, "hidden_pct", zb_json_real_or_null(r->hidden_pct));
    json_object_set_new(m, "compute_slowdown_pct", zb_json_real_or_null(r->compute_slowdown_pct));
    json_object_set_new(m, "peak_mem_bytes", json_integer((json_int_t)r->peak_bytes));
    json_object_set_new(m, "peak_mem_by_tag_bytes", tag_bytes_json(r->peak_tag_bytes));
    json_object_set_new(m, "ledger_by_tag_bytes", tag_bytes_json(r->expected_tag_bytes));
    json_object_set_new(m, "comm_bytes_per_step", json_integer((json_int_t)r->comm_bytes_per_step));
    json_object_set_new(m, "comm_bytes_formula", json_integer((json_int_t)r->comm_bytes_formula));
    if (r->device_view) {
        json_object_set_new(m, "device_pool_reserved_high_bytes", json_integer((json_int_t)r->pool_reserved_high_bytes));
        json_object_set_new(m, "device_used_high_bytes", json_integer((json_int_t)r->device_used_high_bytes));
        json_object_set_new(m, "device_library_bytes", json_integer((json_int_t)r->library_bytes));
    }
    json_object_set_new(m, "model_flops_per_token", zb_json_real_or_null(plan->flops.model_flops));
    json_object_set_new(m, "trace_records_dropped", json_integer((json_int_t)r->dropped_records));
    json_object_set_new(m, "loss_first", zb_json_real_or_null(r->loss_first));
    json_object_set_new(m, "loss", zb_json_real_or_null(r->loss_last));
    return m;
}

void zb_step_add_json(zb_bench_ctx *ctx, const zb_step_plan *plan, const zb_step_stats *runs, int n_runs) {
    const zb_model_cfg *mc = &plan->engine.model;
    for (int i = 0; i < n_runs; i++) {
        const zb_step_stats *r = &runs[i];
        json_t *run = json_object();
        json_object_set_new(run, "bench", json_string("step"));
        json_object_set_new(run, "mode", json_string(mode_name(r->mode)));
        json_object_set_new(run, "stage", json_integer(r->stage));
        json_object_set_new(run, "ranks", json_integer(ctx->topo.n_ranks));
        json_object_set_new(run, "nodes", json_integer(ctx->topo.n_nodes));
        json_object_set_new(run, "model", json_string(plan->model_name));
        json_object_set_new(run, "dtype", json_string(zb_dtype_name(plan->engine.act_dtype)));
        json_object_set_new(run, "act_dtype", json_string(zb_dtype_name(plan->engine.act_dtype)));
        json_object_set_new(run, "param_dtype", json_string(zb_dtype_name(plan->engine.param_dtype)));
        json_object_set_new(run, "grad_reduce_dtype", json_string(zb_dtype_name(plan->engine.grad_dtype)));
        json_object_set_new(run, "recompute", json_string(plan->engine.recompute ? "full" : "none"));
        json_object_set_new(run, "prefetch_depth", json_integer(plan->engine.prefetch_depth));
        json_object_set_new(run, "flops_convention", json_string(zb_flops_convention_name(plan->convention)));
        json_object_set_new(run, "peak_source", json_string(ctx->peak_source));
        json_object_set_new(run, "shape", json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "layers", mc->layers,
                                                    "dim", mc->dim, "heads", mc->heads, "kv_heads", mc->kv_heads,
                                                    "head_dim", mc->head_dim, "ffn_dim", mc->ffn_dim, "vocab",
                                                    mc->vocab, "seq", mc->seq, "batch", mc->batch));
        json_object_set_new(run, "metrics", metrics_json(plan, r, delta_pct(runs, n_runs, r)));
        zb_report_add_run(ctx->report, run);
    }
}
