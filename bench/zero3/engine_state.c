/* The engine's memory and events: flat units padded to a multiple of the
 * number of ranks, this rank's shards (or full copies, by stage), the
 * gathered-buffer rings, activations, and their seeded initialization.
 * Every allocation carries its tag (engine.h lists them). */
#include <stdlib.h>
#include <string.h>

#include "bf16.h"
#include "engine_impl.h"

static zb_status alloc_f32(zb_engine *e, size_t n, zb_mem_tag tag, float **out) {
    return zb_dev_alloc(e->dev, n * sizeof(float), tag, (void **)out);
}

static zb_status alloc_tables(zb_engine *e) {
    size_t u = (size_t)e->n_units;
    e->layouts = (zb_unit_layout *)calloc(u, sizeof *e->layouts);
    e->padded = (size_t *)calloc(u, sizeof(size_t));
    e->shard = (size_t *)calloc(u, sizeof(size_t));
    e->param = (void **)calloc(u, sizeof(void *));
    e->master = (float **)calloc(u, sizeof(float *));
    e->m = (float **)calloc(u, sizeof(float *));
    e->v = (float **)calloc(u, sizeof(float *));
    e->grad = (void **)calloc(u, sizeof(void *));
    e->acts = (zb_unit_acts *)calloc(u, sizeof *e->acts);
    e->ev_gathered = (zb_event **)calloc(2 * u, sizeof(zb_event *));
    e->ev_bwd_done = (zb_event **)calloc(u, sizeof(zb_event *));
    e->ev_reduced = (zb_event **)calloc(u, sizeof(zb_event *));
    e->ev_updated = (zb_event **)calloc(u, sizeof(zb_event *));
    if (!e->layouts || !e->padded || !e->shard || !e->param || !e->master || !e->m || !e->v ||
        !e->grad || !e->acts || !e->ev_gathered || !e->ev_bwd_done || !e->ev_reduced ||
        !e->ev_updated) {
        return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for the engine's tables");
    }
    return ZB_OK;
}

static zb_status create_events(zb_engine *e) {
    const zb_device_ops *d = e->dev->ops;
    for (int i = 0; i < 2 * e->n_units; i++) ZB_TRY(d->event_create(e->dev, &e->ev_gathered[i]));
    for (int u = 0; u < e->n_units; u++) {
        ZB_TRY(d->event_create(e->dev, &e->ev_bwd_done[u]));
        ZB_TRY(d->event_create(e->dev, &e->ev_reduced[u]));
        ZB_TRY(d->event_create(e->dev, &e->ev_updated[u]));
    }
    for (int s = 0; s < e->n_pslots; s++) ZB_TRY(d->event_create(e->dev, &e->ev_pslot_free[s]));
    for (int s = 0; s < e->n_gslots; s++) ZB_TRY(d->event_create(e->dev, &e->ev_gslot_free[s]));
    ZB_TRY(d->event_create(e->dev, &e->ev_compute));
    return d->event_create(e->dev, &e->ev_comm);
}

/* Copies count fp32 host values to the device buffer dst of dtype dt
 * (bf16: rounded on the host as the cast kernels round), stream-synced. */
static zb_status upload(zb_engine *e, int u, void *dst, zb_dtype dt, const float *host, size_t count) {
    zb_op_info info = {ZB_OP_COPY, "init", u, 0, 0};
    if (dt == ZB_DTYPE_F32) {
        ZB_TRY(e->dev->ops->memcpy_async(e->cs, dst, host, count * sizeof(float), &info));
        return e->dev->ops->stream_sync(e->cs);
    }
    zb_bf16 *h16 = (zb_bf16 *)malloc(count * sizeof(zb_bf16) + 1);
    if (!h16) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory initializing unit %d", u);
    for (size_t i = 0; i < count; i++) h16[i] = zb_f32_to_bf16(host[i]);
    zb_status st = e->dev->ops->memcpy_async(e->cs, dst, h16, count * sizeof(zb_bf16), &info);
    if (st == ZB_OK) st = e->dev->ops->stream_sync(e->cs);
    free(h16);
    return st;
}

