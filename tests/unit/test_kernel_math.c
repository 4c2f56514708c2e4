/* Shared per-element math headers (math_silu.h, math_rope.h, math_adamw.h,
 * bf16.h) and the CPU kernels built directly on them: AdamW on a shard
 * against hand-computed values, bf16 casts (every bit pattern round trips;
 * round-to-nearest-even on chosen patterns; NaN stays NaN).
 * Tolerances: SiLU and RoPE frequencies within 1e-6 relative of double;
 * silu' within 1e-5 of a double central difference; AdamW parameters within
 * 1e-6 absolute of the hand values (fp32 has ~6e-8 resolution near 1), its
 * m and v within 2e-5 relative (see test_adamw). */
#include <math.h>
#include <string.h>

#include "zb_cpu_kernels.h"
#include "math_adamw.h"
#include "math_rope.h"
#include "math_silu.h"
#include "zb_test.h"

static double silu_d(double x) { return x / (1.0 + exp(-x)); }

static void test_silu(void) {
    const float xs[9] = {-20.0f, -3.0f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 3.0f, 20.0f};
    for (int i = 0; i < 9; i++) {
        double x = xs[i], want = silu_d(x);
        double fd = (silu_d(x + 1e-6) - silu_d(x - 1e-6)) / 2e-6;
        ZB_CHECK_MSG(fabs(zb_silu(xs[i]) - want) <= 1e-6 * fabs(want) + 1e-12, "silu(%g)", x);
        ZB_CHECK_MSG(fabs(zb_silu_grad(xs[i]) - fd) <= 1e-5, "silu'(%g) = %g, want %g", x,
                     (double)zb_silu_grad(xs[i]), fd);
    }
    ZB_CHECK(zb_silu(-1000.0f) == 0.0f && zb_silu(1000.0f) == 1000.0f);
    ZB_CHECK(zb_silu_grad(-1000.0f) == 0.0f && zb_silu_grad(1000.0f) == 1.0f);
}

static void test_rope_math(void) {
    for (int i = 0; i < 8; i++) {
        double want = pow(10000.0, -2.0 * i / 16.0);
        ZB_CHECK_MSG(fabs(zb_rope_inv_freq(i, 16, 10000.0f) - want) <= 1e-6 * want,
                     "inv_freq(%d)", i);
    }
    float a = 0.3f, b = -0.7f;
    zb_rope_pair(&a, &b, 0, 1, 8, 10000.0f, 0); /* position 0: identity */
    ZB_CHECK(a == 0.3f && b == -0.7f);
    zb_rope_pair(&a, &b, 1, 0, 8, 10000.0f, 0); /* pair 0 turns by 1 radian */
    ZB_CHECK(fabs(a - (0.3 * cos(1.0) + 0.7 * sin(1.0))) < 1e-6);
    ZB_CHECK(fabs(b - (0.3 * sin(1.0) - 0.7 * cos(1.0))) < 1e-6);
    zb_rope_pair(&a, &b, 1, 0, 8, 10000.0f, 1); /* and back */
    ZB_CHECK(fabsf(a - 0.3f) < 1e-6f && fabsf(b + 0.7f) < 1e-6f);
}

/* Hand values: lr 0.1, b1 0.9, b2 0.999, eps 1e-8, wd 0.01.
 * p=1, g=0.5, t=1: m=0.05, v=2.5e-4, mhat=0.5, vhat=0.25, step=0.5/(0.5+1e-8);
 *   p = 1 - 0.1*0.01*1 = 0.999, then 0.999 - 0.1*0.99999998 = 0.899000002.
 * p=-2, g=-0.25, t=1: m=-0.025, v=6.25e-5, mhat=-0.25, vhat=0.0625:
 *   p = -2 + 0.002 = -1.998, then -1.998 + 0.1 = -1.898 (no decay: -1.9).
 * A constant gradient keeps mhat = g and vhat = g^2 at every t, so step 2
 * from 0.899: p = 0.899 * (1 - 0.001) - 0.1 = 0.798101; m = 0.095,
 * v = 4.9975e-4. m and v are checked to 2e-5 relative: 0.999f is
 * 0.99900001287, so 1 - beta2 in fp32 is 1.3e-5 relative off 0.001 (the
 * bias correction uses the same fp32 beta2, so p is unaffected). */
static double rel_err(float got, double want) { return fabs((double)got - want) / fabs(want); }

