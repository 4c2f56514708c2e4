/* The unsharded reference trainer (reference.h). Shapes: N = global_batch
 * * T tokens; tokens, targets [N]; the residual stream and its gradient
 * [N, C]; each unit's params, grads, m, v [numel]. */
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "reference.h"
#include "unit.h"

typedef struct ref_state {
    zb_model_cfg cfg; /* batch = global batch */
    zb_device *dev;
    zb_stream *s;
    const zb_kernels *k;
    int n_units;
    float **p, **g, **m, **v;
    zb_unit_acts *acts;
    zb_unit_workspace ws;
    float *dx; /* [N, C]: dx_in and dx_out share it (allowed) */
    int32_t *tok_d, *tgt_d;
    float *loss_d;
    int32_t *tok_h, *tgt_h;
} ref_state;

static zb_status alloc_f(ref_state *r, size_t n, zb_mem_tag tag, float **out) {
    void *p = NULL;
    ZB_TRY(zb_dev_alloc(r->dev, n * sizeof(float), tag, &p));
    *out = (float *)p;
    return ZB_OK;
}

static void ref_destroy(ref_state *r) {
    if (r->s) {
        (void)r->dev->ops->stream_sync(r->s);
        r->dev->ops->stream_destroy(r->s);
    }
    for (int u = 0; u < r->n_units; u++) {
        if (r->p && r->p[u]) zb_dev_free(r->dev, r->p[u]);
        if (r->g && r->g[u]) zb_dev_free(r->dev, r->g[u]);
        if (r->m && r->m[u]) zb_dev_free(r->dev, r->m[u]);
        if (r->v && r->v[u]) zb_dev_free(r->dev, r->v[u]);
        if (r->acts) zb_unit_acts_free(r->dev, &r->acts[u]);
    }
    if (r->dev) {
        zb_unit_workspace_free(r->dev, &r->ws);
        if (r->dx) zb_dev_free(r->dev, r->dx);
        if (r->tok_d) zb_dev_free(r->dev, r->tok_d);
        if (r->tgt_d) zb_dev_free(r->dev, r->tgt_d);
        if (r->loss_d) zb_dev_free(r->dev, r->loss_d);
    }
    free(r->p);
    free(r->g);
    free(r->m);
    free(r->v);
    free(r->acts);
    free(r->tok_h);
    free(r->tgt_h);
}

static zb_status ref_setup(ref_state *r) {
    const zb_model_cfg *c = &r->cfg;
    ZB_TRY(r->dev->ops->stream_create(r->dev, "reference", &r->s));
    r->k = zb_kernels_for(r->dev);
    if (!r->k) return ZB_ERR_UNSUPPORTED;
    int U = r->n_units = zb_model_n_units(c);
    r->p = (float **)calloc((size_t)U, sizeof(float *));
    r->g = (float **)calloc((size_t)U, sizeof(float *));
    r->m = (float **)calloc((size_t)U, sizeof(float *));
    r->v = (float **)calloc((size_t)U, sizeof(float *));
    r->acts = (zb_unit_acts *)calloc((size_t)U, sizeof(zb_unit_acts));
    size_t N = (size_t)c->batch * (size_t)c->seq;
    r->tok_h = (int32_t *)malloc(N * sizeof(int32_t));
    r->tgt_h = (int32_t *)malloc(N * sizeof(int32_t));
    if (!r->p || !r->g || !r->m || !r->v || !r->acts || !r->tok_h || !r->tgt_h) {
        return ZB_FAIL(ZB_ERR_NOMEM, "reference: out of memory for %d units", U);
    }
    zb_kcall kc = {r->s, "init_state", -1};
    for (int u = 0; u < U; u++) {
        size_t n = zb_model_unit_numel(c, u);
        ZB_TRY(alloc_f(r, n, ZB_MEM_PARAM_SHARD, &r->p[u]));
        ZB_TRY(alloc_f(r, n, ZB_MEM_GRAD_SHARD, &r->g[u]));
        ZB_TRY(alloc_f(r, n, ZB_MEM_OPTIM_STATE, &r->m[u]));
        ZB_TRY(alloc_f(r, n, ZB_MEM_OPTIM_STATE, &r->v[u]));
        zb_model_init_unit(c, u, r->p[u], 0, n); /* cpu: device memory is host memory */
        ZB_TRY(r->k->fill(&kc, r->m[u], 0.0f, n));
        ZB_TRY(r->k->fill(&kc, r->v[u], 0.0f, n));
        ZB_TRY(zb_unit_acts_alloc(r->dev, c, u, c->batch, true, ZB_DTYPE_F32, &r->acts[u]));
    }
    ZB_TRY(zb_unit_workspace_alloc(r->dev, c, c->batch, false, ZB_DTYPE_F32, &r->ws));
    ZB_TRY(alloc_f(r, N * (size_t)c->dim, ZB_MEM_ACTIVATION, &r->dx));
    void *p = NULL;
    ZB_TRY(zb_dev_alloc(r->dev, N * sizeof(int32_t), ZB_MEM_ACTIVATION, &p));
    r->tok_d = (int32_t *)p;
    ZB_TRY(zb_dev_alloc(r->dev, N * sizeof(int32_t), ZB_MEM_ACTIVATION, &p));
    r->tgt_d = (int32_t *)p;
    return alloc_f(r, 1, ZB_MEM_ACTIVATION, &r->loss_d);
}

