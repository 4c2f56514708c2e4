/* Welch's test over two groups of run figures (harness/metrics/groups.h),
 * on figures whose answers scipy.stats.ttest_ind(equal_var=False) gives
 * (values below), the exact cases without spread, the undefined ones and
 * the runs needed per side. Pure: nothing timed. */
#include <math.h>

#include "groups.h"
#include "rerun.h"
#include "zb_test.h"

#define NEAR(a, b, tol) (fabs((a) - (b)) <= (tol))

static void test_real_df(void) {
    /* scipy.stats.t: cdf(1.7, 3.5) = 0.9127596, ppf(0.975, 3.5) = 2.9400886 */
    ZB_CHECK_MSG(NEAR(zb_t_cdf_real(1.7, 3.5), 0.9127596, 1e-6), "cdf %g", zb_t_cdf_real(1.7, 3.5));
    ZB_CHECK_MSG(NEAR(zb_t_quantile_real(0.975, 3.5), 2.9400886, 1e-6), "q %g", zb_t_quantile_real(0.975, 3.5));
    ZB_CHECK(NEAR(zb_t_cdf_real(2.0, 7.0), zb_t_cdf(2.0, 7), 1e-15) && isnan(zb_t_cdf_real(1.0, 0.0)));
}

static void test_log_scale(void) {
    /* logs of {10, 10.4, 9.8, 10.1} vs {11, 11.3, 10.7}: t 4.385298,
     * one-sided p 0.0053877, df 4.169956; se 0.0200260; the geometric
     * means' shift +9.1792 %; detectable at alpha 0.025:
     * 100 (exp((t_.975 + t_.95)(df) se) - 1) = 10.1768 % */
    const double b[] = {10.0, 10.4, 9.8, 10.1}, n[] = {11.0, 11.3, NAN, 10.7};
    zb_groups_test g = zb_groups_test_of(b, 4, n, 4, 0.025, true);
    ZB_CHECK(g.defined && g.k_base == 4 && g.k_new == 3);
    ZB_CHECK_MSG(NEAR(g.t, 4.385298, 1e-5) && NEAR(g.df, 4.169956, 1e-5) && NEAR(g.se, 0.0200260, 1e-6),
                 "t %g df %g se %g", g.t, g.df, g.se);
    ZB_CHECK_MSG(NEAR(g.p_greater, 0.0053877, 1e-6) && NEAR(g.p_less, 1.0 - 0.0053877, 1e-6), "p %g/%g",
                 g.p_greater, g.p_less);
    ZB_CHECK_MSG(NEAR(g.shift, 9.179166, 1e-4) && NEAR(g.detectable, 10.17679, 1e-3), "shift %g detect %g", g.shift,
                 g.detectable);
    /* swapped: the same test the other way round */
    zb_groups_test s = zb_groups_test_of(n, 4, b, 4, 0.025, true);
    ZB_CHECK(NEAR(s.p_less, g.p_greater, 1e-12) && NEAR(s.t, -g.t, 1e-12));
}

static void test_linear(void) {
    /* {30, 31, 29.5} vs {25, 26, 24} (points): t -7.111888, one-sided p
     * 0.0013252, df 3.740933 */
    const double b[] = {30.0, 31.0, 29.5}, n[] = {25.0, 26.0, 24.0};
    zb_groups_test g = zb_groups_test_of(b, 3, n, 3, 0.05, false);
    ZB_CHECK_MSG(NEAR(g.t, -7.111888, 1e-5) && NEAR(g.df, 3.740933, 1e-5) && NEAR(g.p_less, 0.0013252, 1e-6),
                 "t %g df %g p %g", g.t, g.df, g.p_less);
    ZB_CHECK(NEAR(g.shift, -5.1666667, 1e-6));
}

static void test_exact_and_undefined(void) {
    const double same[] = {100.0, 100.0, 100.0}, more[] = {110.0, 110.0}, one[] = {5.0}, zero[] = {0.0, 1.0};
    zb_groups_test g = zb_groups_test_of(same, 3, same, 2, 0.05, true);
    ZB_CHECK(g.defined && g.p_greater == 1.0 && g.p_less == 1.0 && g.detectable == 0.0 && g.shift == 0.0);
    g = zb_groups_test_of(same, 3, more, 2, 0.05, true);
    ZB_CHECK(g.p_greater == 0.0 && g.p_less == 1.0 && NEAR(g.shift, 10.0, 1e-9));
    ZB_CHECK(!zb_groups_test_of(same, 3, one, 1, 0.05, true).defined);
    ZB_CHECK(!zb_groups_test_of(zero, 2, same, 3, 0.05, true).defined);  /* log of 0 */
    ZB_CHECK(zb_groups_test_of(zero, 2, same, 3, 0.05, false).defined); /* fine in units */
    /* one side steady, the other not: Welch's df is the noisy side's k - 1 */
    const double noisy[] = {9.0, 11.0, 10.0};
    g = zb_groups_test_of(same, 3, noisy, 3, 0.05, false);
    ZB_CHECK_MSG(NEAR(g.df, 2.0, 1e-12), "df %g", g.df);
}

/* Equal figures have no spread, exactly: for values whose logs' naive mean
 * (sum / k) rounds off the figure, the old sum-then-divide form gave a
 * spread of ~1e-15 % and printed it (test_compare, CI on 2026-12-04). */
static void test_equal_figures(void) {
    size_t rounded = 0;
    for (int i = 1; i <= 2000; i++) {
        double x = 0.5 + 0.00731 * i, v[] = {x, x, x, x, x}, naive = (log(x) + log(x) + log(x)) / 3.0;
        rounded += naive != log(x);
        double mean = 0, var = -1;
        ZB_CHECK(zb_run_moments(v, 3, true, &mean, &var) == 3 && var == 0.0 && mean == log(x));
        zb_groups_test g = zb_groups_test_of(v, 3, v, 5, 0.025, true);
        ZB_CHECK(g.spread_base == 0.0 && g.spread_new == 0.0 && g.shift == 0.0);
        zb_rerun_bound b = zb_rerun_bound_of(v, 5, 0.025, false);
        ZB_CHECK(b.spread == 0.0 && b.centre == x);
    }
    ZB_CHECK_MSG(rounded > 0, "no case where the naive mean rounds off (%zu)", rounded);
    double v[] = {NAN, 2.0, 4.0}, mean = 0, var = 0;
    ZB_CHECK(zb_run_moments(v, 3, false, &mean, &var) == 2 && mean == 3.0 && var == 2.0);
    ZB_CHECK(zb_run_moments(v, 1, false, &mean, &var) == 0);
}

static void test_runs_for(void) {
    /* spreads 3 % each side, alpha 0.025: 3 runs a side detect 12.58 %,
     * 4 runs 9.61 %, 5 runs 8.10 % (scipy); target 10 %: 4 */
    size_t n = zb_groups_runs_for(3.0, 3.0, 10.0, 0.025, true, 50);
    ZB_CHECK_MSG(n == 4, "runs for 10 %%: %zu", n);
    ZB_CHECK(zb_groups_runs_for(50.0, 50.0, 1.0, 0.025, true, 50) == 0);
    ZB_CHECK(zb_groups_runs_for(0.0, 0.0, 1.0, 0.025, true, 50) == ZB_GROUPS_MIN_K);
}

int main(void) {
    test_real_df();
    test_log_scale();
    test_linear();
    test_exact_and_undefined();
    test_equal_figures();
    test_runs_for();
    return zb_test_finish("test_groups");
}
