/* The CPU kernel table (harness/device/kernels.h): each entry packs its arguments
 * into a heap-allocated record and enqueues one host function on the stream
 * (device launch_host); the function runs the fp32 kernel on the stream's
 * thread, in stream order, and the cleanup callback frees the record. The
 * fp32 kernel is the device's fast one (cpu_fast.h: attention through
 * GEMMs, fused and tiled; vectorised element-wise ops and norms) where there is one, else
 * the reference (zb_cpu_kernels.h: embedding, RoPE, casts). With bf16 storage (c->dtype, kernels.h)
 * the host function is the bf16 reference of bf16_stage.c instead: the same
 * fp32 kernel on widened copies, outputs rounded once. fill, adamw and cast
 * ignore c->dtype. The arguments were checked, and the trace record's flops
 * (c->flops) set, by the kernel front end (harness/device/kernels.c).
 *
 * Shapes as in kernels.h: N = B*T tokens, activations [N, C], q
 * [B, T, H, D], k, v [B, T, KVH, D], lse [B, H, T]. On the CPU device
 * device pointers are host pointers, so the kernels read them directly. */
#include <stdlib.h>
#include <string.h>

#include "bf16_stage.h"
#include "cpu_fast.h"
#include "device_cpu.h"
#include "kernels.h"
#include "zb_cpu_kernels.h"

/* Runs the fp32 kernel on the record's pointers. */
zb_status zb_cpu_kargs_run_f32(const cpu_kargs *a) {
    const int *d = a->d;
    switch (a->op) {
    case KOP_EMBEDDING_FWD: return zb_cpu_embedding_fwd(a->o[0], a->tok, a->in[0], d[0], d[1], d[2]);
    case KOP_EMBEDDING_BWD: return zb_cpu_embedding_bwd(a->o[0], a->tok, a->in[0], d[0], d[1], d[2]);
    case KOP_RMSNORM_FWD:
        zb_cpu_rmsnorm_fwd_fast(a->o[0], a->o[1], a->in[0], a->in[1], d[0], d[1], a->f[0]);
        return ZB_OK;
    case KOP_RMSNORM_BWD:
        zb_cpu_rmsnorm_bwd_fast(a->o[0], a->o[1], a->in[0], a->in[1], a->in[2], a->in[3], d[0], d[1]);
        return ZB_OK;
    case KOP_ROPE_FWD: return zb_cpu_rope_fwd(a->o[0], a->in[0], d[0], d[1], d[2], d[3], a->f[0]);
    case KOP_ROPE_BWD: return zb_cpu_rope_bwd(a->o[0], a->in[0], d[0], d[1], d[2], d[3], a->f[0]);
    case KOP_ATTENTION_FWD:
        return zb_cpu_attention_fwd_fast(a->o[0], a->o[1], a->in[0], a->in[1], a->in[2], d[0], d[1], d[2],
                                         d[3], d[4]);
    case KOP_ATTENTION_BWD:
        return zb_cpu_attention_bwd_fast(a->o[0], a->o[1], a->o[2], a->in[0], a->in[1], a->in[2], a->in[3],
                                         a->in[4], a->in[5], d[0], d[1], d[2], d[3], d[4]);
    case KOP_SWIGLU_FWD: zb_cpu_swiglu_fwd_fast(a->o[0], a->in[0], a->in[1], a->n); return ZB_OK;
    case KOP_SWIGLU_BWD:
        zb_cpu_swiglu_bwd_fast(a->o[0], a->o[1], a->in[0], a->in[1], a->in[2], a->n);
        return ZB_OK;
    case KOP_RESIDUAL_FWD: zb_cpu_residual_fwd_fast(a->o[0], a->in[0], a->in[1], a->n); return ZB_OK;
    case KOP_ACCUMULATE: zb_cpu_accumulate_fast(a->o[0], a->in[0], a->n); return ZB_OK;
    case KOP_CROSS_ENTROPY_FWD:
        return zb_cpu_cross_entropy_fwd_fast(a->o[0], a->o[1], a->in[0], a->tok, d[0], d[1]);
    case KOP_CROSS_ENTROPY_BWD:
        return zb_cpu_cross_entropy_bwd_fast(a->o[0], a->in[0], a->in[1], a->tok, d[0], d[1], a->f[0]);
    case KOP_ADAMW:
        zb_cpu_adamw_fast(a->o[0], a->in[0], a->o[1], a->o[2], a->n, a->t, a->f[0], a->f[1], a->f[2], a->f[3],
                          a->f[4], a->flag);
        return ZB_OK;
    case KOP_FILL: {
        float *dst = a->o[0];
        if (a->f[0] == 0.0f) {
            memset(dst, 0, a->n * sizeof(float));
        } else {
            for (size_t i = 0; i < a->n; i++) dst[i] = a->f[0];
        }
        return ZB_OK;
    }
    case KOP_CAST_F32_TO_BF16: zb_cpu_f32_to_bf16(a->o[0], a->in[0], a->n); return ZB_OK;
    case KOP_CAST_BF16_TO_F32: zb_cpu_bf16_to_f32(a->o[0], a->in[0], a->n); return ZB_OK;
    }
    return ZB_FAIL(ZB_ERR_INTERNAL, "cpu kernels: unknown op %d", (int)a->op);
}

