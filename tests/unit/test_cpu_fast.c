/* The cpu device's fast kernels (harness/device/cpu/cpu_fast.h) against the
 * reference kernels (kernels/cpu/), on fresh random inputs (the seed is
 * printed; ZB_TEST_SEED replays one): GEMM-based attention forward and
 * backward on shapes whose sequence does and does not divide the row block
 * (T = 1, 64, 67, 130) with heads / kv heads 1 and > 1; RMSNorm, SwiGLU,
 * residual and accumulate (in place too), cross-entropy, AdamW (bit for
 * bit); and the polynomial exp against libm's over the range the kernels
 * use. Bound:
 * the fp32 bound of the conformance suite, 1e-5 of the output's largest
 * magnitude (kt_check_close also checks that the comparison can fail). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_fast.h"
#include "unit/kernel_test_util.h"
#include "zb_cpu_kernels.h"

#define BOUND 1e-5

static uint64_t rng;

static void close_to(const char *what, const float *got, const float *ref, size_t n) {
    double *want = kt_to_d(ref, n);
    kt_check_close(what, got, want, n, 0.0, BOUND);
    free(want);
}

static void test_attention(int B, int T, int H, int KVH, int D) {
    char what[96];
    size_t nq = (size_t)B * T * H * D, nkv = (size_t)B * T * KVH * D, np = (size_t)B * H * T * T;
    float *q = kt_rand_f(nq, &rng, 1.0f), *k = kt_rand_f(nkv, &rng, 1.0f), *v = kt_rand_f(nkv, &rng, 1.0f);
    float *dout = kt_rand_f(nq, &rng, 1.0f);
    float *out_r = kt_zeros_f(nq), *out_f = kt_rand_f(nq, &rng, 9.0f);
    float *p_r = kt_zeros_f(np), *p_f = kt_rand_f(np, &rng, 9.0f); /* garbage: every entry must be written */
    ZB_CHECK_OK(zb_cpu_attention_fwd(out_r, p_r, q, k, v, B, T, H, KVH, D));
    ZB_CHECK_OK(zb_cpu_attention_fwd_fast(out_f, p_f, q, k, v, B, T, H, KVH, D));
    snprintf(what, sizeof what, "attention fwd out B%d T%d H%d KVH%d D%d", B, T, H, KVH, D);
    close_to(what, out_f, out_r, nq);
    snprintf(what, sizeof what, "attention fwd probs B%d T%d H%d KVH%d D%d", B, T, H, KVH, D);
    close_to(what, p_f, p_r, np);
    float *dq_r = kt_zeros_f(nq), *dk_r = kt_zeros_f(nkv), *dv_r = kt_zeros_f(nkv);
    float *dq_f = kt_rand_f(nq, &rng, 9.0f), *dk_f = kt_rand_f(nkv, &rng, 9.0f), *dv_f = kt_rand_f(nkv, &rng, 9.0f);
    /* both from the reference's probabilities, as the conformance suite does */
    ZB_CHECK_OK(zb_cpu_attention_bwd(dq_r, dk_r, dv_r, dout, q, k, v, p_r, B, T, H, KVH, D));
    ZB_CHECK_OK(zb_cpu_attention_bwd_fast(dq_f, dk_f, dv_f, dout, q, k, v, p_r, B, T, H, KVH, D));
    const char *names[3] = {"dq", "dk", "dv"};
    const float *got[3] = {dq_f, dk_f, dv_f}, *ref[3] = {dq_r, dk_r, dv_r};
    size_t ns[3] = {nq, nkv, nkv};
    for (int i = 0; i < 3; i++) {
        snprintf(what, sizeof what, "attention bwd %s B%d T%d H%d KVH%d D%d", names[i], B, T, H, KVH, D);
        close_to(what, got[i], ref[i], ns[i]);
    }
    ZB_CHECK(zb_cpu_attention_fwd_fast(out_f, p_f, q, k, v, B, T, 3, 2, D) == ZB_ERR_INVALID);
    free(q), free(k), free(v), free(dout), free(out_r), free(out_f), free(p_r), free(p_f);
    free(dq_r), free(dk_r), free(dv_r), free(dq_f), free(dk_f), free(dv_f);
}

