/* Causal GQA attention on the cpu device through cblas_sgemm (cpu_fast.h),
 * forward and backward, checked against kernels/cpu/attention.c.
 *
 * Shapes: q, out, dout, dq [B, T, H, D]; k, v, dk, dv [B, T, KVH, D];
 * probs [B, H, T, T] (row i: softmax over keys j <= i, zeros above the
 * diagonal). Query head h reads kv head g = h / (H / KVH). A head's rows
 * are strided in memory (one row per token, H*D or KVH*D floats apart), so
 * each head is a matrix with that leading dimension and no copy is made.
 *
 * Causality by blocks of ZB_ATTN_ROWS query rows: block [r0, r1) needs
 * keys [0, r1) only, so its GEMMs cover that prefix and the work is about
 * half of the full T x T (plus half a block per row). */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_fast.h"

#define ZB_ATTN_ROWS 64

static zb_status check_heads(int H, int KVH, int D, const char *what) {
    if (H <= 0 || KVH <= 0 || H % KVH != 0 || D <= 0) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "%s: query heads %d must be a positive multiple of kv heads %d (head dim %d > 0)", what,
                       H, KVH, D);
    }
    return ZB_OK;
}

zb_status zb_cpu_attention_fwd_fast(float *out, float *probs, const float *q, const float *k, const float *v,
                                    int B, int T, int H, int KVH, int D) {
    ZB_TRY(check_heads(H, KVH, D, "attention"));
    int rep = H / KVH;
    float scale = (float)(1.0 / sqrt((double)D));
    int qrow = H * D, kvrow = KVH * D;
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < H; h++) {
            const float *qh = q + (size_t)b * (size_t)T * (size_t)qrow + (size_t)h * (size_t)D;
            const float *kg = k + (size_t)b * (size_t)T * (size_t)kvrow + (size_t)(h / rep) * (size_t)D;
            const float *vg = v + (size_t)b * (size_t)T * (size_t)kvrow + (size_t)(h / rep) * (size_t)D;
            float *oh = out + (size_t)b * (size_t)T * (size_t)qrow + (size_t)h * (size_t)D;
            float *ph = probs + ((size_t)b * (size_t)H + (size_t)h) * (size_t)T * (size_t)T;
            for (int r0 = 0; r0 < T; r0 += ZB_ATTN_ROWS) {
                int r1 = r0 + ZB_ATTN_ROWS < T ? r0 + ZB_ATTN_ROWS : T, rows = r1 - r0;
                float *pb = ph + (size_t)r0 * (size_t)T;
                /* S[r0:r1, 0:r1] = scale Q[r0:r1] K[0:r1]^T */
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, r1, D, scale,
                            qh + (size_t)r0 * (size_t)qrow, qrow, kg, kvrow, 0.0f, pb, T);
                for (int i = r0; i < r1; i++) {
                    float *p = ph + (size_t)i * (size_t)T;
                    zb_cpu_softmax_row_fast(p, i + 1);
                    memset(p + i + 1, 0, (size_t)(T - i - 1) * sizeof *p);
                }
                /* O[r0:r1] = P[r0:r1, 0:r1] V[0:r1] (zeros above the diagonal) */
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, D, r1, 1.0f, pb, T, vg, kvrow,
                            0.0f, oh + (size_t)r0 * (size_t)qrow, qrow);
            }
        }
    }
    return ZB_OK;
}

zb_status zb_cpu_attention_bwd_fast(float *dq, float *dk, float *dv, const float *dout, const float *q,
                                    const float *k, const float *v, const float *probs, int B, int T, int H,
                                    int KVH, int D) {
    ZB_TRY(check_heads(H, KVH, D, "attention backward"));
    int rep = H / KVH;
    float scale = (float)(1.0 / sqrt((double)D));
    int qrow = H * D, kvrow = KVH * D;
    size_t nkv = (size_t)B * (size_t)T * (size_t)kvrow;
    /* dS of one block of rows; ZB_ATTN_ROWS x T floats. */
    float *ds = (float *)malloc(sizeof(float) * (size_t)ZB_ATTN_ROWS * (size_t)(T > 0 ? T : 1));
    if (!ds) return ZB_FAIL(ZB_ERR_NOMEM, "attention backward: out of memory for %d x %d scores", ZB_ATTN_ROWS, T);
    memset(dk, 0, nkv * sizeof *dk);
    memset(dv, 0, nkv * sizeof *dv);
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < H; h++) {
            size_t qoff = (size_t)b * (size_t)T * (size_t)qrow + (size_t)h * (size_t)D;
            size_t kvoff = (size_t)b * (size_t)T * (size_t)kvrow + (size_t)(h / rep) * (size_t)D;
            const float *qh = q + qoff, *doh = dout + qoff, *kg = k + kvoff, *vg = v + kvoff;
            float *dqh = dq + qoff, *dkg = dk + kvoff, *dvg = dv + kvoff;
            const float *ph = probs + ((size_t)b * (size_t)H + (size_t)h) * (size_t)T * (size_t)T;
            for (int r0 = 0; r0 < T; r0 += ZB_ATTN_ROWS) {
                int r1 = r0 + ZB_ATTN_ROWS < T ? r0 + ZB_ATTN_ROWS : T, rows = r1 - r0;
                const float *pb = ph + (size_t)r0 * (size_t)T;
                /* dP[rows, 0:r1] = dO[r0:r1] V[0:r1]^T, into ds (ld r1) */
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, r1, D, 1.0f,
                            doh + (size_t)r0 * (size_t)qrow, qrow, vg, kvrow, 0.0f, ds, r1);
                /* dS = P (dP - sum_j P dP) scale; P is zero above the diagonal */
                for (int i = 0; i < rows; i++) {
                    zb_cpu_softmax_bwd_row_fast(ds + (size_t)i * (size_t)r1, pb + (size_t)i * (size_t)T, r1, scale);
                }
                /* dQ[r0:r1] = dS K[0:r1] */
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, D, r1, 1.0f, ds, r1, kg, kvrow,
                            0.0f, dqh + (size_t)r0 * (size_t)qrow, qrow);
                /* dK[0:r1] += dS^T Q[r0:r1];  dV[0:r1] += P^T dO[r0:r1] */
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, r1, D, rows, 1.0f, ds, r1,
                            qh + (size_t)r0 * (size_t)qrow, qrow, 1.0f, dkg, kvrow);
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, r1, D, rows, 1.0f, pb, T,
                            doh + (size_t)r0 * (size_t)qrow, qrow, 1.0f, dvg, kvrow);
            }
        }
    }
    free(ds);
    return ZB_OK;
}
