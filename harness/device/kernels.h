/* The kernel dispatch interface: one table of function pointers per device
 * backend, one entry per model op that is not a GEMM.
 *
 * Every entry ENQUEUES its op on c->stream (it never runs it at once) and
 * returns ZB_OK when the op was queued; errors found while the op runs
 * (a token outside the vocabulary, say) become the stream's sticky error
 * and surface at the next synchronization. Pointers are DEVICE pointers:
 * nothing here reads device memory on the host. Linear layers do not go
 * through this table; they use the device's gemm op (zb_device_ops.gemm):
 *   y = x W^T (trans_b), dx = dy W, dW (+)= dy^T x (trans_a).
 * Copies are the device's memcpy_async.
 *
 * Shapes: B batch, T sequence, C model dim, H query heads, KVH kv heads,
 * D head dim, F ffn dim, V vocab, N = B*T tokens; row-major; activations
 * [N, C]; q [B, T, H, D] (= [N, H*D]); k, v [B, T, KVH, D]; the
 * attention's per-row log-sum-exp lse [B, H, T] (fp32). Element counts
 * are size_t, dimensions int. Conventions match
 * the CPU reference kernels (kernels/cpu/zb_cpu_kernels.h): activation
 * gradients are written, parameter gradients (dweight, dtable) accumulated,
 * accumulate adds. Aliasing allowed exactly where the CPU kernels allow it.
 *
 * Storage dtype (mixed precision). c->dtype (ZB_DTYPE_F32, the zero
 * value, or ZB_DTYPE_BF16) is the dtype of the ACTIVATIONS and WEIGHTS an op
 * reads and writes: every pointer typed `void *` / `const void *` below.
 * Per-row statistics (inv_rms, lse), the loss, parameter gradients
 * (dweight, dtable) and everything AdamW touches stay fp32 (`float *`).
 * The math is fp32 whatever the storage: bf16 inputs are widened exactly,
 * each output is computed in fp32 and rounded once to nearest even when it
 * is stored (kernels/bf16.h). Row reductions (norms, softmax, the
 * cross-entropy's log-sum-exp) run over the widened values, so a bf16 op
 * equals the fp32 op applied to the widened inputs, rounded, up to the
 * backend's summation order. fill, adamw and cast ignore c->dtype.
 *
 * Each op leaves one trace record: kind compute, c->label (copied at issue
 * time, so a stack buffer is fine), c->unit, and flops where meaningful
 * (attention: zb_attention_fwd_flops forward, twice that backward;
 * elementwise ops 0).
 *
 * Front end and backends. zb_kernels_for returns the front end: one table
 * whose entries check every call's arguments for every backend (a stream,
 * storage dtype float or bf16, dimensions as each entry says, non-NULL
 * pointers when there is work, element counts whose bytes fit a size_t),
 * refusing a bad one with ZB_ERR_INVALID and one line naming the op and the
 * value before anything is queued; they set zb_kcall.flops, then call the
 * same entry of the stream's backend table (zb_device_ops.kernels). A
 * backend table trusts its arguments and reports c->flops; tests may call
 * one directly (zb_kernels_cpu, zb_kernels_cuda) with arguments they know
 * to be good. */
#ifndef ZB_KERNELS_H
#define ZB_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where an op goes and how its trace record reads. */
typedef struct zb_kcall {
    zb_stream *stream;
    const char *label; /* NULL reads as the op's name */
    int unit;          /* model unit, or -1 */
    zb_dtype dtype;    /* storage of activations and weights (void * args) */
    double flops;      /* set by the front end for the trace record; callers leave it 0 */
} zb_kcall;

