/* zerobench step (the default command): the ZeRO training step of a
 * LLaMA-style model in the sync and prefetch schedules, side by side, for
 * one ZeRO stage or all four. Plans the runs from the model profile and the
 * overrides, refuses a model that cannot run as asked (bad shapes, units
 * smaller than the number of ranks, not enough memory) before allocating
 * anything, then runs and reports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "step.h"
#include "step_trace.h"
#include "test_hook.h"

zb_status zb_step_make_plan(const zb_bench_ctx *ctx, zb_step_plan *plan) {
    const zb_config *cfg = ctx->cfg;
    zb_model_profile mp;
    const char *profile = cfg->model[0] ? cfg->model : ZB_MODEL_DEFAULT;
    ZB_TRY(zb_model_profile_load(profile, &mp));
    zb_step_model_label(profile, cfg, plan->model_label, sizeof plan->model_label);
    zb_engine_cfg *ec = &plan->engine;
    zb_model_cfg_from_profile(&mp, (uint64_t)cfg->seed, &ec->model);
    zb_model_apply_shape(cfg, &ec->model); /* the flags override the profile */
    ZB_TRY(zb_model_cfg_validate(&ec->model));
    ec->recompute = cfg->recompute == 1;
    ec->prefetch_depth = (int)cfg->prefetch_depth;
    /* The device's GEMM workspace: the fits check and the ledger count it. */
    ec->gemm_stream_workspace_bytes = ctx->dev ? ctx->dev->ops->gemm_stream_workspace_bytes : 0;
    ZB_TRY(zb_test_delay_ms(ctx->topo.rank, &ec->test_delay_ms));
    zb_config_step_dtypes(cfg, zb_bench_default_param_dtype(ctx), &ec->param_dtype, &ec->act_dtype,
                          &ec->grad_dtype);
    zb_adamw_cfg_default(&ec->opt);
    ec->opt.lr = (float)cfg->lr;
    plan->tokens_global = (double)ec->model.batch * ec->model.seq * ctx->world_ranks;
    plan->convention = cfg->flops_causal ? ZB_FLOPS_CAUSAL : ZB_FLOPS_FULL;
    const zb_model_cfg *m = &ec->model;
    zb_flops_shape fs = {m->layers, m->dim, m->heads, m->kv_heads, m->head_dim, m->ffn_dim, m->vocab, m->seq};
    /* The engine recomputes transformer blocks, not the head. */
    return zb_flops_per_token(&fs, plan->convention, ec->recompute ? ZB_RECOMPUTE_BLOCKS : ZB_RECOMPUTE_NONE,
                              &plan->flops);
}

/* Memory each rank may use: the profile's, or on CPU the node's physical
 * memory shared by the ranks on it. */
double zb_step_memory_per_rank(const zb_bench_ctx *ctx) {
    if (!ctx->hw.mem_bytes_measure) return zb_bench_device_share(ctx, ctx->hw.mem_bytes);
    return zb_bench_host_memory_per_rank(ctx);
}

zb_status zb_step_check_units(const zb_bench_ctx *ctx, const zb_step_plan *plan) {
    const zb_model_cfg *m = &plan->engine.model;
    int n = ctx->world_ranks;
    for (int u = 0; u < zb_model_n_units(m); u++) {
        size_t numel = zb_model_unit_numel(m, u);
        if (numel < (size_t)n) {
            return ZB_FAIL(ZB_ERR_INVALID, "model '%s': unit %d has %zu parameters, fewer than the %d ranks "
                           "it would be sharded over", plan->model_label, u, numel, n);
        }
    }
    return ZB_OK;
}

static zb_status check_fits(const zb_bench_ctx *ctx, const zb_step_plan *plan, int stage, zb_step_mode mode) {
    int n = ctx->world_ranks;
    ZB_TRY(zb_step_check_units(ctx, plan));
    zb_engine_cfg ec = plan->engine;
    ec.stage = stage;
    ec.mode = mode;
    size_t need = 0;
    ZB_TRY(zb_engine_predict_bytes(&ec, n, &need));
    double have = zb_step_memory_per_rank(ctx);
    if ((double)need > have && ctx->simulated) {
        /* The sim needs no memory: it predicts the run as if it fitted and says it does not. */
        if (ctx->out) {
            fprintf(ctx->out, "# WARNING: stage %d %s needs %.3g GB per GPU but %s has %.3g GB: it would not fit; "
                    "simulated as if it did (fits: false in the JSON)\n", stage, mode == ZB_MODE_SYNC ? "sync" :
                    "prefetch", (double)need / 1e9, ctx->hw.name, have / 1e9);
        }
        return ZB_OK;
    }
    if ((double)need > have) {
        return ZB_FAIL(ZB_ERR_INVALID, "model '%s' at --stage %d needs %.3g GB per rank (model states, gathered "
                       "buffers, activations) but a rank has %.3g GB (%s); use more ranks, a higher --stage, "
                       "--recompute full, or a smaller --batch/--seq", plan->model_label, stage, (double)need / 1e9,
                       have / 1e9, ctx->hw.mem_bytes_measure ? "node memory / ranks on the node" : ctx->hw.name);
    }
    return ZB_OK;
}

