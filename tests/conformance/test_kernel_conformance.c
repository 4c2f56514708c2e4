/* The kernel table's contract (kernels.h), on every device backend the
 * registry lists that is built and usable here (conformance.h): each
 * device's table (its registry entry's kernels(), reached as callers reach
 * it, through the kernel front end zb_kernels_for) against the CPU REFERENCE kernels (kernels/cpu/
 * zb_cpu_kernels.h) called directly on host buffers, so the cpu device's
 * own table is checked against them too.
 *
 * Every entry runs on fresh random inputs (kernel_test_util.h's rng), once
 * with activations and weights stored in fp32 and once in bf16
 * (zb_kcall.dtype). In the bf16 pass the inputs are rounded to bf16 first
 * and the reference runs in fp32 on the widened values, its outputs
 * rounded once (what kernels.h promises: the fp32 op on the widened inputs,
 * rounded, up to the summation order). Outputs the table writes start as
 * NaN on the device (0xff bytes), so an element left unwritten fails;
 * accumulated outputs start from random values. Backward ops read the
 * reference's saved forward outputs (inv_rms, lse; attention: out and lse,
 * with the reference's own probabilities on its side) on both sides.
 * Bound, relative to the output's largest magnitude: 1e-5 for fp32 outputs
 * (only the summation order and libm differ; a swapped argument or wrong
 * dimension is off by O(1)), 1e-2 for bf16 outputs (two fp32 results a few
 * ulp apart may round one bf16 ulp, 2^-7 of the value, apart). Statistics,
 * the loss and parameter gradients stay fp32 in the bf16 pass.
 * Also: cast, bit for bit against the reference casts (rounding ties, NaNs,
 * infinities, subnormals; every bf16 pattern); an unknown storage dtype is
 * refused with ZB_ERR_INVALID naming the op; a token id outside the
 * vocabulary surfaces at the stream's sync as ZB_ERR_INVALID.
 * Backend-specific checks (op hooks, errors found at issue) stay in the
 * backends' own tests. Argument: one backend name to check alone (exit 77
 * when it cannot run here). Shapes: as kernels.h. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bf16.h"
#include "conformance.h"
#include "dtype_access.h"
#include "kernels.h"
#include "unit/kernel_test_util.h"
#include "zb_cpu_kernels.h"

#define SUITE "test_kernel_conformance"
#define BOUND_F32 1e-5
#define BOUND_BF16 1e-2

static const char *backend;
static zb_stream *S;
static const zb_kernels *K;
static zb_dtype DT; /* the pass's storage of activations and weights */
static uint64_t rng = 0x5eed;

/* ---- a tensor: the reference's host copy (fp32) and the device's buffer ---------- */

typedef struct tens {
    size_t n;
    zb_dtype t; /* DT (activations, weights) or fp32 */
    float *h;   /* reference values (inputs: already rounded to t) */
    void *d;    /* the device's buffer, elements of type t */
} tens;

static float round_to(zb_dtype t, float v) {
    return t == ZB_DTYPE_BF16 ? zb_bf16_to_f32(zb_f32_to_bf16(v)) : v;
}

/* h's values in t's bytes, copied to d. */
static void t_upload(tens *x) {
    size_t es = zb_dtype_size(x->t);
    char *b = (char *)malloc(x->n * es + 1);
    for (size_t i = 0; i < x->n; i++) zb_dtype_store(b, i, x->t, x->h[i]);
    if (!x->d) ZB_CHECK_OK(zb_dev_alloc(S->dev, x->n * es + 1, ZB_MEM_ACTIVATION, &x->d));
    if (x->d) zc_upload(S, x->d, b, x->n * es);
    free(b);
}

/* An input: random (scale * [-1, 1)) rounded to t, the same values on both
 * sides. An output: zeros for the reference, NaN on the device. */
