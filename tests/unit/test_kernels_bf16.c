/* The CPU backend's bf16 storage (kernels.h "Storage dtype", device.h
 * zb_gemm_desc.c_f32): the bf16 reference against the fp32 reference.
 *
 * Kernel table: every entry but adamw, fill and cast runs twice on the same
 * values: with dtype bf16 on bf16 buffers, and with dtype float on the
 * widened copies. The bf16 path widens exactly and runs the same fp32 code,
 * so each bf16 output must equal the rounding (zb_f32_to_bf16) of the fp32
 * output bit for bit, and each fp32 output (inv_rms, lse, loss, dweight,
 * dtable) must be bit-identical: this checks which argument is which dtype,
 * the widening, the rounding and the element counts. Outputs start as NaN
 * (0xFFFF in bf16, all ones in fp32) and must end finite, so an element
 * left unwritten fails. Aliased calls (rope out == x, residual out == a or
 * b, swiglu_bwd dgate == gate or dh and dup == up or dh, rmsnorm_bwd dx ==
 * dout, cross_entropy_bwd dlogits == logits) must give the same bits as the
 * unaliased bf16 call. A dtype other than float or bf16 is refused at issue
 * time; fill and cast ignore c->dtype; a failing kernel still fails on bf16.
 *
 * GEMM on the CPU device: bf16 A, B with a bf16 C or an fp32 C (c_f32),
 * beta 0 and 1, every trans_a/trans_b, a non-square shape with row strides
 * longer than the rows, against a double reference on the widened inputs:
 * fp32 C within 1e-5 and bf16 C within 2^-8 (one rounding) of the terms'
 * size; NaN padding in A and B must not be read, C's padding must not be
 * written, and with beta 0 a NaN C must not be read. fp32 with c_f32 gives
 * the same bits as plain fp32. Nothing here is timed.
 *
 * Shapes: as kernels.h (N = B*T, q [B,T,H,D], k, v [B,T,KVH,D]). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bf16.h"
#include "device.h"
#include "kernels.h"
#include "kernel_test_util.h"
#include "device_cpu.h"
#include "zb_test.h"

enum { B = 2, T = 5, H = 4, KVH = 2, D = 8, N = B * T, C = 24, V = 37, NE = 257 };

static zb_device *dev;
static zb_stream *st;
static const zb_kernels *K;
static uint64_t rng = 0xbf16;

static zb_kcall call(zb_dtype dtype) {
    zb_kcall c = {st, NULL, -1, dtype};
    return c;
}
static zb_kcall kb, kf; /* dtype bf16, dtype float */
static void sync_ok(void) { ZB_CHECK_OK(dev->ops->stream_sync(st)); }

/* ---- tensors: the bf16 buffer and its fp32 twin ------------------------------ */

typedef struct tens {
    size_t n;
    zb_bf16 *h; /* what the bf16 call gets */
    float *f;   /* what the fp32 call gets */
} tens;

static tens t_alloc(size_t n) {
    tens t = {n, (zb_bf16 *)malloc(n * sizeof(zb_bf16)), (float *)malloc(n * sizeof(float))};
    return t;
}

/* Random values rounded to bf16; f is their exact widening. */
static tens t_in(size_t n, float scale) {
    tens t = t_alloc(n);
    for (size_t i = 0; i < n; i++) {
        t.h[i] = zb_f32_to_bf16(scale * kt_uniform(&rng));
        t.f[i] = zb_bf16_to_f32(t.h[i]);
    }
    return t;
}

/* An output: NaN on both sides. */
static tens t_out(size_t n) {
    tens t = t_alloc(n);
    memset(t.h, 0xff, n * sizeof(zb_bf16));
    memset(t.f, 0xff, n * sizeof(float));
    return t;
}

/* A copy of a bf16 buffer as a new input (f widened). */
static tens t_of(const zb_bf16 *h, size_t n) {
    tens t = t_alloc(n);
    memcpy(t.h, h, n * sizeof(zb_bf16));
    for (size_t i = 0; i < n; i++) t.f[i] = zb_bf16_to_f32(h[i]);
    return t;
}

