/* AdamW over flat parameter units: the hyper-parameters, and one helper
 * that updates any [begin, end) slice of a unit's flat vector, so the
 * sharded optimizer (each rank its shard) and the unsharded reference run
 * the same per-element math (kernels/math_adamw.h) on the same elements.
 *
 * Weight-decay mask (model.h): 2-D weights decay (linear weights, the
 * embedding table, the LM head), norm weights do not. The slice is split
 * at tensor boundaries into contiguous segments, one adamw kernel each,
 * with that tensor's decay flag. Elements at or past the unit's numel
 * (shard padding) are left alone. Shapes: params, grads, m, v [end - begin],
 * device pointers to element `begin` of the unit's flat vector. */
#ifndef ZB_ZERO3_OPTIM_H
#define ZB_ZERO3_OPTIM_H

#include <stddef.h>

#include "kernels.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zb_adamw_cfg {
    float lr;           /* > 0 */
    float beta1, beta2; /* in [0, 1) */
    float eps;          /* > 0 */
    float weight_decay; /* >= 0, applied to 2-D weights only */
} zb_adamw_cfg;

/* torchtitan's LLaMA defaults: lr 8e-4, betas (0.9, 0.95), eps 1e-8,
 * weight decay 0.1. */
void zb_adamw_cfg_default(zb_adamw_cfg *out);
/* ZB_ERR_INVALID naming the field outside its range. */
zb_status zb_adamw_cfg_validate(const zb_adamw_cfg *opt);

/* One AdamW step (t >= 1) on elements [begin, end) of unit `unit`,
 * issued on c->stream (c->label NULL reads "adamw"; c->unit is ignored:
 * the record carries `unit`). */
zb_status zb_optim_adamw_slice(const zb_kernels *k, const zb_kcall *c, const zb_model_cfg *cfg,
                               int unit, size_t begin, size_t end, float *params,
                               const float *grads, float *m, float *v, int t,
                               const zb_adamw_cfg *opt);

#ifdef __cplusplus
}
#endif
#endif
