/* CPU reference kernels: RoPE and causal grouped-query attention. Forward
 * values against independent double implementations (RoPE as Hugging Face
 * writes it: x*cos + rotate_half(x)*sin with cat(freqs, freqs); attention
 * with explicit repeat_kv, an explicit -inf causal mask and a full softmax),
 * and the backwards against central finite differences of L = sum(out * R)
 * in double (kernel_test_util.h).
 * Shapes (tiny): B=2, T=5, H=4, KVH in {1, 2, 4}, D=4; q [B,T,H,D],
 * k, v [B,T,KVH,D], probs [B,H,T,T].
 *
 * Tolerances, |got - want| <= rtol |want_i| + atol max_j |want_j|:
 *   forward: rtol 1e-5, atol 1e-6 (RoPE at positions up to 511: atol 1e-4,
 *   the fp32 angle pos * inv_freq carries ~pos * 6e-8 absolute error);
 *   gradients: rtol 1e-4, atol 1e-5; rope bwd(fwd(x)) == x within 1e-6 of
 *   max |x|. Every check also verifies that an element moved by 10x its
 *   tolerance is rejected. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "zb_cpu_kernels.h"
#include "kernel_test_util.h"

#define B 2
#define T 5
#define H 4
#define D 4
#define THETA 10000.0
#define FWD_RTOL 1e-5
#define FWD_ATOL 1e-6
#define GRAD_RTOL 1e-4
#define GRAD_ATOL 1e-5
#define MAXN (B * T * H * D)

/* ---- RoPE -------------------------------------------------------------- */
typedef struct { double *x, *r; int nb, nt, nh, d; } rope_ctx;
static void rope_ref(const rope_ctx *c, double *out) {
    int half = c->d / 2;
    for (int b = 0; b < c->nb; b++)
        for (int t = 0; t < c->nt; t++)
            for (int h = 0; h < c->nh; h++) {
                const double *x = c->x + ((b * c->nt + t) * c->nh + h) * c->d;
                double *y = out + ((b * c->nt + t) * c->nh + h) * c->d;
                for (int j = 0; j < c->d; j++) {
                    int i = j % half; /* emb = cat(freqs, freqs) */
                    double ang = t * pow(THETA, -2.0 * i / c->d);
                    double rot = j < half ? -x[j + half] : x[j - half]; /* rotate_half */
                    y[j] = x[j] * cos(ang) + rot * sin(ang);
                }
            }
}
static double rope_obj(void *p) {
    rope_ctx *c = (rope_ctx *)p;
    double *y = (double *)malloc((size_t)(c->nb * c->nt * c->nh * c->d) * sizeof *y);
    rope_ref(c, y);
    double s = kt_dot_d(y, c->r, (size_t)(c->nb * c->nt * c->nh * c->d));
    free(y);
    return s;
}

