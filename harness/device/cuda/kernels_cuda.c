/* The CUDA kernel table (harness/device/kernels.h): each entry launches the
 * CUDA kernel(s) of kernels/cuda/ on the CUDA stream behind c->stream and
 * checks the launch (cudaGetLastError inside each launcher). Shapes, dtypes
 * and pointers were checked by the kernel front end (harness/device/kernels.c),
 * which also set c->flops. The launch sits between zb_cuda_op_begin/end
 * (harness/device/cuda/cuda_backend.h), so the CUPTI tracer names the
 * kernels' trace records by c->label (the op's name when NULL) and c->unit,
 * with c->flops; this file writes no trace record itself. Bad token or
 * target ids are reported through the stream's error word and surface at its
 * next synchronization, as the CPU kernels' ZB_ERR_INVALID does. Nothing
 * here synchronizes.
 *
 * Storage: activations and weights (the `void *` arguments) are in
 * c->dtype, fp32 or bf16, passed on to the launchers (zb_cuda_kernels.h).
 * adamw, fill and cast ignore c->dtype.
 *
 * Shapes as in kernels.h: N = B*T tokens, activations [N, C], q
 * [B, T, H, D], k, v [B, T, KVH, D], lse [B, H, T]. Pointers are
 * device pointers. */
#include <cuda_runtime_api.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zb_cuda_kernels.h"
#include "cuda_backend.h"
#include "cudnn_sdpa.h"
#include "cuda_internal.h"
#include "kernels.h"

/* The CUDA stream of c->stream, or a status naming the op. The front end
 * sends a call to its stream's own device; this guards direct calls. */
static zb_status stream_of(const zb_kcall *c, const char *op, cudaStream_t *out) {
    if (!c->stream->dev || !zb_device_is_cuda(c->stream->dev)) {
        return ZB_FAIL(ZB_ERR_INVALID, "cuda kernels: %s on a stream of another device", op);
    }
    *out = (cudaStream_t)zb_cuda_stream_handle(c->stream);
    return ZB_OK;
}

/* Announces the op to the tracer (pair with op_end on every path). */
static void op_begin(const zb_kcall *c, const char *op) {
    zb_op_info info;
    memset(&info, 0, sizeof info);
    info.kind = ZB_OP_COMPUTE;
    info.label = c->label ? c->label : op;
    info.unit = c->unit;
    info.flops = c->flops;
    (void)zb_cuda_op_begin(c->stream, &info);
}

/* Ends the op's announcement and turns the launcher's result into a
 * status naming the op, its label and unit, and the rank. */
static zb_status op_end(const zb_kcall *c, const char *op, cudaError_t e) {
    zb_cuda_op_end(c->stream);
    if (e == cudaSuccess) return ZB_OK;
    const char *label = c->label ? c->label : op;
    int rank = c->stream->dev->cfg.rank;
    /* The front end (harness/device/kernels.c) accepted the arguments, so a
     * launch the launcher or CUDA refuses (an invalid value, a shared-memory
     * request the GPU cannot meet) is zerobench's failure, not bad input. */
    if (e == cudaErrorInvalidValue) {
        return ZB_FAIL(ZB_ERR_INTERNAL,
                       "rank %d: cuda kernels: %s ('%s', unit %d): launch refused (%s)", rank, op,
                       label, c->unit, cudaGetErrorString(e));
    }
    return ZB_FAIL(ZB_ERR_INTERNAL,
                   "rank %d: cuda kernels: %s ('%s', unit %d) launch failed: %s (%s)", rank, op,
                   label, c->unit, cudaGetErrorName(e), cudaGetErrorString(e));
}

/* ---- the entries --------------------------------------------------------- */

static zb_status k_embedding_fwd(const zb_kcall *c, void *out, const int32_t *tokens,
                                 const void *table, int N, int C, int V) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "embedding_fwd", &s));
    op_begin(c, "embedding_fwd");
    cudaError_t e = zb_cuda_embedding_fwd(s, c->dtype, out, tokens, table, N, C, V,
                                          zb_cuda_stream_error_word(c->stream));
    return op_end(c, "embedding_fwd", e);
}

