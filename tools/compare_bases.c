/* compare against several base files (compare.h): each NEW run against its
 * partners in every base file, so that a regression is judged against the
 * spread between runs, not only within one. On a shared machine one run's
 * median moves more between reruns than any test over its own samples can
 * allow for (issue 20: identical runs failed a per-run test in half the
 * pairs); the range of several base runs' figures holds that move. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "rerun.h"
#include "results.h"
#include "run_identity.h"
#include "twosample.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The base runs' samples of `key`, concatenated into *out (malloc'ed). */
static size_t pooled_samples(const json_t *const *bm, size_t k, const char *key, double **out) {
    size_t n = 0;
    *out = NULL;
    for (size_t j = 0; j < k; j++) {
        double *s = NULL;
        size_t m = zb_metric_samples(bm[j], key, &s);
        double *grown = m ? (double *)realloc(*out, (n + m) * sizeof **out) : *out;
        if (m && !grown) { /* out of memory: judged as without samples */
            free(s);
            free(*out);
            *out = NULL;
            return 0;
        }
        *out = grown;
        if (m) memcpy(*out + n, s, m * sizeof *s);
        n += m;
        free(s);
    }
    return n;
}

/* The worse and the better end of the base range, widened by tol. */
static void widened(const zb_metric_def *m, double tol, double lo, double hi, double *lo_w, double *hi_w) {
    *lo_w = m->absolute ? lo - tol : lo - fabs(lo) * tol / 100.0;
    *hi_w = m->absolute ? hi + tol : hi + fabs(hi) * tol / 100.0;
}

/* Three or more base runs: NEW against the prediction bound of a rerun
 * (rerun.h) on its worse and better side, and the tolerance: a regression
 * is worse than both. The steps' samples are not pooled: a run's steps
 * move together, so pooled they call every rerun different. False when
 * the bound is undefined (a figure <= 0 on the log scale). */
static bool judge_by_reruns(const zb_metric_def *m, double tol, double alpha, const double *v, size_t k,
                            double worse, zb_cmp_row *row) {
    zb_rerun_bound b = zb_rerun_bound_of(v, k, alpha, !m->absolute);
    if (!b.defined) return false;
    bool lower = m->better == ZB_BETTER_LOWER;
    double n = row->new_value;
    row->basis = ZB_BASIS_RERUNS;
    row->rerun_spread = m->absolute ? b.spread : 100.0 * (exp(b.spread) - 1.0);
    row->rerun_lo = b.lo;
    row->rerun_hi = b.hi;
    row->detectable = b.detectable;
    row->alpha = alpha;
    row->runs_needed = zb_rerun_runs_for(b.spread, tol, alpha, !m->absolute, ZB_CMP_MAX_RUNS_NEEDED);
    bool beyond_worse = lower ? n > b.hi : n < b.lo, beyond_better = lower ? n < b.lo : n > b.hi;
    row->verdict = beyond_worse && worse > tol     ? ZB_VERDICT_REGRESSION
                   : beyond_better && -worse > tol ? ZB_VERDICT_BETTER
                   : worse > tol                   ? ZB_VERDICT_NOISE
                                                   : ZB_VERDICT_OK;
    return true;
}

void zb_compare_judge_bases(const zb_metric_def *m, double tol, double alpha, const json_t *const *bm, size_t k,
                            const json_t *nm, zb_cmp_row *row) {
    double *v = (double *)malloc((k ? k : 1) * sizeof *v);
    size_t with = 0;
    const json_t *one = k ? bm[0] : NULL;
    for (size_t j = 0; v && j < k; j++) {
        if (zb_metric_value(bm[j], m->key, &v[with])) {
            with++;
            one = bm[j];
        }
    }
    if (with <= 1) { /* one base run (or none) with the metric: the two-run judgement */
        free(v);
        zb_compare_judge(m, tol, one, nm, row);
        return;
    }
    zb_compare_judge(m, tol, NULL, nm, row); /* resets the row, and sets NEW's side */
    qsort(v, with, sizeof *v, cmp_double);
    row->have_base = true;
    row->n_base_runs = with;
    row->base = with % 2 ? v[with / 2] : 0.5 * (v[with / 2 - 1] + v[with / 2]);
    row->base_lo = v[0];
    row->base_hi = v[with - 1];
    if (!row->have_new) {
        free(v);
        return;
    }
    double n = row->new_value, lo_w, hi_w;
    zb_compare_delta(m, row->base, n, row);
    row->new_has_spread = zb_metric_spread(nm, m->key, n, &row->new_lo, &row->new_hi);
    double worse = m->better == ZB_BETTER_LOWER ? row->delta : -row->delta;
    widened(m, tol, row->base_lo, row->base_hi, &lo_w, &hi_w);
    bool lower = m->better == ZB_BETTER_LOWER;
    bool beyond_worse = lower ? n > hi_w : n < lo_w, beyond_better = lower ? n < lo_w : n > hi_w;
    if (with >= ZB_RERUN_MIN_K && judge_by_reruns(m, tol, alpha, v, with, worse, row)) {
        free(v);
        return;
    }
    free(v);
    double *sb = NULL, *sn = NULL;
    row->n_base_samples = pooled_samples(bm, k, m->key, &sb);
    row->n_new_samples = zb_metric_samples(nm, m->key, &sn);
    if (row->n_base_samples >= ZB_TWOSAMPLE_MIN_N && row->n_new_samples >= ZB_TWOSAMPLE_MIN_N) {
        int worse_dir = 0;
        zb_twosample t = zb_compare_row_test(m, sb, sn, row, &worse_dir);
        if (beyond_worse) row->verdict = t.significant && worse_dir > 0 ? ZB_VERDICT_REGRESSION : ZB_VERDICT_UNDETECTED;
        else if (beyond_better) row->verdict = t.significant && worse_dir < 0 ? ZB_VERDICT_BETTER : ZB_VERDICT_UNDETECTED;
        else row->verdict = worse > tol ? ZB_VERDICT_NOISE : ZB_VERDICT_OK;
    } else {
        row->verdict = beyond_worse    ? ZB_VERDICT_REGRESSION
                       : beyond_better ? ZB_VERDICT_BETTER
                       : worse > tol   ? ZB_VERDICT_NOISE
                                       : ZB_VERDICT_OK;
    }
    free(sb);
    free(sn);
}

