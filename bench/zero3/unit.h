/* Per-unit forward and backward of the model (model.h), ISSUED on a stream
 * through the kernel table (kernels.h) and the device's gemm; nothing runs
 * on the calling thread and nothing reads device memory on the host.
 *
 * Shapes: B sequences in this call (the rank's micro-batch), T sequence,
 * N = B*T tokens, C dim, H heads, KVH kv heads, D head dim, HD = H*D,
 * KD = KVH*D, F ffn dim, V vocab. The residual stream is [N, C].
 * `params` is always the unit's FULL (gathered) flat vector in the layout
 * of zb_model_unit_layout; `grads` the full flat gradient, same layout.
 *
 * Layer forward (x = x_in):
 *   xn1 = rmsnorm(x, attn_norm); q = rope(xn1 wq^T); k = rope(xn1 wk^T);
 *   v = xn1 wv^T; att = attention(q, k, v) (fused: att and the per-row
 *   log-sum-exp lse saved, the probabilities recomputed in backward);
 *   h = x + att wo^T; xn2 = rmsnorm(h, ffn_norm);
 *   gate = xn2 w_gate^T; up = xn2 w_up^T; act = silu(gate) * up;
 *   x_out = h + act w_down^T.
 * Head forward: xn = rmsnorm(x_in, final_norm); logits = xn lm_head^T;
 *   loss = mean over the N tokens of cross-entropy(logits, targets).
 *
 * Activations. Each unit has a zb_unit_acts (tag ZB_MEM_ACTIVATION):
 *   - embedding and layers own `out` [N, C], the conventional x_out (the
 *     next unit's x_in); the head owns none (its output is the loss);
 *   - a layer allocated with keep_intermediates saves xn1, rstd1, q, k, v,
 *     lse, att, h, xn2, rstd2, gate, up, act (recompute none); without
 *     it (recompute full) the layer keeps only `out` plus a borrowed
 *     pointer to its input, forward computes the intermediates in the
 *     shared workspace, and backward first re-runs the forward (all but
 *     the w_down product) into the workspace. Recomputation is per layer:
 *     the flag of each layer's acts decides;
 *   - the head always keeps xn, rstd, logits [N, V], lse (its backward
 *     directly follows its forward, so recomputing saves nothing);
 *   - the embedding keeps nothing (its backward needs the tokens only).
 * One zb_unit_workspace per rank (tag ZB_MEM_WORKSPACE) holds the backward
 * scratch and, when any layer recomputes, one layer's intermediates. Every
 * call sharing a workspace must be ordered on one stream (it is reused by
 * the next call).
 *
 * What each call reads and writes (all in stream order on ctx->stream; a
 * buffer may be freed or reused once an event recorded after the call has
 * completed):
 *   zb_unit_forward
 *     reads   params; x_in (layer, head) or ctx->tokens (embedding);
 *             ctx->targets (head); the workspace (layer without keep)
 *     writes  x_out (embedding, layer); acts; ctx->loss [1] (head);
 *             the workspace (layer without keep)
 *     keeps   a pointer to x_in in acts: x_in must stay alive and
 *             unchanged until this unit's backward has run.
 *   zb_unit_backward
 *     reads   params; acts; the x_in given to forward; dx_out (embedding,
 *             layer; NULL for the head); ctx->tokens (embedding);
 *             ctx->targets, ctx->dloss_scale (head)
 *     writes  grads (every element of the unit, overwritten); dx_in
 *             (layer, head; NULL for the embedding); the workspace; the
 *             head's acts.logits (overwritten by dlogits: one backward per
 *             forward).
 *     dx_in may equal dx_out (the layer reads dx_out before writing dx_in);
 *     x_out must not equal x_in.
 * After a unit's forward, its gathered params are needed again only by its
 * backward; after its backward, its params, acts, its x_in (the previous
 * unit's out) and dx_out are dead.
 *
 * Storage dtype: ctx->dtype (fp32, or bf16 for mixed precision) is the
 * dtype of the params, x_in/x_out/dx_out/dx_in and every activation and
 * workspace slice typed `void *` below; the per-row statistics (rstd, lse),
 * the loss and the parameter gradients `grads` are always fp32 (the weight
 * GEMMs write fp32 C behind bf16 inputs, kernels.h's conventions for the
 * norm and embedding gradients). Acts and workspace are allocated for one
 * dtype and used only with it.
 *
 * Trace: every op carries the unit; labels read "fwd.<op>" (forward),
 * "re.<op>" (backward's recomputation), "bwd.<op>", "bwd.dw.<weight>" and
 * "bwd.dx.<weight>" (backward). */
#ifndef ZB_ZERO3_UNIT_H
#define ZB_ZERO3_UNIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "kernels.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A layer's saved intermediates; all [N, *] row-major; void * slices hold
 * the storage dtype, float * ones fp32. */
