/* The magnitudes of causal GQA attention's outputs' terms (mag_i:
 * cuda_kernel_check.h), against which the GPU attention checks
 * (test_cuda_attention.c: the tiled kernel; test_cudnn_sdpa.c: cuDNN's)
 * measure their errors. p is the reference's probabilities [B,H,T,T]; the
 * m_* buffers start at zero and are added to. */
#ifndef ZB_ATTENTION_MAGS_H
#define ZB_ATTENTION_MAGS_H

#include <math.h>

#include "cuda_kernel_check.h"

/* Magnitudes of the attention outputs' terms (mag_i: cuda_kernel_check.h), with
 * a_ij = sum_d |dout_i,d v_j,d|, b_i = sum_j p_ij a_ij and the dS_ij scale
 * e_ij = scale p_ij (a_ij + b_i). lse_i = m_i + log(sum_j exp(s_ij - m_i)):
 * its terms are the largest score's, scale max_j sum_d |q_i,d k_j,d|, and the
 * log's, at most log(i + 1), plus 1 for the log's relative error. */
static inline void attention_mags(int B, int T, int H, int KVH, int D, const float *q, const float *k,
                                  const float *v, const float *dout, const float *p, double *m_out,
                                  double *m_lse, double *m_dq, double *m_dk, double *m_dv) {
    int rep = H / KVH;
    double scale = 1.0 / sqrt((double)D);
    size_t qrow = (size_t)H * D, kvrow = (size_t)KVH * D;
    double *a = h_d((size_t)T);
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < H; h++) {
            for (int i = 0; i < T; i++) {
                size_t qoff = ((size_t)b * T + i) * qrow + (size_t)h * D;
                const float *pr = p + (((size_t)b * H + h) * T + i) * T;
                double smax = 0.0, bi = 0.0;
                for (int j = 0; j <= i; j++) {
                    size_t kvoff = ((size_t)b * T + j) * kvrow + (size_t)(h / rep) * D;
                    double c = 0.0;
                    a[j] = 0.0;
                    for (int d = 0; d < D; d++) {
                        a[j] += fabs((double)dout[qoff + d] * v[kvoff + d]);
                        c += fabs((double)q[qoff + d] * k[kvoff + d]);
                    }
                    smax = fmax(smax, scale * c);
                    bi += pr[j] * a[j];
                }
                m_lse[((size_t)b * H + h) * T + i] = smax + log(i + 1.0) + 1.0;
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

#endif