/* One training step (t from 1): forward, backward, AdamW; *loss is the
 * step's mean loss, read back after the stream drained. */
static zb_status ref_step(ref_state *r, int t, const zb_adamw_cfg *opt, float *loss) {
    const zb_model_cfg *c = &r->cfg;
    size_t N = (size_t)c->batch * (size_t)c->seq;
    zb_data_batch(c->seed, (uint64_t)(t - 1) * (uint64_t)c->batch, c->batch, c->seq, c->vocab,
                  r->tok_h, r->tgt_h);
    zb_op_info up = {ZB_OP_COPY, "upload_tokens", -1, 0, 0.0};
    ZB_TRY(r->dev->ops->memcpy_async(r->s, r->tok_d, r->tok_h, N * sizeof(int32_t), &up));
    ZB_TRY(r->dev->ops->memcpy_async(r->s, r->tgt_d, r->tgt_h, N * sizeof(int32_t), &up));

    zb_unit_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.cfg = c;
    ctx.k = r->k;
    ctx.stream = r->s;
    ctx.B = c->batch;
    ctx.tokens = r->tok_d;
    ctx.targets = r->tgt_d;
    ctx.loss = r->loss_d;
    ctx.dloss_scale = 1.0f;
    ctx.ws = &r->ws;
    int U = r->n_units;
    for (int u = 0; u < U; u++) {
        const void *x_in = u == 0 ? NULL : r->acts[u - 1].out;
        ZB_TRY(zb_unit_forward(&ctx, u, r->p[u], x_in, r->acts[u].out, &r->acts[u]));
    }
    /* backward: one gradient buffer serves as dx_out and dx_in */
    for (int u = U - 1; u >= 0; u--) {
        const float *dx_out = u == U - 1 ? NULL : r->dx;
        float *dx_in = u == 0 ? NULL : r->dx;
        ZB_TRY(zb_unit_backward(&ctx, u, r->p[u], &r->acts[u], dx_out, dx_in, r->g[u]));
    }
    zb_kcall kc = {r->s, "adamw", -1};
    for (int u = 0; u < U; u++) {
        size_t n = zb_model_unit_numel(c, u);
        ZB_TRY(zb_optim_adamw_slice(r->k, &kc, c, u, 0, n, r->p[u], r->g[u], r->m[u], r->v[u], t,
                                    opt));
    }
    zb_op_info down = {ZB_OP_COPY, "download_loss", -1, 0, 0.0};
    ZB_TRY(r->dev->ops->memcpy_async(r->s, loss, r->loss_d, sizeof(float), &down));
    return r->dev->ops->stream_sync(r->s);
}

zb_status zb_reference_train(zb_device *dev, const zb_model_cfg *cfg, int global_batch,
                             int steps, const zb_adamw_cfg *opt, float *losses,
                             float **final_params) {
    if (final_params) {
        for (int u = 0; u < zb_model_n_units(cfg); u++) final_params[u] = NULL;
    }
    if (global_batch <= 0 || steps < 0) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "reference: global batch %d must be positive and steps %d >= 0",
                       global_batch, steps);
    }
    if (!dev || !zb_dev_mem_is_host(dev)) {
        return ZB_FAIL(ZB_ERR_INVALID, "reference: needs a device whose memory is host memory (cpu)");
    }
    ref_state r;
    memset(&r, 0, sizeof r);
    r.dev = dev;
    r.cfg = *cfg;
    r.cfg.batch = global_batch;
    ZB_TRY(zb_model_cfg_validate(&r.cfg));
    ZB_TRY(zb_adamw_cfg_validate(opt));
    zb_status st = ref_setup(&r);
    for (int t = 1; st == ZB_OK && t <= steps; t++) {
        float loss = 0.0f;
        st = ref_step(&r, t, opt, &loss);
        if (st == ZB_OK && losses) losses[t - 1] = loss;
    }
    if (st == ZB_OK) st = r.dev->ops->stream_sync(r.s);
    for (int u = 0; st == ZB_OK && final_params && u < r.n_units; u++) {
        size_t n = zb_model_unit_numel(cfg, u);
        final_params[u] = (float *)malloc(n * sizeof(float));
        if (!final_params[u]) {
            st = ZB_FAIL(ZB_ERR_NOMEM, "reference: out of memory copying unit %d", u);
            break;
        }
        memcpy(final_params[u], r.p[u], n * sizeof(float)); /* cpu: host memory */
    }
    if (st != ZB_OK && final_params) {
        for (int u = 0; u < r.n_units; u++) {
            free(final_params[u]);
            final_params[u] = NULL;
        }
    }
    ref_destroy(&r);
    return st;
}
