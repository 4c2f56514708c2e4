/* RMSNorm per-element math, shared by the CPU and CUDA kernels. The row
 * reductions (sum of squares, the backward's dot product) are written per
 * backend; these are the parts applied to each element of a row of C values.
 *
 *   inv_rms = 1 / sqrt(mean(x^2) + eps)
 *   y_j     = x_j * inv_rms * w_j
 *   dx_j    = inv_rms * (w_j dy_j - xhat_j * mean_k(dy_k w_k xhat_k)),
 *             xhat_j = x_j * inv_rms
 *   dw_j   += dy_j * xhat_j          (summed over rows)
 * Valid C11 and nvcc C++ (ZB_HD). */
#ifndef ZB_MATH_RMSNORM_H
#define ZB_MATH_RMSNORM_H

#include <math.h>

#include "zb_hd.h"

/* inv_rms of a row from the mean of its squares. */
static inline ZB_HD float zb_rmsnorm_inv_rms(float mean_sq, float eps) {
    return 1.0f / sqrtf(mean_sq + eps);
}

/* y_j = x_j * inv_rms * w_j. */
static inline ZB_HD float zb_rmsnorm_scale(float x, float inv_rms, float w) {
    return x * inv_rms * w;
}

/* dx_j given the row's mean_dot = mean_k(dy_k * w_k * x_k * inv_rms). */
static inline ZB_HD float zb_rmsnorm_dx(float x, float dy, float w, float inv_rms,
                                        float mean_dot) {
    return inv_rms * (w * dy - x * inv_rms * mean_dot);
}

/* The contribution of one element to dw_j. */
static inline ZB_HD float zb_rmsnorm_dw(float x, float dy, float inv_rms) {
    return dy * x * inv_rms;
}

#endif