static tens t_new(size_t n, zb_dtype t, float scale, int output) {
    tens x = {n, t, (float *)calloc(n + 1, sizeof(float)), NULL};
    if (output) {
        x.d = zc_dev_poisoned(S, n * zb_dtype_size(t), ZB_MEM_ACTIVATION);
    } else {
        for (size_t i = 0; i < n; i++) x.h[i] = round_to(t, scale * kt_uniform(&rng));
        t_upload(&x);
    }
    return x;
}
static tens t_in(size_t n, float scale) { return t_new(n, DT, scale, 0); }
static tens t_in32(size_t n, float scale) { return t_new(n, ZB_DTYPE_F32, scale, 0); }
static tens t_out(size_t n) { return t_new(n, DT, 1.0f, 1); }
static tens t_out32(size_t n) { return t_new(n, ZB_DTYPE_F32, 1.0f, 1); }

static void t_free(tens *x) {
    free(x->h);
    if (x->d) zb_dev_free(S->dev, x->d);
    x->h = NULL, x->d = NULL;
}

/* The reference wrote h: round it as the device stores it. */
static void t_round(tens *x) {
    for (size_t i = 0; i < x->n; i++) x->h[i] = round_to(x->t, x->h[i]);
}

/* A saved forward output both backwards read: the reference's, rounded. */
static void t_share(tens *x) {
    t_round(x);
    t_upload(x);
}

/* The device's output against the reference's (rounded to t), within t's
 * bound relative to max |reference|; NaN (unwritten) fails. */
static void t_check(const char *name, tens *x) {
    t_round(x);
    size_t es = zb_dtype_size(x->t);
    char *g = (char *)malloc(x->n * es + 1);
    zc_download(S, g, x->d, x->n * es);
    double bound = x->t == ZB_DTYPE_BF16 ? BOUND_BF16 : BOUND_F32;
    double scale = 0.0, worst = 0.0;
    for (size_t i = 0; i < x->n; i++) scale = fmax(scale, fabs((double)x->h[i]));
    if (scale == 0.0) scale = 1.0;
    size_t at = 0;
    for (size_t i = 0; i < x->n; i++) {
        double e = fabs((double)zb_dtype_load(g, i, x->t) - (double)x->h[i]) / scale;
        if (!(e <= worst)) {
            worst = isnan(e) ? INFINITY : e;
            at = i;
        }
    }
    printf("%-6s %-28s [%s storage, %s out] max err / max|ref| %9.3e  bound %.0e  %s\n", backend,
           name, zb_dtype_name(DT), zb_dtype_name(x->t), worst, bound,
           worst <= bound ? "pass" : "FAIL");
    ZB_CHECK_MSG(worst <= bound, "%s: %s (storage %s): element %zu is %.9g, reference %.9g "
                 "(error %.3e of the output's scale)", backend, name, zb_dtype_name(DT), at,
                 x->n ? (double)zb_dtype_load(g, at, x->t) : 0.0,
                 x->n ? (double)x->h[at] : 0.0, worst);
    free(g);
}

/* The device ran the entry (status, then the stream's sync). */
static void ran(const char *op, zb_status st) {
    ZB_CHECK_MSG(st == ZB_OK, "%s: %s: %s: %s", backend, op, zb_status_name(st), zb_error_message());
    zb_status ss = S->dev->ops->stream_sync(S);
    ZB_CHECK_MSG(ss == ZB_OK, "%s: %s at sync: %s: %s", backend, op, zb_status_name(ss),
                 zb_error_message());
}

enum { B = 2, T = 9, H = 4, KVH = 2, D = 8, C = 40, V = 33, N = B * T };

