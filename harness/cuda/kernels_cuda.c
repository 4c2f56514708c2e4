/* The CUDA kernel table (harness/kernels.h): each entry checks its shape
 * arguments on the host (ZB_ERR_INVALID with the op's name), then launches
 * the CUDA kernel(s) of kernels/cuda/ on the CUDA stream behind c->stream
 * (zb_cuda_stream_handle) and checks the launch (cudaGetLastError inside
 * each launcher). Nothing synchronizes; errors while a kernel runs surface
 * at the stream's next synchronization. Trace records on CUDA come from
 * CUPTI, so this table writes none; c->label and c->unit name the op in
 * errors only.
 *
 * Shapes as in kernels.h: N = B*T tokens, activations [N, C], q
 * [B, T, H, D], k, v [B, T, KVH, D], probs [B, H, T, T]. Pointers are
 * device pointers. */
#include <cuda_runtime_api.h>
#include <stddef.h>
#include <string.h>

#include "cuda/zb_cuda_kernels.h"
#include "cuda_internal.h"
#include "kernels.h"

/* The CUDA stream of c->stream, or a status naming the op. */
static zb_status stream_of(const zb_kcall *c, const char *op, cudaStream_t *out) {
    if (!c || !c->stream) return ZB_FAIL(ZB_ERR_INVALID, "cuda kernels: %s without a stream", op);
    if (!c->stream->dev || !c->stream->dev->ops || !c->stream->dev->ops->name ||
        strcmp(c->stream->dev->ops->name, "cuda") != 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "cuda kernels: %s on a stream of another device", op);
    }
    *out = zb_cuda_stream_handle(c->stream);
    return ZB_OK;
}

/* Turns a launcher's result into a status naming the op, its label and
 * unit, and the rank. */
static zb_status launched(const zb_kcall *c, const char *op, cudaError_t e) {
    if (e == cudaSuccess) return ZB_OK;
    const char *label = c->label ? c->label : op;
    int rank = c->stream->dev->cfg.rank;
    if (e == cudaErrorInvalidValue) {
        return ZB_FAIL(ZB_ERR_INVALID, "rank %d: cuda kernels: %s ('%s', unit %d): bad arguments (%s)",
                       rank, op, label, c->unit, cudaGetErrorString(e));
    }
    return ZB_FAIL(ZB_ERR_INTERNAL, "rank %d: cuda kernels: %s ('%s', unit %d) launch failed: %s (%s)",
                   rank, op, label, c->unit, cudaGetErrorName(e), cudaGetErrorString(e));
}

static zb_status bad_dims(const char *op, const char *what, int a, int b) {
    return ZB_FAIL(ZB_ERR_INVALID, "cuda kernels: %s: %s (%d, %d)", op, what, a, b);
}

/* ---- the entries --------------------------------------------------------- */

static zb_status k_embedding_fwd(const zb_kcall *c, float *out, const int32_t *tokens,
                                 const float *table, int N, int C, int V) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "embedding_fwd", &s));
    if (N < 0 || C < 0 || V < 0) return bad_dims("embedding_fwd", "negative N or C", N, C);
    return launched(c, "embedding_fwd", zb_cuda_embedding_fwd(s, out, tokens, table, N, C, V));
}

static zb_status k_embedding_bwd(const zb_kcall *c, float *dtable, const int32_t *tokens,
                                 const float *dout, int N, int C, int V) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "embedding_bwd", &s));
    if (N < 0 || C < 0 || V < 0) return bad_dims("embedding_bwd", "negative N or C", N, C);
    return launched(c, "embedding_bwd", zb_cuda_embedding_bwd(s, dtable, tokens, dout, N, C, V));
}

static zb_status k_rmsnorm_fwd(const zb_kcall *c, float *out, float *inv_rms, const float *x,
                               const float *weight, int N, int C, float eps) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "rmsnorm_fwd", &s));
    if (N < 0 || C <= 0) return bad_dims("rmsnorm_fwd", "rows N >= 0 and width C > 0 needed", N, C);
    return launched(c, "rmsnorm_fwd", zb_cuda_rmsnorm_fwd(s, out, inv_rms, x, weight, N, C, eps));
}

static zb_status k_rmsnorm_bwd(const zb_kcall *c, float *dx, float *dweight, const float *dout,
                               const float *x, const float *weight, const float *inv_rms, int N,
                               int C) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "rmsnorm_bwd", &s));
    if (N < 0 || C <= 0) return bad_dims("rmsnorm_bwd", "rows N >= 0 and width C > 0 needed", N, C);
    return launched(c, "rmsnorm_bwd",
                    zb_cuda_rmsnorm_bwd(s, dx, dweight, dout, x, weight, inv_rms, N, C));
}

static zb_status check_rope(const char *op, int B, int T, int NH, int D) {
    if (D <= 0 || D % 2 != 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s: head dim %d must be a positive even number", op, D);
    }
    if (B < 0 || T < 0 || NH < 0) return bad_dims(op, "negative batch or sequence", B, T);
    return ZB_OK;
}

static zb_status k_rope_fwd(const zb_kcall *c, float *out, const float *x, int B, int T, int NH,
                            int D, float theta) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "rope_fwd", &s));
    ZB_TRY(check_rope("rope_fwd", B, T, NH, D));
    return launched(c, "rope_fwd", zb_cuda_rope_fwd(s, out, x, B, T, NH, D, theta));
}

