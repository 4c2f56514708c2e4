/* One-element AdamW update, shared by the CPU and CUDA optimizers.
 *
 * Decoupled weight decay exactly as torch.optim.AdamW orders it: the decay
 * is applied to the parameter first, then the Adam step:
 *   p  = p - lr * wd * p
 *   m  = b1 m + (1 - b1) g
 *   v  = b2 v + (1 - b2) g^2
 *   mhat = m / (1 - b1^t),  vhat = v / (1 - b2^t)
 *   p  = p - lr * mhat / (sqrt(vhat) + eps)
 * This equals p_new = p - lr * (mhat / (sqrt(vhat) + eps) + wd * p) with p
 * the old value (the Adam step does not depend on p); only the rounding
 * order differs. t counts steps from 1. The bias corrections 1 - b^t are
 * computed once per call in double (zb_adamw_bias_correction) and passed
 * in, so every element and every backend uses the same two numbers.
 * Valid C11 and nvcc C++ (ZB_HD). */
#ifndef ZB_MATH_ADAMW_H
#define ZB_MATH_ADAMW_H

#include <math.h>

#include "zb_hd.h"

/* 1 - beta^t, in double, rounded once to fp32. t >= 1. */
static inline ZB_HD float zb_adamw_bias_correction(float beta, int t) {
    return (float)(1.0 - pow((double)beta, (double)t));
}

/* Updates *p, *m, *v in place from gradient g. wd is the weight decay to
 * apply (pass 0 for tensors that take none); bc1 = 1 - b1^t, bc2 = 1 - b2^t. */
static inline ZB_HD void zb_adamw_update(float *p, float *m, float *v, float g, float lr,
                                         float b1, float b2, float eps, float wd, float bc1,
                                         float bc2) {
    float pv = *p;
    pv -= lr * wd * pv;
    float mv = b1 * *m + (1.0f - b1) * g;
    float vv = b2 * *v + (1.0f - b2) * g * g;
    float mhat = mv / bc1;
    float vhat = vv / bc2;
    pv -= lr * mhat / (sqrtf(vhat) + eps);
    *p = pv;
    *m = mv;
    *v = vv;
}

#endif
