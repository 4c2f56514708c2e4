/* The step's per-rank notes (bench/step_notes.h) over synthetic runs of two
 * ranks at 42 % and 86 % overlap (a median of 64 % describes neither): both
 * deviate by 22 points and only the lower, rank 0, is named (of two ranks,
 * the worse one), the step time within 10 % is not; the JSON
 * fields carry per_rank (hosts, nodes, figures), the stragglers and the
 * stage's reading; the notes name each straggler with its host, and the
 * reading says the cores are shared where the backend entry says so. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_backend.h"
#include "step_notes.h"
#include "zb_test.h"

static void fill(zb_step_stats *r, zb_step_mode mode, const double figs[2][ZB_STEP_RANK_FIGS]) {
    memset(r, 0, sizeof *r);
    r->stage = 3;
    r->mode = mode;
    r->n_ranks = 2;
    r->per_rank = (double *)malloc(sizeof(double) * 2 * ZB_STEP_RANK_FIGS);
    r->places = (zb_rank_place *)calloc(2, sizeof(zb_rank_place));
    for (int q = 0; q < 2; q++) {
        for (int k = 0; k < ZB_STEP_RANK_FIGS; k++) r->per_rank[q * ZB_STEP_RANK_FIGS + k] = figs[q][k];
        snprintf(r->places[q].host, sizeof r->places[q].host, "host%c", 'A' + q);
        r->places[q].node = q;
    }
}

int main(void) {
    zb_config cfg;
    zb_config_defaults(&cfg);
    zb_device_backend entry;
    memset(&entry, 0, sizeof entry);
    entry.name = "synthetic";
    entry.compute_shares_cores = true;
    zb_bench_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.cfg = &cfg;
    ctx.topo.n_ranks = 2;
    ctx.backends.device = &entry;

    /* step, overlap, exposed, compute, comm per rank */
    const double sync_figs[2][ZB_STEP_RANK_FIGS] = {{20.0, 0.0, 10.0, 8.0, 10.0}, {20.5, 0.0, 10.5, 8.1, 10.5}};
    const double pre_figs[2][ZB_STEP_RANK_FIGS] = {{18.0, 42.0, 5.8, 8.4, 10.0}, {18.5, 86.0, 1.4, 8.5, 10.0}};
    zb_step_stats runs[2];
    fill(&runs[0], ZB_MODE_SYNC, sync_figs);
    fill(&runs[1], ZB_MODE_PREFETCH, pre_figs);
    runs[0].step_ms = 20.5;
    runs[0].exposed_comm_ms = 10.0;
    runs[0].overlap_pct = 0.0;
    runs[1].step_ms = 18.45;
    runs[1].overlap_pct = 64.0;
    runs[1].exposed_comm_ms = 3.6;
    runs[1].hidden_pct = 80.0;
    runs[1].compute_slowdown_pct = 5.0;
    runs[0].comm_bytes_per_step = runs[1].comm_bytes_per_step = 1 << 20; /* two ranks send */

    zb_straggler s[8];
    int n = 0;
    ZB_CHECK(zb_step_stragglers(&runs[0], 10.0, s, 8, &n) == 0 && n == 0);
    int found = zb_step_stragglers(&runs[1], 10.0, s, 8, &n);
    ZB_CHECK_MSG(found == 1 && n == 1, "found %d", found);
    ZB_CHECK(s[0].rank == 0 && !strcmp(s[0].metric, "overlap_pct") && s[0].median == 64.0 && s[0].deviation_pct == -22.0);

    char reading[512];
    zb_step_stage_reading(&ctx, runs, 2, 3, reading, sizeof reading);
    ZB_CHECK_MSG(strstr(reading, "hid 80.0 %") && strstr(reading, "share this backend's cores"), "%s", reading);

    zb_field f[4];
    zb_step_notes_json own;
    ZB_CHECK_OK(zb_step_notes_fields(&ctx, &runs[1], reading, f, &n, &own));
    ZB_CHECK(n == 4 && !strcmp(f[0].key, "straggler_pct") && f[0].d == 10.0 && !strcmp(f[3].key, "reading"));
    const json_t *pr = own.per_rank, *st = own.stragglers;
    ZB_CHECK(json_array_size(pr) == 2 && json_array_size(st) == 1);
    const json_t *r1 = json_array_get(pr, 1);
    ZB_CHECK(json_integer_value(json_object_get(r1, "rank")) == 1 &&
             !strcmp(json_string_value(json_object_get(r1, "host")), "hostB") &&
             json_integer_value(json_object_get(r1, "node")) == 1 &&
             json_real_value(json_object_get(r1, "overlap_pct")) == 86.0 &&
             json_real_value(json_object_get(r1, "comm_ms")) == 10.0);
    const json_t *s0 = json_array_get(st, 0);
    ZB_CHECK(!strcmp(json_string_value(json_object_get(s0, "metric")), "overlap_pct") &&
             !strcmp(json_string_value(json_object_get(s0, "host")), "hostA") &&
             json_real_value(json_object_get(s0, "deviation_pct")) == -22.0);
    zb_step_notes_json_free(&own);

    FILE *out = tmpfile();
    ZB_CHECK(out != NULL);
    if (out) {
        zb_step_notes_print(out, &ctx, runs, 2);
        long len = ftell(out);
        rewind(out);
        char *text = (char *)calloc(1, (size_t)len + 1);
        ZB_CHECK(fread(text, 1, (size_t)len, out) == (size_t)len);
        ZB_CHECK_MSG(strstr(text, "# straggler, stage 3 prefetch: rank 0 on hostA (node 0): overlap_pct 42.000 vs "
                                  "median 64.000 (-22.0 points)") != NULL, "%s", text);
        ZB_CHECK_MSG(!strstr(text, "rank 1 on hostB (node 1)") && strstr(text, "# reading, stage 3: Prefetch hid"),
                     "%s", text);
        ZB_CHECK(strstr(text, "stage 3 sync: rank") == NULL); /* sync's ranks agree within 10 % */
        free(text);
        fclose(out);
    }
    for (int i = 0; i < 2; i++) zb_step_stats_release(&runs[i]);
    return zb_test_finish("test_step_notes");
}
