/* The paired A/B statistics (harness/metrics/paired.h) on synthetic pairs
 * from fixed seeds, so nothing here can flake: the interval's order
 * statistic and coverage for known n (worked out from the binomial
 * distribution by hand), an interval that covers a known shift and
 * excludes 0, one that spans 0 on pure noise, NaN pairs skipped, and too
 * few pairs giving no interval and no verdict of significance. */
#include <math.h>
#include <string.h>

#include "paired.h"
#include "rng.h"
#include "zb_test.h"

/* n pairs: a = base noise, b = a + shift + noise, both from `seed`. */
static void make_pairs(uint64_t seed, size_t n, double shift, double noise, double *a, double *b) {
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        a[i] = 100.0 + 10.0 * zb_uniform_pm1(zb_splitmix_next(&s));
        b[i] = a[i] + shift + noise * zb_uniform_pm1(zb_splitmix_next(&s));
    }
}

int main(void) {
    double level = 0;
    /* n = 6: P(X <= 0) = 1/64, 2/64 <= 5 %: k = 1, coverage 62/64. */
    ZB_CHECK(zb_paired_interval_rank(6, &level) == 1);
    ZB_CHECK(fabs(level - 62.0 / 64.0) < 1e-12);
    /* n = 10: P(X <= 1) = 11/1024 (2x: 2.1 %), P(X <= 2) = 56/1024 (10.9 %): k = 2. */
    ZB_CHECK(zb_paired_interval_rank(10, &level) == 2);
    ZB_CHECK(fabs(level - (1.0 - 22.0 / 1024.0)) < 1e-12);
    /* n = 5: even [min, max] covers only 1 - 2/32 = 93.75 %: no interval. */
    ZB_CHECK(zb_paired_interval_rank(5, &level) == 0 && isnan(level));
    /* Large n: k close to n/2 - 0.98 sqrt(n), coverage at least 95 %. */
    size_t k = zb_paired_interval_rank(1000, &level);
    ZB_CHECK(k >= 468 && k <= 472 && level >= 0.95 && level < 0.96);

    /* The interval is [d_(k), d_(n+1-k)]: 1..10 shuffled gives [2, 9]. */
    double d[10] = {7, 3, 10, 1, 5, 9, 2, 8, 6, 4};
    zb_paired p = zb_paired_median_ci(d, 10);
    ZB_CHECK(p.n == 10 && p.median == 5.5 && p.lo == 2 && p.hi == 9 && p.significant);
    ZB_CHECK(!strcmp(zb_paired_verdict(&p), "significant"));

    /* A known shift of +3 with noise of +-1 over 40 pairs: covered, 0 excluded. */
    enum { N = 40 };
    double a[N], b[N];
    for (uint64_t seed = 1; seed <= 20; seed++) {
        make_pairs(seed, N, 3.0, 1.0, a, b);
        p = zb_paired_diff(a, b, N);
        ZB_CHECK_MSG(p.lo <= 3.0 && 3.0 <= p.hi, "seed %llu: [%g, %g] misses the shift 3",
                     (unsigned long long)seed, p.lo, p.hi);
        ZB_CHECK(p.significant && p.lo > 0);
        /* The other way round: the shift's sign flips, the verdict stays. */
        zb_paired q = zb_paired_diff(b, a, N);
        ZB_CHECK(q.hi < 0 && q.significant && fabs(q.median + p.median) < 1e-12);
    }
    /* Pure noise, symmetric around 0: the interval spans 0 for these seeds. */
    for (uint64_t seed = 1; seed <= 20; seed++) {
        make_pairs(seed + 1000, N, 0.0, 5.0, a, b);
        p = zb_paired_diff(a, b, N);
        ZB_CHECK_MSG(p.lo <= 0.0 && 0.0 <= p.hi && !p.significant, "seed %llu: [%g, %g] excludes 0",
                     (unsigned long long)seed, p.lo, p.hi);
        ZB_CHECK(!strcmp(zb_paired_verdict(&p), "no significant difference"));
    }

    /* A pair with a NaN is skipped, not counted. */
    make_pairs(7, N, 3.0, 1.0, a, b);
    a[0] = NAN;
    b[5] = NAN;
    p = zb_paired_diff(a, b, N);
    ZB_CHECK(p.n == N - 2 && isfinite(p.lo) && isfinite(p.hi));

    /* Too few pairs: a median, no interval, never significant. */
    double few[3] = {5, 6, 7};
    p = zb_paired_median_ci(few, 3);
    ZB_CHECK(p.n == 3 && p.median == 6 && isnan(p.lo) && isnan(p.hi) && !p.significant);
    ZB_CHECK(!strcmp(zb_paired_verdict(&p), "too few pairs for a 95 % interval"));
    p = zb_paired_median_ci(NULL, 0);
    ZB_CHECK(p.n == 0 && isnan(p.median));

    /* How many pairs would narrow an interval to a target: n (hw/target)^2. */
    zb_paired w = {16, 1.0, -1.0, 3.0, 0.95, false}; /* half-width 2 */
    ZB_CHECK(zb_paired_pairs_for(&w, 1.0) == 64);     /* 16 * 2^2 */
    ZB_CHECK(zb_paired_pairs_for(&w, 4.0) == 17);     /* already narrow enough: one more */
    ZB_CHECK(zb_paired_pairs_for(&w, 0.0) == 0 && zb_paired_pairs_for(&w, NAN) == 0);
    zb_paired few_w = {3, 1.0, NAN, NAN, NAN, false};
    ZB_CHECK(zb_paired_pairs_for(&few_w, 1.0) == 0);

    /* The stop rule: fixed, precision, pair and time budgets, in that order. */
    zb_paired narrow = {10, 0.5, 0.4, 0.6, 0.95, true};  /* half-width 0.1 */
    zb_paired wide = {10, 0.5, -9.5, 10.5, 0.95, false}; /* half-width 10: 10 % of ref 100 */
    ZB_CHECK(zb_paired_stop(&narrow, 5, 10, 100, 100.0, 5.0, 0.0, 60.0) == ZB_PAIRS_CONTINUE);
    ZB_CHECK(zb_paired_stop(&wide, 10, 10, 100, 100.0, 0.0, 0.0, 60.0) == ZB_PAIRS_FIXED);
    ZB_CHECK(zb_paired_stop(&narrow, 10, 10, 100, 100.0, 5.0, 0.0, 60.0) == ZB_PAIRS_PRECISION);
    ZB_CHECK(zb_paired_stop(&wide, 10, 10, 100, 100.0, 5.0, 0.0, 60.0) == ZB_PAIRS_CONTINUE);
    ZB_CHECK(zb_paired_stop(&wide, 100, 10, 100, 100.0, 5.0, 0.0, 60.0) == ZB_PAIRS_MAX_PAIRS);
    ZB_CHECK(zb_paired_stop(&wide, 20, 10, 100, 100.0, 5.0, 61.0, 60.0) == ZB_PAIRS_MAX_TIME);
    ZB_CHECK(zb_paired_stop(&few_w, 10, 10, 100, 100.0, 5.0, 0.0, 60.0) == ZB_PAIRS_CONTINUE); /* no interval */
    ZB_CHECK(!strcmp(zb_pairs_stop_name(ZB_PAIRS_PRECISION), "precision") &&
             !strcmp(zb_pairs_stop_name(ZB_PAIRS_MAX_TIME), "max-time") &&
             !strcmp(zb_pairs_stop_name(ZB_PAIRS_CONTINUE), ""));
    return zb_test_finish("test_paired");
}