/* Every entry with activations and weights stored as DT. */
static void run_pass(const int32_t *tok, const int32_t *d_tok) {
    const zb_kcall kc = {S, NULL, 7, DT};
    { /* embedding */
        tens table = t_in((size_t)V * C, 1.0f), out = t_out((size_t)N * C);
        tens dout = t_in((size_t)N * C, 1.0f), dtab = t_in32((size_t)V * C, 1.0f);
        ran("embedding_fwd", K->embedding_fwd(&kc, out.d, d_tok, table.d, N, C, V));
        ZB_CHECK_OK(zb_cpu_embedding_fwd(out.h, tok, table.h, N, C, V));
        t_check("embedding_fwd", &out);
        ran("embedding_bwd", K->embedding_bwd(&kc, dtab.d, d_tok, dout.d, N, C, V));
        ZB_CHECK_OK(zb_cpu_embedding_bwd(dtab.h, tok, dout.h, N, C, V));
        t_check("embedding_bwd dtable", &dtab);
        t_free(&table), t_free(&out), t_free(&dout), t_free(&dtab);
    }
    { /* rmsnorm */
        tens x = t_in((size_t)N * C, 2.0f), w = t_in(C, 1.0f), out = t_out((size_t)N * C);
        tens r = t_out32(N), dout = t_in((size_t)N * C, 1.0f), dx = t_out((size_t)N * C);
        tens dw = t_in32(C, 1.0f);
        ran("rmsnorm_fwd", K->rmsnorm_fwd(&kc, out.d, r.d, x.d, w.d, N, C, 1e-5f));
        zb_cpu_rmsnorm_fwd(out.h, r.h, x.h, w.h, N, C, 1e-5f);
        t_check("rmsnorm_fwd out", &out);
        t_check("rmsnorm_fwd inv_rms", &r);
        t_share(&r);
        ran("rmsnorm_bwd", K->rmsnorm_bwd(&kc, dx.d, dw.d, dout.d, x.d, w.d, r.d, N, C));
        zb_cpu_rmsnorm_bwd(dx.h, dw.h, dout.h, x.h, w.h, r.h, N, C);
        t_check("rmsnorm_bwd dx", &dx);
        t_check("rmsnorm_bwd dweight", &dw);
        t_free(&x), t_free(&w), t_free(&out), t_free(&r), t_free(&dout), t_free(&dx), t_free(&dw);
    }
    { /* rope, attention */
        size_t nq = (size_t)N * H * D, nkv = (size_t)N * KVH * D, np = (size_t)B * H * T * T;
        tens q = t_in(nq, 1.0f), k = t_in(nkv, 1.0f), v = t_in(nkv, 1.0f), rq = t_out(nq);
        tens drq = t_out(nq), out = t_out(nq), lse = t_out32((size_t)B * H * T);
        tens dout = t_in(nq, 1.0f), dq = t_out(nq), dk = t_out(nkv), dv = t_out(nkv);
        /* the reference's probabilities: host only (no backend keeps them) */
        tens p = {np, ZB_DTYPE_F32, (float *)calloc(np + 1, sizeof(float)), NULL};
        ran("rope_fwd", K->rope_fwd(&kc, rq.d, q.d, B, T, H, D, 10000.0f));
        ZB_CHECK_OK(zb_cpu_rope_fwd(rq.h, q.h, B, T, H, D, 10000.0f));
        t_check("rope_fwd", &rq);
        ran("rope_bwd", K->rope_bwd(&kc, drq.d, q.d, B, T, H, D, 10000.0f));
        ZB_CHECK_OK(zb_cpu_rope_bwd(drq.h, q.h, B, T, H, D, 10000.0f));
        t_check("rope_bwd", &drq);
        ran("attention_fwd", K->attention_fwd(&kc, out.d, lse.d, q.d, k.d, v.d, B, T, H, KVH, D));
        ZB_CHECK_OK(zb_cpu_attention_fwd(out.h, p.h, q.h, k.h, v.h, B, T, H, KVH, D));
        ZB_CHECK_OK(zb_cpu_attention_lse(lse.h, q.h, k.h, B, T, H, KVH, D));
        t_check("attention_fwd out", &out);
        t_check("attention_fwd lse", &lse);
        t_share(&out);
        t_share(&lse);
        ran("attention_bwd", K->attention_bwd(&kc, dq.d, dk.d, dv.d, dout.d, q.d, k.d, v.d, out.d,
                                              lse.d, B, T, H, KVH, D));
        ZB_CHECK_OK(zb_cpu_attention_bwd(dq.h, dk.h, dv.h, dout.h, q.h, k.h, v.h, p.h, B, T, H,
                                         KVH, D));
        t_check("attention_bwd dq", &dq);
        t_check("attention_bwd dk", &dk);
        t_check("attention_bwd dv", &dv);
        tens *all[] = {&q, &k, &v, &rq, &drq, &out, &lse, &p, &dout, &dq, &dk, &dv};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) t_free(all[i]);
    }
    { /* elementwise, cross-entropy, adamw, fill (the last two ignore dtype) */
        const size_t n = 1001;
        tens g = t_in(n, 4.0f), u = t_in(n, 2.0f), h = t_out(n), dh = t_in(n, 1.0f);
        tens dg = t_out(n), du = t_out(n), sum = t_out(n), acc = t_in(n, 1.0f);
        ran("swiglu_fwd", K->swiglu_fwd(&kc, h.d, g.d, u.d, n));
        zb_cpu_swiglu_fwd(h.h, g.h, u.h, n);
        t_check("swiglu_fwd", &h);
        ran("swiglu_bwd", K->swiglu_bwd(&kc, dg.d, du.d, dh.d, g.d, u.d, n));
        zb_cpu_swiglu_bwd(dg.h, du.h, dh.h, g.h, u.h, n);
        t_check("swiglu_bwd dgate", &dg);
        t_check("swiglu_bwd dup", &du);
        ran("residual_fwd", K->residual_fwd(&kc, sum.d, g.d, u.d, n));
        zb_cpu_residual_fwd(sum.h, g.h, u.h, n);
        t_check("residual_fwd", &sum);
        ran("accumulate", K->accumulate(&kc, acc.d, g.d, n));
        zb_cpu_accumulate(acc.h, g.h, n);
        t_check("accumulate", &acc);

        tens logits = t_in((size_t)N * V, 3.0f), loss = t_out32(1), lse = t_out32(N);
        tens dl = t_out((size_t)N * V);
        ran("cross_entropy_fwd", K->cross_entropy_fwd(&kc, loss.d, lse.d, logits.d, d_tok, N, V));
        ZB_CHECK_OK(zb_cpu_cross_entropy_fwd(loss.h, lse.h, logits.h, tok, N, V));
        t_check("cross_entropy_fwd loss", &loss);
        t_check("cross_entropy_fwd lse", &lse);
        t_share(&lse);
        ran("cross_entropy_bwd",
            K->cross_entropy_bwd(&kc, dl.d, logits.d, lse.d, d_tok, N, V, 1.0f));
        ZB_CHECK_OK(zb_cpu_cross_entropy_bwd(dl.h, logits.h, lse.h, tok, N, V, 1.0f));
        t_check("cross_entropy_bwd", &dl);

        tens p = t_in32(n, 1.0f), gr = t_in32(n, 4.0f), m = t_in32(n, 0.01f), vv = t_in32(n, 0.0f);
        for (size_t i = 0; i < n; i++) vv.h[i] = fabsf(kt_uniform(&rng)) * 0.01f;
        t_upload(&vv);
        tens fill = t_out32(n);
        ran("adamw", K->adamw(&kc, p.d, gr.d, m.d, vv.d, n, 2, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f,
                              true));
        zb_cpu_adamw(p.h, gr.h, m.h, vv.h, n, 2, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, true);
        t_check("adamw params", &p);
        t_check("adamw m", &m);
        t_check("adamw v", &vv);
        ran("fill", K->fill(&kc, fill.d, 0.25f, n));
        for (size_t i = 0; i < n; i++) fill.h[i] = 0.25f;
        t_check("fill", &fill);
        tens *all[] = {&g, &u, &h, &dh, &dg, &du, &sum, &acc, &logits,
                       &loss, &lse, &dl, &p, &gr, &m, &vv, &fill};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) t_free(all[i]);
    }
}

