/* What only the CUDA kernel table (harness/device/cuda/kernels_cuda.c)
 * promises (label gpu; exit 77 = skipped when no GPU is usable), next to
 * the kernel contract that tests/conformance/test_kernel_conformance.c
 * checks on every device (each entry against the CPU reference kernels,
 * fp32 and bf16 storage, casts bit for bit, unknown dtypes refused, a bad
 * token id at sync): zb_kernels_for picks the CUDA table; every entry, in
 * both storage dtypes, announces exactly one op to the device's op hooks
 * with the call's label and unit (the CUPTI tracer's names) and the flops
 * kernels.h counts; bad shapes and an unknown storage dtype are refused on
 * the host before anything is announced or queued, and the stream stays
 * healthy. Inputs are random (as the suite's), outputs poisoned; their
 * values are not compared here.
 * Shapes: as kernels.h (N = B*T, q [B,T,H,D], k, v [B,T,KVH,D]). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "bf16.h"
#include "cuda_backend.h"
#include "backend_select.h"
#include "device.h"
#include "dtype_access.h"
#include "kernels.h"
#include "unit/kernel_test_util.h"
#include "device_cpu.h"
#include "zb_test.h"

#define SKIP 77

static zb_device *cpu_dev, *gpu_dev;
static zb_stream *cs, *gs;
static const zb_kernels *kc, *kg;
static uint64_t rng = 0x5eed;
static zb_dtype DT; /* the pass's storage of activations and weights */

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
    zb_dtype t; /* element type: DT (activations, weights) or fp32 */
    void *h;    /* the CPU device's buffer (host memory) */
    void *d;    /* the CUDA buffer */
} tens;

static size_t t_bytes(const tens *t) { return t->n * zb_dtype_size(t->t); }

/* An input: random values (scale * [-1, 1)) stored as t (bf16 rounds), the
 * same bytes on both sides. An output: 0xff bytes on both sides. */
