/* The cpu device's vectorisable e^x, shared by the element-wise kernels
 * (fast_eltwise.c) and the fused attention's tile loops (fast_attention.c):
 * a static inline function, so each target clone (vec_clones.h) compiles it
 * for its own ISA and loops around it vectorise.
 *
 * e^x = 2^n e^r, n = round(x / ln 2), |r| <= ln 2 / 2; e^r by its Taylor
 * polynomial of degree 7 (truncation below 2^-26 on that range); 2^n built
 * in the exponent bits. The rounding uses the 1.5 * 2^23 trick, so no call
 * and no rounding-mode instruction is needed. x is clamped to [-87, 88],
 * which keeps 2^n normal (e^-87 is as good as 0 to every caller). */
#ifndef ZB_CPU_VEXP_H
#define ZB_CPU_VEXP_H

#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
#define ZB_VEXP_INLINE static inline __attribute__((always_inline))
#else
#define ZB_VEXP_INLINE static inline
#endif

ZB_VEXP_INLINE float zb_vexpf_inline(float x) {
    x = x < -87.0f ? -87.0f : x;
    x = x > 88.0f ? 88.0f : x;
    const float shifter = 12582912.0f; /* 1.5 * 2^23 */
    float t = x * 1.44269504088896341f + shifter;
    float n = t - shifter;
    float r = x - n * 0.693145751953125f;   /* ln 2, high part (exact product) */
    r = r - n * 1.42860682030941723212e-6f; /* low part */
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    int32_t e = (int32_t)n + 127;
    uint32_t bits = (uint32_t)e << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

#endif
