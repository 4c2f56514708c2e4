/* Per-unit backward, issued on a stream (unit.h).
 * Shapes: N = B*T tokens; dx_out, dx_in [N, C]; weights W [out, in], so
 * dW [out, in] = dy^T x (gemm with trans_a, written: beta 0) and
 * dx [N, in] = dy W. Scratch in the workspace: d_f [N, F] x2, d_c [N, C] x2,
 * d_hd [N, HD] x2, d_kd [N, KD] x2. */
#include <string.h>

#include "unit_impl.h"

/* dW [rows, cols] = dy [N, rows]^T x [N, cols] (written, fp32 whatever
 * the storage dtype: parameter gradients are fp32). */
static zb_status grad_w(const zb_unit_ctx *c, int unit, const char *label, int rows, int cols,
                        int N, const void *dy, const void *x, float *dw) {
    return zb_unit_gemm(c, unit, label, true, false, rows, cols, N, dy, x, dw, 0.0f, true);
}

/* dx [N, cols] (+)= dy [N, rows] W [rows, cols]; beta 0 writes, 1 adds. */
static zb_status grad_x(const zb_unit_ctx *c, int unit, const char *label, int rows, int cols,
                        int N, const void *dy, const void *w, void *dx, float beta) {
    return zb_unit_gemm(c, unit, label, false, false, N, cols, rows, dy, w, dx, beta, false);
}

static zb_status layer_backward(const zb_unit_ctx *c, int unit, const void *params,
                                zb_unit_acts *a, const void *dy, void *dx_in, float *grads) {
    const zb_model_cfg *m = c->cfg;
    const zb_kernels *K = c->k;
    zb_unit_workspace *ws = c->ws;
    int B = c->B, T = m->seq, C = m->dim, H = m->heads, KVH = m->kv_heads, D = m->head_dim;
    int F = m->ffn_dim, N = B * T, HD = H * D, KD = KVH * D;
    size_t NC = (size_t)N * (size_t)C, NF = (size_t)N * (size_t)F;
    float theta = (float)m->rope_theta;
    zb_unit_layout L;
    zb_model_unit_layout(m, unit, &L);
    const void *w[ZB_UNIT_MAX_TENSORS];
    zb_unit_tensors(m, unit, params, c->dtype, w);
    float *g[ZB_UNIT_MAX_TENSORS];
    for (int i = 0; i < L.n_tensors; i++) g[i] = grads + L.tensors[i].offset;
    const void *x_in = a->x_in;
    const zb_layer_saved *s = a->keep ? &a->layer : &ws->re;
    zb_kcall kc;

    if (!a->keep) ZB_TRY(zb_unit_layer_forward(c, unit, params, x_in, s, NULL));
    /* the norm gains accumulate: zero them; the matrices are written */
    kc = zb_unit_kcall(c, unit, "bwd.zero_norms");
    ZB_TRY(K->fill(&kc, g[ZB_LAYER_ATTN_NORM], 0.0f, (size_t)C));
    ZB_TRY(K->fill(&kc, g[ZB_LAYER_FFN_NORM], 0.0f, (size_t)C));

    /* ffn: x_out = h + act w_down^T; act = silu(gate) * up */
    void *d_act = ws->d_f[0], *d_gate = ws->d_f[1], *d_up = ws->d_f[0];
    ZB_TRY(grad_w(c, unit, "bwd.dw.w_down", C, F, N, dy, s->act, g[ZB_LAYER_W_DOWN]));
    ZB_TRY(grad_x(c, unit, "bwd.dx.w_down", C, F, N, dy, w[ZB_LAYER_W_DOWN], d_act, 0.0f));
    kc = zb_unit_kcall(c, unit, "bwd.swiglu");
    ZB_TRY(K->swiglu_bwd(&kc, d_gate, d_up, d_act, s->gate, s->up, NF)); /* d_up over d_act */
    ZB_TRY(grad_w(c, unit, "bwd.dw.w_gate", F, C, N, d_gate, s->xn2, g[ZB_LAYER_W_GATE]));
    ZB_TRY(grad_w(c, unit, "bwd.dw.w_up", F, C, N, d_up, s->xn2, g[ZB_LAYER_W_UP]));
    void *d_xn2 = ws->d_c[0], *d_h = ws->d_c[1];
    ZB_TRY(grad_x(c, unit, "bwd.dx.w_gate", F, C, N, d_gate, w[ZB_LAYER_W_GATE], d_xn2, 0.0f));
    ZB_TRY(grad_x(c, unit, "bwd.dx.w_up", F, C, N, d_up, w[ZB_LAYER_W_UP], d_xn2, 1.0f));
    kc = zb_unit_kcall(c, unit, "bwd.ffn_norm");
    ZB_TRY(K->rmsnorm_bwd(&kc, d_xn2, g[ZB_LAYER_FFN_NORM], d_xn2, s->h, w[ZB_LAYER_FFN_NORM],
                          s->rstd2, N, C));
    /* d_h = dy (residual) + the ffn branch; dy is not read after this */
    kc = zb_unit_kcall(c, unit, "bwd.residual_ffn");
    ZB_TRY(K->residual_fwd(&kc, d_h, dy, d_xn2, NC));

    /* attention: h = x_in + att wo^T */
    void *d_att = ws->d_hd[0], *d_q = ws->d_hd[1], *d_k = ws->d_kd[0], *d_v = ws->d_kd[1];
    ZB_TRY(grad_w(c, unit, "bwd.dw.wo", C, HD, N, d_h, s->att, g[ZB_LAYER_WO]));
    ZB_TRY(grad_x(c, unit, "bwd.dx.wo", C, HD, N, d_h, w[ZB_LAYER_WO], d_att, 0.0f));
    kc = zb_unit_kcall(c, unit, "bwd.attention");
    ZB_TRY(K->attention_bwd(&kc, d_q, d_k, d_v, d_att, s->q, s->k, s->v, s->att, s->lse, B, T, H,
                            KVH, D));
    kc = zb_unit_kcall(c, unit, "bwd.rope_q");
    ZB_TRY(K->rope_bwd(&kc, d_q, d_q, B, T, H, D, theta));
    kc = zb_unit_kcall(c, unit, "bwd.rope_k");
    ZB_TRY(K->rope_bwd(&kc, d_k, d_k, B, T, KVH, D, theta));
    ZB_TRY(grad_w(c, unit, "bwd.dw.wq", HD, C, N, d_q, s->xn1, g[ZB_LAYER_WQ]));
    ZB_TRY(grad_w(c, unit, "bwd.dw.wk", KD, C, N, d_k, s->xn1, g[ZB_LAYER_WK]));
    ZB_TRY(grad_w(c, unit, "bwd.dw.wv", KD, C, N, d_v, s->xn1, g[ZB_LAYER_WV]));
    void *d_xn1 = ws->d_c[0];
    ZB_TRY(grad_x(c, unit, "bwd.dx.wq", HD, C, N, d_q, w[ZB_LAYER_WQ], d_xn1, 0.0f));
    ZB_TRY(grad_x(c, unit, "bwd.dx.wk", KD, C, N, d_k, w[ZB_LAYER_WK], d_xn1, 1.0f));
    ZB_TRY(grad_x(c, unit, "bwd.dx.wv", KD, C, N, d_v, w[ZB_LAYER_WV], d_xn1, 1.0f));
    kc = zb_unit_kcall(c, unit, "bwd.attn_norm");
    ZB_TRY(K->rmsnorm_bwd(&kc, d_xn1, g[ZB_LAYER_ATTN_NORM], d_xn1, x_in, w[ZB_LAYER_ATTN_NORM],
                          s->rstd1, N, C));
    /* dx_in = d_h (residual) + the attention branch */
    kc = zb_unit_kcall(c, unit, "bwd.residual_attn");
    return K->residual_fwd(&kc, dx_in, d_h, d_xn1, NC);
}