/* Writes unit u's initial values to its parameters (elements [pbegin,
 * pbegin + pcount), dtype pdt) and its fp32 master copy ([mbegin, mbegin +
 * mcount)), through one host staging buffer: the master range lies within
 * the parameter range at every stage, so the values are made once (the
 * ~1B step's init is ~1e9 draws per copy). */
static zb_status init_param_master(zb_engine *e, int u, void *param, zb_dtype pdt, size_t pbegin,
                                   size_t pcount, float *master, size_t mbegin, size_t mcount) {
    /* A device without data (the sim) has nothing to initialize, and the
     * host-side values would cost time per parameter at any model size. */
    if (!zb_dev_holds_data(e->dev)) return ZB_OK;
    bool within = mbegin >= pbegin && mbegin + mcount <= pbegin + pcount;
    size_t count = within ? pcount : (pcount > mcount ? pcount : mcount);
    float *host = (float *)malloc(count * sizeof(float) + 1);
    if (!host) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory initializing unit %d", u);
    zb_model_init_unit(&e->cfg.model, u, host, pbegin, pbegin + pcount);
    zb_status st = upload(e, u, param, pdt, host, pcount);
    if (st == ZB_OK && within) {
        st = upload(e, u, master, ZB_DTYPE_F32, host + (mbegin - pbegin), mcount);
    } else if (st == ZB_OK) {
        zb_model_init_unit(&e->cfg.model, u, host, mbegin, mbegin + mcount);
        st = upload(e, u, master, ZB_DTYPE_F32, host, mcount);
    }
    free(host);
    return st;
}

static zb_status zero(zb_engine *e, float *dst, size_t n, int u) {
    zb_kcall c = {e->cs, "zero", u};
    return e->k->fill(&c, dst, 0.0f, n);
}

/* Zeroes n elements of dtype dt (bf16 through the host: fill is fp32). */
static zb_status zero_dt(zb_engine *e, void *dst, zb_dtype dt, size_t n, int u) {
    if (dt == ZB_DTYPE_F32) return zero(e, (float *)dst, n, u);
    if (!zb_dev_holds_data(e->dev)) return ZB_OK; /* as init_param_master */
    float *host = (float *)calloc(n + 1, sizeof(float));
    if (!host) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory zeroing unit %d", u);
    zb_status st = upload(e, u, dst, dt, host, n);
    free(host);
    return st;
}

/* Shards (or full copies) of parameters, gradients and optimizer state. */
static zb_status alloc_unit_state(zb_engine *e, int u) {
    int stage = e->cfg.stage;
    size_t full = e->padded[u], shard = e->shard[u], begin = (size_t)e->rank * shard;
    size_t n_param = zb_engine_full_params(stage) ? full : shard;
    size_t n_grad = zb_engine_full_grads(stage) ? full : shard;
    size_t n_opt = stage == 0 ? full : shard;
    size_t opt_begin = stage == 0 ? 0 : begin;
    ZB_TRY(zb_dev_alloc(e->dev, n_param * e->psize, ZB_MEM_PARAM_SHARD, &e->param[u]));
    ZB_TRY(zb_dev_alloc(e->dev, n_grad * e->gsize, ZB_MEM_GRAD_SHARD, &e->grad[u]));
    ZB_TRY(alloc_f32(e, n_opt, ZB_MEM_OPTIM_STATE, &e->master[u]));
    ZB_TRY(alloc_f32(e, n_opt, ZB_MEM_OPTIM_STATE, &e->m[u]));
    ZB_TRY(alloc_f32(e, n_opt, ZB_MEM_OPTIM_STATE, &e->v[u]));
    ZB_TRY(init_param_master(e, u, e->param[u], e->cfg.param_dtype, zb_engine_full_params(stage) ? 0 : begin,
                             n_param, e->master[u], opt_begin, n_opt));
    ZB_TRY(zero_dt(e, e->grad[u], e->cfg.grad_dtype, n_grad, u));
    ZB_TRY(zero(e, e->m[u], n_opt, u));
    return zero(e, e->v[u], n_opt, u);
}

