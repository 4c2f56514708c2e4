/* GPU kernel check, attention: zb_cuda_attention_fwd (out, probs) and
 * zb_cuda_attention_bwd (dq, dk, dv) against the CPU reference kernels, in
 * fp32 and in bf16 storage, on six shapes: grouped query heads (KVH < H),
 * a long sequence (T = 150, D = 72), production's head dim (T = 256,
 * D = 128, 4 query heads on 1 kv head: the longest sums the emulator
 * affords, under the bound derived for their length), no
 * grouping (KVH == H), and odd head dims D = 3 and D = 1 (the bf16
 * backward's pdp slot spans two elements, or there is none and pdp is
 * recomputed; see attention_bwd.cu). With ZB_GPU_REALISTIC_SHAPES=1 in
 * the environment (ci/gpu-check sets it; the CPU emulator is too slow for
 * it) a production shape is added: T = 1024, D = 128, 8 query heads on 2
 * kv heads. The backward reads the CPU's probs
 * (rounded to bf16 in the bf16 pass) on both sides. Errors are measured
 * against the magnitudes of each output's terms (attention_mags), under
 * the REORDER bound (BF16 for bf16 outputs). Method, bounds and seed:
 * cuda_kernel_check.h; the other kernels and the unknown-dtype refusal of
 * every launcher, attention's included: test_cuda_kernels.c. */
#include "cuda_kernel_check.h"

/* ---- attention ------------------------------------------------------------------- */
/* Magnitudes of the attention outputs' terms (mag_i: cuda_kernel_check.h), with
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

/* The fp32 reorder bound for this shape: the longest chain is dk's, rep*T
 * + D terms (plus the dP sums feeding it); two orders of a k-term fp32 sum
 * differ by at most 2 k 2^-24 of sum|terms| (Higham), taken 3 k 2^-24 for
 * the feeding sums. The small shapes stay at REORDER (3 * 522 * 2^-24 =
 * 9.3e-5); T = 1024, D = 128, rep 4 gets 7.6e-4. */
static double reorder_for(int T, int H, int KVH, int D) {
    double k = (double)(H / KVH) * T + D;
    double b = 3.0 * k * 0x1p-24;
    return b > REORDER ? b : REORDER;
}

static void check_attention(int B, int T, int H, int KVH, int D) {
    const double RO = reorder_for(T, H, KVH, D);
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
        check_dev_s(name, d_out, out_c, m_out, nq, RO);
        snprintf(name, sizeof name, "attention_fwd probs %s", tag);
        check_dev_s(name, d_p, p_c, m_p, np, RO);
    }
    /* the backward reads the CPU's probs, so both sides start equal */
    void *d_pc = UPS(p_in, np), *d_dout = UPS(dout, nq);
    void *d_dq = NANSS(nq), *d_dk = NANSS(nkv), *d_dv = NANSS(nkv);
    if (gc_ran("attention_bwd", zb_cuda_attention_bwd(S, DT, d_dq, d_dk, d_dv, d_dout, d_q, d_k,
                                                      d_v, d_pc, B, T, H, KVH, D), S)) {
        snprintf(name, sizeof name, "attention_bwd dq %s", tag);
        check_dev_s(name, d_dq, dq_c, m_dq, nq, RO);
        snprintf(name, sizeof name, "attention_bwd dk %s", tag);
        check_dev_s(name, d_dk, dk_c, m_dk, nkv, RO);
        snprintf(name, sizeof name, "attention_bwd dv %s", tag);
        check_dev_s(name, d_dv, dv_c, m_dv, nkv, RO);
    }
    done();
}

int main(int argc, char **argv) {
    int rc = ckc_begin("test_cuda_attention", argc, argv);
    if (rc != 0) return rc;
    /* gc_self_test (the comparison can fail) runs in test_cuda_kernels: the
     * same gpu_check.h code. */
    for (int pass = 0; pass < 2; pass++) {
        ckc_pass(pass ? ZB_DTYPE_BF16 : ZB_DTYPE_F32);
        check_attention(2, 37, 4, 2, 24);
        check_attention(1, 150, 6, 2, 72);
        check_attention(1, 20, 3, 3, 40); /* no grouping (KVH == H) */
        check_attention(2, 11, 4, 2, 3);  /* odd D: bf16's pdp slot spans two elements */
        check_attention(1, 9, 2, 1, 1);   /* D = 1: bf16 recomputes pdp (no slot) */
        check_attention(1, 256, 4, 1, 128); /* production's head dim, GQA 4:1, sums of 1152 terms */
        const char *real = getenv("ZB_GPU_REALISTIC_SHAPES");
        if (real && strcmp(real, "1") == 0) check_attention(1, 1024, 8, 2, 128);
    }
    return ckc_end("test_cuda_attention");
}