static void test_rmsnorm(int N, int C) {
    size_t n = (size_t)N * C;
    float *x = kt_rand_f(n, &rng, 2.0f), *w = kt_rand_f((size_t)C, &rng, 1.5f), *dy = kt_rand_f(n, &rng, 1.0f);
    float *y_r = kt_zeros_f(n), *y_f = kt_zeros_f(n), *r_r = kt_zeros_f((size_t)N), *r_f = kt_zeros_f((size_t)N);
    zb_cpu_rmsnorm_fwd(y_r, r_r, x, w, N, C, 1e-5f);
    zb_cpu_rmsnorm_fwd_fast(y_f, r_f, x, w, N, C, 1e-5f);
    close_to("rmsnorm fwd out", y_f, y_r, n);
    close_to("rmsnorm fwd inv_rms", r_f, r_r, (size_t)N);
    float *dw0 = kt_rand_f((size_t)C, &rng, 1.0f), *dw_r = kt_zeros_f((size_t)C), *dw_f = kt_zeros_f((size_t)C);
    memcpy(dw_r, dw0, (size_t)C * sizeof *dw0);
    memcpy(dw_f, dw0, (size_t)C * sizeof *dw0);
    float *dx_r = kt_zeros_f(n), *dx_f = kt_zeros_f(n);
    zb_cpu_rmsnorm_bwd(dx_r, dw_r, dy, x, w, r_r, N, C);
    zb_cpu_rmsnorm_bwd_fast(dx_f, dw_f, dy, x, w, r_r, N, C);
    close_to("rmsnorm bwd dx", dx_f, dx_r, n);
    close_to("rmsnorm bwd dweight (accumulated)", dw_f, dw_r, (size_t)C);
    /* dx in place over dout */
    zb_cpu_rmsnorm_bwd_fast(dy, dw_f, dy, x, w, r_r, N, C);
    close_to("rmsnorm bwd dx in place", dy, dx_r, n);
    free(x), free(w), free(dy), free(y_r), free(y_f), free(r_r), free(r_f), free(dw0), free(dw_r), free(dw_f);
    free(dx_r), free(dx_f);
}

static void test_eltwise(size_t n) {
    float *g = kt_rand_f(n, &rng, 12.0f), *u = kt_rand_f(n, &rng, 2.0f), *dh = kt_rand_f(n, &rng, 1.0f);
    float *h_r = kt_zeros_f(n), *h_f = kt_zeros_f(n);
    zb_cpu_swiglu_fwd(h_r, g, u, n);
    zb_cpu_swiglu_fwd_fast(h_f, g, u, n);
    close_to("swiglu fwd", h_f, h_r, n);
    float *dg_r = kt_zeros_f(n), *du_r = kt_zeros_f(n), *dg_f = kt_zeros_f(n), *du_f = kt_zeros_f(n);
    zb_cpu_swiglu_bwd(dg_r, du_r, dh, g, u, n);
    zb_cpu_swiglu_bwd_fast(dg_f, du_f, dh, g, u, n);
    close_to("swiglu bwd dgate", dg_f, dg_r, n);
    close_to("swiglu bwd dup", du_f, du_r, n);
    /* residual and accumulate, in place: out = a + b into a */
    zb_cpu_residual_fwd(h_r, g, u, n);
    memcpy(h_f, g, n * sizeof *g);
    zb_cpu_residual_fwd_fast(h_f, h_f, u, n);
    ZB_CHECK(!memcmp(h_f, h_r, n * sizeof *h_f)); /* one rounding each: exact */
    zb_cpu_accumulate(h_r, dh, n);
    zb_cpu_accumulate_fast(h_f, dh, n);
    ZB_CHECK(!memcmp(h_f, h_r, n * sizeof *h_f));
    free(g), free(u), free(dh), free(h_r), free(h_f), free(dg_r), free(du_r), free(dg_f), free(du_f);
}

