/* Welch's test over two groups of run figures (groups.h). */
#include "groups.h"

#include <math.h>

#include "rerun.h"

static double as_shown(double x, bool log_scale) { return log_scale ? 100.0 * (exp(x) - 1.0) : x; }

/* Welch-Satterthwaite degrees of freedom of the variances' shares a, b
 * (var / n) with n - 1 degrees of freedom each. */
static double welch_df(double a, size_t na, double b, size_t nb) {
    double den = a * a / (double)(na - 1) + b * b / (double)(nb - 1);
    return den > 0 ? (a + b) * (a + b) / den : NAN;
}

/* (t_{1-alpha} + t_{0.95}) se, as shown. */
static double detectable(double se, double df, double alpha, bool log_scale) {
    if (!(se > 0)) return 0.0;
    return as_shown((zb_t_quantile_real(1.0 - alpha, df) + zb_t_quantile_real(0.95, df)) * se, log_scale);
}

zb_groups_test zb_groups_test_of(const double *base, size_t kb, const double *nw, size_t kn, double alpha,
                                 bool log_scale) {
    zb_groups_test g = {0};
    g.shift = g.se = g.df = g.t = g.spread_base = g.spread_new = g.detectable = NAN;
    g.p_greater = g.p_less = NAN;
    g.alpha = alpha;
    double mb = 0, vb = 0, mn = 0, vn = 0;
    g.k_base = zb_run_moments(base, kb, log_scale, &mb, &vb);
    g.k_new = zb_run_moments(nw, kn, log_scale, &mn, &vn);
    if (g.k_base < ZB_GROUPS_MIN_K || g.k_new < ZB_GROUPS_MIN_K) return g;
    g.defined = true;
    double d = mn - mb, a = vb / (double)g.k_base, b = vn / (double)g.k_new;
    g.shift = as_shown(d, log_scale);
    g.spread_base = as_shown(sqrt(vb), log_scale);
    g.spread_new = as_shown(sqrt(vn), log_scale);
    g.se = sqrt(a + b);
    if (!(g.se > 0)) { /* no spread on either side: the shift is exact */
        g.p_greater = d > 0 ? 0.0 : 1.0;
        g.p_less = d < 0 ? 0.0 : 1.0;
        g.detectable = 0.0;
        return g;
    }
    g.df = welch_df(a, g.k_base, b, g.k_new);
    g.t = d / g.se;
    g.p_less = zb_t_cdf_real(g.t, g.df);
    g.p_greater = zb_t_cdf_real(-g.t, g.df);
    g.detectable = detectable(g.se, g.df, alpha, log_scale);
    return g;
}

size_t zb_groups_runs_for(double spread_base, double spread_new, double target, double alpha, bool log_scale,
                          size_t max_k) {
    double sb = log_scale ? log1p(spread_base / 100.0) : spread_base;
    double sn = log_scale ? log1p(spread_new / 100.0) : spread_new;
    if (!isfinite(sb) || !isfinite(sn)) return 0;
    for (size_t n = ZB_GROUPS_MIN_K; n <= max_k; n++) {
        double a = sb * sb / (double)n, b = sn * sn / (double)n;
        double se = sqrt(a + b);
        if (!(se > 0)) return n;
        if (detectable(se, welch_df(a, n, b, n), alpha, log_scale) <= target) return n;
    }
    return 0;
}
