/* Paired A/B statistics: the median of paired differences and a 95 %
 * confidence interval for it, distribution-free and exact (the sign-test
 * interval, docs/design.md §6), with the verdict a reading prints.
 *
 * Pure: no MPI, no clock, no random numbers, so the same pairs give the
 * same interval on every run (a test of it cannot flake). The step's
 * paired sync/prefetch A/B uses it; so can any tool that judges a change
 * from paired samples.
 *
 * The interval: with the n differences sorted, d_(1) <= ... <= d_(n), it
 * is [d_(k), d_(n+1-k)] for the largest k with 2 P(X <= k-1) <= 0.05,
 * X ~ Binomial(n, 1/2). Its coverage of the true median is then at least
 * 95 % for any continuous distribution of the differences (it is
 * 1 - 2 P(X <= k-1), reported as `level`). Below 6 pairs no such k exists:
 * the interval is not defined (NaN) and nothing is called significant. */
#ifndef ZB_PAIRED_H
#define ZB_PAIRED_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_PAIRED_MIN_PAIRS 6 /* fewest pairs a 95 % sign-test interval needs */

typedef struct zb_paired {
    size_t n;         /* pairs used: both values finite */
    double median;    /* median of the differences; NaN when n = 0 */
    double lo, hi;    /* the 95 % interval; NaN when n < ZB_PAIRED_MIN_PAIRS */
    double level;     /* its exact coverage (>= 0.95); NaN when not defined */
    bool significant; /* the interval is defined and does not contain 0 */
} zb_paired;

/* The order statistic k (1-based) of the interval for n pairs, or 0 when
 * n < ZB_PAIRED_MIN_PAIRS; *level (may be NULL) gets its coverage. */
size_t zb_paired_interval_rank(size_t n, double *level);

/* Median and interval of d[0..n) (NaN entries skipped; d is not changed). */
zb_paired zb_paired_median_ci(const double *d, size_t n);

/* The same for the differences b[i] - a[i] (a pair with a NaN is skipped). */
zb_paired zb_paired_diff(const double *a, const double *b, size_t n);

/* "significant", "no significant difference", or "too few pairs for a
 * 95 % interval" (fewer than ZB_PAIRED_MIN_PAIRS). */
const char *zb_paired_verdict(const zb_paired *p);

/* The pairs in all an interval like p's would need for its half-width to
 * fall to `target`: a median's interval narrows about as 1/sqrt(n), so
 * n (half-width / target)^2, rounded up (at least n + 1). 0 when it cannot
 * be estimated (no interval, target <= 0, not finite). An estimate for a
 * reading ("about N more pairs"), never a promise. */
size_t zb_paired_pairs_for(const zb_paired *p, double target);

/* Adaptive pairing (hyperfine's and criterion's rule): after each pair,
 * whether to run another. Stop once at least min_n pairs ran and
 *   precision_pct <= 0: at min_n exactly (ZB_PAIRS_FIXED);
 *   the interval is defined and its half-width is at most precision_pct %
 *   of `ref` (sync's median step time): ZB_PAIRS_PRECISION;
 *   n reached max_n: ZB_PAIRS_MAX_PAIRS;
 *   the measured steps' time reached max_s seconds: ZB_PAIRS_MAX_TIME.
 * Pure: every rank computes it from the same (gathered) values and agrees. */
typedef enum zb_pairs_stop {
    ZB_PAIRS_CONTINUE = 0,
    ZB_PAIRS_FIXED,
    ZB_PAIRS_PRECISION,
    ZB_PAIRS_MAX_PAIRS,
    ZB_PAIRS_MAX_TIME
} zb_pairs_stop;

zb_pairs_stop zb_paired_stop(const zb_paired *d, size_t n, size_t min_n, size_t max_n, double ref,
                             double precision_pct, double elapsed_s, double max_s);
/* "fixed", "precision", "max-steps", "max-time" ("" for CONTINUE): the
 * JSON's stopped_by. */
const char *zb_pairs_stop_name(zb_pairs_stop s);

#ifdef __cplusplus
}
#endif
#endif
