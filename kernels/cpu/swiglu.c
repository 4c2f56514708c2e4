/* SwiGLU gate, forward and backward: h = silu(gate) * up, elementwise.
 * Shapes: gate, up, h, dh, dgate, dup [N, F] (N = B*T, F ffn dim), passed
 * as n = N * F elements. Per-element math in math_silu.h. */
#include "math_silu.h"
#include "zb_cpu_kernels.h"

/* h [N, F] = silu(gate) * up */
void zb_cpu_swiglu_fwd(float *h, const float *gate, const float *up, size_t n) {
    for (size_t i = 0; i < n; i++) h[i] = zb_silu(gate[i]) * up[i];
}

/* dgate [N, F] = dh * up * silu'(gate); dup [N, F] = dh * silu(gate). Written;
 * dgate may equal gate and dup may equal up (each element is read first). */
void zb_cpu_swiglu_bwd(float *dgate, float *dup, const float *dh, const float *gate,
                       const float *up, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float g = gate[i], u = up[i], d = dh[i];
        dgate[i] = d * u * zb_silu_grad(g);
        dup[i] = d * zb_silu(g);
    }
}