static void test_rope(uint64_t *rng) {
    for (int nh = 2; nh <= H; nh += 2) { /* KVH = 2 (k) and H = 4 (q) */
        size_t n = (size_t)(B * T * nh * D);
        float *x = kt_rand_f(n, rng, 1.0f), *r = kt_rand_f(n, rng, 1.0f);
        float *y = kt_zeros_f(n), *dx = kt_zeros_f(n), *back = kt_zeros_f(n);
        ZB_CHECK_OK(zb_cpu_rope_fwd(y, x, B, T, nh, D, (float)THETA));
        ZB_CHECK_OK(zb_cpu_rope_bwd(dx, r, B, T, nh, D, (float)THETA));
        rope_ctx c = {kt_to_d(x, n), kt_to_d(r, n), B, T, nh, D};
        double yref[MAXN], fd[MAXN];
        rope_ref(&c, yref);
        kt_check_close("rope out", y, yref, n, FWD_RTOL, FWD_ATOL);
        kt_fd_grad(c.x, n, rope_obj, &c, fd);
        kt_check_close("rope dx", dx, fd, n, GRAD_RTOL, GRAD_ATOL);
        /* a rotation: bwd(fwd(x)) == x */
        ZB_CHECK_OK(zb_cpu_rope_bwd(back, y, B, T, nh, D, (float)THETA));
        double xd[MAXN];
        for (size_t i = 0; i < n; i++) xd[i] = x[i];
        kt_check_close("rope bwd(fwd(x))", back, xd, n, 0.0, 1e-6);
        /* position 0 is the identity; in place equals out of place */
        ZB_CHECK(memcmp(y, x, (size_t)(nh * D) * sizeof *x) == 0);
        memcpy(back, x, n * sizeof *x);
        ZB_CHECK_OK(zb_cpu_rope_fwd(back, back, B, T, nh, D, (float)THETA));
        ZB_CHECK(memcmp(back, y, n * sizeof *y) == 0);
        free(x); free(r); free(y); free(dx); free(back); free(c.x); free(c.r);
    }
    /* long positions, wide head: angle accuracy of the fp32 kernel */
    enum { LT = 512, LD = 16 };
    float *x = kt_rand_f(LT * LD, rng, 1.0f), *y = kt_zeros_f(LT * LD);
    ZB_CHECK_OK(zb_cpu_rope_fwd(y, x, 1, LT, 1, LD, (float)THETA));
    rope_ctx c = {kt_to_d(x, LT * LD), NULL, 1, LT, 1, LD};
    double *yref = (double *)malloc(LT * LD * sizeof *yref);
    rope_ref(&c, yref);
    kt_check_close("rope out, positions to 511", y, yref, LT * LD, 0.0, 1e-4);
    ZB_CHECK(zb_cpu_rope_fwd(y, x, 1, 2, 1, 3, (float)THETA) == ZB_ERR_INVALID); /* odd D */
    free(x); free(y); free(c.x); free(yref);
}

/* ---- attention --------------------------------------------------------- */
typedef struct { double *q, *k, *v, *r; int kvh; } att_ctx;
/* out [B,T,H,D], probs [B,H,T,T] and lse [B,H,T], written the long way. */
static void att_ref(const att_ctx *c, double *out, double *probs, double *lse) {
    int rep = H / c->kvh;
    double kx[B * T * H * D], vx[B * T * H * D]; /* repeat_kv: [B,T,H,D] */
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int h = 0; h < H; h++)
                for (int d = 0; d < D; d++) {
                    int src = ((b * T + t) * c->kvh + h / rep) * D + d;
                    kx[((b * T + t) * H + h) * D + d] = c->k[src];
                    vx[((b * T + t) * H + h) * D + d] = c->v[src];
                }
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < T; i++) {
                double s[T], z = 0.0;
                for (int j = 0; j < T; j++) {
                    double dot = 0.0;
                    for (int d = 0; d < D; d++)
                        dot += c->q[((b * T + i) * H + h) * D + d] * kx[((b * T + j) * H + h) * D + d];
                    s[j] = j > i ? -INFINITY : dot / sqrt((double)D); /* causal mask */
                }
                for (int j = 0; j < T; j++) z += exp(s[j]);
                for (int d = 0; d < D; d++) {
                    double acc = 0.0;
                    for (int j = 0; j < T; j++) acc += exp(s[j]) / z * vx[((b * T + j) * H + h) * D + d];
                    out[((b * T + i) * H + h) * D + d] = acc;
                }
                if (probs)
                    for (int j = 0; j < T; j++) probs[((b * H + h) * T + i) * T + j] = exp(s[j]) / z;
                if (lse) lse[(b * H + h) * T + i] = log(z);
            }
}
static double att_obj(void *p) {
    att_ctx *c = (att_ctx *)p;
    double out[MAXN];
    att_ref(c, out, NULL, NULL);
    return kt_dot_d(out, c->r, MAXN);
}

