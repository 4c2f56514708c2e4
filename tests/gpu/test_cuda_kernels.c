/* GPU kernel check: every CUDA kernel of kernels/cuda/ against its CPU
 * reference kernel (kernels/cpu/) on fresh random inputs (the seed is
 * printed; pass it as the first argument to rerun the same inputs). One
 * line per check: name, max relative error, bound, pass/FAIL. Exits 77
 * (CTest: skipped) when no CUDA device is usable.
 *
 * Storage: every op with activations or weights runs twice, with fp32
 * storage and with bf16 storage (the launchers' dtype). In the bf16 pass
 * the random inputs are rounded to bf16 first, so the CPU's fp32 reference
 * sees exactly the values the GPU widens; a bf16 output is compared with
 * the reference rounded to bf16 under the BF16 bound (fp32 outputs of the
 * pass, such as inv_rms, lse, loss, dweight and dtable, keep their fp32
 * bounds). Attention runs odd head dims too (D = 1 and 3: the bf16
 * backward's pdp slot; see attention_bwd.cu). An unknown dtype must be
 * refused with cudaErrorInvalidValue and nothing queued.
 *
 * err_i = |gpu_i - cpu_i| / mag_i (gpu_check.h), with mag_i the magnitude
 * of the terms that make element i (|cpu_i| where no cancellation can
 * occur). Bounds:
 *   EXACT   1e-5: the same fp32 operations in the same order (the CUDA
 *     kernels are built with --fmad=false and share the ZB_HD math), so
 *     only libm differs: CUDA's expf/sinf/cosf are within 2 ulp, powf 4 ulp
 *     (CUDA Programming Guide), glibc's within 1 ulp. RoPE's angle
 *     pos * inv_freq carries the powf difference times pos: with T = 12
 *     that is <= 11 * 6 ulp * 2^-23 = 8e-6 of the pair's norm.
 *   REORDER 1e-4: sums that the GPU adds in fp32 in another order than the
 *     CPU (which sums in double, or in fp32 row by row): two orders of a
 *     k-term fp32 sum differ by at most 2 k 2^-24 sum|terms| (Higham); the
 *     longest chains here (attention dk: rep*T + D = 3*150 + 72 terms, plus
 *     the dP / pdp sums feeding them) stay below 6e-5 of mag_i.
 *   BF16    1e-2: bf16 outputs (8 significant bits). The rounding is the
 *     same bf16.h code on both sides, so a cast's error is 0; an op's two
 *     fp32 results, a few ulp apart, may round to neighbouring bf16 values,
 *     one bf16 ulp = at most 2^-7 = 7.8e-3 of the value.
 * Every output a kernel writes starts as NaN (0xff bytes), so an element
 * left unwritten fails; accumulated outputs start from random values.
 * Bad token and target ids (one or two per test) must give the CPU's
 * values and be reported through the error word as {ZB_ERR_INVALID, id}.
 * Shapes: as kernels.h (N = B*T rows, q [B,T,H,D], k, v [B,T,KVH,D],
 * probs [B,H,T,T]); sizes are small, odd and not multiples of a block. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpu/zb_cpu_kernels.h"
#include "cuda/zb_cuda_kernels.h"
#include "gpu_check.h"
#include "unit/kernel_test_util.h"

#define EXACT 1e-5
#define REORDER 1e-4
#define BF16 1e-2

static cudaStream_t S;
static uint64_t rng;

/* Host buffers, freed together after each op. */
static void *host_bufs[128];
static int n_host_bufs;

static void *h_alloc(size_t bytes) {
    if (n_host_bufs == 128) exit(1);
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) exit(1);
    return host_bufs[n_host_bufs++] = p;
}
static float *h_f(size_t n) { return (float *)h_alloc(n * sizeof(float)); }
static double *h_d(size_t n) { return (double *)h_alloc(n * sizeof(double)); }
/* The storage dtype of the current pass (main runs the checks of ops with
 * activations and weights once per dtype). */
static zb_dtype DT = ZB_DTYPE_F32;

/* Rounds p [n] to values DT stores exactly (bf16: nearest even; fp32:
 * unchanged), so the CPU reference and the GPU see the same inputs. */
static void h_round(float *p, size_t n) {
    if (DT != ZB_DTYPE_BF16) return;
    for (size_t i = 0; i < n; i++) p[i] = zb_bf16_to_f32(zb_f32_to_bf16(p[i]));
}
static float *h_rand(size_t n, float scale) {
    float *p = h_f(n);
    for (size_t i = 0; i < n; i++) p[i] = scale * kt_uniform(&rng);
    h_round(p, n);
    return p;
}
static float *h_copy(const float *src, size_t n) {
    float *p = h_f(n);
    memcpy(p, src, n * sizeof(float));
    return p;
}
static void done(void) {
    for (int i = 0; i < n_host_bufs; i++) free(host_bufs[i]);
    n_host_bufs = 0;
    gc_free_all();
}