static tens t_new(size_t n, zb_dtype type, float scale, int poison) {
    tens t = {n, type, NULL, NULL};
    t.h = malloc(t_bytes(&t) ? t_bytes(&t) : 1);
    if (!t.h || cudaMalloc(&t.d, t_bytes(&t) ? t_bytes(&t) : 1) != cudaSuccess) exit(1);
    if (poison) {
        memset(t.h, 0xff, t_bytes(&t));
        cudaMemset(t.d, 0xff, t_bytes(&t));
    } else {
        for (size_t i = 0; i < n; i++) zb_dtype_store(t.h, i, type, scale * kt_uniform(&rng));
        cudaMemcpy(t.d, t.h, t_bytes(&t), cudaMemcpyHostToDevice);
    }
    return t;
}
static tens t_in(size_t n, float scale) { return t_new(n, DT, scale, 0); }
static tens t_in32(size_t n, float scale) { return t_new(n, ZB_DTYPE_F32, scale, 0); }
static tens t_out(size_t n) { return t_new(n, DT, 1.0f, 1); }
static tens t_out32(size_t n) { return t_new(n, ZB_DTYPE_F32, 1.0f, 1); }
static void t_free(tens *t) {
    free(t->h);
    cudaFree(t->d);
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
static void after(const char *label, double flops, zb_status st_g) {
    ZB_CHECK_OK(st_g);
    ZB_CHECK_OK(gs->dev->ops->stream_sync(gs));
    ZB_CHECK_MSG(n_begin == 1 && n_end == 1, "%s: %d op begins, %d ends", label, n_begin, n_end);
    ZB_CHECK_MSG(!strcmp(last_label, label) && last_unit == 7, "%s: announced as '%s' unit %d",
                 label, last_label, last_unit);
    ZB_CHECK_MSG(fabs(last_flops - flops) <= 1e-9 * fabs(flops), "%s: flops %g, want %g", label,
                 last_flops, flops);
}

enum { B = 2, T = 9, H = 4, KVH = 2, D = 8, C = 40, V = 33, N = B * T };

/* Every entry of both tables, activations and weights stored as DT. */
static void run_pass(const int32_t *tok, const int32_t *d_tok) {
    const zb_kcall gc = {gs, NULL, 7, DT};
    printf("-- activations and weights stored as %s --\n", zb_dtype_name(DT));
    { /* embedding */
        tens table = t_in((size_t)V * C, 1.0f), out = t_out((size_t)N * C);
        tens dout = t_in((size_t)N * C, 1.0f), dtab = t_in32((size_t)V * C, 1.0f);
        before();
        after("embedding_fwd", 0.0, kg->embedding_fwd(&gc, out.d, d_tok, table.d, N, C, V));
        before();
        after("embedding_bwd", 0.0, kg->embedding_bwd(&gc, dtab.d, d_tok, dout.d, N, C, V));
        t_free(&table), t_free(&out), t_free(&dout), t_free(&dtab);
    }
    { /* rmsnorm */
        tens x = t_in((size_t)N * C, 2.0f), w = t_in(C, 1.0f), out = t_out((size_t)N * C);
        tens r = t_out32(N), dout = t_in((size_t)N * C, 1.0f), dx = t_out((size_t)N * C);
        tens dw = t_in32(C, 1.0f);
        before();
        after("rmsnorm_fwd", 0.0, kg->rmsnorm_fwd(&gc, out.d, r.d, x.d, w.d, N, C, 1e-5f));
        before();
        after("rmsnorm_bwd", 0.0, kg->rmsnorm_bwd(&gc, dx.d, dw.d, dout.d, x.d, w.d, r.d, N, C));
        t_free(&x), t_free(&w), t_free(&out), t_free(&r), t_free(&dout), t_free(&dx), t_free(&dw);
    }
    { /* rope, attention */
        size_t nq = (size_t)N * H * D, nkv = (size_t)N * KVH * D, nl = (size_t)B * H * T;
        tens q = t_in(nq, 1.0f), k = t_in(nkv, 1.0f), v = t_in(nkv, 1.0f), rq = t_out(nq);
        tens drq = t_out(nq), out = t_out(nq), lse = t_out32(nl), dout = t_in(nq, 1.0f);
        tens dq = t_out(nq), dk = t_out(nkv), dv = t_out(nkv);
        before();
        after("rope_fwd", 0.0, kg->rope_fwd(&gc, rq.d, q.d, B, T, H, D, 10000.0f));
        before();
        after("rope_bwd", 0.0, kg->rope_bwd(&gc, drq.d, q.d, B, T, H, D, 10000.0f));
        double fl = 4.0 * B * H * T * T * D;
        before();
        after("attention_fwd", fl,
              kg->attention_fwd(&gc, out.d, lse.d, q.d, k.d, v.d, B, T, H, KVH, D));
        before();
        after("attention_bwd", 2.0 * fl,
              kg->attention_bwd(&gc, dq.d, dk.d, dv.d, dout.d, q.d, k.d, v.d, out.d, lse.d, B, T,
                                H, KVH, D));
        /* bad shapes: refused before anything is queued, no op announced */
        before();
        ZB_CHECK(kg->rope_fwd(&gc, rq.d, q.d, B, T, H, D - 1, 10000.0f) == ZB_ERR_INVALID);
        ZB_CHECK(kg->attention_fwd(&gc, out.d, lse.d, q.d, k.d, v.d, B, T, H, 3, D) ==
                 ZB_ERR_INVALID);
        ZB_CHECK(n_begin == 0 && n_end == 0);
        t_free(&q), t_free(&k), t_free(&v), t_free(&rq), t_free(&drq), t_free(&out), t_free(&lse);
        t_free(&dout), t_free(&dq), t_free(&dk), t_free(&dv);
    }
    { /* elementwise, cross-entropy, adamw, fill (the last two ignore dtype) */
        const size_t n = 1001;
        tens g = t_in(n, 4.0f), u = t_in(n, 2.0f), h = t_out(n), dh = t_in(n, 1.0f);
        tens dg = t_out(n), du = t_out(n), sum = t_out(n), acc = t_in(n, 1.0f);
        before();
        after("swiglu_fwd", 0.0, kg->swiglu_fwd(&gc, h.d, g.d, u.d, n));
        before();
        after("swiglu_bwd", 0.0, kg->swiglu_bwd(&gc, dg.d, du.d, dh.d, g.d, u.d, n));
        before();
        after("residual_fwd", 0.0, kg->residual_fwd(&gc, sum.d, g.d, u.d, n));
        before();
        after("accumulate", 0.0, kg->accumulate(&gc, acc.d, g.d, n));

        tens logits = t_in((size_t)N * V, 3.0f), loss = t_out32(1), lse = t_out32(N);
        tens dl = t_out((size_t)N * V);
        before();
        after("cross_entropy_fwd", 0.0,
              kg->cross_entropy_fwd(&gc, loss.d, lse.d, logits.d, d_tok, N, V));
        before();
        after("cross_entropy_bwd", 0.0,
              kg->cross_entropy_bwd(&gc, dl.d, logits.d, lse.d, d_tok, N, V, 1.0f));

        tens p = t_in32(n, 1.0f), gr = t_in32(n, 4.0f), m = t_in32(n, 0.01f), vv = t_in32(n, 0.0f);
        tens fill = t_out32(n);
        before();
        after("adamw", 0.0,
              kg->adamw(&gc, p.d, gr.d, m.d, vv.d, n, 2, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, true));
        before();
        after("fill", 0.0, kg->fill(&gc, fill.d, 0.25f, n));
        tens *all[] = {&g,      &u,    &h,   &dh, &dg, &du, &sum, &acc, &logits,
                       &loss,   &lse,  &dl,  &p,  &gr, &m,  &vv,  &fill};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) t_free(all[i]);
    }
}

