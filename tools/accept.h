/* zerobench accept: the acceptance profile (accept_profile.c), the judging
 * of benchmark results against its checks (accept_judge.c, pure: the tests
 * feed it synthetic results), running the checks (accept.c) and the reports
 * (accept_report.c: the printed lines, JUnit XML, JSON).
 *
 * A profile (profiles/accept/NAME.json) is
 *   {"name": ..., "description": ..., "args": [flags for every run],
 *    "timeout_s": default per run, "checks": [CHECK, ...]}
 * and a check one of
 *   {"kind": "devices", "backend": "cuda", "per_node": 8}
 *   {"kind": "metric", "bench": "allgather", "args": [...], "metric": "busbw_gbps",
 *    "min" | "max": THRESHOLD, "where": {identity key: value}, "min_size_bytes": N}
 *   {"kind": "straggler", "bench": "step", "args": [...], "by": "rank" | "node",
 *    "max_deviation_pct": THRESHOLD, "per_rank_metric": "compute_ms", "where": ...}
 * each with "name" and "source" (where the reference comes from and why the
 * fraction), and optionally "repeat" (runs, default 1), "judge" ("best" or
 * "median" of the repeats, default best) and "timeout_s". A THRESHOLD is
 *   {"reference": 9.4, "unit": "GB/s", "fraction": 0.5}
 * a measured or published figure in the metric's unit ("%" for a
 * deviation) and the fraction of it judged: fraction x reference, never a
 * typed number, so every threshold says what it is a fraction of. A
 * minimum's fraction is in (0, 1], a maximum's at least 1. docs/design.md §7
 * has the rules. */
#ifndef ZB_ACCEPT_H
#define ZB_ACCEPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "metric_table.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_ACCEPT_MAX_REPEAT 20
#define ZB_ACCEPT_MAX_ARGS 48

typedef enum zb_check_kind { ZB_CHECK_DEVICES = 0, ZB_CHECK_METRIC, ZB_CHECK_STRAGGLER } zb_check_kind;
typedef enum zb_judge { ZB_JUDGE_BEST = 0, ZB_JUDGE_MEDIAN } zb_judge;

typedef struct zb_accept_check {
    const char *name, *source;     /* borrowed from the profile document */
    zb_check_kind kind;
    const char *bench;             /* metric, straggler */
    const char *args[ZB_ACCEPT_MAX_ARGS];
    int n_args;
    const char *metric;            /* metric: the judged key; straggler: the per-rank key */
    const zb_metric_def *def;      /* metric: its unit */
    bool is_min;                   /* metric: value >= threshold (else <=) */
    double reference, fraction;    /* metric, straggler: the threshold's figure and share of it */
    const char *unit;              /* the reference's: the metric's unit, "%" for a straggler */
    double threshold;              /* fraction x reference: metric min or max; straggler max deviation % */
    bool by_node;                  /* straggler */
    const char *backend;           /* devices */
    int per_node;                  /* devices */
    const json_t *where;           /* identity keys a judged run must have, or NULL */
    int64_t min_size_bytes;        /* judged runs' size_bytes at least this (0: any) */
    int repeat;
    zb_judge judge;
    double timeout_s;
} zb_accept_check;

typedef struct zb_accept_profile {
    json_t *doc;                   /* owns every borrowed string */
    char path[512], name[128];
    const char *description;
    const char *args[ZB_ACCEPT_MAX_ARGS];
    int n_args;
    zb_accept_check *checks;
    size_t n_checks;
} zb_accept_profile;

/* Loads and validates a profile: a name (profiles/accept/NAME.json) or a
 * path. Bad input: ZB_ERR_INVALID, one line naming the file and the field. */
zb_status zb_accept_profile_load(const char *name_or_path, zb_accept_profile *out);
/* The same from JSON text (pure: no file access); `filename` names it in
 * messages (NULL: "<profile>"). */
zb_status zb_accept_profile_parse(const char *text, size_t len, const char *filename, zb_accept_profile *out);
void zb_accept_profile_free(zb_accept_profile *p);

typedef enum zb_check_verdict { ZB_CHECK_PASS = 0, ZB_CHECK_FAIL, ZB_CHECK_SKIP } zb_check_verdict;

typedef struct zb_check_outcome {
    zb_check_verdict verdict;
    bool have_value;
    double value;                  /* the judged figure (after best/median) */
    double values[ZB_ACCEPT_MAX_REPEAT]; /* per repeat (for the worst judged run) */
    int n_values;
    char where[200];               /* the run the value belongs to */
    char reason[600];              /* why it failed or was skipped; "" on a pass */
    char culprits[400];            /* the ranks or nodes that failed, "" if none */
    json_t *culprit_list;          /* [{"rank"|"node", "host", "value", "deviation_pct"}], or NULL */
    double seconds;                /* wall time of the check */
} zb_check_outcome;

void zb_check_outcome_clear(zb_check_outcome *o);

/* The margin of `value` against check c's threshold, in % of the threshold:
 * 100 (value / threshold - 1) for a minimum, 100 (1 - value / threshold) for
 * a maximum (a straggler's deviation too). Negative: the check failed. */
double zb_accept_margin_pct(const zb_accept_check *c, double value);

/* Judges a metric or straggler check over the results documents of its
 * repeats (docs[0..n_docs-1], zerobench/1). Pure. */
void zb_accept_judge(const zb_accept_check *c, json_t *const *docs, int n_docs, zb_check_outcome *out);

/* The devices check, on this machine (the registry's count_devices). */
void zb_accept_devices(const zb_accept_check *c, zb_check_outcome *out);

/* The printed line(s) of one outcome, JUnit XML and JSON of all of them. */
void zb_accept_describe(const zb_accept_check *c, const zb_check_outcome *o, char *out, size_t n);
zb_status zb_accept_write_junit(const zb_accept_profile *p, const zb_accept_check *const *order,
                                const zb_check_outcome *o, size_t n, const char *path);
zb_status zb_accept_write_json(const zb_accept_profile *p, const zb_accept_check *const *order,
                               const zb_check_outcome *o, size_t n, const char *path);

#ifdef __cplusplus
}
#endif
#endif
