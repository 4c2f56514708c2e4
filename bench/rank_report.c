/* Per-rank figures, stragglers and their notes (rank_report.h). */
#include "rank_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "mpi_wait.h"

zb_status zb_rank_places_gather(const zb_bench_ctx *ctx, zb_rank_place **out) {
    int n = ctx->topo.n_ranks;
    *out = NULL;
    zb_rank_place mine;
    memset(&mine, 0, sizeof mine);
    mine.node = ctx->topo.node;
    snprintf(mine.host, sizeof mine.host, "%s", ctx->topo.hostname);
    zb_rank_place *all = (zb_rank_place *)calloc((size_t)n, sizeof *all);
    /* Not agreed on: this rank's failure ends the job (main aborts). */
    if (!all) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory gathering %d ranks' hosts", n);
    ZB_TRY(zb_mpi_allgather_bounded(&mine, all, (int)sizeof mine, MPI_BYTE, MPI_COMM_WORLD,
                                    "gathering the ranks' hosts and nodes", ctx->cfg->timeout_s));
    for (int r = 0; r < n; r++) all[r].host[ZB_RANK_HOST_BYTES - 1] = '\0';
    *out = all;
    return ZB_OK;
}

/* {"rank", "host", "node"}: how every per-rank entry starts. */
static json_t *rank_object(int r, const zb_rank_place *places) {
    json_t *o = json_object();
    if (!o) return NULL;
    json_object_set_new(o, "rank", json_integer(r));
    json_object_set_new(o, "host", json_string(places ? places[r].host : ""));
    json_object_set_new(o, "node", json_integer(places ? places[r].node : 0));
    return o;
}

json_t *zb_rank_figs_json(const zb_rank_figs *f) {
    json_t *a = json_array();
    for (int r = 0; a && r < f->n_ranks; r++) {
        json_t *o = rank_object(r, f->places);
        for (int k = 0; o && k < f->n_figs; k++) {
            json_object_set_new(o, f->keys[k], zb_json_real_or_null(f->vals[(size_t)r * (size_t)f->n_figs + (size_t)k]));
        }
        if (!o || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *zb_stragglers_json(const zb_straggler *s, int n, const zb_rank_place *places) {
    json_t *a = json_array();
    for (int i = 0; a && i < n; i++) {
        json_t *o = rank_object(s[i].rank, places);
        if (o) {
            json_object_set_new(o, "metric", json_string(s[i].metric));
            json_object_set_new(o, "value", zb_json_real_or_null(s[i].value));
            json_object_set_new(o, "median", zb_json_real_or_null(s[i].median));
            json_object_set_new(o, "deviation_pct", zb_json_real_or_null(s[i].deviation_pct));
        }
        if (!o || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

void zb_straggler_notes_init(zb_straggler_notes *notes, double threshold_pct) {
    memset(notes, 0, sizeof *notes);
    notes->threshold_pct = threshold_pct;
}

/* Percentages deviate in points, times relatively (stragglers.h). */
static bool in_points(const char *metric) {
    size_t n = strlen(metric);
    return n > 4 && !strcmp(metric + n - 4, "_pct");
}

void zb_straggler_notes_add(zb_straggler_notes *notes, const char *what, const zb_straggler *s, int n,
                            const zb_rank_place *places) {
    notes->n_runs_checked++;
    for (int i = 0; i < n; i++) {
        if (notes->n_lines == ZB_STRAGGLER_NOTES_MAX) {
            notes->n_more++;
            continue;
        }
        const zb_straggler *x = &s[i];
        snprintf(notes->lines[notes->n_lines++], sizeof notes->lines[0],
                 "# straggler, %s: rank %d on %s (node %d): %s %.3f vs median %.3f (%+.1f %s)", what, x->rank,
                 places ? places[x->rank].host : "?", places ? places[x->rank].node : 0, x->metric, x->value,
                 x->median, x->deviation_pct, in_points(x->metric) ? "points" : "%");
    }
}

void zb_straggler_notes_print(const zb_straggler_notes *notes, FILE *f, int n_ranks, const char *checked,
                              const char *in_points) {
    if (!f || n_ranks < 2) return;
    if (notes->n_lines == 0) {
        fprintf(f, "# stragglers: none (no rank's %s deviates from the median rank by more than %g %%)\n", checked,
                notes->threshold_pct);
        return;
    }
    fprintf(f, "# stragglers: ranks whose %s deviates from the median rank by more than %g %%", checked,
            notes->threshold_pct);
    if (in_points) fprintf(f, " (%s: %g points)", in_points, notes->threshold_pct);
    fprintf(f, "\n");
    for (int i = 0; i < notes->n_lines; i++) fprintf(f, "%s\n", notes->lines[i]);
    if (notes->n_more) fprintf(f, "# ... and %d more straggler(s): see the JSON\n", notes->n_more);
}
