/* Per-unit forward, issued on a stream (unit.h), and the helpers backward
 * shares (unit_impl.h).
 * Shapes: N = B*T tokens; x_in, x_out [N, C]; q [N, HD] = [B, T, H, D];
 * k, v [N, KD] = [B, T, KVH, D]; gate, up, act [N, F]; logits [N, V];
 * linear weights [out, in], so y = x W^T is a gemm with trans_b. */
#include <stdio.h>
#include <string.h>

#include "unit_impl.h"

zb_status zb_unit_gemm(const zb_unit_ctx *c, int unit, const char *label, bool ta, bool tb,
                       int m, int n, int k, const void *a, const void *b, void *out,
                       float beta, bool out_f32) {
    zb_gemm_desc g;
    memset(&g, 0, sizeof g);
    g.trans_a = ta;
    g.trans_b = tb;
    g.m = m;
    g.n = n;
    g.k = k;
    g.alpha = 1.0f;
    g.beta = beta;
    g.a = a;
    g.lda = ta ? m : k;
    g.b = b;
    g.ldb = tb ? k : n;
    g.c = out;
    g.ldc = n;
    g.dtype = c->dtype;
    g.c_f32 = out_f32;
    zb_op_info info;
    memset(&info, 0, sizeof info);
    info.kind = ZB_OP_COMPUTE;
    info.label = label;
    info.unit = unit;
    info.flops = 2.0 * (double)m * (double)n * (double)k;
    zb_device *dev = c->stream->dev;
    return dev->ops->gemm(c->stream, &g, &info);
}

zb_kcall zb_unit_kcall(const zb_unit_ctx *c, int unit, const char *label) {
    zb_kcall k;
    k.stream = c->stream;
    k.label = label;
    k.unit = unit;
    k.dtype = c->dtype;
    return k;
}

void zb_unit_tensors(const zb_model_cfg *cfg, int unit, const void *base, zb_dtype dtype,
                     const void *out[ZB_UNIT_MAX_TENSORS]) {
    zb_unit_layout L;
    zb_model_unit_layout(cfg, unit, &L);
    size_t esize = zb_dtype_size(dtype);
    for (int i = 0; i < ZB_UNIT_MAX_TENSORS; i++) {
        out[i] = i < L.n_tensors ? (const char *)base + L.tensors[i].offset * esize : NULL;
    }
}

zb_status zb_unit_check(const zb_unit_ctx *c, int unit, const zb_unit_acts *acts,
                        const char *what) {
    if (!c || !c->cfg || !c->k || !c->stream) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s: context without cfg, kernels or stream", what);
    }
    int n_units = zb_model_n_units(c->cfg);
    if (unit < 0 || unit >= n_units) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s: unit %d is outside [0, %d)", what, unit, n_units);
    }
    if (c->B <= 0) return ZB_FAIL(ZB_ERR_INVALID, "%s: batch %d must be positive", what, c->B);
    if (c->dtype != ZB_DTYPE_F32 && c->dtype != ZB_DTYPE_BF16) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s: storage dtype %d is neither float nor bf16", what,
                       (int)c->dtype);
    }
    if (!acts || acts->unit != unit || acts->B != c->B || !acts->block ||
        acts->dtype != c->dtype) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "%s: unit %d given activations of unit %d for batch %d in %s (context: "
                       "batch %d, %s)",
                       what, unit, acts ? acts->unit : -1, acts ? acts->B : 0,
                       acts ? zb_dtype_name(acts->dtype) : "-", c->B, zb_dtype_name(c->dtype));
    }
    zb_unit_kind kind = zb_model_unit_kind(c->cfg, unit);
    if (kind != ZB_UNIT_EMBED) {
        if (!c->ws || !c->ws->block || c->ws->B < c->B || c->ws->dtype != c->dtype) {
            return ZB_FAIL(ZB_ERR_INVALID, "%s: unit %d needs a %s workspace for batch %d", what,
                           unit, zb_dtype_name(c->dtype), c->B);
        }
        if (kind == ZB_UNIT_LAYER && !acts->keep && !c->ws->recompute) {
            return ZB_FAIL(ZB_ERR_INVALID,
                           "%s: unit %d recomputes its activations but the workspace was "
                           "allocated without recompute",
                           what, unit);
        }
    }
    if (kind == ZB_UNIT_EMBED && !c->tokens) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s: the embedding needs ctx->tokens", what);
    }
    if (kind == ZB_UNIT_HEAD && (!c->targets || !c->loss)) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s: the head needs ctx->targets and ctx->loss", what);
    }
    return ZB_OK;
}

