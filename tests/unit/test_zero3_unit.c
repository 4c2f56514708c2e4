/* The per-unit forward/backward (bench/zero3/unit.h) issued on the CPU
 * device, run over a whole tiny model: gradients against central finite
 * differences of the loss, recompute none vs full (bit-identical), one
 * micro-batch of 2 vs two of 1 with dloss_scale 1/2 (what the engine's
 * ranks sum), trace FLOPs vs zb_unit_forward_flops, and activation bytes;
 * bf16 storage (params, activations) against the fp32 units on the same
 * bf16-representable parameters.
 *
 * Shapes: B sequences, T tokens, N = B*T; the model has L=2, C=8, H=2,
 * KVH=1, D=4, F=12, V=11, T=5, B=2. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "model.h"
#include "unit.h"
#include "bf16.h"
#include "device_cpu.h"
#include "zb_test.h"

#define MAXU 8

/* ---- a whole model on the CPU device (test only: reads device memory) ---- */

typedef struct runner {
    zb_model_cfg cfg;
    zb_trace trace;
    zb_device *dev;
    zb_stream *s;
    int U, B;
    bool alias; /* one gradient buffer for dx_out and dx_in */
    zb_dtype dt; /* storage of params (p16 when bf16) and activations */
    float *p[MAXU], *g[MAXU];
    zb_bf16 *p16[MAXU]; /* bf16: p rounded, what the units read */
    zb_unit_acts acts[MAXU];
    zb_unit_workspace ws;
    void *dx[2];
    float *loss;
    int32_t *tok, *tgt;
    zb_unit_ctx ctx;
} runner;

static void *dalloc(runner *r, size_t bytes, zb_mem_tag tag) {
    void *p = NULL;
    ZB_CHECK_OK(zb_dev_alloc(r->dev, bytes, tag, &p));
    return p;
}

/* Seeded init with matrices scaled up 10x and the norm gains spread around
 * 1, so every parameter has a gradient well above the fp32 noise floor. */
static void runner_params(runner *r) {
    uint64_t st = 12345;
    for (int u = 0; u < r->U; u++) {
        size_t n = zb_model_unit_numel(&r->cfg, u);
        zb_unit_layout L;
        zb_model_unit_layout(&r->cfg, u, &L);
        zb_model_init_unit(&r->cfg, u, r->p[u], 0, n);
        for (size_t i = 0; i < n; i++) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            double uni = (double)(st >> 11) / 9007199254740992.0 - 0.5;
            r->p[u][i] = zb_model_decays(&L, i) ? 10.0f * r->p[u][i] : (float)(1.0 + 0.6 * uni);
        }
    }
}

static void runner_tokens(runner *r, uint64_t first_sample) {
    zb_data_batch(r->cfg.seed, first_sample, r->B, r->cfg.seq, r->cfg.vocab, r->tok, r->tgt);
}

/* The parameters the units read: p, or its bf16 copy (refreshed here). */
static const void *params_of(runner *r, int u) {
    if (r->dt == ZB_DTYPE_F32) return r->p[u];
    size_t n = zb_model_unit_numel(&r->cfg, u);
    for (size_t i = 0; i < n; i++) r->p16[u][i] = zb_f32_to_bf16(r->p[u][i]);
    return r->p16[u];
}

