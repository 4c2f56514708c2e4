/* Linear layer y = x W^T (no bias), forward and backward, via cblas_sgemm.
 * Shapes: x [N, n_in], W [n_out, n_in] (PyTorch's layout), y [N, n_out];
 * dy [N, n_out], dx [N, n_in] (written), dW [n_out, n_in] (accumulated).
 * fp32 accumulation inside the GEMM. */
#include <cblas.h>

#include "zb_cpu_kernels.h"

/* y [N, n_out] = x [N, n_in] W^T */
void zb_cpu_matmul_fwd(float *y, const float *x, const float *W, int N, int n_in, int n_out) {
    if (N <= 0 || n_out <= 0) return;
    if (n_in <= 0) {
        for (size_t i = 0; i < (size_t)N * (size_t)n_out; i++) y[i] = 0.0f;
        return;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, n_out, n_in, 1.0f, x, n_in, W, n_in,
                0.0f, y, n_out);
}

/* dx [N, n_in] = dy W; dW [n_out, n_in] += dy^T x. NULL skips either. */
void zb_cpu_matmul_bwd(float *dx, float *dW, const float *dy, const float *x, const float *W,
                       int N, int n_in, int n_out) {
    if (N <= 0 || n_in <= 0) return;
    if (dx) {
        if (n_out <= 0) {
            for (size_t i = 0; i < (size_t)N * (size_t)n_in; i++) dx[i] = 0.0f;
        } else {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, n_in, n_out, 1.0f, dy,
                        n_out, W, n_in, 0.0f, dx, n_in);
        }
    }
    if (dW && n_out > 0) {
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n_out, n_in, N, 1.0f, dy, n_out, x,
                    n_in, 1.0f, dW, n_in);
    }
}
