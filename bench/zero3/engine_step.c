/* One training step in the sync or prefetch schedule (see engine.h).
 *
 * The host walks the step's "uses" of parameters in order: forward of units
 * 0..U-1, then backward of units U-1..0 (use i; at stage 3 each use gathers
 * the unit). At use i it issues, in this order:
 *   1. prefetch only: the gather of use i + K (K = prefetch depth) on the
 *      comm stream, after waiting for the ring slot it overwrites to be
 *      released by the compute that last read it (use i + K - S, S = K + 1,
 *      whose release was issued in an earlier iteration, so the wait sees
 *      the right record);
 *   2. the compute of use i on the compute stream, after the event of its
 *      gather; then the release of its slot;
 *   3. backward only: the reduction of the unit's gradients on the comm
 *      stream, after the event of its backward.
 * sync mode issues gather i at use i (K = 0, one slot) and, around every
 * collective, makes the comm stream wait for all compute issued so far and
 * the compute stream wait for the collective, so nothing overlaps. The
 * optimizer runs after the backward, unit by unit, each after its unit's
 * reduction; at stages 1-2 the updated shards are all-gathered in place.
 * With bf16 params each use first casts its unit into the fp32 working copy
 * (compute stream, after the gather); with bf16 gradients the backward
 * writes fp32 into a working buffer that is cast to bf16 for the reduction,
 * and the reduced shard is widened to fp32 for AdamW. Collectives move the
 * dtype they are given (param dtype for gathers, grad dtype for reductions).
 * NVTX ranges ("unit <u> forward", ...) mark what the host issues, so an
 * Nsight Systems timeline reads like zerobench's own trace. */

#include "data.h"
#include "engine_impl.h"
#include "nvtx.h"
#include "test_hook.h"

static const zb_device_ops *ops(const zb_engine *e) { return e->dev->ops; }
static bool is_sync(const zb_engine *e) { return e->cfg.mode == ZB_MODE_SYNC; }

/* sync mode: everything issued to compute so far precedes the next comm op. */
static zb_status comm_after_compute(zb_engine *e) {
    if (!is_sync(e)) return ZB_OK;
    ZB_TRY(ops(e)->event_record(e->ev_compute, e->cs));
    return ops(e)->stream_wait_event(e->ms, e->ev_compute);
}

/* sync mode: the last comm op precedes the next compute op. */
static zb_status compute_after_comm(zb_engine *e) {
    if (!is_sync(e)) return ZB_OK;
    ZB_TRY(ops(e)->event_record(e->ev_comm, e->ms));
    return ops(e)->stream_wait_event(e->cs, e->ev_comm);
}

static int unit_of_use(const zb_engine *e, int use) {
    return use < e->n_units ? use : 2 * e->n_units - 1 - use;
}

static int pslot_of_use(const zb_engine *e, int use) { return use % e->n_pslots; }

/* Element i of a buffer whose elements are `size` bytes. */
static void *elem(void *base, size_t i, size_t size) { return (char *)base + i * size; }

/* Stage 3: all-gather the unit of `use` into its ring slot. */
static zb_status issue_gather_ops(zb_engine *e, int use) {
    int u = unit_of_use(e, use), slot = pslot_of_use(e, use);
    ZB_TRY(ops(e)->stream_wait_event(e->ms, e->ev_pslot_free[slot]));
    ZB_TRY(comm_after_compute(e));
    ZB_TRY(zb_comm_allgather(e->comm, e->ms, e->param[u], e->pslot[slot], e->shard[u],
                                   e->cfg.param_dtype, use < e->n_units ? "allgather.fwd" : "allgather.bwd", u));
    ZB_TRY(ops(e)->event_record(e->ev_gathered[use], e->ms));
    return compute_after_comm(e);
}

static zb_status issue_gather(zb_engine *e, int use) {
    zb_nvtx_push_range(ZB_NVTX_ALL_GATHER, unit_of_use(e, use));
    zb_status st = issue_gather_ops(e, use);
    zb_nvtx_pop();
    return st;
}

/* The parameters compute reads at `use` (in the activations' dtype), after
 * waiting for their gather; bf16 params under float activations are first
 * cast into the fp32 working copy. */
