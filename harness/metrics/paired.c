/* Paired A/B statistics (see paired.h). */
#include "paired.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* P(X <= j) for X ~ Binomial(n, 1/2), in log space (n up to millions). */
static double binom_half_cdf(size_t n, size_t j) {
    double sum = 0.0, ln2n = (double)n * log(2.0);
    for (size_t i = 0; i <= j && i <= n; i++) {
        double lc = lgamma((double)n + 1) - lgamma((double)i + 1) - lgamma((double)(n - i) + 1);
        sum += exp(lc - ln2n);
    }
    return sum;
}

size_t zb_paired_interval_rank(size_t n, double *level) {
    if (level) *level = NAN;
    if (n < ZB_PAIRED_MIN_PAIRS) return 0;
    /* The tail grows with k: walk up while it stays within 2.5 %. */
    size_t k = 0;
    double tail = 0.0, ln2n = (double)n * log(2.0);
    for (size_t j = 0; j < n / 2; j++) {
        double lc = lgamma((double)n + 1) - lgamma((double)j + 1) - lgamma((double)(n - j) + 1);
        double next = tail + exp(lc - ln2n); /* P(X <= j) */
        if (2.0 * next > 0.05) break;
        tail = next;
        k = j + 1;
    }
    if (k == 0) return 0;
    if (level) *level = 1.0 - 2.0 * binom_half_cdf(n, k - 1);
    return k;
}

zb_paired zb_paired_median_ci(const double *d, size_t n) {
    zb_paired p = {0, NAN, NAN, NAN, NAN, false};
    double *v = n ? (double *)malloc(n * sizeof *v) : NULL;
    if (!v) return p; /* n = 0, or no memory: nothing to say */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (isfinite(d[i])) v[m++] = d[i];
    }
    p.n = m;
    if (m > 0) {
        qsort(v, m, sizeof *v, cmp_double);
        p.median = m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
        size_t k = zb_paired_interval_rank(m, &p.level);
        if (k > 0) {
            p.lo = v[k - 1];
            p.hi = v[m - k];
            p.significant = p.lo > 0.0 || p.hi < 0.0;
        }
    }
    free(v);
    return p;
}

zb_paired zb_paired_diff(const double *a, const double *b, size_t n) {
    double *d = n ? (double *)malloc(n * sizeof *d) : NULL;
    if (!d) return zb_paired_median_ci(NULL, 0);
    for (size_t i = 0; i < n; i++) d[i] = b[i] - a[i]; /* NaN when either is */
    zb_paired p = zb_paired_median_ci(d, n);
    free(d);
    return p;
}

const char *zb_paired_verdict(const zb_paired *p) {
    if (p->n < ZB_PAIRED_MIN_PAIRS) return "too few pairs for a 95 % interval";
    return p->significant ? "significant" : "no significant difference";
}

size_t zb_paired_pairs_for(const zb_paired *p, double target) {
    double hw = 0.5 * (p->hi - p->lo);
    if (p->n < ZB_PAIRED_MIN_PAIRS || !isfinite(hw) || !(target > 0) || !isfinite(target)) return 0;
    double need = ceil((double)p->n * (hw / target) * (hw / target));
    if (!(need < 1e9)) return 0; /* beyond any run: not an estimate worth printing */
    size_t n = (size_t)need;
    return n > p->n ? n : p->n + 1;
}

zb_pairs_stop zb_paired_stop(const zb_paired *d, size_t n, size_t min_n, size_t max_n, double ref,
                             double precision_pct, double elapsed_s, double max_s) {
    if (n < min_n) return ZB_PAIRS_CONTINUE;
    if (!(precision_pct > 0)) return ZB_PAIRS_FIXED;
    double hw = 0.5 * (d->hi - d->lo);
    if (d->n >= ZB_PAIRED_MIN_PAIRS && isfinite(hw) && isfinite(ref) && hw <= precision_pct / 100.0 * ref)
        return ZB_PAIRS_PRECISION;
    if (n >= max_n) return ZB_PAIRS_MAX_PAIRS;
    if (elapsed_s >= max_s) return ZB_PAIRS_MAX_TIME;
    return ZB_PAIRS_CONTINUE;
}

const char *zb_pairs_stop_name(zb_pairs_stop s) {
    switch (s) {
    case ZB_PAIRS_FIXED: return "fixed";
    case ZB_PAIRS_PRECISION: return "precision";
    case ZB_PAIRS_MAX_PAIRS: return "max-steps";
    case ZB_PAIRS_MAX_TIME: return "max-time";
    case ZB_PAIRS_CONTINUE: break;
    }
    return "";
}
