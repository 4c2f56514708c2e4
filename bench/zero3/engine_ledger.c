/* What the engine's memory and traffic must be, from the configuration
 * alone: the per-tag peaks its allocations add up to (engine.h lists them)
 * and the comm bytes per step of docs/design.md §6's formula. The tests compare
 * the device's measured peaks and the comm's counted bytes with these. */
#include <stdlib.h>
#include <string.h>

#include "engine_impl.h"
#include "ledger.h"

typedef struct ledger_shape {
    int stage, n, n_units, n_pslots, n_gslots;
    size_t sum_padded, max_padded, max_opt; /* max_opt: largest optimizer range */
    size_t p, g, a;                         /* bytes of a param, gradient, activation */
} ledger_shape;

static void peaks_of(const zb_engine_cfg *cfg, const ledger_shape *s, size_t peak[ZB_MEM_TAG_COUNT]) {
    const zb_model_cfg *mc = &cfg->model;
    size_t f = sizeof(float), n = (size_t)s->n, p = s->p, g = s->g;
    memset(peak, 0, ZB_MEM_TAG_COUNT * sizeof(size_t));
    peak[ZB_MEM_PARAM_SHARD] = p * (zb_engine_full_params(s->stage) ? s->sum_padded : s->sum_padded / n);
    peak[ZB_MEM_GRAD_SHARD] = g * (zb_engine_full_grads(s->stage) ? s->sum_padded : s->sum_padded / n);
    peak[ZB_MEM_OPTIM_STATE] = 3 * f * (s->stage == 0 ? s->sum_padded : s->sum_padded / n);
    if (s->stage == 3) peak[ZB_MEM_GATHERED_PARAM] = p * (size_t)s->n_pslots * s->max_padded;
    if (!zb_engine_full_grads(s->stage)) peak[ZB_MEM_GATHERED_GRAD] = g * (size_t)s->n_gslots * s->max_padded;
    size_t acts = 0, tokens = (size_t)mc->batch * (size_t)mc->seq;
    for (int u = 0; u < s->n_units; u++) {
        acts += zb_unit_acts_bytes(mc, u, mc->batch, !cfg->recompute, cfg->act_dtype);
    }
    acts += 2 * tokens * (size_t)mc->dim * s->a; /* backward gradient ping-pong */
    acts += f;                                /* the loss */
    acts += 2 * tokens * sizeof(int32_t);     /* tokens and targets */
    peak[ZB_MEM_ACTIVATION] = acts;
    peak[ZB_MEM_WORKSPACE] = zb_unit_workspace_bytes(mc, mc->batch, cfg->recompute, cfg->act_dtype);
    /* fp32 working buffers of the bf16 paths (engine.h). */
    if (p != s->a) peak[ZB_MEM_WORKSPACE] += f * s->max_padded;
    if (g != f) peak[ZB_MEM_WORKSPACE] += f * (s->max_padded + s->max_opt);
}

static void shape_of(const zb_engine_cfg *cfg, int n_ranks, ledger_shape *s) {
    bool prefetch = cfg->mode == ZB_MODE_PREFETCH;
    s->stage = cfg->stage;
    s->n = n_ranks;
    s->n_units = zb_model_n_units(&cfg->model);
    s->n_pslots = prefetch ? 1 + cfg->prefetch_depth : 1;
    s->n_gslots = prefetch ? ZB_ENGINE_GSLOTS : 1;
    s->p = zb_dtype_size(cfg->param_dtype);
    s->g = zb_dtype_size(cfg->grad_dtype);
    s->a = zb_dtype_size(cfg->act_dtype);
    s->sum_padded = s->max_padded = s->max_opt = 0;
    for (int u = 0; u < s->n_units; u++) {
        size_t numel = zb_model_unit_numel(&cfg->model, u), nn = (size_t)n_ranks;
        size_t padded = (numel + nn - 1) / nn * nn;
        size_t opt = zb_engine_opt_count(cfg->stage, padded, padded / nn);
        s->sum_padded += padded;
        if (padded > s->max_padded) s->max_padded = padded;
        if (opt > s->max_opt) s->max_opt = opt;
    }
}

void zb_engine_expected_peaks(const zb_engine *e, size_t peak_bytes[ZB_MEM_TAG_COUNT]) {
    ledger_shape s;
    shape_of(&e->cfg, e->n, &s);
    peaks_of(&e->cfg, &s, peak_bytes);
}

uint64_t zb_engine_expected_comm_bytes(const zb_engine *e) {
    uint64_t *padded = (uint64_t *)malloc((size_t)e->n_units * sizeof(uint64_t));
    if (!padded) return 0;
    for (int u = 0; u < e->n_units; u++) padded[u] = e->padded[u];
    uint64_t bytes = zb_ledger_comm_bytes_per_step(e->cfg.stage, padded, e->n_units, e->n,
                                                   (int)e->psize, (int)e->gsize);
    free(padded);
    return bytes;
}

zb_status zb_engine_predict_bytes(const zb_engine_cfg *cfg, int n_ranks, size_t *bytes) {
    ZB_TRY(zb_model_cfg_validate(&cfg->model));
    ledger_shape s;
    size_t peak[ZB_MEM_TAG_COUNT];
    shape_of(cfg, n_ranks, &s);
    peaks_of(cfg, &s, peak);
    *bytes = 0;
    for (int t = 0; t < ZB_MEM_TAG_COUNT; t++) { /* device memory only (device.h) */
        if (!zb_mem_tag_is_host((zb_mem_tag)t)) *bytes += peak[t];
    }
    return ZB_OK;
}