static void test_attention(uint64_t *rng) {
    for (int kvh = 1; kvh <= H; kvh *= 2) {
        size_t nq = MAXN, nkv = (size_t)(B * T * kvh * D), np = B * H * T * T;
        float *q = kt_rand_f(nq, rng, 1.5f), *k = kt_rand_f(nkv, rng, 1.5f);
        float *v = kt_rand_f(nkv, rng, 1.0f), *r = kt_rand_f(nq, rng, 1.0f);
        float *out = kt_zeros_f(nq), *probs = kt_rand_f(np, rng, 1.0f); /* garbage in */
        float *dq = kt_rand_f(nq, rng, 1.0f), *dk = kt_rand_f(nkv, rng, 1.0f);
        float *dv = kt_rand_f(nkv, rng, 1.0f); /* garbage: the backward writes, not adds */
        ZB_CHECK_OK(zb_cpu_attention_fwd(out, probs, q, k, v, B, T, H, kvh, D));
        ZB_CHECK_OK(zb_cpu_attention_bwd(dq, dk, dv, r, q, k, v, probs, B, T, H, kvh, D));

        att_ctx c = {kt_to_d(q, nq), kt_to_d(k, nkv), kt_to_d(v, nkv), kt_to_d(r, nq), kvh};
        double oref[MAXN], pref[B * H * T * T], lref[B * H * T], fq[MAXN], fk[MAXN], fv[MAXN];
        att_ref(&c, oref, pref, lref);
        float lse[B * H * T];
        ZB_CHECK_OK(zb_cpu_attention_lse(lse, q, k, B, T, H, kvh, D));
        kt_check_close("attention lse", lse, lref, (size_t)(B * H * T), FWD_RTOL, FWD_ATOL);
        kt_check_close("attention out", out, oref, nq, FWD_RTOL, FWD_ATOL);
        kt_check_close("attention probs", probs, pref, np, FWD_RTOL, FWD_ATOL);
        int upper_zero = 1, rows_ok = 1;
        for (int row = 0; row < B * H * T; row++) {
            int i = row % T;
            double sum = 0.0;
            for (int j = 0; j < T; j++) {
                sum += probs[row * T + j];
                if (j > i) upper_zero &= probs[row * T + j] == 0.0f;
            }
            rows_ok &= fabs(sum - 1.0) < 1e-6;
        }
        ZB_CHECK_MSG(upper_zero && rows_ok, "kvh %d: probs not causal or rows do not sum to 1", kvh);
        kt_fd_grad(c.q, nq, att_obj, &c, fq);
        kt_fd_grad(c.k, nkv, att_obj, &c, fk);
        kt_fd_grad(c.v, nkv, att_obj, &c, fv);
        kt_check_close("attention dq", dq, fq, nq, GRAD_RTOL, GRAD_ATOL);
        kt_check_close("attention dk", dk, fk, nkv, GRAD_RTOL, GRAD_ATOL);
        kt_check_close("attention dv", dv, fv, nkv, GRAD_RTOL, GRAD_ATOL);
        free(q); free(k); free(v); free(r); free(out); free(probs); free(dq); free(dk); free(dv);
        free(c.q); free(c.k); free(c.v); free(c.r);
    }
    float one[H * D] = {0};
    float p[H] = {0};
    ZB_CHECK(zb_cpu_attention_fwd(one, p, one, one, one, 1, 1, H, 3, D) == ZB_ERR_INVALID);
    ZB_CHECK(zb_cpu_attention_bwd(one, one, one, one, one, one, one, p, 1, 1, H, 0, D) ==
             ZB_ERR_INVALID);
    ZB_CHECK(zb_cpu_attention_lse(p, one, one, 1, 1, H, 3, D) == ZB_ERR_INVALID);
}

int main(void) {
    uint64_t rng = 777u;
    test_rope(&rng);
    test_attention(&rng);
    return zb_test_finish("test_kernel_attn");
}
