/* The cpu device's fast kernels: the ops its kernel table runs in fp32
 * (dispatch.c), written for speed and checked against the reference
 * kernels of kernels/cpu/ (zb_cpu_kernels.h), which stay the yardstick of
 * every test and of the CUDA checks (docs/design.md §3, "Kernels").
 *
 * Same shapes, aliasing and gradient conventions as the reference
 * functions of the same name without "_fast" (zb_cpu_kernels.h). The
 * difference is the arithmetic: fp32 accumulation in independent lanes
 * (so the compiler vectorises the loops; no fast-math option), a polynomial
 * exp (zb_cpu_vexpf, within 2 ulp of expf for the arguments used), and
 * attention through cblas_sgemm. Results agree with the reference within
 * the fp32 bound the conformance suite uses. */
#ifndef ZB_CPU_FAST_H
#define ZB_CPU_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- element-wise and norms (fast_eltwise.c) ----------------------------- */
/* e^x for x in [-87, 88] (clamped outside), relative error below 2^-22. */
float zb_cpu_vexpf(float x);
void zb_cpu_rmsnorm_fwd_fast(float *out, float *inv_rms, const float *x, const float *weight, int N, int C,
                             float eps);
void zb_cpu_rmsnorm_bwd_fast(float *dx, float *dweight, const float *dout, const float *x, const float *weight,
                             const float *inv_rms, int N, int C);
void zb_cpu_swiglu_fwd_fast(float *h, const float *gate, const float *up, size_t n);
void zb_cpu_swiglu_bwd_fast(float *dgate, float *dup, const float *dh, const float *gate, const float *up,
                            size_t n);
void zb_cpu_residual_fwd_fast(float *out, const float *a, const float *b, size_t n);
void zb_cpu_accumulate_fast(float *dst, const float *src, size_t n);
zb_status zb_cpu_cross_entropy_fwd_fast(float *loss, float *lse, const float *logits, const int32_t *targets,
                                        int N, int V);
zb_status zb_cpu_cross_entropy_bwd_fast(float *dlogits, const float *logits, const float *lse,
                                        const int32_t *targets, int N, int V, float dloss);
/* AdamW, bit for bit the reference (zb_cpu_adamw), vectorised. */
void zb_cpu_adamw_fast(float *params, const float *grads, float *m, float *v, size_t n, int t, float lr,
                       float beta1, float beta2, float eps, float weight_decay, bool apply_weight_decay);
/* One causal softmax row in place: p[0..n) = softmax(p[0..n)), fp32. */
void zb_cpu_softmax_row_fast(float *p, int n);
/* Its backward in place: d[j] = p[j] (d[j] - sum_k p[k] d[k]) scale. */
void zb_cpu_softmax_bwd_row_fast(float *d, const float *p, int n, float scale);

/* ---- fused attention through GEMMs (fast_attention_fwd.c, _bwd.c) -------- */
/* Causal GQA attention, FlashAttention-2's scheme on the CPU (kernels.h's
 * attention entries, fp32): per (batch, kv head) and block of query rows,
 * the rows of the query heads sharing that kv head stacked into one block,
 * the scores of one block of keys at a time are a cblas_sgemm (Q K^T) into
 * a tile, an online softmax keeps each row's running max and sum, and the
 * output accumulates P V tile by tile (fast_attention.c: the tile loops).
 * Saves lse [B,H,T]; scratch is a few tiles, never T x T; K and V are read
 * in place through the GEMMs' leading dimensions. ZB_ERR_INVALID for bad
 * head counts. */
zb_status zb_cpu_attention_fwd_fast(float *out, float *lse, const float *q, const float *k, const float *v,
                                    int B, int T, int H, int KVH, int D);
/* Recomputes P = exp(S - lse) tile by tile; with Di = rowsum(dO * O):
 * dP = dO V^T, dS = P (dP - Di) scale, dQ = dS K, dK = dS^T Q, dV = P^T dO
 * (dq, dk, dv written). */
zb_status zb_cpu_attention_bwd_fast(float *dq, float *dk, float *dv, const float *dout, const float *q,
                                    const float *k, const float *v, const float *out, const float *lse, int B,
                                    int T, int H, int KVH, int D);

#ifdef __cplusplus
}
#endif
#endif
