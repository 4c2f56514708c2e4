/* RMSNorm, forward and backward (LLaMA: no mean subtraction, no bias).
 * Shapes: x, out, dout, dx [N, C] (N = B*T rows); weight, dweight [C];
 * inv_rms [N]. Per-element math in math_rmsnorm.h; the row reductions here
 * accumulate in double. dweight sums over rows in fp32 (it adds into an
 * fp32 gradient anyway). */
#include "math_rmsnorm.h"
#include "zb_cpu_kernels.h"

/* out [N, C] = x * inv_rms[i] * weight; inv_rms [N] saved. */
void zb_cpu_rmsnorm_fwd(float *out, float *inv_rms, const float *x, const float *weight, int N,
                        int C, float eps) {
    for (int i = 0; i < N; i++) {
        const float *xr = x + (size_t)i * (size_t)C;
        float *yr = out + (size_t)i * (size_t)C;
        double ss = 0.0;
        for (int c = 0; c < C; c++) ss += (double)xr[c] * (double)xr[c];
        float r = zb_rmsnorm_inv_rms((float)(ss / (double)C), eps);
        inv_rms[i] = r;
        for (int c = 0; c < C; c++) yr[c] = zb_rmsnorm_scale(xr[c], r, weight[c]);
    }
}

/* dx [N, C] written, dweight [C] accumulated, from dout [N, C]. */
void zb_cpu_rmsnorm_bwd(float *dx, float *dweight, const float *dout, const float *x,
                        const float *weight, const float *inv_rms, int N, int C) {
    for (int i = 0; i < N; i++) {
        const float *xr = x + (size_t)i * (size_t)C;
        const float *dyr = dout + (size_t)i * (size_t)C;
        float *dxr = dx + (size_t)i * (size_t)C;
        float r = inv_rms[i];
        double dot = 0.0; /* sum_k dy_k w_k xhat_k */
        for (int c = 0; c < C; c++) {
            dot += (double)dyr[c] * (double)weight[c] * (double)xr[c] * (double)r;
            dweight[c] += zb_rmsnorm_dw(xr[c], dyr[c], r);
        }
        float mean_dot = (float)(dot / (double)C);
        /* dxr may alias dyr: each element reads its own dy before writing. */
        for (int c = 0; c < C; c++) dxr[c] = zb_rmsnorm_dx(xr[c], dyr[c], weight[c], r, mean_dot);
    }
}