static zb_status alloc_buffers(zb_engine *e) {
    const zb_model_cfg *mc = &e->cfg.model;
    if (e->cfg.stage == 3) {
        for (int s = 0; s < e->n_pslots; s++) {
            ZB_TRY(zb_dev_alloc(e->dev, e->max_padded * e->psize, ZB_MEM_GATHERED_PARAM, &e->pslot[s]));
        }
    }
    if (!zb_engine_full_grads(e->cfg.stage)) {
        for (int s = 0; s < e->n_gslots; s++) {
            ZB_TRY(zb_dev_alloc(e->dev, e->max_padded * e->gsize, ZB_MEM_GATHERED_GRAD, &e->gslot[s]));
        }
    }
    if (e->cfg.param_dtype != e->cfg.act_dtype) {
        ZB_TRY(alloc_f32(e, e->max_padded, ZB_MEM_WORKSPACE, &e->wparam));
    }
    if (e->cfg.grad_dtype != ZB_DTYPE_F32) {
        size_t max_opt = 0;
        for (int u = 0; u < e->n_units; u++) {
            size_t c = zb_engine_opt_count(e->cfg.stage, e->padded[u], e->shard[u]);
            if (c > max_opt) max_opt = c;
        }
        ZB_TRY(alloc_f32(e, e->max_padded, ZB_MEM_WORKSPACE, &e->wgrad));
        ZB_TRY(alloc_f32(e, max_opt, ZB_MEM_WORKSPACE, &e->wred));
    }
    for (int u = 0; u < e->n_units; u++) {
        bool keep = !e->cfg.recompute;
        ZB_TRY(zb_unit_acts_alloc(e->dev, mc, u, e->B, keep, e->cfg.act_dtype, &e->acts[u]));
    }
    ZB_TRY(zb_unit_workspace_alloc(e->dev, mc, e->B, e->cfg.recompute, e->cfg.act_dtype, &e->ws));
    size_t nc = (size_t)e->N * (size_t)mc->dim;
    ZB_TRY(zb_dev_alloc(e->dev, nc * e->asize, ZB_MEM_ACTIVATION, &e->dx[0]));
    ZB_TRY(zb_dev_alloc(e->dev, nc * e->asize, ZB_MEM_ACTIVATION, &e->dx[1]));
    ZB_TRY(alloc_f32(e, 1, ZB_MEM_ACTIVATION, &e->loss_dev));
    size_t tok_bytes = (size_t)e->N * sizeof(int32_t);
    ZB_TRY(zb_dev_alloc(e->dev, tok_bytes, ZB_MEM_ACTIVATION, (void **)&e->tokens_dev));
    ZB_TRY(zb_dev_alloc(e->dev, tok_bytes, ZB_MEM_ACTIVATION, (void **)&e->targets_dev));
    e->tokens_host = (int32_t *)malloc(tok_bytes);
    e->targets_host = (int32_t *)malloc(tok_bytes);
    if (!e->tokens_host || !e->targets_host) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for tokens");
    return ZB_OK;
}

static void layout_units(zb_engine *e) {
    e->max_padded = 0;
    for (int u = 0; u < e->n_units; u++) {
        zb_model_unit_layout(&e->cfg.model, u, &e->layouts[u]);
        size_t numel = e->layouts[u].numel, n = (size_t)e->n;
        e->padded[u] = (numel + n - 1) / n * n;
        e->shard[u] = e->padded[u] / n;
        if (e->padded[u] > e->max_padded) e->max_padded = e->padded[u];
    }
}

