/* zerobench compare: what the judging (compare_docs.c: two files;
 * compare_bases.c: several base files) hands to the formats
 * (compare_format.c), the judgement of one metric (compare_judge.c), and
 * the environment checks (compare_env.c, compare_peak.c). */
#ifndef ZB_COMPARE_H
#define ZB_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "metric_table.h"
#include "status.h"
#include "twosample.h"

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
    ZB_VERDICT_UNDETECTED, /* samples: changed beyond tolerance, but the test finds no difference */
    ZB_VERDICT_NOT_COMPARABLE_ENV, /* the files' environments differ (compare_env.c): not judged */
    ZB_VERDICT_WORSE /* a regression of a metric that does not gate (a diagnostic; --gate): shown, exit 0 */
} zb_verdict;

/* compare's exit status (docs/design.md, Regression compare). */
enum { ZB_CMP_EXIT_PASS = 0, ZB_CMP_EXIT_REGRESSION = 1, ZB_CMP_EXIT_INPUT = 2, ZB_CMP_EXIT_NOT_COMPARABLE = 3 };

/* What a row's verdict rests on. */
typedef enum zb_cmp_basis {
    ZB_BASIS_RULE = 0, /* no samples on both sides: tolerance and the min-max spread (noise) */
    ZB_BASIS_TEST,     /* both runs' samples: the two-sample test and the tolerance */
    ZB_BASIS_SOURCE,   /* a derived metric: its source metric's verdict (metric_table.h) */
    ZB_BASIS_RERUNS,   /* 3+ base runs: the prediction bound of a rerun (rerun.h) and the tolerance */
    ZB_BASIS_GROUPS    /* 2+ base and 2+ new runs: Welch's t over their figures (groups.h) and the tolerance */
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
    /* Several base files (compare_bases.c): the base runs that had the
     * metric, and the range of their figures (base is their median); 1 and
     * the base value itself otherwise. */
    size_t n_base_runs;
    double base_lo, base_hi;
    /* ZB_BASIS_RERUNS: the base runs' spread (% on the log scale, else the
     * metric's units), the one-sided 95 % bounds a rerun stays inside, the
     * smallest change caught in 95 % of runs (same units as the spread) and
     * the base runs that would bring it to the tolerance (0: no number up
     * to ZB_CMP_MAX_RUNS_NEEDED does). */
    double rerun_spread, rerun_lo, rerun_hi, detectable, alpha;
    size_t runs_needed;
    /* Several NEW files (ZB_BASIS_GROUPS): the new runs with the metric (new
     * is their median, new_lo..new_hi their range) and their spread;
     * rerun_spread is the base runs', p the one-sided p of NEW worse,
     * runs_needed counts runs per side. */
    size_t n_new_runs;
    double new_spread;
    bool gated; /* its verdict decides the exit code (zb_compare_gates) */
} zb_cmp_row;

/* The share of reruns of the base that may fail the gate (several bases):
 * split over the gate's measured metrics. */
#define ZB_CMP_GATE_ALPHA 0.05

#define ZB_CMP_MAX_RUNS_NEEDED 50

typedef struct zb_cmp_pair {
    const json_t *base_run, *new_run; /* borrowed from the loaded documents (several bases: the first) */
    char label[160];
} zb_cmp_pair;

#define ZB_CMP_MAX_ENV_LINES 16

