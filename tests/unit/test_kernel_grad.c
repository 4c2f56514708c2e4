/* CPU reference kernels: forward values against independent double
 * implementations, and every backward against central finite differences of
 * L = sum(out * R) evaluated in double (kernel_test_util.h).
 * Ops here: embedding, RMSNorm, matmul (linear), SwiGLU, residual add,
 * cross-entropy. RoPE and attention are in test_kernel_attn.c.
 * Shapes (tiny): N = B*T = 10 tokens (B=2, T=5), C=8, F=12, V=11.
 *
 * Tolerances, |got - want| <= rtol |want_i| + atol max_j |want_j|:
 *   forward (fp32 kernel vs double reference): rtol 1e-5, atol 1e-6;
 *   gradients (fp32 backward vs double central differences, h = 1e-6):
 *   rtol 1e-4, atol 1e-5. fp32 rounding of these tiny reductions is ~1e-6
 *   relative, the difference quotient is good to ~1e-9, so the bounds have
 *   margin yet catch any wrong term (a missing factor, a sign, a dropped
 *   path), which moves elements by O(1) relative. Every check also
 *   verifies that an element moved by 10x its tolerance is rejected. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "zb_cpu_kernels.h"
#include "kernel_test_util.h"

#define BT 10
#define C 8
#define F 12
#define V 11
#define FWD_RTOL 1e-5
#define FWD_ATOL 1e-6
#define GRAD_RTOL 1e-4
#define GRAD_ATOL 1e-5

/* ---- embedding --------------------------------------------------------- */
typedef struct { const int32_t *tok; double *table, *r; } emb_ctx;
static double emb_obj(void *p) {
    emb_ctx *c = (emb_ctx *)p;
    double s = 0.0;
    for (int i = 0; i < BT; i++)
        for (int j = 0; j < C; j++) s += c->table[c->tok[i] * C + j] * c->r[i * C + j];
    return s;
}

static void test_embedding(uint64_t *rng) {
    const int32_t tok[BT] = {3, 7, 3, 0, 10, 7, 7, 1, 3, 5}; /* repeats: scatter-add */
    float *table = kt_rand_f(V * C, rng, 1.0f), *out = kt_zeros_f(BT * C);
    float *r = kt_rand_f(BT * C, rng, 1.0f), *dtab = kt_rand_f(V * C, rng, 1.0f);
    float *pre = (float *)malloc(V * C * sizeof *pre);
    memcpy(pre, dtab, V * C * sizeof *pre);
    ZB_CHECK_OK(zb_cpu_embedding_fwd(out, tok, table, BT, C, V));
    ZB_CHECK(memcmp(out + 4 * C, table + 10 * C, C * sizeof(float)) == 0);
    int same = 1;
    for (int i = 0; i < BT; i++) same &= memcmp(out + i * C, table + tok[i] * C, C * sizeof(float)) == 0;
    ZB_CHECK_MSG(same, "embedding forward rows differ from the table rows");

    ZB_CHECK_OK(zb_cpu_embedding_bwd(dtab, tok, r, BT, C, V));
    for (int i = 0; i < V * C; i++) dtab[i] -= pre[i]; /* accumulated: remove the prefill */
    emb_ctx ctx = {tok, kt_to_d(table, V * C), kt_to_d(r, BT * C)};
    double *fd = (double *)malloc(V * C * sizeof *fd);
    kt_fd_grad(ctx.table, V * C, emb_obj, &ctx, fd);
    kt_check_close("embedding dtable", dtab, fd, V * C, GRAD_RTOL, GRAD_ATOL);

    /* bad ids: reported, zero rows, the good rows still done */
    const int32_t badtok[3] = {2, -1, 11};
    ZB_CHECK(zb_cpu_embedding_fwd(out, badtok, table, 3, C, V) == ZB_ERR_INVALID);
    ZB_CHECK(memcmp(out, table + 2 * C, C * sizeof(float)) == 0);
    ZB_CHECK(out[C] == 0.0f && out[2 * C + C - 1] == 0.0f);
    ZB_CHECK(zb_cpu_embedding_bwd(dtab, badtok, r, 3, C, V) == ZB_ERR_INVALID);
    free(table); free(out); free(r); free(dtab); free(pre); free(ctx.table); free(ctx.r); free(fd);
}

