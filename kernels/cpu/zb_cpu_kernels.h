/* CPU reference kernels, fp32, forward and backward of every op of a
 * LLaMA-style decoder. Pure functions on host pointers: no streams, no
 * threads, no allocation; the CPU device wraps them as stream ops.
 *
 * Shapes: B batch, T sequence, C model dim, H query heads, KVH kv heads,
 * D head dim, F ffn dim, V vocab, N = B*T tokens. Row-major; activations
 * are [N, C] (equivalently [B, T, C]); q is [B, T, H, D], k and v are
 * [B, T, KVH, D]; linear weights are [out, in] (PyTorch's layout).
 *
 * Gradient conventions:
 *   - activation gradients (dx, dq, dgate...) are WRITTEN (=);
 *   - parameter gradients (dW, dweight, dtable) are ACCUMULATED (+=), so a
 *     caller zeroes them once per step;
 *   - zb_cpu_residual_bwd and zb_cpu_accumulate accumulate (+=): that is how
 *     the gradient paths of the residual stream are summed.
 * Reductions (row sums of squares, attention dot products and softmax sums,
 * log-sum-exp) accumulate in double: it costs little next to the loads, and
 * it makes the reference a better yardstick for the CUDA kernels. GEMMs
 * (cblas_sgemm) and sums over rows of parameter gradients stay fp32. */
#ifndef ZB_CPU_KERNELS_H
#define ZB_CPU_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bf16.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- embedding (embedding.c) ------------------------------------------- */
/* out [N, C] = table [V, C] rows picked by tokens [N]. A token outside
 * [0, V) gives a zero row and ZB_ERR_INVALID (after all rows are done). */
zb_status zb_cpu_embedding_fwd(float *out, const int32_t *tokens, const float *table, int N,
                               int C, int V);
/* dtable [V, C] += scatter-add of dout [N, C] by tokens [N]; bad tokens are
 * skipped and reported as in the forward. */
zb_status zb_cpu_embedding_bwd(float *dtable, const int32_t *tokens, const float *dout, int N,
                               int C, int V);

/* ---- RMSNorm (rmsnorm.c) ----------------------------------------------- */
/* out [N, C] = x [N, C] * inv_rms * weight [C]; inv_rms [N] saved for the
 * backward, inv_rms = 1 / sqrt(mean(x^2) + eps). out may equal x. */
void zb_cpu_rmsnorm_fwd(float *out, float *inv_rms, const float *x, const float *weight, int N,
                        int C, float eps);
/* dx [N, C] written; dweight [C] accumulated. dx may equal dout. */
void zb_cpu_rmsnorm_bwd(float *dx, float *dweight, const float *dout, const float *x,
                        const float *weight, const float *inv_rms, int N, int C);

/* ---- linear / matmul (matmul.c) ---------------------------------------- */
/* y [N, n_out] = x [N, n_in] W^T, W [n_out, n_in]; no bias (LLaMA has none).
 * y must not overlap x or W (nor dx/dW overlap their inputs below). */
void zb_cpu_matmul_fwd(float *y, const float *x, const float *W, int N, int n_in, int n_out);
/* dx [N, n_in] = dy [N, n_out] W (written); dW [n_out, n_in] += dy^T x.
 * Either dx or dW may be NULL to skip it. */
void zb_cpu_matmul_bwd(float *dx, float *dW, const float *dy, const float *x, const float *W,
                       int N, int n_in, int n_out);

/* ---- RoPE (rope.c) ----------------------------------------------------- */
/* x, out [B, T, NH, D] with NH = H for q and NH = KVH for k; the position of
 * token t is t. out may equal x (in place). ZB_ERR_INVALID if D is odd. */
zb_status zb_cpu_rope_fwd(float *out, const float *x, int B, int T, int NH, int D, float theta);
/* dx [B, T, NH, D] = inverse rotation of dout; dx may equal dout. */
zb_status zb_cpu_rope_bwd(float *dx, const float *dout, int B, int T, int NH, int D,
                          float theta);

