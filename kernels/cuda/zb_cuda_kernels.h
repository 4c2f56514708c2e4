/* Host launchers of the CUDA kernels (the .cu files of kernels/cuda/), one per model op,
 * plain C prototypes so that C code (harness/device/cuda/kernels_cuda.c, the GPU
 * tests) can call them. Every launcher ENQUEUES its kernel(s) on `stream`,
 * checks the launch with cudaGetLastError and returns that error
 * (cudaErrorInvalidValue for a bad shape or dtype, before anything is
 * queued). It never synchronizes. Pointers are device pointers.
 *
 * Storage dtype (harness/device/kernels.h): the launchers of ops that read or
 * write activations and weights take those as `void *` / `const void *`
 * plus `dtype`, their storage: ZB_DTYPE_F32 (float) or ZB_DTYPE_BF16
 * (zb_bf16); any other value is cudaErrorInvalidValue, checked first. The
 * `float *` arguments (inv_rms, lse, loss, dweight, dtable) are fp32
 * whatever dtype is. Math and reductions are fp32 either way: bf16 inputs
 * are widened exactly and each stored bf16 output is rounded once to
 * nearest even (bf16.h), so a bf16 launch computes the fp32 op on the
 * widened inputs, rounded. Inside, each kernel is a template over the
 * storage type (zb_cuda_common.cuh: zb_ld / zb_st, ZB_CUDA_DISPATCH).
 * adamw, fill and the casts have fixed types.
 *
 * Semantics are exactly those of the CPU reference kernels
 * (kernels/cpu/zb_cpu_kernels.h) on fp32 (for bf16: on the widened inputs):
 *   - activation gradients are WRITTEN; parameter gradients (dtable,
 *     dweight) and `accumulate` ACCUMULATE (+=);
 *   - aliasing is allowed exactly where the CPU kernels allow it.
 * Differences from the CPU kernels, by design: reductions (row sums, dot
 * products, softmax sums) accumulate in fp32 in a different order than the
 * CPU's double sums, and parameter-gradient sums use atomicAdd (their order
 * varies run to run).
 *
 * Token or target ids outside [0, V) give the CPU's result (zero row,
 * skipped row, no loss or onehot term) and, when err_word is not NULL, are
 * reported through it: err_word is a device pointer to two int32 words
 * (harness/device/cuda/cuda_backend.h, zb_cuda_stream_error_word) that the kernel sets
 * to {ZB_ERR_INVALID, the bad id} with plain volatile stores (racing
 * writers: one wins); the stream's next synchronization turns that into
 * the stream's error, as the CPU kernels' ZB_ERR_INVALID.
 *
 * Shapes: B batch, T sequence, C model dim, H query heads, KVH kv heads,
 * D head dim, V vocab, N = B*T tokens; row-major; activations [N, C];
 * q [B, T, H, D]; k, v [B, T, KVH, D]; lse [B, H, T] (fp32). */
#ifndef ZB_CUDA_KERNELS_H
#define ZB_CUDA_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "bf16.h"
#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- embedding.cu -------------------------------------------------------- */
/* out [N, C] = table [V, C] rows picked by tokens [N] (bad id: zero row). */
cudaError_t zb_cuda_embedding_fwd(cudaStream_t stream, zb_dtype dtype, void *out,
                                  const int32_t *tokens, const void *table, int N, int C, int V,
                                  int32_t *err_word);
/* dtable [V, C] += dout [N, C] scattered by tokens [N] (atomicAdd). */
cudaError_t zb_cuda_embedding_bwd(cudaStream_t stream, zb_dtype dtype, float *dtable,
                                  const int32_t *tokens, const void *dout, int N, int C, int V,
                                  int32_t *err_word);

/* ---- rmsnorm.cu ------------------------------------------------------------ */
/* out [N, C] = x * inv_rms * weight [C]; inv_rms [N] saved; out may equal x. */
cudaError_t zb_cuda_rmsnorm_fwd(cudaStream_t stream, zb_dtype dtype, void *out, float *inv_rms,
                                const void *x, const void *weight, int N, int C, float eps);
/* dx [N, C] written (may equal dout); dweight [C] accumulated (atomicAdd). */
cudaError_t zb_cuda_rmsnorm_bwd(cudaStream_t stream, zb_dtype dtype, void *dx, float *dweight,
                                const void *dout, const void *x, const void *weight,
                                const float *inv_rms, int N, int C);

/* ---- rope.cu --------------------------------------------------------------- */
/* out [B, T, NH, D] = RoPE(x) (inverse: the backward); out may equal x.
 * D must be even. */
cudaError_t zb_cuda_rope_fwd(cudaStream_t stream, zb_dtype dtype, void *out, const void *x,
                             int B, int T, int NH, int D, float theta);
