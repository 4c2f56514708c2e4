/* Rotary position embedding (RoPE) of one pair, shared by the CPU and CUDA
 * kernels. LLaMA's rotate-half convention (Hugging Face `rotate_half`): in a
 * head of dimension D (even), pair i (0 <= i < D/2) is the two elements
 * (x[i], x[i + D/2]); at position `pos` it is rotated by the angle
 *   angle = pos * theta^(-2i/D)
 *   y[i]       = x[i] * cos(angle) - x[i + D/2] * sin(angle)
 *   y[i + D/2] = x[i] * sin(angle) + x[i + D/2] * cos(angle)
 * The frequency and angle are computed in fp32 as Hugging Face's
 * `inv_freq = 1 / theta^(arange(0, D, 2) / D)` then `pos * inv_freq` does.
 * The backward of a rotation is the inverse rotation (angle -> -angle).
 * Valid C11 and nvcc C++ (ZB_HD). */
#ifndef ZB_MATH_ROPE_H
#define ZB_MATH_ROPE_H

#include <math.h>

#include "zb_hd.h"

/* theta^(-2 pair / head_dim), the angular frequency of `pair`. */
static inline ZB_HD float zb_rope_inv_freq(int pair, int head_dim, float theta) {
    float expo = (float)(2 * pair) / (float)head_dim;
    return 1.0f / powf(theta, expo);
}

/* cos and sin of the rotation angle of `pair` at position `pos`. */
static inline ZB_HD void zb_rope_cos_sin(int pos, int pair, int head_dim, float theta,
                                         float *c, float *s) {
    float angle = (float)pos * zb_rope_inv_freq(pair, head_dim, theta);
    *c = cosf(angle);
    *s = sinf(angle);
}

/* Rotates (x0, x1) = (x[i], x[i + D/2]) by the angle whose cos/sin are c/s;
 * `inverse` != 0 rotates by the negative angle (the backward). */
static inline ZB_HD void zb_rope_rotate(float *x0, float *x1, float c, float s, int inverse) {
    float a = *x0, b = *x1;
    if (inverse) s = -s;
    *x0 = a * c - b * s;
    *x1 = a * s + b * c;
}

/* The whole per-pair operation: rotate pair `pair` of a head of dimension
 * `head_dim` at position `pos` with base `theta` (inverse: the backward). */
static inline ZB_HD void zb_rope_pair(float *x0, float *x1, int pos, int pair, int head_dim,
                                      float theta, int inverse) {
    float c, s;
    zb_rope_cos_sin(pos, pair, head_dim, theta, &c, &s);
    zb_rope_rotate(x0, x1, c, s, inverse);
}

#endif
