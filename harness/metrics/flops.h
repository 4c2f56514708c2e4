/* Model and hardware FLOPs per token of a LLaMA-style transformer, and MFU
 * (docs/design.md §6).
 *
 * Model FLOPs per token (one forward and one backward, 1 + 2 passes):
 *   full   : 6 * N_matmul + 12 * L * d_attn * s   (torchtitan, PaLM)
 *   causal : 6 * N_matmul +  6 * L * d_attn * s   (Megatron, llm.c)
 * N_matmul counts every weight that takes part in a matrix product: per layer
 * wq (dim x H*hd), wk and wv (dim x KV*hd each), wo (H*hd x dim), w1 and w3
 * (dim x ffn each), w2 (ffn x dim); plus the LM head (dim x vocab). Not the
 * embedding table (a lookup), not the norm weights. With tied embeddings the
 * shared matrix is counted once, as the LM head, so N_matmul is unchanged.
 * L = n_layers, d_attn = n_heads * head_dim, s = seq.
 *
 * Derivation, per token: a matmul weight costs 2 FLOPs (multiply, add) in
 * forward and 4 in backward (input and weight gradients): 6 * N_matmul. The
 * attention scores Q K^T and the weighted sum P V each cost 2 * s * d_attn per
 * layer in forward when the full s x s matrix is counted, so 4 * L * d_attn * s
 * forward and 8 * L * d_attn * s backward: 12 * L * d_attn * s. The causal
 * convention counts only the lower triangle: half of that.
 *
 * Hardware FLOPs (HFU) add what recomputation runs again. A recomputed part's
 * forward is counted twice:
 *   ZB_RECOMPUTE_NONE   : hardware = model.
 *   ZB_RECOMPUTE_BLOCKS : every transformer block's forward runs again during
 *       backward, the LM head's does not (full activation checkpointing of the
 *       layers, as torchtitan and Megatron-LM do):
 *       + 2 * N_layers + 4 * L * d_attn * s (full; causal: + 2 * L * d_attn * s)
 *       = 8 * N_layers + 6 * N_head + 16 * L * d_attn * s (full).
 *   ZB_RECOMPUTE_ALL    : the LM head is recomputed too:
 *       8 * N_matmul + 16 * L * d_attn * s (full; causal 8 * L * d_attn * s).
 * N_layers is N_matmul without the head; N_head = dim * vocab. */
#ifndef ZB_FLOPS_H
#define ZB_FLOPS_H

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The shapes the FLOP count needs (the fields of profiles/models/NAME.json). */
typedef struct zb_flops_shape {
    int n_layers;
    int dim;        /* d_model */
    int n_heads;
    int n_kv_heads;
    int head_dim;   /* explicit: n_heads * head_dim may differ from dim */
    int ffn_dim;
    int vocab;
    int seq;        /* tokens per sequence */
} zb_flops_shape;

/* How the attention matrix is counted; every report names it. */
typedef enum zb_flops_convention {
    ZB_FLOPS_FULL = 0, /* "full": the whole s x s matrix */
    ZB_FLOPS_CAUSAL,   /* "causal": its lower triangle (half the attention term) */
    ZB_FLOPS_CONVENTION_COUNT
} zb_flops_convention;

/* What the backward pass recomputes (for hardware FLOPs). */
typedef enum zb_recompute {
    ZB_RECOMPUTE_NONE = 0, /* "none" */
    ZB_RECOMPUTE_BLOCKS,   /* "blocks": every transformer block, not the head */
    ZB_RECOMPUTE_ALL,      /* "all": the blocks and the LM head */
    ZB_RECOMPUTE_COUNT
} zb_recompute;

/* "full" / "causal"; "?" when out of range. */
const char *zb_flops_convention_name(zb_flops_convention c);
/* Parses "full" or "causal"; anything else is ZB_ERR_INVALID naming both. */
zb_status zb_flops_convention_parse(const char *name, zb_flops_convention *out);
/* "none" / "blocks" / "all"; "?" when out of range. */
const char *zb_recompute_name(zb_recompute r);
zb_status zb_recompute_parse(const char *name, zb_recompute *out);

/* ZB_ERR_INVALID naming the field unless every field is > 0 (n_kv_heads
 * must also divide n_heads). */
zb_status zb_flops_shape_check(const zb_flops_shape *s);

/* Each term of the count, per token. */
typedef struct zb_flops_breakdown {
    double n_matmul_layers; /* linear weights of all layers */
    double n_matmul_head;   /* LM head: dim * vocab */
    double n_matmul;        /* n_matmul_layers + n_matmul_head */
    double matmul_flops;    /* 6 * n_matmul */
    double attn_flops;      /* 12 (full) or 6 (causal) * L * d_attn * s */
    double model_flops;     /* matmul_flops + attn_flops: MFU's numerator per token */
    double recompute_flops; /* forward FLOPs run again (0 without recompute) */
    double hardware_flops;  /* model_flops + recompute_flops: HFU's numerator */
} zb_flops_breakdown;

zb_status zb_flops_per_token(const zb_flops_shape *s, zb_flops_convention conv,
                             zb_recompute recompute, zb_flops_breakdown *out);

/* Model FLOPs per token, or NaN when the shape or convention is invalid. */
double zb_model_flops_per_token(const zb_flops_shape *s, zb_flops_convention conv);

/* 100 * flops_per_token * tokens_per_step_global / (step_time_s * n_ranks *
 * peak_flops_per_rank). Pass hardware FLOPs per token to get HFU. NaN when
 * step_time_s, n_ranks or peak_flops_per_rank is not positive (or any input
 * is not finite): never a fake 0. */
double zb_mfu_pct(double flops_per_token, double tokens_per_step_global, double step_time_s,
                  int n_ranks, double peak_flops_per_rank);

#ifdef __cplusplus
}
#endif
#endif
