/* The metrics the tools judge (compare's regressions, accept's thresholds):
 * for each run metric key, which way is better, its unit, compare's default
 * tolerance and whether that tolerance is relative (% of the base value) or
 * absolute (in the metric's own unit: percentage points for the *_pct
 * metrics, elements for wrong). One table, docs/design.md §7. */
#ifndef ZB_METRIC_TABLE_H
#define ZB_METRIC_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum zb_better { ZB_BETTER_LOWER = 0, ZB_BETTER_HIGHER = 1 } zb_better;

/* What a metric's verdict does to compare's exit code. */
typedef enum zb_metric_role {
    ZB_ROLE_GATE = 0,   /* a measured headline figure (step or op time): gates, by a test over noise */
    ZB_ROLE_EXACT,      /* deterministic (memory, wrong elements): gates on the tolerance alone */
    ZB_ROLE_DIAGNOSTIC  /* explains the headline (compute, comm, overlap): judged and shown, gates only with --gate */
} zb_metric_role;

typedef struct zb_metric_def {
    const char *key;      /* the key under a run's "metrics" */
    const char *unit;     /* for tables and github-benchmark ("ms", "GB/s") */
    zb_better better;
    double tolerance;     /* compare's default */
    bool absolute;        /* tolerance and delta in the metric's unit, not % */
    /* A function of another judged metric of the same run (tokens/s and
     * MFU of step time, bandwidth of time): compare gives it its source's
     * verdict, so the two never disagree. NULL: judged on its own. */
    const char *derived_from;
    /* A derived metric has its source's role. Diagnostic: the step's
     * breakdown moves with load far more than the step time it explains
     * (a 2-rank tiny step's comm_ms varied 2x between identical runs), so
     * gating on it failed half of all same-commit pairs; a slower step shows
     * in step_time_ms, and the breakdown says why. */
    zb_metric_role role;
} zb_metric_def;

/* The definition of `key`, or NULL when the tools do not judge it. */
const zb_metric_def *zb_metric_find(const char *key);
/* The i-th definition (table order), or NULL past the end. */
const zb_metric_def *zb_metric_at(int i);
/* True for the metrics measured against a FLOP peak (mfu_pct, hfu_pct,
 * pct_peak): compare judges them only between runs with the same peak. */
bool zb_metric_against_peak(const zb_metric_def *m);
/* m's role, a derived metric's being its source's. */
zb_metric_role zb_metric_role_of(const zb_metric_def *m);
/* The judged keys joined by ", " (for "accepted: ..." messages). */
void zb_metric_names(char *out, size_t n);

/* The run's min-max spread of metric `key`, for the noise rule: the metrics
 * "<stem>_min<unit>" and "<stem>_max<unit>" where key is "<stem><unit>" and
 * unit its last "_" part (step_time_ms: step_time_min_ms, step_time_max_ms;
 * overlap_pct: overlap_min_pct). A bound the run lacks is the value itself.
 * False when the run has neither bound. */
bool zb_metric_spread(const json_t *metrics, const char *key, double value, double *lo, double *hi);

/* The run's samples of metric `key` (the numbers of the array
 * metrics.samples.<key>; anything else in it skipped), malloc'ed into
 * *out (free() it); their count. 0 and *out NULL when the run has none or
 * memory runs out (then judged as a run without samples). */
size_t zb_metric_samples(const json_t *metrics, const char *key, double **out);

/* The metric as a finite number; false when absent, null or not a number. */
bool zb_metric_value(const json_t *metrics, const char *key, double *out);

#ifdef __cplusplus
}
#endif
#endif
