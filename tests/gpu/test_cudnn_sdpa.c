/* GPU check of cuDNN's fused SDPA (harness/device/cuda/cudnn_sdpa.h), the
 * cuda backend's attention for bf16 storage (label gpu). Exit 77 (skipped)
 * when no CUDA device is usable or cuDNN's SDPA is not (a build without
 * cuDNN, libcudnn missing or too old, a GPU older than sm_80): the reason
 * is printed. Seed, one line per check and the comparison: as
 * cuda_kernel_check.h (err_i = |gpu_i - ref_i| / mag_i, NaN-poisoned
 * outputs).
 *
 * What it checks:
 *   - the contract: fp32 storage and head dims cuDNN does not take (12,
 *     136) are not usable, with a reason; an unaligned buffer and a refused
 *     shape are ZB_ERR_UNSUPPORTED; B = 0 does nothing;
 *   - forward (out, lse) and backward (dq, dk, dv, from cuDNN's own out and
 *     lse) against the CPU reference kernels (zb_cpu_attention_fwd, _lse,
 *     _bwd in fp32 on the widened bf16 inputs, the backward on the fp32
 *     probabilities) at small shapes that must run (T 64 to 256, D 64 and
 *     128: grouped heads, no grouping, one kv head for 16 query heads) and
 *     at shapes cuDNN may refuse (odd T, D = 72, 40, 8, T = 1: the kernel
 *     table then runs its tiled kernel), checked when it runs them and
 *     counted when it refuses (cuDNN 9.19's front end refuses the backward
 *     at T = 1);
 *   - the plan cache, a second stream (the plan's workspace is handed over
 *     by an event), release and rebuild: the forward's output bit for bit
 *     the same each time (cuDNN's forward is deterministic);
 *   - the kernel table (harness/device/cuda/kernels_cuda.c): a bf16 call at
 *     T = 64, D = 64 gives the direct call's output bit for bit, attention_impl
 *     says "cudnn-sdpa" for bf16 and "cuda-tiled" for fp32, a head dim
 *     cuDNN does not take (D = 12) runs the tiled kernel, and attention_impl
 *     then says "cudnn-sdpa+cuda-tiled"; destroying the device releases the
 *     plans and the next call builds them again (unless ZB_ATTENTION is set,
 *     which changes what the table runs: then those expectations are
 *     skipped with a note);
 *   - with ZB_GPU_REALISTIC_SHAPES=1 (ci/gpu-check sets it): the full CPU
 *     reference at B 1, T 2048, 4 query heads on 2 kv heads, D 128 (~12 s
 *     of CPU on one core here); then T = 4096 (B 2) and T = 8192 (B 1) with 32
 *     query heads on 8 kv heads, D 128, where the full reference would take
 *     minutes to hours: cuDNN against zerobench's tiled CUDA kernel
 *     (zb_cuda_attention_fwd/bwd, both backwards reading cuDNN's out and
 *     lse) on every element, and against a double-precision reference on
 *     sampled rows: out, lse and dq of 20 query rows in each of 4 query
 *     heads, dk and dv of the last 32 key rows of 2 kv heads (those need
 *     only the last 32 query rows of each head in the group).
 *
 * Bounds (u = 2^-24, fp32's unit roundoff; bf16 keeps 8 significant bits,
 * so rounding to nearest moves a value by at most 2^-8 of it, and two
 * values a hair apart can round one ulp, up to 2^-7 of them, apart):
 *   bf16 outputs against a reference, relative to mag_i (the magnitudes of
 *   the terms, cuda_kernel_check.h; the reference rounded to bf16 as
 *   check_dev_s does). cuDNN's flash kernels round the probabilities P to
 *   bf16 for the P V and dS K, dS^T Q products (tensor cores). out: P's
 *   rounding (2^-8 of mag) + out's (2^-8 |out|) + the reference's
 *   (2^-8 |ref|) <= 3 * 2^-8 = 1.17e-2 of mag: SDPA_OUT = 1.2e-2, dv the
 *   same. dq, dk: dS = P (dP - D_i) with D_i = rowsum(dout * out) read
 *   from the bf16 out (2^-8 of b_i, inside the magnitudes' e_ij), dS
 *   rounded to bf16 (2^-8), then the two output roundings: <= 4 * 2^-8 =
 *   1.56e-2: SDPA_GRAD = 1.6e-2. The fp32 sums (D-term dot products,
 *   T-term sums) add ~(D + T) u, 5e-4 at T = 8192. First H200 run
 *   (2026-12-04): out and dv 7.8e-3 at most (one bf16 ulp where |out| is
 *   near its magnitude), dq and dk 1.5e-3.
 *   lse (fp32) against a reference: lse_bound(T, D) = (6 D + 2.2 T + 16) u
 *   of mag_i = 1 + M_i + ln(i + 1), M_i = scale max_j sum_d |q_id k_jd|
 *   (>= |max score|, and lse_i lies between the max score and it plus
 *   ln(i + 1)): the scores' D-term sums (D u M_i each, doubled for
 *   truncating tensor-core adders) enter the max and every exponent,
 *   the T-term sum of exponentials and its rescaling per tile (1.1 T u,
 *   doubled), exp2/log2 approximations (2^-22 each), the scale and the
 *   log2(e) conversions (u each). 3.2e-4 at T = 2048, 1.1e-3 at T = 8192,
 *   D = 128 (measured: 1.2e-7): an error of O(1) (a wrong scale, log base
 *   or mask) is far outside.
 *   cuDNN against the tiled kernel: each side within its bound of the
 *   exact value, so twice the bound, with magnitudes that need no T x T
 *   pass: out's mag_i = max_{j<=i} |v_j| per element (>= sum_j p_ij |v_jd|),
 *   2 * SDPA_OUT; lse's with M_i bounded by scale D max|q| max|k|, 2 *
 *   lse_bound. dq, dk, dv: against the largest magnitude of the tiled
 *   kernel's tensor at 2e-2 (the conformance suite's convention, 1e-2,
 *   for each side): not derived per element (a sum of terms can be much
 *   smaller than the largest value), a check of gross errors (a wrong
 *   mask, head mapping or scale is off by the values themselves); the
 *   sampled rows check them element by element (measured: 7.7e-3 at
 *   most). */
