/* The CUDA kernel table (harness/cuda/kernels_cuda.c) against the CPU
 * table (kernels/cpu/dispatch.c), entry by entry, in the manner of ggml's
 * test-backend-ops (label gpu; exit 77 = skipped when no GPU is usable).
 * This checks the wiring, not the numerics (test_cuda_kernels.c does that
 * with per-element bounds): each entry runs on a CPU device stream and on a
 * CUDA device stream with the same random inputs, and every output must
 * agree within 1e-4 of the output's largest magnitude (a swapped argument
 * or a wrong dimension is off by O(1)); outputs start as NaN on the GPU, so
 * an unwritten element fails. Also: zb_kernels_for picks the table; every
 * entry announces exactly one op to the device's op hooks with the call's
 * label and unit (the CUPTI tracer's names) and the CPU table's flops; bad
 * shapes are refused on the host with ZB_ERR_INVALID; a bad token id
 * surfaces at the stream's synchronization as ZB_ERR_INVALID.
 * Shapes: as kernels.h (N = B*T, q [B,T,H,D], k, v [B,T,KVH,D]). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda_backend.h"
#include "device.h"
#include "kernels.h"
#include "unit/kernel_test_util.h"
#include "zb_test.h"

#define SKIP 77
#define BOUND 1e-4

static zb_device *cpu_dev, *gpu_dev;
static zb_stream *cs, *gs;
static const zb_kernels *kc, *kg;
static uint64_t rng = 0x5eed;

/* ---- op hooks: what the tracer would see ------------------------------------ */
static int n_begin, n_end, last_unit;
static char last_label[64];
static double last_flops;

static void hook_begin(void *arg, const zb_stream *s, const zb_op_info *info, uint64_t seq) {
    n_begin++;
    snprintf(last_label, sizeof last_label, "%s", info && info->label ? info->label : "");
    last_unit = info ? info->unit : -2;
    last_flops = info ? info->flops : -1.0;
}
static void hook_end(void *arg, const zb_stream *s) { n_end++; }

/* ---- a tensor on both sides ---------------------------------------------------- */
typedef struct tens {
    size_t n;
    float *h;  /* the CPU device's buffer (host memory) */
    float *d;  /* the CUDA buffer */
} tens;

static tens t_new(size_t n, float scale, int nan_on_gpu) {
    tens t = {n, (float *)malloc(n * sizeof(float)), NULL};
    for (size_t i = 0; i < n; i++) t.h[i] = scale * kt_uniform(&rng);
    if (cudaMalloc((void **)&t.d, n * sizeof(float)) != cudaSuccess) exit(1);
    if (nan_on_gpu) {
        cudaMemset(t.d, 0xff, n * sizeof(float));
    } else {
        cudaMemcpy(t.d, t.h, n * sizeof(float), cudaMemcpyHostToDevice);
    }
    return t;
}
static tens t_in(size_t n, float scale) { return t_new(n, scale, 0); }
static tens t_out(size_t n) { return t_new(n, 1.0f, 1); }
static void t_free(tens *t) {
    free(t->h);
    cudaFree(t->d);
}

/* GPU vs CPU within BOUND of max |cpu|; NaN fails. */
static void t_check(const char *name, const tens *t) {
    float *g = (float *)malloc(t->n * sizeof(float));
    cudaMemcpy(g, t->d, t->n * sizeof(float), cudaMemcpyDeviceToHost);
    double scale = 0.0, worst = 0.0;
    for (size_t i = 0; i < t->n; i++) scale = fmax(scale, fabs((double)t->h[i]));
    if (scale == 0.0) scale = 1.0;
    for (size_t i = 0; i < t->n; i++) {
        double e = fabs((double)g[i] - (double)t->h[i]) / scale;
        if (!(e <= worst)) worst = isnan(e) ? INFINITY : e;
    }
    printf("%-28s max err / max|cpu| %10.3e  bound %.0e  %s\n", name, worst, BOUND,
           worst <= BOUND ? "pass" : "FAIL");
    ZB_CHECK_MSG(worst <= BOUND, "%s: error %.3e of the output's scale", name, worst);
    free(g);
}