static zb_status cpu_kernel_run(void *p) {
    const cpu_kargs *a = (const cpu_kargs *)p;
    return a->dtype == ZB_DTYPE_BF16 ? zb_cpu_kargs_run_bf16(a) : zb_cpu_kargs_run_f32(a);
}

static void cpu_kernel_cleanup(void *p) { free(p); }

/* fill, adamw and cast ignore c->dtype (kernels.h). */
static bool takes_storage_dtype(cpu_kop op) {
    return op != KOP_ADAMW && op != KOP_FILL && op != KOP_CAST_F32_TO_BF16 &&
           op != KOP_CAST_BF16_TO_F32;
}

/* Copies *args to the heap and queues it; the record is freed by the
 * cleanup once the op ran (or was skipped on a failed stream), or here when
 * it could not be queued at all. */
static zb_status enqueue(const zb_kcall *c, const cpu_kargs *args, const char *name) {
    zb_device *dev = c->stream->dev;
    if (!dev->ops->launch_host) {
        return ZB_FAIL(ZB_ERR_UNSUPPORTED, "cpu kernels: device '%s' cannot run host ops",
                       dev->ops->name);
    }
    cpu_kargs *a = (cpu_kargs *)malloc(sizeof *a);
    if (!a) return ZB_FAIL(ZB_ERR_NOMEM, "cpu kernels: out of memory queueing %s", name);
    *a = *args;
    a->name = name;
    a->dtype = takes_storage_dtype(args->op) ? c->dtype : ZB_DTYPE_F32;
    zb_op_info info;
    memset(&info, 0, sizeof info);
    info.kind = ZB_OP_COMPUTE;
    info.label = c->label ? c->label : name;
    info.unit = c->unit;
    info.flops = c->flops;
    zb_status st = dev->ops->launch_host(c->stream, cpu_kernel_run, a, cpu_kernel_cleanup, &info);
    if (st != ZB_OK) free(a);
    return st;
}

static cpu_kargs kargs_of(cpu_kop op) {
    cpu_kargs a;
    memset(&a, 0, sizeof a);
    a.op = op;
    return a;
}

/* ---- the entries --------------------------------------------------------- */

static zb_status k_embedding_fwd(const zb_kcall *c, void *out, const int32_t *tokens,
                                 const void *table, int N, int C, int V) {
    cpu_kargs a = kargs_of(KOP_EMBEDDING_FWD);
    a.o[0] = out, a.tok = tokens, a.in[0] = table, a.d[0] = N, a.d[1] = C, a.d[2] = V;
    return enqueue(c, &a, "embedding_fwd");
}