static void runner_init_dt(runner *r, const zb_model_cfg *cfg, int B, bool keep, bool alias,
                           zb_dtype dt) {
    memset(r, 0, sizeof *r);
    r->cfg = *cfg;
    r->B = B;
    r->alias = alias;
    r->dt = dt;
    size_t esize = zb_dtype_size(dt);
    r->U = zb_model_n_units(cfg);
    ZB_CHECK_OK(zb_trace_init(&r->trace, 0, true));
    zb_device_config dc = {0, 0, 1, 60.0, &r->trace};
    ZB_CHECK_OK(zb_device_cpu_create(&dc, &r->dev));
    ZB_CHECK_OK(r->dev->ops->stream_create(r->dev, "compute", &r->s));
    size_t N = (size_t)B * (size_t)cfg->seq;
    for (int u = 0; u < r->U; u++) {
        size_t n = zb_model_unit_numel(cfg, u);
        r->p[u] = (float *)dalloc(r, n * sizeof(float), ZB_MEM_GATHERED_PARAM);
        r->g[u] = (float *)dalloc(r, n * sizeof(float), ZB_MEM_GATHERED_GRAD);
        if (dt == ZB_DTYPE_BF16) {
            r->p16[u] = (zb_bf16 *)dalloc(r, n * sizeof(zb_bf16), ZB_MEM_GATHERED_PARAM);
        }
        ZB_CHECK_OK(zb_unit_acts_alloc(r->dev, cfg, u, B, keep, dt, &r->acts[u]));
    }
    ZB_CHECK_OK(zb_unit_workspace_alloc(r->dev, cfg, B, !keep, dt, &r->ws));
    for (int i = 0; i < 2; i++) {
        r->dx[i] = dalloc(r, N * (size_t)cfg->dim * esize, ZB_MEM_BENCH_BUFFER);
    }
    r->loss = (float *)dalloc(r, sizeof(float), ZB_MEM_BENCH_BUFFER);
    r->tok = (int32_t *)dalloc(r, N * sizeof(int32_t), ZB_MEM_BENCH_BUFFER);
    r->tgt = (int32_t *)dalloc(r, N * sizeof(int32_t), ZB_MEM_BENCH_BUFFER);
    runner_params(r);
    runner_tokens(r, 0);
    zb_unit_ctx c = {&r->cfg, zb_kernels_for(r->dev), r->s, dt, B, r->tok, r->tgt, r->loss,
                     1.0f, &r->ws};
    r->ctx = c;
}

static void runner_init(runner *r, const zb_model_cfg *cfg, int B, bool keep, bool alias) {
    runner_init_dt(r, cfg, B, keep, alias, ZB_DTYPE_F32);
}

static void runner_free(runner *r) {
    ZB_CHECK_OK(r->dev->ops->stream_sync(r->s));
    r->dev->ops->stream_destroy(r->s);
    for (int u = 0; u < r->U; u++) {
        zb_dev_free(r->dev, r->p[u]);
        zb_dev_free(r->dev, r->g[u]);
        if (r->p16[u]) zb_dev_free(r->dev, r->p16[u]);
        zb_unit_acts_free(r->dev, &r->acts[u]);
    }
    zb_unit_workspace_free(r->dev, &r->ws);
    zb_dev_free(r->dev, r->dx[0]);
    zb_dev_free(r->dev, r->dx[1]);
    zb_dev_free(r->dev, r->loss);
    zb_dev_free(r->dev, r->tok);
    zb_dev_free(r->dev, r->tgt);
    zb_dev_destroy(r->dev);
    zb_trace_destroy(&r->trace);
}

static void issue_forward(runner *r) {
    for (int u = 0; u < r->U; u++) {
        const void *x_in = u ? r->acts[u - 1].out : NULL;
        ZB_CHECK_OK(zb_unit_forward(&r->ctx, u, params_of(r, u), x_in, r->acts[u].out,
                                    &r->acts[u]));
    }
}

static float run_loss(runner *r) {
    issue_forward(r);
    ZB_CHECK_OK(r->dev->ops->stream_sync(r->s));
    return *r->loss;
}

/* Backward of every unit; unit u writes its dx_in to dx[u % 2] (or dx[0]
 * when aliasing) and reads dx_out from what unit u + 1 wrote. */
static void issue_backward(runner *r, float dloss_scale) {
    r->ctx.dloss_scale = dloss_scale;
    for (int u = r->U - 1; u >= 0; u--) {
        void *dx_in = u == 0 ? NULL : r->dx[r->alias ? 0 : u % 2];
        const void *dx_out = u == r->U - 1 ? NULL : r->dx[r->alias ? 0 : (u + 1) % 2];
        ZB_CHECK_OK(zb_unit_backward(&r->ctx, u, params_of(r, u), &r->acts[u], dx_out, dx_in,
                                     r->g[u]));
    }
}

static void run_grads(runner *r, float dloss_scale) {
    issue_forward(r);
    issue_backward(r, dloss_scale);
    ZB_CHECK_OK(r->dev->ops->stream_sync(r->s));
}

static zb_model_cfg tiny_grad_cfg(void) {
    zb_model_cfg c = {2, 8, 2, 1, 4, 12, 11, 5, 2, 1e-5, 10000.0, 7};
    return c;
}

/* ---- gradients vs finite differences ------------------------------------- */

/* Central difference of the loss in p, over the step actually taken in
 * fp32 (p +- h rounded). */