#include "attention_mags.h"
#include "cuda_kernel_check.h"

#include "backend_select.h"
#include "cuda_backend.h"
#include "cudnn_sdpa.h"
#include "kernels.h"

#define SKIP 77
#define U32 0x1p-24
#define SDPA_OUT 1.2e-2  /* out, dv: 3 bf16 roundings of 2^-8 (top comment) */
#define SDPA_GRAD 1.6e-2 /* dq, dk: 4 of them */
#define GROSS 2e-2       /* cuDNN against the tiled kernel, of the largest magnitude */
/* (gc_check prints bounds to one digit: 1.2e-2 shows as 1e-02, 1.6e-2 as 2e-02) */

static cudaStream_t S2; /* a second stream: the plan's workspace changes hands */
static int n_refused;   /* shapes cuDNN refused (those allowed to be) */

static double lse_bound(int T, int D) { return (6.0 * D + 2.2 * T + 16.0) * U32; }

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* bf16 bits on the device -> fp32 on the host (a host buffer freed by done). */
static float *dl_bf16(const void *d, size_t n) {
    zb_bf16 *bits = (zb_bf16 *)h_alloc(n * sizeof(zb_bf16));
    float *f = h_f(n);
    gc_download(bits, d, n * sizeof(zb_bf16));
    for (size_t i = 0; i < n; i++) f[i] = zb_bf16_to_f32(bits[i]);
    return f;
}
static float *dl_f32(const float *d, size_t n) {
    float *f = h_f(n);
    gc_download(f, d, FB(n));
    return f;
}
static float bf16_round(double x) { return zb_bf16_to_f32(zb_f32_to_bf16((float)x)); }

/* "<what> (T=.. H=.. KVH=.. D=.. B=..)" */
static const char *named(const char *what, int B, int T, int H, int KVH, int D) {
    static char buf[128];
    snprintf(buf, sizeof buf, "%s (B=%d T=%d H=%d KVH=%d D=%d)", what, B, T, H, KVH, D);
    return buf;
}

/* A cuDNN call's status: ZB_OK, then the stream synchronized (a failure
 * while running is reported); false when either failed. */
static int sdpa_ran(const char *op, zb_status st) {
    if (st != ZB_OK) {
        zb_test_checks++;
        char msg[ZB_ERROR_MAX + 64];
        snprintf(msg, sizeof msg, "%s: %s: %s", op, zb_status_name(st), zb_error_message());
        zb_test_fail(__FILE__, __LINE__, msg);
        printf("%-30s FAILED: %s\n", op, zb_error_message());
        return 0;
    }
    return gc_ran(op, cudaSuccess, S);
}