static zb_status params_for_use(zb_engine *e, int use, const void **out) {
    int u = unit_of_use(e, use);
    const void *src = e->param[u];
    if (e->cfg.stage == 3) {
        ZB_TRY(ops(e)->stream_wait_event(e->cs, e->ev_gathered[use]));
        src = e->pslot[pslot_of_use(e, use)];
    }
    if (e->cfg.param_dtype == e->cfg.act_dtype) {
        *out = src;
        return ZB_OK;
    }
    zb_kcall kc = {e->cs, "param_cast", u, ZB_DTYPE_F32};
    ZB_TRY(e->k->cast(&kc, e->wparam, ZB_DTYPE_F32, src, e->cfg.param_dtype, e->layouts[u].numel));
    *out = e->wparam;
    return ZB_OK;
}

static zb_status release_params(zb_engine *e, int use) {
    if (e->cfg.stage != 3) return ZB_OK;
    return ops(e)->event_record(e->ev_pslot_free[pslot_of_use(e, use)], e->cs);
}

static zb_unit_ctx unit_ctx(zb_engine *e) {
    zb_unit_ctx c;
    c.cfg = &e->cfg.model;
    c.k = e->k;
    c.stream = e->cs;
    c.dtype = e->cfg.act_dtype;
    c.B = e->B;
    c.tokens = e->tokens_dev;
    c.targets = e->targets_dev;
    c.loss = e->loss_dev;
    c.dloss_scale = 1.0f / (float)e->n; /* summed gradients = the global mean's */
    c.ws = &e->ws;
    return c;
}

static zb_status compute_forward_ops(zb_engine *e, int u) {
    const void *params = NULL;
    ZB_TRY(params_for_use(e, u, &params));
    zb_unit_ctx c = unit_ctx(e);
    const void *x_in = u == 0 ? NULL : e->acts[u - 1].out;
    void *x_out = u == e->n_units - 1 ? NULL : e->acts[u].out;
    ZB_TRY(zb_unit_forward(&c, u, params, x_in, x_out, &e->acts[u]));
    return release_params(e, u);
}

static zb_status compute_forward(zb_engine *e, int u) {
    zb_nvtx_push_range(ZB_NVTX_FORWARD, u);
    zb_status st = compute_forward_ops(e, u);
    zb_nvtx_pop();
    return st;
}

/* j-th backward (unit U-1-j): gradients into the persistent full buffer
 * (stages 0-1) or into a gathered-gradient ring slot (stages 2-3), in the
 * grad dtype. */
static void *grad_target(zb_engine *e, int j, int u) {
    return zb_engine_full_grads(e->cfg.stage) ? e->grad[u] : e->gslot[j % e->n_gslots];
}

static bool grads_f32(const zb_engine *e) { return e->cfg.grad_dtype == ZB_DTYPE_F32; }

/* Where the backward writes fp32 gradients: the target itself, or the fp32
 * working buffer cast into the target afterwards (bf16 gradients). */
static float *grad_f32_target(zb_engine *e, int j, int u) {
    return grads_f32(e) ? (float *)grad_target(e, j, u) : e->wgrad;
}

static zb_status compute_backward_ops(zb_engine *e, int use) {
    int j = use - e->n_units, u = unit_of_use(e, use);
    const void *params = NULL;
    ZB_TRY(params_for_use(e, use, &params));
    if (!zb_engine_full_grads(e->cfg.stage)) {
        ZB_TRY(ops(e)->stream_wait_event(e->cs, e->ev_gslot_free[j % e->n_gslots]));
    }
    size_t numel = e->layouts[u].numel;
    if ((!zb_engine_full_grads(e->cfg.stage) || !grads_f32(e)) && e->padded[u] > numel) {
        /* Backward writes the unit's own elements only; clear the padding
         * a larger unit left in this ring slot (or working buffer), so the
         * shard is clean. */
        zb_kcall kc = {e->cs, "zero_padding", u};
        ZB_TRY(e->k->fill(&kc, grad_f32_target(e, j, u) + numel, 0.0f, e->padded[u] - numel));
    }
    zb_unit_ctx c = unit_ctx(e);
    const void *dx_out = j == 0 ? NULL : e->dx[(j - 1) % 2];
    void *dx_in = u == 0 ? NULL : e->dx[j % 2];
    ZB_TRY(zb_unit_backward(&c, u, params, &e->acts[u], dx_out, dx_in, grad_f32_target(e, j, u)));
    if (!grads_f32(e)) {
        zb_kcall kc = {e->cs, "grad_cast", u};
        ZB_TRY(e->k->cast(&kc, grad_target(e, j, u), e->cfg.grad_dtype, e->wgrad, ZB_DTYPE_F32,
                          e->padded[u]));
    }
    ZB_TRY(release_params(e, use));
    return ops(e)->event_record(e->ev_bwd_done[u], e->cs);
}

