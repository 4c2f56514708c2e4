/* The kernel front end (kernels.h): one table that checks every call's
 * arguments and sets its FLOPs once, for every backend, then forwards it to
 * the stream's backend table (zb_device_ops.kernels). The backends' tables
 * (harness/device/cpu/dispatch.c, harness/device/cuda/kernels_cuda.c) trust
 * what reaches them, so a check added here holds everywhere. */
#include "kernels.h"

#include <stdint.h>
#include <stdio.h>

double zb_attention_fwd_flops(int B, int T, int H, int D) {
    return 4.0 * (double)B * (double)H * (double)T * (double)T * (double)D;
}

double zb_attention_bwd_flops(int B, int T, int H, int D) {
    return 2.0 * zb_attention_fwd_flops(B, T, H, D);
}

double zb_attention_fwd_causal_flops(int B, int T, int H, int D) {
    return 2.0 * (double)B * (double)H * (double)T * ((double)T + 1.0) * (double)D;
}

/* ---- the checks ------------------------------------------------------------ */

/* The stream's backend table, or a status naming the op. */
static zb_status backend_of(const zb_kcall *c, const char *op, const zb_kernels **out) {
    if (!c || !c->stream) return ZB_FAIL(ZB_ERR_INVALID, "kernels: %s without a stream", op);
    const zb_device *dev = c->stream->dev;
    const zb_kernels *k = dev && dev->ops && dev->ops->kernels ? dev->ops->kernels() : NULL;
    if (!k) {
        return ZB_FAIL(ZB_ERR_UNSUPPORTED, "kernels: %s: the '%s' device has no kernel table", op,
                       dev && dev->ops && dev->ops->name ? dev->ops->name : "(null)");
    }
    *out = k;
    return ZB_OK;
}

/* The storage dtype of activations and weights: float or bf16. */
static zb_status need_dtype(const zb_kcall *c, const char *op) {
    if (c->dtype == ZB_DTYPE_F32 || c->dtype == ZB_DTYPE_BF16) return ZB_OK;
    return ZB_FAIL(ZB_ERR_INVALID, "kernels: %s: storage dtype %d is not float or bf16", op,
                   (int)c->dtype);
}

typedef struct kptr {
    const char *name;
    const void *p;
} kptr;

/* Every pointer non-NULL, when the op has work to do. */
static zb_status need_ptrs(const char *op, bool work, const kptr *ptrs, size_t n) {
    for (size_t i = 0; work && i < n; i++) {
        if (!ptrs[i].p) return ZB_FAIL(ZB_ERR_INVALID, "kernels: %s: %s is NULL", op, ptrs[i].name);
    }
    return ZB_OK;
}
#define NEED_PTRS(op, work, ...)                                                   \
    do {                                                                           \
        const kptr zb_p_[] = {__VA_ARGS__};                                        \
        ZB_TRY(need_ptrs((op), (work), zb_p_, sizeof zb_p_ / sizeof zb_p_[0]));    \
    } while (0)

/* The buffer `what` of dims[0] x ... elements (non-negative) fits a size_t
 * in bytes at 4 bytes an element (fp32, the largest storage). */
static zb_status need_fit(const char *op, const char *what, const size_t *dims, int n) {
    size_t bytes = sizeof(float);
    bool over = false;
    for (int i = 0; i < n; i++) {
        if (dims[i] && bytes > SIZE_MAX / dims[i]) over = true;
        if (!over) bytes *= dims[i];
    }
    if (!over) return ZB_OK;
    char shape[128] = "";
    size_t len = 0;
    for (int i = 0; i < n && len < sizeof shape; i++) {
        int w = snprintf(shape + len, sizeof shape - len, "%s%zu", i ? " x " : "", dims[i]);
        if (w < 0) break;
        len += (size_t)w;
    }
    return ZB_FAIL(ZB_ERR_INVALID, "kernels: %s: %s of %s elements overflows a byte count", op,
                   what, shape);
}
#define NEED_FIT(op, what, ...)                                                    \
    do {                                                                           \
        const size_t zb_d_[] = {__VA_ARGS__};                                      \
        ZB_TRY(need_fit((op), (what), zb_d_, (int)(sizeof zb_d_ / sizeof zb_d_[0]))); \
    } while (0)