zb_status zb_engine_create(const zb_engine_cfg *cfg, zb_device *dev, zb_comm *comm,
                           zb_stream *compute, zb_stream *comm_stream, zb_engine **out) {
    *out = NULL;
    ZB_TRY(zb_model_cfg_validate(&cfg->model));
    ZB_TRY(zb_adamw_cfg_validate(&cfg->opt));
    if (cfg->stage < 0 || cfg->stage > 3) return ZB_FAIL(ZB_ERR_INVALID, "--stage %d: accepted: 0, 1, 2, 3", cfg->stage);
    if (cfg->prefetch_depth < 1 || cfg->prefetch_depth >= ZB_ENGINE_MAX_PSLOTS) {
        return ZB_FAIL(ZB_ERR_INVALID, "--prefetch-depth %d: accepted: 1 to %d", cfg->prefetch_depth,
                       ZB_ENGINE_MAX_PSLOTS - 1);
    }
    bool dt_ok = (cfg->param_dtype == ZB_DTYPE_F32 || cfg->param_dtype == ZB_DTYPE_BF16) &&
                 (cfg->grad_dtype == ZB_DTYPE_F32 || cfg->grad_dtype == ZB_DTYPE_BF16);
    if (!dt_ok) return ZB_FAIL(ZB_ERR_INVALID, "engine: param and grad-reduce dtypes must be float or bf16");
    if (cfg->act_dtype != ZB_DTYPE_F32 && cfg->act_dtype != cfg->param_dtype) {
        return ZB_FAIL(ZB_ERR_INVALID, "--act-dtype %s needs --param-dtype %s (the math reads the "
                       "parameters in the activations' dtype)", zb_dtype_name(cfg->act_dtype),
                       zb_dtype_name(cfg->act_dtype));
    }
    const zb_kernels *k = zb_kernels_for(dev);
    if (!k) return ZB_ERR_UNSUPPORTED;
    zb_engine *e = (zb_engine *)calloc(1, sizeof *e);
    if (!e) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for the engine");
    e->cfg = *cfg;
    e->cfg.gemm_stream_workspace_bytes = dev->ops->gemm_stream_workspace_bytes;
    e->dev = dev;
    e->comm = comm;
    e->cs = compute;
    e->ms = comm_stream;
    e->k = k;
    e->psize = zb_dtype_size(cfg->param_dtype);
    e->gsize = zb_dtype_size(cfg->grad_dtype);
    e->asize = zb_dtype_size(cfg->act_dtype);
    e->rank = comm->rank;
    e->n = comm->n_ranks;
    e->n_units = zb_model_n_units(&cfg->model);
    e->B = cfg->model.batch;
    e->N = cfg->model.batch * cfg->model.seq;
    bool prefetch = cfg->mode == ZB_MODE_PREFETCH;
    e->n_pslots = prefetch ? 1 + cfg->prefetch_depth : 1;
    e->n_gslots = prefetch ? ZB_ENGINE_GSLOTS : 1;
    zb_status st = alloc_tables(e);
    if (st == ZB_OK) {
        layout_units(e);
        st = create_events(e);
    }
    for (int u = 0; u < e->n_units && st == ZB_OK; u++) st = alloc_unit_state(e, u);
    if (st == ZB_OK) st = alloc_buffers(e);
    if (st == ZB_OK) st = dev->ops->stream_sync(compute);
    if (st != ZB_OK) {
        zb_engine_destroy(e);
        return st;
    }
    *out = e;
    return ZB_OK;
}

static void destroy_event(zb_engine *e, zb_event *ev) {
    if (ev) e->dev->ops->event_destroy(ev);
}

void zb_engine_destroy(zb_engine *e) {
    if (!e) return;
    zb_device *d = e->dev;
    /* The comm stream through the comm's bounded wait (it names a stuck
     * collective); a comm that refuses (aborted) still gets the device's
     * own bounded sync before the buffers go. Then the compute stream. */
    if (zb_comm_wait(e->comm, e->ms, "engine teardown", -1) != ZB_OK) d->ops->stream_sync(e->ms);
    d->ops->stream_sync(e->cs);
    for (int u = 0; u < e->n_units; u++) {
        if (e->param) zb_dev_free(d, e->param[u]);
        if (e->grad) zb_dev_free(d, e->grad[u]);
        if (e->master) zb_dev_free(d, e->master[u]);
        if (e->m) zb_dev_free(d, e->m[u]);
        if (e->v) zb_dev_free(d, e->v[u]);
        if (e->acts) zb_unit_acts_free(d, &e->acts[u]);
        if (e->ev_bwd_done) destroy_event(e, e->ev_bwd_done[u]);
        if (e->ev_reduced) destroy_event(e, e->ev_reduced[u]);
        if (e->ev_updated) destroy_event(e, e->ev_updated[u]);
    }
    for (int i = 0; e->ev_gathered && i < 2 * e->n_units; i++) destroy_event(e, e->ev_gathered[i]);
    for (int s = 0; s < ZB_ENGINE_MAX_PSLOTS; s++) {
        zb_dev_free(d, e->pslot[s]);
        destroy_event(e, e->ev_pslot_free[s]);
    }
    for (int s = 0; s < ZB_ENGINE_GSLOTS; s++) {
        zb_dev_free(d, e->gslot[s]);
        destroy_event(e, e->ev_gslot_free[s]);
    }
    destroy_event(e, e->ev_compute);
    destroy_event(e, e->ev_comm);
    zb_unit_workspace_free(d, &e->ws);
    zb_dev_free(d, e->wparam);
    zb_dev_free(d, e->wgrad);
    zb_dev_free(d, e->wred);
    zb_dev_free(d, e->dx[0]);
    zb_dev_free(d, e->dx[1]);
    zb_dev_free(d, e->loss_dev);
    zb_dev_free(d, e->tokens_dev);
    zb_dev_free(d, e->targets_dev);
    free(e->tokens_host);
    free(e->targets_host);
    free(e->layouts);
    free(e->padded);
    free(e->shard);
    free(e->param);
    free(e->master);
    free(e->m);
    free(e->v);
    free(e->grad);
    free(e->acts);
    free(e->ev_gathered);
    free(e->ev_bwd_done);
    free(e->ev_reduced);
    free(e->ev_updated);
    free(e);
}