typedef struct zb_cmp_result {
    const char *base_path, *new_path;
    unsigned ignore_env; /* set by the caller: bit i judges across env key i (zb_compare_env_key) anyway */
    zb_cmp_pair *pairs;
    size_t n_pairs;
    zb_cmp_row *rows;
    size_t n_rows;
    char **only_base, **only_new; /* labels of unmatched runs */
    size_t n_only_base, n_only_new;
    size_t n_regressions, n_noise, n_better, n_not_comparable, n_undetected;
    size_t n_not_comparable_env; /* rows not judged because the environments differ */
    size_t n_bases;              /* base files (1: the two-file form) */
    size_t n_bases_left_out;     /* of them, left out for their environment */
    size_t n_tested, n_rule; /* rows judged by the two-sample test / by today's rule (no samples) */
    size_t n_reruns;         /* rows judged by the prediction bound over 3+ base runs */
    size_t gate_family;      /* several bases: the measured metrics judged, each at ZB_CMP_GATE_ALPHA / it */
    size_t n_groups;         /* rows judged by Welch's t over base and new runs (several NEW files) */
    size_t n_worse;          /* rows worse beyond their test in a metric that does not gate */
    size_t n_news;           /* NEW files (1: one NEW run per label) */
    char new_label[256];     /* several NEW files: what new_path points to */
    /* Which metrics gate, set by the caller (--gate): gate_all, or the
     * n_gate listed, or (neither) every metric whose role is not diagnostic. */
    bool gate_all;
    const zb_metric_def *gate[64];
    int n_gate;
    char peak_note[640]; /* the first pair whose peaks differ, both named; "" none */
    /* One line per environment difference (compare_env.c), in order; more than
     * ZB_CMP_MAX_ENV_LINES are counted in n_env_more. */
    char env_lines[ZB_CMP_MAX_ENV_LINES][384];
    size_t n_env_lines, n_env_more;
    char base_label[256]; /* several bases: what base_path points to ("3 files: a.json, ...") */
} zb_cmp_result;

/* compare's exit status for a rendered result: 1 with a regression, else 3
 * when rows exist but none was judged (all not comparable or not
 * measured, at least one not comparable), else 0. */
int zb_compare_exit_code(const zb_cmp_result *r);

/* The two-sample test over the row's samples (sb: n_base_samples, sn:
 * n_new_samples) into row (basis, p, the ratio and its interval); worse_dir
 * the test's direction in the metric's terms, +1 NEW worse. */
zb_twosample zb_compare_row_test(const zb_metric_def *m, const double *sb, const double *sn, zb_cmp_row *row,
                                 int *worse_dir);

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
/* compare_env.c. Appends to r->env_lines one line per environment key
 * (backend, comm, BLAS core and library, threads, ranks per node, CPU and
 * GPU models, MPI, NCCL and CUDA versions: meta's figures) that both
 * documents record with different values, naming base_name (NULL: none)
 * and both values; returns how many of them are not in `ignore` (bit i:
 * key i is judged anyway). */
int zb_compare_env(const json_t *base_doc, const char *base_name, const json_t *new_doc, unsigned ignore,
                   zb_cmp_result *r);
/* The index of env key `name`, or -1; the names joined by ", ". */
int zb_compare_env_key(const char *name);
void zb_compare_env_names(char *out, size_t n);

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

/* compare_bases.c: NEW against n_bases base documents (names[i] names base
 * i in lines). One base: zb_compare_docs. Several: each NEW run is judged
 * against its partners in every base whose environment matches (the others
 * are left out, each named in an env line): by zb_compare_judge_bases. The
 * caller sets r->base_path (or leaves it NULL for r->base_label) and
 * r->new_path. ZB_ERR_INVALID: a file without runs, or no run in common. */
zb_status zb_compare_bases(const json_t *const *bases, const char *const *names, size_t n_bases,
                           const json_t *new_doc, const zb_cmp_tolerance *tol, int n_tol, zb_cmp_result *r);

/* Judges metric m of NEW against k base runs' metrics objects. Base is the
 * median of their figures and the change is NEW's against it. Three or
 * more base runs with the metric (ZB_BASIS_RERUNS): what a rerun may give
 * is the one-sided 1 - alpha prediction bound over their figures (rerun.h;
 * the caller's alpha: ZB_CMP_GATE_ALPHA over the gate's family); a
 * regression is worse than the bound and than the tolerance, better the
 * same on the other side, a change worse than the tolerance inside the
 * bound noise, else ok; the row carries the spread, the bounds, the
 * smallest detectable change and the base runs that would detect the
 * tolerance. Two: the base runs' range of figures, widened by the
 * tolerance on each side; worse than it is a regression when the
 * two-sample test (the base runs' samples pooled against NEW's) finds NEW
 * worse at 5 %, or, without samples, outright; beyond it with the test not
 * finding it: ZB_VERDICT_UNDETECTED; better than the widened range (and the
 * test, with samples): better; inside it, a change worse than the
 * tolerance is noise, else ok. One base run with the metric: as
 * zb_compare_judge. */
