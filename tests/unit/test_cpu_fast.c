/* The cpu device's fast kernels (harness/device/cpu/cpu_fast.h) against the
 * reference kernels (kernels/cpu/), on fresh random inputs (the seed is
 * printed; ZB_TEST_SEED replays one): the fused (FlashAttention-2 style)
 * attention forward (out, lse) and backward (dq, dk, dv) on causal shapes
 * with kv heads shared by 1, 3, 4, 8 and 32 query heads, sequences that do
 * and do not divide the blocks and tiles (T = 1 to 2048), B = 0 / T = 0
 * and bad head counts; RMSNorm, SwiGLU, residual and accumulate (in place too),
 * cross-entropy, AdamW (bit for bit); and the polynomial exp against
 * libm's over the range the kernels use.
 *
 * Bounds. The element-wise kernels and norms: the fp32 bound of the
 * conformance suite, 1e-5 of the output's largest magnitude. Attention's
 * sums are long (up to T, or T times the query heads per kv head), so its
 * bound grows with them (attn_bound below). kt_check_close also checks
 * that each comparison can fail. */
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

/* ---- attention ------------------------------------------------------------ */

#define U_F32 0x1.0p-24 /* fp32 unit roundoff */
#define ATTN_SAFETY 8.0 /* the constant of the random-walk estimate below */
#define ATTN_TILE 128   /* the smallest key tile (fast_attention_tile.h): T / ATTN_TILE bounds the rescales */

/* Tolerance of an attention output, as a fraction of the array's largest
 * reference magnitude. Rounding errors of an fp32 sum of n terms behave as
 * a random walk, about sqrt(n) u of the result (signed terms) or of the
 * terms' sum (positive ones), so sqrt(n_sum), with n_sum the longest sum
 * behind an element (T keys for out and dq; T rows times the query heads
 * sharing a kv head for dk and dv). Before that sum, each probability
 * carries the error of its D-term dot products (score, dO.V, rowsum dO*O),
 * up to sqrt(D) u of terms that are up to sqrt(D) times the result, so D;
 * and the polynomial exp's 2^-22 = 4u, once for the probability and once
 * per running-max rescale (at most T / tile). The reference adds its own
 * rounding to fp32 (below 1 u). ATTN_SAFETY covers the constants. A dropped
 * or extra key moves an element by about 1/T of its scale, above this
 * bound at every T tested. */
static double attn_bound(double n_sum, int T, int D) {
    return ATTN_SAFETY * U_F32 * (sqrt(n_sum) + D + 4.0 * (T / ATTN_TILE + 2) + 1.0);
}

typedef struct attn_case {
    int B, T, H, KVH, D;
} attn_case;

/* Checks got against the reference ref (fp32, n elements) within bound. */
static void attn_close(const char *name, const attn_case *c, const float *got, const float *ref, size_t n,
                       double bound) {
    char what[112];
    snprintf(what, sizeof what, "attention %s B%d T%d H%d KVH%d D%d", name, c->B, c->T, c->H, c->KVH, c->D);
    double *want = kt_to_d(ref, n);
    kt_check_close(what, got, want, n, 0.0, bound);
    free(want);
}

/* lse is a log: its error is absolute, from the scores (D u of their
 * magnitude, smax) and the sum of T exponentials (sqrt(T) u relative, so
 * absolute in the log), plus the result's own rounding (u |lse|). As a
 * fraction of the largest reference |lse|. */
static double lse_bound(const float *lse_ref, size_t n, int T, int D, double smax) {
    double mx = 0.0;
    for (size_t i = 0; i < n; i++) mx = fmax(mx, fabs(lse_ref[i]));
    double abs_err = ATTN_SAFETY * U_F32 * (sqrt((double)T) + D * smax + 4.0 * (T / ATTN_TILE + 2) + mx);
    return mx > 0.0 ? abs_err / mx : abs_err;
}

/* The largest |score| the inputs allow, scale * max|q| max|k| D. */
static double score_max(const float *q, size_t nq, const float *k, size_t nkv, int D) {
    double mq = 0.0, mk = 0.0;
    for (size_t i = 0; i < nq; i++) mq = fmax(mq, fabs(q[i]));
    for (size_t i = 0; i < nkv; i++) mk = fmax(mk, fabs(k[i]));
    return mq * mk * sqrt((double)D);
}

/* The fused forward and backward against the reference kernels. The fast
 * outputs start as garbage (every element must be written, not added to);
 * both backwards start from the reference forward (its probabilities for
 * the textbook one, its out and lse for the fused one). */
