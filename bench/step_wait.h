/* Waiting told apart from transfer in the step (docs/design.md §6): per
 * measured step, every collective's arrivals on all ranks (the start of its
 * record, clocks aligned by clock_sync), its arrival skew (last arrival -
 * first) and transfer (last arrival to the last rank's completion), and each
 * rank's comm split into wait and transfer parts (harness/metrics/wait.h),
 * exposed or hidden behind compute, into the step's row. Summaries
 * (harness/metrics/step_summary.h): the exposed wait and exposed transfer
 * (median over steps and ranks, as exposed comm), per collective kind
 * (median per instance, median over steps), and per rank (median over
 * steps of the rank's own values). */
#ifndef ZB_STEP_WAIT_H
#define ZB_STEP_WAIT_H

#include <stdbool.h>
#include <stdio.h>

#include "comm.h"
#include "engine.h"
#include "report.h"
#include "step_summary.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

struct zb_bench_ctx;

typedef struct zb_wait_kind {
    int count_per_step;          /* instances in a step (0: none of this kind) */
    double arrival_skew_ms;      /* median over a step's instances, median over steps */
    double arrival_skew_max_ms;  /* the largest single instance's */
    double transfer_ms;          /* median over a step's instances, median over steps */
    double transfer_min_ms;      /* the smallest single instance's: the collective when nothing got in its way */
} zb_wait_kind;

typedef struct zb_wait_rank {
    double wait_ms, transfer_ms;                 /* the rank's collectives' parts, per step */
    double exposed_wait_ms, exposed_transfer_ms; /* of its exposed comm, per step */
    double last_arrival_pct;                     /* of the step's collectives it reached last */
} zb_wait_rank;

typedef struct zb_step_wait_stats {
    bool measured; /* false: no collective traced (JSON null) */
    double exposed_wait_ms, exposed_transfer_ms; /* median over steps and ranks */
    zb_wait_kind kinds[ZB_COLL_COUNT];
    zb_wait_rank *per_rank; /* [n_ranks], malloc'ed: zb_step_wait_free */
    int n_ranks;
} zb_step_wait_stats;

/* Measures one step (collective: every rank, every measured step) from
 * this rank's records [first_record, ...) in the step's window: the
 * collectives' arrivals are gathered (each rank's clock reading of the same
 * instance is needed while its records exist), and this rank's wait split
 * and the per-kind skew and transfer go into its step row (step_summary.h;
 * left NaN when the ranks did not trace the same collectives). */
zb_status zb_step_wait_measure(struct zb_bench_ctx *ctx, size_t first_record, const zb_step_result *r, double *row);

/* The run's wait statistics from its summary (pure): per kind, the
 * aggregate and each rank's (per_rank: [sum->n_ranks], may be NULL). */
zb_status zb_step_wait_take(const zb_step_summary *sum, const zb_step_rank_summary *per_rank, zb_step_wait_stats *out);
void zb_step_wait_free(zb_step_wait_stats *s);

/* The table's notes for one run (rank 0): each collective kind's arrival
 * skew and transfer, and the rank that reached most collectives last. */
void zb_step_wait_print(FILE *f, int stage, const char *mode, const zb_step_wait_stats *s);

/* The summary's JSON, into `run` (the step's JSON run): metrics.by_collective
 * {kind: {count_per_step, arrival_skew_ms, arrival_skew_max_ms, transfer_ms,
 * transfer_min_ms}} and, in each entry of the run's per_rank array (the
 * per-rank figures; an entry added for a rank without one), wait_ms,
 * transfer_ms, exposed_wait_ms, exposed_transfer_ms, last_arrival_pct. */
void zb_step_wait_json(const zb_step_wait_stats *s, json_t *run);

/* Declares metrics.by_collective's CSV columns for every collective a step
 * may issue (all-gather, reduce-scatter, all-reduce), so that the CSV of a
 * stage, rank count or backend that issues fewer has them all the same
 * (report.h, zb_report_csv_declare). */
zb_status zb_step_wait_csv_columns(zb_report *report);

#ifdef __cplusplus
}
#endif
#endif
