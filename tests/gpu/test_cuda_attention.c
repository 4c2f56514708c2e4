/* GPU kernel check, attention: the fused zb_cuda_attention_fwd (out, lse) and
 * zb_cuda_attention_bwd (dq, dk, dv) against the CPU reference kernels, in
 * fp32 and in bf16 storage. out is checked against zb_cpu_attention_fwd,
 * lse against zb_cpu_attention_lse, and the backward, fed the CUDA forward's
 * out and lse (as a training step does), against zb_cpu_attention_bwd given
 * the reference's probabilities. Shapes: grouped query heads 2:1, 3:1, 4:1
 * and 8:1 and none (KVH == H); T not a multiple of the kernels' tiles; odd
 * head dims (D = 3, D = 1) and each head-dim bucket of the kernels (64-row
 * tiles up to D = 128, 32 up to 256, 16 up to 512); production's head dim
 * at T = 256 (4:1) and at T = 2048 (B 1, H 2, KVH 1: the longest sequence
 * the CPU emulator affords, there in the fp32 pass only); a head dim over
 * 512 refused. With ZB_GPU_REALISTIC_SHAPES=1 in the environment
 * (ci/gpu-check sets it; the emulator is too slow for it) a production
 * shape is added: T = 1024, D = 128, 8 query heads on 2 kv heads. Errors
 * are measured against the magnitudes of each output's terms
 * (attention_mags), under the REORDER bound derived for the shape
 * (reorder_for; BF16 for bf16 outputs, plus 2^-9 for the backward's:
 * bwd_bound). Method, bounds and seed: cuda_kernel_check.h; the other
 * kernels and the unknown-dtype refusal of every launcher, attention's
 * included: test_cuda_kernels.c. */
#include "attention_mags.h"
#include "cuda_kernel_check.h"

/* ---- attention ------------------------------------------------------------------- */
/* The fp32 reorder bound for this shape: the longest chain is dk's, rep*T
 * + D terms (plus the dP sums feeding it); two orders of a k-term fp32 sum
 * differ by at most 2 k 2^-24 of sum|terms| (Higham), taken 3 k 2^-24 for
 * the feeding sums (the scores' D-term sums reach every output through
 * exp, and the online softmax rescales its sums once per key tile, fewer
 * than T more roundings). The small shapes stay at REORDER
 * (3 * 522 * 2^-24 = 9.3e-5); T = 256, D = 128, rep 4 gets 2.1e-4 and
 * T = 2048, rep 2 gets 7.6e-4. */
static double reorder_for(int T, int H, int KVH, int D) {
    double k = (double)(H / KVH) * T + D;
    double b = 3.0 * k * 0x1p-24;
    return b > REORDER ? b : REORDER;
}

/* The bound of the backward's outputs. bf16: the backward reads out as
 * stored, rounded to bf16 (relative error <= 2^-9), in Di = dout . out,
 * which stands for sum_j p_ij dP_ij; |dout . out| <= b_i, so Di moves by at
 * most 2^-9 b_i, dS_ij by at most 2^-9 e_ij and dq, dk, dv by at most 2^-9
 * of their magnitude, on top of their own rounding (BF16). */
static double bwd_bound(double ro) { return DT == ZB_DTYPE_BF16 ? BF16 + 0x1p-9 : ro; }