#define FB(n) ((size_t)(n) * sizeof(float))
#define UP(p, n) ((float *)gc_upload((p), FB(n)))
#define NANS(n) ((float *)gc_nan(FB(n)))
/* Storage (DT) buffers: activations and weights. */
#define SB(n) ((size_t)(n) * zb_dtype_size(DT))
#define NANSS(n) gc_nan(SB(n))

/* A device copy of p [n] stored as DT (p holds DT-exact values). */
static void *UPS(const float *p, size_t n) {
    if (DT == ZB_DTYPE_F32) return gc_upload(p, FB(n));
    zb_bf16 *bits = (zb_bf16 *)h_alloc(n * sizeof(zb_bf16));
    for (size_t i = 0; i < n; i++) bits[i] = zb_f32_to_bf16(p[i]);
    return gc_upload(bits, n * sizeof(zb_bf16));
}

/* "name [bf16]" in the bf16 pass, name as is in the fp32 pass. */
static const char *tagged(const char *name) {
    static char buf[128];
    if (DT == ZB_DTYPE_F32) return name;
    snprintf(buf, sizeof buf, "%s [%s]", name, zb_dtype_name(DT));
    return buf;
}

/* A zeroed device error word (zb_cuda_kernels.h: {code, bad id}). */
static int32_t *err_word_new(void) {
    int32_t zero[2] = {0, 0};
    return (int32_t *)gc_upload(zero, sizeof zero);
}

/* Checks that a kernel reported a bad id through its error word as
 * {ZB_ERR_INVALID, one of the bad ids a, b} (or, with expect_bad 0, that
 * it left the word zero). */
static void check_err_word(const char *name, const int32_t *d_word, int expect_bad, int32_t a,
                           int32_t b) {
    int32_t w[2];
    gc_download(w, d_word, sizeof w);
    int pass = expect_bad ? (w[0] == (int32_t)ZB_ERR_INVALID && (w[1] == a || w[1] == b))
                          : (w[0] == 0 && w[1] == 0);
    name = tagged(name);
    printf("%-30s error word {%d, %d}  want %s  %s\n", name, (int)w[0], (int)w[1],
           expect_bad ? "{ZB_ERR_INVALID, bad id}" : "{0, 0}", pass ? "pass" : "FAIL");
    ZB_CHECK_MSG(pass, "%s: error word {%d, %d}", name, (int)w[0], (int)w[1]);
}

/* Downloads n floats from d and checks them against want. */
static void check_dev(const char *name, const float *d, const float *want, const double *mag,
                      size_t n, double bound) {
    float *got = h_f(n);
    gc_download(got, d, FB(n));
    gc_check(tagged(name), got, want, mag, n, bound);
}

/* Downloads n elements stored as DT and checks them against the fp32
 * reference want: fp32 as check_dev; bf16 against want rounded to bf16,
 * within the BF16 bound (two fp32 results a few ulp apart may round one
 * bf16 ulp apart, at most 2^-7 of the value). */
static void check_dev_s(const char *name, const void *d, const float *want, const double *mag,
                        size_t n, double bound) {
    if (DT == ZB_DTYPE_F32) {
        check_dev(name, (const float *)d, want, mag, n, bound);
        return;
    }
    zb_bf16 *bits = (zb_bf16 *)h_alloc(n * sizeof(zb_bf16));
    float *got = h_f(n), *want_r = h_copy(want, n);
    gc_download(bits, d, n * sizeof(zb_bf16));
    for (size_t i = 0; i < n; i++) got[i] = zb_bf16_to_f32(bits[i]);
    h_round(want_r, n);
    gc_check(tagged(name), got, want_r, mag, n, bound > BF16 ? bound : BF16);
}

