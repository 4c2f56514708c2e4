/* Two independent samples, BASE (a) and NEW (b), compared without assuming
 * a distribution: the Mann-Whitney U test (two-sided) and a 95 % interval
 * for the ratio of NEW to BASE (the Hodges-Lehmann shift on log values),
 * for compare's judgement of a metric whose runs carry their samples
 * (docs/design.md, Regression compare).
 *
 * Pure: no MPI, no clock, no random numbers, so the same samples give the
 * same answer on every run (a test of it cannot flake).
 *
 * The test: U counts the pairs (a_i, b_j) with b_j > a_i, a tie counting
 * one half. Under "same distribution", U has mean mn/2 and variance
 *   mn/12 ((m+n+1) - sum(t^3 - t) / ((m+n)(m+n-1)))
 * over tie groups of size t; z = (|U - mn/2| - 1/2) / sd (continuity
 * corrected) and p = 2 (1 - Phi(z)). With at least ZB_TWOSAMPLE_MIN_N
 * values a side the normal approximation is close to the exact p at 5 %;
 * below it nothing is called significant.
 *
 * The interval: with the mn differences log b_j - log a_i sorted, their
 * median is the shift estimate and [D_(k), D_(mn+1-k)] its interval,
 * k = floor(mn/2 - 1.96 sqrt(mn(m+n+1)/12)) (at least 1); exp() of them is
 * the ratio b/a and its interval. Defined only when every value is > 0;
 * above ZB_TWOSAMPLE_HL_MAX values a side, from that many evenly spaced
 * order statistics of it (an estimate for the reader; the test's verdict
 * uses every value). */
#ifndef ZB_TWOSAMPLE_H
#define ZB_TWOSAMPLE_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_TWOSAMPLE_MIN_N 5     /* fewest values a side the test judges */
#define ZB_TWOSAMPLE_ALPHA 0.05  /* two-sided level */
#define ZB_TWOSAMPLE_HL_MAX 256  /* values a side the ratio interval uses (thinned evenly) */

typedef struct zb_twosample {
    size_t n_a, n_b;          /* values used: finite ones */
    double median_a, median_b;
    double u;                 /* Mann-Whitney U of b over a; NaN when a side is empty */
    double z, p;              /* normal approximation; p = 1 when the test cannot judge */
    double ratio, ratio_lo, ratio_hi; /* b/a: Hodges-Lehmann estimate and 95 % interval; NaN when undefined */
    bool judged;              /* both sides have at least ZB_TWOSAMPLE_MIN_N values */
    bool significant;         /* judged and p < ZB_TWOSAMPLE_ALPHA */
    int direction;            /* +1: b tends higher, -1: lower, 0: neither (U = mn/2) */
} zb_twosample;

/* The test and interval of a[0..na) against b[0..nb) (NaN and infinite
 * values skipped; the inputs are not changed). Out of memory: the result
 * says not judged (p 1, NaN interval). */
zb_twosample zb_twosample_test(const double *a, size_t na, const double *b, size_t nb);

/* Phi, the standard normal distribution function. */
double zb_normal_cdf(double z);

#ifdef __cplusplus
}
#endif
#endif
