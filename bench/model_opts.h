/* The model's flags as data, shared by the step, scale (step.c's
 * zb_step_model_group) and the plan tool (tools/plan.c): the shape flags
 * that override the model profile's fields (--layers ... --batch) and the
 * flags of how the step keeps its state (--recompute, --prefetch-depth, the
 * dtypes). Each is described once (name, zb_config field, range, --help
 * line) and parsed by zb_opt_set (bench_opts.h), so the step and plan
 * accept the same values with the same messages. --model is zb_opt_model
 * (bench_opts.h): the profile, "tiny" when not given. */
#ifndef ZB_MODEL_OPTS_H
#define ZB_MODEL_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "bench_opts.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The profile a run without --model uses. */
#define ZB_MODEL_DEFAULT "tiny"

extern const zb_opt zb_opt_recompute, zb_opt_prefetch_depth, zb_opt_param_dtype, zb_opt_act_dtype,
    zb_opt_grad_reduce_dtype;
extern const zb_opt zb_opt_layers, zb_opt_dim, zb_opt_heads, zb_opt_kv_heads, zb_opt_head_dim, zb_opt_ffn_dim,
    zb_opt_vocab, zb_opt_seq, zb_opt_batch;

/* A shape flag: its option (an int64_t zb_config field, 0 when not given)
 * and the zb_model_cfg field (int) it overrides. */
typedef struct zb_shape_opt {
    const zb_opt *opt;
    size_t model_offset;
} zb_shape_opt;

#define ZB_N_SHAPE_OPTS 9
/* The shape flags in flag-name order (batch, dim, ffn-dim, head-dim, heads,
 * kv-heads, layers, seq, vocab): the order labels name them in. */
extern const zb_shape_opt zb_shape_opts[ZB_N_SHAPE_OPTS];

/* The shape flag cfg gives first in zb_shape_opts order; NULL when none. */
const zb_opt *zb_model_shape_given(const zb_config *cfg);

/* The flags override the profile's fields: each shape flag given replaces
 * the field of m (from zb_model_cfg_from_profile) it names. */
void zb_model_apply_shape(const zb_config *cfg, zb_model_cfg *m);

/* The model label of `profile` with the shape flags of `cfg`, as the step
 * and plan name the model in their outputs: "profile"
 * when none is given, "profile+flag=value,..." in flag-name order, "custom"
 * when every one is (the profile then contributes only norm_eps and
 * rope_theta). */
void zb_step_model_label(const char *profile, const zb_config *cfg, char *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