static int32_t *ids_dev(const int32_t *ids, int n) {
    int32_t *d = NULL;
    if (cudaMalloc((void **)&d, (size_t)n * sizeof *d) != cudaSuccess) exit(1);
    cudaMemcpy(d, ids, (size_t)n * sizeof *d, cudaMemcpyHostToDevice);
    return d;
}

/* Before each pair of calls: the hook counters. After: both streams synced,
 * one op announced with the call's label, unit and flops. */
static void before(void) { n_begin = n_end = 0; }
static void after(const char *label, double flops, zb_status st_c, zb_status st_g) {
    ZB_CHECK_OK(st_c);
    ZB_CHECK_OK(st_g);
    ZB_CHECK_OK(cs->dev->ops->stream_sync(cs));
    ZB_CHECK_OK(gs->dev->ops->stream_sync(gs));
    ZB_CHECK_MSG(n_begin == 1 && n_end == 1, "%s: %d op begins, %d ends", label, n_begin, n_end);
    ZB_CHECK_MSG(!strcmp(last_label, label) && last_unit == 7, "%s: announced as '%s' unit %d",
                 label, last_label, last_unit);
    ZB_CHECK_MSG(fabs(last_flops - flops) <= 1e-9 * fabs(flops), "%s: flops %g, want %g", label,
                 last_flops, flops);
}