static zb_status step_run_all(zb_bench_ctx *ctx) {
    const zb_config *cfg = ctx->cfg;
    zb_step_plan plan;
    ZB_TRY(zb_step_make_plan(ctx, &plan));
    /* The label also names the model in the trace's metadata (main). */
    json_object_set_new(zb_report_meta(ctx->report), "model", json_string(plan.model_label));
    int first_stage = cfg->stage == ZB_STAGE_ALL ? 0 : cfg->stage;
    int last_stage = cfg->stage == ZB_STAGE_ALL ? 3 : cfg->stage;
    zb_step_mode modes[2];
    int n_modes = 0;
    if (cfg->mode != ZB_MODE_PREFETCH) modes[n_modes++] = ZB_MODE_SYNC;
    if (cfg->mode != ZB_MODE_SYNC) modes[n_modes++] = ZB_MODE_PREFETCH;
    /* Every configuration is checked before the first one allocates. */
    for (int s = first_stage; s <= last_stage; s++) {
        for (int i = 0; i < n_modes; i++) ZB_TRY(check_fits(ctx, &plan, s, modes[i]));
    }
    /* on the heap: each run holds its samples (ZB_STEP_MAX_SAMPLES per figure) */
    zb_step_stats *runs = (zb_step_stats *)calloc(8, sizeof *runs);
    if (!runs) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for the step's runs");
    int n_runs = 0;
    zb_status st = ZB_OK;
    for (int s = first_stage; s <= last_stage && st == ZB_OK; s++) {
        if (n_modes == 2) { /* both: the paired A/B on one state */
            plan.engine.stage = s;
            st = zb_step_run_paired(ctx, &plan, &runs[n_runs], &runs[n_runs + 1]);
            n_runs += 2;
            continue;
        }
        for (int i = 0; i < n_modes && st == ZB_OK; i++) {
            plan.engine.stage = s;
            plan.engine.mode = modes[i];
            st = zb_step_run(ctx, &plan, &runs[n_runs++]);
        }
    }
    if (st == ZB_OK) st = zb_step_report(ctx, &plan, runs, n_runs);
    for (int i = 0; i < n_runs; i++) zb_step_stats_release(&runs[i]);
    free(runs);
    return st;
}

/* ---- options ----------------------------------------------------------------- */

#define STEP_OPT(name, kind, field, lo, hi, help) \
    static const zb_opt opt_##field = {name, 0, kind, ZB_OPT_FIELD(field), lo, hi, help}
#define STEP_CHOICE(name, field, help, choices) \
    static const zb_opt opt_##field = {name, 0, ZB_OPT_CHOICE, ZB_OPT_FIELD(field), 0, 0, help, choices}

STEP_CHOICE("mode", mode, "sync, prefetch, or both side by side", "sync|prefetch|both");
STEP_CHOICE("stage", stage, "ZeRO stage: 0 (DDP), 1, 2, 3, or all (side by side)", "0|1|2|3|all");
const zb_opt zb_opt_steps = {"steps", 0, ZB_OPT_INT, ZB_OPT_FIELD(steps), 1, 1e6,
                             "measured training steps (--mode both: pairs; the minimum when --precision "
                             "applies)"};
STEP_OPT("warmup", ZB_OPT_INT, warmup_steps, 0, 1e6, "untimed steps before the measured ones");
STEP_OPT("trace-steps", ZB_OPT_TEXT, trace_steps, 0, 0,
         "steps the --trace file writes, per run, numbered from 1 with warm-up steps first: A-B, A, or all "
         "(default: each run's first 10 measured steps; the trace's otherData lists what was left out)");
STEP_OPT("lr", ZB_OPT_REAL, lr, 1e-12, 1e30, "AdamW learning rate (any positive number)");
STEP_OPT("seed", ZB_OPT_INT, seed, 0, 9e15, "seed of the initialization and the data");
STEP_CHOICE("flops", flops_causal, "attention FLOPs convention for MFU: full (torchtitan, PaLM) or causal (Megatron)",
            "full|causal");

/* Which runs and their per-rank notes (step only), then the model and how
 * it is run (step and scale; the model's flags are model_opts.c's, which
 * plan takes too). */
static const zb_opt *const step_mode_opts[] = {&opt_mode, &opt_stage, &zb_opt_straggler_pct, &opt_trace_steps,
                                                NULL};
static const zb_opt_group step_mode_group = {step_mode_opts, zb_step_trace_check};
static const zb_opt *const step_model_opts[] = {
    &zb_opt_model, &zb_opt_recompute, &zb_opt_param_dtype, &zb_opt_act_dtype, &zb_opt_grad_reduce_dtype,
    &zb_opt_prefetch_depth, &zb_opt_steps, &opt_warmup_steps, &zb_opt_layers, &zb_opt_dim, &zb_opt_heads,
    &zb_opt_kv_heads, &zb_opt_head_dim, &zb_opt_ffn_dim, &zb_opt_vocab, &zb_opt_seq, &zb_opt_batch, &opt_lr,
    &opt_seed, &opt_flops_causal, NULL};
const zb_opt_group zb_step_model_group = {step_model_opts, NULL};
static const zb_opt_group *const step_groups[] = {&step_mode_group, &zb_step_model_group, &zb_step_pairs_group,
                                                  NULL};

/* The step computes in its activations' dtype. */
zb_dtype zb_step_peak_dtype(const zb_config *cfg, zb_dtype device_default) {
    zb_dtype param, act, grad;
    zb_config_step_dtypes(cfg, device_default, &param, &act, &grad);
    return act;
}

/* It measures overlap from the trace, so it always traces. */
const zb_bench zb_bench_step = {
    .name = "step",
    .groups = step_groups,
    .flags = ZB_BENCH_ALWAYS_TRACE,
    .peak_dtype = zb_step_peak_dtype,
    .run = step_run_all,
};