/* ---- RMSNorm ----------------------------------------------------------- */
#define EPS 1e-5
typedef struct { double *x, *w, *r, *out, *inv; } rms_ctx;
static void rms_ref(rms_ctx *c) {
    for (int i = 0; i < BT; i++) {
        double ss = 0.0;
        for (int j = 0; j < C; j++) ss += c->x[i * C + j] * c->x[i * C + j];
        c->inv[i] = 1.0 / sqrt(ss / C + EPS);
        for (int j = 0; j < C; j++) c->out[i * C + j] = c->x[i * C + j] * c->inv[i] * c->w[j];
    }
}
static double rms_obj(void *p) {
    rms_ctx *c = (rms_ctx *)p;
    rms_ref(c);
    return kt_dot_d(c->out, c->r, BT * C);
}

static void test_rmsnorm(uint64_t *rng) {
    float *x = kt_rand_f(BT * C, rng, 2.0f), *w = kt_rand_f(C, rng, 0.5f);
    for (int j = 0; j < C; j++) w[j] += 1.0f;
    float *r = kt_rand_f(BT * C, rng, 1.0f), *out = kt_zeros_f(BT * C), *inv = kt_zeros_f(BT);
    float *dx = kt_zeros_f(BT * C), *dw = kt_rand_f(C, rng, 1.0f), *dw0 = kt_zeros_f(C);
    memcpy(dw0, dw, C * sizeof *dw);
    zb_cpu_rmsnorm_fwd(out, inv, x, w, BT, C, (float)EPS);
    zb_cpu_rmsnorm_bwd(dx, dw, r, x, w, inv, BT, C);
    for (int j = 0; j < C; j++) dw[j] -= dw0[j];

    rms_ctx c = {kt_to_d(x, BT * C), kt_to_d(w, C), kt_to_d(r, BT * C),
                 (double *)malloc(BT * C * sizeof(double)), (double *)malloc(BT * sizeof(double))};
    rms_ref(&c);
    kt_check_close("rmsnorm out", out, c.out, BT * C, FWD_RTOL, FWD_ATOL);
    kt_check_close("rmsnorm inv_rms", inv, c.inv, BT, FWD_RTOL, FWD_ATOL);
    double *fdx = (double *)malloc(BT * C * sizeof *fdx), *fdw = (double *)malloc(C * sizeof *fdw);
    kt_fd_grad(c.x, BT * C, rms_obj, &c, fdx);
    kt_fd_grad(c.w, C, rms_obj, &c, fdw);
    kt_check_close("rmsnorm dx", dx, fdx, BT * C, GRAD_RTOL, GRAD_ATOL);
    kt_check_close("rmsnorm dweight", dw, fdw, C, GRAD_RTOL, GRAD_ATOL);

    /* dx may alias dout: same bits as out of place */
    float *alias = (float *)malloc(BT * C * sizeof *alias);
    memcpy(alias, r, BT * C * sizeof *alias);
    zb_cpu_rmsnorm_bwd(alias, dw, alias, x, w, inv, BT, C);
    ZB_CHECK(memcmp(alias, dx, BT * C * sizeof *alias) == 0);
    free(x); free(w); free(r); free(out); free(inv); free(dx); free(dw); free(dw0); free(alias);
    free(c.x); free(c.w); free(c.r); free(c.out); free(c.inv); free(fdx); free(fdw);
}

/* ---- matmul (linear y = x W^T, W [F, C]) -------------------------------- */
typedef struct { double *x, *w, *r; } mm_ctx;
static void mm_ref(const double *x, const double *w, double *y) {
    for (int i = 0; i < BT; i++)
        for (int o = 0; o < F; o++) {
            double s = 0.0;
            for (int k = 0; k < C; k++) s += x[i * C + k] * w[o * C + k];
            y[i * F + o] = s;
        }
}
static double mm_obj(void *p) {
    mm_ctx *c = (mm_ctx *)p;
    double y[BT * F];
    mm_ref(c->x, c->w, y);
    return kt_dot_d(y, c->r, BT * F);
}