static zb_status compute_backward(zb_engine *e, int use) {
    zb_nvtx_push_range(ZB_NVTX_BACKWARD, unit_of_use(e, use));
    zb_status st = compute_backward_ops(e, use);
    zb_nvtx_pop();
    return st;
}

/* The reduction of unit u's gradients: all-reduce (stage 0), in-place
 * reduce-scatter into the full buffer (1), reduce-scatter from the ring
 * slot into the shard (2-3). */
static zb_status issue_reduction_ops(zb_engine *e, int use) {
    int j = use - e->n_units, u = unit_of_use(e, use);
    zb_comm *c = e->comm;
    ZB_TRY(ops(e)->stream_wait_event(e->ms, e->ev_bwd_done[u]));
    ZB_TRY(comm_after_compute(e));
    zb_dtype gt = e->cfg.grad_dtype;
    if (e->cfg.stage == 0) {
        ZB_TRY(zb_comm_allreduce(c, e->ms, e->grad[u], e->grad[u], e->padded[u], gt,
                                 "allreduce.grad", u));
    } else if (e->cfg.stage == 1) {
        void *mine = elem(e->grad[u], (size_t)e->rank * e->shard[u], e->gsize);
        ZB_TRY(zb_comm_reducescatter(c, e->ms, e->grad[u], mine, e->shard[u], gt,
                                     "reducescatter.grad", u));
    } else {
        void *slot = e->gslot[j % e->n_gslots];
        ZB_TRY(zb_comm_reducescatter(c, e->ms, slot, e->grad[u], e->shard[u], gt,
                                     "reducescatter.grad", u));
        ZB_TRY(ops(e)->event_record(e->ev_gslot_free[j % e->n_gslots], e->ms));
    }
    ZB_TRY(ops(e)->event_record(e->ev_reduced[u], e->ms));
    return compute_after_comm(e);
}

static zb_status issue_reduction(zb_engine *e, int use) {
    zb_nvtx_push_range(ZB_NVTX_REDUCE_SCATTER, unit_of_use(e, use));
    zb_status st = issue_reduction_ops(e, use);
    zb_nvtx_pop();
    return st;
}

/* AdamW on this rank's part of unit u (bf16 reduced gradients widened to
 * fp32 first), then the compute-dtype copy of the master (a copy for fp32,
 * a cast for bf16); at stages 1-2 the updated shards are all-gathered back
 * into full params. */
static zb_status optimizer_unit(zb_engine *e, int u) {
    int stage = e->cfg.stage;
    size_t begin = stage == 0 ? 0 : (size_t)e->rank * e->shard[u];
    size_t count = zb_engine_opt_count(stage, e->padded[u], e->shard[u]);
    const void *grads = stage == 1 ? elem(e->grad[u], begin, e->gsize) : e->grad[u];
    void *param_dst = zb_engine_full_params(stage) ? elem(e->param[u], begin, e->psize) : e->param[u];
    ZB_TRY(ops(e)->stream_wait_event(e->cs, e->ev_reduced[u]));
    if (!grads_f32(e)) {
        zb_kcall wc = {e->cs, "grad_widen", u};
        ZB_TRY(e->k->cast(&wc, e->wred, ZB_DTYPE_F32, grads, e->cfg.grad_dtype, count));
        grads = e->wred;
    }
    zb_kcall kc = {e->cs, "adamw", u};
    ZB_TRY(zb_optim_adamw_slice(e->k, &kc, &e->cfg.model, u, begin, begin + count, e->master[u],
                                (const float *)grads, e->m[u], e->v[u], e->opt_step, &e->cfg.opt));
    if (e->cfg.param_dtype == ZB_DTYPE_F32) {
        zb_op_info info = {ZB_OP_COMPUTE, "param_update", u, count * sizeof(float), 0};
        ZB_TRY(ops(e)->memcpy_async(e->cs, param_dst, e->master[u], count * sizeof(float), &info));
    } else {
        zb_kcall pc = {e->cs, "param_update", u};
        ZB_TRY(e->k->cast(&pc, param_dst, e->cfg.param_dtype, e->master[u], ZB_DTYPE_F32, count));
    }
    if (stage != 1 && stage != 2) return ZB_OK;
    ZB_TRY(ops(e)->event_record(e->ev_updated[u], e->cs));
    ZB_TRY(ops(e)->stream_wait_event(e->ms, e->ev_updated[u]));
    ZB_TRY(comm_after_compute(e));
    ZB_TRY(zb_comm_allgather(e->comm, e->ms, param_dst, e->param[u], e->shard[u],
                                   e->cfg.param_dtype, "allgather.params", u));
    return compute_after_comm(e);
}

