/* Per-rank figures in the report, shared by the step and the collectives:
 * where each rank ran (host, node), a run's per-rank figures as its JSON
 * "per_rank" array, its stragglers (harness/metrics/stragglers.h) as the
 * "stragglers" array, and the `#` notes naming them under a table
 * (docs/design.md §6 and §7). */
#ifndef ZB_RANK_REPORT_H
#define ZB_RANK_REPORT_H

#include <stdio.h>

#include <jansson.h>

#include "bench.h"
#include "stragglers.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_RANK_HOST_BYTES 64
/* Stragglers a run keeps in its JSON; past this they are counted only. */
#define ZB_RUN_STRAGGLERS_MAX 64
/* Straggler note lines under one table; past this, one line says how many more. */
#define ZB_STRAGGLER_NOTES_MAX 16

typedef struct zb_rank_place {
    int node;
    char host[ZB_RANK_HOST_BYTES];
} zb_rank_place;

/* Collective: every rank gets every rank's host and node (a bounded
 * all-gather), in *out (n_ranks entries, free()). */
zb_status zb_rank_places_gather(const zb_bench_ctx *ctx, zb_rank_place **out);

/* One run's figures per rank: n_figs named figures, vals[r * n_figs + k]
 * the figure keys[k] of rank r (NaN: JSON null). */
typedef struct zb_rank_figs {
    int n_ranks, n_figs;
    const char *const *keys;
    const double *vals;
    const zb_rank_place *places;
} zb_rank_figs;

/* [{"rank": r, "host": .., "node": .., keys[k]: vals..}, ...] in rank
 * order; NULL when out of memory. */
json_t *zb_rank_figs_json(const zb_rank_figs *f);

/* [{"rank", "host", "node", "metric", "value", "median", "deviation_pct"}]
 * ([] when n is 0); NULL when out of memory. */
json_t *zb_stragglers_json(const zb_straggler *s, int n, const zb_rank_place *places);

/* The straggler notes of one table: lines collected while rows are added,
 * printed under the table. */
typedef struct zb_straggler_notes {
    double threshold_pct;
    int n_lines, n_more, n_runs_checked;
    char lines[ZB_STRAGGLER_NOTES_MAX][256];
} zb_straggler_notes;

void zb_straggler_notes_init(zb_straggler_notes *notes, double threshold_pct);
/* Adds one line per straggler of the run `what` names ("stage 3 sync"). */
void zb_straggler_notes_add(zb_straggler_notes *notes, const char *what, const zb_straggler *s, int n,
                            const zb_rank_place *places);
/* The lines, or one line saying no rank deviated; `checked` names what was
 * compared ("step time, compute time or overlap"), `in_points` those of
 * them that are percentages ("overlap"; NULL: none). Nothing for a 1-rank
 * job. */
void zb_straggler_notes_print(const zb_straggler_notes *notes, FILE *f, int n_ranks, const char *checked,
                              const char *in_points);

#ifdef __cplusplus
}
#endif
#endif