static zb_status k_embedding_bwd(const zb_kcall *c, float *dtable, const int32_t *tokens,
                                 const void *dout, int N, int C, int V) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "embedding_bwd", &s));
    op_begin(c, "embedding_bwd");
    cudaError_t e = zb_cuda_embedding_bwd(s, c->dtype, dtable, tokens, dout, N, C, V,
                                          zb_cuda_stream_error_word(c->stream));
    return op_end(c, "embedding_bwd", e);
}

static zb_status k_rmsnorm_fwd(const zb_kcall *c, void *out, float *inv_rms, const void *x,
                               const void *weight, int N, int C, float eps) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "rmsnorm_fwd", &s));
    op_begin(c, "rmsnorm_fwd");
    cudaError_t e = zb_cuda_rmsnorm_fwd(s, c->dtype, out, inv_rms, x, weight, N, C, eps);
    return op_end(c, "rmsnorm_fwd", e);
}

static zb_status k_rmsnorm_bwd(const zb_kcall *c, void *dx, float *dweight, const void *dout,
                               const void *x, const void *weight, const float *inv_rms, int N,
                               int C) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "rmsnorm_bwd", &s));
    op_begin(c, "rmsnorm_bwd");
    cudaError_t e = zb_cuda_rmsnorm_bwd(s, c->dtype, dx, dweight, dout, x, weight, inv_rms, N, C);
    return op_end(c, "rmsnorm_bwd", e);
}

static zb_status k_rope_fwd(const zb_kcall *c, void *out, const void *x, int B, int T, int NH,
                            int D, float theta) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "rope_fwd", &s));
    op_begin(c, "rope_fwd");
    cudaError_t e = zb_cuda_rope_fwd(s, c->dtype, out, x, B, T, NH, D, theta);
    return op_end(c, "rope_fwd", e);
}

static zb_status k_rope_bwd(const zb_kcall *c, void *dx, const void *dout, int B, int T, int NH,
                            int D, float theta) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "rope_bwd", &s));
    op_begin(c, "rope_bwd");
    cudaError_t e = zb_cuda_rope_bwd(s, c->dtype, dx, dout, B, T, NH, D, theta);
    return op_end(c, "rope_bwd", e);
}

/* ---- attention: cuDNN's fused SDPA or zerobench's tiled kernel -------------
 * bf16 storage runs cuDNN's fused SDPA (cudnn_sdpa.h) where it is usable on
 * this device for the head dim; everything else (fp32 storage, a build or a
 * machine without cuDNN, a head dim or shape cuDNN refuses, a buffer not
 * 16-byte aligned) runs zerobench's own tiled kernel (zb_cuda_attention_*,
 * kernels/cuda/attention_*.cu). Both save the same lse (kernels.h), so a
 * forward by one and a backward by the other agree. cuDNN's plan for a
 * shape is built at its first call, before the op's trace bracket opens.
 * The environment variable ZB_ATTENTION, read at the first attention call,
 * chooses for bf16 (fp32 always runs the tiled kernel):
 *   unset, "" or "auto"  the above;
 *   "tiled"              zerobench's kernel always (cuDNN is never loaded);
 *   "cudnn"              cuDNN's SDPA, or ZB_ERR_UNSUPPORTED naming why it
 *                        cannot run this call (no fallback);
 *   anything else        ZB_ERR_INVALID at every attention call, naming it.
 * In auto mode a fallback is said on stderr: once why cuDNN is not usable,
 * once per shape cuDNN refuses, the first few unaligned buffers.
 * attention_impl names what ran for c->dtype: "cudnn-sdpa", "cuda-tiled",
 * or "cudnn-sdpa+cuda-tiled" when both did (some shapes fell back); before
 * any attention call, what would run. */
enum { ATT_AUTO = 1, ATT_TILED, ATT_CUDNN, ATT_BAD };
static atomic_int att_mode;                /* 0: ZB_ATTENTION not read yet */
static atomic_int att_ran[ZB_DTYPE_COUNT]; /* bit 1: cuDNN ran, bit 2: the tiled kernel ran */
static atomic_bool att_noted;              /* the "cuDNN not usable" note was printed */
static atomic_int att_unaligned_notes;

