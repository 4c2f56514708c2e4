/* The sim device's kernel table (kernels.h): every op costs, none computes.
 * An element-wise op, a norm, RoPE, the cross-entropy, AdamW, fill and cast
 * cost the bytes they read plus the bytes they write (kernel_bytes.h) over
 * the memory bandwidth that kernel reaches (zb_sim_kernel_s: its own
 * efficiency where the profile gives one), or with sim.elementwise
 * "eager" the kernels PyTorch eager runs for the block (eager_op); fused
 * attention the slower of its causal FLOPs and its bytes (sim_cost.h). */
#include "kernel_bytes.h"
#include "sim_cost.h"
#include "sim_internal.h"

static zb_status mem_op(const zb_kcall *c, const char *name, double bytes) {
    zb_op_info info = {ZB_OP_COMPUTE, c->label ? c->label : name, c->unit, (uint64_t)bytes, c->flops};
    const sim_device *d = (const sim_device *)c->stream->dev;
    return zb_sim_issue(c->stream, &info, zb_sim_kernel_s(&d->hw, name, bytes));
}

static bool eager(const zb_kcall *c) { return ((const sim_device *)c->stream->dev)->hw.sim.eager_elementwise; }

/* A block as PyTorch eager runs it (sim.elementwise "eager"): all its
 * kernels' bytes over the memory bandwidth (mem_efficiency: the calibrated
 * per-kernel efficiencies are the engine's fused kernels'), and the per-op
 * overhead of each kernel after the first (the first's is the gap
 * zb_sim_issue puts before every op). One record for the block. */
static zb_status eager_op(const zb_kcall *c, const char *name, zb_kcost k) {
    zb_op_info info = {ZB_OP_COMPUTE, c->label ? c->label : name, c->unit, (uint64_t)k.bytes, c->flops};
    const zb_hw_profile *hw = &((const sim_device *)c->stream->dev)->hw;
    double launches = k.ops > 1 ? (double)(k.ops - 1) * hw->sim.op_overhead_s : 0;
    return zb_sim_issue(c->stream, &info, zb_sim_mem_s(hw, k.bytes) + launches);
}

/* Bytes of n elements of the storage dtype, and of fp32 (attention's). */
static double st(const zb_kcall *c, double n) { return n * (double)zb_dtype_size(c->dtype); }
static double f4(double n) { return 4.0 * n; }

static zb_status k_embedding_fwd(const zb_kcall *c, void *out, const int32_t *tokens, const void *table, int N,
                                 int C, int V) {
    return mem_op(c, "embedding_fwd", zb_kbytes_embedding_fwd(c->dtype, N, C));
}
static zb_status k_embedding_bwd(const zb_kcall *c, float *dtable, const int32_t *tokens, const void *dout, int N,
                                 int C, int V) {
    return mem_op(c, "embedding_bwd", zb_kbytes_embedding_bwd(c->dtype, N, C));
}
static zb_status k_rmsnorm_fwd(const zb_kcall *c, void *out, float *inv_rms, const void *x, const void *weight,
                               int N, int C, float eps) {
    if (eager(c)) return eager_op(c, "rmsnorm_fwd", zb_keager_rmsnorm_fwd(c->dtype, N, C));
    return mem_op(c, "rmsnorm_fwd", zb_kbytes_rmsnorm_fwd(c->dtype, N, C));
}
static zb_status k_rmsnorm_bwd(const zb_kcall *c, void *dx, float *dweight, const void *dout, const void *x,
                               const void *weight, const float *inv_rms, int N, int C) {
    if (eager(c)) return eager_op(c, "rmsnorm_bwd", zb_keager_rmsnorm_bwd(c->dtype, N, C));
    return mem_op(c, "rmsnorm_bwd", zb_kbytes_rmsnorm_bwd(c->dtype, N, C));
}
static zb_status k_rope_fwd(const zb_kcall *c, void *out, const void *x, int B, int T, int NH, int D, float th) {
    if (eager(c)) return eager_op(c, "rope_fwd", zb_keager_rope(c->dtype, B, T, NH, D));
    return mem_op(c, "rope_fwd", zb_kbytes_rope(c->dtype, B, T, NH, D));
}
static zb_status k_rope_bwd(const zb_kcall *c, void *dx, const void *dout, int B, int T, int NH, int D, float th) {
    if (eager(c)) return eager_op(c, "rope_bwd", zb_keager_rope(c->dtype, B, T, NH, D));
    return mem_op(c, "rope_bwd", zb_kbytes_rope(c->dtype, B, T, NH, D));
}

/* Fused attention (sim_cost.h): forward reads q, k, v and writes out and
 * lse; backward reads dout, q, k, v, out and lse and writes dq, dk, dv.
 * Nothing of T x T moves through memory. */
