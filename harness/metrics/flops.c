/* Model/hardware FLOPs per token and MFU (formulas and derivation in
 * flops.h). Counts are doubles: every product here stays far below 2^53 for
 * real models, so they are exact. */
#include "flops.h"

#include <math.h>

#include "kernels.h"
#include <string.h>

static const char *const zb_convention_names[ZB_FLOPS_CONVENTION_COUNT] = {"full", "causal"};
static const char *const zb_recompute_names[ZB_RECOMPUTE_COUNT] = {"none", "blocks", "all"};

const char *zb_flops_convention_name(zb_flops_convention c) {
    if ((int)c < 0 || c >= ZB_FLOPS_CONVENTION_COUNT) return "?";
    return zb_convention_names[c];
}

zb_status zb_flops_convention_parse(const char *name, zb_flops_convention *out) {
    for (int i = 0; name && i < ZB_FLOPS_CONVENTION_COUNT; i++) {
        if (strcmp(name, zb_convention_names[i]) == 0) {
            *out = (zb_flops_convention)i;
            return ZB_OK;
        }
    }
    return ZB_FAIL(ZB_ERR_INVALID, "FLOP convention '%s': accepted values are full, causal",
                   name ? name : "(null)");
}

const char *zb_recompute_name(zb_recompute r) {
    if ((int)r < 0 || r >= ZB_RECOMPUTE_COUNT) return "?";
    return zb_recompute_names[r];
}

zb_status zb_recompute_parse(const char *name, zb_recompute *out) {
    for (int i = 0; name && i < ZB_RECOMPUTE_COUNT; i++) {
        if (strcmp(name, zb_recompute_names[i]) == 0) {
            *out = (zb_recompute)i;
            return ZB_OK;
        }
    }
    return ZB_FAIL(ZB_ERR_INVALID, "recompute '%s': accepted values are none, blocks, all",
                   name ? name : "(null)");
}

zb_status zb_flops_shape_check(const zb_flops_shape *s) {
    if (!s) return ZB_FAIL(ZB_ERR_INVALID, "FLOP shape is NULL");
    const struct {
        const char *name;
        int value;
    } fields[] = {{"layers", s->n_layers}, {"dim", s->dim},         {"heads", s->n_heads},
                  {"kv_heads", s->n_kv_heads}, {"head_dim", s->head_dim},
                  {"ffn_dim", s->ffn_dim}, {"vocab", s->vocab},   {"seq", s->seq}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (fields[i].value <= 0) {
            return ZB_FAIL(ZB_ERR_INVALID, "model shape field %s = %d: must be > 0",
                           fields[i].name, fields[i].value);
        }
    }
    if (s->n_heads % s->n_kv_heads != 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "model shape: kv_heads = %d must divide heads = %d",
                       s->n_kv_heads, s->n_heads);
    }
    return ZB_OK;
}

zb_status zb_flops_per_token(const zb_flops_shape *s, zb_flops_convention conv,
                             zb_recompute recompute, zb_flops_breakdown *out) {
    ZB_TRY(zb_flops_shape_check(s));
    if ((int)conv < 0 || conv >= ZB_FLOPS_CONVENTION_COUNT) {
        return ZB_FAIL(ZB_ERR_INVALID, "FLOP convention %d: accepted values are full, causal",
                       (int)conv);
    }
    if ((int)recompute < 0 || recompute >= ZB_RECOMPUTE_COUNT) {
        return ZB_FAIL(ZB_ERR_INVALID, "recompute %d: accepted values are none, blocks, all",
                       (int)recompute);
    }
    double dim = s->dim, ffn = s->ffn_dim, L = s->n_layers, seq = s->seq;
    double d_attn = (double)s->n_heads * s->head_dim;
    double d_kv = (double)s->n_kv_heads * s->head_dim;

    /* wq + wk + wv + wo + w1 + w3 + w2, per layer. */
    double per_layer = dim * d_attn + 2.0 * dim * d_kv + d_attn * dim + 3.0 * dim * ffn;
    double n_layers = L * per_layer;
    double n_head = dim * (double)s->vocab;

    /* Forward attention FLOPs per token: QK^T and PV, 2*s*d_attn each, per
     * layer (the kernels' formula for one sequence, over its s tokens); the
     * causal convention keeps half. */
    double attn_fwd = L * (zb_attention_fwd_flops(1, s->seq, s->n_heads, s->head_dim) / seq);
    if (conv == ZB_FLOPS_CAUSAL) attn_fwd *= 0.5;

    memset(out, 0, sizeof *out);
    out->n_matmul_layers = n_layers;
    out->n_matmul_head = n_head;
    out->n_matmul = n_layers + n_head;
    out->matmul_flops = 6.0 * out->n_matmul;
    out->attn_flops = 3.0 * attn_fwd; /* forward + backward (twice the forward) */
    out->model_flops = out->matmul_flops + out->attn_flops;
    switch (recompute) {
    case ZB_RECOMPUTE_NONE: out->recompute_flops = 0.0; break;
    case ZB_RECOMPUTE_BLOCKS: out->recompute_flops = 2.0 * n_layers + attn_fwd; break;
    case ZB_RECOMPUTE_ALL: out->recompute_flops = 2.0 * out->n_matmul + attn_fwd; break;
    case ZB_RECOMPUTE_COUNT: break;
    }
    out->hardware_flops = out->model_flops + out->recompute_flops;
    return ZB_OK;
}

double zb_model_flops_per_token(const zb_flops_shape *s, zb_flops_convention conv) {
    zb_flops_breakdown b;
    if (zb_flops_per_token(s, conv, ZB_RECOMPUTE_NONE, &b) != ZB_OK) return NAN;
    return b.model_flops;
}

double zb_mfu_pct(double flops_per_token, double tokens_per_step_global, double step_time_s,
                  int n_ranks, double peak_flops_per_rank) {
    if (!isfinite(flops_per_token) || !isfinite(tokens_per_step_global) ||
        !isfinite(step_time_s) || !isfinite(peak_flops_per_rank))
        return NAN;
    if (step_time_s <= 0.0 || n_ranks <= 0 || peak_flops_per_rank <= 0.0) return NAN;
    return 100.0 * flops_per_token * tokens_per_step_global /
           (step_time_s * (double)n_ranks * peak_flops_per_rank);
}