/* An unknown storage dtype: every entry with activations or weights
 * refuses it with ZB_ERR_INVALID naming the op (the NULL buffers are never
 * touched). */
static void check_bad_dtype(void) {
    const zb_kcall bad = {S, NULL, 7, ZB_DTYPE_COUNT};
    static const char *const ops[] = {
        "embedding_fwd", "embedding_bwd", "rmsnorm_fwd",       "rmsnorm_bwd",
        "rope_fwd",      "rope_bwd",      "attention_fwd",     "attention_bwd",
        "swiglu_fwd",    "swiglu_bwd",    "residual_fwd",      "accumulate",
        "cross_entropy_fwd", "cross_entropy_bwd",
    };
    zb_status st[sizeof ops / sizeof ops[0]];
    char msg[sizeof ops / sizeof ops[0]][ZB_ERROR_MAX];
    int i = 0;
#define BAD_CALL(expr)                                                                 \
    do {                                                                               \
        st[i] = (expr);                                                                \
        snprintf(msg[i], sizeof msg[i], "%s", zb_error_message());                     \
        zb_error_clear();                                                              \
        i++;                                                                           \
    } while (0)
    BAD_CALL(K->embedding_fwd(&bad, NULL, NULL, NULL, 2, 4, 8));
    BAD_CALL(K->embedding_bwd(&bad, NULL, NULL, NULL, 2, 4, 8));
    BAD_CALL(K->rmsnorm_fwd(&bad, NULL, NULL, NULL, NULL, 2, 4, 1e-5f));
    BAD_CALL(K->rmsnorm_bwd(&bad, NULL, NULL, NULL, NULL, NULL, NULL, 2, 4));
    BAD_CALL(K->rope_fwd(&bad, NULL, NULL, 1, 2, 2, 4, 1e4f));
    BAD_CALL(K->rope_bwd(&bad, NULL, NULL, 1, 2, 2, 4, 1e4f));
    BAD_CALL(K->attention_fwd(&bad, NULL, NULL, NULL, NULL, NULL, 1, 2, 2, 1, 4));
    BAD_CALL(
        K->attention_bwd(&bad, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, 2, 2, 1, 4));
    BAD_CALL(K->swiglu_fwd(&bad, NULL, NULL, NULL, 8));
    BAD_CALL(K->swiglu_bwd(&bad, NULL, NULL, NULL, NULL, NULL, 8));
    BAD_CALL(K->residual_fwd(&bad, NULL, NULL, NULL, 8));
    BAD_CALL(K->accumulate(&bad, NULL, NULL, 8));
    BAD_CALL(K->cross_entropy_fwd(&bad, NULL, NULL, NULL, NULL, 2, 8));
    BAD_CALL(K->cross_entropy_bwd(&bad, NULL, NULL, NULL, NULL, 2, 8, 1.0f));
#undef BAD_CALL
    for (int j = 0; j < i; j++) {
        ZB_CHECK_MSG(st[j] == ZB_ERR_INVALID && strstr(msg[j], ops[j]) != NULL,
                     "%s: %s with dtype %d: %s '%s' (want ZB_ERR_INVALID naming the op)", backend,
                     ops[j], (int)ZB_DTYPE_COUNT, zb_status_name(st[j]), msg[j]);
    }
    ZB_CHECK_OK(S->dev->ops->stream_sync(S)); /* the stream stays healthy */
}

