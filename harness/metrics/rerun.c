/* Prediction bounds over base runs' figures (rerun.h). */
#include "rerun.h"

#include <math.h>

#define Z95 1.6448536269514722

/* The regularized incomplete beta I_x(a, b) by its continued fraction
 * (modified Lentz), on the side of x where it converges fast. */
static double beta_cf(double a, double b, double x) {
    const double tiny = 1e-300;
    double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
    if (fabs(d) < tiny) d = tiny;
    d = 1.0 / d;
    double h = d;
    for (int m = 1; m <= 300; m++) {
        double m2 = 2.0 * m, num = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        for (int half = 0; half < 2; half++) {
            d = 1.0 + num * d;
            if (fabs(d) < tiny) d = tiny;
            c = 1.0 + num / c;
            if (fabs(c) < tiny) c = tiny;
            d = 1.0 / d;
            h *= d * c;
            num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        }
        if (fabs(d * c - 1.0) < 1e-15) break;
    }
    return h;
}

static double beta_reg(double a, double b, double x) {
    if (x <= 0) return 0.0;
    if (x >= 1) return 1.0;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    return x < (a + 1.0) / (a + b + 2.0) ? front * beta_cf(a, b, x) / a : 1.0 - front * beta_cf(b, a, 1.0 - x) / b;
}

double zb_t_cdf_real(double t, double df) {
    if (!(df > 0) || isnan(t)) return NAN;
    double tail = 0.5 * beta_reg(df / 2.0, 0.5, df / (df + t * t)); /* P(T > |t|) */
    return t >= 0 ? 1.0 - tail : tail;
}

double zb_t_quantile_real(double p, double df) {
    if (!(df > 0) || !(p > 0.5 && p < 1.0)) return NAN;
    double lo = 0.0, hi = 1.0;
    while (zb_t_cdf_real(hi, df) < p && hi < 1e12) hi *= 2.0;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (zb_t_cdf_real(mid, df) < p) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi);
}

double zb_t_cdf(double t, int df) { return df < 1 ? NAN : zb_t_cdf_real(t, (double)df); }

double zb_t_quantile(double p, int df) { return df < 1 ? NAN : zb_t_quantile_real(p, (double)df); }

double zb_t95(int df) { return zb_t_quantile(0.95, df); }

static double widen(size_t k) { return sqrt(1.0 + 1.0 / (double)k); }

double zb_rerun_detectable(double spread, size_t n, double alpha, bool log_scale) {
    if (n < 2 || !isfinite(spread)) return NAN;
    double d = (zb_t_quantile(1.0 - alpha, (int)n - 1) + Z95) * spread * widen(n);
    return log_scale ? 100.0 * (exp(d) - 1.0) : d;
}

size_t zb_rerun_runs_for(double spread, double target, double alpha, bool log_scale, size_t max_k) {
    for (size_t n = ZB_RERUN_MIN_K; n <= max_k; n++) {
        if (zb_rerun_detectable(spread, n, alpha, log_scale) <= target) return n;
    }
    return 0;
}

size_t zb_run_moments(const double *v, size_t k, bool log_scale, double *mean, double *var) {
    double first = NAN, sum = 0, sum2 = 0;
    size_t n = 0;
    for (size_t i = 0; i < k; i++) {
        if (!isfinite(v[i])) continue;
        if (log_scale && v[i] <= 0) return 0;
        double x = log_scale ? log(v[i]) : v[i];
        if (n == 0) first = x;
        sum += x - first;
        n++;
    }
    if (n == 0) return 0;
    double shift = sum / (double)n;
    for (size_t i = 0; i < k; i++) {
        if (!isfinite(v[i])) continue;
        double x = (log_scale ? log(v[i]) : v[i]) - first - shift;
        sum2 += x * x;
    }
    *mean = first + shift;
    *var = n > 1 ? sum2 / (double)(n - 1) : NAN;
    return n;
}

zb_rerun_bound zb_rerun_bound_of(const double *v, size_t k, double alpha, bool log_scale) {
    zb_rerun_bound b = {0};
    b.centre = b.spread = b.lo = b.hi = b.detectable = NAN;
    double mean = 0, var = 0;
    size_t n = zb_run_moments(v, k, log_scale, &mean, &var);
    b.k = n;
    if (n < ZB_RERUN_MIN_K) return b;
    double s = sqrt(var), half = zb_t_quantile(1.0 - alpha, (int)n - 1) * s * widen(n);
    b.defined = true;
    b.centre = log_scale ? exp(mean) : mean;
    b.spread = s;
    b.lo = log_scale ? exp(mean - half) : mean - half;
    b.hi = log_scale ? exp(mean + half) : mean + half;
    b.alpha = alpha;
    b.detectable = zb_rerun_detectable(s, n, alpha, log_scale);
    return b;
}
