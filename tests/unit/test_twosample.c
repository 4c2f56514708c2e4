/* The two-sample test and ratio interval (harness/metrics/twosample.h) on
 * synthetic samples from fixed seeds, so nothing here can flake: U, z and p
 * for small samples worked out by hand (one without ties, one with), equal
 * samples not significant, a 10 % shift with 2 % noise and n = 20 found in
 * the right direction with an interval covering 1.10, pure noise not
 * significant, too few values not judged, NaN skipped, 1000 values a side
 * (the interval from 256 of each). */
#include <math.h>
#include <string.h>

#include "rng.h"
#include "twosample.h"
#include "zb_test.h"

/* n values around `centre` with +-noise (relative, uniform) from `seed`. */
static void make(uint64_t seed, size_t n, double centre, double noise, double *v) {
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) v[i] = centre * (1.0 + noise * zb_uniform_pm1(zb_splitmix_next(&s)));
}

int main(void) {
    /* b all above a, no ties: U = 25, mn/2 = 12.5, var = 25/12 * 11,
     * z = 12 / sqrt(22.9167) = 2.50672, p = 0.0121858. */
    double a5[5] = {1, 2, 3, 4, 5}, b5[5] = {6, 7, 8, 9, 10};
    zb_twosample t = zb_twosample_test(a5, 5, b5, 5);
    ZB_CHECK(t.n_a == 5 && t.n_b == 5 && t.u == 25.0 && t.judged);
    ZB_CHECK(fabs(t.z - 2.5067182457620487) < 1e-9 && fabs(t.p - 0.012185780355344818) < 1e-9);
    ZB_CHECK(t.significant && t.direction == 1 && t.median_a == 3 && t.median_b == 8);
    /* Swapped: the same p, the other direction. */
    t = zb_twosample_test(b5, 5, a5, 5);
    ZB_CHECK(t.u == 0.0 && t.direction == -1 && t.significant && fabs(t.p - 0.012185780355344818) < 1e-9);

    /* Ties: U = 27 (ties count 1/2), tie groups 3, 4, 3 give sum(t^3 - t) =
     * 108, var = 3 (13 - 108/132) = 36.5455, z = 8.5 / 6.0453 = 1.40605,
     * p = 0.159708: not significant. */
    double at[6] = {1, 2, 2, 3, 3, 4}, bt[6] = {2, 3, 3, 4, 4, 5};
    t = zb_twosample_test(at, 6, bt, 6);
    ZB_CHECK(t.u == 27.0 && fabs(t.z - 1.4060547819168512) < 1e-9 && fabs(t.p - 0.15970785819817188) < 1e-9);
    ZB_CHECK(!t.significant && t.direction == 1);

    /* Identical samples: U = mn/2, p = 1, ratio 1. */
    double a[20], b[20];
    make(1, 20, 100.0, 0.02, a);
    t = zb_twosample_test(a, 20, a, 20);
    ZB_CHECK(t.u == 200.0 && t.p == 1.0 && !t.significant && t.direction == 0);
    ZB_CHECK(fabs(t.ratio - 1.0) < 1e-12 && t.ratio_lo < 1.0 && t.ratio_hi > 1.0);
    /* All values equal (every one tied): no variance, not significant. */
    double c[6] = {3, 3, 3, 3, 3, 3};
    t = zb_twosample_test(c, 6, c, 6);
    ZB_CHECK(t.p == 1.0 && !t.significant && t.ratio == 1.0 && t.ratio_lo == 1.0 && t.ratio_hi == 1.0);

    /* A 10 % slowdown, 2 % noise, n = 20: significant, b higher, the ratio
     * near 1.10 and its interval covering 1.10 but not 1. */
    make(2, 20, 110.0, 0.02, b);
    t = zb_twosample_test(a, 20, b, 20);
    ZB_CHECK(t.significant && t.direction == 1 && t.p < 1e-6);
    ZB_CHECK(fabs(t.ratio - 1.10) < 0.02 && t.ratio_lo <= 1.10 && t.ratio_hi >= 1.10 && t.ratio_lo > 1.0);

    /* 1000 a side: the test uses all, the interval 256 evenly spaced of each. */
    static double big_a[1000], big_b[1000];
    make(4, 1000, 100.0, 0.02, big_a);
    make(5, 1000, 110.0, 0.02, big_b);
    t = zb_twosample_test(big_a, 1000, big_b, 1000);
    ZB_CHECK(t.n_a == 1000 && t.significant && t.direction == 1);
    ZB_CHECK(fabs(t.ratio - 1.10) < 0.01 && t.ratio_lo <= 1.10 && t.ratio_hi >= 1.10 && t.ratio_lo > 1.05);

    /* Pure noise from another seed: not significant, interval covers 1. */
    make(3, 20, 100.0, 0.02, b);
    t = zb_twosample_test(a, 20, b, 20);
    ZB_CHECK(!t.significant && t.ratio_lo <= 1.0 && t.ratio_hi >= 1.0);

    /* Too few values: U computed, nothing judged. */
    t = zb_twosample_test(a5, 4, b5, 5);
    ZB_CHECK(t.u == 20.0 && !t.judged && !t.significant && t.p == 1.0);
    /* NaN and infinite values are skipped. */
    double an[7] = {1, NAN, 2, 3, INFINITY, 4, 5};
    t = zb_twosample_test(an, 7, b5, 5);
    ZB_CHECK(t.n_a == 5 && t.u == 25.0 && t.significant);
    /* Empty side: nothing. A non-positive value: no ratio, the test still runs. */
    t = zb_twosample_test(a5, 0, b5, 5);
    ZB_CHECK(t.n_a == 0 && isnan(t.u) && !t.judged && t.p == 1.0);
    double az[5] = {0, 2, 3, 4, 5};
    t = zb_twosample_test(az, 5, b5, 5);
    ZB_CHECK(isnan(t.ratio) && t.significant);
    return zb_test_finish("test_twosample");
}