static zb_status k_embedding_bwd(const zb_kcall *c, float *dtable, const int32_t *tokens,
                                 const void *dout, int N, int C, int V) {
    cpu_kargs a = kargs_of(KOP_EMBEDDING_BWD);
    a.o[0] = dtable, a.tok = tokens, a.in[0] = dout, a.d[0] = N, a.d[1] = C, a.d[2] = V;
    return enqueue(c, &a, "embedding_bwd");
}

static zb_status k_rmsnorm_fwd(const zb_kcall *c, void *out, float *inv_rms, const void *x,
                               const void *weight, int N, int C, float eps) {
    cpu_kargs a = kargs_of(KOP_RMSNORM_FWD);
    a.o[0] = out, a.o[1] = inv_rms, a.in[0] = x, a.in[1] = weight;
    a.d[0] = N, a.d[1] = C, a.f[0] = eps;
    return enqueue(c, &a, "rmsnorm_fwd");
}

static zb_status k_rmsnorm_bwd(const zb_kcall *c, void *dx, float *dweight, const void *dout,
                               const void *x, const void *weight, const float *inv_rms, int N,
                               int C) {
    cpu_kargs a = kargs_of(KOP_RMSNORM_BWD);
    a.o[0] = dx, a.o[1] = dweight, a.in[0] = dout, a.in[1] = x, a.in[2] = weight;
    a.in[3] = inv_rms, a.d[0] = N, a.d[1] = C;
    return enqueue(c, &a, "rmsnorm_bwd");
}

static zb_status k_rope(const zb_kcall *c, cpu_kop op, void *out, const void *x, int B, int T,
                        int NH, int D, float theta) {
    cpu_kargs a = kargs_of(op);
    a.o[0] = out, a.in[0] = x, a.d[0] = B, a.d[1] = T, a.d[2] = NH, a.d[3] = D, a.f[0] = theta;
    return enqueue(c, &a, op == KOP_ROPE_FWD ? "rope_fwd" : "rope_bwd");
}
static zb_status k_rope_fwd(const zb_kcall *c, void *out, const void *x, int B, int T, int NH,
                            int D, float theta) {
    return k_rope(c, KOP_ROPE_FWD, out, x, B, T, NH, D, theta);
}
static zb_status k_rope_bwd(const zb_kcall *c, void *dx, const void *dout, int B, int T,
                            int NH, int D, float theta) {
    return k_rope(c, KOP_ROPE_BWD, dx, dout, B, T, NH, D, theta);
}

static zb_status k_attention_fwd(const zb_kcall *c, void *out, float *lse, const void *q,
                                 const void *k, const void *v, int B, int T, int H, int KVH,
                                 int D) {
    cpu_kargs a = kargs_of(KOP_ATTENTION_FWD);
    a.o[0] = out, a.o[1] = lse, a.in[0] = q, a.in[1] = k, a.in[2] = v;
    a.d[0] = B, a.d[1] = T, a.d[2] = H, a.d[3] = KVH, a.d[4] = D;
    return enqueue(c, &a, "attention_fwd");
}

static zb_status k_attention_bwd(const zb_kcall *c, void *dq, void *dk, void *dv,
                                 const void *dout, const void *q, const void *k,
                                 const void *v, const void *out, const float *lse, int B,
                                 int T, int H, int KVH, int D) {
    cpu_kargs a = kargs_of(KOP_ATTENTION_BWD);
    a.o[0] = dq, a.o[1] = dk, a.o[2] = dv;
    a.in[0] = dout, a.in[1] = q, a.in[2] = k, a.in[3] = v, a.in[4] = out, a.in[5] = lse;
    a.d[0] = B, a.d[1] = T, a.d[2] = H, a.d[3] = KVH, a.d[4] = D;
    return enqueue(c, &a, "attention_bwd");
}

static const char *k_attention_impl(const zb_kcall *c) {
    (void)c;
    return "cpu-tiled";
}

