/* Helpers shared by the test_kernel_*.c tests: a seeded RNG, fp32/double
 * buffers, central finite differences in double, and a tolerance check that
 * proves on every call that it can fail.
 *
 * Gradient checks compare the fp32 analytic backward of a kernel against
 * central differences of L = sum(out * R) (R fixed, random) evaluated with a
 * double-precision reference forward written in the test itself. With
 * h = 1e-6 the difference quotient is good to ~1e-9 (truncation h^2 f'''/6 plus
 * rounding 1e-16 |L| / h), so the error budget is the fp32 kernel's. */
#ifndef ZB_KERNEL_TEST_UTIL_H
#define ZB_KERNEL_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "zb_test.h"

/* splitmix64: deterministic, seeded per test. */
static inline uint64_t kt_next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1). */
static inline float kt_uniform(uint64_t *s) {
    return (float)((double)(kt_next(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

static inline float *kt_rand_f(size_t n, uint64_t *s, float scale) {
    float *p = (float *)malloc((n ? n : 1) * sizeof *p);
    for (size_t i = 0; i < n; i++) p[i] = scale * kt_uniform(s);
    return p;
}

static inline float *kt_zeros_f(size_t n) { return (float *)calloc(n ? n : 1, sizeof(float)); }

/* A double copy of an fp32 array (exact). */
static inline double *kt_to_d(const float *x, size_t n) {
    double *p = (double *)malloc((n ? n : 1) * sizeof *p);
    for (size_t i = 0; i < n; i++) p[i] = (double)x[i];
    return p;
}

/* L = sum(out * R). */
static inline double kt_dot_d(const double *out, const double *r, size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += out[i] * r[i];
    return s;
}

#define KT_FD_STEP 1e-6

/* grad[i] = (L(x + h e_i) - L(x - h e_i)) / 2h, perturbing x (double, owned
 * by ctx) in place and restoring it. */
typedef double (*kt_objective)(void *ctx);
static inline void kt_fd_grad(double *x, size_t n, kt_objective f, void *ctx, double *grad) {
    for (size_t i = 0; i < n; i++) {
        double x0 = x[i];
        x[i] = x0 + KT_FD_STEP;
        double lp = f(ctx);
        x[i] = x0 - KT_FD_STEP;
        double lm = f(ctx);
        x[i] = x0;
        grad[i] = (lp - lm) / (2.0 * KT_FD_STEP);
    }
}

/* Largest |got - want| / (rtol |want_i| + atol * max_j |want_j|): <= 1 passes.
 * The atol term is relative to the array's scale, so a gradient element that
 * cancels to ~0 is judged against the size of its terms. */
static inline double kt_worst(const float *got, const double *want, size_t n, double rtol,
                              double atol, size_t *where) {
    double scale = 0.0, worst = 0.0;
    for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(want[i]));
    if (scale == 0.0) scale = 1.0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - want[i]) / (rtol * fabs(want[i]) + atol * scale);
        if (!(e <= worst)) { /* NaN counts as worst */
            worst = isnan(e) ? INFINITY : e;
            if (where) *where = i;
        }
    }
    return worst;
}

/* Checks got against want, then checks that the same comparison rejects a
 * copy of got with one element moved by 10x its tolerance (the check can
 * fail: a wrong gradient element at that size would be caught). */
static inline void kt_check_close(const char *what, const float *got, const double *want,
                                  size_t n, double rtol, double atol) {
    size_t at = 0;
    double worst = kt_worst(got, want, n, rtol, atol, &at);
    ZB_CHECK_MSG(worst <= 1.0, "%s: element %zu is %.9g, want %.9g (%.3g x tolerance)", what, at,
                 n ? (double)got[at] : 0.0, n ? want[at] : 0.0, worst);
    if (n == 0) return;
    float *bad = (float *)malloc(n * sizeof *bad);
    double scale = 0.0;
    for (size_t i = 0; i < n; i++) {
        bad[i] = got[i];
        scale = fmax(scale, fabs(want[i]));
    }
    if (scale == 0.0) scale = 1.0;
    size_t k = n / 2;
    bad[k] = (float)(want[k] + 10.0 * (rtol * fabs(want[k]) + atol * scale));
    ZB_CHECK_MSG(kt_worst(bad, want, n, rtol, atol, NULL) > 1.0,
                 "%s: a perturbed element was not caught", what);
    free(bad);
}

#endif