static uint32_t f32_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* cast fp32 -> bf16 and bf16 -> fp32 against the reference casts, bit for
 * bit. The fp32 inputs: values at and next to rounding ties (even and odd
 * kept bits, both signs, subnormal, the largest finite rounding to
 * infinity), zeros, infinities, quiet and signaling NaNs with payloads,
 * random magnitudes 2^-30..2^30 and random bit patterns; none narrows to
 * 0xffff, the poison. The bf16 inputs: all 65536 patterns. */
static void check_cast(void) {
    const zb_kcall kc = {S, NULL, 7, ZB_DTYPE_F32};
    static const uint32_t special[] = {
        0x3f808000u, 0x3f818000u, 0xbf808000u, 0xbf818000u, 0x3f807fffu, 0x3f808001u,
        0x3f80ffffu, 0x3f817fffu, 0x7f7f8000u, 0x7f7f7fffu, 0xff7f8000u, 0x00008000u,
        0x00018000u, 0x80018000u, 0x00000001u, 0x00000000u, 0x80000000u, 0x7f800000u,
        0xff800000u, 0x7fc00000u, 0xffc12345u, 0x7f800001u, 0x7fa00000u, 0xff80ffffu,
        0x7fbfffffu, 0x3f800000u, 0xc0490fdbu,
    };
    const size_t n_special = sizeof special / sizeof special[0], n_rand = 4096;
    const size_t n = n_special + 2 * n_rand;
    uint32_t *in = (uint32_t *)malloc(n * sizeof *in);
    size_t k = 0;
    for (size_t i = 0; i < n_special; i++) in[k++] = special[i];
    for (size_t i = 0; i < n_rand; i++) {
        int e = (int)(kt_next(&rng) % 61) - 30;
        in[k++] = f32_bits(ldexpf(kt_uniform(&rng), e));
    }
    while (k < n) {
        uint32_t b = (uint32_t)kt_next(&rng), hi = b >> 16;
        if (hi == 0xffffu || hi == 0xffbfu) continue; /* NaNs that narrow to 0xffff */
        in[k++] = b;
    }
    zb_bf16 *want = (zb_bf16 *)malloc(n * sizeof *want), *got = (zb_bf16 *)malloc(n * sizeof *got);
    zb_cpu_f32_to_bf16(want, (const float *)(const void *)in, n);
    void *d_src = zc_dev_copy_of(S, in, n * 4, ZB_MEM_WORKSPACE);
    void *d_dst = zc_dev_poisoned(S, n * 2, ZB_MEM_WORKSPACE);
    ran("cast", K->cast(&kc, d_dst, ZB_DTYPE_BF16, d_src, ZB_DTYPE_F32, n));
    zc_download(S, got, d_dst, n * 2);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        if (got[i] != want[i] && bad++ == 0) first = i;
    }
    ZB_CHECK_MSG(bad == 0, "%s: cast f32->bf16: %zu of %zu differ from the reference; first: in "
                 "0x%08x got 0x%04x want 0x%04x", backend, bad, n, (unsigned)in[first],
                 (unsigned)got[first], (unsigned)want[first]);
    ZB_CHECK(want[0] == 0x3f80u && want[1] == 0x3f82u && want[8] == 0x7f80u && want[21] == 0x7fc0u);
    printf("%-6s %-28s %zu of %zu differ from the reference  %s\n", backend, "cast f32->bf16 (bits)",
           bad, n, bad ? "FAIL" : "pass");

    const size_t nb = 65536;
    zb_bf16 *pat = (zb_bf16 *)malloc(nb * sizeof *pat);
    uint32_t *w32 = (uint32_t *)malloc(nb * 4), *g32 = (uint32_t *)malloc(nb * 4);
    for (size_t i = 0; i < nb; i++) pat[i] = (zb_bf16)i;
    zb_cpu_bf16_to_f32((float *)(void *)w32, pat, nb);
    void *db_src = zc_dev_copy_of(S, pat, nb * 2, ZB_MEM_WORKSPACE);
    void *db_dst = zc_dev_poisoned(S, nb * 4, ZB_MEM_WORKSPACE);
    ran("cast", K->cast(&kc, db_dst, ZB_DTYPE_F32, db_src, ZB_DTYPE_BF16, nb));
    zc_download(S, g32, db_dst, nb * 4);
    bad = 0, first = 0;
    for (size_t i = 0; i < nb; i++) {
        if (g32[i] != w32[i] && bad++ == 0) first = i;
    }
    ZB_CHECK_MSG(bad == 0, "%s: cast bf16->f32: %zu of %zu differ; first at 0x%04zx: got 0x%08x "
                 "want 0x%08x", backend, bad, nb, first, (unsigned)g32[first], (unsigned)w32[first]);
    printf("%-6s %-28s %zu of %zu differ from the reference  %s\n", backend, "cast bf16->f32 (bits)",
           bad, nb, bad ? "FAIL" : "pass");
    /* an unsupported pair is refused */
    ZB_CHECK(K->cast(&kc, d_dst, ZB_DTYPE_F32, d_src, ZB_DTYPE_F32, n) == ZB_ERR_INVALID);
    zb_error_clear();
    zb_dev_free(S->dev, d_src), zb_dev_free(S->dev, d_dst);
    zb_dev_free(S->dev, db_src), zb_dev_free(S->dev, db_dst);
    free(in), free(want), free(got), free(pat), free(w32), free(g32);
}