/* ---- small and mid shapes: the full CPU reference ----------------------------------- */
/* may_refuse: cuDNN may refuse this shape (reported, not a failure). */
static void check_full(int B, int T, int H, int KVH, int D, int may_refuse) {
    size_t nq = (size_t)B * T * H * D, nkv = (size_t)B * T * KVH * D;
    size_t np = (size_t)B * H * T * T, nl = (size_t)B * H * T;
    float *q = h_rand(nq, 1.0f), *k = h_rand(nkv, 1.0f), *v = h_rand(nkv, 1.0f);
    float *dout = h_rand(nq, 1.0f);
    void *d_q = UPS(q, nq), *d_k = UPS(k, nkv), *d_v = UPS(v, nkv), *d_dout = UPS(dout, nq);
    void *d_out = NANSS(nq), *d_dq = NANSS(nq), *d_dk = NANSS(nkv), *d_dv = NANSS(nkv);
    float *d_lse = NANS(nl);
    zb_status st = zb_cudnn_sdpa_fwd(S, d_out, d_lse, d_q, d_k, d_v, B, T, H, KVH, D);
    if (st == ZB_ERR_UNSUPPORTED && may_refuse) {
        printf("%-30s refused by cuDNN (the kernel table runs its tiled kernel): %s\n",
               named("cudnn fwd", B, T, H, KVH, D), zb_error_message());
        n_refused++;
        done();
        return;
    }
    if (!sdpa_ran(named("cudnn fwd", B, T, H, KVH, D), st)) {
        done();
        return;
    }
    st = zb_cudnn_sdpa_bwd(S, d_dq, d_dk, d_dv, d_dout, d_q, d_k, d_v, d_out, d_lse, B, T, H, KVH, D);
    int bwd_ok = 0;
    if (st == ZB_ERR_UNSUPPORTED && may_refuse) { /* cuDNN 9.19 refuses T = 1 backward */
        printf("%-30s refused by cuDNN (the kernel table runs its tiled kernel): %s\n",
               named("cudnn bwd", B, T, H, KVH, D), zb_error_message());
        n_refused++;
    } else {
        bwd_ok = sdpa_ran(named("cudnn bwd", B, T, H, KVH, D), st);
    }
    float *out_c = h_f(nq), *p_c = h_f(np), *lse_c = h_f(nl);
    float *dq_c = h_f(nq), *dk_c = h_f(nkv), *dv_c = h_f(nkv);
    ZB_CHECK_OK(zb_cpu_attention_fwd(out_c, p_c, q, k, v, B, T, H, KVH, D));
    ZB_CHECK_OK(zb_cpu_attention_lse(lse_c, q, k, B, T, H, KVH, D));
    ZB_CHECK_OK(zb_cpu_attention_bwd(dq_c, dk_c, dv_c, dout, q, k, v, p_c, B, T, H, KVH, D));
    double *m_out = h_d(nq), *m_lse = h_d(nl), *m_dq = h_d(nq), *m_dk = h_d(nkv), *m_dv = h_d(nkv);
    attention_mags(B, T, H, KVH, D, q, k, v, dout, p_c, m_out, m_lse, m_dq, m_dk, m_dv);
    check_dev_s(named("out", B, T, H, KVH, D), d_out, out_c, m_out, nq, SDPA_OUT);
    check_dev(named("lse", B, T, H, KVH, D), d_lse, lse_c, m_lse, nl, lse_bound(T, D));
    if (bwd_ok) {
        check_dev_s(named("dq", B, T, H, KVH, D), d_dq, dq_c, m_dq, nq, SDPA_GRAD);
        check_dev_s(named("dk", B, T, H, KVH, D), d_dk, dk_c, m_dk, nkv, SDPA_GRAD);
        check_dev_s(named("dv", B, T, H, KVH, D), d_dv, dv_c, m_dv, nkv, SDPA_OUT);
    }
    done();
}

/* ---- long sequences: sampled rows in double ------------------------------------------ */
/* Query row (b, h, i) in double: lse, out [D], dq [D] and their magnitudes,
 * and per key j <= i: p[j], the unscaled dS[j] = p (dP - D_i) and e[j] (the
 * dk magnitude's term). */
typedef struct row_ref {
    double lse, m_lse;
    double *out, *m_out, *dq, *m_dq; /* [D] */
    double *p, *dS, *e;              /* [T] */
} row_ref;

static row_ref row_new(int T, int D) {
    row_ref r;
    r.out = h_d((size_t)D), r.m_out = h_d((size_t)D), r.dq = h_d((size_t)D), r.m_dq = h_d((size_t)D);
    r.p = h_d((size_t)T), r.dS = h_d((size_t)T), r.e = h_d((size_t)T);
    r.lse = r.m_lse = 0.0;
    return r;
}