static void t_free(tens *t) {
    free(t->h);
    free(t->f);
}

/* Each bf16 element is the rounding of the fp32 one, and finite. */
static void t_check(const char *what, const tens *t) {
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (t->h[i] != zb_f32_to_bf16(t->f[i]) || isnan(zb_bf16_to_f32(t->h[i]))) {
            if (!bad++) first = i;
        }
    }
    ZB_CHECK_MSG(bad == 0, "%s: %zu of %zu elements differ; element %zu is 0x%04x, fp32 %.9g "
                 "rounds to 0x%04x", what, bad, t->n, first, t->n ? t->h[first] : 0,
                 t->n ? (double)t->f[first] : 0.0, t->n ? zb_f32_to_bf16(t->f[first]) : 0);
}

/* An aliased bf16 call's result equals the unaliased one's, bit for bit. */
static void t_check_same(const char *what, const zb_bf16 *got, const tens *want) {
    ZB_CHECK_MSG(!memcmp(got, want->h, want->n * sizeof(zb_bf16)),
                 "%s: the aliased call differs from the unaliased one", what);
}

/* ---- fp32 arguments: one buffer per call ------------------------------------- */

typedef struct ftens {
    size_t n;
    float *b; /* the bf16 call's */
    float *f; /* the fp32 call's */
} ftens;

/* NaN (written outputs) or the same random values (accumulated ones). */
static ftens f_new(size_t n, bool accumulated) {
    ftens t = {n, (float *)malloc(n * sizeof(float)), (float *)malloc(n * sizeof(float))};
    if (accumulated) {
        for (size_t i = 0; i < n; i++) t.b[i] = t.f[i] = kt_uniform(&rng);
    } else {
        memset(t.b, 0xff, n * sizeof(float));
        memset(t.f, 0xff, n * sizeof(float));
    }
    return t;
}

static void f_free(ftens *t) {
    free(t->b);
    free(t->f);
}

/* Bit-identical and finite. */
static void f_check(const char *what, const ftens *t) {
    bool finite = true;
    for (size_t i = 0; i < t->n; i++) finite &= isfinite(t->b[i]) != 0;
    ZB_CHECK_MSG(finite && !memcmp(t->b, t->f, t->n * sizeof(float)),
                 "%s: the bf16 call's fp32 output differs from the fp32 call's (or is not finite)",
                 what);
}

static int32_t *tokens(int n, int range) {
    int32_t *t = (int32_t *)malloc((size_t)n * sizeof *t);
    for (int i = 0; i < n; i++) t[i] = (int32_t)(kt_next(&rng) % (uint64_t)range);
    t[n - 1] = t[0]; /* a repeat: embedding_bwd adds two rows into one */
    return t;
}

/* ---- the kernel table ---------------------------------------------------------- */

static void test_embedding(void) {
    int32_t *tok = tokens(N, V);
    tens table = t_in((size_t)V * C, 1.0f), out = t_out((size_t)N * C);
    ZB_CHECK_OK(K->embedding_fwd(&kb, out.h, tok, table.h, N, C, V));
    ZB_CHECK_OK(K->embedding_fwd(&kf, out.f, tok, table.f, N, C, V));
    tens dout = t_in((size_t)N * C, 1.0f);
    ftens dtable = f_new((size_t)V * C, true);
    ZB_CHECK_OK(K->embedding_bwd(&kb, dtable.b, tok, dout.h, N, C, V));
    ZB_CHECK_OK(K->embedding_bwd(&kf, dtable.f, tok, dout.f, N, C, V));
    sync_ok();
    t_check("embedding_fwd out", &out);
    f_check("embedding_bwd dtable", &dtable);
    t_free(&table), t_free(&out), t_free(&dout), f_free(&dtable);
    free(tok);
}

