/* Two groups of runs: K base runs against M new runs, one figure per run
 * (its median step time, a size's time), for compare's gate when both
 * sides were run several times (docs/design.md, Regression compare).
 *
 * Why runs and not steps: a run's steps move together (load, clocks,
 * placement shift all of them), so the noise a rerun brings is the spread
 * between runs' figures, which only several runs show. With both sides
 * run several times, that spread is measured on both, and the question
 * "did NEW's runs come out slower than BASE's" is Welch's two-sample t
 * test over the figures (on log values for a relative metric, so that the
 * shift and the spread are shares of the figure): unequal spreads allowed,
 * degrees of freedom by Welch-Satterthwaite. One side's figures all equal
 * (a deterministic count) and the other's too: no spread, so any shift is
 * exact (p 0) and none is p 1.
 *
 * Pure: no MPI, no clock, no random numbers. */
#ifndef ZB_GROUPS_H
#define ZB_GROUPS_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_GROUPS_MIN_K 2 /* fewest runs a side needs for its spread */

typedef struct zb_groups_test {
    bool defined;      /* >= ZB_GROUPS_MIN_K finite figures each (all > 0 on the log scale) */
    size_t k_base, k_new;
    double shift;      /* NEW's mean minus BASE's: % of BASE (log scale, geometric means) or units */
    double se;         /* standard error of the shift, on the test's scale (log or units) */
    double df;         /* Welch-Satterthwaite; NaN without spread */
    double t;          /* shift / se on the test's scale; NaN without spread */
    double p_greater;  /* one-sided p of "NEW's figures are larger" */
    double p_less;     /* one-sided p of "NEW's figures are smaller" */
    double spread_base, spread_new; /* sample sds: % (log scale) or units */
    double detectable; /* smallest shift caught in 95 % of runs at `alpha` one-sided: % or units */
    double alpha;
} zb_groups_test;

/* The test of nw[0..kn) against base[0..kb) at one-sided false-alarm rate
 * alpha (what `detectable` is drawn at). Non-finite values skipped; on the
 * log scale a value <= 0 leaves it undefined. detectable is
 * (t_{1-alpha} + t_{0.95}) se at Welch's df (the noncentral t taken as a
 * shifted one). */
zb_groups_test zb_groups_test_of(const double *base, size_t kb, const double *nw, size_t kn, double alpha,
                                 bool log_scale);

/* The fewest runs per side (up to max_k) whose detectable shift is at most
 * `target` (% or units) with these spreads (the test's own: % on the log
 * scale) at alpha; 0 when none up to max_k reaches it. */
size_t zb_groups_runs_for(double spread_base, double spread_new, double target, double alpha, bool log_scale,
                          size_t max_k);

#ifdef __cplusplus
}
#endif
#endif
