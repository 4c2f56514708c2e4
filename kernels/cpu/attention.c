/* Causal softmax attention with grouped-query attention (GQA), forward and
 * backward. Shapes: q, out, dout, dq [B, T, H, D]; k, v, dk, dv
 * [B, T, KVH, D]; probs [B, H, T, T] (row i holds softmax over keys j <= i,
 * zeros for j > i). Query head h reads kv head h / (H / KVH) (LLaMA's
 * repeat_kv). Scale 1 / sqrt(D). Dot products and softmax sums accumulate in
 * double; outputs and saved probabilities are fp32. */
#include <math.h>
#include <string.h>

#include "zb_cpu_kernels.h"

static zb_status check_heads(int H, int KVH, int D, const char *what) {
    if (H <= 0 || KVH <= 0 || H % KVH != 0 || D <= 0) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "%s: query heads %d must be a positive multiple of kv heads %d "
                       "(head dim %d > 0)",
                       what, H, KVH, D);
    }
    return ZB_OK;
}

static double dot_f(const float *a, const float *b, int n) {
    double s = 0.0;
    for (int d = 0; d < n; d++) s += (double)a[d] * (double)b[d];
    return s;
}

zb_status zb_cpu_attention_fwd(float *out, float *probs, const float *q, const float *k,
                               const float *v, int B, int T, int H, int KVH, int D) {
    zb_status st = check_heads(H, KVH, D, "attention");
    if (st != ZB_OK) return st;
    int rep = H / KVH;
    double scale = 1.0 / sqrt((double)D);
    size_t qrow = (size_t)H * (size_t)D, kvrow = (size_t)KVH * (size_t)D;
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < H; h++) {
            int g = h / rep;
            const float *kb = k + (size_t)b * (size_t)T * kvrow + (size_t)g * (size_t)D;
            const float *vb = v + (size_t)b * (size_t)T * kvrow + (size_t)g * (size_t)D;
            for (int i = 0; i < T; i++) {
                const float *qi = q + ((size_t)b * (size_t)T + (size_t)i) * qrow + (size_t)h * D;
                float *oi = out + ((size_t)b * (size_t)T + (size_t)i) * qrow + (size_t)h * D;
                float *p = probs + (((size_t)b * (size_t)H + (size_t)h) * (size_t)T + i) * T;
                /* scores into p, then the max-subtracted softmax in place */
                double mx = -INFINITY;
                for (int j = 0; j <= i; j++) {
                    double s = scale * dot_f(qi, kb + (size_t)j * kvrow, D);
                    p[j] = (float)s;
                    if ((double)p[j] > mx) mx = (double)p[j];
                }
                double sum = 0.0;
                for (int j = 0; j <= i; j++) sum += exp((double)p[j] - mx);
                for (int j = 0; j <= i; j++) p[j] = (float)(exp((double)p[j] - mx) / sum);
                for (int j = i + 1; j < T; j++) p[j] = 0.0f;
                for (int d = 0; d < D; d++) {
                    double acc = 0.0;
                    for (int j = 0; j <= i; j++) acc += (double)p[j] * (double)vb[(size_t)j * kvrow + d];
                    oi[d] = (float)acc;
                }
            }
        }
    }
    return ZB_OK;
}

/* With P the softmax row of query i and dP_j = dout_i . v_j:
 *   dS_j = P_j (dP_j - sum_k P_k dP_k)
 *   dq_i = scale sum_j dS_j k_j,  dk_j += scale dS_j q_i,  dv_j += P_j dout_i.
 * Two passes over j (the first for sum_k P_k dP_k) avoid a scratch row. */
zb_status zb_cpu_attention_bwd(float *dq, float *dk, float *dv, const float *dout,
                               const float *q, const float *k, const float *v,
                               const float *probs, int B, int T, int H, int KVH, int D) {
    zb_status st = check_heads(H, KVH, D, "attention backward");
    if (st != ZB_OK) return st;
    int rep = H / KVH;
    float scale = (float)(1.0 / sqrt((double)D));
    size_t qrow = (size_t)H * (size_t)D, kvrow = (size_t)KVH * (size_t)D;
    size_t nq = (size_t)B * (size_t)T * qrow, nkv = (size_t)B * (size_t)T * kvrow;
    memset(dq, 0, nq * sizeof *dq);
    memset(dk, 0, nkv * sizeof *dk);
    memset(dv, 0, nkv * sizeof *dv);
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < H; h++) {
            size_t kvoff = (size_t)b * (size_t)T * kvrow + (size_t)(h / rep) * (size_t)D;
            const float *kb = k + kvoff, *vb = v + kvoff;
            float *dkb = dk + kvoff, *dvb = dv + kvoff;
            for (int i = 0; i < T; i++) {
                size_t qoff = ((size_t)b * (size_t)T + (size_t)i) * qrow + (size_t)h * (size_t)D;
                const float *qi = q + qoff, *doi = dout + qoff;
                float *dqi = dq + qoff;
                const float *p = probs + (((size_t)b * (size_t)H + (size_t)h) * (size_t)T + i) * T;
                double pdp = 0.0;
                for (int j = 0; j <= i; j++) pdp += (double)p[j] * dot_f(doi, vb + (size_t)j * kvrow, D);
                for (int j = 0; j <= i; j++) {
                    const float *kj = kb + (size_t)j * kvrow;
                    float *dkj = dkb + (size_t)j * kvrow, *dvj = dvb + (size_t)j * kvrow;
                    double dp = dot_f(doi, vb + (size_t)j * kvrow, D);
                    float ds = (float)((double)p[j] * (dp - pdp)) * scale;
                    for (int d = 0; d < D; d++) {
                        dqi[d] += ds * kj[d];
                        dkj[d] += ds * qi[d];
                        dvj[d] += p[j] * doi[d];
                    }
                }
            }
        }
    }
    return ZB_OK;
}

zb_status zb_cpu_attention_lse(float *lse, const float *q, const float *k, int B, int T, int H,
                               int KVH, int D) {
    zb_status st = check_heads(H, KVH, D, "attention lse");
    if (st != ZB_OK) return st;
    int rep = H / KVH;
    double scale = 1.0 / sqrt((double)D);
    size_t qrow = (size_t)H * (size_t)D, kvrow = (size_t)KVH * (size_t)D;
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < H; h++) {
            const float *kb = k + (size_t)b * (size_t)T * kvrow + (size_t)(h / rep) * (size_t)D;
            for (int i = 0; i < T; i++) {
                const float *qi = q + ((size_t)b * (size_t)T + (size_t)i) * qrow + (size_t)h * D;
                double mx = -INFINITY, sum = 0.0;
                for (int j = 0; j <= i; j++) {
                    double s = scale * dot_f(qi, kb + (size_t)j * kvrow, D);
                    if (s > mx) mx = s;
                }
                for (int j = 0; j <= i; j++) sum += exp(scale * dot_f(qi, kb + (size_t)j * kvrow, D) - mx);
                lse[((size_t)b * (size_t)H + (size_t)h) * (size_t)T + (size_t)i] = (float)(mx + log(sum));
            }
        }
    }
    return ZB_OK;
}