static void test_rmsnorm(void) {
    size_t n = (size_t)N * C;
    tens x = t_in(n, 2.0f), w = t_in(C, 1.0f), out = t_out(n);
    ftens inv = f_new(N, false);
    ZB_CHECK_OK(K->rmsnorm_fwd(&kb, out.h, inv.b, x.h, w.h, N, C, 1e-5f));
    ZB_CHECK_OK(K->rmsnorm_fwd(&kf, out.f, inv.f, x.f, w.f, N, C, 1e-5f));
    sync_ok();
    t_check("rmsnorm_fwd out", &out);
    f_check("rmsnorm_fwd inv_rms", &inv);

    /* the backward reads the forward's inv_rms (the same fp32 values) */
    tens dout = t_in(n, 1.0f), dx = t_out(n);
    ftens dw = f_new(C, true), dw_alias = f_new(C, false);
    memcpy(dw_alias.b, dw.b, C * sizeof(float));
    ZB_CHECK_OK(K->rmsnorm_bwd(&kb, dx.h, dw.b, dout.h, x.h, w.h, inv.f, N, C));
    ZB_CHECK_OK(K->rmsnorm_bwd(&kf, dx.f, dw.f, dout.f, x.f, w.f, inv.f, N, C));
    tens alias = t_of(dout.h, n); /* dx == dout */
    ZB_CHECK_OK(K->rmsnorm_bwd(&kb, alias.h, dw_alias.b, alias.h, x.h, w.h, inv.f, N, C));
    sync_ok();
    t_check("rmsnorm_bwd dx", &dx);
    f_check("rmsnorm_bwd dweight", &dw);
    t_check_same("rmsnorm_bwd dx == dout", alias.h, &dx);
    ZB_CHECK(!memcmp(dw_alias.b, dw.b, C * sizeof(float)));
    t_free(&x), t_free(&w), t_free(&out), t_free(&dout), t_free(&dx), t_free(&alias);
    f_free(&inv), f_free(&dw), f_free(&dw_alias);
}

static void test_rope(void) {
    size_t n = (size_t)N * H * D;
    tens x = t_in(n, 1.0f), out = t_out(n), dout = t_in(n, 1.0f), dx = t_out(n);
    ZB_CHECK_OK(K->rope_fwd(&kb, out.h, x.h, B, T, H, D, 10000.0f));
    ZB_CHECK_OK(K->rope_fwd(&kf, out.f, x.f, B, T, H, D, 10000.0f));
    ZB_CHECK_OK(K->rope_bwd(&kb, dx.h, dout.h, B, T, H, D, 10000.0f));
    ZB_CHECK_OK(K->rope_bwd(&kf, dx.f, dout.f, B, T, H, D, 10000.0f));
    tens ax = t_of(x.h, n), adout = t_of(dout.h, n);
    ZB_CHECK_OK(K->rope_fwd(&kb, ax.h, ax.h, B, T, H, D, 10000.0f));
    ZB_CHECK_OK(K->rope_bwd(&kb, adout.h, adout.h, B, T, H, D, 10000.0f));
    sync_ok();
    t_check("rope_fwd out", &out);
    t_check("rope_bwd dx", &dx);
    t_check_same("rope_fwd out == x", ax.h, &out);
    t_check_same("rope_bwd dx == dout", adout.h, &dx);
    t_free(&x), t_free(&out), t_free(&dout), t_free(&dx), t_free(&ax), t_free(&adout);
}

static void test_attention(void) {
    size_t nq = (size_t)N * H * D, nkv = (size_t)N * KVH * D, nr = (size_t)B * H * T;
    tens q = t_in(nq, 1.0f), k = t_in(nkv, 1.0f), v = t_in(nkv, 1.0f);
    tens out = t_out(nq);
    ftens lse = f_new(nr, false);
    ZB_CHECK_OK(K->attention_fwd(&kb, out.h, lse.b, q.h, k.h, v.h, B, T, H, KVH, D));
    ZB_CHECK_OK(K->attention_fwd(&kf, out.f, lse.f, q.f, k.f, v.f, B, T, H, KVH, D));
    sync_ok();
    t_check("attention_fwd out", &out);
    f_check("attention_fwd lse", &lse);

    /* the backward reads the bf16 forward's output (rounded) on both sides
     * and the lse, bit-identical on both */
    tens o = t_of(out.h, nq), dout = t_in(nq, 1.0f);
    tens dq = t_out(nq), dk = t_out(nkv), dv = t_out(nkv);
    ZB_CHECK_OK(K->attention_bwd(&kb, dq.h, dk.h, dv.h, dout.h, q.h, k.h, v.h, o.h, lse.b, B, T,
                                 H, KVH, D));
    ZB_CHECK_OK(K->attention_bwd(&kf, dq.f, dk.f, dv.f, dout.f, q.f, k.f, v.f, o.f, lse.f, B, T,
                                 H, KVH, D));
    sync_ok();
    t_check("attention_bwd dq", &dq);
    t_check("attention_bwd dk", &dk);
    t_check("attention_bwd dv", &dv);
    t_free(&q), t_free(&k), t_free(&v), t_free(&out), t_free(&o), f_free(&lse);
    t_free(&dout), t_free(&dq), t_free(&dk), t_free(&dv);
}

