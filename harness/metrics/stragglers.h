/* Per-rank figures against the ranks' median: the worst rank and the
 * stragglers (docs/design.md §6, "Per-rank figures and stragglers").
 *
 * A straggler is a rank whose figure deviates from the median over ranks
 * by more than a threshold (--straggler-pct, default 10): a time by more
 * than that many percent of the median, a percentage (overlap) by more than
 * that many percentage points. Either direction counts (the deviation's
 * sign says which), except with exactly two ranks: their median is their
 * mean, so both deviate by the same amount, and only the worse one is named
 * (the slower time, the lower overlap). NaN figures (not measured) are neither counted in the
 * median nor flagged; a time whose median is not positive has no relative
 * deviation and flags no one. Pure functions: no MPI, no I/O. */
#ifndef ZB_STRAGGLERS_H
#define ZB_STRAGGLERS_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_STRAGGLER_PCT_DEFAULT 10.0

/* How a figure's deviation from the median is measured. */
typedef enum zb_deviation {
    ZB_DEVIATION_RELATIVE = 0, /* 100 * (v - median) / median: times */
    ZB_DEVIATION_POINTS,       /* v - median: figures that are percentages already */
} zb_deviation;

/* Which side of the median is the bad one (what two ranks are judged by). */
typedef enum zb_worse {
    ZB_WORSE_HIGHER = 0, /* times */
    ZB_WORSE_LOWER,      /* overlap */
} zb_worse;

typedef struct zb_straggler {
    int rank;
    const char *metric; /* the figure's JSON key ("step_time_ms"), not copied */
    double value, median;
    double deviation_pct; /* signed, as zb_deviation says */
} zb_straggler;

/* The median over ranks of v[0..n), NaN entries left out (v unchanged);
 * NaN when none. An even count gives the mean of the two middle values. */
double zb_rank_median(const double *v, int n);

/* The signed deviation of value from median; NaN when either is NaN or,
 * relative, when median <= 0. */
double zb_deviation_of(double value, double median, zb_deviation how);

/* Appends to out[*n_out..cap) every rank r of v[0..n_ranks) whose
 * |deviation| exceeds threshold_pct, in rank order, with `metric` as its
 * name (two ranks: only the one on the `worse` side). Fewer than 2 ranks
 * flag no one. Returns how many ranks deviated (also those past cap, which
 * are counted, not stored). */
int zb_stragglers_find(const char *metric, const double *v, int n_ranks, zb_deviation how, zb_worse worse,
                       double threshold_pct, zb_straggler *out, int cap, int *n_out);

#ifdef __cplusplus
}
#endif
#endif