static void test_adamw(void) {
    float p[3] = {1.0f, -2.0f, -2.0f}, g[3] = {0.5f, -0.25f, -0.25f};
    float m[3] = {0}, v[3] = {0};
    zb_cpu_adamw(p, g, m, v, 2, 1, 0.1f, 0.9f, 0.999f, 1e-8f, 0.01f, true);
    zb_cpu_adamw(p + 2, g + 2, m + 2, v + 2, 1, 1, 0.1f, 0.9f, 0.999f, 1e-8f, 0.01f, false);
    ZB_CHECK_MSG(fabs(p[0] - 0.899000002) < 1e-6, "adamw p[0] = %.9g, want 0.899000002", p[0]);
    ZB_CHECK_MSG(fabs(p[1] - -1.898) < 1e-6, "adamw p[1] = %.9g, want -1.898", p[1]);
    ZB_CHECK_MSG(fabs(p[2] - -1.9) < 1e-6, "adamw p[2] = %.9g (no decay), want -1.9", p[2]);
    ZB_CHECK(rel_err(m[0], 0.05) < 2e-5 && rel_err(v[0], 2.5e-4) < 2e-5);
    ZB_CHECK(rel_err(m[1], -0.025) < 2e-5 && rel_err(v[1], 6.25e-5) < 2e-5);
    zb_cpu_adamw(p, g, m, v, 1, 2, 0.1f, 0.9f, 0.999f, 1e-8f, 0.01f, true);
    ZB_CHECK_MSG(fabs(p[0] - 0.798101) < 1e-6, "adamw step 2 p = %.9g, want 0.798101", p[0]);
    ZB_CHECK(rel_err(m[0], 0.095) < 2e-5 && rel_err(v[0], 4.9975e-4) < 2e-5);
    ZB_CHECK(fabs(zb_adamw_bias_correction(0.9f, 2) - 0.19) < 1e-7);
}

static float f_of(uint32_t bits) {
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static void test_bf16(void) {
    /* round-to-nearest-even, overflow to inf, signed zero, subnormals */
    static const uint32_t in[] = {0x3F800000u, 0x3F808000u, 0x3F818000u, 0x3F808001u,
                                  0x3F807FFFu, 0xBF818000u, 0x7F7FFFFFu, 0x7F7F7FFFu,
                                  0x7F800000u, 0xFF800000u, 0x80000000u, 0x00000001u,
                                  0x00008000u, 0x00018000u, 0x40490FDBu /* pi */};
    static const uint16_t want[] = {0x3F80, 0x3F80, 0x3F82, 0x3F81, 0x3F80, 0xBF82, 0x7F80, 0x7F7F,
                                    0x7F80, 0xFF80, 0x8000, 0x0000, 0x0000, 0x0002, 0x4049};
    enum { NP = sizeof in / sizeof in[0] };
    float src[NP];
    zb_bf16 got[NP];
    for (int i = 0; i < NP; i++) src[i] = f_of(in[i]);
    zb_cpu_f32_to_bf16(got, src, NP);
    for (int i = 0; i < NP; i++)
        ZB_CHECK_MSG(got[i] == want[i], "bf16(0x%08X) = 0x%04X, want 0x%04X", in[i], got[i], want[i]);

    /* NaN in, quiet NaN out (signalling and quiet, both signs) */
    static const uint32_t nans[] = {0x7FC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu};
    float nf[4];
    zb_bf16 nb[4];
    float back[4];
    for (int i = 0; i < 4; i++) nf[i] = f_of(nans[i]);
    zb_cpu_f32_to_bf16(nb, nf, 4);
    zb_cpu_bf16_to_f32(back, nb, 4);
    for (int i = 0; i < 4; i++)
        ZB_CHECK_MSG(isnan(back[i]) && (nb[i] & 0x0040u) && (nb[i] >> 15) == (nans[i] >> 31),
                     "bf16 of NaN 0x%08X gave 0x%04X", nans[i], nb[i]);

    /* every bf16 pattern: widen (exact, the high half) and narrow back */
    int bad = 0;
    for (uint32_t h = 0; h < 65536u; h++) {
        zb_bf16 hb = (zb_bf16)h, rt;
        float f;
        zb_cpu_bf16_to_f32(&f, &hb, 1);
        uint32_t fb;
        memcpy(&fb, &f, sizeof fb);
        zb_cpu_f32_to_bf16(&rt, &f, 1);
        if (fb != h << 16) bad++;
        if (isnan(f) ? !(rt == (hb | 0x0040u)) : rt != hb) bad++;
    }
    ZB_CHECK_MSG(bad == 0, "%d bf16 patterns did not round trip", bad);
}

int main(void) {
    test_silu();
    test_rope_math();
    test_adamw();
    test_bf16();
    return zb_test_finish("test_kernel_math");
}