static void test_swiglu(void) {
    tens gate = t_in(NE, 3.0f), up = t_in(NE, 1.0f), h = t_out(NE);
    ZB_CHECK_OK(K->swiglu_fwd(&kb, h.h, gate.h, up.h, NE));
    ZB_CHECK_OK(K->swiglu_fwd(&kf, h.f, gate.f, up.f, NE));
    tens dh = t_in(NE, 1.0f), dgate = t_out(NE), dup = t_out(NE);
    ZB_CHECK_OK(K->swiglu_bwd(&kb, dgate.h, dup.h, dh.h, gate.h, up.h, NE));
    ZB_CHECK_OK(K->swiglu_bwd(&kf, dgate.f, dup.f, dh.f, gate.f, up.f, NE));
    sync_ok();
    t_check("swiglu_fwd h", &h);
    t_check("swiglu_bwd dgate", &dgate);
    t_check("swiglu_bwd dup", &dup);

    /* dgate == gate with dup == up, then dgate == dh with dup == up, then
     * dgate == gate with dup == dh */
    for (int variant = 0; variant < 3; variant++) {
        tens g = t_of(gate.h, NE), u = t_of(up.h, NE), d = t_of(dh.h, NE);
        zb_bf16 *og = variant == 1 ? d.h : g.h;
        zb_bf16 *ou = variant == 2 ? d.h : u.h;
        ZB_CHECK_OK(K->swiglu_bwd(&kb, og, ou, d.h, g.h, u.h, NE));
        sync_ok();
        const char *names[3][2] = {
            {"swiglu_bwd dgate == gate", "swiglu_bwd dup == up"},
            {"swiglu_bwd dgate == dh", "swiglu_bwd dup == up (dgate == dh)"},
            {"swiglu_bwd dgate == gate (dup == dh)", "swiglu_bwd dup == dh"}};
        t_check_same(names[variant][0], og, &dgate);
        t_check_same(names[variant][1], ou, &dup);
        t_free(&g), t_free(&u), t_free(&d);
    }
    t_free(&gate), t_free(&up), t_free(&h), t_free(&dh), t_free(&dgate), t_free(&dup);
}

static void test_residual_and_accumulate(void) {
    tens a = t_in(NE, 1.0f), b = t_in(NE, 1.0f), out = t_out(NE);
    ZB_CHECK_OK(K->residual_fwd(&kb, out.h, a.h, b.h, NE));
    ZB_CHECK_OK(K->residual_fwd(&kf, out.f, a.f, b.f, NE));
    tens aa = t_of(a.h, NE), bb = t_of(b.h, NE);
    ZB_CHECK_OK(K->residual_fwd(&kb, aa.h, aa.h, b.h, NE));
    ZB_CHECK_OK(K->residual_fwd(&kb, bb.h, a.h, bb.h, NE));
    /* dst += src reads dst: dst starts as the same values on both sides */
    tens dst = t_in(NE, 1.0f), src = t_in(NE, 1.0f);
    ZB_CHECK_OK(K->accumulate(&kb, dst.h, src.h, NE));
    ZB_CHECK_OK(K->accumulate(&kf, dst.f, src.f, NE));
    sync_ok();
    t_check("residual_fwd out", &out);
    t_check_same("residual_fwd out == a", aa.h, &out);
    t_check_same("residual_fwd out == b", bb.h, &out);
    t_check("accumulate dst", &dst);
    t_free(&a), t_free(&b), t_free(&out), t_free(&aa), t_free(&bb), t_free(&dst), t_free(&src);
}

