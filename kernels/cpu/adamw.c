/* AdamW on a flat fp32 shard (the sharded optimizer's step). Shapes:
 * params, grads, m, v [n] (one rank's slice of a flat parameter unit).
 * Per-element math and the weight-decay order in math_adamw.h. */
#include "math_adamw.h"
#include "zb_cpu_kernels.h"

/* params, m, v [n] updated in place from grads [n] at step t (>= 1). */
void zb_cpu_adamw(float *params, const float *grads, float *m, float *v, size_t n, int t,
                  float lr, float beta1, float beta2, float eps, float weight_decay,
                  bool apply_weight_decay) {
    float bc1 = zb_adamw_bias_correction(beta1, t);
    float bc2 = zb_adamw_bias_correction(beta2, t);
    float wd = apply_weight_decay ? weight_decay : 0.0f;
    for (size_t i = 0; i < n; i++) {
        zb_adamw_update(&params[i], &m[i], &v[i], grads[i], lr, beta1, beta2, eps, wd, bc1, bc2);
    }
}