/* Grows or shrinks a ring to `want` slots of `bytes` each (tag), creating
 * the slots' free events as needed; freed slots go back to the pool. */
static zb_status resize_ring(zb_engine *e, void **slots, zb_event **free_ev, int have, int want, bool used,
                             size_t bytes, zb_mem_tag tag) {
    for (int s = want; s < have; s++) {
        zb_dev_free(e->dev, slots[s]);
        slots[s] = NULL;
    }
    for (int s = have; s < want; s++) {
        if (!free_ev[s]) ZB_TRY(e->dev->ops->event_create(e->dev, &free_ev[s]));
        if (used) ZB_TRY(zb_dev_alloc(e->dev, bytes, tag, &slots[s]));
    }
    return ZB_OK;
}

zb_status zb_engine_set_mode(zb_engine *e, zb_step_mode mode) {
    if (mode != ZB_MODE_SYNC && mode != ZB_MODE_PREFETCH) {
        return ZB_FAIL(ZB_ERR_INVALID, "engine: schedule %d is neither sync nor prefetch", (int)mode);
    }
    if (mode == e->cfg.mode) return ZB_OK;
    /* Every step waited for its work (zb_engine_step): no op uses a ring. */
    bool prefetch = mode == ZB_MODE_PREFETCH;
    int np = prefetch ? 1 + e->cfg.prefetch_depth : 1, ng = prefetch ? ZB_ENGINE_GSLOTS : 1;
    ZB_TRY(resize_ring(e, e->pslot, e->ev_pslot_free, e->n_pslots, np, e->cfg.stage == 3,
                       e->max_padded * e->psize, ZB_MEM_GATHERED_PARAM));
    e->n_pslots = np;
    ZB_TRY(resize_ring(e, e->gslot, e->ev_gslot_free, e->n_gslots, ng, !zb_engine_full_grads(e->cfg.stage),
                       e->max_padded * e->gsize, ZB_MEM_GATHERED_GRAD));
    e->n_gslots = ng;
    e->cfg.mode = mode;
    return ZB_OK;
}

int zb_engine_n_units(const zb_engine *e) { return e->n_units; }

void zb_engine_unit_shard(const zb_engine *e, int unit, size_t *padded, size_t *begin, size_t *count) {
    *padded = e->padded[unit];
    *begin = e->cfg.stage == 0 ? 0 : (size_t)e->rank * e->shard[unit];
    *count = e->cfg.stage == 0 ? e->padded[unit] : e->shard[unit];
}

zb_status zb_engine_read_shard(zb_engine *e, int unit, float *dst) {
    size_t padded, begin, count;
    zb_engine_unit_shard(e, unit, &padded, &begin, &count);
    zb_op_info info = {ZB_OP_COPY, "read_shard", unit, 0, 0};
    ZB_TRY(e->dev->ops->memcpy_async(e->cs, dst, e->master[unit], count * sizeof(float), &info));
    return e->dev->ops->stream_sync(e->cs);
}
