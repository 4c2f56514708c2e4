/* The model's configuration and parameter-unit layout (model.h; the seeded
 * init is model_init.c). Shapes: L layers, C dim, H heads, KVH kv heads, D head dim,
 * F ffn dim, V vocab; linear weights [out, in]. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "model.h"

void zb_model_cfg_from_profile(const zb_model_profile *p, uint64_t seed, zb_model_cfg *out) {
    memset(out, 0, sizeof *out);
    out->layers = p->layers;
    out->dim = p->dim;
    out->heads = p->heads;
    out->kv_heads = p->kv_heads;
    out->head_dim = p->head_dim;
    out->ffn_dim = p->ffn_dim;
    out->vocab = p->vocab;
    out->seq = p->seq;
    out->batch = p->batch;
    out->norm_eps = p->norm_eps;
    out->rope_theta = p->rope_theta;
    out->seed = seed;
}

static zb_status need_positive(const char *field, int v) {
    if (v > 0) return ZB_OK;
    return ZB_FAIL(ZB_ERR_INVALID, "model config: %s is %d; accepted: a positive integer", field,
                   v);
}

/* A product that the kernels index with int must stay below INT_MAX; one
 * they index with size_t below 2^60 elements (bytes fit in 64 bits). */
static zb_status need_fits(const char *what, double v, double limit) {
    if (v <= limit) return ZB_OK;
    return ZB_FAIL(ZB_ERR_INVALID, "model config: %s = %.0f is too large (at most %.0f)", what, v,
                   limit);
}

zb_status zb_model_cfg_validate(const zb_model_cfg *c) {
    if (!c) return ZB_FAIL(ZB_ERR_INVALID, "model config: none given");
    ZB_TRY(need_positive("layers", c->layers));
    ZB_TRY(need_positive("dim", c->dim));
    ZB_TRY(need_positive("heads", c->heads));
    ZB_TRY(need_positive("kv_heads", c->kv_heads));
    ZB_TRY(need_positive("head_dim", c->head_dim));
    ZB_TRY(need_positive("ffn_dim", c->ffn_dim));
    ZB_TRY(need_positive("vocab", c->vocab));
    ZB_TRY(need_positive("seq", c->seq));
    ZB_TRY(need_positive("batch", c->batch));
    if (c->heads % c->kv_heads != 0) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "model config: heads %d is not a multiple of kv_heads %d; accepted: "
                       "kv_heads dividing heads (grouped-query attention)",
                       c->heads, c->kv_heads);
    }
    if (c->head_dim % 2 != 0) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "model config: head_dim %d is odd; accepted: an even number (RoPE "
                       "rotates pairs)",
                       c->head_dim);
    }
    if (c->vocab < 2) {
        return ZB_FAIL(ZB_ERR_INVALID, "model config: vocab is %d; accepted: at least 2",
                       c->vocab);
    }
    if (!(c->norm_eps > 0.0) || !isfinite(c->norm_eps)) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "model config: norm_eps is %g; accepted: a positive finite number",
                       c->norm_eps);
    }
    if (!(c->rope_theta > 0.0) || !isfinite(c->rope_theta)) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "model config: rope_theta is %g; accepted: a positive finite number",
                       c->rope_theta);
    }
    const double imax = (double)INT_MAX, big = 1152921504606846976.0; /* 2^60 */
    double B = c->batch, T = c->seq, H = c->heads, D = c->head_dim;
    ZB_TRY(need_fits("batch * seq (tokens per rank)", B * T, imax));
    ZB_TRY(need_fits("heads * head_dim", H * D, imax));
    ZB_TRY(need_fits("batch * heads * seq^2 (attention probabilities)", B * H * T * T, big));
    ZB_TRY(need_fits("batch * seq * vocab (logits)", B * T * (double)c->vocab, big));
    ZB_TRY(need_fits("batch * seq * ffn_dim", B * T * (double)c->ffn_dim, big));
    ZB_TRY(need_fits("vocab * dim", (double)c->vocab * (double)c->dim, big));
    ZB_TRY(need_fits("total parameters", zb_model_total_params(c), big));
    return ZB_OK;
}