/* "3 files: a.json, b.json, c.json" (shortened to fit). */
void zb_compare_files_label(const char *const *names, size_t n, char *out, size_t cap) {
    size_t used = (size_t)snprintf(out, cap, "%zu files:", n);
    for (size_t i = 0; i < n && used < cap; i++) {
        char shown[72];
        zb_results_shown_path(names[i], shown);
        if (used + strlen(shown) + 8 >= cap) {
            snprintf(out + used, cap - used, " ...");
            return;
        }
        used += (size_t)snprintf(out + used, cap - used, "%s %s", i ? "," : "", shown);
    }
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The labels of the base runs no pair used, each once, sorted. */
static zb_status unmatched_bases(const json_t *const *bases, size_t n_bases, bool *const *used, zb_cmp_result *r) {
    size_t total = 0;
    for (size_t j = 0; j < n_bases; j++) total += json_array_size(json_object_get(bases[j], "runs"));
    r->only_base = (char **)calloc(total ? total : 1, sizeof *r->only_base);
    if (!r->only_base) return ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
    for (size_t j = 0; j < n_bases; j++) {
        const json_t *runs = json_object_get(bases[j], "runs");
        for (size_t i = 0; i < json_array_size(runs); i++) {
            if (used[j][i]) continue;
            char label[160];
            zb_run_label(json_array_get(runs, i), label, sizeof label);
            if (!(r->only_base[r->n_only_base++] = strdup(label))) return ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
        }
    }
    qsort(r->only_base, r->n_only_base, sizeof *r->only_base, cmp_str);
    size_t kept = 0;
    for (size_t i = 0; i < r->n_only_base; i++) {
        if (kept && !strcmp(r->only_base[kept - 1], r->only_base[i])) free(r->only_base[i]);
        else r->only_base[kept++] = r->only_base[i];
    }
    r->n_only_base = kept;
    return ZB_OK;
}

/* One NEW run (new_run of nw, with its partners npart[0..kn) in the NEW
 * files, new_run first) against its partner runs (part[0..k), from
 * documents docs[0..k)): its rows. */
static void judge_run(zb_cmp_result *r, const json_t *nw, const json_t *new_run, const json_t *const *npart,
                      size_t kn, const json_t *const *part, const json_t *const *docs, size_t k, bool other_env,
                      const zb_cmp_tolerance *tol, int n_tol, double alpha, const json_t **bm, const json_t **nmv) {
    zb_cmp_pair *p = &r->pairs[r->n_pairs];
    p->base_run = part[0];
    p->new_run = new_run;
    zb_compare_pair_label(p);
    bool other_peak = false;
    for (size_t j = 0; j < k; j++) {
        char peaks[sizeof r->peak_note];
        bm[j] = json_object_get(part[j], "metrics");
        if (!zb_compare_peaks_differ(docs[j], part[j], nw, new_run, peaks, sizeof peaks)) continue;
        other_peak = true;
        if (!r->peak_note[0]) snprintf(r->peak_note, sizeof r->peak_note, "%s", peaks);
    }
    for (size_t j = 0; j < kn; j++) nmv[j] = json_object_get(npart[j], "metrics");
    size_t first_row = r->n_rows;
    for (int i = 0; zb_metric_at(i); i++) {
        const zb_metric_def *m = zb_metric_at(i);
        bool present = false;
        for (size_t j = 0; j < kn && !present; j++) present = json_object_get(nmv[j], m->key) != NULL;
        for (size_t j = 0; j < k && !present; j++) present = json_object_get(bm[j], m->key) != NULL;
        if (!present) continue;
        zb_cmp_row *row = &r->rows[r->n_rows++];
        row->pair = r->n_pairs;
        double t = zb_compare_tolerance_of(tol, n_tol, m);
        if (kn > 1) zb_compare_judge_groups(m, t, alpha, bm, k, nmv, kn, row);
        else zb_compare_judge_bases(m, t, alpha, bm, k, nmv[0], row);
        zb_compare_follow_source(r->rows + first_row, r->n_rows - 1 - first_row, row);
        zb_compare_not_comparable(row, other_env, other_peak);
        zb_compare_count(r, row);
    }
    r->n_pairs++;
}

zb_status zb_compare_bases(const json_t *const *bases, const char *const *names, size_t n_bases,
                           const json_t *nw, const zb_cmp_tolerance *tol, int n_tol, zb_cmp_result *r) {
    if (n_bases == 1) {
        if (!r->base_path) r->base_path = names[0];
        return zb_compare_docs(bases[0], nw, tol, n_tol, r);
    }
    const char *new_name = r->new_path;
    return zb_compare_groups(bases, names, n_bases, &nw, &new_name, 1, tol, n_tol, r);
}

/* NEW files other than the first measured in another environment are not
 * one setup run several times: unusable input, the difference named. */
static zb_status same_setup(const json_t *const *news, const char *const *new_names, size_t n_news, unsigned ignore) {
    for (size_t j = 1; j < n_news; j++) {
        zb_cmp_result probe;
        memset(&probe, 0, sizeof probe);
        char shown[2][72];
        if (zb_compare_env(news[j], NULL, news[0], ignore, &probe) == 0) continue;
        return ZB_FAIL(ZB_ERR_INVALID, "NEW files '%s' and '%s' differ (%s): several NEW files are one setup run "
                                       "several times",
                       zb_results_shown_path(new_names[0], shown[0]), zb_results_shown_path(new_names[j], shown[1]),
                       probe.env_lines[0]);
    }
    return ZB_OK;
}

zb_status zb_compare_groups(const json_t *const *bases, const char *const *names, size_t n_bases,
                            const json_t *const *news, const char *const *new_names, size_t n_news,
                            const zb_cmp_tolerance *tol, int n_tol, zb_cmp_result *r) {
    char shown[72];
    if (n_news > 1 && n_bases < 2) {
        return ZB_FAIL(ZB_ERR_INVALID, "%zu NEW files need at least 2 BASE files (got %zu): the spread between "
                                       "runs is measured on both sides", n_news, n_bases);
    }
    zb_compare_files_label(names, n_bases, r->base_label, sizeof r->base_label);
    if (!r->base_path) r->base_path = r->base_label;
    r->n_bases = n_bases;
    r->n_news = n_news;
    if (n_news > 1) zb_compare_files_label(new_names, n_news, r->new_label, sizeof r->new_label);
    if (!r->new_path) r->new_path = n_news > 1 ? r->new_label : new_names[0];
    const json_t *nw = news[0], *nr = json_object_get(nw, "runs");
    size_t nn = json_array_size(nr), n_metrics = 0;
    for (size_t j = 0; j < n_news; j++) {
        if (!json_array_size(json_object_get(news[j], "runs"))) {
            return ZB_FAIL(ZB_ERR_INVALID, "'%s': no runs to compare", zb_results_shown_path(new_names[j], shown));
        }
    }
    for (size_t j = 0; j < n_bases; j++) {
        if (!json_array_size(json_object_get(bases[j], "runs"))) {
            return ZB_FAIL(ZB_ERR_INVALID, "'%s': no runs to compare", zb_results_shown_path(names[j], shown));
        }
    }
    ZB_TRY(same_setup(news, new_names, n_news, r->ignore_env));
    while (zb_metric_at((int)n_metrics)) n_metrics++;
    /* A base from another environment measured something else: left out, named. */
    bool *out = (bool *)calloc(n_bases, sizeof *out);
    long **pair = (long **)calloc(n_bases, sizeof *pair), **npair = (long **)calloc(n_news, sizeof *npair);
    bool **used = (bool **)calloc(n_bases, sizeof *used);
    const json_t **part = (const json_t **)calloc(n_bases, sizeof *part), **docs = NULL, **bm = NULL;
    const json_t **npart = (const json_t **)calloc(n_news, sizeof *npart), **nmv = NULL;
    docs = (const json_t **)calloc(n_bases, sizeof *docs);
    bm = (const json_t **)calloc(n_bases, sizeof *bm);
    nmv = (const json_t **)calloc(n_news, sizeof *nmv);
    zb_status s = out && pair && npair && used && part && npart && docs && bm && nmv
                      ? ZB_OK
                      : ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
    for (size_t j = 0; s == ZB_OK && j < n_bases; j++) {
        zb_results_shown_path(names[j], shown);
        out[j] = zb_compare_env(bases[j], shown, nw, r->ignore_env, r) > 0;
        r->n_bases_left_out += out[j];
        const json_t *br = json_object_get(bases[j], "runs");
        size_t np = 0;
        pair[j] = (long *)malloc(nn * sizeof **pair);
        used[j] = (bool *)calloc(json_array_size(br), sizeof **used);
        if (!pair[j] || !used[j] || !zb_run_pair(nr, br, pair[j], &np)) s = ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
    }
    for (size_t j = 1; s == ZB_OK && j < n_news; j++) {
        size_t np = 0;
        npair[j] = (long *)malloc(nn * sizeof **npair);
        if (!npair[j] || !zb_run_pair(nr, json_object_get(news[j], "runs"), npair[j], &np)) {
            s = ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
        }
    }
    if (s == ZB_OK) {
        r->pairs = (zb_cmp_pair *)calloc(nn, sizeof *r->pairs);
        r->rows = (zb_cmp_row *)calloc(nn * n_metrics, sizeof *r->rows);
        r->only_new = (char **)calloc(nn, sizeof *r->only_new);
        if (!r->pairs || !r->rows || !r->only_new) s = ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
    }
    /* The gate's family: every gated measured metric (not derived, not
     * exact: zb_compare_in_family) of every NEW run with partners; each is
     * judged at ZB_CMP_GATE_ALPHA / family so that a rerun of the base
     * fails the whole gate in at most that share of runs (Bonferroni), not
     * once per figure: a sweep of 7 sizes x 2 placements judged each at 5 %
     * failed 20 % of same-commit reruns. */
    size_t family = 0;
    for (size_t i = 0; s == ZB_OK && i < nn; i++) {
        bool partnered = false;
        for (size_t j = 0; j < n_bases; j++) partnered = partnered || pair[j][i] >= 0;
        const json_t *nm = json_object_get(json_array_get(nr, i), "metrics");
        for (int q = 0; partnered && zb_metric_at(q); q++) {
            family += zb_compare_in_family(r, zb_metric_at(q)) && json_object_get(nm, zb_metric_at(q)->key);
        }
    }
    r->gate_family = family ? family : 1;
    double alpha = ZB_CMP_GATE_ALPHA / (double)r->gate_family;
    for (size_t i = 0; s == ZB_OK && i < nn; i++) {
        /* the partners in the bases that match NEW's environment; none there:
         * those in the others, judged as not comparable */
        size_t k = 0, kn = 0;
        bool other_env = false;
        for (int pass = 0; pass < 2 && k == 0; pass++) {
            other_env = pass == 1;
            for (size_t j = 0; j < n_bases; j++) {
                if (pair[j][i] < 0 || out[j] != other_env) continue;
                used[j][pair[j][i]] = true;
                docs[k] = bases[j];
                part[k++] = json_array_get(json_object_get(bases[j], "runs"), (size_t)pair[j][i]);
            }
        }
        const json_t *run = json_array_get(nr, i);
        npart[kn++] = run;
        for (size_t j = 1; j < n_news; j++) {
            if (npair[j][i] >= 0) npart[kn++] = json_array_get(json_object_get(news[j], "runs"), (size_t)npair[j][i]);
        }
        if (k) {
            judge_run(r, nw, run, npart, kn, part, docs, k, other_env, tol, n_tol, alpha, bm, nmv);
            continue;
        }
        char label[160];
        zb_run_label(run, label, sizeof label);
        if (!(r->only_new[r->n_only_new++] = strdup(label))) s = ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
    }
    if (s == ZB_OK && r->n_pairs == 0) {
        char ln[160];
        zb_run_label(json_array_get(nr, 0), ln, sizeof ln);
        s = ZB_FAIL(ZB_ERR_INVALID, "no run of '%s' matches a run of the %zu base files (the first is '%s')",
                    zb_results_shown_path(r->new_path, shown), n_bases, ln);
    }
    if (s == ZB_OK) s = unmatched_bases(bases, n_bases, used, r);
    for (size_t j = 0; pair && used && j < n_bases; j++) {
        free(pair[j]);
        free(used[j]);
    }
    for (size_t j = 0; npair && j < n_news; j++) free(npair[j]);
    free(out);
    free(pair);
    free(npair);
    free(used);
    free(part);
    free(npart);
    free(docs);
    free(bm);
    free(nmv);
    return s;
}