static void row_compute(row_ref *r, const float *q, const float *k, const float *v,
                        const float *dout, int T, int H, int KVH, int D, int b, int h, int i) {
    int g = h / (H / KVH);
    double scale = 1.0 / sqrt((double)D);
    size_t qrow = (size_t)H * D, kvrow = (size_t)KVH * D;
    const float *qi = q + ((size_t)b * T + i) * qrow + (size_t)h * D;
    const float *di = dout + ((size_t)b * T + i) * qrow + (size_t)h * D;
    const float *kb = k + (size_t)b * T * kvrow + (size_t)g * D;
    const float *vb = v + (size_t)b * T * kvrow + (size_t)g * D;
    double mx = -INFINITY, M = 0.0, sum = 0.0;
    for (int j = 0; j <= i; j++) {
        double s = 0.0, sa = 0.0;
        for (int d = 0; d < D; d++) {
            s += (double)qi[d] * kb[(size_t)j * kvrow + d];
            sa += fabs((double)qi[d] * kb[(size_t)j * kvrow + d]);
        }
        r->p[j] = scale * s;
        if (r->p[j] > mx) mx = r->p[j];
        if (sa > M) M = sa;
    }
    for (int j = 0; j <= i; j++) sum += exp(r->p[j] - mx);
    r->lse = mx + log(sum);
    r->m_lse = 1.0 + scale * M + log((double)i + 1.0);
    for (int j = 0; j <= i; j++) r->p[j] = exp(r->p[j] - mx) / sum;
    for (int d = 0; d < D; d++) r->out[d] = r->m_out[d] = r->dq[d] = r->m_dq[d] = 0.0;
    double Di = 0.0, bi = 0.0;
    for (int j = 0; j <= i; j++) {
        const float *vj = vb + (size_t)j * kvrow;
        double dP = 0.0, a = 0.0;
        for (int d = 0; d < D; d++) {
            r->out[d] += r->p[j] * vj[d];
            r->m_out[d] += r->p[j] * fabs((double)vj[d]);
            dP += (double)di[d] * vj[d];
            a += fabs((double)di[d] * vj[d]);
        }
        r->dS[j] = dP; /* dP for now */
        r->e[j] = a;   /* a_ij for now */
        Di += r->p[j] * dP;
        bi += r->p[j] * a;
    }
    for (int j = 0; j <= i; j++) {
        const float *kj = kb + (size_t)j * kvrow;
        r->dS[j] = r->p[j] * (r->dS[j] - Di);
        r->e[j] = scale * r->p[j] * (r->e[j] + bi);
        for (int d = 0; d < D; d++) {
            r->dq[d] += scale * r->dS[j] * kj[d];
            r->m_dq[d] += r->e[j] * fabs((double)kj[d]);
        }
    }
}

/* Appends n sampled values (got against want, with magnitudes) to a list. */
typedef struct sample_list {
    float *got, *want;
    double *mag;
    size_t n, cap;
} sample_list;

static sample_list samples_new(size_t cap) {
    sample_list l = {h_f(cap), h_f(cap), h_d(cap), 0, cap};
    return l;
}
static void sample_add(sample_list *l, float got, double want, double mag, int round_bf16) {
    if (l->n == l->cap) return;
    l->got[l->n] = got;
    l->want[l->n] = round_bf16 ? bf16_round(want) : (float)want;
    l->mag[l->n] = mag;
    l->n++;
}

