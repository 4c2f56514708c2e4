/* What the step's report says beyond its tables' aggregates: each run's
 * per-rank figures and stragglers (JSON fields and `#` notes) and each
 * stage's reading (step_reading.h), from the runs' figures. */
#ifndef ZB_STEP_NOTES_H
#define ZB_STEP_NOTES_H

#include "rank_report.h"
#include "row.h"
#include "step.h"

#ifdef __cplusplus
extern "C" {
#endif

/* JSON values one run's fields point to, held until its row is added. */
typedef struct zb_step_notes_json {
    json_t *per_rank, *stragglers;
} zb_step_notes_json;

/* The run's stragglers at threshold_pct: step time, compute and overlap
 * per rank against the median rank; returns how many deviated (also past
 * cap), *n_out how many were stored. */
int zb_step_stragglers(const zb_step_stats *r, double threshold_pct, zb_straggler *out, int cap, int *n_out);

/* Fields for the run's JSON: "straggler_pct", "stragglers", "per_rank" and
 * "reading" (`reading` the stage's, kept by the caller); returns the count
 * written to f (at most 4), holding the JSON in *own. */
zb_status zb_step_notes_fields(const zb_bench_ctx *ctx, const zb_step_stats *r, const char *reading, zb_field *f,
                               int *n, zb_step_notes_json *own);
void zb_step_notes_json_free(zb_step_notes_json *own);

/* The reading of `stage` over its runs (sync and/or prefetch) into out. */
void zb_step_stage_reading(const zb_bench_ctx *ctx, const zb_step_stats *runs, int n_runs, int stage, char *out,
                           size_t n);

/* Under the tables: what the worst-rank columns are, the stragglers of
 * every run, and each stage's reading. */
void zb_step_notes_print(FILE *f, const zb_bench_ctx *ctx, const zb_step_stats *runs, int n_runs);

#ifdef __cplusplus
}
#endif
#endif
