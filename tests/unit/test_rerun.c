/* The prediction bound over base runs' figures (harness/metrics/rerun.h),
 * on figures with answers worked out by hand: Student's t, the bounds on
 * the log and the linear scale, the smallest detectable change and the
 * base runs needed for a target. Pure: nothing timed. */
#include <math.h>

#include "rerun.h"
#include "zb_test.h"

#define NEAR(a, b, tol) (fabs((a) - (b)) <= (tol))

static void test_t95(void) {
    /* against published tables (4 decimals) */
    ZB_CHECK_MSG(NEAR(zb_t95(1), 6.3138, 1e-4) && NEAR(zb_t95(2), 2.9200, 1e-4) && NEAR(zb_t95(30), 1.6973, 1e-4),
                 "t95 %g %g %g", zb_t95(1), zb_t95(2), zb_t95(30));
    ZB_CHECK_MSG(NEAR(zb_t_quantile(0.99, 2), 6.9646, 1e-4) && NEAR(zb_t_quantile(0.999, 2), 22.3271, 1e-3),
                 "t 0.99/0.999, df 2: %g %g", zb_t_quantile(0.99, 2), zb_t_quantile(0.999, 2));
    ZB_CHECK_MSG(NEAR(zb_t_quantile(0.99, 4), 3.7469, 1e-4) && NEAR(zb_t_quantile(0.999, 10), 4.1437, 1e-4),
                 "t 0.99 df 4 %g, 0.999 df 10 %g", zb_t_quantile(0.99, 4), zb_t_quantile(0.999, 10));
    ZB_CHECK(NEAR(zb_t_quantile(0.975, 1), 12.7062, 1e-3) && NEAR(zb_t_cdf(0.0, 5), 0.5, 1e-12));
    ZB_CHECK(NEAR(zb_t_cdf(-2.0150, 5), 0.05, 1e-4) && isnan(zb_t_quantile(0.4, 3)));
    ZB_CHECK_MSG(NEAR(zb_t95(31), 1.6955, 1e-3), "t95(31) %g", zb_t95(31));
    ZB_CHECK_MSG(NEAR(zb_t95(40), 1.6839, 1e-3), "t95(40) %g", zb_t95(40));
    ZB_CHECK_MSG(NEAR(zb_t95(60), 1.6706, 1e-3), "t95(60) %g", zb_t95(60));
    ZB_CHECK_MSG(NEAR(zb_t95(120), 1.6577, 1e-3), "t95(120) %g", zb_t95(120));
    ZB_CHECK(isnan(zb_t95(0)));
}

static void test_bounds(void) {
    /* log scale, {10, 11, 12}: geometric mean 10.9696, sd of logs 0.091192;
     * bounds exp(mean -+ 2.92 * 0.091192 * sqrt(4/3)); detectable
     * 100 (exp((2.92 + 1.6449) * 0.091192 * sqrt(4/3)) - 1) = 61.72 % */
    const double v[] = {10.0, 11.0, NAN, 12.0};
    zb_rerun_bound b = zb_rerun_bound_of(v, 4, 0.05, true);
    ZB_CHECK(b.defined && b.k == 3);
    ZB_CHECK_MSG(NEAR(b.centre, 10.969613, 1e-5) && NEAR(b.spread, 0.0911923, 1e-6), "centre %g spread %g", b.centre,
                 b.spread);
    ZB_CHECK_MSG(NEAR(b.hi, 14.918533, 1e-4) && NEAR(b.lo, 8.065968, 1e-4), "bounds %g..%g", b.lo, b.hi);
    ZB_CHECK_MSG(NEAR(b.detectable, 61.717, 1e-2), "detectable %g %%", b.detectable);
    /* linear scale, {1, 2, 3}: mean 2, sd 1, bounds 2 -+ t95(2) sqrt(4/3), t95(2) = 2.9199856 */
    const double w[] = {1.0, 2.0, 3.0};
    b = zb_rerun_bound_of(w, 3, 0.05, false);
    ZB_CHECK(b.defined && NEAR(b.hi, 5.3717089, 1e-6) && NEAR(b.lo, -1.3717089, 1e-6));
    ZB_CHECK_MSG(NEAR(b.detectable, 5.2710223, 1e-6), "detectable %g", b.detectable);
    /* a gate over 10 figures at 0.5 % each: a wider bound, a larger detectable change */
    zb_rerun_bound strict = zb_rerun_bound_of(v, 4, 0.005, true);
    ZB_CHECK(strict.defined && strict.hi > 14.918533 && strict.lo < 8.065968 && strict.detectable > 61.717);
    /* identical figures: no spread, the bound is the figure */
    const double same[] = {5.0, 5.0, 5.0};
    b = zb_rerun_bound_of(same, 3, 0.05, true);
    ZB_CHECK(b.defined && NEAR(b.hi, 5.0, 1e-12) && NEAR(b.lo, 5.0, 1e-12) && NEAR(b.detectable, 0.0, 1e-12));
    /* too few, or a figure <= 0 on the log scale: undefined */
    ZB_CHECK(!zb_rerun_bound_of(v, 2, 0.05, true).defined);
    const double zero[] = {1.0, 0.0, 2.0};
    ZB_CHECK(!zb_rerun_bound_of(zero, 3, 0.05, true).defined && zb_rerun_bound_of(zero, 3, 0.05, false).defined);
}

static void test_runs_for(void) {
    /* spread 0.012 (log): 5 base runs detect 5.2 %, 6 detect 4.86 % */
    ZB_CHECK_MSG(zb_rerun_runs_for(0.012, 5.0, 0.05, true, 50) == 6, "runs for 5 %%: %zu", zb_rerun_runs_for(0.012, 5.0, 0.05, true, 50));
    ZB_CHECK(zb_rerun_detectable(0.012, 6, 0.05, true) <= 5.0 && zb_rerun_detectable(0.012, 5, 0.05, true) > 5.0);
    /* spread 0.15: even infinitely many runs need 3.29 * 0.15 = 49 %, so none up to 50 reach 10 % */
    ZB_CHECK(zb_rerun_runs_for(0.15, 10.0, 0.05, true, 50) == 0);
    /* more runs never detect less */
    for (size_t n = 3; n < 40; n++) ZB_CHECK(zb_rerun_detectable(0.05, n + 1, 0.05, true) <= zb_rerun_detectable(0.05, n, 0.05, true));
}

int main(void) {
    test_t95();
    test_bounds();
    test_runs_for();
    return zb_test_finish("test_rerun");
}
