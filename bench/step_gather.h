/* The step's records and its one gather (docs/design.md §6, "One record
 * per step, one gather"): while a run goes on each rank writes one row per
 * measured step into its own block (harness/metrics/step_summary.h's
 * fields), with a head of what the run adds up (the tracer's losses, the
 * harness trace's dropped records) and where the rank ran. At the end one
 * bounded gather brings every rank's block to rank 0, and each schedule's
 * zb_step_stats is filled from the pure summaries of the records. Rank 0
 * holds every rank's figures; another rank's stats are of its own block
 * only (n_ranks 1: nothing is reported from there). */
#ifndef ZB_STEP_GATHER_H
#define ZB_STEP_GATHER_H

#include "rank_report.h"
#include "step.h"
#include "step_summary.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a rank adds up over a run, summed over ranks at the end. */
enum { ZB_TOT_TRACER_RAN, ZB_TOT_DROPPED, ZB_TOT_ZERO_TS, ZB_TOT_INVERTED, ZB_TOT_BUF_ERRORS,
       ZB_TOT_HARNESS_DROPPED, ZB_STEP_TOTALS };

typedef struct zb_step_head {
    zb_rank_place place;
    uint64_t totals[ZB_STEP_TOTALS];
    char tracer_note[ZB_TRACER_NOTE_MAX]; /* this rank's (the report names rank 0's) */
} zb_step_head;

/* This rank's block: the head, then n_sched schedules of `cap` rows. */
typedef struct zb_step_block {
    unsigned char *bytes;
    size_t rows_at, bytes_len; /* offset of the first row; the whole block */
    int cap, n_sched;
} zb_step_block;

/* Every row NaN (not measured until a step writes it); ZB_ERR_NOMEM. */
zb_status zb_step_block_init(zb_step_block *b, int cap, int n_sched);
void zb_step_block_free(zb_step_block *b);
zb_step_head *zb_step_block_head(zb_step_block *b);
/* Schedule `sched`'s row of measured step s. */
double *zb_step_block_row(zb_step_block *b, int sched, int s);

/* Collective, the run's only statistics collective: gathers the blocks to
 * rank 0 and fills outs[0..n_sched) (their first `steps` rows each) from
 * the summaries: figures, samples, per-rank figures, worst rank, waiting
 * vs transfer, tracer losses; with two schedules (sync, prefetch) the
 * paired statistics go into outs[1]. `ran` says the device tracer ran on
 * this rank (tracer name and note from `tracer_name`). */
zb_status zb_step_block_finish(zb_bench_ctx *ctx, const zb_step_plan *plan, zb_step_block *b, int steps,
                               const char *tracer_name, zb_step_stats *const *outs);

#ifdef __cplusplus
}
#endif
#endif
