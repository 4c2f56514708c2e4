/* Residual add, forward and backward, and the gradient accumulate helper.
 * Shapes: a, b, out, dout, da, db [N, C] (N = B*T), passed as n = N * C
 * elements. The backward accumulates (+=): a residual fork's gradient is the
 * sum of its paths. */
#include "zb_cpu_kernels.h"

/* out [N, C] = a + b; out may equal a or b. */
void zb_cpu_residual_fwd(float *out, const float *a, const float *b, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = a[i] + b[i];
}

/* da [N, C] += dout; db [N, C] += dout; NULL skips either. */
void zb_cpu_residual_bwd(float *da, float *db, const float *dout, size_t n) {
    if (da) zb_cpu_accumulate(da, dout, n);
    if (db) zb_cpu_accumulate(db, dout, n);
}

/* dst [n] += src [n]. */
void zb_cpu_accumulate(float *dst, const float *src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] += src[i];
}
