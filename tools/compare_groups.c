/* compare with several runs on both sides (compare.h,
 * zb_compare_judge_groups): K base runs against M new runs of one metric,
 * by Welch's t over the runs' figures (harness/metrics/groups.h).
 *
 * Why: one NEW run cannot show how much a rerun moves, and on a shared
 * machine a run's figure moves more between runs than its own steps vary
 * (issue 20). The rerun bound over K base runs (rerun.h) allows for that
 * but has only K - 1 degrees of freedom to do it with: with 3 bases a 10 %
 * slowdown of the tiny step was caught in 8 % of runs. Runs on both sides
 * measure the spread on both and test the runs' mean shift, so the same
 * 10 % change is caught from 3 + 3 runs. */
#include <math.h>
#include <stdlib.h>

#include "compare.h"
#include "groups.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The figures of m in ms[0..k) into v (sorted); how many there were. */
static size_t figures(const zb_metric_def *m, const json_t *const *ms, size_t k, double *v) {
    size_t with = 0;
    for (size_t j = 0; j < k; j++) with += zb_metric_value(ms[j], m->key, &v[with]);
    qsort(v, with, sizeof *v, cmp_double);
    return with;
}

static double median_sorted(const double *v, size_t n) { return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]); }

/* NEW's first run that has m (the judgement with one NEW run). */
static const json_t *first_with(const zb_metric_def *m, const json_t *const *nm, size_t kn) {
    for (size_t j = 0; j < kn; j++) {
        if (json_object_get(nm[j], m->key)) return nm[j];
    }
    return nm[0];
}

void zb_compare_judge_groups(const zb_metric_def *m, double tol, double alpha, const json_t *const *bm, size_t k,
                             const json_t *const *nm, size_t kn, zb_cmp_row *row) {
    double *vb = (double *)malloc((k ? k : 1) * sizeof *vb), *vn = (double *)malloc((kn ? kn : 1) * sizeof *vn);
    size_t nb = vb ? figures(m, bm, k, vb) : 0, nn = vn ? figures(m, nm, kn, vn) : 0;
    zb_groups_test g = {0};
    if (nb >= ZB_GROUPS_MIN_K && nn >= ZB_GROUPS_MIN_K) g = zb_groups_test_of(vb, nb, vn, nn, alpha, !m->absolute);
    if (!g.defined) { /* too few figures on a side (or <= 0 on the log scale): one NEW run against the bases */
        free(vb);
        free(vn);
        zb_compare_judge_bases(m, tol, alpha, bm, k, first_with(m, nm, kn), row);
        return;
    }
    zb_compare_judge(m, tol, NULL, NULL, row); /* resets the row */
    row->have_base = row->have_new = true;
    row->n_base_runs = nb;
    row->n_new_runs = nn;
    row->base = median_sorted(vb, nb);
    row->base_lo = vb[0];
    row->base_hi = vb[nb - 1];
    row->new_value = median_sorted(vn, nn);
    row->new_lo = vn[0];
    row->new_hi = vn[nn - 1];
    row->new_has_spread = true;
    free(vb);
    free(vn);
    zb_compare_delta(m, row->base, row->new_value, row);
    bool lower = m->better == ZB_BETTER_LOWER;
    double worse = lower ? row->delta : -row->delta;
    double p_worse = lower ? g.p_greater : g.p_less, p_better = lower ? g.p_less : g.p_greater;
    row->basis = ZB_BASIS_GROUPS;
    row->p = p_worse;
    row->alpha = alpha;
    row->rerun_spread = g.spread_base;
    row->new_spread = g.spread_new;
    row->detectable = g.detectable;
    row->runs_needed = zb_groups_runs_for(g.spread_base, g.spread_new, tol, alpha, !m->absolute, ZB_CMP_MAX_RUNS_NEEDED);
    row->verdict = worse > tol && p_worse < alpha     ? ZB_VERDICT_REGRESSION
                   : -worse > tol && p_better < alpha ? ZB_VERDICT_BETTER
                   : fabs(worse) > tol                ? ZB_VERDICT_UNDETECTED
                                                      : ZB_VERDICT_OK;
}