static void check_long(int B, int T, int H, int KVH, int D) {
    size_t nq = (size_t)B * T * H * D, nkv = (size_t)B * T * KVH * D, nl = (size_t)B * H * T;
    int rep = H / KVH;
    double scale = 1.0 / sqrt((double)D);
    float *q = h_rand(nq, 1.0f), *k = h_rand(nkv, 1.0f), *v = h_rand(nkv, 1.0f);
    float *dout = h_rand(nq, 1.0f);
    void *d_q = UPS(q, nq), *d_k = UPS(k, nkv), *d_v = UPS(v, nkv), *d_dout = UPS(dout, nq);
    void *c_out = NANSS(nq), *c_dq = NANSS(nq), *c_dk = NANSS(nkv), *c_dv = NANSS(nkv);
    void *t_out = NANSS(nq), *t_dq = NANSS(nq), *t_dk = NANSS(nkv), *t_dv = NANSS(nkv);
    float *c_lse = NANS(nl), *t_lse = NANS(nl);
    if (!sdpa_ran(named("cudnn fwd", B, T, H, KVH, D),
                  zb_cudnn_sdpa_fwd(S, c_out, c_lse, d_q, d_k, d_v, B, T, H, KVH, D)) ||
        !sdpa_ran(named("cudnn bwd", B, T, H, KVH, D),
                  zb_cudnn_sdpa_bwd(S, c_dq, c_dk, c_dv, d_dout, d_q, d_k, d_v, c_out, c_lse, B, T,
                                    H, KVH, D))) {
        done();
        return;
    }
    int tiled_ok =
        gc_ran(named("tiled fwd", B, T, H, KVH, D),
               zb_cuda_attention_fwd(S, ZB_DTYPE_BF16, t_out, t_lse, d_q, d_k, d_v, B, T, H, KVH, D), S) &&
        gc_ran(named("tiled bwd", B, T, H, KVH, D),
               zb_cuda_attention_bwd(S, ZB_DTYPE_BF16, t_dq, t_dk, t_dv, d_dout, d_q, d_k, d_v, c_out,
                                     c_lse, B, T, H, KVH, D), S);
    float *co = dl_bf16(c_out, nq), *cl = dl_f32(c_lse, nl), *cdq = dl_bf16(c_dq, nq);
    float *cdk = dl_bf16(c_dk, nkv), *cdv = dl_bf16(c_dv, nkv);

    /* every element: cuDNN against the tiled kernel */
    if (tiled_ok) {
        float *to = dl_bf16(t_out, nq), *tl = dl_f32(t_lse, nl), *tdq = dl_bf16(t_dq, nq);
        float *tdk = dl_bf16(t_dk, nkv), *tdv = dl_bf16(t_dv, nkv);
        double qmax = 0.0, kmax = 0.0;
        for (size_t x = 0; x < nq; x++) qmax = fmax(qmax, fabs((double)q[x]));
        for (size_t x = 0; x < nkv; x++) kmax = fmax(kmax, fabs((double)k[x]));
        double *m = h_d(nq > nkv ? nq : nkv);
        /* out: per element max_{j<=i} |v_j,d| (a running max along the sequence) */
        for (int b = 0; b < B; b++) {
            for (int g = 0; g < KVH; g++) {
                for (int d = 0; d < D; d++) {
                    double run = 0.0;
                    for (int i = 0; i < T; i++) {
                        run = fmax(run, fabs((double)v[(((size_t)b * T + i) * KVH + g) * D + d]));
                        for (int r = 0; r < rep; r++) {
                            m[(((size_t)b * T + i) * H + (size_t)g * rep + r) * D + d] = run;
                        }
                    }
                }
            }
        }
        gc_check(named("out vs tiled", B, T, H, KVH, D), co, to, m, nq, 2 * SDPA_OUT);
        for (size_t x = 0; x < nl; x++) {
            int i = (int)(x % (size_t)T);
            m[x] = 1.0 + fabs((double)tl[x]) + log((double)i + 1.0) + scale * D * qmax * kmax;
        }
        gc_check(named("lse vs tiled", B, T, H, KVH, D), cl, tl, m, nl, 2 * lse_bound(T, D));
        const float *cg[3] = {cdq, cdk, cdv}, *tg[3] = {tdq, tdk, tdv};
        const char *gn[3] = {"dq vs tiled", "dk vs tiled", "dv vs tiled"};
        for (int w = 0; w < 3; w++) {
            size_t n = w == 0 ? nq : nkv;
            double big = 0.0;
            for (size_t x = 0; x < n; x++) big = fmax(big, fabs((double)tg[w][x]));
            for (size_t x = 0; x < n; x++) m[x] = big;
            gc_check(named(gn[w], B, T, H, KVH, D), cg[w], tg[w], m, n, GROSS);
        }
    }

    /* sampled query rows: out, lse, dq against double */
    size_t n_rows = (size_t)(B > 1 ? 2 : 1) * 4 * 20;
    sample_list so = samples_new(n_rows * D), sl = samples_new(n_rows), sq = samples_new(n_rows * D);
    row_ref r = row_new(T, D);
    int rows[20] = {0, 1, 2, 63, 64, 65, 127, 128, T / 2 - 1, T / 2, T - 65, T - 64, T - 2, T - 1};
    for (int x = 14; x < 20; x++) rows[x] = (int)(kt_next(&rng) % (uint64_t)T);
    int heads[4] = {0, 1, H / 2, H - 1};
    for (int b = 0; b < B; b += (B > 1 ? B - 1 : 1)) {
        for (int hh = 0; hh < 4; hh++) {
            for (int x = 0; x < 20; x++) {
                int h = heads[hh], i = rows[x];
                row_compute(&r, q, k, v, dout, T, H, KVH, D, b, h, i);
                size_t qoff = ((size_t)b * T + i) * H * D + (size_t)h * D;
                for (int d = 0; d < D; d++) {
                    sample_add(&so, co[qoff + d], r.out[d], r.m_out[d], 1);
                    sample_add(&sq, cdq[qoff + d], r.dq[d], r.m_dq[d], 1);
                }
                sample_add(&sl, cl[((size_t)b * H + h) * T + i], r.lse, r.m_lse, 0);
            }
        }
    }
    gc_check(named("out, sampled rows", B, T, H, KVH, D), so.got, so.want, so.mag, so.n, SDPA_OUT);
    gc_check(named("lse, sampled rows", B, T, H, KVH, D), sl.got, sl.want, sl.mag, sl.n,
             lse_bound(T, D));
    gc_check(named("dq, sampled rows", B, T, H, KVH, D), sq.got, sq.want, sq.mag, sq.n, SDPA_GRAD);

    /* the last W key rows of kv heads 0 and KVH-1 (batch 0): dk, dv from
     * the last W query rows of every head in the group */
    enum { W = 32 };
    double *dk = h_d((size_t)W * D), *dv = h_d((size_t)W * D);
    double *mdk = h_d((size_t)W * D), *mdv = h_d((size_t)W * D);
    sample_list sk = samples_new((size_t)2 * W * D), sv = samples_new((size_t)2 * W * D);
    int groups[2] = {0, KVH - 1};
    for (int gg = 0; gg < (KVH > 1 ? 2 : 1); gg++) {
        int g = groups[gg], j0 = T - W;
        memset(dk, 0, sizeof(double) * W * D), memset(dv, 0, sizeof(double) * W * D);
        memset(mdk, 0, sizeof(double) * W * D), memset(mdv, 0, sizeof(double) * W * D);
        for (int h = g * rep; h < (g + 1) * rep; h++) {
            for (int i = j0; i < T; i++) {
                row_compute(&r, q, k, v, dout, T, H, KVH, D, 0, h, i);
                const float *qi = q + (size_t)i * H * D + (size_t)h * D;
                const float *di = dout + (size_t)i * H * D + (size_t)h * D;
                for (int j = j0; j <= i; j++) {
                    for (int d = 0; d < D; d++) {
                        size_t o = (size_t)(j - j0) * D + d;
                        dk[o] += scale * r.dS[j] * qi[d];
                        mdk[o] += r.e[j] * fabs((double)qi[d]);
                        dv[o] += r.p[j] * di[d];
                        mdv[o] += r.p[j] * fabs((double)di[d]);
                    }
                }
            }
        }
        for (int j = j0; j < T; j++) {
            for (int d = 0; d < D; d++) {
                size_t o = (size_t)(j - j0) * D + d, at = ((size_t)j * KVH + g) * D + d;
                sample_add(&sk, cdk[at], dk[o], mdk[o], 1);
                sample_add(&sv, cdv[at], dv[o], mdv[o], 1);
            }
        }
    }
    gc_check(named("dk, last key rows", B, T, H, KVH, D), sk.got, sk.want, sk.mag, sk.n, SDPA_GRAD);
    gc_check(named("dv, last key rows", B, T, H, KVH, D), sv.got, sv.want, sv.mag, sv.n, SDPA_OUT);
    done();
}

