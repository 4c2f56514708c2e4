/* zerobench step (the default command): the ZeRO training step of a
 * LLaMA-style model in the sync and prefetch schedules, side by side, for
 * one ZeRO stage or all four. Plans the runs from the model profile and the
 * overrides, refuses a model that cannot run as asked (bad shapes, units
 * smaller than the number of ranks, not enough memory) before allocating
 * anything, then runs and reports. */
#include <unistd.h>

#include "step.h"

static void apply_overrides(const zb_config *cfg, zb_model_cfg *m) {
    if (cfg->layers) m->layers = (int)cfg->layers;
    if (cfg->dim) m->dim = (int)cfg->dim;
    if (cfg->heads) m->heads = (int)cfg->heads;
    if (cfg->kv_heads) m->kv_heads = (int)cfg->kv_heads;
    if (cfg->head_dim) m->head_dim = (int)cfg->head_dim;
    if (cfg->ffn_dim) m->ffn_dim = (int)cfg->ffn_dim;
    if (cfg->vocab) m->vocab = (int)cfg->vocab;
    if (cfg->seq) m->seq = (int)cfg->seq;
    if (cfg->batch) m->batch = (int)cfg->batch;
}

static zb_status make_plan(const zb_bench_ctx *ctx, zb_step_plan *plan) {
    const zb_config *cfg = ctx->cfg;
    zb_model_profile mp;
    plan->model_name = cfg->model[0] ? cfg->model : "tiny";
    ZB_TRY(zb_model_profile_load(plan->model_name, &mp));
    zb_engine_cfg *ec = &plan->engine;
    zb_model_cfg_from_profile(&mp, (uint64_t)cfg->seed, &ec->model);
    apply_overrides(cfg, &ec->model);
    ZB_TRY(zb_model_cfg_validate(&ec->model));
    ec->recompute = cfg->recompute == 1;
    ec->prefetch_depth = (int)cfg->prefetch_depth;
    zb_config_step_dtypes(cfg, ctx->backends.device->default_param_dtype, &ec->param_dtype, &ec->act_dtype,
                          &ec->grad_dtype);
    zb_adamw_cfg_default(&ec->opt);
    ec->opt.lr = (float)cfg->lr;
    plan->tokens_global = (double)ec->model.batch * ec->model.seq * ctx->topo.n_ranks;
    plan->convention = cfg->flops_causal ? ZB_FLOPS_CAUSAL : ZB_FLOPS_FULL;
    const zb_model_cfg *m = &ec->model;
    zb_flops_shape fs = {m->layers, m->dim, m->heads, m->kv_heads, m->head_dim, m->ffn_dim, m->vocab, m->seq};
    /* The engine recomputes transformer blocks, not the head. */
    return zb_flops_per_token(&fs, plan->convention, ec->recompute ? ZB_RECOMPUTE_BLOCKS : ZB_RECOMPUTE_NONE,
                              &plan->flops);
}

/* Memory each rank may use: the profile's, or on CPU the node's physical
 * memory shared by the ranks on it. */
static double memory_per_rank(const zb_bench_ctx *ctx) {
    if (!ctx->hw.mem_bytes_measure) return ctx->hw.mem_bytes;
    double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    return phys / ctx->topo.local_size;
}

static zb_status check_fits(const zb_bench_ctx *ctx, const zb_step_plan *plan, int stage, zb_step_mode mode) {
    const zb_model_cfg *m = &plan->engine.model;
    int n = ctx->topo.n_ranks;
    for (int u = 0; u < zb_model_n_units(m); u++) {
        size_t numel = zb_model_unit_numel(m, u);
        if (numel < (size_t)n) {
            return ZB_FAIL(ZB_ERR_INVALID, "model '%s': unit %d has %zu parameters, fewer than the %d ranks "
                           "it would be sharded over", plan->model_name, u, numel, n);
        }
    }
    zb_engine_cfg ec = plan->engine;
    ec.stage = stage;
    ec.mode = mode;
    size_t need = 0;
    ZB_TRY(zb_engine_predict_bytes(&ec, n, &need));
    double have = memory_per_rank(ctx);
    if ((double)need > have) {
        return ZB_FAIL(ZB_ERR_INVALID, "model '%s' at --stage %d needs %.3g GB per rank (model states, gathered "
                       "buffers, activations) but a rank has %.3g GB (%s); use more ranks, a higher --stage, "
                       "--recompute full, or a smaller --batch/--seq", plan->model_name, stage, (double)need / 1e9,
                       have / 1e9, ctx->hw.mem_bytes_measure ? "node memory / ranks on the node" : ctx->hw.name);
    }
    return ZB_OK;
}

static zb_status step_run_all(zb_bench_ctx *ctx) {
    const zb_config *cfg = ctx->cfg;
    zb_step_plan plan;
    ZB_TRY(make_plan(ctx, &plan));
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
    zb_step_stats runs[8];
    int n_runs = 0;
    for (int s = first_stage; s <= last_stage; s++) {
        for (int i = 0; i < n_modes; i++) {
            plan.engine.stage = s;
            plan.engine.mode = modes[i];
            zb_step_stats *r = &runs[n_runs++];
            ZB_TRY(zb_step_run(ctx, &plan, r));
            if (modes[i] == ZB_MODE_PREFETCH && i > 0) zb_step_compare(&runs[n_runs - 2], r);
        }
    }
    zb_step_print(ctx, &plan, runs, n_runs);
    zb_step_add_json(ctx, &plan, runs, n_runs);
    return ZB_OK;
}

const zb_bench zb_bench_step = {"step", step_run_all};