static void test_cross_entropy(void) {
    size_t n = (size_t)N * V;
    int32_t *tgt = tokens(N, V);
    tens logits = t_in(n, 4.0f);
    ftens loss = f_new(1, false), lse = f_new(N, false);
    ZB_CHECK_OK(K->cross_entropy_fwd(&kb, loss.b, lse.b, logits.h, tgt, N, V));
    ZB_CHECK_OK(K->cross_entropy_fwd(&kf, loss.f, lse.f, logits.f, tgt, N, V));
    sync_ok();
    f_check("cross_entropy_fwd loss", &loss);
    f_check("cross_entropy_fwd lse", &lse);

    tens dlogits = t_out(n), alias = t_of(logits.h, n);
    ZB_CHECK_OK(K->cross_entropy_bwd(&kb, dlogits.h, logits.h, lse.b, tgt, N, V, 1.0f));
    ZB_CHECK_OK(K->cross_entropy_bwd(&kf, dlogits.f, logits.f, lse.f, tgt, N, V, 1.0f));
    ZB_CHECK_OK(K->cross_entropy_bwd(&kb, alias.h, alias.h, lse.b, tgt, N, V, 1.0f));
    sync_ok();
    t_check("cross_entropy_bwd dlogits", &dlogits);
    t_check_same("cross_entropy_bwd dlogits == logits", alias.h, &dlogits);
    t_free(&logits), t_free(&dlogits), t_free(&alias), f_free(&loss), f_free(&lse);
    free(tgt);
}

/* Through the front end (zb_kernels_for: the CPU table trusts its
 * arguments), every storage entry refuses a dtype that is neither float nor
 * bf16 at issue time, naming itself; fill and cast ignore c->dtype. */
static void test_dtype_refused(void) {
    const zb_kernels *cpu = K;
    K = zb_kernels_for(dev);
    zb_kcall c = call(ZB_DTYPE_COUNT);
    float f[64] = {0}, g[64] = {0};
    zb_bf16 h[64] = {0};
    int32_t tok[4] = {0};
    struct {
        const char *name;
        zb_status st;
    } r[] = {
        {"embedding_fwd", K->embedding_fwd(&c, h, tok, h, 2, 2, 2)},
        {"embedding_bwd", K->embedding_bwd(&c, f, tok, h, 2, 2, 2)},
        {"rmsnorm_fwd", K->rmsnorm_fwd(&c, h, f, h, h, 2, 2, 1e-5f)},
        {"rmsnorm_bwd", K->rmsnorm_bwd(&c, h, f, h, h, h, g, 2, 2)},
        {"rope_fwd", K->rope_fwd(&c, h, h, 1, 1, 1, 2, 1e4f)},
        {"rope_bwd", K->rope_bwd(&c, h, h, 1, 1, 1, 2, 1e4f)},
        {"attention_fwd", K->attention_fwd(&c, h, f, h, h, h, 1, 2, 1, 1, 2)},
        {"attention_bwd", K->attention_bwd(&c, h, h, h, h, h, h, h, h, f, 1, 2, 1, 1, 2)},
        {"swiglu_fwd", K->swiglu_fwd(&c, h, h, h, 4)},
        {"swiglu_bwd", K->swiglu_bwd(&c, h, h + 8, h, h, h, 4)},
        {"residual_fwd", K->residual_fwd(&c, h, h, h, 4)},
        {"accumulate", K->accumulate(&c, h, h + 8, 4)},
        {"cross_entropy_fwd", K->cross_entropy_fwd(&c, f, g, h, tok, 2, 2)},
        {"cross_entropy_bwd", K->cross_entropy_bwd(&c, h, h, g, tok, 2, 2, 1.0f)},
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        ZB_CHECK_MSG(r[i].st == ZB_ERR_INVALID, "%s with dtype %d: status %d, want invalid",
                     r[i].name, (int)ZB_DTYPE_COUNT, (int)r[i].st);
    }
    ZB_CHECK(K->accumulate(&c, h, h + 8, 4) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(strstr(zb_error_message(), "accumulate") && strstr(zb_error_message(), "dtype"),
                 "message '%s' names neither the op nor the dtype", zb_error_message());

    /* fill and cast ignore c->dtype: fp32 values, an explicit cast */
    zb_kcall cb = call(ZB_DTYPE_BF16);
    ZB_CHECK_OK(K->fill(&cb, f, 1.5f, 64));
    ZB_CHECK_OK(K->fill(&c, g, 2.5f, 64));
    ZB_CHECK_OK(K->cast(&cb, h, ZB_DTYPE_BF16, f, ZB_DTYPE_F32, 64));
    sync_ok();
    bool ok = true;
    for (int i = 0; i < 64; i++) ok &= f[i] == 1.5f && g[i] == 2.5f && zb_bf16_to_f32(h[i]) == 1.5f;
    ZB_CHECK_MSG(ok, "fill or cast with a bf16 / bad kcall dtype did not write fp32 values");
    K = cpu;
}

/* A kernel's own failure (odd head dim) surfaces through the bf16 path. */
static void test_kernel_error(void) {
    zb_stream *s2 = NULL;
    ZB_CHECK_OK(dev->ops->stream_create(dev, "failing", &s2));
    zb_bf16 x[12] = {0};
    zb_kcall c = {s2, NULL, -1, ZB_DTYPE_BF16};
    ZB_CHECK_OK(K->rope_fwd(&c, x, x, 1, 2, 2, 3, 1e4f));
    ZB_CHECK(dev->ops->stream_sync(s2) == ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "head dim") != NULL);
    dev->ops->stream_destroy(s2);
}