/* ---- the contract, the cache, streams, release ---------------------------------------- */
static void check_contract(void) {
    const char *why = NULL;
    ZB_CHECK(!zb_cudnn_sdpa_usable(ZB_DTYPE_F32, 128, &why) && why && *why);
    printf("%-30s not usable: %s\n", "fp32 storage", why ? why : "?");
    why = NULL;
    ZB_CHECK(!zb_cudnn_sdpa_usable(ZB_DTYPE_BF16, 12, &why) && why && *why);
    why = NULL;
    ZB_CHECK(!zb_cudnn_sdpa_usable(ZB_DTYPE_BF16, 136, &why) && why && *why);
    ZB_CHECK(zb_cudnn_sdpa_usable(ZB_DTYPE_BF16, 0, NULL));
    ZB_CHECK(zb_cudnn_sdpa_prepare(false, 1, 16, 2, 1, 12, NULL) == ZB_ERR_UNSUPPORTED);
    ZB_CHECK(zb_cudnn_sdpa_fwd(S, NULL, NULL, NULL, NULL, NULL, 0, 16, 2, 1, 64) == ZB_OK);

    int B = 2, T = 64, H = 4, KVH = 2, D = 64;
    size_t nq = (size_t)B * T * H * D, nkv = (size_t)B * T * KVH * D, nl = (size_t)B * H * T;
    float *q = h_rand(nq, 1.0f), *k = h_rand(nkv, 1.0f), *v = h_rand(nkv, 1.0f);
    void *d_q = UPS(q, nq), *d_k = UPS(k, nkv), *d_v = UPS(v, nkv);
    void *o1 = NANSS(nq), *o2 = NANSS(nq), *o3 = NANSS(nq);
    float *l1 = NANS(nl);
    /* an unaligned buffer: refused before anything is queued */
    zb_status st = zb_cudnn_sdpa_fwd(S, (char *)o1 + 2, l1, d_q, d_k, d_v, B, T, H, KVH, D);
    ZB_CHECK_MSG(st == ZB_ERR_UNSUPPORTED && strstr(zb_error_message(), "aligned"),
                 "unaligned out: %s (%s)", zb_status_name(st), zb_error_message());
    /* the same plan on S, then on S2 (the workspace handed over), then rebuilt */
    if (!sdpa_ran("cudnn fwd on S", zb_cudnn_sdpa_fwd(S, o1, l1, d_q, d_k, d_v, B, T, H, KVH, D))) {
        done();
        return;
    }
    ZB_CHECK_OK(zb_cudnn_sdpa_fwd(S2, o2, l1, d_q, d_k, d_v, B, T, H, KVH, D));
    GC_CUDA(cudaStreamSynchronize(S2));
    char desc[512];
    zb_cudnn_sdpa_describe(desc, sizeof desc);
    printf("%-30s %zu bytes of workspace; %s\n", "cudnn plans", zb_cudnn_sdpa_workspace_bytes(), desc);
    zb_cudnn_sdpa_release();
    zb_cudnn_sdpa_release(); /* twice: harmless */
    ZB_CHECK(zb_cudnn_sdpa_workspace_bytes() == 0);
    sdpa_ran("cudnn fwd after release", zb_cudnn_sdpa_fwd(S, o3, l1, d_q, d_k, d_v, B, T, H, KVH, D));
    size_t bytes = nq * sizeof(zb_bf16);
    unsigned char *h1 = h_alloc(bytes), *h2 = h_alloc(bytes), *h3 = h_alloc(bytes);
    gc_download(h1, o1, bytes), gc_download(h2, o2, bytes), gc_download(h3, o3, bytes);
    int same = memcmp(h1, h2, bytes) == 0 && memcmp(h1, h3, bytes) == 0;
    printf("%-30s %s\n", "cache, second stream, rebuild", same ? "bit for bit: pass" : "DIFFER: FAIL");
    ZB_CHECK_MSG(same, "the forward's output changed with the stream or after release");
    done();
}