static void test_matmul(uint64_t *rng) {
    float *x = kt_rand_f(BT * C, rng, 1.0f), *w = kt_rand_f(F * C, rng, 1.0f);
    float *r = kt_rand_f(BT * F, rng, 1.0f), *y = kt_zeros_f(BT * F), *dx = kt_zeros_f(BT * C);
    float *dw = kt_rand_f(F * C, rng, 1.0f), *dw0 = kt_zeros_f(F * C), *dw2 = kt_zeros_f(F * C);
    memcpy(dw0, dw, F * C * sizeof *dw);
    zb_cpu_matmul_fwd(y, x, w, BT, C, F);
    zb_cpu_matmul_bwd(dx, dw, r, x, w, BT, C, F);
    for (int i = 0; i < F * C; i++) dw[i] -= dw0[i];
    zb_cpu_matmul_bwd(NULL, dw2, r, x, w, BT, C, F); /* dx skipped, dW alone */

    mm_ctx c = {kt_to_d(x, BT * C), kt_to_d(w, F * C), kt_to_d(r, BT * F)};
    double yref[BT * F], fdx[BT * C], fdw[F * C];
    mm_ref(c.x, c.w, yref);
    kt_check_close("matmul y", y, yref, BT * F, FWD_RTOL, FWD_ATOL);
    kt_fd_grad(c.x, BT * C, mm_obj, &c, fdx);
    kt_fd_grad(c.w, F * C, mm_obj, &c, fdw);
    kt_check_close("matmul dx", dx, fdx, BT * C, GRAD_RTOL, GRAD_ATOL);
    kt_check_close("matmul dW", dw, fdw, F * C, GRAD_RTOL, GRAD_ATOL);
    kt_check_close("matmul dW (dx NULL)", dw2, fdw, F * C, GRAD_RTOL, GRAD_ATOL);
    free(x); free(w); free(r); free(y); free(dx); free(dw); free(dw0); free(dw2);
    free(c.x); free(c.w); free(c.r);
}

/* ---- SwiGLU ------------------------------------------------------------ */
#define NF (BT * F)
typedef struct { double *g, *u, *r; } sw_ctx;
static void sw_ref(const double *g, const double *u, double *h) {
    for (int i = 0; i < NF; i++) h[i] = g[i] / (1.0 + exp(-g[i])) * u[i];
}
static double sw_obj(void *p) {
    sw_ctx *c = (sw_ctx *)p;
    double h[NF];
    sw_ref(c->g, c->u, h);
    return kt_dot_d(h, c->r, NF);
}

static void test_swiglu(uint64_t *rng) {
    float *g = kt_rand_f(NF, rng, 4.0f), *u = kt_rand_f(NF, rng, 1.0f);
    float *r = kt_rand_f(NF, rng, 1.0f), *h = kt_zeros_f(NF), *dg = kt_zeros_f(NF), *du = kt_zeros_f(NF);
    zb_cpu_swiglu_fwd(h, g, u, NF);
    zb_cpu_swiglu_bwd(dg, du, r, g, u, NF);
    sw_ctx c = {kt_to_d(g, NF), kt_to_d(u, NF), kt_to_d(r, NF)};
    double href[NF], fdg[NF], fdu[NF];
    sw_ref(c.g, c.u, href);
    kt_check_close("swiglu h", h, href, NF, FWD_RTOL, FWD_ATOL);
    kt_fd_grad(c.g, NF, sw_obj, &c, fdg);
    kt_fd_grad(c.u, NF, sw_obj, &c, fdu);
    kt_check_close("swiglu dgate", dg, fdg, NF, GRAD_RTOL, GRAD_ATOL);
    kt_check_close("swiglu dup", du, fdu, NF, GRAD_RTOL, GRAD_ATOL);

    /* large |gate|: the limits, no NaN */
    const float eg[4] = {-1000.0f, -100.0f, 100.0f, 1000.0f}, eu[4] = {1, 1, 1, 1};
    float eh[4], edg[4], edu[4];
    zb_cpu_swiglu_fwd(eh, eg, eu, 4);
    zb_cpu_swiglu_bwd(edg, edu, eu, eg, eu, 4);
    ZB_CHECK(eh[0] == 0.0f && fabsf(eh[1]) < 1e-30f && eh[2] == 100.0f && eh[3] == 1000.0f);
    ZB_CHECK(edg[0] == 0.0f && edg[3] == 1.0f && !isnan(edg[1]) && !isnan(edg[2]));
    free(g); free(u); free(r); free(h); free(dg); free(du); free(c.g); free(c.u); free(c.r);
}

/* ---- residual add ------------------------------------------------------ */
static void test_residual(uint64_t *rng) {
    enum { N = BT * C };
    float *a = kt_rand_f(N, rng, 1.0f), *b = kt_rand_f(N, rng, 1.0f), *out = kt_zeros_f(N);
    float *dout = kt_rand_f(N, rng, 1.0f), *da = kt_rand_f(N, rng, 1.0f), *db = kt_rand_f(N, rng, 1.0f);
    float *want_a = kt_zeros_f(N), *want_b = kt_zeros_f(N);
    for (int i = 0; i < N; i++) {
        want_a[i] = da[i] + dout[i];
        want_b[i] = db[i] + dout[i];
    }
    zb_cpu_residual_fwd(out, a, b, N);
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= out[i] == a[i] + b[i];
    ZB_CHECK_MSG(ok, "residual forward is not a + b");
    zb_cpu_residual_fwd(a, a, b, N); /* in place */
    ZB_CHECK(memcmp(a, out, N * sizeof *a) == 0);
    zb_cpu_residual_bwd(da, db, dout, N); /* accumulates: d(a+b)/da = d/db = 1 */
    ZB_CHECK(memcmp(da, want_a, N * sizeof *da) == 0 && memcmp(db, want_b, N * sizeof *db) == 0);
    zb_cpu_residual_bwd(NULL, db, dout, N);
    ZB_CHECK(db[3] == want_b[3] + dout[3] && da[3] == want_a[3]);
    free(a); free(b); free(out); free(dout); free(da); free(db); free(want_a); free(want_b);
}

