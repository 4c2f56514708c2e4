/* One cell of zerobench plan (plan_ledger.h): the engine's ledger for a
 * model, the model-state ledger for a bare parameter count. */
#include <math.h>
#include <string.h>

#include "ledger.h"
#include "plan_ledger.h"

static zb_status cell_from_params(const zb_plan_input *in, zb_plan_cell *c) {
    zb_ledger_state st;
    int p = (int)zb_dtype_size(in->param_dtype), g = (int)zb_dtype_size(in->grad_dtype);
    ZB_TRY(zb_ledger_state_bytes((zb_zero_stage)c->stage, in->params, c->ranks, p, g, 12, &st));
    c->phi = in->params;
    c->params_bytes = st.params_bytes;
    c->grads_bytes = st.grads_bytes;
    c->optim_bytes = st.optim_bytes;
    c->model_state_bytes = st.total_bytes;
    c->total_bytes = st.total_bytes;
    /* No units: the closed form (docs/design.md §6), not the per-unit padding. */
    c->comm_bytes = (uint64_t)llround(zb_ledger_comm_bytes_per_step_f(c->stage, (double)in->params, c->ranks, p, g));
    return ZB_OK;
}

static zb_status cell_from_model(const zb_plan_input *in, zb_plan_cell *c) {
    zb_engine_cfg ec = in->engine;
    ec.stage = c->stage;
    ec.mode = c->mode;
    const zb_model_cfg *m = &ec.model;
    ZB_TRY(zb_model_cfg_validate(m));
    for (int u = 0; u < zb_model_n_units(m); u++) { /* as the step refuses it */
        size_t numel = zb_model_unit_numel(m, u);
        if (numel < (size_t)c->ranks) {
            return ZB_FAIL(ZB_ERR_INVALID, "unit %d has %zu parameters, fewer than the %d ranks it would be "
                           "sharded over", u, numel, c->ranks);
        }
    }
    size_t peak[ZB_MEM_TAG_COUNT];
    zb_ledger_comm comm;
    ZB_TRY(zb_engine_predict_peaks(&ec, c->ranks, peak));
    ZB_TRY(zb_engine_predict_comm(&ec, c->ranks, &comm));
    c->shapes_known = true;
    c->phi = 0;
    for (int u = 0; u < zb_model_n_units(m); u++) {
        uint64_t numel = zb_model_unit_numel(m, u), n = (uint64_t)c->ranks;
        c->phi += (numel + n - 1) / n * n;
    }
    c->params_bytes = peak[ZB_MEM_PARAM_SHARD];
    c->grads_bytes = peak[ZB_MEM_GRAD_SHARD];
    c->optim_bytes = peak[ZB_MEM_OPTIM_STATE];
    c->model_state_bytes = c->params_bytes + c->grads_bytes + c->optim_bytes;
    c->activation_bytes = peak[ZB_MEM_ACTIVATION];
    c->workspace_bytes = peak[ZB_MEM_WORKSPACE];
    c->gathered_bytes = peak[ZB_MEM_GATHERED_PARAM] + peak[ZB_MEM_GATHERED_GRAD];
    ZB_TRY(zb_engine_predict_bytes(&ec, c->ranks, &peak[0])); /* the total the step checks */
    c->total_bytes = peak[0];
    c->comm_bytes = comm.total_bytes;
    return ZB_OK;
}

zb_status zb_plan_cell_compute(const zb_plan_input *in, int stage, zb_step_mode mode, int ranks,
                               zb_plan_cell *out) {
    if (stage < 0 || stage > 3) return ZB_FAIL(ZB_ERR_INVALID, "plan: ZeRO stage %d; accepted: 0, 1, 2, 3", stage);
    if (ranks < 1) return ZB_FAIL(ZB_ERR_INVALID, "plan: %d GPUs; accepted: at least 1", ranks);
    zb_plan_cell c;
    memset(&c, 0, sizeof c);
    c.stage = stage;
    c.ranks = ranks;
    c.mode = mode;
    ZB_TRY(in->have_model ? cell_from_model(in, &c) : cell_from_params(in, &c));
    *out = c;
    return ZB_OK;
}