static zb_status bad_dims(const char *op, const char *what, int a, int b) {
    return ZB_FAIL(ZB_ERR_INVALID, "kernels: %s: %s (%d, %d)", op, what, a, b);
}

/* The call the backend gets: the caller's, with the op's FLOPs. */
static zb_kcall with_flops(const zb_kcall *c, double flops) {
    zb_kcall k = *c;
    k.flops = flops;
    return k;
}

static zb_status check_rope(const char *op, int B, int T, int NH, int D) {
    if (D <= 0 || D % 2 != 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "kernels: %s: head dim %d must be a positive even number", op, D);
    }
    if (B < 0 || T < 0 || NH < 0) return bad_dims(op, "negative batch or sequence", B, T);
    NEED_FIT(op, "x", (size_t)B, (size_t)T, (size_t)NH, (size_t)D);
    return ZB_OK;
}

/* q [B,T,H,D], k, v [B,T,KVH,D], lse [B,H,T]; B and H are grid
 * dimensions on CUDA (at most 65535). */
static zb_status check_attention(const char *op, int B, int T, int H, int KVH, int D) {
    if (H <= 0 || KVH <= 0 || H % KVH != 0 || D <= 0) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "kernels: %s: query heads %d must be a positive multiple of kv heads %d "
                       "(head dim %d > 0)",
                       op, H, KVH, D);
    }
    if (B < 0 || T < 0 || B > 65535 || H > 65535) {
        return bad_dims(op, "batch in [0, 65535] and sequence >= 0 needed", B, T);
    }
    NEED_FIT(op, "q", (size_t)B, (size_t)T, (size_t)H, (size_t)D);
    NEED_FIT(op, "lse", (size_t)B, (size_t)H, (size_t)T);
    return ZB_OK;
}

/* ---- the entries --------------------------------------------------------- */

static zb_status f_embedding_fwd(const zb_kcall *c, void *out, const int32_t *tokens,
                                 const void *table, int N, int C, int V) {
    const char *op = "embedding_fwd";
    const zb_kernels *b;
    ZB_TRY(backend_of(c, op, &b));
    ZB_TRY(need_dtype(c, op));
    if (N < 0 || C < 0 || V < 0) return bad_dims(op, "negative N or C", N, C);
    NEED_PTRS(op, N > 0 && C > 0, {"out", out}, {"tokens", tokens}, {"table", table});
    zb_kcall k = with_flops(c, 0.0);
    return b->embedding_fwd(&k, out, tokens, table, N, C, V);
}

static zb_status f_embedding_bwd(const zb_kcall *c, float *dtable, const int32_t *tokens,
                                 const void *dout, int N, int C, int V) {
    const char *op = "embedding_bwd";
    const zb_kernels *b;
    ZB_TRY(backend_of(c, op, &b));
    ZB_TRY(need_dtype(c, op));
    if (N < 0 || C < 0 || V < 0) return bad_dims(op, "negative N or C", N, C);
    NEED_PTRS(op, N > 0 && C > 0, {"dtable", dtable}, {"tokens", tokens}, {"dout", dout});
    zb_kcall k = with_flops(c, 0.0);
    return b->embedding_bwd(&k, dtable, tokens, dout, N, C, V);
}

static zb_status f_rmsnorm_fwd(const zb_kcall *c, void *out, float *inv_rms, const void *x,
                               const void *weight, int N, int C, float eps) {
    const char *op = "rmsnorm_fwd";
    const zb_kernels *b;
    ZB_TRY(backend_of(c, op, &b));
    ZB_TRY(need_dtype(c, op));
    if (N < 0 || C <= 0) return bad_dims(op, "rows N >= 0 and width C > 0 needed", N, C);
    NEED_PTRS(op, N > 0, {"out", out}, {"inv_rms", inv_rms}, {"x", x}, {"weight", weight});
    zb_kcall k = with_flops(c, 0.0);
    return b->rmsnorm_fwd(&k, out, inv_rms, x, weight, N, C, eps);
}