static double fd_at(runner *r, float *p, double h) {
    float p0 = *p, hi = (float)(p0 + h), lo = (float)(p0 - h);
    *p = hi;
    double lp = run_loss(r);
    *p = lo;
    double lm = run_loss(r);
    *p = p0;
    return (lp - lm) / ((double)hi - (double)lo);
}

/* Copies the runner's gradients out (host copies, the runner's buffers are
 * reused by the finite-difference forwards). */
static void save_grads(runner *r, float *out[MAXU]) {
    for (int u = 0; u < r->U; u++) {
        size_t n = zb_model_unit_numel(&r->cfg, u);
        out[u] = (float *)malloc(n * sizeof(float));
        memcpy(out[u], r->g[u], n * sizeof(float));
    }
}

static void free_grads(int U, float *g[MAXU]) {
    for (int u = 0; u < U; u++) free(g[u]);
}

/* Central differences with h = 1e-2 on an fp32 forward. Measured on this
 * model: |fd - g| / |g| <= 5e-3 everywhere (|g| from 1e-3 to 0.2), with
 * absolute errors <= 6e-6: the loss (~2.4) is rounded to ~1.5e-7, which
 * over 2h = 2e-2 gives a ~1e-5 noise floor, and the truncation error
 * (h^2 f'''/6) stays below it. So a parameter passes when
 * |fd - g| <= 1e-2 |g| + 2e-5; a wrong factor, sign, transpose or missed
 * term is off by far more than 1% on these gradients. At least 35 of the
 * 42 sampled gradients must exceed 1e-3, so the bound cannot be met by
 * gradients that are all ~0. Two samples per tensor of every unit;
 * embedding samples come from rows of tokens that occur. */
static void check_fd(runner *r, float *g[MAXU], const char *what) {
    const zb_model_cfg *c = &r->cfg;
    uint64_t st = 99;
    int n_checked = 0, n_big = 0;
    double worst = 0.0;
    for (int u = 0; u < r->U; u++) {
        zb_unit_layout lay;
        zb_model_unit_layout(c, u, &lay);
        for (int t = 0; t < lay.n_tensors; t++) {
            for (int k = 0; k < 2; k++) {
                st = st * 6364136223846793005ull + 1442695040888963407ull;
                uint64_t pick = st >> 33;
                size_t i = lay.tensors[t].offset + (size_t)(pick % lay.tensors[t].numel);
                if (u == 0) {
                    i = (size_t)r->tok[k * 3] * (size_t)c->dim + (size_t)(pick % (uint64_t)c->dim);
                }
                double fd = fd_at(r, &r->p[u][i], 1e-2), gi = g[u][i];
                double err = fabs(fd - gi) / (1e-2 * fabs(gi) + 2e-5);
                worst = fmax(worst, err);
                ZB_CHECK_MSG(err <= 1.0, "%s: unit %d %s[%zu]: backward %.6e, finite diff %.6e",
                             what, u, lay.tensors[t].name, i - lay.tensors[t].offset, gi, fd);
                n_checked++;
                n_big += fabs(gi) > 1e-3;
            }
        }
    }
    ZB_CHECK_MSG(n_checked == 42 && n_big >= 35, "%s: %d of %d gradients above 1e-3", what,
                 n_big, n_checked);
    printf("%s: %d parameters, worst error %.3f of the tolerance\n", what, n_checked, worst);
}

/* Recompute none (separate dx buffers) and full (dx_in = dx_out): the same
 * ops on the same inputs, so loss and gradients must match bit for bit;
 * both checked against finite differences. */
static void test_grad_check(void) {
    zb_model_cfg c = tiny_grad_cfg();
    runner keep, recomp;
    runner_init(&keep, &c, c.batch, true, false);
    runner_init(&recomp, &c, c.batch, false, true);
    run_grads(&keep, 1.0f);
    run_grads(&recomp, 1.0f);
    ZB_CHECK(*keep.loss == *recomp.loss && isfinite(*keep.loss));
    /* near ln V at init (the 10x init spreads the logits a little) */
    ZB_CHECK_MSG(fabs(*keep.loss - log(11.0)) < 1.0, "initial loss %g", *keep.loss);
    float *g[MAXU], *gr[MAXU];
    save_grads(&keep, g);
    save_grads(&recomp, gr);
    for (int u = 0; u < keep.U; u++) {
        ZB_CHECK_MSG(!memcmp(g[u], gr[u], zb_model_unit_numel(&c, u) * sizeof(float)),
                     "unit %d: recompute full gradients differ from recompute none", u);
    }
    check_fd(&keep, g, "recompute none");
    check_fd(&recomp, gr, "recompute full");
    free_grads(keep.U, g);
    free_grads(recomp.U, gr);
    runner_free(&keep);
    runner_free(&recomp);
}