/* ---- cross-entropy ----------------------------------------------------- */
typedef struct { double *logits; const int32_t *tgt; double dloss; } ce_ctx;
/* mean_i (log sum_j exp(x_ij) - x_i,t): by hand, no max shift (|x| < 4). */
static double ce_ref(const double *x, const int32_t *tgt, double *lse) {
    double total = 0.0;
    for (int i = 0; i < BT; i++) {
        double s = 0.0;
        for (int j = 0; j < V; j++) s += exp(x[i * V + j]);
        double l = log(s);
        if (lse) lse[i] = l;
        total += l - x[i * V + tgt[i]];
    }
    return total / BT;
}
static double ce_obj(void *p) {
    ce_ctx *c = (ce_ctx *)p;
    return c->dloss * ce_ref(c->logits, c->tgt, NULL);
}

static void test_cross_entropy(uint64_t *rng) {
    int32_t tgt[BT];
    for (int i = 0; i < BT; i++) tgt[i] = (int32_t)(kt_next(rng) % V);
    const float dloss = 0.7f;
    float *x = kt_rand_f(BT * V, rng, 3.0f), *lse = kt_zeros_f(BT), *dx = kt_zeros_f(BT * V);
    float loss = 0.0f;
    ZB_CHECK_OK(zb_cpu_cross_entropy_fwd(&loss, lse, x, tgt, BT, V));
    ZB_CHECK_OK(zb_cpu_cross_entropy_bwd(dx, x, lse, tgt, BT, V, dloss));
    ce_ctx c = {kt_to_d(x, BT * V), tgt, (double)dloss};
    double lref[BT], fd[BT * V];
    double want = ce_ref(c.logits, tgt, lref);
    kt_check_close("cross-entropy loss", &loss, &want, 1, FWD_RTOL, FWD_ATOL);
    kt_check_close("cross-entropy lse", lse, lref, BT, FWD_RTOL, FWD_ATOL);
    kt_fd_grad(c.logits, BT * V, ce_obj, &c, fd);
    kt_check_close("cross-entropy dlogits", dx, fd, BT * V, GRAD_RTOL, GRAD_ATOL);

    /* in place (dlogits == logits) gives the same bits */
    float *xi = (float *)malloc(BT * V * sizeof *xi);
    memcpy(xi, x, BT * V * sizeof *xi);
    ZB_CHECK_OK(zb_cpu_cross_entropy_bwd(xi, xi, lse, tgt, BT, V, dloss));
    ZB_CHECK(memcmp(xi, dx, BT * V * sizeof *xi) == 0);
    /* shift invariance with large logits (max subtraction): +100 */
    float loss2 = 0.0f;
    for (int i = 0; i < BT * V; i++) xi[i] = x[i] + 100.0f;
    ZB_CHECK_OK(zb_cpu_cross_entropy_fwd(&loss2, lse, xi, tgt, BT, V));
    ZB_CHECK_MSG(fabsf(loss2 - loss) < 1e-4f, "loss %g after +100 shift, want %g", loss2, loss);
    /* bad target: reported */
    int32_t bad[BT];
    memcpy(bad, tgt, sizeof bad);
    bad[4] = V;
    ZB_CHECK(zb_cpu_cross_entropy_fwd(&loss2, lse, x, bad, BT, V) == ZB_ERR_INVALID);
    ZB_CHECK(zb_cpu_cross_entropy_bwd(xi, x, lse, bad, BT, V, 1.0f) == ZB_ERR_INVALID);
    free(x); free(lse); free(dx); free(xi); free(c.logits);
}

int main(void) {
    uint64_t rng = 20240601u;
    test_embedding(&rng);
    test_rmsnorm(&rng);
    test_matmul(&rng);
    test_swiglu(&rng);
    test_residual(&rng);
    test_cross_entropy(&rng);
    return zb_test_finish("test_kernel_grad");
}