/* ---- layout -------------------------------------------------------------- */

int zb_model_n_units(const zb_model_cfg *cfg) { return cfg->layers + 2; }

zb_unit_kind zb_model_unit_kind(const zb_model_cfg *cfg, int unit) {
    if (unit == 0) return ZB_UNIT_EMBED;
    if (unit <= cfg->layers) return ZB_UNIT_LAYER;
    return ZB_UNIT_HEAD;
}

/* A tensor with std > 0 is a matrix (normal init, decays); std 0 marks a
 * norm weight (init 1, no decay). */
static void add_tensor(zb_unit_layout *u, const char *name, int rows, int cols, float std) {
    zb_tensor_layout *t = &u->tensors[u->n_tensors++];
    t->name = name;
    t->rows = rows;
    t->cols = cols;
    t->numel = (size_t)rows * (size_t)cols;
    t->offset = u->numel;
    t->is_matrix = std > 0.0f;
    t->init_std = std;
    u->numel += t->numel;
}

void zb_model_unit_layout(const zb_model_cfg *cfg, int unit, zb_unit_layout *out) {
    memset(out, 0, sizeof *out);
    out->unit = unit;
    out->kind = zb_model_unit_kind(cfg, unit);
    int C = cfg->dim, HD = cfg->heads * cfg->head_dim, KD = cfg->kv_heads * cfg->head_dim;
    int F = cfg->ffn_dim, V = cfg->vocab;
    const float std = 0.02f;
    float std_out = (float)(0.02 / sqrt(2.0 * (double)cfg->layers));
    switch (out->kind) {
    case ZB_UNIT_EMBED: add_tensor(out, "tok_embedding", V, C, std); break;
    case ZB_UNIT_LAYER:
        add_tensor(out, "attn_norm", 1, C, 0.0f);
        add_tensor(out, "wq", HD, C, std);
        add_tensor(out, "wk", KD, C, std);
        add_tensor(out, "wv", KD, C, std);
        add_tensor(out, "wo", C, HD, std_out);
        add_tensor(out, "ffn_norm", 1, C, 0.0f);
        add_tensor(out, "w_gate", F, C, std);
        add_tensor(out, "w_up", F, C, std);
        add_tensor(out, "w_down", C, F, std_out);
        break;
    case ZB_UNIT_HEAD:
        add_tensor(out, "final_norm", 1, C, 0.0f);
        add_tensor(out, "lm_head", V, C, std);
        break;
    }
}

size_t zb_model_unit_numel(const zb_model_cfg *cfg, int unit) {
    zb_unit_layout u;
    zb_model_unit_layout(cfg, unit, &u);
    return u.numel;
}

/* The tensor holding element i, or -1 past the end. */
static int tensor_of(const zb_unit_layout *u, size_t i) {
    for (int t = 0; t < u->n_tensors; t++) {
        if (i < u->tensors[t].offset + u->tensors[t].numel) return t;
    }
    return -1;
}

bool zb_model_decays(const zb_unit_layout *layout, size_t i) {
    int t = tensor_of(layout, i);
    return t >= 0 && layout->tensors[t].is_matrix;
}

/* ---- counts ---------------------------------------------------------------- */

double zb_model_matmul_params(const zb_model_cfg *c) {
    double C = c->dim, HD = (double)c->heads * c->head_dim, KD = (double)c->kv_heads * c->head_dim;
    double F = c->ffn_dim;
    double per_layer = HD * C + 2.0 * KD * C + C * HD + 3.0 * F * C;
    return (double)c->layers * per_layer + (double)c->vocab * C;
}

double zb_model_total_params(const zb_model_cfg *c) {
    double C = c->dim;
    return zb_model_matmul_params(c) + (double)c->vocab * C + (2.0 * c->layers + 1.0) * C;
}