zb_status zb_unit_layer_forward(const zb_unit_ctx *c, int unit, const void *params,
                                const void *x_in, const zb_layer_saved *s, void *x_out) {
    const zb_model_cfg *m = c->cfg;
    const zb_kernels *K = c->k;
    int B = c->B, T = m->seq, C = m->dim, H = m->heads, KVH = m->kv_heads, D = m->head_dim;
    int F = m->ffn_dim, N = B * T, HD = H * D, KD = KVH * D;
    size_t NC = (size_t)N * (size_t)C, NF = (size_t)N * (size_t)F;
    float eps = (float)m->norm_eps, theta = (float)m->rope_theta;
    const void *w[ZB_UNIT_MAX_TENSORS];
    zb_unit_tensors(m, unit, params, c->dtype, w);
    zb_kcall kc;
    /* forward ops read "fwd.<op>"; backward's recomputation "re.<op>" */
    const char *phase = x_out ? "fwd" : "re";
    char label[ZB_LABEL_MAX];
#define L(name) (snprintf(label, sizeof label, "%s." name, phase), label)

    kc = zb_unit_kcall(c, unit, L("attn_norm"));
    ZB_TRY(K->rmsnorm_fwd(&kc, s->xn1, s->rstd1, x_in, w[ZB_LAYER_ATTN_NORM], N, C, eps));
    ZB_TRY(zb_unit_gemm(c, unit, L("wq"), false, true, N, HD, C,
                        s->xn1, w[ZB_LAYER_WQ], s->q, 0, false));
    ZB_TRY(zb_unit_gemm(c, unit, L("wk"), false, true, N, KD, C,
                        s->xn1, w[ZB_LAYER_WK], s->k, 0, false));
    ZB_TRY(zb_unit_gemm(c, unit, L("wv"), false, true, N, KD, C,
                        s->xn1, w[ZB_LAYER_WV], s->v, 0, false));
    kc = zb_unit_kcall(c, unit, L("rope_q"));
    ZB_TRY(K->rope_fwd(&kc, s->q, s->q, B, T, H, D, theta));
    kc = zb_unit_kcall(c, unit, L("rope_k"));
    ZB_TRY(K->rope_fwd(&kc, s->k, s->k, B, T, KVH, D, theta));
    kc = zb_unit_kcall(c, unit, L("attention"));
    ZB_TRY(K->attention_fwd(&kc, s->att, s->lse, s->q, s->k, s->v, B, T, H, KVH, D));
    /* h = x_in + att wo^T */
    ZB_TRY(zb_unit_gemm(c, unit, L("wo"), false, true, N, C, HD,
                        s->att, w[ZB_LAYER_WO], s->h, 0, false));
    kc = zb_unit_kcall(c, unit, L("residual_attn"));
    ZB_TRY(K->residual_fwd(&kc, s->h, s->h, x_in, NC));
    kc = zb_unit_kcall(c, unit, L("ffn_norm"));
    ZB_TRY(K->rmsnorm_fwd(&kc, s->xn2, s->rstd2, s->h, w[ZB_LAYER_FFN_NORM], N, C, eps));
    ZB_TRY(zb_unit_gemm(c, unit, L("w_gate"), false, true, N, F, C, s->xn2, w[ZB_LAYER_W_GATE],
                        s->gate, 0, false));
    ZB_TRY(zb_unit_gemm(c, unit, L("w_up"), false, true, N, F, C, s->xn2, w[ZB_LAYER_W_UP],
                        s->up, 0, false));
    kc = zb_unit_kcall(c, unit, L("swiglu"));
    ZB_TRY(K->swiglu_fwd(&kc, s->act, s->gate, s->up, NF));
    if (!x_out) return ZB_OK; /* recomputation stops here */
    /* x_out = h + act w_down^T */
    ZB_TRY(zb_unit_gemm(c, unit, L("w_down"), false, true, N, C, F, s->act, w[ZB_LAYER_W_DOWN],
                        x_out, 0, false));
    kc = zb_unit_kcall(c, unit, L("residual_ffn"));
    return K->residual_fwd(&kc, x_out, x_out, s->h, NC);
}
#undef L

static zb_status head_forward(const zb_unit_ctx *c, int unit, const void *params,
                              const void *x_in, zb_unit_acts *a) {
    const zb_model_cfg *m = c->cfg;
    int N = c->B * m->seq, C = m->dim, V = m->vocab;
    const void *w[ZB_UNIT_MAX_TENSORS];
    zb_unit_tensors(m, unit, params, c->dtype, w);
    zb_kcall kc = zb_unit_kcall(c, unit, "fwd.final_norm");
    ZB_TRY(c->k->rmsnorm_fwd(&kc, a->head.xn, a->head.rstd, x_in, w[ZB_HEAD_NORM], N, C,
                             (float)m->norm_eps));
    ZB_TRY(zb_unit_gemm(c, unit, "fwd.lm_head", false, true, N, V, C, a->head.xn,
                        w[ZB_HEAD_LM_HEAD], a->head.logits, 0, false));
    kc = zb_unit_kcall(c, unit, "fwd.cross_entropy");
    return c->k->cross_entropy_fwd(&kc, c->loss, a->head.lse, a->head.logits, c->targets, N, V);
}

zb_status zb_unit_forward(const zb_unit_ctx *c, int unit, const void *params, const void *x_in,
                          void *x_out, zb_unit_acts *acts) {
    ZB_TRY(zb_unit_check(c, unit, acts, "unit forward"));
    zb_unit_kind kind = zb_model_unit_kind(c->cfg, unit);
    if (!params || (kind != ZB_UNIT_EMBED && !x_in) || (kind != ZB_UNIT_HEAD && !x_out) ||
        (x_out && x_out == x_in)) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "unit forward: unit %d needs params, x_in (not for the embedding) and a "
                       "separate x_out (not for the head)",
                       unit);
    }
    acts->x_in = x_in;
    const zb_model_cfg *m = c->cfg;
    int N = c->B * m->seq;
    switch (kind) {
    case ZB_UNIT_EMBED: {
        zb_kcall kc = zb_unit_kcall(c, unit, "fwd.embedding");
        return c->k->embedding_fwd(&kc, x_out, c->tokens, params, N, m->dim, m->vocab);
    }
    case ZB_UNIT_LAYER:
        return zb_unit_layer_forward(c, unit, params, x_in, acts->keep ? &acts->layer : &c->ws->re,
                                     x_out);
    case ZB_UNIT_HEAD: return head_forward(c, unit, params, x_in, acts);
    }
    return ZB_FAIL(ZB_ERR_INTERNAL, "unit forward: unit %d has no kind", unit);
}