static int attention_mode(void) {
    int m = atomic_load(&att_mode);
    if (m) return m;
    const char *e = getenv("ZB_ATTENTION");
    if (!e || !*e || strcmp(e, "auto") == 0) {
        m = ATT_AUTO;
    } else if (strcmp(e, "tiled") == 0) {
        m = ATT_TILED;
    } else if (strcmp(e, "cudnn") == 0) {
        m = ATT_CUDNN;
    } else {
        m = ATT_BAD;
    }
    atomic_store(&att_mode, m);
    return m;
}

static void attention_ran(zb_dtype t, int bit) {
    if ((int)t >= 0 && (int)t < ZB_DTYPE_COUNT) atomic_fetch_or(&att_ran[t], bit);
}

/* A cuDNN SDPA status as the table's other failures read: rank, op, label
 * and unit, then cudnn_sdpa's line (the shape and cuDNN's message). */
static zb_status attention_fail(const zb_kcall *c, const char *op, zb_status st) {
    char msg[ZB_ERROR_MAX];
    zb_error_text(msg, sizeof msg);
    return ZB_FAIL(st, "rank %d: cuda kernels: %s ('%s', unit %d): %s", c->stream->dev->cfg.rank,
                   op, c->label ? c->label : op, c->unit, msg);
}

/* Whether this call runs cuDNN's SDPA (*use; else the tiled kernel), or the
 * status that ends it (see the comment above). Builds cuDNN's plan for the
 * shape when it is new. */
static zb_status attention_choose(const zb_kcall *c, const char *op, bool backward,
                                  const void *const *ptrs, int n_ptrs, int B, int T, int H,
                                  int KVH, int D, bool *use) {
    *use = false;
    int rank = c->stream->dev->cfg.rank;
    int mode = attention_mode();
    if (mode == ATT_BAD) {
        return ZB_FAIL(ZB_ERR_INVALID, "rank %d: cuda kernels: %s: ZB_ATTENTION='%s' is not auto, "
                       "tiled or cudnn", rank, op, getenv("ZB_ATTENTION") ? getenv("ZB_ATTENTION") : "");
    }
    if (mode == ATT_TILED || c->dtype != ZB_DTYPE_BF16 || B == 0 || T == 0) return ZB_OK;
    const char *why = NULL;
    if (!zb_cudnn_sdpa_usable(c->dtype, D, &why)) {
        if (mode == ATT_CUDNN) {
            return ZB_FAIL(ZB_ERR_UNSUPPORTED, "rank %d: cuda kernels: %s ('%s', unit %d): "
                           "ZB_ATTENTION=cudnn, but cuDNN's SDPA cannot run it (D=%d): %s", rank, op,
                           c->label ? c->label : op, c->unit, D, why);
        }
        if (!atomic_exchange(&att_noted, true)) {
            fprintf(stderr, "zerobench: note: rank %d: bf16 attention (D=%d) runs zerobench's tiled "
                    "kernel, not cuDNN's SDPA: %s\n", rank, D, why);
        }
        return ZB_OK;
    }
    for (int i = 0; i < n_ptrs; i++) {
        if ((uintptr_t)ptrs[i] % 16 == 0) continue;
        if (mode == ATT_CUDNN) {
            return ZB_FAIL(ZB_ERR_UNSUPPORTED, "rank %d: cuda kernels: %s ('%s', unit %d): "
                           "ZB_ATTENTION=cudnn, but buffer %d is not 16-byte aligned (cuDNN needs it)",
                           rank, op, c->label ? c->label : op, c->unit, i);
        }
        if (atomic_fetch_add(&att_unaligned_notes, 1) < 3) {
            fprintf(stderr, "zerobench: warning: rank %d: %s ('%s'): a buffer is not 16-byte "
                    "aligned; zerobench's tiled kernel runs it instead of cuDNN's SDPA\n", rank, op,
                    c->label ? c->label : op);
        }
        return ZB_OK;
    }
    bool first = false;
    zb_status st = zb_cudnn_sdpa_prepare(backward, B, T, H, KVH, D, &first);
    if (st == ZB_OK) {
        *use = true;
        return ZB_OK;
    }
    if (st != ZB_ERR_UNSUPPORTED || mode == ATT_CUDNN) return attention_fail(c, op, st);
    if (first) {
        char msg[ZB_ERROR_MAX];
        fprintf(stderr, "zerobench: warning: rank %d: %s; zerobench's tiled kernel runs it instead\n",
                rank, zb_error_text(msg, sizeof msg));
    }
    return ZB_OK;
}