static void test_attention(attn_case c) {
    int B = c.B, T = c.T, H = c.H, KVH = c.KVH, D = c.D;
    size_t nq = (size_t)B * T * H * D, nkv = (size_t)B * T * KVH * D, nl = (size_t)B * H * T;
    size_t np = (size_t)B * H * T * T;
    /* q twice as large: peaked rows, so the running max moves between tiles */
    float *q = kt_rand_f(nq, &rng, 2.0f), *k = kt_rand_f(nkv, &rng, 1.0f), *v = kt_rand_f(nkv, &rng, 1.0f);
    float *dout = kt_rand_f(nq, &rng, 1.0f), *p_r = kt_zeros_f(np);
    float *out_r = kt_zeros_f(nq), *out_f = kt_rand_f(nq, &rng, 9.0f);
    float *lse_r = kt_zeros_f(nl), *lse_f = kt_rand_f(nl, &rng, 9.0f);
    ZB_CHECK_OK(zb_cpu_attention_fwd(out_r, p_r, q, k, v, B, T, H, KVH, D));
    ZB_CHECK_OK(zb_cpu_attention_lse(lse_r, q, k, B, T, H, KVH, D));
    ZB_CHECK_OK(zb_cpu_attention_fwd_fast(out_f, lse_f, q, k, v, B, T, H, KVH, D));
    attn_close("fwd out", &c, out_f, out_r, nq, attn_bound(T, T, D));
    attn_close("fwd lse", &c, lse_f, lse_r, nl, lse_bound(lse_r, nl, T, D, score_max(q, nq, k, nkv, D)));
    float *dq_r = kt_zeros_f(nq), *dk_r = kt_zeros_f(nkv), *dv_r = kt_zeros_f(nkv);
    float *dq_f = kt_rand_f(nq, &rng, 9.0f), *dk_f = kt_rand_f(nkv, &rng, 9.0f), *dv_f = kt_rand_f(nkv, &rng, 9.0f);
    ZB_CHECK_OK(zb_cpu_attention_bwd(dq_r, dk_r, dv_r, dout, q, k, v, p_r, B, T, H, KVH, D));
    ZB_CHECK_OK(zb_cpu_attention_bwd_fast(dq_f, dk_f, dv_f, dout, q, k, v, out_r, lse_r, B, T, H, KVH, D));
    double n_kv = (double)T * (H / KVH);
    attn_close("bwd dq", &c, dq_f, dq_r, nq, attn_bound(T, T, D));
    attn_close("bwd dk", &c, dk_f, dk_r, nkv, attn_bound(n_kv, T, D));
    attn_close("bwd dv", &c, dv_f, dv_r, nkv, attn_bound(n_kv, T, D));
    free(q), free(k), free(v), free(dout), free(p_r), free(out_r), free(out_f), free(lse_r), free(lse_f);
    free(dq_r), free(dk_r), free(dv_r), free(dq_f), free(dk_f), free(dv_f);
}

/* Bad head counts are refused by both directions before anything is
 * touched; B = 0 or T = 0 does nothing (the outputs keep their values). */
static void test_attention_edges(void) {
    float buf[64], keep[64], lse[8];
    for (int i = 0; i < 64; i++) buf[i] = keep[i] = (float)i;
    const int bad[4][3] = {{3, 2, 4}, {0, 1, 4}, {2, 0, 4}, {2, 1, 0}}; /* H, KVH, D */
    for (int i = 0; i < 4; i++) {
        int H = bad[i][0], KVH = bad[i][1], D = bad[i][2];
        ZB_CHECK(zb_cpu_attention_fwd_fast(buf, lse, buf, buf, buf, 1, 2, H, KVH, D) == ZB_ERR_INVALID);
        ZB_CHECK(zb_cpu_attention_bwd_fast(buf, buf, buf, buf, buf, buf, buf, buf, lse, 1, 2, H, KVH, D) ==
                 ZB_ERR_INVALID);
    }
    ZB_CHECK(strstr(zb_error_message(), "kv heads 1") != NULL); /* the message names the values */
    ZB_CHECK_OK(zb_cpu_attention_fwd_fast(buf, lse, keep, keep, keep, 0, 4, 4, 2, 4));
    ZB_CHECK_OK(zb_cpu_attention_fwd_fast(buf, lse, keep, keep, keep, 2, 0, 4, 2, 4));
    ZB_CHECK_OK(zb_cpu_attention_bwd_fast(buf, buf, buf, keep, keep, keep, keep, keep, lse, 0, 4, 4, 2, 4));
    ZB_CHECK_OK(zb_cpu_attention_bwd_fast(buf, buf, buf, keep, keep, keep, keep, keep, lse, 2, 0, 4, 2, 4));
    ZB_CHECK(!memcmp(buf, keep, sizeof buf));
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
    /* GQA 1:1, 3:1, 4:1, 8:1, 32:1 (kv heads shared by that many query
     * heads, stacked 128, 85, 64, 32, 16 rows each per block); T of one row,
     * inside one block, one block and one more row, several blocks with a
     * partial last one, and 2048. The reference is double scalar code:
     * large T runs with few heads. */
    const attn_case cases[] = {
        {2, 1, 2, 1, 5},    {2, 67, 4, 4, 16},   {2, 129, 6, 2, 8},    {1, 128, 8, 2, 64},
        {1, 300, 8, 1, 64}, {1, 517, 4, 1, 128}, {1, 40, 32, 1, 8},    {1, 2048, 2, 2, 64},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) test_attention(cases[i]);
    test_attention_edges();
    test_rmsnorm(7, 37);
    test_rmsnorm(3, 512);
    test_eltwise(1001);
    test_cross_entropy(5, 1000);
    test_cross_entropy(3, 17);
    test_adamw(1003);
    return zb_test_finish("test_cpu_fast");
}