/* A token outside the vocabulary: the entry queues, the sync fails. */
static void check_bad_token(void) {
    const zb_kcall kc = {S, NULL, 7, ZB_DTYPE_F32};
    int32_t bad[2] = {1, V + 5};
    int32_t *d_bad = (int32_t *)zc_dev_copy_of(S, bad, sizeof bad, ZB_MEM_WORKSPACE);
    DT = ZB_DTYPE_F32;
    tens table = t_in((size_t)V * C, 1.0f), out = t_out((size_t)2 * C);
    ZB_CHECK_OK(K->embedding_fwd(&kc, out.d, d_bad, table.d, 2, C, V));
    zb_status st = S->dev->ops->stream_sync(S);
    ZB_CHECK_MSG(st == ZB_ERR_INVALID, "%s: a bad token id at stream_sync: %s", backend,
                 zb_status_name(st));
    zb_error_clear();
    zb_dev_free(S->dev, d_bad);
    t_free(&table), t_free(&out);
}

int main(int argc, char **argv) {
    const char *only = zc_only(argc, argv);
    size_t n_backends = 0;
    const zb_device_backend *const *all = zb_device_backends(&n_backends);
    int checked = 0;
    for (size_t bi = 0; bi < n_backends; bi++) {
        if (!zc_device_usable(SUITE, all[bi], only)) continue;
        backend = all[bi]->name;
        int failures_before = zb_test_failures;
        zb_device *dev = zc_device_create(all[bi], 0, 60.0);
        if (!dev) continue;
        /* Callers reach the backend's table through the kernel front end,
         * which forwards to the device's table: the registry entry's. */
        K = zb_kernels_for(dev);
        const zb_kernels *own = dev->ops->kernels ? dev->ops->kernels() : NULL;
        ZB_CHECK_MSG(K && own && own == all[bi]->kernels() && !strcmp(own->name, backend),
                     "%s: the device's kernel table is not the registry entry's", backend);
        ZB_CHECK_OK(dev->ops->stream_create(dev, "compute", &S));
        if (K && S && zc_holds_data(SUITE, all[bi], "kernels against the CPU reference")) {
            checked++;
            int32_t tok[N];
            for (int i = 0; i < N; i++) tok[i] = (int32_t)(kt_next(&rng) % V);
            int32_t *d_tok = (int32_t *)zc_dev_copy_of(S, tok, sizeof tok, ZB_MEM_WORKSPACE);
            DT = ZB_DTYPE_F32;
            run_pass(tok, d_tok);
            DT = ZB_DTYPE_BF16;
            run_pass(tok, d_tok);
            zb_dev_free(dev, d_tok);
            check_bad_dtype();
            check_cast();
            check_bad_token(); /* last: it leaves the stream failed */
        }
        if (S) dev->ops->stream_destroy(S);
        S = NULL;
        zb_dev_destroy(dev);
        printf("%s: %s: %s\n", SUITE, backend,
               zb_test_failures == failures_before ? "conforms" : "FAILED");
    }
    return zc_finish(SUITE, only, checked);
}