/* An unknown storage dtype is refused on the host before anything is
 * announced or queued (the NULL buffers are never touched). */
static void check_bad_dtype(void) {
    /* That every entry refuses it with ZB_ERR_INVALID naming the op is the
     * kernel conformance suite's; here: refused before anything is announced. */
    const zb_kcall bad = {gs, NULL, 7, ZB_DTYPE_COUNT};
    before();
    ZB_CHECK(kg->rmsnorm_fwd(&bad, NULL, NULL, NULL, NULL, 2, 4, 1e-5f) == ZB_ERR_INVALID);
    ZB_CHECK(kg->attention_bwd(&bad, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, 2,
                               2, 1, 4) == ZB_ERR_INVALID);
    ZB_CHECK(kg->cross_entropy_fwd(&bad, NULL, NULL, NULL, NULL, 2, 8) == ZB_ERR_INVALID);
    zb_error_clear();
    ZB_CHECK_MSG(n_begin == 0 && n_end == 0, "refused calls announced %d ops", n_begin);
    ZB_CHECK_OK(gs->dev->ops->stream_sync(gs)); /* the stream stays healthy */
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
    /* Both sides through the front end (its checks and flops), which sends
     * each call to its stream's backend table. */
    kc = zb_kernels_for(cpu_dev);
    kg = zb_kernels_for(gpu_dev);
    ZB_CHECK(kc && kg && kg == kc && gpu_dev->ops->kernels() == zb_kernels_cuda() &&
             cpu_dev->ops->kernels() == zb_kernels_cpu() &&
             !strcmp(zb_kernels_cuda()->name, "cuda"));
    if (!kc || !kg) return zb_test_finish("test_cuda_kernel_table");
    zb_cuda_op_hooks hooks = {hook_begin, hook_end, NULL};
    zb_device_cuda_set_op_hooks(gpu_dev, &hooks);

    int32_t tok[N];
    for (int i = 0; i < N; i++) tok[i] = (int32_t)(kt_next(&rng) % V);
    int32_t *d_tok = ids_dev(tok, N);

    DT = ZB_DTYPE_F32;
    run_pass(tok, d_tok);
    DT = ZB_DTYPE_BF16;
    run_pass(tok, d_tok);
    DT = ZB_DTYPE_F32;
    check_bad_dtype();

    cudaFree(d_tok);
    zb_device_cuda_set_op_hooks(gpu_dev, NULL);
    gpu_dev->ops->stream_destroy(gs);
    cpu_dev->ops->stream_destroy(cs);
    zb_dev_destroy(gpu_dev);
    zb_dev_destroy(cpu_dev);
    return zb_test_finish("test_cuda_kernel_table");
}
