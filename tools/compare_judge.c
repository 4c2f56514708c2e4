/* compare's judgement of one metric of a pair of runs (compare.h): its
 * change, its verdict against the tolerance by the two-sample test or the
 * min-max spread, a derived metric's taken from its source, the rows
 * counted into the result's totals under the gate, and the exit code they
 * make. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "twosample.h"

const char *zb_verdict_name(zb_verdict v) {
    switch (v) {
    case ZB_VERDICT_OK: return "ok";
    case ZB_VERDICT_BETTER: return "better";
    case ZB_VERDICT_REGRESSION: return "REGRESSION";
    case ZB_VERDICT_NOISE: return "noise";
    case ZB_VERDICT_NOT_MEASURED: return "n/m";
    case ZB_VERDICT_NOT_COMPARABLE: return "not comparable (different peaks)";
    case ZB_VERDICT_UNDETECTED: return "no difference detectable";
    case ZB_VERDICT_NOT_COMPARABLE_ENV: return "not comparable (environment)";
    case ZB_VERDICT_WORSE: return "worse (not gated)";
    }
    return "?";
}

void zb_compare_delta(const zb_metric_def *m, double b, double n, zb_cmp_row *row) {
    double diff = n - b;
    row->delta_finite = true;
    if (m->absolute) {
        row->delta = diff;
    } else if (b != 0.0) {
        row->delta = 100.0 * diff / fabs(b);
    } else {
        row->delta_finite = diff == 0.0;
        row->delta = diff == 0.0 ? 0.0 : (diff > 0 ? INFINITY : -INFINITY);
    }
}

zb_twosample zb_compare_row_test(const zb_metric_def *m, const double *sb, const double *sn, zb_cmp_row *row,
                                 int *worse_dir) {
    zb_twosample t = zb_twosample_test(sb, row->n_base_samples, sn, row->n_new_samples);
    row->basis = ZB_BASIS_TEST;
    row->p = t.p;
    row->ratio = t.ratio;
    row->ratio_lo = t.ratio_lo;
    row->ratio_hi = t.ratio_hi;
    *worse_dir = m->better == ZB_BETTER_LOWER ? t.direction : -t.direction;
    return t;
}

void zb_compare_judge(const zb_metric_def *m, double tol, const json_t *base_metrics,
                      const json_t *new_metrics, zb_cmp_row *row) {
    row->m = m;
    row->tolerance = tol;
    row->have_base = zb_metric_value(base_metrics, m->key, &row->base);
    row->have_new = zb_metric_value(new_metrics, m->key, &row->new_value);
    row->delta = 0.0;
    row->delta_finite = true;
    row->new_has_spread = false;
    row->verdict = ZB_VERDICT_NOT_MEASURED;
    row->basis = ZB_BASIS_RULE;
    row->n_base_samples = row->n_new_samples = 0;
    row->p = row->ratio = row->ratio_lo = row->ratio_hi = NAN;
    row->n_base_runs = row->have_base;
    row->base_lo = row->base_hi = row->have_base ? row->base : NAN;
    if (!row->have_base || !row->have_new) return;
    double b = row->base, n = row->new_value;
    zb_compare_delta(m, b, n, row);
    /* worse > 0: the change in the bad direction, in the tolerance's terms */
    double worse = m->better == ZB_BETTER_LOWER ? row->delta : -row->delta;
    double base_lo, base_hi;
    bool base_spread = zb_metric_spread(base_metrics, m->key, b, &base_lo, &base_hi);
    row->new_has_spread = zb_metric_spread(new_metrics, m->key, n, &row->new_lo, &row->new_hi);
    row->basis = ZB_BASIS_RULE;
    row->p = row->ratio = row->ratio_lo = row->ratio_hi = NAN;
    double *sb = NULL, *sn = NULL;
    row->n_base_samples = zb_metric_samples(base_metrics, m->key, &sb);
    row->n_new_samples = zb_metric_samples(new_metrics, m->key, &sn);
    if (row->n_base_samples >= ZB_TWOSAMPLE_MIN_N && row->n_new_samples >= ZB_TWOSAMPLE_MIN_N) {
        int worse_dir = 0;
        zb_twosample t = zb_compare_row_test(m, sb, sn, row, &worse_dir);
        if (fabs(worse) <= tol) row->verdict = ZB_VERDICT_OK;
        else if (t.significant && worse > tol && worse_dir > 0) row->verdict = ZB_VERDICT_REGRESSION;
        else if (t.significant && -worse > tol && worse_dir < 0) row->verdict = ZB_VERDICT_BETTER;
        else row->verdict = ZB_VERDICT_UNDETECTED;
    } else if (worse > tol) {
        bool inside = (base_spread && n >= base_lo && n <= base_hi) ||
                      (row->new_has_spread && b >= row->new_lo && b <= row->new_hi);
        row->verdict = inside ? ZB_VERDICT_NOISE : ZB_VERDICT_REGRESSION;
    } else {
        row->verdict = -worse > tol ? ZB_VERDICT_BETTER : ZB_VERDICT_OK;
    }
    free(sb);
    free(sn);
}

