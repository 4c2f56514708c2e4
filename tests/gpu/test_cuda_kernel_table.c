/* The CUDA kernel table (harness/device/cuda/kernels_cuda.c) against the CPU
 * table (harness/device/cpu/dispatch.c), entry by entry, in the manner of ggml's
 * test-backend-ops (label gpu; exit 77 = skipped when no GPU is usable).
 * This checks the wiring, not the numerics (test_cuda_kernels.c does that
 * with per-element bounds): each entry runs on a CPU device stream and on a
 * CUDA device stream with the same fresh random inputs, once with
 * activations and weights stored in fp32 and once in bf16 (zb_kcall.dtype;
 * for bf16 the random inputs are rounded to bf16 first and both sides get
 * the same bits). Written outputs are poisoned on both sides first (0xff: NaN
 * in fp32 and in bf16), so an element either side leaves unwritten fails.
 * Every output must agree with the CPU's within a bound relative to the
 * output's largest magnitude: 1e-5 for fp32 outputs (a swapped argument or
 * a wrong dimension is off by O(1)), 1e-2 for bf16 outputs (both sides
 * compute in fp32 and round once; two fp32 results a few ulp apart may
 * round one bf16 ulp apart, <= 2^-7 of the value). The statistics, the
 * loss and parameter gradients stay fp32 in the bf16 pass and keep the
 * fp32 bound. Backward ops read the CPU's saved forward outputs (inv_rms,
 * probs, lse) on both sides, so they start from the same inputs.
 * Both tables are reached through the kernel front end (zb_kernels_for),
 * which routes each call to its stream's backend table. Also: every entry
 * announces exactly one op to the device's op hooks with the call's label
 * and unit (the CUPTI tracer's names) and the front end's flops; bad shapes
 * and an unknown storage dtype are refused on the host with ZB_ERR_INVALID
 * naming the op, nothing announced; cast converts fp32 <-> bf16 bit for bit as the CPU
 * table does (ties, NaNs, infinities, subnormals; all 65536 bf16
 * patterns); a bad token id surfaces at the stream's synchronization as
 * ZB_ERR_INVALID.
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
#define BOUND_F32 1e-5
#define BOUND_BF16 1e-2

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
/* The GPU copy := the CPU copy (a saved forward output both backwards read). */
static void t_share(const tens *t) {
    cudaMemcpy(t->d, t->h, t_bytes(t), cudaMemcpyHostToDevice);
}

/* GPU vs CPU within the bound of t's type, relative to max |cpu|; a NaN on
 * either side (an unwritten element) fails. */