/* ---- embedding ------------------------------------------------------------ */
static void check_embedding(void) {
    enum { N = 200, C = 96, V = 50 };
    int32_t tok[N];
    for (int i = 0; i < N; i++) tok[i] = (int32_t)(kt_next(&rng) % V);
    tok[7] = V; /* bad ids: a zero row / skipped, as on the CPU */
    tok[100] = -1;
    float *table = h_rand(V * C, 1.0f), *dout = h_rand(N * C, 1.0f), *dt0 = h_rand(V * C, 1.0f);
    float *out_c = h_f(N * C), *dt_c = h_copy(dt0, V * C);
    (void)zb_cpu_embedding_fwd(out_c, tok, table, N, C, V);
    (void)zb_cpu_embedding_bwd(dt_c, tok, dout, N, C, V);
    zb_error_clear();
    double *mag = h_d(V * C);
    for (size_t i = 0; i < (size_t)V * C; i++) mag[i] = fabs((double)dt0[i]);
    for (int i = 0; i < N; i++) {
        if (tok[i] < 0 || tok[i] >= V) continue;
        for (int c = 0; c < C; c++) mag[(size_t)tok[i] * C + c] += fabs((double)dout[i * C + c]);
    }
    const int32_t *d_tok = (const int32_t *)gc_upload(tok, sizeof tok);
    void *d_out = NANSS(N * C), *d_table = UPS(table, V * C);
    float *d_dt = UP(dt0, V * C);
    int32_t *w_fwd = err_word_new(), *w_bwd = err_word_new(), *w_ok = err_word_new();
    cudaError_t e = zb_cuda_embedding_fwd(S, DT, d_out, d_tok, d_table, N, C, V, w_fwd);
    if (gc_ran("embedding_fwd", e, S)) {
        check_dev_s("embedding_fwd", d_out, out_c, NULL, N * C, EXACT);
        check_err_word("embedding_fwd bad ids", w_fwd, 1, V, -1);
    }
    e = zb_cuda_embedding_bwd(S, DT, d_dt, d_tok, UPS(dout, N * C), N, C, V, w_bwd);
    if (gc_ran("embedding_bwd", e, S)) {
        check_dev("embedding_bwd dtable (atomics)", d_dt, dt_c, mag, V * C, REORDER);
        check_err_word("embedding_bwd bad ids", w_bwd, 1, V, -1);
    }
    /* good ids only (the first 7 rows): the word stays zero */
    e = zb_cuda_embedding_fwd(S, DT, d_out, d_tok, d_table, 7, C, V, w_ok);
    if (gc_ran("embedding_fwd", e, S)) {
        check_err_word("embedding_fwd good ids", w_ok, 0, 0, 0);
    }
    done();
}

/* ---- RMSNorm ---------------------------------------------------------------- */
static void check_rmsnorm(void) {
    enum { N = 67, C = 700 };
    const float eps = 1e-5f;
    float *x = h_rand(N * C, 2.0f), *w = h_rand(C, 0.5f), *dout = h_rand(N * C, 1.0f);
    float *dw0 = h_rand(C, 1.0f);
    for (int c = 0; c < C; c++) w[c] += 1.0f;
    h_round(w, C);
    float *out_c = h_f(N * C), *r_c = h_f(N), *dx_c = h_f(N * C), *dw_c = h_copy(dw0, C);
    zb_cpu_rmsnorm_fwd(out_c, r_c, x, w, N, C, eps);
    zb_cpu_rmsnorm_bwd(dx_c, dw_c, dout, x, w, r_c, N, C);
    /* dx = r (w dy - x r mean_dot): mag = r (|w dy| + |x| r mean|dy w x r|) */
    double *mag_dx = h_d(N * C), *mag_dw = h_d(C);
    for (int c = 0; c < C; c++) mag_dw[c] = fabs((double)dw0[c]);
    for (int i = 0; i < N; i++) {
        double r = r_c[i], md = 0.0;
        for (int c = 0; c < C; c++) md += fabs((double)dout[i * C + c] * w[c] * x[i * C + c] * r);
        md /= C;
        for (int c = 0; c < C; c++) {
            size_t o = (size_t)i * C + c;
            mag_dx[o] = r * (fabs((double)w[c] * dout[o]) + fabs((double)x[o]) * r * md);
            mag_dw[c] += fabs((double)dout[o] * x[o] * r);
        }
    }
    void *d_x = UPS(x, N * C), *d_w = UPS(w, C), *d_out = NANSS(N * C);
    float *d_r = NANS(N);
    if (gc_ran("rmsnorm_fwd", zb_cuda_rmsnorm_fwd(S, DT, d_out, d_r, d_x, d_w, N, C, eps), S)) {
        check_dev_s("rmsnorm_fwd out", d_out, out_c, NULL, N * C, REORDER);
        check_dev("rmsnorm_fwd inv_rms", d_r, r_c, NULL, N, REORDER);
    }
    void *d_x2 = UPS(x, N * C);
    float *d_r2 = NANS(N);
    if (gc_ran("rmsnorm_fwd", zb_cuda_rmsnorm_fwd(S, DT, d_x2, d_r2, d_x2, d_w, N, C, eps), S)) {
        check_dev_s("rmsnorm_fwd out (in place)", d_x2, out_c, NULL, N * C, REORDER);
    }
    float *d_rc = UP(r_c, N), *d_dw = UP(dw0, C);
    void *d_dout = UPS(dout, N * C), *d_dx = NANSS(N * C);
    cudaError_t e = zb_cuda_rmsnorm_bwd(S, DT, d_dx, d_dw, d_dout, d_x, d_w, d_rc, N, C);
    if (gc_ran("rmsnorm_bwd", e, S)) {
        check_dev_s("rmsnorm_bwd dx", d_dx, dx_c, mag_dx, N * C, REORDER);
        check_dev("rmsnorm_bwd dweight (atomics)", d_dw, dw_c, mag_dw, C, REORDER);
    }
    void *d_dd = UPS(dout, N * C); /* dx == dout */
    float *d_dw2 = UP(dw0, C);
    e = zb_cuda_rmsnorm_bwd(S, DT, d_dd, d_dw2, d_dd, d_x, d_w, d_rc, N, C);
    if (gc_ran("rmsnorm_bwd", e, S)) {
        check_dev_s("rmsnorm_bwd dx (dx == dout)", d_dd, dx_c, mag_dx, N * C, REORDER);
        check_dev("rmsnorm_bwd dweight (dx == dout)", d_dw2, dw_c, mag_dw, C, REORDER);
    }
    done();
}