typedef struct zb_kernels {
    const char *name; /* the backend: "cpu" */

    /* out [N, C] = table [V, C] rows picked by tokens [N]. */
    zb_status (*embedding_fwd)(const zb_kcall *c, void *out, const int32_t *tokens,
                               const void *table, int N, int C, int V);
    /* dtable [V, C] += scatter-add of dout [N, C] by tokens [N]. */
    zb_status (*embedding_bwd)(const zb_kcall *c, float *dtable, const int32_t *tokens,
                               const void *dout, int N, int C, int V);

    /* out [N, C] = x * inv_rms * weight [C]; inv_rms [N] saved. */
    zb_status (*rmsnorm_fwd)(const zb_kcall *c, void *out, float *inv_rms, const void *x,
                             const void *weight, int N, int C, float eps);
    /* dx [N, C] written (may equal dout); dweight [C] accumulated. */
    zb_status (*rmsnorm_bwd)(const zb_kcall *c, void *dx, float *dweight, const void *dout,
                             const void *x, const void *weight, const float *inv_rms, int N,
                             int C);

    /* out [B, T, NH, D] = RoPE(x); out may equal x. D even. */
    zb_status (*rope_fwd)(const zb_kcall *c, void *out, const void *x, int B, int T, int NH,
                          int D, float theta);
    /* dx = inverse rotation of dout; dx may equal dout. */
    zb_status (*rope_bwd)(const zb_kcall *c, void *dx, const void *dout, int B, int T, int NH,
                          int D, float theta);

    /* Causal GQA attention, fused (FlashAttention-2's scheme): q [B,T,H,D],
     * k, v [B,T,KVH,D] -> out [B,T,H,D], scale 1/sqrt(D); query head h reads
     * kv head h / (H / KVH). Saves, per query row, lse [B,H,T] (fp32) = the
     * natural log of sum_j<=i exp(scale q_i.k_j): the softmax row is
     * exp(scale q_i.k_j - lse_i). No backend keeps or allocates anything of
     * T x T elements: the probabilities live one tile at a time. */
    zb_status (*attention_fwd)(const zb_kcall *c, void *out, float *lse, const void *q,
                               const void *k, const void *v, int B, int T, int H, int KVH,
                               int D);
    /* dq [B,T,H,D], dk, dv [B,T,KVH,D] written from dout [B,T,H,D], the
     * inputs and the forward's out and lse: the probabilities are recomputed
     * tile by tile from q, k and lse, and rowsum(dout * out) stands for
     * rowsum(P * dP). out and lse must be those the forward wrote. */
    zb_status (*attention_bwd)(const zb_kcall *c, void *dq, void *dk, void *dv,
                               const void *dout, const void *q, const void *k,
                               const void *v, const void *out, const float *lse, int B, int T,
                               int H, int KVH, int D);
    /* h [n] = silu(gate) * up. */
    zb_status (*swiglu_fwd)(const zb_kcall *c, void *h, const void *gate, const void *up,
                            size_t n);
    /* dgate, dup [n] written from dh. Elementwise, each element's inputs
     * read before its outputs are written: dgate may equal gate or dh, dup
     * may equal up or dh (not both outputs the same buffer). */
    zb_status (*swiglu_bwd)(const zb_kcall *c, void *dgate, void *dup, const void *dh,
                            const void *gate, const void *up, size_t n);

    /* out [n] = a + b; out may equal a or b. */
    zb_status (*residual_fwd)(const zb_kcall *c, void *out, const void *a, const void *b,
                              size_t n);
    /* dst [n] += src. */
    zb_status (*accumulate)(const zb_kcall *c, void *dst, const void *src, size_t n);

    /* loss [1] = mean over N rows of lse - logits[target]; lse [N] saved. */
    zb_status (*cross_entropy_fwd)(const zb_kcall *c, float *loss, float *lse,
                                   const void *logits, const int32_t *targets, int N, int V);
    /* dlogits [N, V] = dloss / N * (softmax - onehot); may equal logits. */
    zb_status (*cross_entropy_bwd)(const zb_kcall *c, void *dlogits, const void *logits,
                                   const float *lse, const int32_t *targets, int N, int V,
                                   float dloss);

    /* AdamW on a contiguous fp32 segment of n elements (math_adamw.h);
     * step t >= 1; weight decay applied only when apply_weight_decay. */
    zb_status (*adamw)(const zb_kcall *c, float *params, const float *grads, float *m, float *v,
                       size_t n, int t, float lr, float beta1, float beta2, float eps,
                       float weight_decay, bool apply_weight_decay);

    /* dst [n] = value (value 0 zeroes). */
    zb_status (*fill)(const zb_kcall *c, float *dst, float value, size_t n);

    /* dst [n] = src [n] converted from src_type to dst_type: fp32 -> bf16
     * (round to nearest even, NaN stays NaN) or bf16 -> fp32 (exact); any
     * other pair is ZB_ERR_INVALID. dst and src must not overlap. */
    zb_status (*cast)(const zb_kcall *c, void *dst, zb_dtype dst_type, const void *src,
                      zb_dtype src_type, size_t n);

    /* The attention implementation this backend runs for c->dtype on
     * c->stream's device, for the run's meta and table header: a static
     * string ("cpu-tiled", "cudnn-sdpa", "cuda-tiled", ...). Last, so
     * tables written in order without it still compile (it may be NULL). */
    const char *(*attention_impl)(const zb_kcall *c);
} zb_kernels;

/* The kernel front end for a device whose backend has a kernel table
 * (zb_device_ops.kernels); NULL, with a ZB_ERR_UNSUPPORTED message
 * recorded, for a device that has none. The table is static: never freed. */
const zb_kernels *zb_kernels_for(zb_device *dev);

/* FLOPs of causal GQA attention forward over q [B, T, H, D]: Q K^T and P V,
 * 2*T*T*D each per batch and head, counting the full T x T matrix
 * (docs/design.md, "Metrics"): 4*B*H*T*T*D. The backward is twice that.
 * The one formula: the front end's trace records and the per-token counts
 * (harness/metrics/flops.c, the engine's unit FLOPs) all use it. */
double zb_attention_fwd_flops(int B, int T, int H, int D);
double zb_attention_bwd_flops(int B, int T, int H, int D);
/* The FLOPs a causal kernel actually performs, the key j <= i pairs only:
 * 2*B*H*T*(T+1)*D forward (about half the above); what the sim costs. */
double zb_attention_fwd_causal_flops(int B, int T, int H, int D);

#ifdef __cplusplus
}
#endif
#endif
