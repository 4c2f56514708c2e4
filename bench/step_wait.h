/* Waiting told apart from transfer in the step (docs/design.md §6): per
 * measured step, every collective's arrivals on all ranks (the start of its
 * record, clocks aligned by clock_sync), its arrival skew (last arrival -
 * first) and transfer (last arrival to the last rank's completion), and each
 * rank's comm split into wait and transfer parts (harness/metrics/wait.h),
 * exposed or hidden behind compute. Summaries: the exposed wait and exposed
 * transfer (median over steps and ranks, as exposed comm), per collective
 * kind (mean per instance, median over steps), and per rank (median over
 * steps of the rank's own values). */
#ifndef ZB_STEP_WAIT_H
#define ZB_STEP_WAIT_H

#include <stdbool.h>
#include <stdio.h>

#include "comm.h"
#include "engine.h"
#include "report.h"
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

/* Per-step values while a run goes on. */
typedef struct zb_step_wait_acc {
    int steps;                              /* each array's length */
    int used;                               /* steps measured into them (<= steps; init: steps) */
    double *block;                          /* one allocation for all arrays below */
    double *exp_wait, *exp_xfer, *wait, *xfer, *last_pct; /* [steps] this rank */
    double *skew[ZB_COLL_COUNT], *transfer[ZB_COLL_COUNT]; /* [steps] per kind, the same on every rank */
    double skew_max[ZB_COLL_COUNT], transfer_min[ZB_COLL_COUNT];
    int count[ZB_COLL_COUNT];
} zb_step_wait_acc;

zb_status zb_step_wait_init(zb_step_wait_acc *a, int steps);
void zb_step_wait_acc_free(zb_step_wait_acc *a);

/* Measures measured step m (collective: every rank, every step) from this
 * rank's records [first_record, ...) in the step's window. */
zb_status zb_step_wait_measure(struct zb_bench_ctx *ctx, size_t first_record, const zb_step_result *r,
                               zb_step_wait_acc *a, int m);

/* The run's summary (collective). */
zb_status zb_step_wait_summarize(struct zb_bench_ctx *ctx, zb_step_wait_acc *a, zb_step_wait_stats *out);
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

#ifdef __cplusplus
}
#endif
#endif
