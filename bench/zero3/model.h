/* The model the ZeRO-3 step trains: a LLaMA-style decoder split into flat
 * parameter units, their layout, and their seeded initialization.
 *
 * Shapes: L layers, C model dim, H query heads, KVH kv heads, D head dim,
 * F ffn dim, V vocab, T sequence, B micro-batch (sequences per rank).
 * Linear weights are [out, in] (PyTorch's layout), row-major.
 *
 * Units (the granularity of all-gather and reduce-scatter), each one flat
 * fp32 vector, tensors laid out back to back in this order:
 *   unit 0         token embedding      tok_embedding [V, C]
 *   units 1..L     transformer layer    attn_norm [C], wq [H*D, C],
 *                                       wk [KVH*D, C], wv [KVH*D, C],
 *                                       wo [C, H*D], ffn_norm [C],
 *                                       w_gate [F, C], w_up [F, C],
 *                                       w_down [C, F]
 *   unit L+1       head                 final_norm [C], lm_head [V, C]
 * The head is always untied from the embedding.
 *
 * Weight decay: every 2-D weight decays (all linear weights, the embedding
 * table and the LM head); the norm weights (1-D) do not. This is the
 * common "no decay on 1-D parameters" rule (nanoGPT, Megatron's default);
 * torchtitan decays everything, which differs only on the norm gains.
 *
 * Initialization (zb_model_init_unit): element i of unit u is a function of
 * (seed, u, i) alone, so a rank can initialize just its shard and the model
 * is the same for any number of ranks. Matrices: normal, std 0.02 (GPT-2);
 * the residual-branch outputs wo and w_down std 0.02 / sqrt(2L) (GPT-2,
 * torchtitan's depth scaling); embedding and LM head std 0.02; norm
 * weights 1. The normal draw is Box-Muller on a 64-bit hash of
 * (seed, u, i). */
#ifndef ZB_ZERO3_MODEL_H
#define ZB_ZERO3_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zb_model_cfg {
    int layers;     /* L >= 1 */
    int dim;        /* C */
    int heads;      /* H, a multiple of kv_heads */
    int kv_heads;   /* KVH */
    int head_dim;   /* D, even (RoPE rotates pairs) */
    int ffn_dim;    /* F */
    int vocab;      /* V >= 2 */
    int seq;        /* T */
    int batch;      /* B: sequences per rank per step (micro-batch) */
    double norm_eps;   /* > 0 */
    double rope_theta; /* > 0 */
    uint64_t seed;  /* parameters and data */
} zb_model_cfg;

/* Copies the shapes of a model profile; the caller applies overrides
 * (--batch, --seq, ...) afterwards and then validates. */
void zb_model_cfg_from_profile(const zb_model_profile *p, uint64_t seed, zb_model_cfg *out);

/* ZB_ERR_INVALID with a one-line message naming the field, the value given
 * and what is accepted, for: a size that is not positive, heads not a
 * multiple of kv_heads, an odd head_dim, vocab < 2, a non-positive or
 * non-finite norm_eps / rope_theta, and sizes whose products overflow what
 * the kernels index (B*T, B*H*T*T, unit sizes). */
zb_status zb_model_cfg_validate(const zb_model_cfg *cfg);

typedef enum zb_unit_kind {
    ZB_UNIT_EMBED = 0,
    ZB_UNIT_LAYER,
    ZB_UNIT_HEAD
} zb_unit_kind;

/* Tensor indices within a unit (the order of zb_unit_layout.tensors). */
enum {
    ZB_EMBED_TABLE = 0
};
enum {
    ZB_LAYER_ATTN_NORM = 0,
    ZB_LAYER_WQ,
    ZB_LAYER_WK,
    ZB_LAYER_WV,
    ZB_LAYER_WO,
    ZB_LAYER_FFN_NORM,
    ZB_LAYER_W_GATE,
    ZB_LAYER_W_UP,
    ZB_LAYER_W_DOWN,
    ZB_LAYER_N_TENSORS
};
enum {
    ZB_HEAD_NORM = 0,
    ZB_HEAD_LM_HEAD,
    ZB_HEAD_N_TENSORS
};

#define ZB_UNIT_MAX_TENSORS 9

typedef struct zb_tensor_layout {
    const char *name;  /* "wq", "attn_norm", ... (static) */
    size_t offset;     /* first element within the unit's flat vector */
    size_t numel;      /* rows * cols */
    int rows, cols;    /* [rows, cols]; a 1-D weight has rows = 1 */
    bool is_matrix;    /* 2-D: takes weight decay */
    float init_std;    /* normal std; 0 for the norm weights (init 1.0) */
} zb_tensor_layout;

typedef struct zb_unit_layout {
    int unit;
    zb_unit_kind kind;
    int n_tensors;
    size_t numel; /* sum of the tensors' numel */
    zb_tensor_layout tensors[ZB_UNIT_MAX_TENSORS];
} zb_unit_layout;

/* L + 2. */
int zb_model_n_units(const zb_model_cfg *cfg);
zb_unit_kind zb_model_unit_kind(const zb_model_cfg *cfg, int unit);
/* The layout of unit `unit` (0 <= unit < n_units); tensors are contiguous
 * and in the order above. */
void zb_model_unit_layout(const zb_model_cfg *cfg, int unit, zb_unit_layout *out);
size_t zb_model_unit_numel(const zb_model_cfg *cfg, int unit);
/* Whether element i of the unit's flat vector takes weight decay. */
bool zb_model_decays(const zb_unit_layout *layout, size_t i);

/* Writes elements [begin, end) of unit `unit`'s flat vector into dst[0 ..
 * end - begin) (HOST memory). Elements at or past the unit's numel (shard
 * padding) are written as 0. */
void zb_model_init_unit(const zb_model_cfg *cfg, int unit, float *dst, size_t begin, size_t end);

/* Parameters that take part in a matrix product: every linear weight and
 * the LM head; not the embedding table, not the norm weights (docs/design.md §6
 * N_matmul). */
double zb_model_matmul_params(const zb_model_cfg *cfg);
/* Every parameter (sum of the units' numel). */
double zb_model_total_params(const zb_model_cfg *cfg);

#ifdef __cplusplus
}
#endif
#endif