static zb_status attention(const zb_kcall *c, const char *name, double bytes, double seconds) {
    zb_op_info info = {ZB_OP_COMPUTE, c->label ? c->label : name, c->unit, (uint64_t)bytes, c->flops};
    return zb_sim_issue(c->stream, &info, seconds);
}
static const zb_hw_profile *hw_of(const zb_kcall *c) { return &((const sim_device *)c->stream->dev)->hw; }
static zb_status k_attention_fwd(const zb_kcall *c, void *out, float *lse, const void *q, const void *k,
                                 const void *v, int B, int T, int H, int KVH, int D) {
    double qo = (double)B * T * H * D, kv = (double)B * T * KVH * D, rows = (double)B * H * T;
    double bytes = st(c, 2.0 * qo + 2.0 * kv) + f4(rows);
    return attention(c, "attention_fwd", bytes, zb_sim_attention_fwd_s(hw_of(c), B, T, H, D, bytes, c->dtype));
}
static zb_status k_attention_bwd(const zb_kcall *c, void *dq, void *dk, void *dv, const void *dout, const void *q,
                                 const void *k, const void *v, const void *out, const float *lse, int B, int T,
                                 int H, int KVH, int D) {
    double qo = (double)B * T * H * D, kv = (double)B * T * KVH * D, rows = (double)B * H * T;
    double bytes = st(c, 4.0 * qo + 4.0 * kv) + f4(rows);
    return attention(c, "attention_bwd", bytes, zb_sim_attention_bwd_s(hw_of(c), B, T, H, D, bytes, c->dtype));
}
static const char *k_attention_impl(const zb_kcall *c) {
    (void)c;
    return "sim, costed as cudnn-sdpa";
}

static zb_status k_swiglu_fwd(const zb_kcall *c, void *h, const void *gate, const void *up, size_t n) {
    if (eager(c)) return eager_op(c, "swiglu_fwd", zb_keager_swiglu_fwd(c->dtype, n));
    return mem_op(c, "swiglu_fwd", zb_kbytes_swiglu_fwd(c->dtype, n));
}
static zb_status k_swiglu_bwd(const zb_kcall *c, void *dgate, void *dup, const void *dh, const void *gate,
                              const void *up, size_t n) {
    if (eager(c)) return eager_op(c, "swiglu_bwd", zb_keager_swiglu_bwd(c->dtype, n));
    return mem_op(c, "swiglu_bwd", zb_kbytes_swiglu_bwd(c->dtype, n));
}
static zb_status k_residual_fwd(const zb_kcall *c, void *out, const void *a, const void *b, size_t n) {
    return mem_op(c, "residual_fwd", zb_kbytes_residual_fwd(c->dtype, n));
}
static zb_status k_accumulate(const zb_kcall *c, void *dst, const void *src, size_t n) {
    return mem_op(c, "accumulate", zb_kbytes_accumulate(c->dtype, n));
}
static zb_status k_cross_entropy_fwd(const zb_kcall *c, float *loss, float *lse, const void *logits,
                                     const int32_t *targets, int N, int V) {
    if (eager(c)) return eager_op(c, "cross_entropy_fwd", zb_keager_cross_entropy_fwd(c->dtype, N, V));
    return mem_op(c, "cross_entropy_fwd", zb_kbytes_cross_entropy_fwd(c->dtype, N, V));
}
static zb_status k_cross_entropy_bwd(const zb_kcall *c, void *dlogits, const void *logits, const float *lse,
                                     const int32_t *targets, int N, int V, float dloss) {
    if (eager(c)) return eager_op(c, "cross_entropy_bwd", zb_keager_cross_entropy_bwd(c->dtype, N, V));
    return mem_op(c, "cross_entropy_bwd", zb_kbytes_cross_entropy_bwd(c->dtype, N, V));
}
static zb_status k_adamw(const zb_kcall *c, float *params, const float *grads, float *m, float *v, size_t n, int t,
                         float lr, float beta1, float beta2, float eps, float wd, bool apply_wd) {
    if (eager(c)) return eager_op(c, "adamw", zb_keager_adamw(n));
    return mem_op(c, "adamw", zb_kbytes_adamw(n));
}
static zb_status k_fill(const zb_kcall *c, float *dst, float value, size_t n) {
    return mem_op(c, "fill", zb_kbytes_fill(n));
}
static zb_status k_cast(const zb_kcall *c, void *dst, zb_dtype dst_type, const void *src, zb_dtype src_type,
                        size_t n) {
    return mem_op(c, "cast", zb_kbytes_cast(dst_type, src_type, n));
}

static const zb_kernels sim_table = {
    .name = "sim",
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

const zb_kernels *zb_kernels_sim(void) { return &sim_table; }