static zb_status head_backward(const zb_unit_ctx *c, int unit, const void *params,
                               zb_unit_acts *a, void *dx_in, float *grads) {
    const zb_model_cfg *m = c->cfg;
    int N = c->B * m->seq, C = m->dim, V = m->vocab;
    zb_unit_layout L;
    zb_model_unit_layout(m, unit, &L);
    const void *w[ZB_UNIT_MAX_TENSORS];
    zb_unit_tensors(m, unit, params, c->dtype, w);
    float *g_norm = grads + L.tensors[ZB_HEAD_NORM].offset;
    float *g_head = grads + L.tensors[ZB_HEAD_LM_HEAD].offset;
    zb_head_saved *s = &a->head;
    zb_kcall kc = zb_unit_kcall(c, unit, "bwd.zero_norms");
    ZB_TRY(c->k->fill(&kc, g_norm, 0.0f, (size_t)C));
    /* dlogits over the logits, in place */
    kc = zb_unit_kcall(c, unit, "bwd.cross_entropy");
    ZB_TRY(c->k->cross_entropy_bwd(&kc, s->logits, s->logits, s->lse, c->targets, N, V,
                                   c->dloss_scale));
    ZB_TRY(grad_w(c, unit, "bwd.dw.lm_head", V, C, N, s->logits, s->xn, g_head));
    void *d_xn = c->ws->d_c[0];
    ZB_TRY(grad_x(c, unit, "bwd.dx.lm_head", V, C, N, s->logits, w[ZB_HEAD_LM_HEAD], d_xn, 0.0f));
    kc = zb_unit_kcall(c, unit, "bwd.final_norm");
    return c->k->rmsnorm_bwd(&kc, dx_in, g_norm, d_xn, a->x_in, w[ZB_HEAD_NORM], s->rstd, N, C);
}

zb_status zb_unit_backward(const zb_unit_ctx *c, int unit, const void *params,
                           zb_unit_acts *acts, const void *dx_out, void *dx_in, float *grads) {
    ZB_TRY(zb_unit_check(c, unit, acts, "unit backward"));
    zb_unit_kind kind = zb_model_unit_kind(c->cfg, unit);
    if (!params || !grads || (kind != ZB_UNIT_HEAD && !dx_out) ||
        (kind != ZB_UNIT_EMBED && (!dx_in || !acts->x_in))) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "unit backward: unit %d needs params, grads, dx_out (not for the head), "
                       "dx_in (not for the embedding) and a forward run first",
                       unit);
    }
    const zb_model_cfg *m = c->cfg;
    switch (kind) {
    case ZB_UNIT_EMBED: {
        int N = c->B * m->seq;
        zb_kcall kc = zb_unit_kcall(c, unit, "bwd.zero_embedding");
        ZB_TRY(c->k->fill(&kc, grads, 0.0f, (size_t)m->vocab * (size_t)m->dim));
        kc = zb_unit_kcall(c, unit, "bwd.embedding");
        return c->k->embedding_bwd(&kc, grads, c->tokens, dx_out, N, m->dim, m->vocab);
    }
    case ZB_UNIT_LAYER: return layer_backward(c, unit, params, acts, dx_out, dx_in, grads);
    case ZB_UNIT_HEAD: return head_backward(c, unit, params, acts, dx_in, grads);
    }
    return ZB_FAIL(ZB_ERR_INTERNAL, "unit backward: unit %d has no kind", unit);
}