/* ---- GEMM on the CPU device ---------------------------------------------------- */

enum { GM = 7, GN = 5, GK = 11, PAD = 3 };

/* A matrix [rows, cols] stored with row stride cols + PAD: values rounded to
 * bf16 (h, f widened) and NaN in the padding. */
typedef struct gmat {
    int64_t rows, cols, ld;
    zb_bf16 *h;
    float *f;
} gmat;

static gmat g_new(int64_t rows, int64_t cols, bool nan) {
    gmat m = {rows, cols, cols + PAD, NULL, NULL};
    size_t n = (size_t)(rows * m.ld);
    m.h = (zb_bf16 *)malloc(n * sizeof(zb_bf16));
    m.f = (float *)malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        bool pad = (int64_t)i % m.ld >= cols;
        m.h[i] = nan || pad ? 0xffff : zb_f32_to_bf16(kt_uniform(&rng));
        m.f[i] = zb_bf16_to_f32(m.h[i]);
    }
    return m;
}

static void g_free(gmat *m) {
    free(m->h);
    free(m->f);
}

/* op(X)[i][j] of a stored matrix. */
static double g_at(const gmat *m, bool trans, int64_t i, int64_t j) {
    return trans ? (double)m->f[j * m->ld + i] : (double)m->f[i * m->ld + j];
}