static zb_status k_swiglu_fwd(const zb_kcall *c, void *h, const void *gate, const void *up,
                              size_t n) {
    cpu_kargs a = kargs_of(KOP_SWIGLU_FWD);
    a.o[0] = h, a.in[0] = gate, a.in[1] = up, a.n = n;
    return enqueue(c, &a, "swiglu_fwd");
}

static zb_status k_swiglu_bwd(const zb_kcall *c, void *dgate, void *dup, const void *dh,
                              const void *gate, const void *up, size_t n) {
    cpu_kargs a = kargs_of(KOP_SWIGLU_BWD);
    a.o[0] = dgate, a.o[1] = dup, a.in[0] = dh, a.in[1] = gate, a.in[2] = up, a.n = n;
    return enqueue(c, &a, "swiglu_bwd");
}

static zb_status k_residual_fwd(const zb_kcall *c, void *out, const void *x, const void *y,
                                size_t n) {
    cpu_kargs a = kargs_of(KOP_RESIDUAL_FWD);
    a.o[0] = out, a.in[0] = x, a.in[1] = y, a.n = n;
    return enqueue(c, &a, "residual_fwd");
}

static zb_status k_accumulate(const zb_kcall *c, void *dst, const void *src, size_t n) {
    cpu_kargs a = kargs_of(KOP_ACCUMULATE);
    a.o[0] = dst, a.in[0] = src, a.n = n;
    return enqueue(c, &a, "accumulate");
}

static zb_status k_cross_entropy_fwd(const zb_kcall *c, float *loss, float *lse,
                                     const void *logits, const int32_t *targets, int N, int V) {
    cpu_kargs a = kargs_of(KOP_CROSS_ENTROPY_FWD);
    a.o[0] = loss, a.o[1] = lse, a.in[0] = logits, a.tok = targets, a.d[0] = N, a.d[1] = V;
    return enqueue(c, &a, "cross_entropy_fwd");
}

static zb_status k_cross_entropy_bwd(const zb_kcall *c, void *dlogits, const void *logits,
                                     const float *lse, const int32_t *targets, int N, int V,
                                     float dloss) {
    cpu_kargs a = kargs_of(KOP_CROSS_ENTROPY_BWD);
    a.o[0] = dlogits, a.in[0] = logits, a.in[1] = lse, a.tok = targets;
    a.d[0] = N, a.d[1] = V, a.f[0] = dloss;
    return enqueue(c, &a, "cross_entropy_bwd");
}

static zb_status k_adamw(const zb_kcall *c, float *params, const float *grads, float *m,
                         float *v, size_t n, int t, float lr, float beta1, float beta2,
                         float eps, float weight_decay, bool apply_weight_decay) {
    cpu_kargs a = kargs_of(KOP_ADAMW);
    a.o[0] = params, a.o[1] = m, a.o[2] = v, a.in[0] = grads, a.n = n, a.t = t;
    a.f[0] = lr, a.f[1] = beta1, a.f[2] = beta2, a.f[3] = eps, a.f[4] = weight_decay;
    a.flag = apply_weight_decay;
    return enqueue(c, &a, "adamw");
}

static zb_status k_fill(const zb_kcall *c, float *dst, float value, size_t n) {
    cpu_kargs a = kargs_of(KOP_FILL);
    a.o[0] = dst, a.f[0] = value, a.n = n;
    return enqueue(c, &a, "fill");
}

static zb_status k_cast(const zb_kcall *c, void *dst, zb_dtype dst_type, const void *src,
                        zb_dtype src_type, size_t n) {
    (void)dst_type; /* the front end allows only the two pairs */
    cpu_kop op = src_type == ZB_DTYPE_F32 ? KOP_CAST_F32_TO_BF16 : KOP_CAST_BF16_TO_F32;
    cpu_kargs a = kargs_of(op);
    a.o[0] = dst, a.in[0] = src, a.n = n;
    return enqueue(c, &a, "cast");
}

static const zb_kernels cpu_kernel_table = {
    .name = "cpu",
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

const zb_kernels *zb_kernels_cpu(void) { return &cpu_kernel_table; }
