/* GPU kernel check: every CUDA kernel launcher of kernels/cuda/ but
 * attention's (test_cuda_attention.c) against its CPU reference kernel
 * (kernels/cpu/): embedding, RMSNorm, RoPE, SwiGLU, residual, accumulate,
 * fill and cross-entropy in fp32 and in bf16 storage; AdamW (with its bf16
 * copy-out) and the fp32 <-> bf16 casts, whose types are fixed. Aliased
 * (in-place) calls are checked where the CPU kernels allow them. Bad token
 * and target ids (one or two per test) must give the CPU's values and be
 * reported through the error word as {ZB_ERR_INVALID, id}. An unknown
 * dtype must be refused by every launcher that takes one (attention's
 * included) with cudaErrorInvalidValue and nothing queued. Method, bounds
 * (EXACT, REORDER, BF16) and seed: cuda_kernel_check.h. */
#include "cuda_kernel_check.h"

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
                                                NULL, NULL, 1, 2, 2, 1, 4)},
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
    int rc = ckc_begin("test_cuda_kernels", argc, argv);
    if (rc != 0) return rc;
    gc_self_test();

    for (int pass = 0; pass < 2; pass++) {
        ckc_pass(pass ? ZB_DTYPE_BF16 : ZB_DTYPE_F32);
        check_embedding();
        check_rmsnorm();
        check_rope();
        check_elementwise();
        check_cross_entropy();
    }
    DT = ZB_DTYPE_F32;
    check_adamw();
    check_casts();
    check_bad_dtype();

    return ckc_end("test_cuda_kernels");
}
