/* SiLU (swish) and its derivative, per element, shared by the CPU and CUDA
 * kernels (SwiGLU: h = silu(gate) * up).
 *
 *   sigmoid(x) = 1 / (1 + exp(-x))
 *   silu(x)    = x * sigmoid(x)
 *   silu'(x)   = sigmoid(x) * (1 + x * (1 - sigmoid(x)))
 *
 * Written so that large |x| gives no NaN: exp(-x) overflowing to +inf makes
 * sigmoid 0 and silu -0 (the limits). Valid C11 and nvcc C++ (ZB_HD). */
#ifndef ZB_MATH_SILU_H
#define ZB_MATH_SILU_H

#include <math.h>

#include "zb_hd.h"

static inline ZB_HD float zb_sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }

static inline ZB_HD float zb_silu(float x) { return x * zb_sigmoidf(x); }

/* d silu(x) / dx. */
static inline ZB_HD float zb_silu_grad(float x) {
    float s = zb_sigmoidf(x);
    return s * (1.0f + x * (1.0f - s));
}

#endif