static void gemm_case(bool ta, bool tb, float beta, bool c_f32) {
    const float alpha = 0.75f;
    gmat a = g_new(ta ? GK : GM, ta ? GM : GK, false), b = g_new(tb ? GN : GK, tb ? GK : GN, false);
    gmat c = g_new(GM, GN, beta == 0.0f); /* NaN where beta 0 must not read it */
    float *cf = (float *)malloc((size_t)(GM * c.ld) * sizeof(float));
    zb_bf16 *ch = (zb_bf16 *)malloc((size_t)(GM * c.ld) * sizeof(zb_bf16));
    memcpy(cf, c.f, (size_t)(GM * c.ld) * sizeof(float));
    memcpy(ch, c.h, (size_t)(GM * c.ld) * sizeof(zb_bf16));
    zb_gemm_desc g = {ta, tb, GM, GN, GK, alpha, beta, a.h, a.ld, b.h, b.ld,
                      c_f32 ? (void *)cf : (void *)ch, c.ld, ZB_DTYPE_BF16, c_f32};
    ZB_CHECK_OK(dev->ops->gemm(st, &g, NULL));
    sync_ok();
    double worst = 0.0;
    bool pad_kept = true;
    for (int64_t i = 0; i < GM; i++) {
        for (int64_t j = 0; j < c.ld; j++) {
            size_t at = (size_t)(i * c.ld + j);
            if (j >= GN) { /* padding: untouched */
                pad_kept &= c_f32 ? !memcmp(&cf[at], &c.f[at], sizeof(float)) : ch[at] == c.h[at];
                continue;
            }
            double want = 0.0, mag = 0.0;
            for (int64_t p = 0; p < GK; p++) {
                double t = g_at(&a, ta, i, p) * g_at(&b, tb, p, j);
                want += t;
                mag += fabs(t);
            }
            want *= alpha;
            mag *= alpha;
            if (beta != 0.0f) {
                want += beta * (double)c.f[at];
                mag += fabs(beta * (double)c.f[at]);
            }
            double got = c_f32 ? (double)cf[at] : (double)zb_bf16_to_f32(ch[at]);
            double tol = (c_f32 ? 0.0 : 0x1.0p-8 * fabs(want)) + 1e-5 * mag;
            double e = fabs(got - want) / tol;
            if (!(e <= worst)) worst = isnan(e) ? INFINITY : e;
        }
    }
    ZB_CHECK_MSG(worst <= 1.0, "bf16 GEMM trans_a %d trans_b %d beta %g %s C: worst error %.3g x "
                 "tolerance", ta, tb, (double)beta, c_f32 ? "fp32" : "bf16", worst);
    ZB_CHECK_MSG(pad_kept, "bf16 GEMM trans_a %d trans_b %d beta %g %s C: padding written", ta, tb,
                 (double)beta, c_f32 ? "fp32" : "bf16");
    g_free(&a), g_free(&b), g_free(&c);
    free(cf), free(ch);
}

static void test_gemm_bf16(void) {
    for (int t = 0; t < 4; t++) {
        for (int cf = 0; cf < 2; cf++) {
            gemm_case(t & 1, t & 2, 0.0f, cf);
            gemm_case(t & 1, t & 2, 1.0f, cf);
        }
    }
}

/* dtype float with c_f32 is plain fp32: the same bits. */
static void test_gemm_f32_c_f32(void) {
    float *a = kt_rand_f(GM * GK, &rng, 1.0f), *b = kt_rand_f(GK * GN, &rng, 1.0f);
    float *c1 = kt_rand_f(GM * GN, &rng, 1.0f), *c2 = (float *)malloc(GM * GN * sizeof(float));
    memcpy(c2, c1, GM * GN * sizeof(float));
    zb_gemm_desc g = {false, false, GM, GN, GK, 1.0f, 1.0f, a, GK, b, GN, c1, GN, ZB_DTYPE_F32,
                      false};
    ZB_CHECK_OK(dev->ops->gemm(st, &g, NULL));
    g.c = c2, g.c_f32 = true;
    ZB_CHECK_OK(dev->ops->gemm(st, &g, NULL));
    sync_ok();
    ZB_CHECK(!memcmp(c1, c2, GM * GN * sizeof(float)));
    free(a), free(b), free(c1), free(c2);
}

int main(void) {
    zb_device_config cfg = {0, 0, 1, 60.0, NULL};
    ZB_CHECK_OK(zb_device_cpu_create(&cfg, &dev));
    ZB_CHECK_OK(dev->ops->stream_create(dev, "bf16", &st));
    K = zb_kernels_cpu();
    kb = call(ZB_DTYPE_BF16);
    kf = call(ZB_DTYPE_F32);
    test_embedding();
    test_rmsnorm();
    test_rope();
    test_attention();
    test_swiglu();
    test_residual_and_accumulate();
    test_cross_entropy();
    test_dtype_refused();
    test_kernel_error();
    test_gemm_bf16();
    test_gemm_f32_c_f32();
    dev->ops->stream_destroy(st);
    zb_dev_destroy(dev);
    return zb_test_finish("test_kernels_bf16");
}