static zb_status k_rope_bwd(const zb_kcall *c, float *dx, const float *dout, int B, int T,
                            int NH, int D, float theta) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "rope_bwd", &s));
    ZB_TRY(check_rope("rope_bwd", B, T, NH, D));
    return launched(c, "rope_bwd", zb_cuda_rope_bwd(s, dx, dout, B, T, NH, D, theta));
}

static zb_status check_attention(const char *op, int B, int T, int H, int KVH, int D) {
    if (H <= 0 || KVH <= 0 || H % KVH != 0 || D <= 0) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "%s: query heads %d must be a positive multiple of kv heads %d "
                       "(head dim %d > 0)",
                       op, H, KVH, D);
    }
    if (B < 0 || T < 0 || B > 65535 || H > 65535) {
        return bad_dims(op, "batch in [0, 65535] and sequence >= 0 needed", B, T);
    }
    return ZB_OK;
}

static zb_status k_attention_fwd(const zb_kcall *c, float *out, float *probs, const float *q,
                                 const float *k, const float *v, int B, int T, int H, int KVH,
                                 int D) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "attention_fwd", &s));
    ZB_TRY(check_attention("attention_fwd", B, T, H, KVH, D));
    return launched(c, "attention_fwd",
                    zb_cuda_attention_fwd(s, out, probs, q, k, v, B, T, H, KVH, D));
}

static zb_status k_attention_bwd(const zb_kcall *c, float *dq, float *dk, float *dv,
                                 const float *dout, const float *q, const float *k,
                                 const float *v, const float *probs, int B, int T, int H,
                                 int KVH, int D) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "attention_bwd", &s));
    ZB_TRY(check_attention("attention_bwd", B, T, H, KVH, D));
    return launched(c, "attention_bwd",
                    zb_cuda_attention_bwd(s, dq, dk, dv, dout, q, k, v, probs, B, T, H, KVH, D));
}

static zb_status k_swiglu_fwd(const zb_kcall *c, float *h, const float *gate, const float *up,
                              size_t n) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "swiglu_fwd", &s));
    return launched(c, "swiglu_fwd", zb_cuda_swiglu_fwd(s, h, gate, up, n));
}

static zb_status k_swiglu_bwd(const zb_kcall *c, float *dgate, float *dup, const float *dh,
                              const float *gate, const float *up, size_t n) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "swiglu_bwd", &s));
    return launched(c, "swiglu_bwd", zb_cuda_swiglu_bwd(s, dgate, dup, dh, gate, up, n));
}

static zb_status k_residual_fwd(const zb_kcall *c, float *out, const float *a, const float *b,
                                size_t n) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "residual_fwd", &s));
    return launched(c, "residual_fwd", zb_cuda_residual_fwd(s, out, a, b, n));
}

static zb_status k_accumulate(const zb_kcall *c, float *dst, const float *src, size_t n) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "accumulate", &s));
    return launched(c, "accumulate", zb_cuda_accumulate(s, dst, src, n));
}

static zb_status k_cross_entropy_fwd(const zb_kcall *c, float *loss, float *lse,
                                     const float *logits, const int32_t *targets, int N, int V) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "cross_entropy_fwd", &s));
    if (N < 0 || V <= 0) return bad_dims("cross_entropy_fwd", "rows N >= 0 and vocab V > 0 needed", N, V);
    return launched(c, "cross_entropy_fwd",
                    zb_cuda_cross_entropy_fwd(s, loss, lse, logits, targets, N, V));
}

static zb_status k_cross_entropy_bwd(const zb_kcall *c, float *dlogits, const float *logits,
                                     const float *lse, const int32_t *targets, int N, int V,
                                     float dloss) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "cross_entropy_bwd", &s));
    if (N < 0 || V <= 0) return bad_dims("cross_entropy_bwd", "rows N >= 0 and vocab V > 0 needed", N, V);
    return launched(c, "cross_entropy_bwd",
                    zb_cuda_cross_entropy_bwd(s, dlogits, logits, lse, targets, N, V, dloss));
}

static zb_status k_adamw(const zb_kcall *c, float *params, const float *grads, float *m,
                         float *v, size_t n, int t, float lr, float beta1, float beta2,
                         float eps, float weight_decay, bool apply_weight_decay) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "adamw", &s));
    if (t < 1) return ZB_FAIL(ZB_ERR_INVALID, "adamw: step %d must be >= 1", t);
    return launched(c, "adamw",
                    zb_cuda_adamw(s, params, grads, m, v, n, t, lr, beta1, beta2, eps,
                                  weight_decay, apply_weight_decay, NULL));
}

static zb_status k_fill(const zb_kcall *c, float *dst, float value, size_t n) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "fill", &s));
    return launched(c, "fill", zb_cuda_fill(s, dst, value, n));
}

static const zb_kernels cuda_kernel_table = {
    .name = "cuda",
    .embedding_fwd = k_embedding_fwd,
    .embedding_bwd = k_embedding_bwd,
    .rmsnorm_fwd = k_rmsnorm_fwd,
    .rmsnorm_bwd = k_rmsnorm_bwd,
    .rope_fwd = k_rope_fwd,
    .rope_bwd = k_rope_bwd,
    .attention_fwd = k_attention_fwd,
    .attention_bwd = k_attention_bwd,
    .swiglu_fwd = k_swiglu_fwd,
    .swiglu_bwd = k_swiglu_bwd,
    .residual_fwd = k_residual_fwd,
    .accumulate = k_accumulate,
    .cross_entropy_fwd = k_cross_entropy_fwd,
    .cross_entropy_bwd = k_cross_entropy_bwd,
    .adamw = k_adamw,
    .fill = k_fill,
};

const zb_kernels *zb_kernels_cuda(void) { return &cuda_kernel_table; }
