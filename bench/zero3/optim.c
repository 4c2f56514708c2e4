/* AdamW over slices of flat parameter units (optim.h). Shapes: params,
 * grads, m, v [end - begin] for elements [begin, end) of one unit. */
#include <math.h>

#include "optim.h"

void zb_adamw_cfg_default(zb_adamw_cfg *out) {
    out->lr = 8e-4f;
    out->beta1 = 0.9f;
    out->beta2 = 0.95f;
    out->eps = 1e-8f;
    out->weight_decay = 0.1f;
}

zb_status zb_adamw_cfg_validate(const zb_adamw_cfg *o) {
    if (!(o->lr > 0.0f) || !isfinite(o->lr)) {
        return ZB_FAIL(ZB_ERR_INVALID, "adamw: lr is %g; accepted: a positive number", o->lr);
    }
    if (!(o->beta1 >= 0.0f && o->beta1 < 1.0f)) {
        return ZB_FAIL(ZB_ERR_INVALID, "adamw: beta1 is %g; accepted: [0, 1)", o->beta1);
    }
    if (!(o->beta2 >= 0.0f && o->beta2 < 1.0f)) {
        return ZB_FAIL(ZB_ERR_INVALID, "adamw: beta2 is %g; accepted: [0, 1)", o->beta2);
    }
    if (!(o->eps > 0.0f) || !isfinite(o->eps)) {
        return ZB_FAIL(ZB_ERR_INVALID, "adamw: eps is %g; accepted: a positive number", o->eps);
    }
    if (!(o->weight_decay >= 0.0f) || !isfinite(o->weight_decay)) {
        return ZB_FAIL(ZB_ERR_INVALID, "adamw: weight_decay is %g; accepted: >= 0",
                       o->weight_decay);
    }
    return ZB_OK;
}

zb_status zb_optim_adamw_slice(const zb_kernels *k, const zb_kcall *c, const zb_model_cfg *cfg,
                               int unit, size_t begin, size_t end, float *params,
                               const float *grads, float *m, float *v, int t,
                               const zb_adamw_cfg *opt) {
    if (t < 1) return ZB_FAIL(ZB_ERR_INVALID, "adamw: step %d must be >= 1", t);
    zb_unit_layout L;
    zb_model_unit_layout(cfg, unit, &L);
    zb_kcall kc = *c;
    kc.unit = unit;
    if (!kc.label) kc.label = "adamw";
    for (int i = 0; i < L.n_tensors; i++) {
        const zb_tensor_layout *tl = &L.tensors[i];
        size_t lo = tl->offset > begin ? tl->offset : begin;
        size_t hi = tl->offset + tl->numel < end ? tl->offset + tl->numel : end;
        if (lo >= hi) continue;
        size_t o = lo - begin;
        ZB_TRY(k->adamw(&kc, params + o, grads + o, m + o, v + o, hi - lo, t, opt->lr,
                        opt->beta1, opt->beta2, opt->eps, opt->weight_decay, tl->is_matrix));
    }
    return ZB_OK;
}