static zb_status load_batch(zb_engine *e, int step) {
    const zb_model_cfg *mc = &e->cfg.model;
    uint64_t first = zb_data_sample_index(step, e->n, e->rank, e->B, 0);
    zb_data_batch(mc->seed, first, e->B, mc->seq, mc->vocab, e->tokens_host, e->targets_host);
    size_t bytes = (size_t)e->N * sizeof(int32_t);
    zb_op_info info = {ZB_OP_COPY, "load_batch", -1, 2 * bytes, 0};
    ZB_TRY(ops(e)->memcpy_async(e->cs, e->tokens_dev, e->tokens_host, bytes, &info));
    return ops(e)->memcpy_async(e->cs, e->targets_dev, e->targets_host, bytes, &info);
}

/* The test hook's delay (test_delay_ms): a sleep recorded as compute on
 * the compute stream, so the rank is slow as a slow device would be. */
static zb_status issue_test_delay(zb_engine *e) {
    if (!(e->cfg.test_delay_ms > 0)) return ZB_OK;
    zb_op_info info = {ZB_OP_COMPUTE, "test_delay", -1, 0, 0};
    if (ops(e)->launch_host) return ops(e)->launch_host(e->cs, zb_test_delay_sleep, &e->cfg.test_delay_ms, NULL, &info);
    return zb_test_delay_sleep(&e->cfg.test_delay_ms); /* no host ops: the host is late to issue instead */
}

static zb_status issue_step(zb_engine *e, int step) {
    int n_uses = 2 * e->n_units;
    bool gathers = e->cfg.stage == 3;
    int ahead = is_sync(e) ? 0 : e->cfg.prefetch_depth;
    ZB_TRY(load_batch(e, step));
    ZB_TRY(issue_test_delay(e));
    for (int i = 0; gathers && i < ahead && i < n_uses; i++) ZB_TRY(issue_gather(e, i));
    for (int i = 0; i < n_uses; i++) {
        if (gathers && i + ahead < n_uses) ZB_TRY(issue_gather(e, i + ahead));
        if (i < e->n_units) {
            ZB_TRY(compute_forward(e, i));
        } else {
            ZB_TRY(compute_backward(e, i));
            ZB_TRY(issue_reduction(e, i));
        }
    }
    e->opt_step++;
    zb_nvtx_push_range(ZB_NVTX_OPTIMIZER, -1);
    zb_status st = ZB_OK;
    for (int u = 0; u < e->n_units && st == ZB_OK; u++) st = optimizer_unit(e, u);
    zb_nvtx_pop();
    ZB_TRY(st);
    zb_op_info info = {ZB_OP_COPY, "read_loss", -1, sizeof(float), 0};
    return ops(e)->memcpy_async(e->cs, &e->loss_host, e->loss_dev, sizeof(float), &info);
}

static uint64_t total_sent(const zb_comm *c) {
    uint64_t sum = 0;
    for (int k = 0; k < ZB_COLL_COUNT; k++) sum += c->sent_bytes[k];
    return sum;
}

zb_status zb_engine_step(zb_engine *e, int step, zb_step_result *out) {
    uint64_t sent_before = total_sent(e->comm);
    out->start_ns = zb_dev_now_ns(e->dev); /* the device's clock: virtual on the sim */
    zb_status st = issue_step(e, step);
    /* Drain both streams even after an issue error, so nothing runs on.
     * The comm stream first, through the comm's bounded wait: a stuck
     * collective is then reported by name, not as a compute stream stuck
     * on its event. */
    zb_status st_m = zb_comm_wait(e->comm, e->ms, "step", -1);
    if (st == ZB_OK) st = st_m;
    zb_status st_c = ops(e)->stream_sync(e->cs);
    if (st == ZB_OK) st = st_c;
    out->end_ns = zb_dev_now_ns(e->dev);
    out->loss = e->loss_host;
    out->sent_bytes = total_sent(e->comm) - sent_before;
    return st;
}