/* Two ranks with B = 1 each and dloss_scale 1/2: their summed gradients are
 * the B = 2 gradient of the global mean loss (up to summation order). */
static void test_micro_batches(void) {
    zb_model_cfg c = tiny_grad_cfg();
    runner full, half;
    runner_init(&full, &c, 2, true, false);
    runner_init(&half, &c, 1, false, true);
    run_grads(&full, 1.0f);
    float *sum[MAXU];
    double loss = 0.0;
    for (int rank = 0; rank < 2; rank++) {
        runner_tokens(&half, (uint64_t)rank);
        run_grads(&half, 0.5f);
        loss += 0.5 * *half.loss;
        if (rank == 0) {
            save_grads(&half, sum);
            continue;
        }
        for (int u = 0; u < half.U; u++) {
            for (size_t i = 0; i < zb_model_unit_numel(&c, u); i++) sum[u][i] += half.g[u][i];
        }
    }
    ZB_CHECK_MSG(fabs(loss - *full.loss) <= 1e-6 * fabs(loss), "loss %g vs %g", loss, *full.loss);
    for (int u = 0; u < full.U; u++) {
        double worst = 0.0, scale = 0.0;
        size_t n = zb_model_unit_numel(&c, u);
        for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(full.g[u][i]));
        for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs(sum[u][i] - full.g[u][i]));
        ZB_CHECK_MSG(scale > 0 && worst <= 1e-5 * scale,
                     "unit %d: split gradients off by %g (scale %g)", u, worst, scale);
    }
    free_grads(full.U, sum);
    runner_free(&full);
    runner_free(&half);
}

/* The FLOPs the trace records for each unit's forward and backward equal
 * zb_unit_forward_flops / zb_unit_backward_flops; activation and workspace
 * bytes are what the device accounted under their tags. */
static void test_flops_and_memory(void) {
    zb_model_cfg c = tiny_grad_cfg();
    for (int keep = 0; keep < 2; keep++) {
        runner r;
        runner_init(&r, &c, 2, keep, false);
        zb_mem_stats ms;
        r.dev->ops->mem_stats(r.dev, &ms);
        size_t acts = 0;
        for (int u = 0; u < r.U; u++) acts += zb_unit_acts_bytes(&c, u, 2, keep, ZB_DTYPE_F32);
        ZB_CHECK(ms.live_bytes[ZB_MEM_ACTIVATION] == acts);
        ZB_CHECK(ms.live_bytes[ZB_MEM_WORKSPACE] ==
                 zb_unit_workspace_bytes(&c, 2, !keep, ZB_DTYPE_F32));
        for (int pass = 0; pass < 2; pass++) {
            zb_trace_clear(&r.trace);
            if (pass == 0) issue_forward(&r);
            else issue_backward(&r, 1.0f);
            ZB_CHECK_OK(r.dev->ops->stream_sync(r.s));
            int n_re = 0;
            for (size_t i = 0; i < r.trace.n_records; i++) {
                n_re += !strncmp(r.trace.records[i].label, "re.", 3);
            }
            /* recomputation: 13 ops per layer (all but w_down and its residual) */
            ZB_CHECK_MSG(n_re == (pass == 1 && !keep ? 13 * c.layers : 0), "%d re.* ops", n_re);
            for (int u = 0; u < r.U; u++) {
                double got = 0.0;
                for (size_t i = 0; i < r.trace.n_records; i++) {
                    if (r.trace.records[i].unit == u) got += r.trace.records[i].flops;
                }
                double want = pass == 0 ? zb_unit_forward_flops(&c, u, 2)
                                        : zb_unit_backward_flops(&c, u, 2, !keep);
                ZB_CHECK_MSG(fabs(got - want) <= 1e-9 * want, "unit %d %s: traced %g, want %g",
                             u, pass ? "backward" : "forward", got, want);
            }
        }
        runner_free(&r);
    }
    ZB_CHECK(zb_unit_acts_bytes(&c, 1, 2, false, ZB_DTYPE_F32) * 5 <
             zb_unit_acts_bytes(&c, 1, 2, true, ZB_DTYPE_F32));
}

