/* Bandwidth and GEMM FLOP formulas (see metrics.h). */
#include "metrics.h"

double zb_gbps(double bytes, double seconds) {
    if (seconds <= 0.0) return 0.0;
    return bytes / seconds / 1e9;
}

double zb_gemm_flops(double m, double n, double k) { return 2.0 * m * n * k; }