int main(void) {
    int n_gpus = 0;
    char why[256];
    if (zb_cuda_probe(&n_gpus, why, sizeof why) != ZB_OK) {
        printf("test_cuda_kernel_table: skipped: %s\n", why);
        return SKIP;
    }
    zb_device_config cfg = {0, 0, 1, 60.0, NULL};
    ZB_CHECK_OK(zb_device_create("cpu", &cfg, &cpu_dev));
    ZB_CHECK_OK(zb_device_create("cuda", &cfg, &gpu_dev));
    if (!cpu_dev || !gpu_dev) return zb_test_finish("test_cuda_kernel_table");
    ZB_CHECK_OK(cpu_dev->ops->stream_create(cpu_dev, "compute", &cs));
    ZB_CHECK_OK(gpu_dev->ops->stream_create(gpu_dev, "compute", &gs));
    kc = zb_kernels_for(cpu_dev);
    kg = zb_kernels_for(gpu_dev);
    ZB_CHECK(kc && kg && kg == zb_kernels_cuda() && !strcmp(kg->name, "cuda"));
    if (!kc || !kg) return zb_test_finish("test_cuda_kernel_table");
    zb_cuda_op_hooks hooks = {hook_begin, hook_end, NULL};
    zb_device_cuda_set_op_hooks(gpu_dev, &hooks);
    const zb_kcall cc = {cs, NULL, 7}, gc = {gs, NULL, 7};

    enum { B = 2, T = 9, H = 4, KVH = 2, D = 8, C = 40, V = 33, N = B * T };
    int32_t tok[N];
    for (int i = 0; i < N; i++) tok[i] = (int32_t)(kt_next(&rng) % V);
    int32_t *d_tok = ids_dev(tok, N);

    { /* embedding */
        tens table = t_in((size_t)V * C, 1.0f), out = t_out((size_t)N * C);
        tens dout = t_in((size_t)N * C, 1.0f), dtab = t_in((size_t)V * C, 1.0f);
        before();
        after("embedding_fwd", 0.0, kc->embedding_fwd(&cc, out.h, tok, table.h, N, C, V),
              kg->embedding_fwd(&gc, out.d, d_tok, table.d, N, C, V));
        t_check("embedding_fwd", &out);
        before();
        after("embedding_bwd", 0.0, kc->embedding_bwd(&cc, dtab.h, tok, dout.h, N, C, V),
              kg->embedding_bwd(&gc, dtab.d, d_tok, dout.d, N, C, V));
        t_check("embedding_bwd", &dtab);
        t_free(&table), t_free(&out), t_free(&dout), t_free(&dtab);
    }
    { /* rmsnorm */
        tens x = t_in((size_t)N * C, 2.0f), w = t_in(C, 1.0f), out = t_out((size_t)N * C);
        tens r = t_out(N), dout = t_in((size_t)N * C, 1.0f), dx = t_out((size_t)N * C);
        tens dw = t_in(C, 1.0f);
        before();
        after("rmsnorm_fwd", 0.0, kc->rmsnorm_fwd(&cc, out.h, r.h, x.h, w.h, N, C, 1e-5f),
              kg->rmsnorm_fwd(&gc, out.d, r.d, x.d, w.d, N, C, 1e-5f));
        t_check("rmsnorm_fwd out", &out);
        t_check("rmsnorm_fwd inv_rms", &r);
        before();
        after("rmsnorm_bwd", 0.0, kc->rmsnorm_bwd(&cc, dx.h, dw.h, dout.h, x.h, w.h, r.h, N, C),
              kg->rmsnorm_bwd(&gc, dx.d, dw.d, dout.d, x.d, w.d, r.d, N, C));
        t_check("rmsnorm_bwd dx", &dx);
        t_check("rmsnorm_bwd dweight", &dw);
        t_free(&x), t_free(&w), t_free(&out), t_free(&r), t_free(&dout), t_free(&dx), t_free(&dw);
    }
    { /* rope, attention */
        size_t nq = (size_t)N * H * D, nkv = (size_t)N * KVH * D, np = (size_t)B * H * T * T;
        tens q = t_in(nq, 1.0f), k = t_in(nkv, 1.0f), v = t_in(nkv, 1.0f), rq = t_out(nq);
        tens drq = t_out(nq), out = t_out(nq), p = t_out(np), dout = t_in(nq, 1.0f);
        tens dq = t_out(nq), dk = t_out(nkv), dv = t_out(nkv);
        before();
        after("rope_fwd", 0.0, kc->rope_fwd(&cc, rq.h, q.h, B, T, H, D, 10000.0f),
              kg->rope_fwd(&gc, rq.d, q.d, B, T, H, D, 10000.0f));
        t_check("rope_fwd", &rq);
        before();
        after("rope_bwd", 0.0, kc->rope_bwd(&cc, drq.h, q.h, B, T, H, D, 10000.0f),
              kg->rope_bwd(&gc, drq.d, q.d, B, T, H, D, 10000.0f));
        t_check("rope_bwd", &drq);
        double fl = 4.0 * B * H * T * T * D;
        before();
        after("attention_fwd", fl,
              kc->attention_fwd(&cc, out.h, p.h, q.h, k.h, v.h, B, T, H, KVH, D),
              kg->attention_fwd(&gc, out.d, p.d, q.d, k.d, v.d, B, T, H, KVH, D));
        t_check("attention_fwd out", &out);
        t_check("attention_fwd probs", &p);
        before();
        after("attention_bwd", 2.0 * fl,
              kc->attention_bwd(&cc, dq.h, dk.h, dv.h, dout.h, q.h, k.h, v.h, p.h, B, T, H, KVH,
                                D),
              kg->attention_bwd(&gc, dq.d, dk.d, dv.d, dout.d, q.d, k.d, v.d, p.d, B, T, H, KVH,
                                D));
        t_check("attention_bwd dq", &dq);
        t_check("attention_bwd dk", &dk);
        t_check("attention_bwd dv", &dv);
        /* bad shapes: refused before anything is queued, no op announced */
        before();
        ZB_CHECK(kg->rope_fwd(&gc, rq.d, q.d, B, T, H, D - 1, 10000.0f) == ZB_ERR_INVALID);
        ZB_CHECK(kg->attention_fwd(&gc, out.d, p.d, q.d, k.d, v.d, B, T, H, 3, D) ==
                 ZB_ERR_INVALID);
        ZB_CHECK(n_begin == 0 && n_end == 0);
        t_free(&q), t_free(&k), t_free(&v), t_free(&rq), t_free(&drq), t_free(&out), t_free(&p);
        t_free(&dout), t_free(&dq), t_free(&dk), t_free(&dv);
    }
    { /* elementwise, cross-entropy, adamw, fill */
        const size_t n = 1001;
        tens g = t_in(n, 4.0f), u = t_in(n, 2.0f), h = t_out(n), dh = t_in(n, 1.0f);
        tens dg = t_out(n), du = t_out(n), sum = t_out(n), acc = t_in(n, 1.0f);
        before();
        after("swiglu_fwd", 0.0, kc->swiglu_fwd(&cc, h.h, g.h, u.h, n),
              kg->swiglu_fwd(&gc, h.d, g.d, u.d, n));
        t_check("swiglu_fwd", &h);
        before();
        after("swiglu_bwd", 0.0, kc->swiglu_bwd(&cc, dg.h, du.h, dh.h, g.h, u.h, n),
              kg->swiglu_bwd(&gc, dg.d, du.d, dh.d, g.d, u.d, n));
        t_check("swiglu_bwd dgate", &dg);
        t_check("swiglu_bwd dup", &du);
        before();
        after("residual_fwd", 0.0, kc->residual_fwd(&cc, sum.h, g.h, u.h, n),
              kg->residual_fwd(&gc, sum.d, g.d, u.d, n));
        t_check("residual_fwd", &sum);
        before();
        after("accumulate", 0.0, kc->accumulate(&cc, acc.h, g.h, n),
              kg->accumulate(&gc, acc.d, g.d, n));
        t_check("accumulate", &acc);

        tens logits = t_in((size_t)N * V, 3.0f), loss = t_out(1), lse = t_out(N);
        tens dl = t_out((size_t)N * V);
        before();
        after("cross_entropy_fwd", 0.0,
              kc->cross_entropy_fwd(&cc, loss.h, lse.h, logits.h, tok, N, V),
              kg->cross_entropy_fwd(&gc, loss.d, lse.d, logits.d, d_tok, N, V));
        t_check("cross_entropy_fwd loss", &loss);
        t_check("cross_entropy_fwd lse", &lse);
        before();
        after("cross_entropy_bwd", 0.0,
              kc->cross_entropy_bwd(&cc, dl.h, logits.h, lse.h, tok, N, V, 1.0f),
              kg->cross_entropy_bwd(&gc, dl.d, logits.d, lse.d, d_tok, N, V, 1.0f));
        t_check("cross_entropy_bwd", &dl);

        tens p = t_in(n, 1.0f), m = t_in(n, 0.01f), vv = t_in(n, 0.0f), fill = t_out(n);
        before();
        after("adamw", 0.0,
              kc->adamw(&cc, p.h, g.h, m.h, vv.h, n, 2, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, true),
              kg->adamw(&gc, p.d, g.d, m.d, vv.d, n, 2, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, true));
        t_check("adamw params", &p);
        t_check("adamw m", &m);
        t_check("adamw v", &vv);
        before();
        after("fill", 0.0, kc->fill(&cc, fill.h, 0.25f, n), kg->fill(&gc, fill.d, 0.25f, n));
        t_check("fill", &fill);
        tens *all[] = {&g,      &u,    &h,   &dh, &dg, &du, &sum, &acc,
                       &logits, &loss, &lse, &dl, &p,  &m,  &vv,  &fill};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) t_free(all[i]);
    }
    { /* a bad token id: the kernel's error word makes stream_sync fail */
        int32_t bad[2] = {1, V + 5};
        int32_t *d_bad = ids_dev(bad, 2);
        tens table = t_in((size_t)V * C, 1.0f), out = t_out((size_t)2 * C);
        ZB_CHECK_OK(kg->embedding_fwd(&gc, out.d, d_bad, table.d, 2, C, V));
        zb_status st = gs->dev->ops->stream_sync(gs);
        printf("bad token id at stream_sync: %s (%s)\n", zb_status_name(st), zb_error_message());
        ZB_CHECK(st == ZB_ERR_INVALID);
        zb_error_clear();
        cudaFree(d_bad);
        t_free(&table), t_free(&out);
    }
    cudaFree(d_tok);
    zb_device_cuda_set_op_hooks(gpu_dev, NULL);
    gpu_dev->ops->stream_destroy(gs);
    cpu_dev->ops->stream_destroy(cs);
    zb_dev_destroy(gpu_dev);
    zb_dev_destroy(cpu_dev);
    return zb_test_finish("test_cuda_kernel_table");
}