static void t_check(const char *name, const tens *t) {
    void *g = malloc(t_bytes(t) ? t_bytes(t) : 1);
    cudaMemcpy(g, t->d, t_bytes(t), cudaMemcpyDeviceToHost);
    double bound = t->t == ZB_DTYPE_BF16 ? BOUND_BF16 : BOUND_F32;
    double scale = 0.0, worst = 0.0;
    for (size_t i = 0; i < t->n; i++) {
        scale = fmax(scale, fabs((double)zb_dtype_load(t->h, i, t->t)));
    }
    if (scale == 0.0) scale = 1.0;
    size_t at = 0;
    for (size_t i = 0; i < t->n; i++) {
        double c = zb_dtype_load(t->h, i, t->t), v = zb_dtype_load(g, i, t->t);
        double e = fabs(v - c) / scale;
        if (!(e <= worst)) {
            worst = isnan(e) ? INFINITY : e;
            at = i;
        }
    }
    char full[96];
    snprintf(full, sizeof full, "%s [%s]", name, zb_dtype_name(t->t));
    printf("%-34s max err / max|cpu| %10.3e  bound %.0e  %s", full, worst, bound,
           worst <= bound ? "pass" : "FAIL");
    if (!(worst <= bound) && t->n) {
        printf("  at %zu: gpu %.9g cpu %.9g", at, (double)zb_dtype_load(g, at, t->t),
               (double)zb_dtype_load(t->h, at, t->t));
    }
    printf("\n");
    ZB_CHECK_MSG(worst <= bound, "%s (storage %s): error %.3e of the output's scale", full,
                 zb_dtype_name(DT), worst);
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

enum { B = 2, T = 9, H = 4, KVH = 2, D = 8, C = 40, V = 33, N = B * T };

/* Every entry of both tables, activations and weights stored as DT. */
static void run_pass(const int32_t *tok, const int32_t *d_tok) {
    const zb_kcall cc = {cs, NULL, 7, DT}, gc = {gs, NULL, 7, DT};
    printf("-- activations and weights stored as %s --\n", zb_dtype_name(DT));
    { /* embedding */
        tens table = t_in((size_t)V * C, 1.0f), out = t_out((size_t)N * C);
        tens dout = t_in((size_t)N * C, 1.0f), dtab = t_in32((size_t)V * C, 1.0f);
        before();
        after("embedding_fwd", 0.0, kc->embedding_fwd(&cc, out.h, tok, table.h, N, C, V),
              kg->embedding_fwd(&gc, out.d, d_tok, table.d, N, C, V));
        t_check("embedding_fwd", &out);
        before();
        after("embedding_bwd", 0.0, kc->embedding_bwd(&cc, dtab.h, tok, dout.h, N, C, V),
              kg->embedding_bwd(&gc, dtab.d, d_tok, dout.d, N, C, V));
        t_check("embedding_bwd dtable", &dtab);
        t_free(&table), t_free(&out), t_free(&dout), t_free(&dtab);
    }
    { /* rmsnorm */
        tens x = t_in((size_t)N * C, 2.0f), w = t_in(C, 1.0f), out = t_out((size_t)N * C);
        tens r = t_out32(N), dout = t_in((size_t)N * C, 1.0f), dx = t_out((size_t)N * C);
        tens dw = t_in32(C, 1.0f);
        before();
        after("rmsnorm_fwd", 0.0, kc->rmsnorm_fwd(&cc, out.h, r.h, x.h, w.h, N, C, 1e-5f),
              kg->rmsnorm_fwd(&gc, out.d, r.d, x.d, w.d, N, C, 1e-5f));
        t_check("rmsnorm_fwd out", &out);
        t_check("rmsnorm_fwd inv_rms", &r);
        t_share(&r);
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
        t_share(&p);
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
    { /* elementwise, cross-entropy, adamw, fill (the last two ignore dtype) */
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

        tens logits = t_in((size_t)N * V, 3.0f), loss = t_out32(1), lse = t_out32(N);
        tens dl = t_out((size_t)N * V);
        before();
        after("cross_entropy_fwd", 0.0,
              kc->cross_entropy_fwd(&cc, loss.h, lse.h, logits.h, tok, N, V),
              kg->cross_entropy_fwd(&gc, loss.d, lse.d, logits.d, d_tok, N, V));
        t_check("cross_entropy_fwd loss", &loss);
        t_check("cross_entropy_fwd lse", &lse);
        t_share(&lse);
        before();
        after("cross_entropy_bwd", 0.0,
              kc->cross_entropy_bwd(&cc, dl.h, logits.h, lse.h, tok, N, V, 1.0f),
              kg->cross_entropy_bwd(&gc, dl.d, logits.d, lse.d, d_tok, N, V, 1.0f));
        t_check("cross_entropy_bwd", &dl);

        tens p = t_in32(n, 1.0f), gr = t_in32(n, 4.0f), m = t_in32(n, 0.01f), vv = t_in32(n, 0.0f);
        tens fill = t_out32(n);
        before();
        after("adamw", 0.0,
              kc->adamw(&cc, p.h, gr.h, m.h, vv.h, n, 2, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, true),
              kg->adamw(&gc, p.d, gr.d, m.d, vv.d, n, 2, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, true));
        t_check("adamw params", &p);
        t_check("adamw m", &m);
        t_check("adamw v", &vv);
        before();
        after("fill", 0.0, kc->fill(&cc, fill.h, 0.25f, n), kg->fill(&gc, fill.d, 0.25f, n));
        t_check("fill", &fill);
        tens *all[] = {&g,      &u,    &h,   &dh, &dg, &du, &sum, &acc, &logits,
                       &loss,   &lse,  &dl,  &p,  &gr, &m,  &vv,  &fill};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) t_free(all[i]);
    }
}

/* An unknown storage dtype: every entry with activations or weights
 * refuses it on the host with ZB_ERR_INVALID naming the op, before
 * anything is announced or queued (the NULL buffers are never touched). */
static void check_bad_dtype(void) {
    const zb_kcall bad = {gs, NULL, 7, ZB_DTYPE_COUNT};
    static const char *const ops[] = {
        "embedding_fwd", "embedding_bwd", "rmsnorm_fwd", "rmsnorm_bwd",       "rope_fwd",
        "rope_bwd",      "attention_fwd", "attention_bwd", "swiglu_fwd",      "swiglu_bwd",
        "residual_fwd",  "accumulate",    "cross_entropy_fwd", "cross_entropy_bwd",
    };
    zb_status st[sizeof ops / sizeof ops[0]];
    char msg[sizeof ops / sizeof ops[0]][ZB_ERROR_MAX];
    int i = 0;
    before();
#define BAD_CALL(expr)                                                                 \
    do {                                                                               \
        st[i] = (expr);                                                                \
        snprintf(msg[i], sizeof msg[i], "%s", zb_error_message());                     \
        zb_error_clear();                                                              \
        i++;                                                                           \
    } while (0)
    BAD_CALL(kg->embedding_fwd(&bad, NULL, NULL, NULL, 2, 4, 8));
    BAD_CALL(kg->embedding_bwd(&bad, NULL, NULL, NULL, 2, 4, 8));
    BAD_CALL(kg->rmsnorm_fwd(&bad, NULL, NULL, NULL, NULL, 2, 4, 1e-5f));
    BAD_CALL(kg->rmsnorm_bwd(&bad, NULL, NULL, NULL, NULL, NULL, NULL, 2, 4));
    BAD_CALL(kg->rope_fwd(&bad, NULL, NULL, 1, 2, 2, 4, 1e4f));
    BAD_CALL(kg->rope_bwd(&bad, NULL, NULL, 1, 2, 2, 4, 1e4f));
    BAD_CALL(kg->attention_fwd(&bad, NULL, NULL, NULL, NULL, NULL, 1, 2, 2, 1, 4));
    BAD_CALL(kg->attention_bwd(&bad, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, 2, 2, 1,
                               4));
    BAD_CALL(kg->swiglu_fwd(&bad, NULL, NULL, NULL, 8));
    BAD_CALL(kg->swiglu_bwd(&bad, NULL, NULL, NULL, NULL, NULL, 8));
    BAD_CALL(kg->residual_fwd(&bad, NULL, NULL, NULL, 8));
    BAD_CALL(kg->accumulate(&bad, NULL, NULL, 8));
    BAD_CALL(kg->cross_entropy_fwd(&bad, NULL, NULL, NULL, NULL, 2, 8));
    BAD_CALL(kg->cross_entropy_bwd(&bad, NULL, NULL, NULL, NULL, 2, 8, 1.0f));
#undef BAD_CALL
    ZB_CHECK(i == (int)(sizeof ops / sizeof ops[0]));
    for (int j = 0; j < i; j++) {
        int pass = st[j] == ZB_ERR_INVALID && strstr(msg[j], ops[j]) != NULL;
        printf("%-34s unknown dtype: %s '%s'  %s\n", ops[j], zb_status_name(st[j]), msg[j],
               pass ? "pass" : "FAIL");
        ZB_CHECK_MSG(pass, "%s with dtype %d: %s '%s' (want ZB_ERR_INVALID naming the op)", ops[j],
                     (int)ZB_DTYPE_COUNT, zb_status_name(st[j]), msg[j]);
    }
    ZB_CHECK_MSG(n_begin == 0 && n_end == 0, "refused calls announced %d ops", n_begin);
    ZB_CHECK_OK(gs->dev->ops->stream_sync(gs)); /* the stream stays healthy */
}

/* fp32 bits -> bf16 bits exactly as kernels/bf16.h (the expected value). */
static uint32_t f32_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* cast: fp32 -> bf16 and bf16 -> fp32 on both tables, compared bit for
 * bit. The fp32 inputs: values at and next to rounding ties (even and odd
 * kept bits, both signs, subnormal, the largest finite rounding to
 * infinity), zeros, infinities, quiet and signaling NaNs with payloads,
 * random magnitudes 2^-30..2^30 and random bit patterns. No input's result
 * is 0xffff, the poison, so an unwritten element fails. The bf16 inputs:
 * all 65536 patterns (their fp32 results are never 0xffffffff). */
static void check_cast(void) {
    const zb_kcall cc = {cs, NULL, 7, ZB_DTYPE_F32}, gc = {gs, NULL, 7, ZB_DTYPE_BF16};
    static const uint32_t special[] = {
        0x3f808000u, 0x3f818000u, 0xbf808000u, 0xbf818000u, /* ties: to even (down, up) */
        0x3f807fffu, 0x3f808001u, 0x3f80ffffu, 0x3f817fffu, /* just below / above a tie */
        0x7f7f8000u, 0x7f7f7fffu, 0xff7f8000u,              /* largest finite: tie -> inf */
        0x00008000u, 0x00018000u, 0x80018000u, 0x00000001u, /* subnormal ties, smallest */
        0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, /* zeros, infinities */
        0x7fc00000u, 0xffc12345u, 0x7f800001u, 0x7fa00000u, /* NaNs: quiet, signaling */
        0xff80ffffu, 0x7fbfffffu, 0x3f800000u, 0xc0490fdbu, /* more NaNs, 1, -pi */
    };
    const size_t n_special = sizeof special / sizeof special[0];
    const size_t n_rand = 4096, n = n_special + 2 * n_rand;
    uint32_t *in = (uint32_t *)malloc(n * sizeof *in);
    size_t k = 0;
    for (size_t i = 0; i < n_special; i++) in[k++] = special[i];
    for (size_t i = 0; i < n_rand; i++) {
        int e = (int)(kt_next(&rng) % 61) - 30;
        in[k++] = f32_bits(ldexpf(kt_uniform(&rng), e));
    }
    while (k < n) {
        uint32_t b = (uint32_t)kt_next(&rng);
        uint32_t hi = b >> 16;
        if (hi == 0xffffu || hi == 0xffbfu) continue; /* NaNs that narrow to 0xffff */
        in[k++] = b;
    }
    /* fp32 -> bf16 */
    void *h_src = malloc(n * 4), *h_dst = malloc(n * 2), *g_dst = malloc(n * 2);
    void *d_src = NULL, *d_dst = NULL;
    memcpy(h_src, in, n * 4);
    memset(h_dst, 0xff, n * 2);
    if (cudaMalloc(&d_src, n * 4) != cudaSuccess || cudaMalloc(&d_dst, n * 4) != cudaSuccess) {
        exit(1);
    }
    cudaMemcpy(d_src, h_src, n * 4, cudaMemcpyHostToDevice);
    cudaMemset(d_dst, 0xff, n * 4);
    before();
    after("cast", 0.0, kc->cast(&cc, h_dst, ZB_DTYPE_BF16, h_src, ZB_DTYPE_F32, n),
          kg->cast(&gc, d_dst, ZB_DTYPE_BF16, d_src, ZB_DTYPE_F32, n));
    cudaMemcpy(g_dst, d_dst, n * 2, cudaMemcpyDeviceToHost);
    size_t bad = 0, first = 0, wrong_ref = 0;
    for (size_t i = 0; i < n; i++) {
        zb_bf16 hv = ((const zb_bf16 *)h_dst)[i], gv = ((const zb_bf16 *)g_dst)[i];
        float f;
        memcpy(&f, &in[i], sizeof f);
        if (hv != zb_f32_to_bf16(f)) wrong_ref++; /* the CPU table vs bf16.h */
        if (hv != gv && bad++ == 0) first = i;
    }
    printf("%-34s %zu of %zu differ from the cpu table%s\n", "cast f32->bf16 (bits)", bad, n,
           bad ? "" : "  pass");
    const zb_bf16 *gb = (const zb_bf16 *)g_dst, *hb = (const zb_bf16 *)h_dst;
    ZB_CHECK_MSG(bad == 0, "cast f32->bf16: %zu of %zu differ; first at %zu: in 0x%08x gpu 0x%04x "
                 "cpu 0x%04x", bad, n, first, (unsigned)in[first], (unsigned)gb[first],
                 (unsigned)hb[first]);
    ZB_CHECK_MSG(wrong_ref == 0, "cast f32->bf16: the cpu table differs from bf16.h in %zu places",
                 wrong_ref);
    /* spot checks of the rounding itself: ties to even, overflow, NaN */
    ZB_CHECK(gb[0] == 0x3f80u && gb[1] == 0x3f82u && gb[8] == 0x7f80u && gb[21] == 0x7fc0u);

    /* bf16 -> fp32: every pattern */
    const size_t nb = 65536;
    void *hb_src = malloc(nb * 2), *hb_dst = malloc(nb * 4), *gb_dst = malloc(nb * 4);
    for (size_t i = 0; i < nb; i++) ((zb_bf16 *)hb_src)[i] = (zb_bf16)i;
    memset(hb_dst, 0xff, nb * 4);
    void *db_src = NULL, *db_dst = NULL;
    if (cudaMalloc(&db_src, nb * 2) != cudaSuccess || cudaMalloc(&db_dst, nb * 4) != cudaSuccess) {
        exit(1);
    }
    cudaMemcpy(db_src, hb_src, nb * 2, cudaMemcpyHostToDevice);
    cudaMemset(db_dst, 0xff, nb * 4);
    before();
    after("cast", 0.0, kc->cast(&cc, hb_dst, ZB_DTYPE_F32, hb_src, ZB_DTYPE_BF16, nb),
          kg->cast(&gc, db_dst, ZB_DTYPE_F32, db_src, ZB_DTYPE_BF16, nb));
    cudaMemcpy(gb_dst, db_dst, nb * 4, cudaMemcpyDeviceToHost);
    bad = 0, wrong_ref = 0, first = 0;
    for (size_t i = 0; i < nb; i++) {
        uint32_t hv = ((const uint32_t *)hb_dst)[i], gv = ((const uint32_t *)gb_dst)[i];
        if (hv != (uint32_t)i << 16) wrong_ref++; /* widening is exact */
        if (hv != gv && bad++ == 0) first = i;
    }
    printf("%-34s %zu of %zu differ from the cpu table%s\n", "cast bf16->f32 (bits)", bad, nb,
           bad ? "" : "  pass");
    ZB_CHECK_MSG(bad == 0, "cast bf16->f32: %zu of %zu differ; first at 0x%04zx: gpu 0x%08x cpu "
                 "0x%08x", bad, nb, first, (unsigned)((const uint32_t *)gb_dst)[first],
                 (unsigned)((const uint32_t *)hb_dst)[first]);
    ZB_CHECK_MSG(wrong_ref == 0, "cast bf16->f32: the cpu table is not exact in %zu places",
                 wrong_ref);
    /* an unsupported pair is refused, nothing announced */
    before();
    ZB_CHECK(kg->cast(&gc, d_dst, ZB_DTYPE_F32, d_src, ZB_DTYPE_F32, n) == ZB_ERR_INVALID);
    zb_error_clear();
    ZB_CHECK(n_begin == 0 && n_end == 0);
    free(in), free(h_src), free(h_dst), free(g_dst), free(hb_src), free(hb_dst), free(gb_dst);
    cudaFree(d_src), cudaFree(d_dst), cudaFree(db_src), cudaFree(db_dst);
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
    check_cast();

    { /* a bad token id: the kernel's error word makes stream_sync fail */
        const zb_kcall gc = {gs, NULL, 7, ZB_DTYPE_F32};
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