static zb_status f_rmsnorm_bwd(const zb_kcall *c, void *dx, float *dweight, const void *dout,
                               const void *x, const void *weight, const float *inv_rms, int N,
                               int C) {
    const char *op = "rmsnorm_bwd";
    const zb_kernels *b;
    ZB_TRY(backend_of(c, op, &b));
    ZB_TRY(need_dtype(c, op));
    if (N < 0 || C <= 0) return bad_dims(op, "rows N >= 0 and width C > 0 needed", N, C);
    NEED_PTRS(op, N > 0, {"dx", dx}, {"dweight", dweight}, {"dout", dout}, {"x", x},
              {"weight", weight}, {"inv_rms", inv_rms});
    zb_kcall k = with_flops(c, 0.0);
    return b->rmsnorm_bwd(&k, dx, dweight, dout, x, weight, inv_rms, N, C);
}

static zb_status f_rope_fwd(const zb_kcall *c, void *out, const void *x, int B, int T, int NH,
                            int D, float theta) {
    const char *op = "rope_fwd";
    const zb_kernels *b;
    ZB_TRY(backend_of(c, op, &b));
    ZB_TRY(need_dtype(c, op));
    ZB_TRY(check_rope(op, B, T, NH, D));
    NEED_PTRS(op, B > 0 && T > 0 && NH > 0, {"out", out}, {"x", x});
    zb_kcall k = with_flops(c, 0.0);
    return b->rope_fwd(&k, out, x, B, T, NH, D, theta);
}

static zb_status f_rope_bwd(const zb_kcall *c, void *dx, const void *dout, int B, int T, int NH,
                            int D, float theta) {
    const char *op = "rope_bwd";
    const zb_kernels *b;
    ZB_TRY(backend_of(c, op, &b));
    ZB_TRY(need_dtype(c, op));
    ZB_TRY(check_rope(op, B, T, NH, D));
    NEED_PTRS(op, B > 0 && T > 0 && NH > 0, {"dx", dx}, {"dout", dout});
    zb_kcall k = with_flops(c, 0.0);
    return b->rope_bwd(&k, dx, dout, B, T, NH, D, theta);
}

static zb_status f_attention_fwd(const zb_kcall *c, void *out, float *lse, const void *q,
                                 const void *kk, const void *v, int B, int T, int H, int KVH,
                                 int D) {
    const char *op = "attention_fwd";
    const zb_kernels *b;
    ZB_TRY(backend_of(c, op, &b));
    ZB_TRY(need_dtype(c, op));
    ZB_TRY(check_attention(op, B, T, H, KVH, D));
    NEED_PTRS(op, B > 0 && T > 0, {"out", out}, {"lse", lse}, {"q", q}, {"k", kk}, {"v", v});
    zb_kcall k = with_flops(c, zb_attention_fwd_flops(B, T, H, D));
    return b->attention_fwd(&k, out, lse, q, kk, v, B, T, H, KVH, D);
}

static zb_status f_attention_bwd(const zb_kcall *c, void *dq, void *dk, void *dv,
                                 const void *dout, const void *q, const void *kk, const void *v,
                                 const void *out, const float *lse, int B, int T, int H, int KVH,
                                 int D) {
    const char *op = "attention_bwd";
    const zb_kernels *b;
    ZB_TRY(backend_of(c, op, &b));
    ZB_TRY(need_dtype(c, op));
    ZB_TRY(check_attention(op, B, T, H, KVH, D));
    NEED_PTRS(op, B > 0 && T > 0, {"dq", dq}, {"dk", dk}, {"dv", dv}, {"dout", dout}, {"q", q},
              {"k", kk}, {"v", v}, {"out", out}, {"lse", lse});
    zb_kcall k = with_flops(c, zb_attention_bwd_flops(B, T, H, D));
    return b->attention_bwd(&k, dq, dk, dv, dout, q, kk, v, out, lse, B, T, H, KVH, D);
}