/* ---- RoPE ---------------------------------------------------------------------- */
static void check_rope(void) {
    enum { B = 2, T = 12, NH = 3, D = 20, HALF = D / 2 };
    const size_t n = (size_t)B * T * NH * D;
    const float theta = 10000.0f;
    for (int inverse = 0; inverse <= 1; inverse++) {
        const char *op = inverse ? "rope_bwd" : "rope_fwd";
        float *x = h_rand(n, 1.5f), *want = h_f(n);
        double *mag = h_d(n); /* the norm of the element's pair */
        for (size_t head = 0; head < n / D; head++) {
            for (int i = 0; i < HALF; i++) {
                size_t a = head * D + (size_t)i, b = a + HALF;
                mag[a] = mag[b] = sqrt((double)x[a] * x[a] + (double)x[b] * x[b]);
            }
        }
        zb_status st = inverse ? zb_cpu_rope_bwd(want, x, B, T, NH, D, theta)
                               : zb_cpu_rope_fwd(want, x, B, T, NH, D, theta);
        ZB_CHECK_OK(st);
        void *d_x = UPS(x, n), *d_out = NANSS(n), *d_io = UPS(x, n);
        cudaError_t e = inverse ? zb_cuda_rope_bwd(S, DT, d_out, d_x, B, T, NH, D, theta)
                                : zb_cuda_rope_fwd(S, DT, d_out, d_x, B, T, NH, D, theta);
        if (gc_ran(op, e, S)) check_dev_s(op, d_out, want, mag, n, EXACT);
        e = inverse ? zb_cuda_rope_bwd(S, DT, d_io, d_io, B, T, NH, D, theta)
                    : zb_cuda_rope_fwd(S, DT, d_io, d_io, B, T, NH, D, theta);
        char name[64];
        snprintf(name, sizeof name, "%s (in place)", op);
        if (gc_ran(op, e, S)) check_dev_s(name, d_io, want, mag, n, EXACT);
        done();
    }
}

/* ---- attention ------------------------------------------------------------------- */
/* Magnitudes of the attention outputs' terms (see the top comment), with
 * a_ij = sum_d |dout_i,d v_j,d|, b_i = sum_j p_ij a_ij and the dS_ij scale
 * e_ij = scale p_ij (a_ij + b_i). */
static void attention_mags(int B, int T, int H, int KVH, int D, const float *q, const float *k,
                           const float *v, const float *dout, const float *p, double *m_out,
                           double *m_p, double *m_dq, double *m_dk, double *m_dv) {
    int rep = H / KVH;
    double scale = 1.0 / sqrt((double)D);
    size_t qrow = (size_t)H * D, kvrow = (size_t)KVH * D;
    double *a = h_d((size_t)T);
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < H; h++) {
            for (int i = 0; i < T; i++) {
                size_t qoff = ((size_t)b * T + i) * qrow + (size_t)h * D;
                const float *pr = p + (((size_t)b * H + h) * T + i) * T;
                double pmax = 0.0, bi = 0.0;
                for (int j = 0; j <= i; j++) {
                    size_t kvoff = ((size_t)b * T + j) * kvrow + (size_t)(h / rep) * D;
                    pmax = fmax(pmax, pr[j]);
                    a[j] = 0.0;
                    for (int d = 0; d < D; d++) a[j] += fabs((double)dout[qoff + d] * v[kvoff + d]);
                    bi += pr[j] * a[j];
                }
                for (int j = 0; j < T; j++) m_p[(((size_t)b * H + h) * T + i) * T + j] = pmax;
                for (int j = 0; j <= i; j++) {
                    size_t kvoff = ((size_t)b * T + j) * kvrow + (size_t)(h / rep) * D;
                    double e = scale * pr[j] * (a[j] + bi);
                    for (int d = 0; d < D; d++) {
                        m_out[qoff + d] += pr[j] * fabs((double)v[kvoff + d]);
                        m_dq[qoff + d] += e * fabs((double)k[kvoff + d]);
                        m_dk[kvoff + d] += e * fabs((double)q[qoff + d]);
                        m_dv[kvoff + d] += pr[j] * fabs((double)dout[qoff + d]);
                    }
                }
            }
        }
    }
}

