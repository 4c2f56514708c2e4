/* Rotary position embedding (rotate-half convention, math_rope.h), forward
 * and backward, in place or out of place.
 * Shapes: x, out, dout, dx [B, T, NH, D]: NH = H for q, NH = KVH for k;
 * token t sits at position t. The backward is the inverse rotation. */
#include "math_rope.h"
#include "zb_cpu_kernels.h"

/* Rotates every pair of every head; inverse != 0 for the backward. cos/sin
 * are computed once per (t, pair) and reused across batch and heads. */
static zb_status rope_apply(float *out, const float *x, int B, int T, int NH, int D, float theta,
                            int inverse, const char *what) {
    if (D <= 0 || D % 2 != 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s: head dim %d must be a positive even number", what, D);
    }
    int half = D / 2;
    size_t row = (size_t)NH * (size_t)D;     /* one token */
    size_t seq = (size_t)T * row;            /* one sequence */
    for (int t = 0; t < T; t++) {
        for (int i = 0; i < half; i++) {
            float c, s;
            zb_rope_cos_sin(t, i, D, theta, &c, &s);
            for (int b = 0; b < B; b++) {
                for (int h = 0; h < NH; h++) {
                    size_t off = (size_t)b * seq + (size_t)t * row + (size_t)h * (size_t)D;
                    float x0 = x[off + (size_t)i];
                    float x1 = x[off + (size_t)(i + half)];
                    zb_rope_rotate(&x0, &x1, c, s, inverse);
                    out[off + (size_t)i] = x0;
                    out[off + (size_t)(i + half)] = x1;
                }
            }
        }
    }
    return ZB_OK;
}

/* out [B, T, NH, D] = RoPE(x [B, T, NH, D]); out may equal x. */
zb_status zb_cpu_rope_fwd(float *out, const float *x, int B, int T, int NH, int D, float theta) {
    return rope_apply(out, x, B, T, NH, D, theta, 0, "rope");
}

/* dx [B, T, NH, D] = RoPE^T(dout [B, T, NH, D]); dx may equal dout. */
zb_status zb_cpu_rope_bwd(float *dx, const float *dout, int B, int T, int NH, int D,
                          float theta) {
    return rope_apply(dx, dout, B, T, NH, D, theta, 1, "rope backward");
}