void zb_compare_judge_bases(const zb_metric_def *m, double tol, double alpha, const json_t *const *base_metrics, size_t k,
                            const json_t *new_metrics, zb_cmp_row *row);

/* "3 files: a.json, b.json, c.json" (shortened to fit cap). */
void zb_compare_files_label(const char *const *names, size_t n, char *out, size_t cap);

/* compare_groups.c: several NEW files (n_news >= 2) against n_bases >= 2
 * base documents. The runs are those of news[0]; each is matched by
 * identity in every other NEW file and every base file whose environment
 * matches NEW's (the others are left out, each named; NEW files from
 * different environments are unusable input). Each metric of each run is
 * judged by zb_compare_judge_groups at ZB_CMP_GATE_ALPHA over the gate's
 * family. The caller sets r->base_path (or NULL) and r->new_path (or
 * NULL). ZB_ERR_INVALID: fewer than two base files, a file without runs,
 * or no run in common. */
zb_status zb_compare_groups(const json_t *const *bases, const char *const *names, size_t n_bases,
                            const json_t *const *news, const char *const *new_names, size_t n_news,
                            const zb_cmp_tolerance *tol, int n_tol, zb_cmp_result *r);

/* Judges metric m of k_new NEW runs against k base runs' metrics objects:
 * with at least two figures on each side, Welch's t over them (groups.h;
 * log scale for a relative metric): a regression is worse than the
 * tolerance (NEW's median against BASE's) with the test's one-sided p
 * below alpha, better the same the other way, a change beyond the
 * tolerance the test does not support no difference detectable, else ok.
 * With fewer: zb_compare_judge_bases with NEW's first run that has it. */
void zb_compare_judge_groups(const zb_metric_def *m, double tol, double alpha, const json_t *const *base_metrics,
                             size_t k, const json_t *const *new_metrics, size_t k_new, zb_cmp_row *row);

/* Shared by the two judgements (compare_judge.c): the tolerance of m (the last
 * --tolerance given, else the default); a derived metric's row takes the
 * verdict of its source among rows[0..n); a row counted into r's totals. */
double zb_compare_tolerance_of(const zb_cmp_tolerance *tol, int n_tol, const zb_metric_def *m);
void zb_compare_follow_source(const zb_cmp_row *rows, size_t n, zb_cmp_row *row);
void zb_compare_count(zb_cmp_result *r, zb_cmp_row *row);
/* Whether m's verdicts decide the exit code under r's --gate (a derived
 * metric: its source's). A regression of one that does not is counted
 * ZB_VERDICT_WORSE by zb_compare_count. */
bool zb_compare_gates(const zb_cmp_result *r, const zb_metric_def *m);
/* The gate's family (several bases or NEW files): whether m, present in a
 * judged NEW run, counts in it: gated, measured (not derived), not exact. */
bool zb_compare_in_family(const zb_cmp_result *r, const zb_metric_def *m);
/* A judged row of a pair whose environments (other_env) or, for MFU, HFU
 * and % of peak, peaks differ becomes not comparable. */
void zb_compare_not_comparable(zb_cmp_row *row, bool other_env, bool other_peak);
/* The pair's label: its base run's, with which side was simulated. */
void zb_compare_pair_label(zb_cmp_pair *p);
/* The change of NEW's figure n against base b into row->delta (% or
 * absolute, as m says; delta_finite false for a change from 0). */
void zb_compare_delta(const zb_metric_def *m, double b, double n, zb_cmp_row *row);
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