static void check_attention(int B, int T, int H, int KVH, int D) {
    size_t nq = (size_t)B * T * H * D, nkv = (size_t)B * T * KVH * D;
    size_t np = (size_t)B * H * T * T;
    float *q = h_rand(nq, 1.0f), *k = h_rand(nkv, 1.0f), *v = h_rand(nkv, 1.0f);
    float *dout = h_rand(nq, 1.0f);
    float *out_c = h_f(nq), *p_c = h_f(np), *dq_c = h_f(nq), *dk_c = h_f(nkv), *dv_c = h_f(nkv);
    ZB_CHECK_OK(zb_cpu_attention_fwd(out_c, p_c, q, k, v, B, T, H, KVH, D));
    /* the backward reads the CPU's probs as stored (bf16: rounded) on both sides */
    float *p_in = h_copy(p_c, np);
    h_round(p_in, np);
    ZB_CHECK_OK(zb_cpu_attention_bwd(dq_c, dk_c, dv_c, dout, q, k, v, p_in, B, T, H, KVH, D));
    double *m_out = h_d(nq), *m_p = h_d(np), *m_dq = h_d(nq), *m_dk = h_d(nkv), *m_dv = h_d(nkv);
    attention_mags(B, T, H, KVH, D, q, k, v, dout, p_c, m_out, m_p, m_dq, m_dk, m_dv);

    char tag[64], name[96];
    snprintf(tag, sizeof tag, "(T=%d H=%d KVH=%d D=%d)", T, H, KVH, D);
    void *d_q = UPS(q, nq), *d_k = UPS(k, nkv), *d_v = UPS(v, nkv);
    void *d_out = NANSS(nq), *d_p = NANSS(np);
    cudaError_t e = zb_cuda_attention_fwd(S, DT, d_out, d_p, d_q, d_k, d_v, B, T, H, KVH, D);
    if (gc_ran("attention_fwd", e, S)) {
        snprintf(name, sizeof name, "attention_fwd out %s", tag);
        check_dev_s(name, d_out, out_c, m_out, nq, REORDER);
        snprintf(name, sizeof name, "attention_fwd probs %s", tag);
        check_dev_s(name, d_p, p_c, m_p, np, REORDER);
    }
    /* the backward reads the CPU's probs, so both sides start equal */
    void *d_pc = UPS(p_in, np), *d_dout = UPS(dout, nq);
    void *d_dq = NANSS(nq), *d_dk = NANSS(nkv), *d_dv = NANSS(nkv);
    if (gc_ran("attention_bwd", zb_cuda_attention_bwd(S, DT, d_dq, d_dk, d_dv, d_dout, d_q, d_k,
                                                      d_v, d_pc, B, T, H, KVH, D), S)) {
        snprintf(name, sizeof name, "attention_bwd dq %s", tag);
        check_dev_s(name, d_dq, dq_c, m_dq, nq, REORDER);
        snprintf(name, sizeof name, "attention_bwd dk %s", tag);
        check_dev_s(name, d_dk, dk_c, m_dk, nkv, REORDER);
        snprintf(name, sizeof name, "attention_bwd dv %s", tag);
        check_dev_s(name, d_dv, dv_c, m_dv, nkv, REORDER);
    }
    done();
}