static zb_status k_attention_fwd(const zb_kcall *c, void *out, float *lse, const void *q,
                                 const void *k, const void *v, int B, int T, int H, int KVH,
                                 int D) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "attention_fwd", &s));
    const void *ptrs[] = {out, lse, q, k, v};
    bool cudnn = false;
    ZB_TRY(attention_choose(c, "attention_fwd", false, ptrs, 5, B, T, H, KVH, D, &cudnn));
    op_begin(c, "attention_fwd");
    if (cudnn) {
        zb_status st = zb_cudnn_sdpa_fwd(s, out, lse, q, k, v, B, T, H, KVH, D);
        zb_cuda_op_end(c->stream);
        if (st != ZB_OK) return attention_fail(c, "attention_fwd", st);
        attention_ran(c->dtype, 1);
        return ZB_OK;
    }
    cudaError_t e = zb_cuda_attention_fwd(s, c->dtype, out, lse, q, k, v, B, T, H, KVH, D);
    if (e == cudaSuccess) attention_ran(c->dtype, 2);
    return op_end(c, "attention_fwd", e);
}

static zb_status k_attention_bwd(const zb_kcall *c, void *dq, void *dk, void *dv,
                                 const void *dout, const void *q, const void *k, const void *v,
                                 const void *out, const float *lse, int B, int T, int H, int KVH,
                                 int D) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "attention_bwd", &s));
    const void *ptrs[] = {dq, dk, dv, dout, q, k, v, out, lse};
    bool cudnn = false;
    ZB_TRY(attention_choose(c, "attention_bwd", true, ptrs, 9, B, T, H, KVH, D, &cudnn));
    op_begin(c, "attention_bwd");
    if (cudnn) {
        zb_status st = zb_cudnn_sdpa_bwd(s, dq, dk, dv, dout, q, k, v, out, lse, B, T, H, KVH, D);
        zb_cuda_op_end(c->stream);
        if (st != ZB_OK) return attention_fail(c, "attention_bwd", st);
        attention_ran(c->dtype, 1);
        return ZB_OK;
    }
    cudaError_t e = zb_cuda_attention_bwd(s, c->dtype, dq, dk, dv, dout, q, k, v, out, lse, B, T,
                                          H, KVH, D);
    if (e == cudaSuccess) attention_ran(c->dtype, 2);
    return op_end(c, "attention_bwd", e);
}

static const char *k_attention_impl(const zb_kcall *c) {
    int t = (int)c->dtype;
    int ran = t >= 0 && t < ZB_DTYPE_COUNT ? atomic_load(&att_ran[t]) : 0;
    if (ran == 3) return "cudnn-sdpa+cuda-tiled";
    if (ran == 1) return "cudnn-sdpa";
    if (ran == 2) return "cuda-tiled";
    int mode = attention_mode();
    if (mode == ATT_TILED || mode == ATT_BAD || c->dtype != ZB_DTYPE_BF16) return "cuda-tiled";
    return zb_cudnn_sdpa_usable(c->dtype, 0, NULL) ? "cudnn-sdpa" : "cuda-tiled";
}

static zb_status k_swiglu_fwd(const zb_kcall *c, void *h, const void *gate, const void *up,
                              size_t n) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "swiglu_fwd", &s));
    op_begin(c, "swiglu_fwd");
    cudaError_t e = zb_cuda_swiglu_fwd(s, c->dtype, h, gate, up, n);
    return op_end(c, "swiglu_fwd", e);
}

