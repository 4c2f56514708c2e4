/* compare of two results documents (compare.h, zb_compare_docs): the runs
 * paired by their identity (run_identity.h), each pair's metrics judged
 * (compare_judge.c) unless the environments or peaks differ, and the runs
 * no pair uses listed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "results.h"
#include "run_identity.h"

void zb_compare_result_free(zb_cmp_result *r) {
    for (size_t i = 0; i < r->n_only_base; i++) free(r->only_base[i]);
    for (size_t i = 0; i < r->n_only_new; i++) free(r->only_new[i]);
    free(r->only_base);
    free(r->only_new);
    free(r->pairs);
    free(r->rows);
}

static char *label_dup(const json_t *run) {
    char label[160];
    zb_run_label(run, label, sizeof label);
    return strdup(label);
}

/* Lists the runs of `runs` that no pair uses (used[i] false). */
static zb_status list_unmatched(const json_t *runs, const bool *used, char ***out, size_t *n) {
    size_t total = json_array_size(runs);
    *out = (char **)calloc(total ? total : 1, sizeof **out);
    if (!*out) return ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
    *n = 0;
    for (size_t i = 0; i < total; i++) {
        if (used[i]) continue;
        if (!((*out)[(*n)++] = label_dup(json_array_get(runs, i)))) return ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
    }
    return ZB_OK;
}

zb_status zb_compare_docs(const json_t *base, const json_t *nw, const zb_cmp_tolerance *tol, int n_tol,
                          zb_cmp_result *r) {
    const json_t *br = json_object_get(base, "runs"), *nr = json_object_get(nw, "runs");
    size_t nb = json_array_size(br), nn = json_array_size(nr), n_pairs = 0;
    char shown[2][72];
    zb_results_shown_path(r->base_path, shown[0]);
    zb_results_shown_path(r->new_path, shown[1]);
    if (!nb) return ZB_FAIL(ZB_ERR_INVALID, "'%s': no runs to compare", shown[0]);
    if (!nn) return ZB_FAIL(ZB_ERR_INVALID, "'%s': no runs to compare", shown[1]);
    r->n_bases = 1;
    /* Another environment measured something else: named, not judged. */
    bool other_env = zb_compare_env(base, NULL, nw, r->ignore_env, r) > 0;
    r->n_bases_left_out = other_env;
    long *pair = (long *)malloc(nb * sizeof *pair);
    bool *used_b = (bool *)calloc(nb, 1), *used_n = (bool *)calloc(nn, 1);
    size_t n_metrics = 0;
    while (zb_metric_at((int)n_metrics)) n_metrics++;
    zb_status s = ZB_OK;
    if (!pair || !used_b || !used_n || !zb_run_pair(br, nr, pair, &n_pairs)) {
        s = ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
    } else if (n_pairs == 0) {
        char lb[160], ln[160];
        zb_run_label(json_array_get(br, 0), lb, sizeof lb);
        zb_run_label(json_array_get(nr, 0), ln, sizeof ln);
        s = ZB_FAIL(ZB_ERR_INVALID, "no run of '%s' matches a run of '%s' (the first are '%s' and '%s')", shown[0],
                    shown[1], lb, ln);
    } else {
        r->pairs = (zb_cmp_pair *)calloc(n_pairs, sizeof *r->pairs);
        r->rows = (zb_cmp_row *)calloc(n_pairs * n_metrics, sizeof *r->rows);
        if (!r->pairs || !r->rows) s = ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
    }
    for (size_t i = 0; s == ZB_OK && i < nb; i++) {
        if (pair[i] < 0) continue;
        used_b[i] = used_n[pair[i]] = true;
        zb_cmp_pair *p = &r->pairs[r->n_pairs];
        p->base_run = json_array_get(br, i);
        p->new_run = json_array_get(nr, (size_t)pair[i]);
        zb_compare_pair_label(p);
        const json_t *bm = json_object_get(p->base_run, "metrics"), *nm = json_object_get(p->new_run, "metrics");
        /* MFU against one peak and MFU against another are not one measure. */
        char peaks[sizeof r->peak_note];
        bool other_peak = zb_compare_peaks_differ(base, p->base_run, nw, p->new_run, peaks, sizeof peaks);
        if (other_peak && !r->peak_note[0]) snprintf(r->peak_note, sizeof r->peak_note, "%s", peaks);
        size_t first_row = r->n_rows;
        for (size_t k = 0; k < n_metrics; k++) {
            const zb_metric_def *m = zb_metric_at((int)k);
            if (!json_object_get(bm, m->key) && !json_object_get(nm, m->key)) continue;
            zb_cmp_row *row = &r->rows[r->n_rows++];
            row->pair = r->n_pairs;
            zb_compare_judge(m, zb_compare_tolerance_of(tol, n_tol, m), bm, nm, row);
            zb_compare_follow_source(r->rows + first_row, r->n_rows - 1 - first_row, row);
            zb_compare_not_comparable(row, other_env, other_peak);
            zb_compare_count(r, row);
        }
        r->n_pairs++;
    }
    if (s == ZB_OK) s = list_unmatched(br, used_b, &r->only_base, &r->n_only_base);
    if (s == ZB_OK) s = list_unmatched(nr, used_n, &r->only_new, &r->n_only_new);
    free(pair);
    free(used_b);
    free(used_n);
    return s;
}

void zb_compare_pair_label(zb_cmp_pair *p) {
    zb_run_label(p->base_run, p->label, sizeof p->label);
    if (zb_run_is_simulated(p->base_run) || zb_run_is_simulated(p->new_run)) {
        size_t len = strlen(p->label);
        snprintf(p->label + len, sizeof p->label - len, " (%s simulated)",
                 zb_run_is_simulated(p->base_run) ? (zb_run_is_simulated(p->new_run) ? "both" : "base") : "new");
    }
}
