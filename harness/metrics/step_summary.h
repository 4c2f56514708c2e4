/* The step benchmark's statistics as pure functions over records
 * (docs/design.md §6, "One record per step, one gather").
 *
 * Each rank writes one row of figures per measured step (zb_step_field),
 * what it saw itself: its own step time, its trace's overlap, exposed comm,
 * compute and comm, its comm split into waiting and transfer, and the
 * step's per-collective arrival skew and transfer. The rows of every rank
 * come together in one gather at the end of a run; every summary the step
 * reports (medians over steps and ranks, each rank's own medians, the worst
 * rank, waiting vs transfer, and --mode both's paired differences, hidden %
 * and compute slowdown) is computed here from them. No MPI, no clock, no
 * I/O: tests give synthetic records with known answers.
 *
 * A NaN field is not measured (no comm traced, nothing sent, a step whose
 * ranks did not trace the same collectives): it is left out of every
 * median, never counted as 0. */
#ifndef ZB_STEP_SUMMARY_H
#define ZB_STEP_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>

#include "comm.h"
#include "paired.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One step's row, as one rank recorded it. */
typedef enum zb_step_field {
    ZB_SF_LOCAL_MS = 0,  /* this rank's own step time (host, issue to both streams done) */
    ZB_SF_OVERLAP_PCT,   /* its trace's overlap (overlap.h) */
    ZB_SF_EXPOSED_MS,    /* its exposed comm */
    ZB_SF_COMPUTE_MS,    /* |C| */
    ZB_SF_COMM_MS,       /* |M| */
    ZB_SF_WAIT_MS,       /* its collectives' wait parts (wait.h) */
    ZB_SF_TRANSFER_MS,   /* their transfer parts */
    ZB_SF_EXP_WAIT_MS,   /* of its exposed comm, waiting */
    ZB_SF_EXP_XFER_MS,   /* of its exposed comm, transfer */
    ZB_SF_LAST_PCT,      /* % of the step's collectives this rank reached last */
    ZB_SF_IDLE_MS,       /* its step time when neither stream ran an op: host time between ops */
    ZB_SF_OPS,           /* its compute and comm records in the step */
    ZB_SF_HOLD_MS,       /* the compute its collectives' starts held, a collective (comm_hold.h) */
    ZB_SF_KINDS          /* then ZB_SK_N fields per collective kind (zb_coll), zb_step_kind_field */
} zb_step_field;

/* Per collective kind, the same on every rank (from the step's arrivals). */
typedef enum zb_step_kind_field {
    ZB_SK_COUNT = 0,     /* instances of the kind in the step (0: none) */
    ZB_SK_SKEW_MS,       /* median over its instances of last arrival - first */
    ZB_SK_SKEW_MAX_MS,   /* the largest instance's */
    ZB_SK_XFER_MS,       /* median over its instances of last arrival to last completion */
    ZB_SK_XFER_MIN_MS,   /* the smallest instance's */
    ZB_SK_N
} zb_step_kind_field;

#define ZB_STEP_FIELDS (ZB_SF_KINDS + ZB_SK_N * ZB_COLL_COUNT)
#define ZB_STEP_KIND_FIELD(q, k) (ZB_SF_KINDS + (q) * ZB_SK_N + (k))

/* Every rank's rows: rank r's row of measured step s at
 * v[r * rank_stride + s * ZB_STEP_FIELDS] (rank_stride >= steps * ZB_STEP_FIELDS:
 * a rank's block may hold more than its rows). */
typedef struct zb_step_records {
    int n_ranks;
    int steps;          /* measured steps: rows per rank */
    size_t rank_stride; /* doubles from one rank's first row to the next's */
    const double *v;
} zb_step_records;

/* Rank r's field f at step s. */
double zb_step_rec(const zb_step_records *rec, int r, int s, int f);

/* Step s's time: the maximum over ranks of their own (the step ends when
 * its last rank is done); NaN when no rank has one. */
double zb_step_rec_step_ms(const zb_step_records *rec, int s);

/* Field f of every step and rank into out[r * steps + s] (rank-major, as
 * compare's samples have always been laid out). */
void zb_step_rec_column(const zb_step_records *rec, int f, double *out);

/* Each rank's own medians over its measured steps. */
typedef struct zb_step_rank_summary {
    double step_ms, overlap_pct, exposed_ms, compute_ms, comm_ms;
    double wait_ms, transfer_ms, exposed_wait_ms, exposed_transfer_ms, last_arrival_pct;
} zb_step_rank_summary;

typedef struct zb_step_kind_summary {
    int count_per_step; /* the most instances any step had (0: none of this kind) */
    double skew_ms, transfer_ms;          /* medians over steps */
    double skew_max_ms, transfer_min_ms;  /* over every instance of the run */
} zb_step_kind_summary;

typedef struct zb_step_summary {
    int steps, n_ranks;
    /* Over steps of the step time (max over ranks). */
    double step_ms, step_min_ms, step_max_ms;
    /* Medians over every step and rank; overlap's minimum too. */
    double overlap_pct, overlap_min_pct, exposed_ms, compute_ms, comm_ms;
    double idle_ms, ops; /* the step's time outside every op, and its ops */
    double hold_ms;      /* the hold at a collective's start (comm_hold.h) */
    /* Over the ranks' own medians: the lowest overlap, the highest exposed comm. */
    double overlap_worst_pct, exposed_worst_ms;
    /* Waiting vs transfer of the exposed comm, medians over steps and
     * ranks; wait_measured false when no step's collectives were matched. */
    bool wait_measured;
    double exposed_wait_ms, exposed_transfer_ms;
    zb_step_kind_summary kinds[ZB_COLL_COUNT];
} zb_step_summary;

/* The run's summary, and each rank's own medians into per_rank[0..n_ranks)
 * (may be NULL). ZB_ERR_NOMEM when scratch cannot be had; ZB_ERR_INVALID
 * for a records view that does not fit its rows. */
zb_status zb_step_summarize(const zb_step_records *rec, zb_step_summary *out, zb_step_rank_summary *per_rank);

/* --mode both: sync's and prefetch's records of the same pairs (pair i is
 * step i of each). Per pair: the step-time difference (prefetch - sync),
 * the hidden % = 100 (sync step - prefetch step) / sync's exposed comm, and
 * the compute slowdown % = 100 (prefetch compute / sync compute - 1), each
 * a median over ranks per pair where it is a per-rank figure. hidden[] and
 * slowdown[] (may be NULL) get the per-pair values; NaN where sync exposed
 * nothing measurable (nothing sent, not traced). */
typedef struct zb_step_pairs {
    int pairs;
    zb_paired step_diff_ms, hidden, slowdown;
} zb_step_pairs;

zb_status zb_step_pair(const zb_step_records *sync, const zb_step_records *prefetch, zb_step_pairs *out,
                       double *hidden, double *slowdown);

#ifdef __cplusplus
}
#endif
#endif