/* ---- causal attention with grouped-query heads (attention.c) ----------- */
/* The textbook algorithm, kept as the REFERENCE the fused kernels of every
 * backend (kernels.h: out and lse saved, probabilities recomputed) are
 * checked against; no backend runs it, since its probs are T x T.
 * q [B, T, H, D], k, v [B, T, KVH, D] -> out [B, T, H, D];
 * probs [B, H, T, T] saved (softmax rows; zero above the diagonal).
 * Query head h reads kv head h / (H / KVH); scale 1 / sqrt(D).
 * ZB_ERR_INVALID unless H is a positive multiple of KVH. */
zb_status zb_cpu_attention_fwd(float *out, float *probs, const float *q, const float *k,
                               const float *v, int B, int T, int H, int KVH, int D);
/* dq [B, T, H, D], dk, dv [B, T, KVH, D] written; dk and dv sum over the
 * H / KVH query heads sharing a kv head. */
zb_status zb_cpu_attention_bwd(float *dq, float *dk, float *dv, const float *dout,
                               const float *q, const float *k, const float *v,
                               const float *probs, int B, int T, int H, int KVH, int D);
/* lse [B, H, T] = log sum_{j<=i} exp(q_i . k_j / sqrt(D)), in double: the
 * statistic the fused forwards save (kernels.h). */
zb_status zb_cpu_attention_lse(float *lse, const float *q, const float *k, int B, int T, int H,
                               int KVH, int D);

/* ---- SwiGLU (swiglu.c) ------------------------------------------------- */
/* h [N, F] = silu(gate [N, F]) * up [N, F]; n = N * F elements. */
void zb_cpu_swiglu_fwd(float *h, const float *gate, const float *up, size_t n);
/* dgate, dup [N, F] written from dh [N, F]. */
void zb_cpu_swiglu_bwd(float *dgate, float *dup, const float *dh, const float *gate,
                       const float *up, size_t n);

/* ---- residual add (residual.c) ----------------------------------------- */
/* out [N, C] = a + b; out may equal a or b; n = N * C. */
void zb_cpu_residual_fwd(float *out, const float *a, const float *b, size_t n);
/* da += dout and db += dout (either may be NULL). */
void zb_cpu_residual_bwd(float *da, float *db, const float *dout, size_t n);
/* dst [n] += src [n]. */
void zb_cpu_accumulate(float *dst, const float *src, size_t n);

/* ---- cross-entropy (cross_entropy.c) ----------------------------------- */
/* logits [N, V], targets [N] -> *loss = mean over the N tokens of
 * lse_i - logits[i, target_i]; lse [N] (log-sum-exp per row) saved.
 * A target outside [0, V) contributes 0 and gives ZB_ERR_INVALID. */
zb_status zb_cpu_cross_entropy_fwd(float *loss, float *lse, const float *logits,
                                   const int32_t *targets, int N, int V);
/* dlogits [N, V] = dloss * (softmax(logits) - onehot(targets)) / N, the
 * softmax recomputed from lse. dlogits may equal logits. dloss is the
 * gradient of the objective with respect to the mean loss (1 usually). */
zb_status zb_cpu_cross_entropy_bwd(float *dlogits, const float *logits, const float *lse,
                                   const int32_t *targets, int N, int V, float dloss);

/* ---- AdamW (adamw.c) --------------------------------------------------- */
/* One step on a flat fp32 shard of n elements: params, m, v updated in
 * place from grads; t is the step number (from 1). Weight decay is applied
 * only when apply_weight_decay is true (the caller decides per tensor:
 * usually matrices yes, norms and embeddings no). See math_adamw.h. */
void zb_cpu_adamw(float *params, const float *grads, float *m, float *v, size_t n, int t,
                  float lr, float beta1, float beta2, float eps, float weight_decay,
                  bool apply_weight_decay);

/* ---- casts (cast.c) ---------------------------------------------------- */
/* dst [n] = round-to-nearest-even bf16 of src [n] (NaN stays NaN). */
void zb_cpu_f32_to_bf16(zb_bf16 *dst, const float *src, size_t n);
/* dst [n] = src [n] widened to fp32 (exact). */
void zb_cpu_bf16_to_f32(float *dst, const zb_bf16 *src, size_t n);

#ifdef __cplusplus
}
#endif
#endif