static zb_status k_swiglu_bwd(const zb_kcall *c, void *dgate, void *dup, const void *dh,
                              const void *gate, const void *up, size_t n) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "swiglu_bwd", &s));
    op_begin(c, "swiglu_bwd");
    cudaError_t e = zb_cuda_swiglu_bwd(s, c->dtype, dgate, dup, dh, gate, up, n);
    return op_end(c, "swiglu_bwd", e);
}

static zb_status k_residual_fwd(const zb_kcall *c, void *out, const void *a, const void *b,
                                size_t n) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "residual_fwd", &s));
    op_begin(c, "residual_fwd");
    cudaError_t e = zb_cuda_residual_fwd(s, c->dtype, out, a, b, n);
    return op_end(c, "residual_fwd", e);
}

static zb_status k_accumulate(const zb_kcall *c, void *dst, const void *src, size_t n) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "accumulate", &s));
    op_begin(c, "accumulate");
    cudaError_t e = zb_cuda_accumulate(s, c->dtype, dst, src, n);
    return op_end(c, "accumulate", e);
}

static zb_status k_cross_entropy_fwd(const zb_kcall *c, float *loss, float *lse,
                                     const void *logits, const int32_t *targets, int N, int V) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "cross_entropy_fwd", &s));
    op_begin(c, "cross_entropy_fwd");
    cudaError_t e = zb_cuda_cross_entropy_fwd(s, c->dtype, loss, lse, logits, targets, N, V,
                                              zb_cuda_stream_error_word(c->stream));
    return op_end(c, "cross_entropy_fwd", e);
}

static zb_status k_cross_entropy_bwd(const zb_kcall *c, void *dlogits, const void *logits,
                                     const float *lse, const int32_t *targets, int N, int V,
                                     float dloss) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "cross_entropy_bwd", &s));
    op_begin(c, "cross_entropy_bwd");
    cudaError_t e = zb_cuda_cross_entropy_bwd(s, c->dtype, dlogits, logits, lse, targets, N, V,
                                              dloss, zb_cuda_stream_error_word(c->stream));
    return op_end(c, "cross_entropy_bwd", e);
}

static zb_status k_adamw(const zb_kcall *c, float *params, const float *grads, float *m,
                         float *v, size_t n, int t, float lr, float beta1, float beta2,
                         float eps, float weight_decay, bool apply_weight_decay) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "adamw", &s));
    op_begin(c, "adamw");
    cudaError_t e = zb_cuda_adamw(s, params, grads, m, v, n, t, lr, beta1, beta2, eps,
                                  weight_decay, apply_weight_decay, NULL);
    return op_end(c, "adamw", e);
}

static zb_status k_fill(const zb_kcall *c, float *dst, float value, size_t n) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "fill", &s));
    op_begin(c, "fill");
    cudaError_t e = zb_cuda_fill(s, dst, value, n);
    return op_end(c, "fill", e);
}

static zb_status k_cast(const zb_kcall *c, void *dst, zb_dtype dst_type, const void *src,
                        zb_dtype src_type, size_t n) {
    cudaStream_t s;
    ZB_TRY(stream_of(c, "cast", &s));
    (void)dst_type; /* the front end allows only the two pairs */
    bool narrow = src_type == ZB_DTYPE_F32;
    op_begin(c, "cast");
    cudaError_t e = narrow ? zb_cuda_f32_to_bf16(s, (zb_bf16 *)dst, (const float *)src, n)
                           : zb_cuda_bf16_to_f32(s, (float *)dst, (const zb_bf16 *)src, n);
    return op_end(c, "cast", e);
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
    .attention_impl = k_attention_impl,
    .swiglu_fwd = k_swiglu_fwd,
    .swiglu_bwd = k_swiglu_bwd,
    .residual_fwd = k_residual_fwd,
    .accumulate = k_accumulate,
    .cross_entropy_fwd = k_cross_entropy_fwd,
    .cross_entropy_bwd = k_cross_entropy_bwd,
    .adamw = k_adamw,
    .fill = k_fill,
    .cast = k_cast,
};

const zb_kernels *zb_kernels_cuda(void) { return &cuda_kernel_table; }
