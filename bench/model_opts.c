/* The model's shape and state flags (model_opts.h). */
#include "model_opts.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MODEL_OPT(var, name, kind, field, lo, hi, help) \
    const zb_opt var = {name, 0, kind, ZB_OPT_FIELD(field), lo, hi, help, NULL}

const zb_opt zb_opt_recompute = {"recompute", 0, ZB_OPT_CHOICE, ZB_OPT_FIELD(recompute), 0, 0,
                                 "none, or full (keep each unit's input, recompute its forward in backward)",
                                 "none|full"};
MODEL_OPT(zb_opt_param_dtype, "param-dtype", ZB_OPT_DTYPE, param_dtype, 0, 0,
          "float or bf16: compute-dtype parameters, gathered as such (default: bf16 on cuda, float "
          "on cpu); master weights and AdamW states stay float");
MODEL_OPT(zb_opt_act_dtype, "act-dtype", ZB_OPT_DTYPE, act_dtype, 0, 0,
          "float or bf16: activations, and the dtype the kernels and GEMMs read and write (math and "
          "accumulation stay float; default: the --param-dtype; bf16 needs bf16 params)");
MODEL_OPT(zb_opt_grad_reduce_dtype, "grad-reduce-dtype", ZB_OPT_DTYPE, grad_reduce_dtype, 0, 0,
          "float or bf16: gradients as reduced across ranks (default: the --param-dtype)");
MODEL_OPT(zb_opt_prefetch_depth, "prefetch-depth", ZB_OPT_INT, prefetch_depth, 1, 64,
          "gathered units alive ahead of use in prefetch mode");

MODEL_OPT(zb_opt_layers, "layers", ZB_OPT_INT, layers, 1, 1 << 20, "override the model's number of layers");
MODEL_OPT(zb_opt_dim, "dim", ZB_OPT_INT, dim, 1, 1 << 20, "override the model dimension");
MODEL_OPT(zb_opt_heads, "heads", ZB_OPT_INT, heads, 1, 1 << 16, "override the number of attention heads");
MODEL_OPT(zb_opt_kv_heads, "kv-heads", ZB_OPT_INT, kv_heads, 1, 1 << 16, "override the number of key/value heads");
MODEL_OPT(zb_opt_head_dim, "head-dim", ZB_OPT_INT, head_dim, 1, 1 << 16, "override the head dimension");
MODEL_OPT(zb_opt_ffn_dim, "ffn-dim", ZB_OPT_INT, ffn_dim, 1, 1 << 22, "override the SwiGLU hidden dimension");
MODEL_OPT(zb_opt_vocab, "vocab", ZB_OPT_INT, vocab, 2, 1 << 24, "override the vocabulary size");
MODEL_OPT(zb_opt_seq, "seq", ZB_OPT_INT, seq, 1, 1 << 22, "override the sequence length");
MODEL_OPT(zb_opt_batch, "batch", ZB_OPT_INT, batch, 1, 1 << 20, "override the micro-batch per rank");

#define SHAPE(opt, field) {&opt, offsetof(zb_model_cfg, field)}
const zb_shape_opt zb_shape_opts[ZB_N_SHAPE_OPTS] = {
    SHAPE(zb_opt_batch, batch),       SHAPE(zb_opt_dim, dim),     SHAPE(zb_opt_ffn_dim, ffn_dim),
    SHAPE(zb_opt_head_dim, head_dim), SHAPE(zb_opt_heads, heads), SHAPE(zb_opt_kv_heads, kv_heads),
    SHAPE(zb_opt_layers, layers),     SHAPE(zb_opt_seq, seq),     SHAPE(zb_opt_vocab, vocab),
};

_Static_assert(sizeof(((zb_config *)0)->layers) == sizeof(int64_t), "shape fields are int64_t");

/* The flag's value in cfg: an int64_t field, 0 when not given. */
static int64_t shape_value(const zb_config *cfg, const zb_shape_opt *s) {
    int64_t v;
    memcpy(&v, (const char *)cfg + s->opt->offset, sizeof v);
    return v;
}

const zb_opt *zb_model_shape_given(const zb_config *cfg) {
    for (int i = 0; i < ZB_N_SHAPE_OPTS; i++) {
        if (shape_value(cfg, &zb_shape_opts[i])) return zb_shape_opts[i].opt;
    }
    return NULL;
}

void zb_model_apply_shape(const zb_config *cfg, zb_model_cfg *m) {
    for (int i = 0; i < ZB_N_SHAPE_OPTS; i++) {
        int64_t v = shape_value(cfg, &zb_shape_opts[i]);
        int small = (int)v; /* the option's range keeps it an int */
        if (v) memcpy((char *)m + zb_shape_opts[i].model_offset, &small, sizeof small);
    }
}

void zb_step_model_label(const char *profile, const zb_config *cfg, char *out, size_t n) {
    int given = 0;
    for (int i = 0; i < ZB_N_SHAPE_OPTS; i++) given += shape_value(cfg, &zb_shape_opts[i]) != 0;
    if (given == ZB_N_SHAPE_OPTS) {
        snprintf(out, n, "custom");
        return;
    }
    size_t off = (size_t)snprintf(out, n, "%s", profile);
    char sep = '+';
    for (int i = 0; i < ZB_N_SHAPE_OPTS && off < n; i++) {
        int64_t v = shape_value(cfg, &zb_shape_opts[i]);
        if (!v) continue;
        off += (size_t)snprintf(out + off, n - off, "%c%s=%lld", sep, zb_shape_opts[i].opt->name, (long long)v);
        sep = ',';
    }
}