/* The backend's name for its attention; "unknown" for a table without one
 * or a call that cannot reach a backend (it only labels output). */
static const char *f_attention_impl(const zb_kcall *c) {
    const zb_kernels *b = NULL;
    if (!c || !c->stream || !c->stream->dev || !c->stream->dev->ops ||
        !c->stream->dev->ops->kernels)
        return "unknown";
    b = c->stream->dev->ops->kernels();
    return b && b->attention_impl ? b->attention_impl(c) : "unknown";
}

static zb_status f_swiglu_fwd(const zb_kcall *c, void *h, const void *gate, const void *up,
                              size_t n) {
    const char *op = "swiglu_fwd";
    const zb_kernels *b;
    ZB_TRY(backend_of(c, op, &b));
    ZB_TRY(need_dtype(c, op));
    NEED_FIT(op, "h", n);
    NEED_PTRS(op, n > 0, {"h", h}, {"gate", gate}, {"up", up});
    zb_kcall k = with_flops(c, 0.0);
    return b->swiglu_fwd(&k, h, gate, up, n);
}

static zb_status f_swiglu_bwd(const zb_kcall *c, void *dgate, void *dup, const void *dh,
                              const void *gate, const void *up, size_t n) {
    const char *op = "swiglu_bwd";
    const zb_kernels *b;
    ZB_TRY(backend_of(c, op, &b));
    ZB_TRY(need_dtype(c, op));
    NEED_FIT(op, "dh", n);
    NEED_PTRS(op, n > 0, {"dgate", dgate}, {"dup", dup}, {"dh", dh}, {"gate", gate}, {"up", up});
    zb_kcall k = with_flops(c, 0.0);
    return b->swiglu_bwd(&k, dgate, dup, dh, gate, up, n);
}

static zb_status f_residual_fwd(const zb_kcall *c, void *out, const void *x, const void *y,
                                size_t n) {
    const char *op = "residual_fwd";
    const zb_kernels *b;
    ZB_TRY(backend_of(c, op, &b));
    ZB_TRY(need_dtype(c, op));
    NEED_FIT(op, "out", n);
    NEED_PTRS(op, n > 0, {"out", out}, {"a", x}, {"b", y});
    zb_kcall k = with_flops(c, 0.0);
    return b->residual_fwd(&k, out, x, y, n);
}

static zb_status f_accumulate(const zb_kcall *c, void *dst, const void *src, size_t n) {
    const char *op = "accumulate";
    const zb_kernels *b;
    ZB_TRY(backend_of(c, op, &b));
    ZB_TRY(need_dtype(c, op));
    NEED_FIT(op, "dst", n);
    NEED_PTRS(op, n > 0, {"dst", dst}, {"src", src});
    zb_kcall k = with_flops(c, 0.0);
    return b->accumulate(&k, dst, src, n);
}

static zb_status f_cross_entropy_fwd(const zb_kcall *c, float *loss, float *lse,
                                     const void *logits, const int32_t *targets, int N, int V) {
    const char *op = "cross_entropy_fwd";
    const zb_kernels *b;
    ZB_TRY(backend_of(c, op, &b));
    ZB_TRY(need_dtype(c, op));
    if (N < 0 || V <= 0) return bad_dims(op, "rows N >= 0 and vocab V > 0 needed", N, V);
    NEED_PTRS(op, N > 0, {"loss", loss}, {"lse", lse}, {"logits", logits}, {"targets", targets});
    zb_kcall k = with_flops(c, 0.0);
    return b->cross_entropy_fwd(&k, loss, lse, logits, targets, N, V);
}

static zb_status f_cross_entropy_bwd(const zb_kcall *c, void *dlogits, const void *logits,
                                     const float *lse, const int32_t *targets, int N, int V,
                                     float dloss) {
    const char *op = "cross_entropy_bwd";
    const zb_kernels *b;
    ZB_TRY(backend_of(c, op, &b));
    ZB_TRY(need_dtype(c, op));
    if (N < 0 || V <= 0) return bad_dims(op, "rows N >= 0 and vocab V > 0 needed", N, V);
    NEED_PTRS(op, N > 0, {"dlogits", dlogits}, {"logits", logits}, {"lse", lse},
              {"targets", targets});
    zb_kcall k = with_flops(c, 0.0);
    return b->cross_entropy_bwd(&k, dlogits, logits, lse, targets, N, V, dloss);
}

