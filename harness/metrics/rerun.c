/* Prediction bounds over base runs' figures (rerun.h). */
#include "rerun.h"

#include <math.h>

#define Z95 1.6448536269514722

double zb_t95(int df) {
    /* Student's t 0.95 quantiles, df 1..30 (standard tables). */
    static const double t[30] = {6.3138, 2.9200, 2.3534, 2.1318, 2.0150, 1.9432, 1.8946, 1.8595, 1.8331, 1.8125,
                                 1.7959, 1.7823, 1.7709, 1.7613, 1.7531, 1.7459, 1.7396, 1.7341, 1.7291, 1.7247,
                                 1.7207, 1.7171, 1.7139, 1.7109, 1.7081, 1.7056, 1.7033, 1.7011, 1.6991, 1.6973};
    if (df < 1) return NAN;
    if (df <= 30) return t[df - 1];
    double z = Z95, z3 = z * z * z, z5 = z3 * z * z, n = df;
    return z + (z3 + z) / (4 * n) + (5 * z5 + 16 * z3 + 3 * z) / (96 * n * n);
}

static double widen(size_t k) { return sqrt(1.0 + 1.0 / (double)k); }

double zb_rerun_detectable(double spread, size_t n, bool log_scale) {
    if (n < 2 || !isfinite(spread)) return NAN;
    double d = (zb_t95((int)n - 1) + Z95) * spread * widen(n);
    return log_scale ? 100.0 * (exp(d) - 1.0) : d;
}

size_t zb_rerun_runs_for(double spread, double target, bool log_scale, size_t max_k) {
    for (size_t n = ZB_RERUN_MIN_K; n <= max_k; n++) {
        if (zb_rerun_detectable(spread, n, log_scale) <= target) return n;
    }
    return 0;
}

zb_rerun_bound zb_rerun_bound_of(const double *v, size_t k, bool log_scale) {
    zb_rerun_bound b = {0};
    b.centre = b.spread = b.lo = b.hi = b.detectable = NAN;
    double sum = 0, sum2 = 0;
    size_t n = 0;
    for (size_t i = 0; i < k; i++) {
        if (!isfinite(v[i])) continue;
        if (log_scale && v[i] <= 0) return b;
        double x = log_scale ? log(v[i]) : v[i];
        sum += x;
        n++;
    }
    b.k = n;
    if (n < ZB_RERUN_MIN_K) return b;
    double mean = sum / (double)n;
    for (size_t i = 0; i < k; i++) {
        if (!isfinite(v[i])) continue;
        double x = (log_scale ? log(v[i]) : v[i]) - mean;
        sum2 += x * x;
    }
    double s = sqrt(sum2 / (double)(n - 1)), half = zb_t95((int)n - 1) * s * widen(n);
    b.defined = true;
    b.centre = log_scale ? exp(mean) : mean;
    b.spread = s;
    b.lo = log_scale ? exp(mean - half) : mean - half;
    b.hi = log_scale ? exp(mean + half) : mean + half;
    b.detectable = zb_rerun_detectable(s, n, log_scale);
    return b;
}