typedef struct zb_layer_saved {
    void *xn1;    /* [N, C] */
    float *rstd1; /* [N] */
    void *q;      /* [N, HD] = [B, T, H, D], after RoPE */
    void *k;      /* [N, KD] = [B, T, KVH, D], after RoPE */
    void *v;      /* [N, KD] */
    float *lse;   /* [B, H, T] attention log-sum-exp (nothing of T x T) */
    void *att;    /* [N, HD] attention output before wo */
    void *h;      /* [N, C] residual after attention */
    void *xn2;    /* [N, C] */
    float *rstd2; /* [N] */
    void *gate;   /* [N, F] */
    void *up;     /* [N, F] */
    void *act;    /* [N, F] silu(gate) * up */
} zb_layer_saved;

typedef struct zb_head_saved {
    void *xn;     /* [N, C] */
    float *rstd;  /* [N] */
    void *logits; /* [N, V]; dlogits after backward */
    float *lse;   /* [N] */
} zb_head_saved;

typedef struct zb_unit_acts {
    int unit;
    zb_unit_kind kind;
    int B;
    zb_dtype dtype;     /* storage of the void * slices */
    bool keep;          /* a layer's intermediates live here (not recomputed) */
    void *out;          /* [N, C] embedding and layers; NULL for the head */
    const void *x_in;   /* borrowed by forward, read by backward */
    zb_layer_saved layer; /* layers with keep */
    zb_head_saved head;   /* the head */
    void *block;        /* the one device allocation */
    size_t bytes;
} zb_unit_acts;

typedef struct zb_unit_workspace {
    int B;
    zb_dtype dtype;    /* storage of the slices */
    bool recompute;    /* holds a layer's intermediates (re) too */
    void *d_f[2];      /* [N, F] */
    void *d_c[2];      /* [N, C] */
    void *d_hd[2];     /* [N, HD] */
    void *d_kd[2];     /* [N, KD] */
    zb_layer_saved re; /* recompute region; all NULL without recompute */
    void *block;
    size_t bytes;
} zb_unit_workspace;

/* What every call needs. */
typedef struct zb_unit_ctx {
    const zb_model_cfg *cfg;
    const zb_kernels *k;
    zb_stream *stream;       /* all ops go here; its device runs the gemms */
    zb_dtype dtype;          /* storage of params and activations */
    int B;                   /* sequences in this call */
    const int32_t *tokens;   /* device [N]: embedding forward and backward */
    const int32_t *targets;  /* device [N]: head forward and backward */
    float *loss;             /* device [1]: the head's forward writes it */
    float dloss_scale;       /* head backward: d objective / d loss (1, or
                                1/n_ranks so summed gradients are the
                                global mean's) */
    zb_unit_workspace *ws;   /* required by layers and the head */
} zb_unit_ctx;

/* Bytes of one unit's activations (what zb_unit_acts_alloc takes), and of
 * the workspace; for planners as well. keep_intermediates matters for
 * layers only. */
size_t zb_unit_acts_bytes(const zb_model_cfg *cfg, int unit, int B, bool keep_intermediates,
                          zb_dtype dtype);
size_t zb_unit_workspace_bytes(const zb_model_cfg *cfg, int B, bool recompute, zb_dtype dtype);

zb_status zb_unit_acts_alloc(zb_device *dev, const zb_model_cfg *cfg, int unit, int B,
                             bool keep_intermediates, zb_dtype dtype, zb_unit_acts *out);
/* Frees the device memory (safe on a zeroed struct). The caller makes sure
 * the stream no longer uses it. */
void zb_unit_acts_free(zb_device *dev, zb_unit_acts *acts);

/* recompute: also room for one layer's intermediates (needed as soon as
 * any layer's acts are allocated without keep_intermediates). */
zb_status zb_unit_workspace_alloc(zb_device *dev, const zb_model_cfg *cfg, int B, bool recompute,
                                  zb_dtype dtype, zb_unit_workspace *out);
void zb_unit_workspace_free(zb_device *dev, zb_unit_workspace *ws);

/* Issues unit `unit`'s forward. x_in [N, C] (NULL for the embedding);
 * x_out [N, C] (NULL for the head); acts from zb_unit_acts_alloc for this
 * unit and ctx->B. */
zb_status zb_unit_forward(const zb_unit_ctx *ctx, int unit, const void *params, const void *x_in,
                          void *x_out, zb_unit_acts *acts);

/* Issues unit `unit`'s backward: dx_out [N, C] the gradient with respect to
 * the unit's output (NULL for the head), dx_in [N, C] the gradient with
 * respect to its input (NULL for the embedding), grads [numel] overwritten. */
zb_status zb_unit_backward(const zb_unit_ctx *ctx, int unit, const void *params,
                           zb_unit_acts *acts, const void *dx_out, void *dx_in, float *grads);

/* Forward FLOPs of one unit for B sequences: 2 * N * (matmul parameters of
 * the unit) + 4 * B * H * T * T * D for a layer's attention (the full
 * T x T matrix, docs/design.md §6); 0 for the embedding. */
double zb_unit_forward_flops(const zb_model_cfg *cfg, int unit, int B);
/* Backward FLOPs as issued: twice the forward, plus, for a recomputing
 * layer, the re-run forward without the w_down product (hardware FLOPs). */
double zb_unit_backward_flops(const zb_model_cfg *cfg, int unit, int B, bool recompute);

#ifdef __cplusplus
}
#endif
#endif