double zb_compare_tolerance_of(const zb_cmp_tolerance *tol, int n_tol, const zb_metric_def *m) {
    double t = m->tolerance;
    for (int i = 0; i < n_tol; i++) {
        if (tol[i].m == m) t = tol[i].value; /* the last one given wins */
    }
    return t;
}

/* A derived metric (metric_table.h) takes the verdict of its source's row
 * among the pair's earlier rows, when that row was judged: one
 * measurement, one verdict (a step time called noise next to its tokens/s
 * called a regression was two verdicts on the same numbers). */
void zb_compare_follow_source(const zb_cmp_row *rows, size_t n, zb_cmp_row *row) {
    if (!row->m->derived_from || row->verdict == ZB_VERDICT_NOT_MEASURED) return;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].m->key, row->m->derived_from) || rows[i].verdict == ZB_VERDICT_NOT_MEASURED) continue;
        row->verdict = rows[i].verdict;
        row->basis = ZB_BASIS_SOURCE;
        return;
    }
}

bool zb_compare_gates(const zb_cmp_result *r, const zb_metric_def *m) {
    const zb_metric_def *src = m->derived_from ? zb_metric_find(m->derived_from) : NULL;
    if (r->gate_all) return true;
    if (r->n_gate) {
        for (int i = 0; i < r->n_gate; i++) {
            if (r->gate[i] == m || (src && r->gate[i] == src)) return true;
        }
        return false;
    }
    return zb_metric_role_of(m) != ZB_ROLE_DIAGNOSTIC;
}

bool zb_compare_in_family(const zb_cmp_result *r, const zb_metric_def *m) {
    return !m->derived_from && m->role != ZB_ROLE_EXACT && zb_compare_gates(r, m);
}

void zb_compare_count(zb_cmp_result *r, zb_cmp_row *row) {
    row->gated = zb_compare_gates(r, row->m);
    if (!row->gated && row->verdict == ZB_VERDICT_REGRESSION) row->verdict = ZB_VERDICT_WORSE;
    r->n_worse += row->verdict == ZB_VERDICT_WORSE;
    r->n_groups += row->basis == ZB_BASIS_GROUPS;
    r->n_tested += row->basis == ZB_BASIS_TEST;
    r->n_rule += row->basis == ZB_BASIS_RULE && row->verdict != ZB_VERDICT_NOT_MEASURED;
    r->n_reruns += row->basis == ZB_BASIS_RERUNS;
    r->n_not_comparable += row->verdict == ZB_VERDICT_NOT_COMPARABLE;
    r->n_not_comparable_env += row->verdict == ZB_VERDICT_NOT_COMPARABLE_ENV;
    r->n_regressions += row->verdict == ZB_VERDICT_REGRESSION;
    r->n_noise += row->verdict == ZB_VERDICT_NOISE;
    r->n_better += row->verdict == ZB_VERDICT_BETTER;
    r->n_undetected += row->verdict == ZB_VERDICT_UNDETECTED;
}

int zb_compare_exit_code(const zb_cmp_result *r) {
    if (r->n_regressions) return ZB_CMP_EXIT_REGRESSION;
    size_t not_comparable = r->n_not_comparable + r->n_not_comparable_env, judged = 0;
    for (size_t i = 0; i < r->n_rows; i++) {
        zb_verdict v = r->rows[i].verdict;
        judged += v != ZB_VERDICT_NOT_MEASURED && v != ZB_VERDICT_NOT_COMPARABLE && v != ZB_VERDICT_NOT_COMPARABLE_ENV;
    }
    return not_comparable && !judged ? ZB_CMP_EXIT_NOT_COMPARABLE : ZB_CMP_EXIT_PASS;
}

void zb_compare_not_comparable(zb_cmp_row *row, bool other_env, bool other_peak) {
    if (row->verdict == ZB_VERDICT_NOT_MEASURED) return;
    if (other_env) row->verdict = ZB_VERDICT_NOT_COMPARABLE_ENV;
    else if (other_peak && zb_metric_against_peak(row->m)) row->verdict = ZB_VERDICT_NOT_COMPARABLE;
}
