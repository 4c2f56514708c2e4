/* What a rerun of the same commit may give, from K base runs' figures (one
 * figure per run: its median step time, its bandwidth), for compare's gate
 * against several bases (docs/design.md, Regression compare).
 *
 * A run's figure moves between reruns more than its own steps vary (load,
 * clocks, placement shift all of them together), so the test is over run
 * figures, not pooled steps. With the K figures as independent normal
 * draws (on log values for a relative metric, so that the spread is a
 * share of the figure), mean m and sample sd s, a new run of the same
 * commit falls beyond m + t s sqrt(1 + 1/K) (t: Student's 1 - alpha
 * quantile with K - 1 degrees of freedom) on a given side in a share alpha
 * of reruns: the prediction bound, one per side. A true change of d is
 * caught in 95 % of runs when d >= (t + z) s sqrt(1 + 1/K), z = 1.645: the
 * smallest detectable change (an approximation: the noncentral t taken as
 * shifted). More base runs bring it down to (z_{1-alpha} + 1.645) s and no
 * further; past that only a steadier run (more steps, a quieter machine)
 * helps.
 *
 * Pure: no MPI, no clock, no random numbers. */
#ifndef ZB_RERUN_H
#define ZB_RERUN_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_RERUN_MIN_K 3 /* fewest base runs a bound is drawn from */

typedef struct zb_rerun_bound {
    bool defined;     /* at least ZB_RERUN_MIN_K finite figures (all > 0 on the log scale) */
    size_t k;         /* figures used */
    double centre;    /* mean (geometric on the log scale) */
    double spread;    /* s: on the log scale as a share (exp(s) - 1, x100 = %), else in units */
    double lo, hi;    /* the one-sided 95 % prediction bounds, in the metric's units */
    double detectable; /* smallest change caught in 95 % of runs: % of centre (log scale) or units */
    double alpha;      /* the false-alarm rate per side it was drawn at */
} zb_rerun_bound;

/* Student's t with df >= 1 degrees of freedom: its distribution function
 * (through the regularized incomplete beta), its p quantile for
 * 0.5 < p < 1 (bisection, to 1e-12 relative) and the 0.95 quantile. NaN
 * outside those domains. */
double zb_t_cdf(double t, int df);
double zb_t_quantile(double p, int df);
double zb_t95(int df);
/* The same for a real df > 0 (Welch's degrees of freedom, groups.h). */
double zb_t_cdf_real(double t, double df);
double zb_t_quantile_real(double p, double df);

/* Count, mean and sample variance (NaN with one figure) of the finite
 * values of v[0..k), of their logs on the log scale; 0 figures when one is
 * <= 0 there. Deviations are taken from the first figure, so equal figures
 * give a variance of exactly 0 (a mean rounded off the figures would not,
 * and "no spread" would read as a spread of 1e-15 %). */
size_t zb_run_moments(const double *v, size_t k, bool log_scale, double *mean, double *var);

/* The bound from v[0..k) at false-alarm rate alpha per side (0.05: the
 * one-sided 95 % bound; a gate over m figures passes alpha / m to keep its
 * own rate at alpha). Non-finite values skipped; on the log scale, a value
 * <= 0 leaves it undefined. */
zb_rerun_bound zb_rerun_bound_of(const double *v, size_t k, double alpha, bool log_scale);

/* The smallest change caught in 95 % of runs with n base runs of spread s
 * at false-alarm rate alpha (the bound's units: % on the log scale). */
double zb_rerun_detectable(double spread, size_t n, double alpha, bool log_scale);

/* The fewest base runs (up to max_k) whose detectable change is at most
 * `target` with this spread and alpha; 0 when none up to max_k reaches it. */
size_t zb_rerun_runs_for(double spread, double target, double alpha, bool log_scale, size_t max_k);

#ifdef __cplusplus
}
#endif
#endif
