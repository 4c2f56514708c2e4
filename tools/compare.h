/* zerobench compare: what the judging (compare.c) hands to the formats
 * (compare_format.c), and the judgement of one metric of a pair of runs. */
#ifndef ZB_COMPARE_H
#define ZB_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "metric_table.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum zb_verdict {
    ZB_VERDICT_OK = 0,     /* within tolerance */
    ZB_VERDICT_BETTER,     /* improved beyond tolerance */
    ZB_VERDICT_REGRESSION, /* worse beyond tolerance and outside the spread */
    ZB_VERDICT_NOISE,      /* worse beyond tolerance, inside a run's min-max spread */
    ZB_VERDICT_NOT_MEASURED, /* null or absent in one of the runs: not judged */
    ZB_VERDICT_NOT_COMPARABLE, /* against the peak (MFU, % of peak), the runs' peaks differ: not judged */
    ZB_VERDICT_UNDETECTED  /* samples: changed beyond tolerance, but the test finds no difference */
} zb_verdict;

/* What a row's verdict rests on. */
typedef enum zb_cmp_basis {
    ZB_BASIS_RULE = 0, /* no samples on both sides: tolerance and the min-max spread (noise) */
    ZB_BASIS_TEST,     /* both runs' samples: the two-sample test and the tolerance */
    ZB_BASIS_SOURCE    /* a derived metric: its source metric's verdict (metric_table.h) */
} zb_cmp_basis;

const char *zb_verdict_name(zb_verdict v);

typedef struct zb_cmp_row {
    size_t pair;               /* index into zb_cmp_result.pairs */
    const zb_metric_def *m;
    double base, new_value;
    bool have_base, have_new;
    double delta;              /* % of |base|, or the difference when m->absolute */
    bool delta_finite;         /* false when base is 0 and new is not (relative) */
    double tolerance;
    double new_lo, new_hi;     /* new's spread (the value itself without one) */
    bool new_has_spread;
    zb_verdict verdict;
    zb_cmp_basis basis;
    /* ZB_BASIS_TEST: the samples each side had, the test's two-sided p
     * and NEW/BASE's ratio with its 95 % interval (twosample.h). */
    size_t n_base_samples, n_new_samples;
    double p, ratio, ratio_lo, ratio_hi;
} zb_cmp_row;

typedef struct zb_cmp_pair {
    const json_t *base_run, *new_run; /* borrowed from the loaded documents */
    char label[160];
} zb_cmp_pair;

typedef struct zb_cmp_result {
    const char *base_path, *new_path;
    zb_cmp_pair *pairs;
    size_t n_pairs;
    zb_cmp_row *rows;
    size_t n_rows;
    char **only_base, **only_new; /* labels of unmatched runs */
    size_t n_only_base, n_only_new;
    size_t n_regressions, n_noise, n_better, n_not_comparable, n_undetected;
    size_t n_tested, n_rule; /* rows judged by the two-sample test / by today's rule (no samples) */
    char peak_note[640]; /* the first pair whose peaks differ, both named; "" none */
    char blas_note[192]; /* the BLAS cores, when they differ; "" none */
} zb_cmp_result;

/* Judges metric m of one pair of runs' metrics objects with tolerance `tol`
 * (relative % or absolute, as m says); the change is that of the runs'
 * figures. When both runs carry at least ZB_TWOSAMPLE_MIN_N samples of m
 * (metrics.samples.<key>), the two-sample test decides: REGRESSION
 * (better) only when the test finds NEW worse (better) at 5 % and the
 * change is beyond the tolerance; a change beyond the tolerance the test
 * does not support is ZB_VERDICT_UNDETECTED; within the tolerance, ok.
 * Without samples, the noise rule: a change worse than the tolerance is
 * noise, not a regression, when the new value lies inside the base run's
 * min-max spread or the base value inside the new run's. A derived
 * metric's verdict is set by zb_compare_docs from its source's row. */
void zb_compare_judge(const zb_metric_def *m, double tol, const json_t *base_metrics,
                      const json_t *new_metrics, zb_cmp_row *row);

/* compare_peak.c. True when the two runs were measured against different
 * peaks (meta.peak's figure or basis, else the runs' peak_source), with a
 * line naming both into `line`; false (line "") when equal or unknown. */
bool zb_compare_peaks_differ(const json_t *base_doc, const json_t *base_run, const json_t *new_doc,
                             const json_t *new_run, char *line, size_t n);
/* A line naming the two documents' BLAS cores (meta.blas_core.ran) when
 * they differ, else "". */
void zb_compare_blas_cores(const json_t *base_doc, const json_t *new_doc, char *line, size_t n);

/* A metric's tolerance given on the command line (--tolerance KEY=X). */
typedef struct zb_cmp_tolerance {
    const zb_metric_def *m;
    double value;
} zb_cmp_tolerance;

/* Pairs the runs of two loaded results documents (zb_results_load's
 * checks passed) and judges each pair's metrics into *r, whose base_path
 * and new_path the caller sets (messages name them) and whose other fields
 * start zeroed; `tol` (n_tol entries, the last for a metric winning)
 * overrides the default tolerances. ZB_ERR_INVALID: a file without runs,
 * or no run in common; ZB_ERR_NOMEM. Free *r with zb_compare_result_free
 * whatever the return. */
zb_status zb_compare_docs(const json_t *base, const json_t *new_doc, const zb_cmp_tolerance *tol, int n_tol,
                          zb_cmp_result *r);
void zb_compare_result_free(zb_cmp_result *r);

typedef enum zb_cmp_format { ZB_CMP_TEXT = 0, ZB_CMP_MARKDOWN, ZB_CMP_GITHUB } zb_cmp_format;

/* The result in `format` as a malloc'ed string (*out, free() it). For
 * ZB_CMP_GITHUB, `bigger` selects the direction written (the action's
 * customBiggerIsBetter or customSmallerIsBetter: one direction per file). */
zb_status zb_compare_render(const zb_cmp_result *r, zb_cmp_format format, bool bigger, char **out);

#ifdef __cplusplus
}
#endif
#endif
