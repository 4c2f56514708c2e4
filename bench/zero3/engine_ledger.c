/* What the engine's memory and traffic must be, from the configuration
 * alone: the per-tag peaks its allocations add up to (engine.h lists them)
 * and the comm bytes per step of docs/design.md §6's formula. The tests compare
 * the device's measured peaks and the comm's counted bytes with these; the
 * step's memory check and `zerobench plan` call the configuration forms
 * (zb_engine_predict_*), so all of them use this one arithmetic. */
#include <stdlib.h>
#include <string.h>

#include "engine_impl.h"
#include "ledger.h"

typedef struct ledger_shape {
    int stage, n, n_units, n_pslots, n_gslots;
    size_t sum_padded, max_padded, max_opt; /* max_opt: largest optimizer range */
    size_t p, g, a;                         /* bytes of a param, gradient, activation */
} ledger_shape;

/* The per-tag peaks; the model states (param_shard, grad_shard,
 * optim_state) are the ledger's own formula (ledger.h) over Φ = the sum of
 * the padded units, a multiple of n, so each shard is exactly Φ/n. */
static zb_status peaks_of(const zb_engine_cfg *cfg, const ledger_shape *s, size_t peak[ZB_MEM_TAG_COUNT]) {
    const zb_model_cfg *mc = &cfg->model;
    size_t f = sizeof(float), p = s->p, g = s->g;
    memset(peak, 0, ZB_MEM_TAG_COUNT * sizeof(size_t));
    zb_ledger_state st;
    ZB_TRY(zb_ledger_state_bytes((zb_zero_stage)s->stage, (uint64_t)s->sum_padded, s->n, (int)p, (int)g,
                                 (int)(3 * f), &st));
    peak[ZB_MEM_PARAM_SHARD] = (size_t)st.params_bytes;
    peak[ZB_MEM_GRAD_SHARD] = (size_t)st.grads_bytes;
    peak[ZB_MEM_OPTIM_STATE] = (size_t)st.optim_bytes; /* fp32 master + m + v: k = 12 */
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
    /* The device's GEMM workspace of the compute stream, the one stream the
     * engine runs GEMMs on (cuda: cuBLASLt's 32 MiB). */
    peak[ZB_MEM_WORKSPACE] += cfg->gemm_stream_workspace_bytes;
    return ZB_OK;
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

/* The padded unit sizes of a configuration, as the engine pads them. */
static zb_status padded_units(const zb_engine_cfg *cfg, int n_ranks, uint64_t **out, int *n_units) {
    *n_units = zb_model_n_units(&cfg->model);
    *out = (uint64_t *)malloc((size_t)*n_units * sizeof(uint64_t));
    if (!*out) return ZB_FAIL(ZB_ERR_NOMEM, "ledger: out of memory for %d units", *n_units);
    for (int u = 0; u < *n_units; u++) {
        uint64_t numel = zb_model_unit_numel(&cfg->model, u), nn = (uint64_t)n_ranks;
        (*out)[u] = (numel + nn - 1) / nn * nn;
    }
    return ZB_OK;
}

static zb_status check_cfg(const zb_engine_cfg *cfg, int n_ranks) {
    ZB_TRY(zb_model_cfg_validate(&cfg->model));
    if (n_ranks < 1) return ZB_FAIL(ZB_ERR_INVALID, "ledger: %d ranks; accepted: at least 1", n_ranks);
    if (cfg->stage < 0 || cfg->stage > 3)
        return ZB_FAIL(ZB_ERR_INVALID, "ledger: ZeRO stage %d; accepted: 0, 1, 2, 3", cfg->stage);
    return ZB_OK;
}

zb_status zb_engine_predict_peaks(const zb_engine_cfg *cfg, int n_ranks, size_t peak_bytes[ZB_MEM_TAG_COUNT]) {
    ZB_TRY(check_cfg(cfg, n_ranks));
    ledger_shape s;
    shape_of(cfg, n_ranks, &s);
    return peaks_of(cfg, &s, peak_bytes);
}

zb_status zb_engine_predict_comm(const zb_engine_cfg *cfg, int n_ranks, zb_ledger_comm *out) {
    ZB_TRY(check_cfg(cfg, n_ranks));
    uint64_t *padded = NULL;
    int n_units = 0;
    ZB_TRY(padded_units(cfg, n_ranks, &padded, &n_units));
    zb_status st = zb_ledger_comm_bytes_checked((zb_zero_stage)cfg->stage, padded, n_units, n_ranks,
                                                (int)zb_dtype_size(cfg->param_dtype),
                                                (int)zb_dtype_size(cfg->grad_dtype), out);
    free(padded);
    return st;
}

void zb_engine_expected_peaks(const zb_engine *e, size_t peak_bytes[ZB_MEM_TAG_COUNT]) {
    /* The engine exists, so its configuration passed these checks. */
    if (zb_engine_predict_peaks(&e->cfg, e->n, peak_bytes) != ZB_OK)
        memset(peak_bytes, 0, ZB_MEM_TAG_COUNT * sizeof(size_t));
}

uint64_t zb_engine_expected_comm_bytes(const zb_engine *e) {
    zb_ledger_comm c;
    return zb_engine_predict_comm(&e->cfg, e->n, &c) == ZB_OK ? c.total_bytes : 0;
}

zb_status zb_engine_predict_bytes(const zb_engine_cfg *cfg, int n_ranks, size_t *bytes) {
    size_t peak[ZB_MEM_TAG_COUNT];
    ZB_TRY(zb_engine_predict_peaks(cfg, n_ranks, peak));
    *bytes = 0;
    for (int t = 0; t < ZB_MEM_TAG_COUNT; t++) { /* device memory only (device.h) */
        if (!zb_mem_tag_is_host((zb_mem_tag)t)) *bytes += peak[t];
    }
    return ZB_OK;
}
