/* The step's per-rank figures' keys and the stats' release (step.h); the
 * figures themselves come from the records' summary (step_gather.c). */
#include <stdlib.h>

#include "rank_report.h"
#include "step.h"

const char *const zb_step_rank_keys[ZB_STEP_RANK_FIGS] = {"step_time_ms", "overlap_pct", "exposed_comm_ms",
                                                          "compute_ms", "comm_ms"};

void zb_step_stats_release(zb_step_stats *s) {
    free(s->per_rank);
    free(s->places);
    s->per_rank = NULL;
    s->places = NULL;
    s->n_ranks = 0;
    zb_step_wait_free(&s->wait);
}