static zb_status f_adamw(const zb_kcall *c, float *params, const float *grads, float *m,
                         float *v, size_t n, int t, float lr, float beta1, float beta2,
                         float eps, float weight_decay, bool apply_weight_decay) {
    const char *op = "adamw";
    const zb_kernels *b;
    ZB_TRY(backend_of(c, op, &b));
    if (t < 1) return ZB_FAIL(ZB_ERR_INVALID, "kernels: adamw: step %d must be >= 1", t);
    NEED_FIT(op, "params", n);
    NEED_PTRS(op, n > 0, {"params", params}, {"grads", grads}, {"m", m}, {"v", v});
    zb_kcall k = with_flops(c, 0.0);
    return b->adamw(&k, params, grads, m, v, n, t, lr, beta1, beta2, eps, weight_decay,
                    apply_weight_decay);
}

static zb_status f_fill(const zb_kcall *c, float *dst, float value, size_t n) {
    const char *op = "fill";
    const zb_kernels *b;
    ZB_TRY(backend_of(c, op, &b));
    NEED_FIT(op, "dst", n);
    NEED_PTRS(op, n > 0, {"dst", dst});
    zb_kcall k = with_flops(c, 0.0);
    return b->fill(&k, dst, value, n);
}

static zb_status f_cast(const zb_kcall *c, void *dst, zb_dtype dst_type, const void *src,
                        zb_dtype src_type, size_t n) {
    const char *op = "cast";
    const zb_kernels *b;
    ZB_TRY(backend_of(c, op, &b));
    bool narrow = src_type == ZB_DTYPE_F32 && dst_type == ZB_DTYPE_BF16;
    bool widen = src_type == ZB_DTYPE_BF16 && dst_type == ZB_DTYPE_F32;
    if (!narrow && !widen) {
        return ZB_FAIL(ZB_ERR_INVALID, "kernels: cast: %s -> %s is not supported (float <-> bf16 "
                       "only)", zb_dtype_name(src_type), zb_dtype_name(dst_type));
    }
    NEED_FIT(op, "src", n);
    NEED_PTRS(op, n > 0, {"dst", dst}, {"src", src});
    zb_kcall k = with_flops(c, 0.0);
    return b->cast(&k, dst, dst_type, src, src_type, n);
}

static const zb_kernels front_end = {
    .name = "front end",
    .embedding_fwd = f_embedding_fwd,
    .embedding_bwd = f_embedding_bwd,
    .rmsnorm_fwd = f_rmsnorm_fwd,
    .rmsnorm_bwd = f_rmsnorm_bwd,
    .rope_fwd = f_rope_fwd,
    .rope_bwd = f_rope_bwd,
    .attention_fwd = f_attention_fwd,
    .attention_bwd = f_attention_bwd,
    .attention_impl = f_attention_impl,
    .swiglu_fwd = f_swiglu_fwd,
    .swiglu_bwd = f_swiglu_bwd,
    .residual_fwd = f_residual_fwd,
    .accumulate = f_accumulate,
    .cross_entropy_fwd = f_cross_entropy_fwd,
    .cross_entropy_bwd = f_cross_entropy_bwd,
    .adamw = f_adamw,
    .fill = f_fill,
    .cast = f_cast,
};

const zb_kernels *zb_kernels_for(zb_device *dev) {
    if (!dev || !dev->ops || !dev->ops->name) {
        ZB_FAIL(ZB_ERR_INVALID, "kernels: no device given");
        return NULL;
    }
    if (!dev->ops->kernels || !dev->ops->kernels()) {
        ZB_FAIL(ZB_ERR_UNSUPPORTED, "kernels: the '%s' device has no kernel table", dev->ops->name);
        return NULL;
    }
    return &front_end;
}
