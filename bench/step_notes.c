/* The step's per-rank JSON fields, straggler notes and readings
 * (step_notes.h). */
#include "step_notes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "step_reading.h"

#define READING_BYTES 1024

static const char *mode_name(zb_step_mode m) { return m == ZB_MODE_SYNC ? "sync" : "prefetch"; }

/* The figures stragglers are judged on: how long a rank's step took, how
 * long its own compute took (a slow device shows there: in a synchronous
 * step every rank waits for it, so step times agree), and its overlap. */
static const struct {
    int fig;
    zb_deviation how;
    zb_worse worse;
} judged[] = {
    {ZB_STEP_RANK_STEP, ZB_DEVIATION_RELATIVE, ZB_WORSE_HIGHER},
    {ZB_STEP_RANK_COMPUTE, ZB_DEVIATION_RELATIVE, ZB_WORSE_HIGHER},
    {ZB_STEP_RANK_OVERLAP, ZB_DEVIATION_POINTS, ZB_WORSE_LOWER},
};
#define N_JUDGED (sizeof judged / sizeof judged[0])

int zb_step_stragglers(const zb_step_stats *r, double threshold_pct, zb_straggler *out, int cap, int *n_out) {
    *n_out = 0;
    if (!r->per_rank || r->n_ranks < 2) return 0;
    double col[ZB_RUN_STRAGGLERS_MAX];
    double *v = r->n_ranks <= ZB_RUN_STRAGGLERS_MAX ? col : (double *)malloc(sizeof(double) * (size_t)r->n_ranks);
    if (!v) return 0; /* out of memory: none named rather than wrong ones */
    int found = 0;
    for (size_t j = 0; j < N_JUDGED; j++) {
        for (int q = 0; q < r->n_ranks; q++) v[q] = r->per_rank[(size_t)q * ZB_STEP_RANK_FIGS + (size_t)judged[j].fig];
        found += zb_stragglers_find(zb_step_rank_keys[judged[j].fig], v, r->n_ranks, judged[j].how, judged[j].worse, threshold_pct,
                                    out, cap, n_out);
    }
    if (v != col) free(v);
    return found;
}

zb_status zb_step_notes_fields(const zb_bench_ctx *ctx, const zb_step_stats *r, const char *reading, zb_field *f,
                               int *n, zb_step_notes_json *own) {
    const zb_rank_place *places = r->places;
    own->per_rank = own->stragglers = NULL;
    zb_straggler s[ZB_RUN_STRAGGLERS_MAX];
    int n_s = 0;
    zb_step_stragglers(r, ctx->cfg->straggler_pct, s, ZB_RUN_STRAGGLERS_MAX, &n_s);
    zb_rank_figs figs = {r->n_ranks, ZB_STEP_RANK_FIGS, zb_step_rank_keys, r->per_rank, places};
    own->per_rank = r->per_rank ? zb_rank_figs_json(&figs) : json_array();
    own->stragglers = zb_stragglers_json(s, n_s, places);
    if (!own->per_rank || !own->stragglers) {
        zb_step_notes_json_free(own);
        return ZB_FAIL(ZB_ERR_NOMEM, "out of memory for the step's per-rank figures");
    }
    int k = 0;
    f[k++] = (zb_field){.key = "straggler_pct", .kind = ZB_FIELD_REAL, .d = ctx->cfg->straggler_pct};
    f[k++] = (zb_field){.key = "stragglers", .kind = ZB_FIELD_JSON, .j = own->stragglers};
    f[k++] = (zb_field){.key = "per_rank", .kind = ZB_FIELD_JSON, .j = own->per_rank};
    if (reading && reading[0]) f[k++] = (zb_field){.key = "reading", .kind = ZB_FIELD_TEXT, .s = reading};
    *n = k;
    return ZB_OK;
}

void zb_step_notes_json_free(zb_step_notes_json *own) {
    json_decref(own->per_rank);
    json_decref(own->stragglers);
    own->per_rank = own->stragglers = NULL;
}

static zb_reading_figures figures_of(const zb_step_stats *r) {
    zb_reading_figures g = {r->step_ms, r->overlap_pct, r->exposed_comm_ms, r->compute_ms, r->comm_ms,
                            r->comm_bytes_per_step == 0};
    return g;
}

void zb_step_stage_reading(const zb_bench_ctx *ctx, const zb_step_stats *runs, int n_runs, int stage, char *out,
                           size_t n) {
    const zb_step_stats *sync = NULL, *pre = NULL;
    for (int i = 0; i < n_runs; i++) {
        if (runs[i].stage != stage) continue;
        if (runs[i].mode == ZB_MODE_SYNC) sync = &runs[i];
        else pre = &runs[i];
    }
    zb_reading_figures fs, fp;
    if (sync) fs = figures_of(sync);
    if (pre) fp = figures_of(pre);
    bool shares = ctx->backends.device && ctx->backends.device->compute_shares_cores;
    /* --mode both: the pairs decide, except on the sim, whose virtual time
     * has no noise to test against (every pair is the same). */
    if (sync && pre && pre->paired && !ctx->simulated) {
        zb_reading_pair pair = {pre->step_diff_ms, pre->hidden, pre->slowdown};
        zb_step_reading_paired(&fs, &fp, &pair, shares, out, n);
        return;
    }
    zb_step_reading(sync ? &fs : NULL, pre ? &fp : NULL, pre ? pre->hidden_pct : NAN,
                    pre ? pre->compute_slowdown_pct : NAN, shares, out, n);
}

void zb_step_notes_print(FILE *f, const zb_bench_ctx *ctx, const zb_step_stats *runs, int n_runs) {
    int n_ranks = ctx->topo.n_ranks;
    if (n_ranks > 1) {
        fprintf(f, "# worst: the worst rank's figure (lowest overlap, highest exposed comm), each rank's median "
                   "over the measured steps; per-rank figures in the JSON (per_rank)\n");
        zb_straggler_notes notes;
        zb_straggler_notes_init(&notes, ctx->cfg->straggler_pct);
        for (int i = 0; i < n_runs; i++) {
            zb_straggler s[ZB_RUN_STRAGGLERS_MAX];
            int n_s = 0;
            zb_step_stragglers(&runs[i], ctx->cfg->straggler_pct, s, ZB_RUN_STRAGGLERS_MAX, &n_s);
            char what[48];
            snprintf(what, sizeof what, "stage %d %s", runs[i].stage, mode_name(runs[i].mode));
            zb_straggler_notes_add(&notes, what, s, n_s, runs[i].places);
        }
        zb_straggler_notes_print(&notes, f, n_ranks, "step time, compute time or overlap", "overlap");
    }
    for (int i = 0; i < n_runs; i++) {
        if (i > 0 && runs[i].stage == runs[i - 1].stage) continue; /* one reading per stage */
        char reading[READING_BYTES];
        zb_step_stage_reading(ctx, runs, n_runs, runs[i].stage, reading, sizeof reading);
        if (reading[0]) fprintf(f, "# reading, stage %d: %s\n", runs[i].stage, reading);
    }
}