/* ---- SwiGLU, residual, accumulate, fill ---------------------------------------- */
static void check_elementwise(void) {
    enum { N = 10007 };
    float *gate = h_rand(N, 6.0f), *up = h_rand(N, 2.0f), *dh = h_rand(N, 1.0f);
    float *h_c = h_f(N), *dg_c = h_f(N), *du_c = h_f(N);
    zb_cpu_swiglu_fwd(h_c, gate, up, N);
    zb_cpu_swiglu_bwd(dg_c, du_c, dh, gate, up, N);
    /* dgate = dh up s (1 + g (1 - s)): the two terms' sizes; dup = dh g s */
    double *m_dg = h_d(N), *m_du = h_d(N);
    for (int i = 0; i < N; i++) {
        double g = gate[i], s = 1.0 / (1.0 + exp(-g));
        m_dg[i] = fabs((double)dh[i] * up[i]) * s * (1.0 + fabs(g) * (1.0 - s));
        m_du[i] = fabs((double)dh[i] * g * s);
    }
    void *d_g = UPS(gate, N), *d_u = UPS(up, N), *d_dh = UPS(dh, N), *d_h = NANSS(N);
    if (gc_ran("swiglu_fwd", zb_cuda_swiglu_fwd(S, DT, d_h, d_g, d_u, N), S)) {
        check_dev_s("swiglu_fwd", d_h, h_c, NULL, N, EXACT);
    }
    void *d_dg = NANSS(N), *d_du = NANSS(N);
    if (gc_ran("swiglu_bwd", zb_cuda_swiglu_bwd(S, DT, d_dg, d_du, d_dh, d_g, d_u, N), S)) {
        check_dev_s("swiglu_bwd dgate", d_dg, dg_c, m_dg, N, EXACT);
        check_dev_s("swiglu_bwd dup", d_du, du_c, m_du, N, EXACT);
    }
    void *d_g2 = UPS(gate, N), *d_u2 = UPS(up, N); /* dgate == gate, dup == up */
    if (gc_ran("swiglu_bwd", zb_cuda_swiglu_bwd(S, DT, d_g2, d_u2, d_dh, d_g2, d_u2, N), S)) {
        check_dev_s("swiglu_bwd dgate (in place)", d_g2, dg_c, m_dg, N, EXACT);
        check_dev_s("swiglu_bwd dup (in place)", d_u2, du_c, m_du, N, EXACT);
    }

    float *a = h_rand(N, 3.0f), *b = h_rand(N, 3.0f), *sum_c = h_f(N), *acc_c = h_copy(a, N);
    zb_cpu_residual_fwd(sum_c, a, b, N);
    zb_cpu_accumulate(acc_c, b, N);
    double *m_ab = h_d(N);
    for (int i = 0; i < N; i++) m_ab[i] = fabs((double)a[i]) + fabs((double)b[i]);
    void *d_a = UPS(a, N), *d_b = UPS(b, N), *d_s = NANSS(N);
    if (gc_ran("residual_fwd", zb_cuda_residual_fwd(S, DT, d_s, d_a, d_b, N), S)) {
        check_dev_s("residual_fwd", d_s, sum_c, m_ab, N, EXACT);
    }
    if (gc_ran("residual_fwd", zb_cuda_residual_fwd(S, DT, d_a, d_a, d_b, N), S)) {
        check_dev_s("residual_fwd (out == a)", d_a, sum_c, m_ab, N, EXACT);
    }
    void *d_acc = UPS(a, N);
    if (gc_ran("accumulate", zb_cuda_accumulate(S, DT, d_acc, d_b, N), S)) {
        check_dev_s("accumulate", d_acc, acc_c, m_ab, N, EXACT);
    }

    const float values[2] = {0.37f, 0.0f};
    for (int t = 0; t < 2; t++) {
        float *want = h_f(N), *d_f = NANS(N);
        for (int i = 0; i < N; i++) want[i] = values[t];
        if (gc_ran("fill", zb_cuda_fill(S, d_f, values[t], N), S)) {
            check_dev(t == 0 ? "fill 0.37" : "fill 0", d_f, want, NULL, N, EXACT);
        }
    }
    done();
}

/* ---- cross-entropy ---------------------------------------------------------------- */
static void check_cross_entropy(void) {
    enum { N = 53, V = 1000 };
    const float dloss = 1.7f;
    float *logits = h_rand((size_t)N * V, 4.0f);
    int32_t tgt[N];
    for (int i = 0; i < N; i++) tgt[i] = (int32_t)(kt_next(&rng) % V);
    tgt[3] = V + 3; /* a bad target: no loss term, no onehot, as on the CPU */
    float loss_c = 0.0f, *lse_c = h_f(N), *dl_c = h_f((size_t)N * V);
    (void)zb_cpu_cross_entropy_fwd(&loss_c, lse_c, logits, tgt, N, V);
    (void)zb_cpu_cross_entropy_bwd(dl_c, logits, lse_c, tgt, N, V, dloss);
    zb_error_clear();
    double *m_lse = h_d(N), m_loss = 0.0, *m_dl = h_d((size_t)N * V), scale = (double)dloss / N;
    for (int i = 0; i < N; i++) {
        const float *row = logits + (size_t)i * V;
        double mx = -INFINITY;
        for (int j = 0; j < V; j++) mx = fmax(mx, row[j]);
        m_lse[i] = fabs(mx) + fabs((double)lse_c[i] - mx);
        if (tgt[i] >= 0 && tgt[i] < V) m_loss += (m_lse[i] + fabs((double)row[tgt[i]])) / N;
        for (int j = 0; j < V; j++) {
            double p = exp((double)row[j] - (double)lse_c[i]);
            m_dl[(size_t)i * V + j] = fabs(scale) * (p + (j == tgt[i] ? 1.0 : 0.0));
        }
    }
    const int32_t *d_t = (const int32_t *)gc_upload(tgt, sizeof tgt);
    void *d_lg = UPS(logits, (size_t)N * V);
    float *d_loss = NANS(1), *d_lse = NANS(N);
    int32_t *w_fwd = err_word_new(), *w_bwd = err_word_new();
    if (gc_ran("cross_entropy_fwd",
               zb_cuda_cross_entropy_fwd(S, DT, d_loss, d_lse, d_lg, d_t, N, V, w_fwd), S)) {
        check_dev("cross_entropy_fwd lse", d_lse, lse_c, m_lse, N, REORDER);
        check_dev("cross_entropy_fwd loss (atomics)", d_loss, &loss_c, &m_loss, 1, REORDER);
        check_err_word("cross_entropy_fwd bad target", w_fwd, 1, V + 3, V + 3);
    }
    float *d_lsec = UP(lse_c, N);
    void *d_dl = NANSS((size_t)N * V);
    if (gc_ran("cross_entropy_bwd",
               zb_cuda_cross_entropy_bwd(S, DT, d_dl, d_lg, d_lsec, d_t, N, V, dloss, w_bwd), S)) {
        check_dev_s("cross_entropy_bwd", d_dl, dl_c, m_dl, (size_t)N * V, EXACT);
        check_err_word("cross_entropy_bwd bad target", w_bwd, 1, V + 3, V + 3);
    }
    void *d_lg2 = UPS(logits, (size_t)N * V); /* dlogits == logits */
    if (gc_ran("cross_entropy_bwd",
               zb_cuda_cross_entropy_bwd(S, DT, d_lg2, d_lg2, d_lsec, d_t, N, V, dloss, NULL), S)) {
        check_dev_s("cross_entropy_bwd (in place)", d_lg2, dl_c, m_dl, (size_t)N * V, EXACT);
    }
    done();
}