static void test_cross_entropy(int N, int V) {
    size_t n = (size_t)N * V;
    float *logits = kt_rand_f(n, &rng, 8.0f);
    int32_t *tgt = (int32_t *)malloc((size_t)N * sizeof *tgt);
    for (int i = 0; i < N; i++) tgt[i] = (int32_t)(kt_next(&rng) % (uint64_t)V);
    float loss_r = 0, loss_f = 0, *lse_r = kt_zeros_f((size_t)N), *lse_f = kt_zeros_f((size_t)N);
    ZB_CHECK_OK(zb_cpu_cross_entropy_fwd(&loss_r, lse_r, logits, tgt, N, V));
    ZB_CHECK_OK(zb_cpu_cross_entropy_fwd_fast(&loss_f, lse_f, logits, tgt, N, V));
    close_to("cross-entropy lse", lse_f, lse_r, (size_t)N);
    close_to("cross-entropy loss", &loss_f, &loss_r, 1);
    float *d_r = kt_zeros_f(n), *d_f = kt_zeros_f(n);
    ZB_CHECK_OK(zb_cpu_cross_entropy_bwd(d_r, logits, lse_r, tgt, N, V, 1.0f));
    ZB_CHECK_OK(zb_cpu_cross_entropy_bwd_fast(d_f, logits, lse_r, tgt, N, V, 1.0f));
    close_to("cross-entropy dlogits", d_f, d_r, n);
    /* in place over the logits */
    ZB_CHECK_OK(zb_cpu_cross_entropy_bwd_fast(logits, logits, lse_r, tgt, N, V, 1.0f));
    close_to("cross-entropy dlogits in place", logits, d_r, n);
    tgt[0] = V;
    ZB_CHECK(zb_cpu_cross_entropy_fwd_fast(&loss_f, lse_f, d_f, tgt, N, V) == ZB_ERR_INVALID);
    free(logits), free(tgt), free(lse_r), free(lse_f), free(d_r), free(d_f);
}

/* AdamW: bit for bit the reference, with and without weight decay. */
static void test_adamw(size_t n) {
    float *g = kt_rand_f(n, &rng, 0.1f), *p_r = kt_rand_f(n, &rng, 1.0f), *m_r = kt_rand_f(n, &rng, 0.01f);
    float *v_r = kt_rand_f(n, &rng, 0.01f), *p_f = kt_zeros_f(n), *m_f = kt_zeros_f(n), *v_f = kt_zeros_f(n);
    for (size_t i = 0; i < n; i++) v_r[i] = fabsf(v_r[i]);
    memcpy(p_f, p_r, n * sizeof *p_r), memcpy(m_f, m_r, n * sizeof *m_r), memcpy(v_f, v_r, n * sizeof *v_r);
    for (int t = 1; t <= 3; t++) {
        zb_cpu_adamw(p_r, g, m_r, v_r, n, t, 3e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, t != 2);
        zb_cpu_adamw_fast(p_f, g, m_f, v_f, n, t, 3e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, t != 2);
    }
    ZB_CHECK(!memcmp(p_f, p_r, n * sizeof *p_f) && !memcmp(m_f, m_r, n * sizeof *m_f) &&
             !memcmp(v_f, v_r, n * sizeof *v_f));
    free(g), free(p_r), free(m_r), free(v_r), free(p_f), free(m_f), free(v_f);
}

static void test_vexp(void) {
    double worst = 0.0;
    for (int i = 0; i <= 200000; i++) {
        float x = -87.0f + 175.0f * (float)i / 200000.0f;
        double want = exp((double)x), got = (double)zb_cpu_vexpf(x);
        double rel = fabs(got - want) / want;
        if (rel > worst) worst = rel;
    }
    ZB_CHECK_MSG(worst < 2.5e-7, "vexpf: worst relative error %.3g", worst);
    ZB_CHECK(zb_cpu_vexpf(0.0f) == 1.0f);
    ZB_CHECK(zb_cpu_vexpf(-1000.0f) >= 0.0f && zb_cpu_vexpf(-1000.0f) < 1e-37f);
    ZB_CHECK(isfinite(zb_cpu_vexpf(1000.0f)));
}

int main(void) {
    const char *s = getenv("ZB_TEST_SEED");
    rng = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) * 2654435761u;
    printf("test_cpu_fast: seed %llu (ZB_TEST_SEED replays it)\n", (unsigned long long)rng);
    test_vexp();
    test_attention(2, 67, 4, 4, 16);  /* H / KVH = 1, T not a multiple of the row block */
    test_attention(1, 130, 6, 2, 8);  /* GQA 3, three row blocks, the last partial */
    test_attention(1, 64, 8, 2, 64);  /* GQA 4, exactly one block */
    test_attention(2, 1, 2, 1, 5);    /* one token, odd head dim */
    test_rmsnorm(7, 37);
    test_rmsnorm(3, 512);
    test_eltwise(1001);
    test_cross_entropy(5, 1000);
    test_cross_entropy(3, 17);
    test_adamw(1003);
    return zb_test_finish("test_cpu_fast");
}