/* The cuda kernel table picks cuDNN for bf16 (kernels_cuda.c). */
static void check_table(void) {
    const char *mode = getenv("ZB_ATTENTION");
    int expect = !mode || !*mode || strcmp(mode, "auto") == 0;
    if (!expect) printf("ZB_ATTENTION=%s: the kernel table's choice is not checked\n", mode);
    zb_device_config cfg = {0, 0, 1, 60.0, NULL, NULL};
    zb_device *dev = NULL;
    zb_stream *gs = NULL;
    ZB_CHECK_OK(zb_device_create("cuda", &cfg, &dev));
    if (!dev) return;
    ZB_CHECK_OK(dev->ops->stream_create(dev, "compute", &gs));
    const zb_kernels *K = zb_kernels_for(dev);
    ZB_CHECK(K && K->attention_impl);
    if (!gs || !K || !K->attention_impl) {
        zb_dev_destroy(dev);
        return;
    }
    cudaStream_t s = (cudaStream_t)zb_cuda_stream_handle(gs);
    zb_kcall c32 = {gs, "attention", 0, ZB_DTYPE_F32, 0.0}, c16 = {gs, "attention", 0, ZB_DTYPE_BF16, 0.0};
    int B = 2, T = 64, H = 4, KVH = 2, D = 64;
    size_t nq = (size_t)B * T * H * D, nkv = (size_t)B * T * KVH * D, nl = (size_t)B * H * T;
    float *q = h_rand(nq, 1.0f), *k = h_rand(nkv, 1.0f), *v = h_rand(nkv, 1.0f);
    void *d_q = UPS(q, nq), *d_k = UPS(k, nkv), *d_v = UPS(v, nkv);
    void *o_table = NANSS(nq), *o_direct = NANSS(nq), *o_after = NANSS(nq);
    float *l1 = NANS(nl);
    ZB_CHECK_OK(K->attention_fwd(&c16, o_table, l1, d_q, d_k, d_v, B, T, H, KVH, D));
    ZB_CHECK_OK(dev->ops->stream_sync(gs));
    const char *impl16 = K->attention_impl(&c16), *impl32 = K->attention_impl(&c32);
    printf("%-30s bf16 %s, fp32 %s\n", "kernel table attention_impl", impl16, impl32);
    if (expect) {
        ZB_CHECK_MSG(!strcmp(impl16, "cudnn-sdpa"), "bf16 attention_impl %s", impl16);
        ZB_CHECK_MSG(!strcmp(impl32, "cuda-tiled"), "fp32 attention_impl %s", impl32);
    }
    ZB_CHECK_OK(zb_cudnn_sdpa_fwd(s, o_direct, l1, d_q, d_k, d_v, B, T, H, KVH, D));
    ZB_CHECK_OK(dev->ops->stream_sync(gs));
    /* a head dim cuDNN does not take: the tiled kernel, and the label says both ran */
    int D2 = 12;
    size_t nq2 = (size_t)B * T * H * D2, nkv2 = (size_t)B * T * KVH * D2;
    float *q2 = h_rand(nq2, 1.0f), *k2 = h_rand(nkv2, 1.0f);
    void *d_q2 = UPS(q2, nq2), *d_k2 = UPS(k2, nkv2), *o2 = NANSS(nq2);
    ZB_CHECK_OK(K->attention_fwd(&c16, o2, l1, d_q2, d_k2, d_k2, B, T, H, KVH, D2));
    ZB_CHECK_OK(dev->ops->stream_sync(gs));
    impl16 = K->attention_impl(&c16);
    printf("%-30s after a D=%d call: %s\n", "kernel table attention_impl", D2, impl16);
    if (expect) ZB_CHECK_MSG(!strcmp(impl16, "cudnn-sdpa+cuda-tiled"), "attention_impl %s", impl16);
    dev->ops->stream_destroy(gs);
    zb_dev_destroy(dev); /* releases cuDNN's plans (device_cuda.c) */
    ZB_CHECK(zb_cudnn_sdpa_workspace_bytes() == 0);
    sdpa_ran("cudnn fwd after device teardown",
             zb_cudnn_sdpa_fwd(S, o_after, l1, d_q, d_k, d_v, B, T, H, KVH, D));
    size_t bytes = nq * sizeof(zb_bf16);
    unsigned char *h1 = h_alloc(bytes), *h2 = h_alloc(bytes), *h3 = h_alloc(bytes);
    gc_download(h1, o_table, bytes), gc_download(h2, o_direct, bytes), gc_download(h3, o_after, bytes);
    int same = memcmp(h2, h3, bytes) == 0 && (!expect || memcmp(h1, h2, bytes) == 0);
    printf("%-30s %s\n", "table, direct, after teardown", same ? "bit for bit: pass" : "DIFFER: FAIL");
    ZB_CHECK_MSG(same, "the kernel table's or the rebuilt plan's output differs from the direct call");
    done();
}