/* ---- AdamW and casts ------------------------------------------------------------------ */
static void widen(float *dst, const zb_bf16 *src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = zb_bf16_to_f32(src[i]);
}

static void check_adamw(void) {
    enum { N = 10001 };
    for (int variant = 0; variant < 2; variant++) {
        bool wd_on = variant == 0;
        int t = wd_on ? 3 : 1;
        float *p = h_rand(N, 1.0f), *g = h_rand(N, 0.1f), *m = h_rand(N, 0.01f);
        float *v = h_rand(N, 1e-3f);
        for (int i = 0; i < N; i++) v[i] = fabsf(v[i]);
        float *p_c = h_copy(p, N), *m_c = h_copy(m, N), *v_c = h_copy(v, N);
        zb_cpu_adamw(p_c, g, m_c, v_c, N, t, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.1f, wd_on);
        float *d_p = UP(p, N), *d_m = UP(m, N), *d_v = UP(v, N);
        zb_bf16 *d_bf = wd_on ? (zb_bf16 *)gc_nan(N * sizeof(zb_bf16)) : NULL;
        const char *op = wd_on ? "adamw (wd, bf16 copy-out)" : "adamw (no wd)";
        if (!gc_ran(op, zb_cuda_adamw(S, d_p, UP(g, N), d_m, d_v, N, t, 1e-3f, 0.9f, 0.999f,
                                      1e-8f, 0.1f, wd_on, d_bf), S)) {
            continue;
        }
        char name[64];
        snprintf(name, sizeof name, "%s params", op);
        check_dev(name, d_p, p_c, NULL, N, EXACT);
        snprintf(name, sizeof name, "%s m", op);
        check_dev(name, d_m, m_c, NULL, N, EXACT);
        snprintf(name, sizeof name, "%s v", op);
        check_dev(name, d_v, v_c, NULL, N, EXACT);
        if (d_bf) {
            zb_bf16 *bf = (zb_bf16 *)h_alloc(N * sizeof(zb_bf16));
            zb_bf16 *bf_c = (zb_bf16 *)h_alloc(N * sizeof(zb_bf16));
            float *got = h_f(N), *want = h_f(N);
            gc_download(bf, d_bf, N * sizeof(zb_bf16));
            zb_cpu_f32_to_bf16(bf_c, p_c, N);
            widen(got, bf, N);
            widen(want, bf_c, N);
            gc_check("adamw bf16 params copy-out", got, want, NULL, N, BF16);
        }
    }
    done();
}

static void check_casts(void) {
    enum { N = 4097 };
    float *x = h_f(N);
    for (int i = 0; i < N; i++) {
        int e = (int)(kt_next(&rng) % 61) - 30; /* magnitudes 2^-30 .. 2^30 */
        x[i] = ldexpf(kt_uniform(&rng), e);
    }
    zb_bf16 *b_c = (zb_bf16 *)h_alloc(N * sizeof(zb_bf16));
    zb_bf16 *b_g = (zb_bf16 *)h_alloc(N * sizeof(zb_bf16));
    zb_cpu_f32_to_bf16(b_c, x, N);
    zb_bf16 *d_b = (zb_bf16 *)gc_nan(N * sizeof(zb_bf16));
    if (gc_ran("f32_to_bf16", zb_cuda_f32_to_bf16(S, d_b, UP(x, N), N), S)) {
        float *got = h_f(N), *want = h_f(N);
        gc_download(b_g, d_b, N * sizeof(zb_bf16));
        widen(got, b_g, N);
        widen(want, b_c, N);
        gc_check("f32_to_bf16", got, want, NULL, N, BF16);
    }
    /* bf16 -> fp32 is exact: the CPU's bf16 values widened */
    float *w_c = h_f(N), *d_w = NANS(N);
    zb_cpu_bf16_to_f32(w_c, b_c, N);
    const zb_bf16 *d_bc = (const zb_bf16 *)gc_upload(b_c, N * sizeof(zb_bf16));
    if (gc_ran("bf16_to_f32", zb_cuda_bf16_to_f32(S, d_w, d_bc, N), S)) {
        check_dev("bf16_to_f32", d_w, w_c, NULL, N, EXACT);
    }
    done();
}