static void check_attention(int B, int T, int H, int KVH, int D) {
    const double RO = reorder_for(T, H, KVH, D);
    size_t nq = (size_t)B * T * H * D, nkv = (size_t)B * T * KVH * D;
    size_t np = (size_t)B * H * T * T, nl = (size_t)B * H * T;
    float *q = h_rand(nq, 1.0f), *k = h_rand(nkv, 1.0f), *v = h_rand(nkv, 1.0f);
    float *dout = h_rand(nq, 1.0f);
    float *out_c = h_f(nq), *p_c = h_f(np), *lse_c = h_f(nl);
    float *dq_c = h_f(nq), *dk_c = h_f(nkv), *dv_c = h_f(nkv);
    ZB_CHECK_OK(zb_cpu_attention_fwd(out_c, p_c, q, k, v, B, T, H, KVH, D));
    ZB_CHECK_OK(zb_cpu_attention_lse(lse_c, q, k, B, T, H, KVH, D));
    ZB_CHECK_OK(zb_cpu_attention_bwd(dq_c, dk_c, dv_c, dout, q, k, v, p_c, B, T, H, KVH, D));
    double *m_out = h_d(nq), *m_lse = h_d(nl), *m_dq = h_d(nq), *m_dk = h_d(nkv);
    double *m_dv = h_d(nkv);
    attention_mags(B, T, H, KVH, D, q, k, v, dout, p_c, m_out, m_lse, m_dq, m_dk, m_dv);

    char tag[64], name[96];
    snprintf(tag, sizeof tag, "(T=%d H=%d KVH=%d D=%d)", T, H, KVH, D);
    void *d_q = UPS(q, nq), *d_k = UPS(k, nkv), *d_v = UPS(v, nkv);
    void *d_out = NANSS(nq);
    float *d_lse = NANS(nl);
    cudaError_t e = zb_cuda_attention_fwd(S, DT, d_out, d_lse, d_q, d_k, d_v, B, T, H, KVH, D);
    if (!gc_ran("attention_fwd", e, S)) {
        done(); /* the backward needs the forward's out and lse */
        return;
    }
    snprintf(name, sizeof name, "attention_fwd out %s", tag);
    check_dev_s(name, d_out, out_c, m_out, nq, RO);
    snprintf(name, sizeof name, "attention_fwd lse %s", tag);
    check_dev(name, d_lse, lse_c, m_lse, nl, RO);
    /* the backward reads the CUDA forward's out and lse */
    void *d_dout = UPS(dout, nq);
    void *d_dq = NANSS(nq), *d_dk = NANSS(nkv), *d_dv = NANSS(nkv);
    if (gc_ran("attention_bwd", zb_cuda_attention_bwd(S, DT, d_dq, d_dk, d_dv, d_dout, d_q, d_k,
                                                      d_v, d_out, d_lse, B, T, H, KVH, D), S)) {
        snprintf(name, sizeof name, "attention_bwd dq %s", tag);
        check_dev_s(name, d_dq, dq_c, m_dq, nq, bwd_bound(RO));
        snprintf(name, sizeof name, "attention_bwd dk %s", tag);
        check_dev_s(name, d_dk, dk_c, m_dk, nkv, bwd_bound(RO));
        snprintf(name, sizeof name, "attention_bwd dv %s", tag);
        check_dev_s(name, d_dv, dv_c, m_dv, nkv, bwd_bound(RO));
    }
    done();
}

/* A head dim over the kernels' 512 is refused before anything is queued
 * (the NULL buffers are never touched). */
static void check_head_dim_limit(void) {
    cudaError_t ef = zb_cuda_attention_fwd(S, DT, NULL, NULL, NULL, NULL, NULL, 1, 2, 2, 1, 513);
    cudaError_t eb = zb_cuda_attention_bwd(S, DT, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                           NULL, 1, 2, 2, 1, 513);
    int pass = ef == cudaErrorInvalidValue && eb == cudaErrorInvalidValue;
    printf("%-30s D = 513 refused: %s, %s  %s\n", tagged("attention fwd, bwd"),
           cudaGetErrorName(ef), cudaGetErrorName(eb), pass ? "pass" : "FAIL");
    ZB_CHECK_MSG(pass, "attention with D = 513: %s, %s", cudaGetErrorName(ef),
                 cudaGetErrorName(eb));
}

int main(int argc, char **argv) {
    int rc = ckc_begin("test_cuda_attention", argc, argv);
    if (rc != 0) return rc;
    /* gc_self_test (the comparison can fail) runs in test_cuda_kernels: the
     * same gpu_check.h code. */
    const char *real = getenv("ZB_GPU_REALISTIC_SHAPES");
#ifdef ZB_CUDA_EMU
    const int emulated = 1;
#else
    const int emulated = 0;
#endif
    for (int pass = 0; pass < 2; pass++) {
        ckc_pass(pass ? ZB_DTYPE_BF16 : ZB_DTYPE_F32);
        check_attention(2, 37, 4, 2, 24);   /* GQA 2:1, T not a multiple of a tile */
        check_attention(1, 150, 6, 2, 72);  /* GQA 3:1, three tiles */
        check_attention(1, 20, 3, 3, 40);   /* no grouping (KVH == H) */
        check_attention(1, 100, 8, 1, 16);  /* GQA 8:1 */
        check_attention(2, 11, 4, 2, 3);    /* odd D */
        check_attention(1, 9, 2, 1, 1);     /* D = 1 */
        check_attention(1, 70, 2, 1, 200);  /* 128 < D <= 256: 32-row tiles */
        check_attention(1, 37, 2, 2, 300);  /* 256 < D <= 512: 16-row tiles */
        check_attention(1, 256, 4, 1, 128); /* production's head dim, GQA 4:1 */
        /* a long sequence, 32 tiles; on the emulator (about 20 s a pass) in
         * the fp32 pass only, whose bound is the tight one */
        if (!emulated || pass == 0) check_attention(1, 2048, 2, 1, 128);
        check_head_dim_limit();
        if (real && strcmp(real, "1") == 0) check_attention(1, 1024, 8, 2, 128);
    }
    return ckc_end("test_cuda_attention");
}