cudaError_t zb_cuda_rope_bwd(cudaStream_t stream, zb_dtype dtype, void *dx, const void *dout,
                             int B, int T, int NH, int D, float theta);

/* ---- attention_fwd.cu / attention_bwd.cu --------------------------------- */
/* zerobench's own fused attention (the fallback where cuDNN's is not used:
 * fp32 storage, builds without cuDNN): tiled, online softmax, no buffer of
 * T x T elements (kernels.h's attention entries). Causal GQA, scale
 * 1/sqrt(D): out [B,T,H,D] in dtype and lse [B,H,T] fp32 written. H a
 * positive multiple of KVH. */
cudaError_t zb_cuda_attention_fwd(cudaStream_t stream, zb_dtype dtype, void *out, float *lse,
                                  const void *q, const void *k, const void *v, int B, int T,
                                  int H, int KVH, int D);
/* dq [B,T,H,D], dk, dv [B,T,KVH,D] written (in dtype) from dout, q, k, v
 * and the forward's out and lse; the probabilities are recomputed per tile.
 * No output may alias an input; no scratch beyond shared memory. */
cudaError_t zb_cuda_attention_bwd(cudaStream_t stream, zb_dtype dtype, void *dq, void *dk,
                                  void *dv, const void *dout, const void *q, const void *k,
                                  const void *v, const void *out, const float *lse, int B, int T,
                                  int H, int KVH, int D);

/* ---- swiglu.cu ------------------------------------------------------------- */
/* h [n] = silu(gate) * up. */
cudaError_t zb_cuda_swiglu_fwd(cudaStream_t stream, zb_dtype dtype, void *h, const void *gate,
                               const void *up, size_t n);
/* dgate, dup [n] written; dgate may equal gate or dh, dup may equal up or dh. */
cudaError_t zb_cuda_swiglu_bwd(cudaStream_t stream, zb_dtype dtype, void *dgate, void *dup,
                               const void *dh, const void *gate, const void *up, size_t n);

/* ---- residual.cu ----------------------------------------------------------- */
/* out [n] = a + b; out may equal a or b. */
cudaError_t zb_cuda_residual_fwd(cudaStream_t stream, zb_dtype dtype, void *out, const void *a,
                                 const void *b, size_t n);
/* dst [n] += src (bf16: dst = round(dst + src), the sum in fp32). */
cudaError_t zb_cuda_accumulate(cudaStream_t stream, zb_dtype dtype, void *dst, const void *src,
                               size_t n);

/* ---- cross_entropy.cu ------------------------------------------------------ */
/* loss [1] = mean over N rows of lse - logits[target] (zeroed, then summed
 * with atomicAdd); lse [N] saved. loss and lse are fp32, logits dtype. */
cudaError_t zb_cuda_cross_entropy_fwd(cudaStream_t stream, zb_dtype dtype, float *loss,
                                      float *lse, const void *logits, const int32_t *targets,
                                      int N, int V, int32_t *err_word);
/* dlogits [N, V] = dloss / N * (softmax - onehot); may equal logits. */
cudaError_t zb_cuda_cross_entropy_bwd(cudaStream_t stream, zb_dtype dtype, void *dlogits,
                                      const void *logits, const float *lse,
                                      const int32_t *targets, int N, int V, float dloss,
                                      int32_t *err_word);

/* ---- adamw.cu -------------------------------------------------------------- */
/* AdamW (math_adamw.h) on a contiguous fp32 segment: params, m, v [n]
 * updated from grads [n] at step t >= 1; weight decay only when
 * apply_weight_decay. When params_bf16 is not NULL the updated params are
 * also written there rounded to bf16 (the compute copy). */
cudaError_t zb_cuda_adamw(cudaStream_t stream, float *params, const float *grads, float *m,
                          float *v, size_t n, int t, float lr, float beta1, float beta2, float eps,
                          float weight_decay, bool apply_weight_decay, zb_bf16 *params_bf16);

/* ---- fill.cu --------------------------------------------------------------- */
/* dst [n] = value (0 and -0 both write +0 bytes, as the CPU's memset). */
cudaError_t zb_cuda_fill(cudaStream_t stream, float *dst, float value, size_t n);

/* ---- cast.cu --------------------------------------------------------------- */
/* dst [n] = bf16(src) round-to-nearest-even (bf16.h); dst [n] = fp32(src). */
cudaError_t zb_cuda_f32_to_bf16(cudaStream_t stream, zb_bf16 *dst, const float *src, size_t n);
cudaError_t zb_cuda_bf16_to_f32(cudaStream_t stream, float *dst, const zb_bf16 *src, size_t n);

#ifdef __cplusplus
}
#endif
#endif