/* ---- an unknown storage dtype ------------------------------------------------- */
/* Every launcher with a dtype refuses one it does not know with
 * cudaErrorInvalidValue before launching anything (valid shapes, so only
 * the dtype is wrong; the NULL pointers are never touched). */
static void check_bad_dtype(void) {
    const zb_dtype bad = ZB_DTYPE_COUNT;
    struct {
        const char *op;
        cudaError_t e;
    } r[] = {
        {"embedding_fwd", zb_cuda_embedding_fwd(S, bad, NULL, NULL, NULL, 2, 4, 8, NULL)},
        {"embedding_bwd", zb_cuda_embedding_bwd(S, bad, NULL, NULL, NULL, 2, 4, 8, NULL)},
        {"rmsnorm_fwd", zb_cuda_rmsnorm_fwd(S, bad, NULL, NULL, NULL, NULL, 2, 4, 1e-5f)},
        {"rmsnorm_bwd", zb_cuda_rmsnorm_bwd(S, bad, NULL, NULL, NULL, NULL, NULL, NULL, 2, 4)},
        {"rope_fwd", zb_cuda_rope_fwd(S, bad, NULL, NULL, 1, 2, 2, 4, 1e4f)},
        {"rope_bwd", zb_cuda_rope_bwd(S, bad, NULL, NULL, 1, 2, 2, 4, 1e4f)},
        {"attention_fwd", zb_cuda_attention_fwd(S, bad, NULL, NULL, NULL, NULL, NULL, 1, 2, 2, 1,
                                                4)},
        {"attention_bwd", zb_cuda_attention_bwd(S, bad, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                                NULL, 1, 2, 2, 1, 4)},
        {"swiglu_fwd", zb_cuda_swiglu_fwd(S, bad, NULL, NULL, NULL, 8)},
        {"swiglu_bwd", zb_cuda_swiglu_bwd(S, bad, NULL, NULL, NULL, NULL, NULL, 8)},
        {"residual_fwd", zb_cuda_residual_fwd(S, bad, NULL, NULL, NULL, 8)},
        {"accumulate", zb_cuda_accumulate(S, bad, NULL, NULL, 8)},
        {"cross_entropy_fwd", zb_cuda_cross_entropy_fwd(S, bad, NULL, NULL, NULL, NULL, 2, 8,
                                                        NULL)},
        {"cross_entropy_bwd", zb_cuda_cross_entropy_bwd(S, bad, NULL, NULL, NULL, NULL, 2, 8,
                                                        1.0f, NULL)},
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        int pass = r[i].e == cudaErrorInvalidValue;
        printf("%-30s dtype %d refused: %s  %s\n", r[i].op, (int)bad, cudaGetErrorName(r[i].e),
               pass ? "pass" : "FAIL");
        ZB_CHECK_MSG(pass, "%s with dtype %d: %s, want cudaErrorInvalidValue", r[i].op, (int)bad,
                     cudaGetErrorName(r[i].e));
    }
    /* nothing was launched: no launch error, and the stream is still clean */
    ZB_CHECK(cudaGetLastError() == cudaSuccess);
    ZB_CHECK(cudaStreamSynchronize(S) == cudaSuccess);
}

int main(int argc, char **argv) {
    int n_dev = 0;
    cudaError_t e = cudaGetDeviceCount(&n_dev);
    if (e != cudaSuccess || n_dev == 0) {
        printf("test_cuda_kernels: no usable CUDA device (%s): skipped\n",
               e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 77;
    }
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0)
                             : ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid();
    rng = seed;
    struct cudaDeviceProp prop;
    GC_CUDA(cudaSetDevice(0));
    GC_CUDA(cudaGetDeviceProperties(&prop, 0));
    printf("test_cuda_kernels: %s (sm_%d%d), seed %llu (rerun: test_cuda_kernels %llu)\n",
           prop.name, prop.major, prop.minor, (unsigned long long)seed, (unsigned long long)seed);
    GC_CUDA(cudaStreamCreate(&S));
    gc_self_test();

    for (int pass = 0; pass < 2; pass++) {
        DT = pass ? ZB_DTYPE_BF16 : ZB_DTYPE_F32;
        printf("-- activations and weights stored as %s --\n", zb_dtype_name(DT));
        check_embedding();
        check_rmsnorm();
        check_rope();
        check_attention(2, 37, 4, 2, 24);
        check_attention(1, 150, 6, 2, 72);
        check_attention(1, 20, 3, 3, 40); /* no grouping (KVH == H) */
        check_attention(2, 11, 4, 2, 3);  /* odd D: bf16's pdp slot spans two elements */
        check_attention(1, 9, 2, 1, 1);   /* D = 1: bf16 recomputes pdp (no slot) */
        check_elementwise();
        check_cross_entropy();
    }
    DT = ZB_DTYPE_F32;
    check_adamw();
    check_casts();
    check_bad_dtype();

    GC_CUDA(cudaStreamDestroy(S));
    return zb_test_finish("test_cuda_kernels");
}