/* Relative L2 distance of a from b over n elements. */
static double rel_l2(const float *a, const float *b, size_t n) {
    double d = 0.0, nb = 0.0;
    for (size_t i = 0; i < n; i++) {
        d += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        nb += (double)b[i] * b[i];
    }
    return nb > 0.0 ? sqrt(d / nb) : INFINITY;
}

/* bf16 storage: the same units with bf16 params and activations (fp32
 * math, fp32 parameter gradients) against fp32 storage on the same
 * parameters rounded to bf16, so the only difference is where activations
 * are rounded. Each stored activation carries a relative error up to 2^-9;
 * measured on this model: loss within ~1e-3 relative, each unit's gradient
 * within a few % in relative L2. A dtype mix-up (bf16 read as fp32 or the
 * reverse) gives garbage or NaN, far outside both bounds. Also: recompute
 * full matches recompute none bit for bit in bf16 too, the activations
 * take half the bytes (up to the fp32 statistics and the 256-byte slice
 * alignment), and a bf16 context refuses fp32 activations. */
static void test_bf16_storage(void) {
    zb_model_cfg c = tiny_grad_cfg();
    runner f32, b16, b16re;
    runner_init(&f32, &c, c.batch, true, false);
    runner_init_dt(&b16, &c, c.batch, true, false, ZB_DTYPE_BF16);
    runner_init_dt(&b16re, &c, c.batch, false, true, ZB_DTYPE_BF16);
    for (int u = 0; u < f32.U; u++) {
        size_t n = zb_model_unit_numel(&c, u);
        for (size_t i = 0; i < n; i++) f32.p[u][i] = zb_bf16_to_f32(zb_f32_to_bf16(f32.p[u][i]));
        memcpy(b16.p[u], f32.p[u], n * sizeof(float));
        memcpy(b16re.p[u], f32.p[u], n * sizeof(float));
    }
    run_grads(&f32, 1.0f);
    run_grads(&b16, 1.0f);
    run_grads(&b16re, 1.0f);
    double dl = fabs((double)*b16.loss - *f32.loss) / fabs((double)*f32.loss);
    ZB_CHECK_MSG(isfinite(*b16.loss) && dl <= 2e-3, "bf16 loss %.7g vs fp32 %.7g (rel %.2e)",
                 *b16.loss, *f32.loss, dl);
    ZB_CHECK(*b16.loss == *b16re.loss);
    double worst = 0.0;
    for (int u = 0; u < f32.U; u++) {
        size_t n = zb_model_unit_numel(&c, u);
        double e = rel_l2(b16.g[u], f32.g[u], n);
        worst = fmax(worst, e);
        ZB_CHECK_MSG(e <= 2e-2, "unit %d: bf16 gradients %.3e away from fp32 (relative L2)", u, e);
        ZB_CHECK_MSG(!memcmp(b16.g[u], b16re.g[u], n * sizeof(float)),
                     "unit %d: bf16 recompute full differs from recompute none", u);
    }
    printf("bf16 storage: loss %.7g vs fp32 %.7g (rel %.2e), worst gradient rel L2 %.3e\n",
           *b16.loss, *f32.loss, dl, worst);
    size_t a32 = zb_unit_acts_bytes(&c, 1, 2, true, ZB_DTYPE_F32);
    size_t a16 = zb_unit_acts_bytes(&c, 1, 2, true, ZB_DTYPE_BF16);
    ZB_CHECK_MSG(a16 < a32 && a16 * 2 >= a32 - 13 * 256, "layer acts %zu bf16 vs %zu fp32", a16,
                 a32);
    b16.ctx.dtype = ZB_DTYPE_F32; /* acts were allocated bf16 */
    zb_status st = zb_unit_forward(&b16.ctx, 0, b16.p[0], NULL, b16.acts[0].out, &b16.acts[0]);
    ZB_CHECK(st == ZB_ERR_INVALID);
    b16.ctx.dtype = ZB_DTYPE_BF16;
    runner_free(&f32);
    runner_free(&b16);
    runner_free(&b16re);
}

int main(void) {
    test_grad_check();
    test_micro_batches();
    test_flops_and_memory();
    test_bf16_storage();
    return zb_test_finish("test_zero3_unit");
}
