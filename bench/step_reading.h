/* The reading under the step's table: one or two sentences built from a
 * stage's figures, saying what they mean (docs/design.md §6, "Reading").
 * Pure: the same figures always give the same text, no I/O. */
#ifndef ZB_STEP_READING_H
#define ZB_STEP_READING_H

#include <stdbool.h>
#include <stddef.h>

#include "paired.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Below this prefetch overlap (%), the reading says nothing overlapped. */
#define ZB_READING_NO_OVERLAP_PCT 1.0
/* Above this compute slowdown (%), a backend whose compute and comm share
 * cores gets the second sentence saying so. */
#define ZB_READING_SLOWDOWN_PCT 1.0

/* One schedule's figures (ms, %); NaN: not measured. sent_nothing: no
 * byte went between ranks (one rank): there was no communication to hide,
 * whatever the local copies of one-rank collectives took. */
typedef struct zb_reading_figures {
    double step_ms, overlap_pct, exposed_comm_ms, compute_ms, comm_ms;
    bool sent_nothing;
} zb_reading_figures;

/* The paired A/B of prefetch against sync (zb_step_run_paired): the step
 * time's difference (prefetch - sync, ms), the hidden % and the compute
 * slowdown (%), each a median of pairs with its 95 % interval. */
typedef struct zb_reading_pair {
    zb_paired step_diff, hidden, slowdown;
} zb_reading_pair;

/* Writes the reading of one stage into out (always NUL-terminated; at most
 * n bytes) and returns its length. sync or prefetch may be NULL (a run of
 * one schedule); with both, hidden_pct and slowdown_pct are the prefetch
 * run's (the paired medians, zb_step_run_paired; NaN when not measured). shares_cores: compute and
 * communication run on the same cores (the device backend says so). */
size_t zb_step_reading(const zb_reading_figures *sync, const zb_reading_figures *prefetch, double hidden_pct,
                       double slowdown_pct, bool shares_cores, char *out, size_t n);
/* The same where the stage ran as pairs (pair not NULL): every conclusion
 * then follows from the pairs' intervals (docs/design.md §6, "Reading"):
 * faster or slower only when the step time's interval excludes 0, else
 * that no difference is detectable at this noise, with the interval; a
 * compute slowdown only when its interval excludes 0; hidden % as it is,
 * above 100 % with what that means. */
size_t zb_step_reading_paired(const zb_reading_figures *sync, const zb_reading_figures *prefetch,
                              const zb_reading_pair *pair, bool shares_cores, char *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