int main(int argc, char **argv) {
    int rc = ckc_begin("test_cudnn_sdpa", argc, argv);
    if (rc != 0) return rc;
    const char *why = NULL;
    if (!zb_cudnn_sdpa_usable(ZB_DTYPE_BF16, 128, &why)) {
        printf("test_cudnn_sdpa: cuDNN's SDPA is not usable here (%s): skipped\n", why);
        GC_CUDA(cudaStreamDestroy(S));
        return SKIP;
    }
    GC_CUDA(cudaStreamCreate(&S2));
    ckc_pass(ZB_DTYPE_BF16);
    check_contract();
    /* must run: what training shapes look like (T a multiple of 64, D 64 or 128) */
    check_full(2, 64, 4, 2, 64, 0);    /* grouped heads */
    check_full(1, 128, 4, 4, 128, 0);  /* no grouping (KVH == H) */
    check_full(1, 64, 16, 1, 128, 0);  /* one kv head for 16 query heads */
    check_full(1, 256, 4, 1, 128, 0);  /* production's head dim */
    /* may be refused (the kernel table then runs its tiled kernel): checked when run */
    check_full(2, 37, 4, 2, 64, 1);    /* odd T */
    check_full(1, 150, 6, 2, 72, 1);   /* D = 72 */
    check_full(1, 20, 3, 3, 40, 1);    /* D = 40, no grouping */
    check_full(2, 1, 2, 1, 64, 1);     /* T = 1 */
    check_full(1, 129, 2, 2, 8, 1);    /* D = 8, the conformance suite's */
    printf("%-30s %d of 5 may-refuse shapes refused\n", "cudnn refusals", n_refused);
    check_table();
    const char *real = getenv("ZB_GPU_REALISTIC_SHAPES");
    if (real && strcmp(real, "1") == 0) {
        /* the full reference at T = 2048 with 4 query heads on 2: ~12 s of
         * CPU here, ~25 s on the H200 machine's (with 8 on 2 the whole test
         * took 64 s there, too near its 90 s TIMEOUT) */
        double t0 = now_s();
        check_full(1, 2048, 4, 2, 128, 0);
        double t1 = now_s();
        check_long(2, 4096, 32, 8, 128);
        double t2 = now_s();
        check_long(1, 8192, 32, 8, 128);
        printf("test_cudnn_sdpa: T = 2048 full reference %.1f s, T = 4096 %.1f s, T = 8192 %.1f s\n",
               t1 - t0, t2 - t1, now_s() - t2);
    }
    char desc[512];
    zb_cudnn_sdpa_describe(desc, sizeof desc);
    printf("test_cudnn_sdpa: %s\n", desc);
    GC_CUDA(cudaStreamDestroy(S2));
    return ckc_end("test_cudnn_sdpa");
}
